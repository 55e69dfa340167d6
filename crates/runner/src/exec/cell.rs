//! One cell of a run: on this machine or in a KVM guest, its CPUs set first and its caches
//! dropped; numbered as it runs and handed to the sinks; counted into the run's progress.

use super::host::InForce;
use super::runner::{Emit, Runner};
use crate::adaptive::Tracker;
use crate::error::RunError;
use crate::plan::PlannedCell;
use racehorse_core::{CellResult, CellStatus, Event};
use racehorse_engines::EngineError;
use racehorse_machine::guard::Guard;

fn status_of(e: &EngineError) -> CellStatus {
    match e {
        EngineError::Interrupted => CellStatus::Interrupted,
        _ => CellStatus::Failed,
    }
}

impl Runner {
    /// Runs one cell; errors become a failed or interrupted result, never a panic.
    pub(super) fn run_cell(
        &self,
        cell: &PlannedCell,
        guard: &mut Guard,
        emit: &mut Emit,
        vs: &InForce,
    ) -> CellResult {
        let mut result = CellResult::empty(cell.spec.clone(), cell.engine.unit_for(&cell.spec));
        result.cpus_online = cell.cpus;
        result.settings = vs.settings.clone();
        if let Some(e) = &vs.error {
            result.status = CellStatus::Failed;
            result.error = Some(e.clone());
            return result;
        }
        let cpus = match &cell.cpu_list {
            _ if vs.plugd => Ok(racehorse_machine::CpuMethod::Hotplug),
            Some(list) => guard.set_cpu_list(list),
            None => guard.set_cpus(cell.cpus),
        };
        let measured = cpus
            .map_err(|e| EngineError::Failed(format!("setting {} CPUs: {e}", cell.cpus)))
            .and_then(|_| self.measure(cell, guard, emit, vs, &mut result));
        if let Err(e) = measured {
            result.status = status_of(&e);
            result.error = Some(e.to_string());
        }
        result
    }

    /// Drops the caches, then measures the cell in a guest or on this machine.
    fn measure(
        &self,
        cell: &PlannedCell,
        guard: &mut Guard,
        emit: &mut Emit,
        vs: &InForce,
        result: &mut CellResult,
    ) -> Result<(), EngineError> {
        if self.drop_caches {
            guard.drop_caches().map_err(|e| EngineError::Failed(format!("dropping caches: {e}")))?;
        }
        if crate::guest::wants_guest(&cell.spec) {
            return crate::guest::measure(self, cell, guard, emit, result);
        }
        self.measure_on_host(cell, guard, emit, vs, result)
    }
}

/// Counts and state carried across the cells of a run (and its adaptive rounds).
#[derive(Default)]
pub(crate) struct Progress {
    pub(super) ok: usize,
    pub(super) failed: usize,
    pub(crate) interrupted: bool,
    pub(super) variant: InForce,
    pub(super) tracker: Tracker,
    /// Cells started so far: the next cell's index (cells are numbered as they run).
    pub(super) issued: usize,
    /// The run's cell count as known now (adaptive rounds and ramps add cells).
    pub(crate) total: usize,
}

/// Runs one cell with no variant and no sinks: the cell a guest was started for.
pub(crate) fn run_alone(runner: &Runner, cell: &PlannedCell, guard: &mut Guard) -> CellResult {
    let vs = InForce { work_root: runner.work_root.clone(), ..InForce::default() };
    runner.run_cell(cell, guard, &mut |_| Ok(()), &vs)
}

/// Runs one cell, numbered as the next one, and hands its result to the sinks.
pub(crate) fn run_point(
    runner: &Runner,
    mut cell: PlannedCell,
    guard: &mut Guard,
    emit: &mut Emit,
    p: &mut Progress,
) -> Result<racehorse_engines::RampPoint, RunError> {
    cell.index = p.issued;
    p.issued += 1;
    p.total = p.total.max(p.issued);
    emit(Event::CellStarted { index: cell.index, cells: p.total, spec: cell.spec.clone() })?;
    let result = runner.run_cell(&cell, guard, emit, &p.variant);
    match result.status {
        CellStatus::Ok => p.ok += 1,
        CellStatus::Failed => p.failed += 1,
        CellStatus::Interrupted => p.interrupted = true,
    }
    p.tracker.record(&result);
    let point = racehorse_engines::RampPoint {
        params: cell.spec.params.clone(),
        units_per_s: (result.status == CellStatus::Ok).then(|| result.throughput()),
        window_s: result.window.as_secs_f64(),
    };
    emit(Event::CellFinished { index: cell.index, result: Box::new(result) })?;
    Ok(point)
}
