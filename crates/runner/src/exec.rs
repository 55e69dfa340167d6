//! The measurement loop: for each planned cell set the CPUs, drop caches, prepare the
//! workload, run warmup and the measured window while the sampler records, snapshot
//! /proc/stat exactly at the window's edges, clean up, and hand the result to the sinks.

use crate::adaptive::{self, next_round, AdaptiveSummary, Tracker};
use crate::apply::{apply_variant, variant_dir, Settings};
use crate::error::RunError;
use crate::monitor::{cpus_online_mean, EdgeHooks, Edges, Sampler};
use crate::plan::{Plan, PlannedCell};
use crate::profiling::{ProfileSettings, Profiler};
use crate::sinks::Sink;
use crate::window_check::WindowCheck;
use racehorse_core::event::CellPhase;
use racehorse_core::{CellResult, CellStatus, CpuMethod as WlCpuMethod, Event, RunStatus};
use racehorse_engines::{CellContext, Clock, Control, EngineError, MemoryLimit, Recorder, WindowHooks};
use racehorse_machine::guard::Guard;
use racehorse_machine::procstat::{cpu_usage, user_hz};
use racehorse_machine::MachineError;
use racehorse_machine::SysRoot;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How to run a plan.
pub struct Runner {
    pub root: SysRoot,
    pub clock: Arc<dyn Clock>,
    /// Set by SIGINT/SIGTERM; checked between cells and inside windows.
    pub abort: Arc<AtomicBool>,
    /// Parent of the per-cell work directories.
    pub work_root: PathBuf,
    /// Sampler period; None disables the sampler (fake-clock tests).
    pub sample_interval: Option<Duration>,
    pub drop_caches: bool,
    /// `run --profile`: record where the CPU time goes in each window.
    pub profile: Option<ProfileSettings>,
    /// Share of one CPU other tenants may use in a window before its cell is noisy.
    pub noise_threshold: f64,
    /// Run the first cell once, unmeasured and unstored, before the first window: the
    /// first measured cell of a run is otherwise often a cold outlier.
    pub warm_up: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub ok: usize,
    pub failed: usize,
    /// How adaptive repetitions ended, when the suite asked for them.
    pub adaptive: Option<AdaptiveSummary>,
}

/// Hands an event to every sink; an error (a sink that cannot take it) stops the run.
pub(crate) type Emit<'a> = dyn FnMut(Event) -> Result<(), RunError> + 'a;

/// Hands a phase, warning or notice to the sinks: one a sink cannot show stops nothing.
pub(crate) fn tell(emit: &mut Emit, e: Event) {
    let _ = emit(e);
}

fn status_of(e: &EngineError) -> CellStatus {
    match e {
        EngineError::Interrupted => CellStatus::Interrupted,
        _ => CellStatus::Failed,
    }
}

/// The variant in force: what it set, its environment and target directory, or why it could
/// not be applied (its cells then fail with that reason without running).
#[derive(Default)]
struct InForce {
    index: Option<usize>,
    settings: Settings,
    env: BTreeMap<String, String>,
    work_root: PathBuf,
    error: Option<String>,
    /// A hotplug daemon decides the CPU count (cells do not set it).
    plugd: bool,
}

/// For each window count an engine reports as extra `n_<thing>` (e.g. `n_page_moved`), the
/// system CPU per thing in microseconds: `cpu_us_per_<thing>` and `kernel_us_per_<thing>`
/// (seed 001's "CP CPU time per page moved").
fn per_count_costs(result: &mut CellResult) {
    let counts: Vec<(String, f64)> = result
        .extra
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("n_")?.to_string(), *v)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    for (thing, n) in counts {
        result.extra.insert(format!("cpu_us_per_{thing}"), result.cpu.total_s() * 1e6 / n);
        result.extra.insert(format!("kernel_us_per_{thing}"), result.cpu.kernel_s * 1e6 / n);
    }
}

impl Runner {
    fn work_dir(root: &Path, cell: &PlannedCell) -> PathBuf {
        root.join(format!("racehorse-{}-cell{}", std::process::id(), cell.index))
    }

    fn prepare_dir(root: &Path, dir: &PathBuf) -> Result<(), EngineError> {
        std::fs::create_dir_all(root).map_err(|e| {
            EngineError::io("cannot create the work directory; choose another with --dir", root, e)
        })?;
        std::fs::create_dir(dir).map_err(|e| {
            EngineError::io("cannot create the cell directory; is the target writable and not full?", dir, e)
        })
    }

    /// Runs one cell; errors become a failed or interrupted result, never a panic.
    fn run_cell(&self, cell: &PlannedCell, guard: &mut Guard, emit: &mut Emit, vs: &InForce) -> CellResult {
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

    fn measure(
        &self,
        cell: &PlannedCell,
        guard: &mut Guard,
        emit: &mut Emit,
        vs: &InForce,
        result: &mut CellResult,
    ) -> Result<(), EngineError> {
        let engine = cell.engine;
        if self.drop_caches {
            guard.drop_caches().map_err(|e| EngineError::Failed(format!("dropping caches: {e}")))?;
        }
        if crate::guest::wants_guest(&cell.spec) {
            return crate::guest::measure(self, cell, guard, emit, result);
        }
        let work_dir = Self::work_dir(&vs.work_root, cell);
        if engine.caps().needs_disk {
            Self::prepare_dir(&vs.work_root, &work_dir)?;
        }
        let ctx = CellContext {
            spec: cell.spec.clone(),
            work_dir: work_dir.clone(),
            cpus: cell.cpus,
            env: vs.env.clone(),
        };
        tell(emit, Event::CellPhase { index: cell.index, phase: CellPhase::Prepare });
        let limited = engine.memory_limit(&ctx)?;
        let method = (!vs.plugd).then(|| guard.method());
        let outcome = match limited {
            Some(limit) => {
                Self::under_limit(guard, limit, result, |r| self.prepare_and_run(cell, &ctx, emit, r, method))
            }
            None => self.prepare_and_run(cell, &ctx, emit, result, method),
        };
        tell(emit, Event::CellPhase { index: cell.index, phase: CellPhase::Cleanup });
        if engine.caps().needs_disk {
            let _ = std::fs::remove_dir_all(&work_dir);
        }
        outcome
    }

    /// Runs `f` with the racehorse process in a memory cgroup of `limit` (the engine's own),
    /// removed again on every path; a limit already in force (a suite or variant mem_limit)
    /// is refused rather than silently replaced.
    fn under_limit(
        guard: &mut Guard,
        limit: MemoryLimit,
        result: &mut CellResult,
        f: impl FnOnce(&mut CellResult) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        if let Some(l) = guard.memory_limit() {
            return Err(EngineError::Usage(format!(
                "{} sets its own memory limit, but a mem_limit of {} MiB is in force; drop mem_limit from \
                 the suite or variant",
                result.spec.workload,
                l.limit_bytes >> 20
            )));
        }
        fn failed(what: &'static str) -> impl Fn(MachineError) -> EngineError {
            move |e| EngineError::Failed(format!("{what}: {e}"))
        }
        let outcome = Self::cell_swap(guard, limit.zram_bytes)
            .and_then(|()| {
                guard
                    .limit_memory_swap(limit.bytes, limit.allow_swap)
                    .map_err(failed("cannot set the cell's memory limit"))
            })
            .and_then(|set| {
                result.extra.insert("mem_limit_bytes".into(), set.limit_bytes as f64);
                f(result)
            });
        let removed = guard.remove_memory_limit().map_err(failed("removing the cell's memory limit"));
        let swap_off = guard.remove_zram_swap().map_err(failed("removing the cell's zram swap"));
        outcome.and(removed).and(swap_off)
    }

    /// Sets up the cell's zram swap, if it wants one.
    fn cell_swap(guard: &mut Guard, bytes: Option<u64>) -> Result<(), EngineError> {
        let Some(bytes) = bytes else { return Ok(()) };
        guard
            .zram_swap(bytes)
            .map(|_| ())
            .map_err(|e| EngineError::Failed(format!("cannot set up the cell's zram swap: {e}")))
    }

    fn prepare_and_run(
        &self,
        cell: &PlannedCell,
        ctx: &CellContext,
        emit: &mut Emit,
        result: &mut CellResult,
        method: Option<racehorse_machine::CpuMethod>,
    ) -> Result<(), EngineError> {
        let mut workload = cell.engine.prepare(ctx)?;
        let edges = Arc::new(Mutex::new(Edges::default()));
        let mut hooks: Box<dyn WindowHooks> =
            Box::new(EdgeHooks { root: self.root.clone(), edges: edges.clone() });
        let profiler = self.profile.as_ref().map(|p| Profiler::start(p, &self.work_root)).transpose()?;
        if let Some(p) = &profiler {
            hooks = p.hooks(hooks);
        }
        hooks = crate::guest_init::signalled(hooks);
        let ctl = Control::new(cell.warmup, cell.runtime, self.clock.clone(), hooks, self.abort.clone());
        let rec = Recorder::new();
        let sampler = self.sample_interval.map(|i| Sampler::start(self.root.clone(), i));
        tell(emit, Event::CellPhase { index: cell.index, phase: CellPhase::Warmup });
        let ran = workload.run(&ctl, &rec);
        ctl.stop();
        let monitored = sampler.map(Sampler::finish).unwrap_or_default();
        result.samples = monitored.0;
        let cleaned = workload.cleanup();
        let profiled = profiler.map(|p| p.finish(self.profile.as_ref().expect("profiling")));
        ran?;
        cleaned?;
        match profiled {
            Some(Ok(p)) => result.profile = Some(p),
            // The measurement stands; only where its CPU went is unknown.
            Some(Err(e)) => {
                tell(emit, Event::Warning { message: format!("no profile for {}: {e}", cell.spec.label()) })
            }
            None => {}
        }
        let window =
            ctl.window().ok_or_else(|| EngineError::Failed("the measured window never closed".into()))?;
        let totals = rec.totals();
        result.window = window;
        result.units = totals.units;
        result.ops = totals.ops;
        result.bytes_read = totals.bytes_read;
        result.bytes_written = totals.bytes_written;
        result.workload_cpu = totals.workload_cpu;
        result.extra.extend(totals.extra);
        result.quality.below_resolution.extend(totals.below_resolution);
        result.settings.extend(totals.settings);
        result.latencies = totals
            .latencies
            .into_iter()
            .map(|(op, latency)| racehorse_core::OpStats { op, latency })
            .collect();
        let e = edges.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some((s0, p0)), Some((s1, p1))) = (&e.start, &e.end) {
            result.cpu = cpu_usage(&s0.cpu, &s1.cpu, user_hz());
            if let Some(mean) = cpus_online_mean(&e, &monitored.1) {
                result.extra.insert("cpus_online_mean".into(), mean);
            }
            per_count_costs(result);
            let proc_s = p1.since(*p0).total_s();
            // Worker threads are part of our process; the harness is the rest of it.
            result.harness_cpu_s = if result.workload_cpu.method == WlCpuMethod::Threads {
                add_io_workers(result, &e);
                (proc_s - result.workload_cpu.total_s()).max(0.0)
            } else {
                proc_s
            };
            let check = WindowCheck {
                edges: &e,
                monitor: &monitored.1,
                noise_threshold: self.noise_threshold,
                user_hz: user_hz(),
                method,
            };
            check.apply(result)?;
        }
        Ok(())
    }

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

/// Counts and state carried across the cells of a run (and its adaptive rounds).
#[derive(Default)]
pub(crate) struct Progress {
    ok: usize,
    failed: usize,
    pub(crate) interrupted: bool,
    variant: InForce,
    tracker: Tracker,
    /// Cells started so far: the next cell's index (cells are numbered as they run).
    issued: usize,
    /// The run's cell count as known now (adaptive rounds and ramps add cells).
    pub(crate) total: usize,
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
            Some(first) => crate::ramp::run_ramp(runner, cell, first, guard, emit, p)?,
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
    runner.run_cell(&cell, guard, &mut |_| Ok(()), &p.variant);
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

#[cfg(test)]
#[path = "exec_tests.rs"]
pub(crate) mod tests;

/// Counts the window's io_uring kernel workers (io-wq and SQPOLL tasks of racehorse's process,
/// which only the workload's threads create) as the workload's kernel CPU: they do its I/O but
/// are not the threads that `RUSAGE_THREAD` measures. Kept as `io_worker_cpu_s`, with the
/// count of workers that retired inside the window, whose last busy moments are not in it.
fn add_io_workers(result: &mut CellResult, edges: &Edges) {
    let Some(io) = edges.io_worker_cpu().filter(|io| io.workers > 0 || io.exited > 0) else { return };
    result.workload_cpu.kernel_s += io.kernel_s;
    result.extra.insert("io_worker_cpu_s".into(), io.kernel_s);
    if io.exited > 0 {
        result.extra.insert("io_workers_exited".into(), f64::from(io.exited));
    }
}
