//! `run --profile` through the binary: each window's perf samples are stored with the cell,
//! `show` lists the top images and symbols, `compare` what moved, and no perf is left over;
//! call chains with a known caller are stored folded, counters are counted, perf.data is kept
//! on request, and bad settings stop the run before its first cell.

use crate::common::{is_root, machine_lock, text, Sandbox};
use std::path::Path;

fn perf_usable() -> bool {
    let ok = std::process::Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "perf is required here");
        racehorse_testkit::skip!("perf is not installed (scripts/test.sh installs linux-perf)");
    }
    ok
}

fn profiled(sb: &Sandbox, label: &str) {
    let o = sb.run(&[
        "run",
        "smallread",
        "--profile",
        "--label",
        label,
        "-o",
        "direct=false",
        "--runtime",
        "1s",
        "--warmup",
        "200ms",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        "/var/tmp",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn profiles_are_stored_shown_and_compared() {
    if !perf_usable() {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    profiled(&sb, "a");
    profiled(&sb, "b");
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "a", "--format", "json"]).stdout).expect("json");
    let p = &export["cells"][0]["profile"];
    assert_eq!(p["event"], "cpu-clock", "{p}");
    assert!(p["samples"].as_u64().is_some_and(|n| n > 100), "a 1 s window at 999 Hz: {p}");
    let images = p["images"].as_array().expect("images");
    assert!(images.iter().any(|i| i["image"] == "[kernel.kallsyms]"), "cached reads run in the kernel: {p}");
    let total: f64 = images.iter().map(|i| i["share_pct"].as_f64().expect("share")).sum();
    assert!(total <= 100.0 + 1e-6, "shares are of all samples: {total}");
    let show = text(&sb.run(&["show", "a"]));
    assert!(show.contains("profile of #1") && show.contains("symbols"), "{show}");
    let cmp = text(&sb.run(&["compare", "a", "b"]));
    assert!(cmp.contains("Where the CPU time went") && cmp.contains("change"), "{cmp}");
    let perf_left =
        std::process::Command::new("pgrep").args(["-f", "perf record -a"]).output().expect("pgrep");
    assert!(perf_left.stdout.is_empty(), "no perf left: {}", String::from_utf8_lossy(&perf_left.stdout));
}

#[test]
fn a_run_without_profile_stores_none() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&["run", "null", "--label", "n", "--runtime", "100ms", "--warmup", "0s", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "n", "--format", "json"]).stdout).expect("json");
    assert!(export["cells"][0]["profile"].is_null());
    assert!(!text(&sb.run(&["show", "n"])).contains("profile of"));
}

/// A program whose `parent()` calls `leaf_a` and `leaf_b`, which burn 2:1 in loops. Each leaf
/// ends with a call, so that gcc gives it a frame (leaf functions get none even with
/// -fno-omit-frame-pointer, and frame-pointer unwinding then skips their caller).
const PLANTED_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void keep(unsigned long x) { sink += x; }
__attribute__((noinline)) void leaf_a(unsigned long n) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1;
    keep(x);
}
__attribute__((noinline)) void leaf_b(unsigned long n) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + 3;
    keep(x);
}
__attribute__((noinline)) void parent(void) { leaf_a(2000000); leaf_b(1000000); }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    for (int i = 0; i < n; i++) parent();
    printf("done %d\n", n);
    return 0;
}
"#;

/// Compiles [`PLANTED_C`] into `dir/planted`; None (saying why) without a C compiler.
fn planted_program(dir: &Path) -> Option<String> {
    compile(dir, PLANTED_C, "planted")
}

/// Compiles `source` into `dir/name` with frame pointers and no inlining; None (saying why)
/// without a C compiler.
fn compile(dir: &Path, source: &str, name: &str) -> Option<String> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).expect("write the C source");
    let exe = dir.join(name);
    let built = std::process::Command::new("cc")
        .args(["-O1", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(&exe)
        .arg(&src)
        .output();
    match built {
        Ok(o) if o.status.success() => Some(exe.display().to_string()),
        Ok(o) => panic!("cc failed: {}", text(&o)),
        Err(e) => {
            racehorse_testkit::skip!("no C compiler (cc): {e}");
            None
        }
    }
}

fn samples_under(p: &serde_json::Value, suffix: &str) -> u64 {
    let stacks = p["stacks"].as_array().expect("stacks");
    stacks
        .iter()
        .filter(|s| s["stack"].as_str().is_some_and(|t| t.ends_with(suffix)))
        .map(|s| s["samples"].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn call_chains_show_the_planted_caller_above_both_hot_functions() {
    if !perf_usable() {
        return;
    }
    if !is_root() {
        racehorse_testkit::skip!("system-wide call-chain sampling needs root");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let Some(exe) = planted_program(sb.dir.path()) else { return };
    let keep = sb.dir.path().join("kept");
    let keep_arg = keep.display().to_string();
    let o = sb.run(&[
        "run",
        "command",
        "--profile",
        "--keep-profile",
        &keep_arg,
        "--label",
        "cg",
        "-o",
        r"regex:=done (\d+)",
        "-o",
        "count=true",
        "--no-warm-up",
        "--quiet",
        "--",
        &exe,
        "150",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("cg");
    let p = &cells[0]["profile"];
    assert_eq!((p["callgraph"].as_str(), p["frequency_hz"].as_u64()), (Some("fp"), Some(999)), "{p}");
    let a = samples_under(p, "planted;__libc_start_call_main;main;parent;leaf_a");
    let b = samples_under(p, "planted;__libc_start_call_main;main;parent;leaf_b");
    assert!(a + b > 100, "the hot functions were sampled under parent: {a} + {b}: {}", p["stacks"]);
    let share_a = a as f64 / (a + b) as f64;
    assert!((0.55..0.78).contains(&share_a), "leaf_a burns 2/3 of parent's time: {a} vs {b}");
    let kept: u64 =
        p["stacks"].as_array().expect("stacks").iter().map(|s| s["samples"].as_u64().unwrap_or(0)).sum();
    assert_eq!(
        kept + p["stacks_dropped_samples"].as_u64().unwrap_or(0),
        p["samples"].as_u64().unwrap_or(0),
        "{p}"
    );
    // Counters: software events everywhere; hardware ones where the PMU has them, and a note
    // (once) where it does not.
    let counters = p["counters"].as_array().expect("counters");
    assert_eq!(counters.len(), 7, "{p}");
    let count = |e: &str| counters.iter().find(|c| c["event"] == e).map(|c| c["count"].clone()).expect(e);
    assert!(count("page-faults").as_f64().is_some_and(|n| n > 0.0), "{p}");
    assert!(count("context-switches").as_f64().is_some(), "{p}");
    let note = "are not supported on this machine";
    assert_eq!(text(&o).matches(note).count(), usize::from(count("cycles").is_null()), "{}", text(&o));
    let files: Vec<String> = std::fs::read_dir(&keep)
        .expect("kept dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("run1-cell0-command_") && files[0].ends_with(".perf.data"), "{files:?}");
    assert!(std::fs::metadata(keep.join(&files[0])).expect("kept file").len() > 0);
}

#[test]
fn bad_profile_settings_stop_the_run_before_its_first_cell() {
    let sb = Sandbox::new();
    let run = |extra: &[&str]| {
        let mut args =
            vec!["run", "null", "--runtime", "100ms", "--warmup", "0s", "--quiet", "--label", "bad"];
        args.extend_from_slice(extra);
        sb.run(&args)
    };
    let o = run(&["--profile", "callgraph=frames"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("unknown call-graph mode 'frames'") && text(&o).contains("fp, dwarf, lbr, none"),
        "{}",
        text(&o)
    );
    let o = run(&["--dry-run", "--profile=freq=0"]);
    assert_eq!(o.status.code(), Some(2), "a dry run checks the settings too: {}", text(&o));
    assert!(text(&o).contains("freq=0: use a whole number of Hz"), "{}", text(&o));
    let o = run(&["--keep-profile", "/tmp"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("add --profile"), "{}", text(&o));
    if !perf_usable() || !is_root() {
        racehorse_testkit::skip!("the checks that need perf and root");
        return;
    }
    let o = run(&["--profile", "--keep-profile", "/proc"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--keep-profile /proc: cannot write there"), "{}", text(&o));
    // LBR: refused where the machine has none (every VM here), with what to use instead.
    let _m = machine_lock();
    let o = run(&["--profile=callgraph=lbr"]);
    if o.status.code() == Some(2) {
        assert!(text(&o).contains("callgraph=lbr") && text(&o).contains("use callgraph=fp"), "{}", text(&o));
    } else {
        assert!(o.status.success(), "{}", text(&o));
    }
    assert!(!text(&sb.run(&["list"])).contains("bad") || o.status.success(), "no run was recorded");
}

/// Issue 46: what stops `--profile` before anything runs has its exit code: a perf too old
/// or broken is a usage error (2, as a missing tool is), a scratch directory that cannot be
/// made is a failure (1).
#[test]
fn issue46_profile_setup_errors_have_their_exit_codes() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let bin_dir = sb.dir.path().join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin dir");
    let fake_perf = |script: &str| {
        let p = bin_dir.join("perf");
        std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).expect("fake perf");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = |tmp: Option<&Path>| {
        let mut c = sb.cmd(&["run", "null", "--runtime", "100ms", "--warmup", "0s", "--quiet", "--profile"]);
        c.env("PATH", &path);
        if let Some(t) = tmp {
            c.env("TMPDIR", t);
        }
        c.output().expect("spawn racehorse")
    };
    fake_perf("echo 'perf version 4.19.0'");
    let o = run(None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is perf 4.19; profiling needs perf >= 5.10"), "{}", text(&o));
    fake_perf("echo 'perf: no perf for this kernel' >&2; exit 3");
    let o = run(None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--version failed") && text(&o).contains("no perf for this kernel"),
        "{}",
        text(&o)
    );
    if !is_root() {
        racehorse_testkit::skip!(
            "the scratch directory's check needs root (to pass perf's permission check)"
        );
        return;
    }
    fake_perf("echo 'perf version 6.1.0'");
    let o = run(Some(&sb.dir.path().join("no-such-dir")));
    assert_eq!(o.status.code(), Some(1), "not a usage error: {}", text(&o));
    assert!(text(&o).contains("cannot create a temporary directory"), "{}", text(&o));
    assert!(!sb.db().exists(), "nothing was recorded");
}

/// One profiled run of the planted program built from `source` (always at the same path, so
/// both runs are the same point), labelled `label`.
fn profiled_run(sb: &Sandbox, source: &str, label: &str) {
    let exe = compile(sb.dir.path(), source, "twice").expect("cc was found for the first build");
    let o = sb.run(&[
        "run",
        "command",
        "--profile",
        "--reps",
        "2",
        "--label",
        label,
        "-o",
        r"regex:=done (\d+)",
        "-o",
        "count=true",
        "--no-warm-up",
        "--quiet",
        "--",
        &exe,
        "120",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_function_made_twice_as_costly_doubles_its_cpu_per_unit_in_compare() {
    if !perf_usable() {
        return;
    }
    if !is_root() {
        racehorse_testkit::skip!("system-wide call-chain sampling needs root");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    if planted_program(sb.dir.path()).is_none() {
        return;
    }
    profiled_run(&sb, PLANTED_C, "base");
    // The same program (same path, same point) with leaf_b doing twice the work per unit.
    profiled_run(&sb, &PLANTED_C.replace("leaf_b(1000000)", "leaf_b(2000000)"), "new");
    let o = sb.run(&["compare", "base", "new"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let frames = out.split("Frames whose own CPU per unit of work moved most").nth(1).expect("frame table");
    let ratio_of = |name: &str| -> f64 {
        let line =
            frames.lines().find(|l| l.contains(&format!(" {name} ←"))).unwrap_or_else(|| panic!("{out}"));
        line.split_whitespace().nth(2).and_then(|r| r.parse().ok()).unwrap_or_else(|| panic!("{line}"))
    };
    let (b, a) = (ratio_of("leaf_b"), ratio_of("leaf_a"));
    assert!((1.5..2.7).contains(&b), "leaf_b costs twice as much per unit: {b}\n{out}");
    assert!((0.7..1.35).contains(&a), "leaf_a is unchanged per unit: {a}\n{out}");
    let html = sb.dir.path().join("cmp.html");
    let o = sb.run(&["compare", "base", "new", "-o", html.to_str().expect("path")]);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(&html).expect("page");
    let frame = page.split("<title>leaf_b").nth(1).expect("leaf_b in the differential flame graph");
    let frame = frame.split("</g>").next().unwrap_or("");
    let fill = frame.split("fill=\"").nth(1).and_then(|f| f.split('"').next()).unwrap_or("");
    assert!(fill.starts_with("rgb(255,"), "leaf_b is red (costs more per unit): {fill}");
}
