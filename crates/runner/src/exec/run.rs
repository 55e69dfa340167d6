//! The loop over a plan: each cell in order under its variant (applied when the variant
//! changes), a ramp of cells for an engine that ramps its load, the warm-up cell before the
//! first window, and the rounds of adaptive repetitions after the plan.

use super::cell::{run_point, Progress};
use super::host::InForce;
use super::runner::{Emit, RunOutcome, Runner};
use crate::adaptive::{self, next_round};
use crate::apply::{apply_variant, variant_dir};
use crate::error::RunError;
use crate::plan::{Plan, PlannedCell};
use crate::sinks::Sink;
use racehorse_core::{Event, RunStatus};
use racehorse_machine::guard::Guard;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Runner {
    /// Undoes the previous variant and applies variant `index`; a failure is kept in `vs`
    /// (the variant's cells then fail with it) after putting the machine back.
    fn enter_variant(&self, plan: &Plan, index: usize, guard: &mut Guard, vs: &mut InForce) {
        let v = &plan.variants[index];
        *vs = InForce {
            index: Some(index),
            env: v.env.clone(),
            work_root: variant_dir(v, &self.work_root),
            plugd: v.plugd.is_some(),
            ..InForce::default()
        };
        let targets = crate::apply::variant_targets(plan, index, &self.work_root);
        match apply_variant(v, &plan.suite, &self.root, &self.work_root, &targets, guard) {
            Ok(set) => vs.settings = set,
            Err(e) => {
                let undo = guard.restore_keeping_memory_limit().err();
                let undo = undo.map(|u| format!("; putting the machine back: {u}")).unwrap_or_default();
                vs.error = Some(format!("variant '{}' could not be applied: {e}{undo}", v.name));
            }
        }
    }
}

/// Runs `cells` in order; stops early on interrupt. A cell whose engine ramps its load
/// ([`racehorse_engines::Engine::ramp_next`]) becomes a ramp of cells, one per load point.
fn run_cells(
    runner: &Runner,
    plan: &Plan,
    cells: &[PlannedCell],
    guard: &mut Guard,
    emit: &mut Emit,
    p: &mut Progress,
) -> Result<(), RunError> {
    for cell in cells {
        if runner.abort.load(Ordering::Relaxed) {
            p.interrupted = true;
            return Ok(());
        }
        if p.variant.index != Some(cell.variant) {
            runner.enter_variant(plan, cell.variant, guard, &mut p.variant);
        }
        match cell.engine.ramp_next(&cell.spec, &[]) {
            Some(first) => super::ramp::run_ramp(runner, cell, first, guard, emit, p)?,
            None => {
                run_point(runner, cell.clone(), guard, emit, p)?;
            }
        }
        if p.interrupted {
            return Ok(());
        }
    }
    Ok(())
}

/// The longest a warm-up cell's window and warmup last.
const WARM_UP_MAX: Duration = Duration::from_secs(1);

/// Runs the plan's first cell once with a short window, telling no sink: caches, page
/// tables, CPU frequency and the engine's own first-use costs settle before anything counts.
fn warm_up(runner: &Runner, plan: &Plan, guard: &mut Guard, p: &mut Progress) {
    let Some(first) = plan.cells.first() else { return };
    // A guest boots fresh for each cell: warming the host up would only cost a boot.
    if runner.abort.load(Ordering::Relaxed) || crate::guest::wants_guest(&first.spec) {
        return;
    }
    if p.variant.index != Some(first.variant) {
        runner.enter_variant(plan, first.variant, guard, &mut p.variant);
    }
    let mut cell = first.clone();
    cell.warmup = cell.warmup.min(WARM_UP_MAX);
    cell.runtime = cell.runtime.min(WARM_UP_MAX);
    // Nothing of the warm-up is kept, so it is not profiled: perf's start and its report of
    // a profile nobody reads would cost seconds.
    let unprofiled = Runner { profile: None, ..runner.clone() };
    unprofiled.run_cell(&cell, guard, &mut |_| Ok(()), &p.variant);
}

/// Runs the whole plan. Sink errors (e.g. the store cannot write) stop the run with Err;
/// everything already finished has been handed to the sinks. The guard is restored by the
/// caller (and by its Drop on every path). With adaptive repetitions, rounds of extra
/// repetitions follow the plan until every point has converged or reached its maximum.
pub fn execute(
    runner: &Runner,
    plan: &Plan,
    guard: &mut Guard,
    sinks: &mut [&mut dyn Sink],
    run_id: i64,
    label: &str,
) -> Result<RunOutcome, RunError> {
    let mut emit = |e: Event| -> Result<(), RunError> {
        for s in sinks.iter_mut() {
            s.event(&e)?;
        }
        Ok(())
    };
    emit(Event::RunStarted {
        run_id,
        label: label.to_string(),
        cells: plan.cells.len(),
        eta: racehorse_core::Nanos::from_duration(plan.eta()),
    })?;
    let mut p = Progress { total: plan.cells.len(), ..Progress::default() };
    if runner.warm_up {
        warm_up(runner, plan, guard, &mut p);
    }
    run_cells(runner, plan, &plan.cells, guard, &mut emit, &mut p)?;
    let mut adaptive_summary = None;
    if let Some(a) = plan.suite.adaptive {
        let first = p.issued;
        while !p.interrupted {
            let round = next_round(plan, &p.tracker, &a, p.issued);
            if round.is_empty() {
                break;
            }
            p.total = p.issued + round.len();
            run_cells(runner, plan, &round, guard, &mut emit, &mut p)?;
        }
        adaptive_summary = Some(adaptive::summary(plan, &p.tracker, &a, p.issued - first));
    }
    let status = if p.interrupted {
        RunStatus::Interrupted
    } else if p.failed > 0 {
        RunStatus::Partial
    } else {
        RunStatus::Complete
    };
    emit(Event::RunFinished { run_id, status, ok: p.ok, failed: p.failed })?;
    Ok(RunOutcome { status, ok: p.ok, failed: p.failed, adaptive: adaptive_summary })
}
