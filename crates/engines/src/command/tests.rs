//! Tests of the command engine with small shell programs: the three figure kinds, JSON,
//! substitution, and the failures (exit code, no match, timeout, interrupt).

use super::*;
use crate::testutil::NoHooks;
use crate::{RealClock, Totals};
use racehorse_core::{CellSpec, Params};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn ctx(dir: &std::path::Path, opts: &[(&str, &str)]) -> CellContext {
    let mut params = Params::new();
    for o in OPTIONS.iter().filter(|o| !o.default.is_empty()) {
        params.insert(o.name.into(), o.parse_text(o.default).expect("default"));
    }
    for (k, v) in opts {
        let spec = OPTIONS.iter().find(|o| o.name == *k).expect("option");
        params.insert((*k).into(), spec.parse_text(v).expect("value"));
    }
    let spec = CellSpec { workload: "command".into(), params, variant: "default".into(), rep: 2 };
    CellContext { spec, work_dir: dir.to_path_buf(), cpus: 2, env: Default::default() }
}

fn run_with(c: &CellContext, abort: Arc<AtomicBool>) -> (Result<(), EngineError>, Totals, Option<f64>) {
    let mut cell = CommandEngine.prepare(c).expect("prepare");
    let ctl = Control::new(
        Duration::ZERO,
        Duration::from_secs(3),
        Arc::new(RealClock::default()),
        Box::new(NoHooks),
        abort,
    );
    let rec = Recorder::new();
    let res = cell.run(&ctl, &rec);
    let window = ctl.window().map(|w| w.as_secs_f64());
    (res, rec.totals(), window)
}

fn run(c: &CellContext) -> (Result<(), EngineError>, Totals, Option<f64>) {
    run_with(c, Arc::new(AtomicBool::new(false)))
}

#[test]
fn a_rate_becomes_throughput_and_the_program_cpu_is_counted() {
    let dir = tempfile::tempdir().expect("tmp");
    let script = "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; echo 'warmup: 1.0 ops/s'; echo 'score: 1,250.5 ops/s'";
    let (res, t, window) = run(&ctx(dir.path(), &[("cmd", script), ("regex", r"score: ([\d,.]+)")]));
    res.expect("run");
    let w = window.expect("window");
    assert!((t.units / w - 1250.5).abs() < 1e-6, "throughput is the reported rate: {}", t.units / w);
    assert_eq!(t.extra["figure"], 1250.5, "the last match counts");
    assert_eq!(t.workload_cpu.method, CpuMethod::Children);
    assert!(t.workload_cpu.total_s() > 0.0, "the shell loop's CPU is the workload's");
}

#[test]
fn counts_costs_and_json_paths() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let (r, t, _) = run(&ctx(d, &[("cmd", "echo done 500"), ("regex", r"done (\d+)"), ("count", "true")]));
    r.expect("count");
    assert_eq!(t.units, 500.0, "a count is the units themselves");
    let cost =
        [("cmd", "sleep 0.2; echo 'elapsed 0.5 s'"), ("regex", r"elapsed ([\d.]+)"), ("direction", "lower")];
    let (r, t, w) = run(&ctx(d, &cost));
    r.expect("cost");
    assert!((t.units / w.expect("window") - 2.0).abs() < 1e-9, "throughput = 1 / cost");
    let json = r#"echo progress; echo '{"result": {"runs": [{"score": 12.5}]}}'"#;
    let (r, t, _) = run(&ctx(d, &[("cmd", json), ("json", "$.result.runs[0].score"), ("count", "true")]));
    r.expect("json");
    assert_eq!(t.extra["figure"], 12.5);
}

#[test]
fn parameters_substitute_into_the_command() {
    let dir = tempfile::tempdir().expect("tmp");
    let cmd = r#"echo {clients} {arg} {cpus} {rep} {runtime} {{x}} ${HOME} '{"a": [1]}' {"#;
    let opts = [("cmd", cmd), ("regex", ".*"), ("clients", "7"), ("arg", "-Xmx2g")];
    let c = ctx(dir.path(), &opts);
    assert_eq!(setup(&c, 3).expect("setup").script, r#"echo 7 -Xmx2g 2 2 3 {x} ${HOME} '{"a": [1]}' {"#);
    let bad = ctx(dir.path(), &[("cmd", "echo {nope}"), ("regex", "x")]);
    let e = CommandEngine.validate(&bad).expect_err("unknown name");
    assert!(e.to_string().contains("{nope}") && e.to_string().contains("clients"), "{e}");
    for (opts, says) in [
        (vec![("regex", "x")], "needs a program"),
        (vec![("cmd", "true")], "give regex or json"),
        (vec![("cmd", "true"), ("regex", "x"), ("json", "a")], "not both"),
        (vec![("cmd", "true"), ("regex", "(")], "regex:"),
    ] {
        let e = CommandEngine.validate(&ctx(dir.path(), &opts)).expect_err(says);
        assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains(says), "{opts:?}: {e}");
    }
}

#[test]
fn failures_carry_the_exit_code_and_the_last_output() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let (r, _, _) = run(&ctx(d, &[("cmd", "echo line1; echo oops >&2; exit 4"), ("regex", "x")]));
    let e = r.expect_err("exit 4").to_string();
    assert!(e.contains("code 4") && e.contains("line1 | oops"), "{e}");
    let (r, _, _) = run(&ctx(d, &[("cmd", "echo nothing here"), ("regex", r"score (\d+)")]));
    let e = r.expect_err("no match").to_string();
    assert!(e.contains("no match") && e.contains("nothing here"), "{e}");
    let (r, _, _) = run(&ctx(d, &[("cmd", "sleep 20"), ("regex", "x"), ("timeout", "1")]));
    assert!(r.expect_err("timeout").to_string().contains("timeout of 1 s"));
}

#[test]
fn ctrl_c_stops_the_program() {
    let dir = tempfile::tempdir().expect("tmp");
    let abort = Arc::new(AtomicBool::new(false));
    let flag = abort.clone();
    let t0 = Instant::now();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let (r, _, window) = run_with(&ctx(dir.path(), &[("cmd", "sleep 30"), ("regex", "x")]), abort);
    setter.join().expect("setter");
    assert!(matches!(r, Err(EngineError::Interrupted)), "{r:?}");
    assert!(window.is_none(), "no window is reported for an interrupted run");
    assert!(t0.elapsed() < Duration::from_secs(8), "stopped promptly: {:?}", t0.elapsed());
}

#[test]
fn a_failed_extraction_stores_a_bounded_error() {
    let dir = tempfile::tempdir().expect("tmp");
    // One 30,000-character line with no figure: the whole of it used to land in the error.
    let cmd = "printf 'start '; head -c 30000 /dev/zero | tr '\\0' x; echo ' end'";
    let (r, _, _) = run(&ctx(dir.path(), &[("cmd", cmd), ("regex", r"(a|a)*score: ([\d.]+)")]));
    let e = r.expect_err("no match").to_string();
    assert!(e.contains("no match"), "{e}");
    assert!(e.contains("start xxx") && e.contains("xxx end"), "both ends are kept: {e}");
    assert!(e.contains("bytes omitted"), "{e}");
    assert!(e.len() < 1_200, "{} bytes", e.len());
}
