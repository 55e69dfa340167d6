//! Tests of the micro engine: every benchmark runs as a cell and reports its lmbench unit,
//! latencies are plausible, units follow the kind, and impossible settings are refused.

use super::*;
use crate::testutil::cell_ctx;
use crate::{Control, RealClock, Recorder, Totals};
use racehorse_core::Value;
use std::sync::Arc;
use std::time::Duration;

fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
    // Defaults first, then what keeps the tests short, then the test's own.
    let mut o: Vec<(&str, Value)> = Vec::new();
    o.push(("tries", Value::Int(3)));
    o.push(("enough_ms", Value::Int(1)));
    o.push(("min_window_ms", Value::Int(0)));
    o.extend_from_slice(opts);
    cell_ctx(&Micro, dir, 1, &o)
}

/// The cell's totals and its measured window.
fn run_windowed(c: &CellContext) -> (Totals, Duration) {
    let mut cell = Micro.prepare(c).expect("prepare");
    let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    cell.run(&ctl, &rec).unwrap_or_else(|e| panic!("{:?}: {e}", c.spec.params["bench"]));
    (rec.totals(), ctl.window().map(|w| w.as_duration()).unwrap_or_default())
}

fn run(c: &CellContext) -> Totals {
    run_windowed(c).0
}

#[test]
fn every_benchmark_runs_and_reports_in_lmbench_units() {
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    for bench in BENCHES {
        let mut opts = vec![("bench", Value::Str(bench.to_string())), ("fds", Value::Int(10))];
        if *bench == "caches" {
            opts.push(("tries", Value::Int(1)));
        }
        if matches!(*bench, "mmap" | "caches") || kind_of(bench) != Kind::Latency {
            opts.push(("level", Value::Str("size".into())));
            opts.push(("size", Value::Int(64 << 10)));
        }
        let c = ctx(dir.path(), &opts);
        let t = run(&c);
        let key = match kind_of(bench) {
            Kind::Latency => "latency_us",
            Kind::Bandwidth => "mb_per_s",
            Kind::Chase if *bench == "caches" => "disagreements",
            Kind::Chase => "latency_ns",
        };
        if t.below_resolution.contains_key(racehorse_core::quality::THROUGHPUT) {
            // Only a difference can fall below its resolution (prot_fault on x86_64 VMs).
            assert_eq!(kind_of(bench), Kind::Latency, "{bench}: {:?}", t.below_resolution);
            assert!(t.below_resolution.contains_key(&format!("latency {bench}")), "{bench}");
            assert!(!t.extra.contains_key(key) && t.units == 0.0, "{bench}: no plain number");
            assert!(t.extra["gross_ns"].is_finite() && t.extra["overhead_ns"].is_finite(), "{bench}");
            continue;
        }
        let v = t.extra.get(key).copied().unwrap_or(f64::NAN);
        assert!(v.is_finite() && v >= 0.0, "{bench}: {key} = {v}");
        assert!(t.units > 0.0, "{bench}: units counted");
        let unit = Micro.unit_for(&c.spec);
        assert_eq!(unit == WorkUnit::Bytes, kind_of(bench) == Kind::Bandwidth, "{bench}");
    }
}

#[test]
fn latencies_are_in_their_expected_ranges() {
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let us = |bench: &str| run(&ctx(dir.path(), &[("bench", Value::Str(bench.into()))])).extra["latency_us"];
    let null = us("null");
    let fork = us("fork");
    assert!(null > 0.005 && null < 20.0, "a system call takes well under 20 µs: {null}");
    assert!(fork > 10.0 * null, "fork costs far more than a null call: {fork} vs {null}");
}

/// Windows of 0.07-0.09 s made CPU per operation a handful of 10 ms ticks: the reported
/// figure's tries now last `min_window_ms` together.
#[test]
fn the_window_lasts_at_least_min_window_ms() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = ctx(dir.path(), &[("bench", Value::Str("null".into())), ("min_window_ms", Value::Int(150))]);
    let (t, window) = run_windowed(&c);
    assert!(window >= Duration::from_millis(150), "{window:?}");
    assert!(t.units > 0.0);
    let caches =
        ctx(dir.path(), &[("bench", Value::Str("caches".into())), ("min_window_ms", Value::Int(150))]);
    let m = run::Setup::of(&caches).expect("setup").method;
    assert_eq!(m.enough, Duration::from_millis(1), "the sweep's points keep enough_ms");
}

#[test]
fn impossible_settings_are_refused_with_the_choices() {
    let dir = tempfile::tempdir().expect("tmp");
    let huge = ctx(
        dir.path(),
        &[
            ("bench", Value::Str("bw_cp".into())),
            ("level", Value::Str("size".into())),
            ("size", Value::Int(1 << 40)),
        ],
    );
    let e = Micro.validate(&huge).expect_err("beyond memory");
    assert!(e.to_string().contains("choose a smaller size"), "{e}");
    let levels = caches::from_sysfs(&racehorse_machine::SysRoot::host(), 0).unwrap_or_default();
    if !levels.iter().any(|l| l.level == 4) {
        let e = Micro.validate(&ctx(
            dir.path(),
            &[("bench", Value::Str("bw_rd".into())), ("level", Value::Str("l4".into()))],
        ));
        assert!(e.expect_err("no L4 here").to_string().contains("level=l4"));
    }
}

#[test]
fn a_copy_at_a_level_splits_the_working_set_between_its_buffers() {
    let dir = tempfile::tempdir().expect("tmp");
    let setup = |bench: &str, level: &str| {
        run::Setup::of(&ctx(
            dir.path(),
            &[("bench", Value::Str(bench.into())), ("level", Value::Str(level.into()))],
        ))
        .expect("setup")
        .size
    };
    for level in ["l1", "l2", "mem"] {
        assert_eq!(setup("bw_cp", level) * 2, setup("bw_rd", level), "{level}");
        assert_eq!(setup("bw_bcopy", level) * 2, setup("bw_wr", level), "{level}");
    }
    // At level=size the size is per buffer, as bw_mem's argument.
    assert_eq!(setup("bw_cp", "size"), setup("bw_rd", "size"));
}
