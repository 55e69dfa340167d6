//! One cell measured on this machine: its work directory and memory limit, the engine's
//! prepare, warmup and measured window with the sampler running and /proc/stat read exactly
//! at the window's edges, cleanup, and the figures derived from the window (CPU per unit and
//! per counted thing, the harness's own CPU, the window's checks).

use super::runner::{tell, Emit, Runner};
use crate::apply::Settings;
use crate::monitor::{cpus_online_mean, EdgeHooks, Edges, Sampler};
use crate::plan::PlannedCell;
use crate::profiling::Profiler;
use crate::window_check::WindowCheck;
use racehorse_core::event::CellPhase;
use racehorse_core::{CellResult, CpuMethod as WlCpuMethod, Event};
use racehorse_engines::{CellContext, Control, EngineError, MemoryLimit, Recorder, WindowHooks};
use racehorse_machine::guard::Guard;
use racehorse_machine::procstat::{cpu_usage, user_hz};
use racehorse_machine::MachineError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The variant in force: what it set, its environment and target directory, or why it could
/// not be applied (its cells then fail with that reason without running).
#[derive(Default)]
pub(crate) struct InForce {
    pub(crate) index: Option<usize>,
    pub(crate) settings: Settings,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) work_root: PathBuf,
    pub(crate) error: Option<String>,
    /// A hotplug daemon decides the CPU count (cells do not set it).
    pub(crate) plugd: bool,
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

/// Stores the cell's profile with warnings for what it lacks, or says why there is none:
/// the measurement stands either way, only where its CPU went is unknown.
fn store_profile(
    profiled: Option<Result<(racehorse_core::Profile, Vec<String>), EngineError>>,
    cell: &PlannedCell,
    emit: &mut Emit,
    result: &mut CellResult,
) {
    match profiled {
        Some(Ok((p, warnings))) => {
            result.profile = Some(p);
            for w in warnings {
                tell(emit, Event::Warning { message: format!("profile of {}: {w}", cell.spec.label()) });
            }
        }
        Some(Err(e)) => {
            tell(emit, Event::Warning { message: format!("no profile for {}: {e}", cell.spec.label()) })
        }
        None => {}
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

    /// Measures one cell on this machine: its work directory, its memory limit if the engine
    /// sets one, prepare, warmup and window, cleanup.
    pub(super) fn measure_on_host(
        &self,
        cell: &PlannedCell,
        guard: &mut Guard,
        emit: &mut Emit,
        vs: &InForce,
        result: &mut CellResult,
    ) -> Result<(), EngineError> {
        let engine = cell.engine;
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
        let profiler =
            self.profile.as_ref().map(|p| Profiler::start(p, &self.work_root, cell)).transpose()?;
        if let Some(p) = &profiler {
            hooks = p.hooks(hooks);
        }
        hooks = crate::guest_channel::signalled(hooks);
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
        store_profile(profiled, cell, emit, result);
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
}

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
