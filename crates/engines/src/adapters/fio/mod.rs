//! The `fio` adapter: runs the real fio (3.x) with a job equivalent to a `diskio` cell (same
//! option table), reads fio's JSON report and stores the results like `diskio` does.
//!
//! A cell is up to three fio runs (see `job`): untimed passes that lay the files out
//! (every phase but `write`) or warm the cache (`reread`), then the measured pass.
//!
//! The window follows the jobs' I/O, not the fio process: fio spends ~0.25 s before any I/O
//! (clock calibration, a 100 ms start handshake) and up to ~10 ms after it (reaping, the
//! report), which would swamp a one-pass cell. The measured pass's jobs signal through fio's
//! `exec_prerun` / `exec_postrun` hooks (see `process`), which fio runs right before a job's
//! clock starts and right after its I/O, end_fsync included.
//! - `timed=false`: the window opens when the first job starts and closes when the last one
//!   is done: file creation (`write`), cache invalidation (cold phases) and the final fsync
//!   (`fsync=true`) are inside, fio's start-up and exit are not.
//! - `timed=true`: fio runs `time_based` for the Control's runtime after a `ramp_time` of its
//!   warmup; the window opens when the warmup has elapsed since the first job started (when
//!   fio resets its statistics) and closes when the last job is done.
//!
//! If a job never reports its end, the window closes when fio exits.
//! Units are fio's `io_bytes` (read + write), which fio counts after its ramp only; racehorse's
//! bytes/s divides them by its own window, and fio's own figures are kept as extras.
//! The workload CPU is that of fio's process tree (main process, job processes and the
//! children they reaped) from /proc at both edges of the window.

pub(crate) mod job;
pub mod json;
pub(crate) mod process;
#[cfg(test)]
mod tests;

use crate::info::{shortcuts, EngineInfo, Tool};
use crate::support::disk_layout::{FileState, Layout};
use crate::support::disk_options::{self, DiskPhase};
use crate::support::path;
use crate::support::proc_tree::tree_cpu;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptionSpec, Recorder, SummaryArea,
    Workload,
};
use job::{IoEngine, JobSpec, Pass, Timing};
use process::{Event, Exit, FioRun};
use racehorse_core::{CpuMethod, WorkUnit, WorkloadCpu};
use racehorse_machine::rusage::CpuTime;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `fio` engine.
pub struct Fio;

/// The same option table as the native `diskio` engine, so one suite runs both on the
/// same axes.
const OPTIONS: &[OptionSpec] = disk_options::OPTIONS;

/// The program this engine runs (checked before the run by `crate::ready`).
const TOOL: Tool = Tool {
    program: "fio",
    hint: "install it (Debian/Ubuntu: apt-get install fio) or use the built-in 'diskio'",
};

/// Finds `fio` on PATH.
pub(crate) fn fio_path() -> Option<PathBuf> {
    path::find_file("fio")
}

/// fio's own figures from its JSON report (the latencies of the dominant direction, then of
/// each direction with a `_read` or `_write` suffix).
const FIGURES: &[Figure] = &[
    Figure::info("fio_bw_bytes_per_s", "fio's bandwidth", "bytes/s"),
    Figure::info("fio_iops", "fio's IOPS", "ops/s"),
    Figure::info("fio_runtime_ms", "fio's runtime", "ms"),
    Figure::info("fio_usr_cpu_pct", "fio's user CPU", "%"),
    Figure::info("fio_sys_cpu_pct", "fio's system CPU", "%"),
    Figure::info("fio_clat_mean_ns*", "fio's mean completion latency*", "ns"),
    Figure::info("fio_clat_p50_ns*", "fio's median completion latency*", "ns"),
    Figure::info("fio_clat_p99_ns*", "fio's p99 completion latency*", "ns"),
];

/// What `Fio` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "fio",
    about: "the real fio 3.x with diskio's options: bytes/s and CPU per byte, fio's own figures as extras",
    area: "Disk I/O",
    summary_area: AreaRule::Fixed(SummaryArea::DiskIo),
    unit: WorkUnit::Bytes,
    caps: Caps { needs_disk: true, external_tool: Some(TOOL), ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::DESTRUCTIVE],
};

impl Engine for Fio {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn drop_unused(&self, params: &mut racehorse_core::Params) {
        disk_options::drop_unused_iomem_align(params, true);
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        fio_path().ok_or_else(|| TOOL.missing())?;
        let spec = job_spec(ctx)?;
        spec.validate().map_err(EngineError::Usage)?;
        let work_dir = utf8(&ctx.work_dir)?.to_string();
        Ok(Box::new(FioCell { spec, work_dir: PathBuf::from(work_dir), env: ctx.env.clone() }))
    }
}

fn utf8(p: &Path) -> Result<&str, EngineError> {
    p.to_str().ok_or_else(|| EngineError::Usage(format!("fio needs a UTF-8 path, not {}", p.display())))
}

/// Reads the cell's options into a [`JobSpec`].
fn job_spec(ctx: &CellContext) -> Result<JobSpec, EngineError> {
    let phase_word = ctx.get_str("phase")?;
    let phase = DiskPhase::parse(phase_word).ok_or_else(|| {
        EngineError::Usage(format!("phase '{phase_word}' is not one of {:?}", DiskPhase::NAMES))
    })?;
    let engine_word = ctx.get_str("ioengine")?;
    let ioengine = IoEngine::parse(engine_word)
        .ok_or_else(|| EngineError::Usage(format!("ioengine '{engine_word}' is not psync or io_uring")))?;
    let target = ctx.spec.params.get("target").and_then(|v| v.as_str()).unwrap_or("");
    let mut device = None;
    let dir = if target.is_empty() {
        utf8(&ctx.work_dir)?.to_string()
    } else if Path::new(target).is_dir() {
        target.to_string()
    } else if disk_options::is_block_device(Path::new(target)) {
        let destructive = ctx.spec.params.get("destructive").and_then(|v| v.as_bool()).unwrap_or(false);
        if phase.writes() && !destructive {
            return Err(EngineError::Usage(format!(
                "target {target} is a block device: fio only reads it; pass --destructive (or destructive = true) to allow \
                 writing (this destroys the data on {target})"
            )));
        }
        device = Some(target.to_string());
        utf8(&ctx.work_dir)?.to_string()
    } else {
        return Err(EngineError::Usage(format!(
            "target '{target}' is not an existing directory or block device"
        )));
    };
    Ok(JobSpec {
        phase,
        procs: ctx.get_u64("procs")?,
        bs: ctx.get_u64("bs")?,
        size: ctx.get_u64("size")?,
        direct: ctx.get_bool("direct")?,
        fsync: ctx.get_bool("fsync")?,
        ioengine,
        iodepth: ctx.get_u64("iodepth")?,
        iodepth_batch: ctx.get_u64("iodepth_batch")?,
        rwmixread: ctx.get_u64("rwmixread")?,
        timed: ctx.get_bool("timed")?,
        dir,
        layout: layout_of(ctx, phase, device.is_some())?,
        device,
        invalidate: disk_options::flag(ctx, "invalidate", true)?,
        fadvise_hint: disk_options::flag(ctx, "fadvise_hint", true)?,
        // Absent at 0 (see drop_unused) and in cells stored before the option existed.
        iomem_align: if ctx.spec.params.contains_key("iomem_align") {
            ctx.get_u64("iomem_align")?
        } else {
            0
        },
    })
}

/// The `layout` option for this phase (the same rules as diskio's).
fn layout_of(ctx: &CellContext, phase: DiskPhase, device: bool) -> Result<FileState, EngineError> {
    Layout::from_option(ctx.get_str("layout")?, phase, device).map_err(EngineError::Usage)
}

struct FioCell {
    spec: JobSpec,
    work_dir: PathBuf,
    env: std::collections::BTreeMap<String, String>,
}

/// The last lines of fio's log, for error messages.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        "(fio printed nothing)".to_string()
    } else {
        crate::bounded_output(&tail)
    }
}

/// Error for a fio that exited while racehorse still waited for its jobs.
fn early_exit(res: Result<Exit, String>, what: &str, log: &Path) -> EngineError {
    match res {
        Ok(exit) => EngineError::Failed(format!("fio ended {what} ({}): {}", exit.describe(), log_tail(log))),
        Err(e) => EngineError::Failed(e),
    }
}

impl FioCell {
    fn paths(&self, pass: Pass) -> (PathBuf, PathBuf) {
        let label = pass.label();
        (self.work_dir.join(format!("fio-{label}.json")), self.work_dir.join(format!("fio-{label}.log")))
    }

    fn fifo(&self) -> PathBuf {
        self.work_dir.join("fio-markers.fifo")
    }

    fn spawn(&self, pass: Pass, ctl: &Control) -> Result<(FioRun, PathBuf), EngineError> {
        let exe = fio_path().ok_or_else(|| TOOL.missing())?;
        let (json, log) = self.paths(pass);
        let timing = Timing { ramp: ctl.warmup, runtime: ctl.runtime };
        let fifo = self.fifo();
        let markers = if pass == Pass::Measured {
            process::make_fifo(&fifo)?;
            Some(utf8(&fifo)?)
        } else {
            None
        };
        let args = self.spec.args(pass, timing, utf8(&json)?, markers);
        let run =
            FioRun::spawn(&exe, &args, &self.work_dir, &self.env, &log, markers.map(|_| fifo.as_path()))?;
        Ok((run, log))
    }

    fn remove_files(&self) -> Result<(), EngineError> {
        for name in self.spec.file_names() {
            let path = Path::new(&self.spec.dir).join(name);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(EngineError::io("cannot remove an old fio file", path, e))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Runs an untimed pass to its end.
    fn run_untimed(&self, pass: Pass, ctl: &Control) -> Result<(), EngineError> {
        let (mut run, log) = self.spawn(pass, ctl)?;
        let exit = run.wait_exit(ctl)?;
        if !exit.success() {
            return Err(EngineError::Failed(format!(
                "fio's {} pass failed ({}): {}",
                pass.label(),
                exit.describe(),
                log_tail(&log)
            )));
        }
        Ok(())
    }

    /// Runs the measured pass and drives the window: it opens when the first job starts its
    /// I/O (plus the ramp when timed) and closes when the last job has finished it, or when
    /// fio exits if a job never reports. Returns fio's exit and the window's CPU.
    fn run_measured(&self, ctl: &Control) -> Result<(Exit, CpuTime, PathBuf), EngineError> {
        let (mut run, log) = self.spawn(Pass::Measured, ctl)?;
        loop {
            match run.next_event(ctl, None)? {
                Some(Event::JobStarted) => break,
                Some(Event::Exited(res)) => return Err(early_exit(res, "before its jobs started", &log)),
                _ => {}
            }
        }
        if self.spec.timed {
            let ramp_end = Instant::now() + ctl.warmup;
            while let Some(ev) = run.next_event(ctl, Some(ramp_end))? {
                if let Event::Exited(res) = ev {
                    return Err(early_exit(res, "during its ramp time", &log));
                }
            }
        }
        let cpu0 = tree_cpu(run.pid());
        ctl.begin_measure();
        let limit = self.spec.timed.then(|| Instant::now() + ctl.runtime * 2 + Duration::from_secs(120));
        let mut done = 0;
        let cpu1 = loop {
            match run.next_event(ctl, limit)? {
                Some(Event::JobDone) => {
                    done += 1;
                    if done == self.spec.procs {
                        ctl.end_measure();
                        break Some(tree_cpu(run.pid()));
                    }
                }
                Some(Event::Exited(res)) => {
                    ctl.end_measure();
                    let exit = res.map_err(EngineError::Failed)?;
                    return Ok((exit, exit.cpu.since(cpu0), log));
                }
                Some(Event::JobStarted) => {}
                None => {
                    run.kill();
                    return Err(EngineError::Failed("fio did not finish in twice its runtime".into()));
                }
            }
        };
        let exit = run.wait_exit(ctl)?;
        Ok((exit, cpu1.unwrap_or(exit.cpu).since(cpu0), log))
    }

    fn run_cell(&self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        self.remove_files()?;
        for pass in self.spec.passes().into_iter().filter(|p| *p != Pass::Measured) {
            self.run_untimed(pass, ctl)?;
        }
        let (exit, cpu, log) = self.run_measured(ctl)?;
        if !exit.success() {
            return Err(EngineError::Failed(format!("fio failed ({}): {}", exit.describe(), log_tail(&log))));
        }
        let (json_path, _) = self.paths(Pass::Measured);
        let text = std::fs::read_to_string(&json_path)
            .map_err(|e| EngineError::io("cannot read fio's JSON report", &json_path, e))?;
        let report = json::parse(&text).map_err(|e| {
            EngineError::Failed(format!("{e} ({}); fio said: {}", json_path.display(), log_tail(&log)))
        })?;
        if let Some((name, code)) = report.error() {
            return Err(EngineError::Failed(format!(
                "fio job {name} failed with error {code}: {}",
                log_tail(&log)
            )));
        }
        rec.submit(crate::WorkerStats {
            units: report.total_bytes() as f64,
            ops: report.total_ios(),
            bytes_read: report.bytes(json::Dir::Read),
            bytes_written: report.bytes(json::Dir::Write),
            ..Default::default()
        });
        rec.set_workload_cpu(WorkloadCpu {
            user_s: cpu.user_s.max(0.0),
            kernel_s: cpu.kernel_s.max(0.0),
            method: CpuMethod::Children,
        });
        for (name, value) in report.extras() {
            rec.set_extra(&name, value);
        }
        Ok(())
    }
}

impl Workload for FioCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let res = self.run_cell(ctl, rec);
        if res.is_err() {
            ctl.stop();
        }
        res
    }

    fn cleanup(self: Box<Self>) -> Result<(), EngineError> {
        let _ = std::fs::remove_file(self.fifo());
        self.remove_files()
    }
}
