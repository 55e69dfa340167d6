//! The C versions of the integer cases: sources embedded in racehorse, written into the cell's
//! directory and compiled there with the user's compiler and flags at prepare time, then run
//! one process per case (`rh-kernels CASE REPS` prints the checksum, the elapsed and the CPU
//! nanoseconds).

use super::child::Times;
use crate::support::path;
use crate::EngineError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The embedded sources (name, text).
pub const SOURCES: &[(&str, &str)] = &[
    ("common.h", include_str!("c_kernels/common.h")),
    ("main.c", include_str!("c_kernels/main.c")),
    ("data.c", include_str!("c_kernels/data.c")),
    ("text.c", include_str!("c_kernels/text.c")),
    ("search.c", include_str!("c_kernels/search.c")),
    ("sim.c", include_str!("c_kernels/sim.c")),
];

/// The compiler's path: `cc` itself when it names a file, else found on PATH.
pub fn find_cc(cc: &str) -> Option<PathBuf> {
    if cc.contains('/') {
        let p = PathBuf::from(cc);
        return path::is_executable(&p).then_some(p);
    }
    path::find_executable(cc)
}

/// Writes the sources into `dir` and compiles them with `cc cflags`; the program's path.
pub fn compile(cc: &Path, cflags: &[String], dir: &Path) -> Result<PathBuf, EngineError> {
    let src = dir.join("c_kernels");
    std::fs::create_dir_all(&src)
        .map_err(|e| EngineError::io("cannot create the C source directory", &src, e))?;
    for (name, text) in SOURCES {
        let p = src.join(name);
        std::fs::write(&p, text).map_err(|e| EngineError::io("cannot write a C source", &p, e))?;
    }
    let exe = dir.join("rh-kernels");
    let mut cmd = Command::new(cc);
    cmd.args(cflags).arg("-o").arg(&exe);
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

/// Runs one case of the compiled program: its checksum and the times it measured.
pub fn run_case(exe: &Path, case: &str, reps: u64) -> Result<(u64, Times), String> {
    let out = Command::new(exe)
        .arg(case)
        .arg(reps.to_string())
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
}
