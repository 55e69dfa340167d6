//! Tests of the micro engine: every benchmark runs as a cell and reports its lmbench unit,
//! latencies are plausible, units follow the kind, and impossible settings are refused.

use super::*;
use crate::{Control, RealClock, Recorder, Totals};
use racehorse_core::{CellSpec, Params, Value};
use std::sync::Arc;
use std::time::Duration;

fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
    let mut params = Params::new();
    for o in OPTIONS {
        params.insert(o.name.into(), o.parse_text(o.default).expect("default"));
    }
    // Short intervals keep the tests quick; the method is the same.
    params.insert("tries".into(), Value::Int(3));
    params.insert("enough_ms".into(), Value::Int(1));
    for (k, v) in opts {
        params.insert((*k).into(), v.clone());
    }
    let spec = CellSpec { workload: "micro".into(), params, variant: "default".into(), rep: 1 };
    CellContext { spec, work_dir: dir.to_path_buf(), cpus: 1, env: Default::default() }
}

fn run(c: &CellContext) -> Totals {
    let mut cell = Micro.prepare(c).expect("prepare");
    let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    cell.run(&ctl, &rec).unwrap_or_else(|e| panic!("{:?}: {e}", c.spec.params["bench"]));
    rec.totals()
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
