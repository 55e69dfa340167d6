//! End-to-end tests of the mix engine: one load point at 1 and 2 users through the Engine
//! interface, and the ramp the engine asks the runner for.

use super::*;
use crate::control::RealClock;
use std::sync::Arc;

fn ctx(dir: &std::path::Path, users: u64, workfile: &str) -> CellContext {
    let mut params = Params::new();
    for o in OPTIONS {
        if let Some(v) = o.default_value() {
            params.insert(o.name.into(), v);
        }
    }
    params.insert("users".into(), Value::Int(users as i64));
    params.insert("workfile".into(), Value::Str(workfile.into()));
    params.insert("jobs".into(), Value::Int(30));
    params.insert("poolsize".into(), Value::Int(64 << 10));
    CellContext {
        spec: CellSpec { workload: "mix".into(), params, variant: "default".into(), rep: 1 },
        work_dir: dir.to_path_buf(),
        cpus: 2,
        env: Default::default(),
    }
}

fn run_point(users: u64, workfile: &str) -> crate::Totals {
    let tmp = tempfile::tempdir().unwrap();
    let c = ctx(tmp.path(), users, workfile);
    Mix.validate(&c).unwrap();
    let mut w = Mix.prepare(&c).unwrap();
    let ctl = Control::simple(Duration::ZERO, Duration::ZERO, Arc::new(RealClock::default()));
    let rec = Recorder::new();
    w.run(&ctl, &rec).unwrap();
    w.cleanup().unwrap();
    let window = ctl.window().expect("the window opened and closed").as_secs_f64();
    let t = rec.totals();
    let real_s = t.extra["real_s"];
    // The window closes when the last user is reaped, not when the watchdog (50 ms slices)
    // notices; jobs/s (window) and jpm (real_s) tell the same story.
    assert!((window - real_s).abs() < 0.01 + 0.01 * real_s, "window {window} vs real {real_s}");
    t
}

#[test]
fn one_and_two_users_run_their_job_lists() {
    for users in [1u64, 2] {
        let t = run_point(users, "fserver");
        let per_user = t.extra["jobs_per_user"];
        // 30 jobs over fserver's 595 hits: 20 hits → 1.01 → 1, 30 → 1.51 → 2, 10 → 0.50 → 1,
        // 40 → 2.02 → 2, 5 → 0.25 → 1 (at least one): 8 + 16 + 10 + 4 + 3.
        assert_eq!(per_user, 41.0);
        assert_eq!(t.units, per_user * users as f64);
        let jpm = t.extra["jpm"];
        assert!((jpm - per_user * users as f64 * 60.0 / t.extra["real_s"]).abs() < 1e-6 * jpm);
        assert!((t.extra["jpm_per_user"] * users as f64 - jpm).abs() < 1e-6 * jpm);
        assert_eq!(t.workload_cpu.method, CpuMethod::Children);
        assert!(t.workload_cpu.total_s() > 0.0, "children's CPU from wait4");
        assert_eq!(t.extra["disk_file_kib"], ((10 << 10) + (64 << 10) / users) as f64 / 1024.0);
    }
}

#[test]
fn a_custom_workfile_runs_and_a_bad_one_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    std::fs::write(&good, "# tiny\n3 sieve\n1 udp_test\n").unwrap();
    let t = run_point(1, good.to_str().unwrap());
    assert_eq!(t.extra["jobs_per_user"], 31.0, "30 jobs as 22.5 + 7.5, each rounded up");
    let bad = tmp.path().join("bad");
    std::fs::write(&bad, "3 sieve\n1 nope\n").unwrap();
    let e = Mix.validate(&ctx(tmp.path(), 1, bad.to_str().unwrap())).unwrap_err();
    assert!(matches!(&e, EngineError::Usage(m) if m.contains("line 2: unknown task 'nope'")), "{e}");
}

#[test]
fn users_zero_is_a_ramp_and_fixed_users_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let ramp = ctx(tmp.path(), 0, "compute");
    let first = Mix.ramp_next(&ramp.spec, &[]).expect("a ramp");
    assert_eq!(first["users"], Value::Int(1));
    let done = [RampPoint { params: first.clone(), units_per_s: Some(10.0), window_s: 3.0 }];
    assert_eq!(Mix.ramp_next(&ramp.spec, &done).unwrap()["users"], Value::Int(2));
    let failed = [RampPoint { params: first, units_per_s: None, window_s: 0.0 }];
    assert_eq!(Mix.ramp_next(&ramp.spec, &failed), None);
    assert!(Mix.ramp_next(&ctx(tmp.path(), 3, "compute").spec, &[]).is_none());
    assert!(matches!(Mix.prepare(&ramp), Err(EngineError::Usage(_))));
}
