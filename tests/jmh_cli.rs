//! The jmh adapter through the binary, with a real JMH 1.37 benchmarks jar built from
//! tests/fixtures/jmh-bench by scripts/build-jmh-bench.sh (cached; scripts/test.sh builds it
//! first): one benchmark per cell, JMH's score, unit and error stored, the window equal to the
//! last fork's measurement iterations, CPU per operation; a parameter axis; a pattern that
//! selects several benchmarks; and the refusal, before anything runs, where no JDK is found.

use crate::common::{machine_lock, text, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The benchmarks jar, built (or taken from the cache) by scripts/build-jmh-bench.sh; None,
/// saying why, where it cannot be built here (no JDK, no maven, no network and no cache).
fn bench_jar() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-jmh-bench.sh");
    let out = Command::new("bash").arg(&script).output().expect("bash");
    if out.status.success() {
        let path = String::from_utf8_lossy(&out.stdout).lines().last().map(PathBuf::from);
        return path.filter(|p| p.is_file());
    }
    let why = String::from_utf8_lossy(&out.stderr);
    assert!(
        std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
        "the JMH jar must build here (scripts/test.sh installs a JDK and maven): {why}"
    );
    racehorse_testkit::skip!("the JMH benchmarks jar cannot be built here: {}", why.trim());
    None
}

fn run_jmh(sb: &Sandbox, label: &str, jar: &Path, opts: &[&str]) -> std::process::Output {
    let jar_opt = format!("jar={}", jar.display());
    let work = sb.work();
    let mut args = vec!["run", "jmh", "--label", label, "-o", &jar_opt];
    for o in opts {
        args.extend(["-o", o]);
    }
    args.extend(["--no-warm-up", "--quiet", "--no-drop-caches", "--dir", work.to_str().expect("utf-8")]);
    sb.run(&args)
}

fn num(c: &Value, path: &[&str]) -> f64 {
    let mut v = c;
    for p in path {
        v = &v[*p];
    }
    v.as_f64().unwrap_or_else(|| panic!("{path:?} in {c}"))
}

/// Short iterations: 1 warm-up of 200 ms, 3 measured of 300 ms, one fork.
const SHORT: [&str; 4] = ["warmup_iterations=1", "warmup_time=200ms", "iterations=3", "iteration_time=300ms"];

#[test]
fn jmh_stores_the_score_unit_error_and_cpu_per_op_of_one_benchmark_per_cell() {
    let Some(jar) = bench_jar() else { return };
    let _m = machine_lock();
    let sb = Sandbox::new();
    let mut opts = vec!["benchmark=Mix.xorshift", "mode=thrpt,avgt"];
    opts.extend(SHORT);
    let o = run_jmh(&sb, "j", &jar, &opts);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("j");
    assert_eq!(cells.len(), 2, "one cell per mode");
    for c in &cells {
        assert_eq!((c["status"].as_str(), c["unit"].as_str()), (Some("ok"), Some("ops")), "{c}");
        assert_eq!(c["settings"]["jmh_benchmark"], "racehorse.bench.Mix.xorshift", "{c}");
        let window = num(c, &["window_s"]);
        // The window is the 3 measured iterations of 300 ms, as JMH's host VM reports their
        // start and end. On a quiet machine that is within milliseconds: opening at the fork's
        // start (JVM start-up and warm-up inside) or at iteration 2 would not fit. On a loaded
        // one (a noisy cell) either report was seen up to ~0.4 s late, so only gross errors show.
        // A quiet cell once saw its start report 52 ms late (0.848 s) while other tests had
        // just loaded the machine: 0.75 s still rejects an opening at iteration 2 (0.6 s).
        let noisy = c["quality"]["noisy"].as_bool() == Some(true);
        let fits = if noisy { 0.4..2.0 } else { 0.75..1.3 };
        assert!(fits.contains(&window), "window {window} s for 3 x 300 ms (noisy: {noisy}): {c}");
        let (score, error) = (num(c, &["extra", "jmh_score"]), num(c, &["extra", "jmh_score_error"]));
        assert!(score > 0.0 && error >= 0.0, "{c}");
        let tput = num(c, &["throughput_per_s"]);
        match c["params"]["mode"].as_str() {
            Some("thrpt") => {
                assert_eq!(c["settings"]["jmh_unit"], "ops/s", "{c}");
                // One fork: the measured fork's mean is JMH's score.
                assert!((tput / score - 1.0).abs() < 1e-6, "{tput} vs JMH's {score}");
                assert_eq!(num(c, &["extra", "jmh_ops_per_s"]), score);
            }
            _ => {
                assert_eq!(c["settings"]["jmh_unit"], "s/op", "{c}");
                assert!(
                    (tput * score - 1.0).abs() < 1e-6,
                    "one thread: ops/s = 1 / (s/op): {tput} x {score}"
                );
                assert!((num(c, &["extra", "jmh_ns_per_op"]) - score * 1e9).abs() < 1e-6 * score * 1e9);
            }
        }
        let wl = num(c, &["workload_cpu", "total_s"]);
        assert!(wl > 0.0 && wl < window * 2.5, "the JVMs' CPU in the window: {wl} s: {c}");
        assert_eq!(c["workload_cpu"]["method"], "children", "{c}");
        let per_op = num(c, &["extra", "cpu_us_per_op"]);
        assert!((per_op - wl * 1e6 / num(c, &["units"])).abs() < 1e-9 * per_op.max(1e-9), "{c}");
    }
    let shown = sb.run(&["show", "j"]);
    assert!(shown.status.success() && text(&shown).contains("mode=avgt"), "{}", text(&shown));
}

#[test]
fn jmh_runs_a_parameter_axis_and_explains_a_pattern_of_several_benchmarks() {
    let Some(jar) = bench_jar() else { return };
    let _m = machine_lock();
    let sb = Sandbox::new();
    let mut opts = vec!["benchmark=Sum.sum", "mode=avgt", "time_unit=ns", "params=size=64,size=4096"];
    opts.extend(SHORT);
    let o = run_jmh(&sb, "p", &jar, &opts);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("p");
    let ns: Vec<f64> = cells.iter().map(|c| num(c, &["extra", "jmh_ns_per_op"])).collect();
    assert_eq!(cells[0]["settings"]["jmh_params"], "size=64");
    assert_eq!(cells[1]["settings"]["jmh_unit"], "ns/op");
    assert!(ns[1] > 8.0 * ns[0], "4096 ints take longer to sum than 64: {ns:?}");
    // A pattern that selects two benchmarks is refused before the run, with the axis to use.
    let o = run_jmh(&sb, "two", &jar, &["benchmark=racehorse"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("-o benchmark=Mix.xorshift,Sum.sum"), "{}", text(&o));
    // All of Sum's parameter values in one cell cannot be one cell's figure: the cell fails
    // and says how to pin them.
    let mut opts = vec!["benchmark=Sum.sum"];
    opts.extend(SHORT);
    let o = run_jmh(&sb, "unpinned", &jar, &opts);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let cells = sb.cells("unpinned");
    let err = cells[0]["error"].as_str().unwrap_or("");
    assert!(err.contains("2 parameter combinations") && err.contains("-o params="), "{err}");
}

#[test]
fn jmh_without_a_jdk_is_refused_before_anything_runs_and_names_the_package() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let empty = sb.dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("dir");
    let o = sb
        .cmd(&["run", "jmh", "-o", "jar=/nonexistent/benchmarks.jar", "--quiet", "--dir"])
        .arg(sb.work())
        .env("PATH", &empty)
        .env("JAVA_HOME", &empty)
        .output()
        .expect("racehorse");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("'java' is not installed") && t.contains("apt-get install openjdk-17-jdk-headless"),
        "{t}"
    );
    assert!(!sb.work().exists(), "nothing ran: {t}");
    let listed = sb.run(&["workloads"]);
    assert!(text(&listed).contains("jmh"), "{}", text(&listed));
}
