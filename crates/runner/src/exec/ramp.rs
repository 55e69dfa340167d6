//! Load ramps: a planned cell whose engine ramps its load
//! ([`racehorse_engines::Engine::ramp_next`], the mix engine with `users = 0`) runs as one
//! cell per load point, each numbered as it runs, until the engine's stop rule ends the ramp
//! or the run is interrupted.

use super::cell::{run_point, Progress};
use super::runner::{Emit, Runner};
use crate::error::RunError;
use crate::plan::PlannedCell;
use racehorse_machine::guard::Guard;
use std::sync::atomic::Ordering;

/// A ramp: the planned cell's first point, then the points the engine asks for after each
/// result, until it says stop or the run is interrupted.
pub(crate) fn run_ramp(
    runner: &Runner,
    planned: &PlannedCell,
    first: racehorse_core::Params,
    guard: &mut Guard,
    emit: &mut Emit,
    p: &mut Progress,
) -> Result<(), RunError> {
    let mut done = Vec::new();
    let mut params = first;
    loop {
        let mut cell = planned.clone();
        cell.spec.params = params;
        if !done.is_empty() {
            p.total += 1;
        }
        done.push(run_point(runner, cell, guard, emit, p)?);
        if p.interrupted || runner.abort.load(Ordering::Relaxed) {
            return Ok(());
        }
        match planned.engine.ramp_next(&planned.spec, &done) {
            Some(next) => params = next,
            None => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::execute;
    use crate::exec::tests::{fixture_runner, Collect};
    use crate::plan::Plan;
    use crate::sinks::Sink;
    use crate::suite::Suite;
    use racehorse_core::{Event, RunStatus};
    use std::sync::Arc;

    /// A mix cell with users = 0 becomes a ramp: one cell per load, numbered as they run,
    /// until the engine's stop rule (here: max_users) ends it; a fixed-users cell stays one.
    #[test]
    fn a_ramp_cell_runs_one_cell_per_load_until_the_engine_stops_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut runner, mut guard) = fixture_runner(tmp.path(), false, false);
        runner.clock = Arc::new(racehorse_engines::RealClock::default());
        let wf = tmp.path().join("tiny.workfile");
        std::fs::write(&wf, "1 jmp_test\n").unwrap();
        let text = format!(
            "reps = 1\ncpus = [2]\n[[workload]]\nengine = \"mix\"\nworkfile = \"{}\"\njobs = 2\n\
         users = [0, 1]\nstop = \"max\"\nmax_users = 3\nadaptive = false\n",
            wf.display()
        );
        let plan = Plan::expand(&Suite::parse("t.toml", &text).unwrap(), 2, 2).unwrap();
        assert_eq!(plan.cells.len(), 2);
        let mut sink = Collect::default();
        let mut sinks: Vec<&mut dyn Sink> = vec![&mut sink];
        let out = execute(&runner, &plan, &mut guard, &mut sinks, 1, "t").unwrap();
        guard.restore().unwrap();
        assert_eq!((out.status, out.ok, out.failed), (RunStatus::Complete, 4, 0));
        let done: Vec<(usize, i64, f64)> = sink
            .0
            .iter()
            .filter_map(|e| match e {
                Event::CellFinished { index, result } => {
                    Some((*index, result.spec.params["users"].as_i64().unwrap(), result.units))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            done,
            [(0, 1, 2.0), (1, 2, 4.0), (2, 3, 6.0), (3, 1, 2.0)],
            "users 1..3, then the fixed cell"
        );
        let last_total = sink.0.iter().rev().find_map(|e| match e {
            Event::CellStarted { cells, .. } => Some(*cells),
            _ => None,
        });
        assert_eq!(last_total, Some(4), "the run's cell count grew with the ramp");
    }
}
