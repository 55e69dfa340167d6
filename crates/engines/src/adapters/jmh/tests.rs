//! Tests of the `jmh` adapter's pieces: option parsing, the window found in JMH's real
//! progress output, choosing the one benchmark of a cell, JMH's command line, and what is
//! stored from real JMH results (crates/engines/fixtures/jmh/). The adapter end to end, with
//! a real jar and JDK, is tested through the binary (tests/jmh_cli.rs).

use super::json::{parse, Mode};
use super::list::{exact_pattern, list, parse_listing, pick, short_name};
use super::process::{Edge, Progress};
use super::*;
use crate::testutil::cell_ctx;
use racehorse_core::Value;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/jmh/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn setup_for(benchmark: &str, mode: Mode) -> Setup {
    Setup {
        java: PathBuf::from("/usr/bin/java"),
        jar: PathBuf::from("/tmp/b.jar"),
        benchmark: benchmark.into(),
        mode,
        forks: 2,
        warmups: 1,
        warmup_time: Duration::from_millis(200),
        iterations: 3,
        iteration_time: Duration::from_millis(200),
        threads: 1,
        time_unit: Some("ns".into()),
        params: vec![("size".into(), "64".into())],
        profilers: vec!["gc".into()],
        jvm_flags: "-Xmx256m -XX:+UseSerialGC".into(),
    }
}

#[test]
fn times_are_read_as_jmh_takes_them() {
    assert_eq!(parse_time("r", "500ms").expect("ms"), Duration::from_millis(500));
    assert_eq!(parse_time("r", "2s").expect("s"), Duration::from_secs(2));
    assert_eq!(parse_time("r", "3").expect("bare seconds"), Duration::from_secs(3));
    assert_eq!(parse_time("r", "1min").expect("min"), Duration::from_secs(60));
    assert_eq!(parse_time("r", "1500us").expect("us"), Duration::from_micros(1500));
    for bad in ["", "fast", "1.5s", "2h", "-1s"] {
        let e = parse_time("iteration_time", bad).expect_err(bad).to_string();
        assert!(e.contains("iteration_time") && e.contains("500ms"), "{bad}: {e}");
    }
    assert!(parse_time("r", "10us").expect_err("too short").to_string().contains("1 ms"));
}

#[test]
fn params_are_name_value_pairs() {
    let p = parse_params("size=64; mode=fast  n=3").expect("pairs");
    assert_eq!(
        p,
        [("size", "64"), ("mode", "fast"), ("n", "3")].map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert!(parse_params("").expect("none").is_empty());
    assert!(parse_params("size").expect_err("no =").to_string().contains("name=value"));
    assert!(parse_params("=3").is_err() && parse_params("a=").is_err());
}

/// Feeds `out` to `p` as JMH prints it: each iteration's label (up to ": ") first, alone,
/// then the whole line; returns (line index, edge).
fn feed(p: &mut Progress, out: &str) -> Vec<(usize, Edge)> {
    let mut edges = Vec::new();
    for (i, line) in out.lines().enumerate() {
        if let Some(label) = line.find(": ").filter(|_| line.contains("Iteration")) {
            edges.extend(p.on_partial(&line[..label + 2]).map(|e| (i, e)));
        }
        edges.extend(p.on_line(line).into_iter().map(|e| (i, e)));
    }
    edges
}

#[test]
fn the_window_is_the_last_forks_measurement_iterations() {
    // JMH's real stdout of `-f 2 -wi 1 -i 3` (the run that wrote thrpt-2forks.json).
    let out = fixture("thrpt-2forks.out");
    let lines: Vec<&str> = out.lines().collect();
    let edges = feed(&mut Progress::new(2, 3), &out);
    assert_eq!(edges.len(), 2, "{edges:?}");
    let (open, close) = (edges[0], edges[1]);
    assert_eq!((open.1, close.1), (Edge::Open, Edge::Close));
    let fork2 = lines.iter().position(|l| l.starts_with("# Fork: 2 of 2")).expect("fork 2");
    assert!(lines[open.0].starts_with("Iteration   1:") && open.0 > fork2, "{}", lines[open.0]);
    assert!(lines[close.0].starts_with("Iteration   3:") && close.0 == open.0 + 2, "{}", lines[close.0]);
}

#[test]
fn progress_edges_come_once_and_only_in_the_last_fork() {
    let mut p = Progress::new(2, 2);
    assert!(p.on_line("# Fork: 1 of 2").is_empty());
    assert_eq!(p.on_partial("Iteration   1: "), None, "fork 1 is not measured");
    assert!(p.on_line("Iteration   2: 5 ops/s").is_empty());
    assert!(p.on_line("# Fork: 2 of 2").is_empty());
    assert_eq!(p.on_partial("# Warmup Iteration   1: "), None);
    assert!(p.on_line("# Warmup Iteration   1: 5 ops/s").is_empty());
    assert_eq!(p.on_partial("Iteration   1: "), Some(Edge::Open), "iteration 1 starts");
    assert_eq!(p.on_partial("Iteration   1: 5"), None, "once");
    assert!(p.on_line("Iteration   1: 5 ops/s").is_empty());
    assert!(p.on_line("                 gc.alloc.rate: 0 MB/sec").is_empty());
    assert_eq!(p.on_line("Iteration   2: 5 ops/s"), [Edge::Close]);
    assert!(p.on_line("Iteration   2: 5 ops/s").is_empty(), "once");
    // Where the label never came alone, the whole line of iteration 1 opens the window (late).
    let mut p = Progress::new(1, 1);
    assert!(p.on_line("# Fork: 1 of 1").is_empty());
    assert_eq!(p.on_line("Iteration   1: 5 ops/s"), [Edge::Open, Edge::Close]);
}

#[test]
fn stdout_comes_as_lines_and_the_growing_line() {
    let (tx, rx) = std::sync::mpsc::channel();
    let all = process::read_stdout(&b"# Fork: 1 of 1\r\nIteration   1: 5 ops/s\nIteration   2: "[..], tx);
    let got: Vec<process::Out> = rx.try_iter().collect();
    assert_eq!(
        got,
        [
            process::Out::Line("# Fork: 1 of 1".into()),
            process::Out::Line("Iteration   1: 5 ops/s".into()),
            process::Out::Partial("Iteration   2: ".into()),
            process::Out::Line("Iteration   2: ".into()),
        ]
    );
    assert!(all.ends_with("Iteration   2: "));
}

#[test]
fn one_benchmark_is_picked_or_the_choice_is_explained() {
    let listing =
        "Benchmarks: \nracehorse.bench.Mix.xorshift\nracehorse.bench.Sum.sum\nracehorse.bench.Sum.sum2\n";
    let names = parse_listing(listing).expect("listing");
    assert_eq!(names.len(), 3);
    assert_eq!(parse_listing("Unable to find the resource: /META-INF/BenchmarkList"), None);
    let jar = Path::new("b.jar");
    assert_eq!(pick(&names[..1], "", jar).expect("the only one"), "racehorse.bench.Mix.xorshift");
    assert_eq!(pick(&names[1..], "Sum.sum", jar).expect("exact suffix"), "racehorse.bench.Sum.sum");
    let e = pick(&names, "", jar).expect_err("three").to_string();
    assert!(
        e.contains("selects 3 benchmarks") && e.contains("-o benchmark=Mix.xorshift,Sum.sum,Sum.sum2"),
        "{e}"
    );
    let e = pick(&[], "Nope", jar).expect_err("none").to_string();
    assert!(e.contains("selects none") && e.contains("-l"), "{e}");
    assert_eq!(short_name("racehorse.bench.Sum.sum"), "Sum.sum");
    assert_eq!(short_name("sum"), "sum");
    assert_eq!(exact_pattern("a.B$C.m_1"), r"^a\.B\$C\.m_1$");
}

#[test]
fn jmh_is_asked_for_exactly_the_cells_settings() {
    let s = setup_for("racehorse.bench.Sum.sum", Mode::AverageTime);
    let a = s.args(Path::new("/w/r.json")).join(" ");
    assert!(
        a.starts_with(
            r"-jar /tmp/b.jar ^racehorse\.bench\.Sum\.sum$ -bm avgt -f 2 -wi 1 -w 200ms -i 3 -r 200ms -t 1"
        ),
        "{a}"
    );
    assert!(a.contains("-foe true -rf json -rff /w/r.json -tu ns -p size=64 -prof gc -jvmArgsAppend -Xmx256m -XX:+UseSerialGC"), "{a}");
    assert!(s.limit() >= Duration::from_secs(120), "a minute per fork at least");
    let fine = Setup { iteration_time: Duration::from_micros(1500), ..s };
    assert!(fine.args(Path::new("r.json")).join(" ").contains("-r 1500us"), "no rounding to whole ms");
}

#[test]
fn the_measured_forks_rate_times_the_window_is_the_units() {
    let thrpt = parse(&fixture("thrpt-2forks.json")).expect("thrpt");
    let fork2 = thrpt[0].primary.raw[1].iter().sum::<f64>() / 3.0;
    let u = store::units(&thrpt[0], 0.6).expect("units");
    assert!((u - fork2 * 0.6).abs() < 1e-6 * u, "{u} vs {fork2}");
    let avgt = parse(&fixture("avgt-params.json")).expect("avgt");
    let ns = avgt[0].primary.raw[0].iter().sum::<f64>() / avgt[0].primary.raw[0].len() as f64;
    let u = store::units(&avgt[0], 2.0).expect("units");
    assert!((u - 2.0e9 / ns).abs() < 1e-6 * u, "one thread: window / time per op");
    let ss = parse(&fixture("ss-1iter.json")).expect("ss");
    assert_eq!(store::units(&ss[0], 5.0), Some(1.0), "single shot: one invocation per iteration");
}

#[test]
fn jmhs_figures_are_stored_as_extras_and_settings() {
    let results = parse(&fixture("thrpt-2forks.json")).expect("thrpt");
    let s = setup_for("racehorse.bench.Mix.xorshift", Mode::Throughput);
    let rec = Recorder::new();
    let cpu = racehorse_machine::rusage::CpuTime { user_s: 0.5, kernel_s: 0.1 };
    store::store(&rec, &s, &results, 0.6, cpu).expect("stored");
    let t = rec.totals();
    let p = &results[0].primary;
    assert_eq!(t.extra["jmh_score"], p.score);
    assert_eq!(Some(t.extra["jmh_score_error"]), p.error);
    assert_eq!(t.extra["jmh_ops_per_s"], p.score);
    assert_eq!((t.extra["jmh_forks"], t.extra["jmh_iterations"]), (2.0, 3.0));
    assert!((t.extra["cpu_us_per_op"] - 0.6e6 / t.units).abs() < 1e-9 * t.extra["cpu_us_per_op"]);
    assert_eq!(t.settings["jmh_unit"], "ops/s");
    assert_eq!(t.settings["jmh_mode"], "thrpt");
    assert_eq!(t.settings["jmh_benchmark"], "racehorse.bench.Mix.xorshift");
    assert_eq!(t.settings["jmh_version"], "1.37");
    assert_eq!(t.workload_cpu.method, racehorse_core::CpuMethod::Children);
    let wrong = setup_for("racehorse.bench.Sum.sum", Mode::Throughput);
    let e = store::store(&Recorder::new(), &wrong, &results, 0.6, cpu).expect_err("another benchmark");
    assert!(e.to_string().contains("where racehorse.bench.Sum.sum was asked"), "{e}");
}

#[test]
fn several_parameter_combinations_in_one_cell_are_refused_with_the_way_out() {
    let results = parse(&fixture("avgt-params.json")).expect("avgt");
    let s = setup_for("racehorse.bench.Sum.sum", Mode::AverageTime);
    let e = store::store(&Recorder::new(), &s, &results, 1.0, Default::default()).expect_err("two");
    let e = e.to_string();
    assert!(
        e.contains("2 parameter combinations")
            && e.contains("(size=64) (size=4096)")
            && e.contains("-o params="),
        "{e}"
    );
}

#[test]
fn a_cell_without_a_jar_is_a_usage_error() {
    if find_java().is_err() {
        racehorse_testkit::skip!("no JDK here (the refusal without one is tested in tests/jmh_cli.rs)");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let e = Jmh.validate(&cell_ctx(&Jmh, dir.path(), 1, &[])).expect_err("no jar").to_string();
    assert!(e.contains("-o jar="), "{e}");
    let missing = dir.path().join("none.jar");
    let c = cell_ctx(&Jmh, dir.path(), 1, &[("jar", Value::Str(missing.display().to_string()))]);
    assert!(Jmh.validate(&c).expect_err("missing").to_string().contains("none.jar"));
    let not_jmh = dir.path().join("empty.jar");
    std::fs::write(&not_jmh, b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0").expect("write");
    let c = cell_ctx(&Jmh, dir.path(), 1, &[("jar", Value::Str(not_jmh.display().to_string()))]);
    let e = Jmh.validate(&c).expect_err("not a JMH jar").to_string();
    assert!(e.contains("is not a JMH benchmarks jar"), "{e}");
}

/// Issue 47, case 8: a pattern JMH refuses was reported as "not a JMH benchmarks jar". A
/// stand-in `java` lists one benchmark without a pattern and fails on any pattern.
#[test]
fn issue47_a_bad_benchmark_pattern_is_named_not_the_jar() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let java = dir.path().join("java");
    let script =
        "#!/bin/sh\nif [ $# -gt 3 ]; then echo \"PatternSyntaxException: Unclosed group\" >&2; exit 1; fi\n\
                  echo Benchmarks:; echo racehorse.bench.Sum.sum\n";
    std::fs::write(&java, script).expect("write");
    std::fs::set_permissions(&java, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let jar = dir.path().join("bench.jar");
    std::fs::write(&jar, b"PK").expect("jar");
    assert_eq!(list(&java, &jar, "").expect("listed"), vec!["racehorse.bench.Sum.sum".to_string()]);
    let e = list(&java, &jar, "Sum.(").expect_err("bad pattern").to_string();
    assert!(e.contains("benchmark pattern 'Sum.('") && e.contains("Unclosed group"), "{e}");
    assert!(!e.contains("not a JMH benchmarks jar"), "{e}");
}
