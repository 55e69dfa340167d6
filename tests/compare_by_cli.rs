//! `compare --by` and the regression gate through the binary: the compiler-flag study
//! (`-O0` against `-O3 -march=native`, two compute runs), fileserver's `ipc=none` against
//! `ipc=mq` inside one run, and `--fail-on-regression` on synthetic stores (exit 3 or 0).

use crate::common::{machine_lock, text, Sandbox};
use racehorse_report::synth::{synthetic_side, Shape};
use racehorse_store::{NewRun, Store};
use std::path::Path;

/// True when `name` is an executable on PATH.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// Stores a synthetic run of `shape` under `label`; returns its id.
pub fn store_synthetic(db: &Path, label: &str, shape: &Shape) -> i64 {
    let store = Store::open(db).expect("open store");
    let run = NewRun {
        label: label.into(),
        host: "synthetic".into(),
        racehorse_version: "0.1.0".into(),
        cpu_method: "hotplug".into(),
        ..NewRun::default()
    };
    let id = store.create_run(&run).expect("create run");
    for (i, c) in synthetic_side(0, label, shape).cells.iter().enumerate() {
        store.insert_cell(id, i, c).expect("insert cell");
    }
    store.finish_run(id, racehorse_core::RunStatus::Complete).expect("finish");
    id
}

fn compute_run(sb: &Sandbox, label: &str, cflags: &str) {
    let flags = format!("--cflags={cflags}");
    let o = sb.run(&[
        "run",
        "compute",
        "-o",
        "case=sieve",
        "-o",
        "reps=1",
        "--cc",
        "cc",
        &flags,
        "--reps",
        "2",
        "--label",
        label,
        "--quiet",
        "--no-drop-caches",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn compiler_flags_compare_along_cflags() {
    if !on_path("cc") {
        eprintln!("SKIPPED: no cc on PATH, so compute's C kernels cannot be built with two flag sets");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    compute_run(&sb, "o0", "-O0");
    compute_run(&sb, "o3", "-O3 -march=native");
    let plain = sb.run(&["compare", "o0", "o3"]);
    let t = text(&plain);
    assert_eq!(plain.status.code(), Some(2), "{t}");
    assert!(t.contains("They differ in cflags (base '-O0', new '-O3 -march=native')"), "{t}");
    assert!(t.contains("add --by cflags"), "says what to do: {t}");
    let by = sb.run(&["compare", "o0", "o3", "--by", "cflags"]);
    let t = text(&by);
    assert!(by.status.success(), "{t}");
    assert!(
        t.contains("racehorse compare: run 2 'o3' cflags=-O3 -march=native vs run 1 'o0' cflags=-O0"),
        "{t}"
    );
    assert!(t.contains("by cflags") && t.contains("Throughput"), "{t}");
    let json = sb.run(&["compare", "o0", "o3", "--by", "cflags", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is json only");
    assert_eq!(v["records"].as_array().map(Vec::len), Some(4), "one point, four metrics: {v}");
    assert_eq!(v["base"]["by"], "cflags=-O0");
    assert_eq!(v["news"][0]["by"], "cflags=-O3 -march=native");
    assert!(v["records"][0]["params"].get("cflags").is_none(), "the dimension is not a matched parameter");
}

#[test]
fn fileserver_ipc_none_against_mq_in_one_run() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let dir = sb.work();
    std::fs::create_dir_all(&dir).expect("work dir");
    let o = sb.run(&[
        "run",
        "fileserver",
        "-o",
        "ipc=none,mq",
        "--clients",
        "1,2",
        "--runtime",
        "300ms",
        "--warmup",
        "0s",
        "--reps",
        "2",
        "--label",
        "fs",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    crate::show_cli::assert_fits_100_columns(&text(&sb.run(&["show", "fs"])));
    let by = sb.run(&["compare", "fs", "--by", "ipc=none"]);
    let t = text(&by);
    assert!(by.status.success(), "{t}");
    assert!(t.contains("racehorse compare: run 1 'fs' ipc=mq vs run 1 'fs' ipc=none"), "{t}");
    // The rows of the fileserver table (the latency table after it has rows per operation).
    let table: Vec<&str> =
        t.lines().skip_while(|l| !l.starts_with("clients  ")).take_while(|l| !l.is_empty()).collect();
    let rows: Vec<&str> =
        table.iter().copied().filter(|l| l.starts_with("1 ") || l.starts_with("2 ")).collect();
    assert_eq!(rows.len(), 2, "clients=1 and clients=2 matched across ipc: {t}");
    let mq_base = text(&sb.run(&["compare", "fs", "--by", "ipc=mq"]));
    assert!(mq_base.contains("run 1 'fs' ipc=none vs run 1 'fs' ipc=mq"), "the chosen base: {mq_base}");
    let bad = sb.run(&["compare", "fs", "--by", "ipc=shm"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("its values of ipc are: none, mq"), "{}", text(&bad));
    let absent = sb.run(&["compare", "fs", "--by", "cflags"]);
    assert_eq!(absent.status.code(), Some(2));
    assert!(text(&absent).contains("has no parameter 'cflags'"), "{}", text(&absent));
}

#[test]
fn regression_gate_exits_3_on_a_significant_loss_and_0_otherwise() {
    let sb = Sandbox::new();
    store_synthetic(&sb.db(), "base", &Shape::default());
    store_synthetic(&sb.db(), "slower", &Shape { speed: 0.8, seed: 3, ..Shape::default() });
    store_synthetic(&sb.db(), "faster", &Shape { speed: 1.25, cpu_cost: 0.8, seed: 4, ..Shape::default() });
    let worse = sb.run(&["compare", "base", "slower", "--fail-on-regression", "5"]);
    let t = text(&worse);
    assert_eq!(worse.status.code(), Some(3), "{t}");
    assert!(t.contains("regression gate: 16 significant regression(s) of 5% or more"), "{t}");
    assert!(t.contains("run 2 'slower': w0 clients=1 cpus=1 Throughput -"), "{t}");
    assert!(String::from_utf8_lossy(&worse.stdout).contains("racehorse compare:"), "the report still prints");
    let lenient = sb.run(&["compare", "base", "slower", "--fail-on-regression", "30"]);
    assert_eq!(lenient.status.code(), Some(0), "20% is within a 30% gate: {}", text(&lenient));
    let better = sb.run(&["compare", "base", "faster", "--fail-on-regression", "1"]);
    assert_eq!(better.status.code(), Some(0), "{}", text(&better));
    assert!(text(&better).contains("no significant regression of 1% or more"));
    let json = sb.run(&["compare", "base", "slower", "--fail-on-regression", "5", "-f", "json"]);
    assert_eq!(json.status.code(), Some(3));
    serde_json::from_slice::<serde_json::Value>(&json.stdout).expect("stdout stays json only");
    let bad = sb.run(&["compare", "base", "slower", "--fail-on-regression", "-1"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let without = sb.run(&["compare", "base", "slower"]);
    assert_eq!(without.status.code(), Some(0), "no gate, no failure");
}
