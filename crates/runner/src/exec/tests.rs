//! The measurement loop on a fixture machine with a fake clock: exact figures, variants,
//! adaptive repetitions, the warm-up and interrupts.

use super::*;
use crate::error::RunError;
use crate::plan::Plan;
use crate::sinks::Sink;
use crate::suite::Suite;
use racehorse_core::{CellResult, Event, RunStatus};
use racehorse_engines::FakeClock;
use racehorse_machine::guard::Guard;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct Collect(pub(crate) Vec<Event>);
impl Sink for Collect {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        self.0.push(e.clone());
        Ok(())
    }
}

/// A copy of the vm2 fixture machine and a fake-clock runner over it.
pub(crate) fn fixture_runner(tmp: &Path, abort: bool, drop_caches: bool) -> (Runner, Guard) {
    let root = racehorse_machine::fixtures::copy_fixture("vm2", tmp);
    let runner = Runner {
        root: root.clone(),
        clock: Arc::new(FakeClock::default()),
        abort: Arc::new(AtomicBool::new(abort)),
        work_root: tmp.join("work"),
        sample_interval: None,
        drop_caches,
        profile: None,
        noise_threshold: racehorse_machine::tenants::DEFAULT_NOISE_CPU_FRACTION,
        warm_up: false,
    };
    let guard = Guard::new(root, tmp.join("state.json")).unwrap();
    (runner, guard)
}

/// The whole pipeline on a fixture machine with a fake clock: exact, noise-free figures.
#[test]
fn fake_clock_pipeline_is_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let (runner, mut guard) = fixture_runner(tmp.path(), false, true);
    let suite = Suite::parse(
        "t.toml",
        "runtime = \"10s\"\nwarmup = \"2s\"\nreps = 2\ncpus = [1, 2]\n[[workload]]\nengine = \"null\"\nrate = 100.0\nclients = [1, 3]\n",
    )
    .unwrap();
    let plan = Plan::expand(&suite, 2, 2).unwrap();
    let mut sink = Collect::default();
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut sink];
    let out = execute(&runner, &plan, &mut guard, &mut sinks, 7, "t").unwrap();
    guard.restore().unwrap();
    for e in &sink.0 {
        if let Event::CellFinished { result, .. } = e {
            assert_eq!(result.error, None);
        }
    }
    assert_eq!((out.status, out.ok, out.failed), (RunStatus::Complete, 8, 0));
    let results: Vec<&CellResult> = sink
        .0
        .iter()
        .filter_map(|e| if let Event::CellFinished { result, .. } = e { Some(result.as_ref()) } else { None })
        .collect();
    assert_eq!(results.len(), 8);
    for r in results {
        assert_eq!(r.window, racehorse_core::Nanos(10_000_000_000));
        assert_eq!(r.units, 1000.0);
        assert_eq!(r.throughput(), 100.0);
        assert_eq!(r.cpu.total_s(), 0.0, "the fixture's /proc/stat does not move");
    }
    assert!(matches!(sink.0.last(), Some(Event::RunFinished { run_id: 7, .. })));
}

#[test]
fn adaptive_reps_repeat_only_unsettled_points_up_to_the_maximum() {
    let tmp = tempfile::tempdir().unwrap();
    let (runner, mut guard) = fixture_runner(tmp.path(), false, false);
    let text = "runtime = \"1s\"\nwarmup = \"0s\"\nreps = \"auto\"\nmax_reps = 4\ncpus = [2]\n\
                [[workload]]\nengine = \"null\"\nfail = [false, true]\n";
    let plan = Plan::expand(&Suite::parse("t.toml", text).unwrap(), 2, 2).unwrap();
    assert_eq!(plan.cells.len(), 6, "the first round has three repetitions");
    let mut sink = Collect::default();
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut sink];
    let out = execute(&runner, &plan, &mut guard, &mut sinks, 1, "t").unwrap();
    // The steady point converges at 3; the failing one never does and stops at 4.
    let a = out.adaptive.expect("adaptive summary");
    assert_eq!((a.points, a.converged, a.extra_cells), (2, 1, 1));
    assert_eq!((out.ok, out.failed, out.status), (3, 4, RunStatus::Partial));
    let last = sink.0.iter().rev().find_map(|e| match e {
        Event::CellFinished { index, result } => Some((*index, result.spec.rep)),
        _ => None,
    });
    assert_eq!(last, Some((6, 4)), "the extra cell continues the numbering");
}

fn run_suite(tmp: &Path, text: &str) -> (RunOutcome, Vec<CellResult>) {
    let (runner, mut guard) = fixture_runner(tmp, false, false);
    let plan = Plan::expand(&Suite::parse("t.toml", text).unwrap(), 2, 2).unwrap();
    let mut sink = Collect::default();
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut sink];
    let out = execute(&runner, &plan, &mut guard, &mut sinks, 1, "t").unwrap();
    guard.restore().unwrap();
    assert_eq!(guard.verify_restored().map_err(|e| e.join("; ")), Ok(1), "one setting changed and checked");
    let cells = sink
        .0
        .into_iter()
        .filter_map(|e| if let Event::CellFinished { result, .. } = e { Some(*result) } else { None })
        .collect();
    (out, cells)
}

/// Variant settings reach the (fixture) machine before the variant's cells, are recorded
/// with each cell, and are undone between variants and at the end.
#[test]
fn variant_settings_are_applied_recorded_and_restored() {
    let tmp = tempfile::tempdir().unwrap();
    let knob = tmp.path().join("proc/sys/vm/swappiness");
    let log = tmp.path().join("seen.log");
    let text = format!(
        "runtime = \"1s\"\nwarmup = \"0s\"\nreps = 2\ncpus = [2]\n[[workload]]\nengine = \"null\"\n\
         [[variant]]\nname = \"base\"\n[[variant]]\nname = \"low\"\nsysctl = {{ \"vm.swappiness\" = 7 }}\n\
         before = \"echo $(cat {k}) >> {l}\"\nafter = \"echo $(cat {k}) >> {l}\"\n",
        k = knob.display(),
        l = log.display()
    );
    let (out, cells) = run_suite(tmp.path(), &text);
    assert_eq!((out.status, out.ok), (RunStatus::Complete, 4));
    let order: Vec<&str> = cells.iter().map(|c| c.spec.variant.as_str()).collect();
    assert_eq!(order, ["base", "low", "base", "low"], "interleaved");
    for c in &cells {
        let want = if c.spec.variant == "low" { Some("7") } else { None };
        assert_eq!(c.settings.get("sysctl vm.swappiness").map(String::as_str), want);
    }
    // Each stretch of `low` saw 7 in `before` and in `after`, which undoes `before` while
    // the variant's settings still hold; then the Guard put the sysctl back.
    let seen = std::fs::read_to_string(&log).unwrap();
    let orig = std::fs::read_to_string(&knob).unwrap().trim().to_string();
    assert_ne!(orig, "7");
    assert_eq!(seen.lines().collect::<Vec<_>>(), ["7", "7", "7", "7"], "{seen}");
}

#[test]
fn a_failing_before_command_fails_only_that_variants_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "runtime = \"1s\"\nwarmup = \"0s\"\ncpus = [2]\n[[workload]]\nengine = \"null\"\n\
         [[variant]]\nname = \"base\"\nsysctl = { \"vm.swappiness\" = 5 }\n\
         [[variant]]\nname = \"bad\"\nbefore = \"echo no such thing >&2; exit 3\"\n";
    let (out, cells) = run_suite(tmp.path(), text);
    assert_eq!((out.status, out.ok, out.failed), (RunStatus::Partial, 1, 1));
    let bad = cells.iter().find(|c| c.spec.variant == "bad").unwrap();
    let e = bad.error.as_deref().unwrap_or("");
    assert!(e.contains("variant 'bad' could not be applied") && e.contains("no such thing"), "{e}");
}

/// Issue 21, case 10: a run's first cell read 119 GB/s against 198-200 in every repeat.
#[test]
fn the_first_cell_runs_once_unmeasured_before_the_first_window() {
    for warm_up in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let (mut runner, mut guard) = fixture_runner(tmp.path(), false, false);
        runner.warm_up = warm_up;
        let mark = tmp.path().join("runs.log");
        let text = format!(
            "runtime = \"1s\"\nwarmup = \"0s\"\nreps = 2\ncpus = [2]\n[[workload]]\nengine = \"null\"\nmark = \"{}\"\n",
            mark.display()
        );
        let plan = Plan::expand(&Suite::parse("t.toml", &text).unwrap(), 2, 2).unwrap();
        let mut sink = Collect::default();
        let mut sinks: Vec<&mut dyn Sink> = vec![&mut sink];
        let out = execute(&runner, &plan, &mut guard, &mut sinks, 1, "t").unwrap();
        let runs = std::fs::read_to_string(&mark).unwrap().lines().count();
        assert_eq!((out.ok, runs), (2, if warm_up { 3 } else { 2 }), "warm_up {warm_up}");
        let finished = sink.0.iter().filter(|e| matches!(e, Event::CellFinished { .. })).count();
        assert_eq!(finished, 2, "the warm-up reaches no sink");
    }
}

/// The warm-up cell is not profiled: a perf that logs each start and exits is started once
/// per measured cell (both fail, which only this count needs), never for the warm-up.
#[test]
fn the_warm_up_cell_is_not_profiled() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let (mut runner, mut guard) = fixture_runner(tmp.path(), false, false);
    let log = tmp.path().join("perf.log");
    let perf = tmp.path().join("perf");
    std::fs::write(&perf, format!("#!/bin/sh\necho \"$1\" >> '{}'\nexit 1\n", log.display())).unwrap();
    std::fs::set_permissions(&perf, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut settings = crate::profiling::ProfileSettings::with_perf(perf);
    settings.counters = false;
    runner.profile = Some(settings);
    runner.warm_up = true;
    let text = "runtime = \"1s\"\nwarmup = \"0s\"\nreps = 2\ncpus = [2]\n[[workload]]\nengine = \"null\"\n";
    let plan = Plan::expand(&Suite::parse("t.toml", text).unwrap(), 2, 2).unwrap();
    let out = execute(&runner, &plan, &mut guard, &mut [], 1, "t").unwrap();
    assert_eq!(out.failed, 2, "the fake perf fails each measured cell");
    let starts = std::fs::read_to_string(&log).unwrap();
    assert_eq!(starts.lines().filter(|l| *l == "record").count(), 2, "{starts}");
}

#[test]
fn abort_before_start_interrupts_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (runner, mut guard) = fixture_runner(tmp.path(), true, false);
    let suite = Suite::parse("t.toml", "[[workload]]\nengine = \"null\"\n").unwrap();
    let plan = Plan::expand(&suite, 2, 2).unwrap();
    let out = execute(&runner, &plan, &mut guard, &mut [], 1, "t").unwrap();
    assert_eq!((out.status, out.ok), (RunStatus::Interrupted, 0));
}
