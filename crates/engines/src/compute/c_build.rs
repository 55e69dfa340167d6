//! The C versions of the cases: sources embedded in racehorse, written into the cell's
//! directory and compiled there with the user's compiler and flags at prepare time, then run
//! one process per case (`rh-kernels CASE REPS [INPUT OUTPUT]` prints the checksum, the
//! elapsed and the CPU nanoseconds); the compiler's identity (`cc --version`) and whether it
//! has `_Decimal64` (a probe program), each asked once per compiler.

use super::child::Times;
use crate::support::path;
use crate::EngineError;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// The embedded sources (name, text).
pub const SOURCES: &[(&str, &str)] = &[
    ("common.h", include_str!("c_kernels/common.h")),
    ("main.c", include_str!("c_kernels/main.c")),
    ("data.c", include_str!("c_kernels/data.c")),
    ("text.c", include_str!("c_kernels/text.c")),
    ("search.c", include_str!("c_kernels/search.c")),
    ("sim.c", include_str!("c_kernels/sim.c")),
    ("fp.c", include_str!("c_kernels/fp.c")),
    ("fp_linalg.c", include_str!("c_kernels/fp_linalg.c")),
    ("telco.c", include_str!("c_kernels/telco.c")),
];

/// The floating-point cases that have C versions (each checks its own result as the Rust
/// kernel does; the checksum is the bits of the final value, not compared across languages).
pub const FP_CASES: &[&str] = &["nbody", "stencil", "montecarlo", "spectral", "lu", "fft"];

/// The macro that compiles telco's `_Decimal64` form in (not every compiler has the type).
pub const DECIMAL64_DEFINE: &str = "-DRH_DECIMAL64";

/// The compiler's path: `cc` itself when it names a file, else found on PATH.
pub fn find_cc(cc: &str) -> Option<PathBuf> {
    if cc.contains('/') {
        let p = PathBuf::from(cc);
        return path::is_executable(&p).then_some(p);
    }
    path::find_executable(cc)
}

/// Writes the sources into `dir` and compiles them with `cc cflags defines`; the program's path.
pub fn compile(cc: &Path, cflags: &[String], defines: &[&str], dir: &Path) -> Result<PathBuf, EngineError> {
    let src = dir.join("c_kernels");
    std::fs::create_dir_all(&src)
        .map_err(|e| EngineError::io("cannot create the C source directory", &src, e))?;
    for (name, text) in SOURCES {
        let p = src.join(name);
        std::fs::write(&p, text).map_err(|e| EngineError::io("cannot write a C source", &p, e))?;
    }
    let exe = dir.join("rh-kernels");
    let mut cmd = Command::new(cc);
    cmd.args(cflags).args(defines).arg("-o").arg(&exe);
    for (name, _) in SOURCES.iter().filter(|(n, _)| n.ends_with(".c")) {
        cmd.arg(src.join(name));
    }
    cmd.arg("-lm");
    let out = cmd.output().map_err(|e| {
        EngineError::Failed(format!("compute: cannot run the C compiler {}: {e}", cc.display()))
    })?;
    if !out.status.success() {
        return Err(EngineError::Failed(format!(
            "compute: {} {} failed to compile the C kernels ({}):\n{}",
            cc.display(),
            cflags.join(" "),
            out.status,
            crate::bounded_output(String::from_utf8_lossy(&out.stderr).trim())
        )));
    }
    Ok(exe)
}

/// Runs one case of the compiled program (`files`: telco's input and output): its checksum
/// and the times it measured.
pub fn run_case(exe: &Path, case: &str, reps: u64, files: &[&Path]) -> Result<(u64, Times), String> {
    let out = Command::new(exe)
        .arg(case)
        .arg(reps.to_string())
        .args(files)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "the C kernel {case} failed ({}): {}{}",
            out.status,
            crate::bounded_output(text.trim()),
            crate::bounded_output(String::from_utf8_lossy(&out.stderr).trim())
        ));
    }
    parse_reply(&text).ok_or_else(|| {
        format!(
            "the C kernel {case} printed '{}', not 'CHECKSUM WALL_NS CPU_NS'",
            crate::bounded_output(text.trim())
        )
    })
}

/// Answers per compiler (and flags), asked once per racehorse process.
fn memo(key: String, ask: impl FnOnce() -> String) -> String {
    static DONE: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    done.get_or_insert_with(HashMap::new).entry(key).or_insert_with(ask).clone()
}

/// The first line of `cc --version` (e.g. `gcc (Debian 12.2.0-14+deb12u1) 12.2.0`), or
/// what went wrong asking it.
pub fn version(cc: &Path) -> String {
    memo(format!("version {}", cc.display()), || match Command::new(cc).arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| "unknown (cc --version printed nothing)".into()),
        Ok(o) => format!("unknown (cc --version failed: {})", o.status),
        Err(e) => format!("unknown (cannot run cc --version: {e})"),
    })
}

/// A program that needs `_Decimal64` arithmetic, conversions and constants (libgcc's BID
/// routines on x86).
const DECIMAL64_PROBE: &str = "_Decimal64 f(_Decimal64 a, _Decimal64 b) { return a * b + (_Decimal64)3; }\n\
    int main(void) { volatile _Decimal64 x = 1.5DD; return (long long)f(x, x) == 5 ? 0 : 1; }\n";

/// None when `cc cflags` compiles and links a `_Decimal64` program, else the compiler's
/// complaint (the probe is compiled from stdin to /dev/null: nothing is written).
pub fn decimal64_missing(cc: &Path, cflags: &[String]) -> Option<String> {
    let answer = memo(format!("decimal64 {} {}", cc.display(), cflags.join(" ")), || {
        let child = Command::new(cc)
            .args(cflags)
            .args(["-x", "c", "-", "-o", "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => return format!("cannot run it: {e}"),
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(DECIMAL64_PROBE.as_bytes());
        }
        match child.wait_with_output() {
            Ok(o) if o.status.success() => String::new(),
            Ok(o) => {
                let why = String::from_utf8_lossy(&o.stderr);
                why.lines().find(|l| l.contains("error")).unwrap_or(why.trim()).trim().to_string()
            }
            Err(e) => format!("cannot run it: {e}"),
        }
    });
    (!answer.is_empty()).then_some(answer)
}

fn parse_reply(text: &str) -> Option<(u64, Times)> {
    let mut w = text.split_whitespace();
    let sum = w.next()?.parse().ok()?;
    let mut secs = || w.next()?.parse::<u64>().ok().map(|ns| ns as f64 / 1e9);
    Some((sum, Times { wall_s: secs()?, cpu_s: secs()? }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse() {
        assert_eq!(parse_reply("12 1500000000 1000000000\n"), Some((12, Times { wall_s: 1.5, cpu_s: 1.0 })));
        assert_eq!(parse_reply("12 1500000000"), None);
        assert_eq!(parse_reply("x 1"), None);
        assert_eq!(parse_reply("1"), None);
    }

    #[test]
    fn missing_compilers_are_not_found() {
        assert!(find_cc("/nonexistent/cc").is_none());
        assert!(find_cc("no-such-compiler-racehorse").is_none());
        assert!(find_cc("sh").is_some(), "PATH lookup finds /bin/sh");
    }

    #[test]
    fn the_floating_point_c_kernels_check_themselves() {
        let Some(gcc) = find_cc("gcc") else {
            eprintln!("SKIPPED: gcc is not installed, so the C kernels cannot be built here (CI has gcc)");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let exe = compile(&gcc, &["-O2".into()], &[], dir.path()).unwrap();
        for case in FP_CASES {
            let (_, t) = run_case(&exe, case, 1, &[]).unwrap_or_else(|e| panic!("{case}: {e}"));
            assert!(t.cpu_s > 0.0, "{case}");
            let out = Command::new(&exe)
                .args([case, "1"])
                .env(super::super::common::FAULT_ENV, case)
                .output()
                .unwrap();
            let why = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{case}: a wrong answer fails");
            assert!(why.contains(&format!("SELF-CHECK FAILED: {case}")), "{case}: {why}");
        }
    }

    #[test]
    fn the_compiler_says_who_it_is_and_whether_it_has_decimal64() {
        let Some(gcc) = find_cc("gcc") else {
            eprintln!("SKIPPED: gcc is not installed, so there is no compiler to ask (CI has gcc)");
            return;
        };
        let v = version(&gcc);
        assert!(v.starts_with("gcc") && !v.contains('\n'), "{v}");
        assert!(version(Path::new("/nonexistent/cc")).starts_with("unknown (cannot run"));
        if cfg!(target_arch = "x86_64") {
            assert_eq!(decimal64_missing(&gcc, &["-O2".into()]), None, "gcc on x86-64 has BID decimal64");
        }
        let pedantic = ["-std=c89".to_string(), "-pedantic-errors".to_string()];
        let why = decimal64_missing(&gcc, &pedantic).expect("ISO C89 has no _Decimal64");
        assert!(why.contains("error"), "{why}");
    }
}
