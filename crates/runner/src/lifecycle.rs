//! The life of one run, in the order that keeps the machine safe: stop signals handled,
//! the machine lock taken (or waited for), what killed runs left restored, the work
//! directories checked, the exclusivity check, the Guard, the memory limit, every variant
//! tried, the environment captured, the run recorded, the cells measured and stored as they
//! finish, the machine restored and read back. Warnings and notices go to the sinks as
//! events. The binary maps its flags to a [`RunRequest`] and its exit code from
//! [`RunReport`] or [`RunError::exit_code`]; every step is tested here.

use crate::apply::{check_variants, plan_targets, variant_dir};
use crate::error::Context;
pub use crate::error::RunError;
use crate::exec::{execute, RunOutcome, Runner};
use crate::plan::Plan;
use crate::profiling::ProfileSettings;
use crate::sinks::Sink;
use racehorse_core::{Event, RunStatus};
use racehorse_engines::{CellContext, RealClock};
use racehorse_machine::lock::{LockError, MachineLock};
use racehorse_machine::recovery::recover_all;
use racehorse_machine::{cpuctl, env, exclusivity, Guard, StopSignals, SysRoot};
use racehorse_store::spill::keep_cell;
use racehorse_store::{NewRun, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Everything one run needs, as plain data.
pub struct RunRequest {
    pub plan: Plan,
    pub label: String,
    /// The command line, as recorded with the run.
    pub command: String,
    pub root: SysRoot,
    /// The restore state file; the machine lock lives beside it.
    pub state_file: PathBuf,
    /// Queue behind a run that holds the machine lock instead of failing.
    pub wait_for_lock: bool,
    /// Parent of the per-cell work directories.
    pub work_root: PathBuf,
    pub sample_interval: Option<Duration>,
    pub profile: Option<ProfileSettings>,
    /// Share of one CPU that other processes may use in a window before its cell is noisy.
    pub noise_threshold: f64,
    /// Run the first cell once, unmeasured, before the first window.
    pub warm_up: bool,
    /// A campaign's common start (`run --start-at`): the run waits for it once the machine
    /// is guarded and before the run is recorded and its first cell begins.
    pub start_at: Option<SystemTime>,
    pub version: String,
    /// The host's name in the fleet's inventory (empty: the host name).
    pub inventory_name: String,
    /// The campaign the run belongs to, if any.
    pub campaign: Option<String>,
    /// The user's tags (`run --tag KEY=VALUE`), checked; the automatic ones are added here.
    pub tags: Vec<(String, String)>,
}

/// How a run ended.
#[derive(Debug)]
pub struct RunReport {
    pub run_id: i64,
    pub status: RunStatus,
    pub outcome: RunOutcome,
    /// Settings read back with their values from before the run.
    pub verified_settings: usize,
    /// 0 complete, 1 with failed cells, 128 + signal when stopped.
    pub exit_code: u8,
}

/// Writes each finished cell to the store as it finishes.
pub struct StoreSink<'a> {
    pub store: &'a Store,
    pub run_id: i64,
    /// The run's uuid, which a cell kept outside the store names (`racehorse_store::spill`).
    pub run_uuid: String,
}

impl Sink for StoreSink<'_> {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        if let Event::CellFinished { index, result } = e {
            if let Err(source) = self.store.insert_cell(self.run_id, *index, result) {
                let store = Path::new(self.store.path());
                let kept = match keep_cell(store, self.run_id, &self.run_uuid, *index, result) {
                    Ok(file) => format!(
                        "the measured cell is kept in {}; load it with `racehorse import {}` once the store can \
                         be written",
                        file.display(),
                        file.display()
                    ),
                    Err(tries) => format!(
                        "and it could not be kept anywhere else either: {}",
                        RunError::NotKept { tries }
                    ),
                };
                return Err(RunError::CellNotStored {
                    cell: result.spec.label(),
                    source: Box::new(source),
                    kept,
                });
            }
        }
        Ok(())
    }
}

/// The store first, then the caller's sinks (progress, JSON lines).
struct Fanout<'a, 'b, 'c> {
    store: StoreSink<'a>,
    rest: &'b mut [&'c mut dyn Sink],
}

impl Sink for Fanout<'_, '_, '_> {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        self.store.event(e)?;
        self.rest.iter_mut().try_for_each(|s| s.event(e))
    }
}

/// Tells the sinks a warning or notice before the run is recorded (a sink that cannot show
/// it stops nothing).
fn tell(sinks: &mut [&mut dyn Sink], e: Event) {
    for s in sinks.iter_mut() {
        let _ = s.before_run(&e);
    }
}

fn notice(sinks: &mut [&mut dyn Sink], message: String) {
    tell(sinks, Event::Notice { message });
}

/// Takes the machine lock, or waits for it with `--wait`.
fn take_lock(
    req: &RunRequest,
    signals: &StopSignals,
    sinks: &mut [&mut dyn Sink],
) -> Result<MachineLock, RunError> {
    let path = racehorse_machine::lock::lock_file_for(&req.state_file);
    let what = format!("racehorse run {} (label {})", req.plan.suite.name, req.label);
    let got = if req.wait_for_lock {
        let flag = signals.flag();
        let mut told = |holder: &str| notice(sinks, format!("waiting for the machine: {holder}"));
        MachineLock::acquire_waiting(&path, &what, Duration::from_millis(200), &flag, &mut told)
    } else {
        MachineLock::acquire(&path, &what)
    };
    got.map_err(|e| match e {
        LockError::Abandoned { .. } => stopped(signals),
        LockError::Held { .. } => RunError::Busy(e),
        LockError::Machine(m) => RunError::Machine(m).in_context("the machine lock"),
    })
}

/// Waits until `req.start_at`, in steps of at most 50 ms so that a stop signal ends the wait
/// at once; a start time already past is a warning and the run starts now.
fn wait_for_start(req: &RunRequest, signals: &StopSignals, sinks: &mut [&mut dyn Sink]) {
    let Some(at) = req.start_at else { return };
    match at.duration_since(SystemTime::now()) {
        Err(late) => tell(
            sinks,
            Event::Warning {
                message: format!(
                    "--start-at passed {:.3} s ago: starting now, not together with the campaign",
                    late.duration().as_secs_f64()
                ),
            },
        ),
        Ok(left) => {
            notice(sinks, format!("waiting {:.3} s for the campaign's start time", left.as_secs_f64()))
        }
    }
    while !signals.requested() {
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(50))),
            _ => break,
        }
    }
}

/// The Guard could not put the machine back: exit 4, naming the state file (never 128 +
/// signal, which says the machine was restored).
fn restore_failed(
    source: racehorse_machine::MachineError,
    req: &RunRequest,
    signals: &StopSignals,
) -> RunError {
    RunError::RestoreFailed { source, signal: signals.signal(), state_file: req.state_file.clone() }
}

fn stopped(signals: &StopSignals) -> RunError {
    RunError::Stopped { signal: signals.signal().unwrap_or(libc::SIGINT), code: signals.exit_code() }
}

/// Checks that a directory exists and is writable. A missing directory is made only when its
/// parent exists: a mistyped path is not created as a tree (racehorse often runs as root).
/// Every failure is a usage error (choose another directory).
pub fn check_dir(dir: &Path) -> Result<(), RunError> {
    if !dir.is_dir() {
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(RunError::Usage(format!(
                "target directory {} does not exist, nor does {}; create it first or choose another with --dir",
                dir.display(),
                parent.display()
            )));
        }
        std::fs::create_dir(dir).map_err(|e| {
            RunError::Usage(format!("target directory {}: {e}; choose another with --dir", dir.display()))
        })?;
    }
    let probe = dir.join(format!(".racehorse-probe-{}", std::process::id()));
    std::fs::write(&probe, b"x").map_err(|e| {
        RunError::Usage(format!(
            "target directory {} is not writable: {e}; choose another with --dir",
            dir.display()
        ))
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Asks each engine to check every distinct planned cell before anything runs; a cell its
/// engine refuses is a usage error.
pub fn validate_cells(plan: &Plan, work_root: &Path) -> Result<(), RunError> {
    crate::guest::check_ready(plan)?;
    let mut seen = std::collections::BTreeSet::new();
    let mut engines_ready = std::collections::BTreeSet::new();
    for cell in &plan.cells {
        if engines_ready.insert(cell.engine.name()) {
            // What the engine's capabilities ask for: its tool, loopback, root.
            racehorse_engines::ready(cell.engine.0, true).map_err(RunError::from)?;
        }
        if !seen.insert(cell.spec.match_key()) {
            continue;
        }
        let v = &plan.variants[cell.variant];
        let ctx = CellContext {
            spec: cell.spec.clone(),
            work_dir: variant_dir(v, work_root),
            cpus: cell.cpus,
            env: v.env.clone(),
        };
        cell.engine.validate(&ctx).map_err(|e| RunError::from(e).refused(cell.spec.label()))?;
    }
    Ok(())
}

/// The label and every planned cell's names and parameters within the store's limits
/// (`racehorse_store::limits`), so that what the run stores can be listed, exported,
/// imported and loaded: a usage error before anything else.
pub fn check_texts(req: &RunRequest) -> Result<(), RunError> {
    if let Some(why) = racehorse_store::limits::label_problem(&req.label) {
        return Err(RunError::Usage(format!("--label: {why}; give a shorter one")));
    }
    let problem = req.plan.cells.iter().find_map(|c| racehorse_store::limits::spec_problem(&c.spec));
    match problem {
        Some(why) => Err(RunError::Usage(format!("{why}; shorten it in the suite or on the command line"))),
        None => Ok(()),
    }
}

/// Under the lock: restores what killed runs and daemons left, removes their work
/// directories, and checks this run's directories and cells.
fn prepare(req: &RunRequest, sinks: &mut [&mut dyn Sink]) -> Result<(), RunError> {
    let done = recover_all(&req.root, &req.state_file).context("restoring what a killed racehorse left")?;
    for what in done {
        notice(sinks, format!("restored machine state left by a killed racehorse: {what}"));
    }
    check_dir(&req.work_root)?;
    for v in req.plan.variants.iter().filter(|v| v.dir.is_some()) {
        check_dir(&variant_dir(v, &req.work_root))
            .map_err(|e| e.refused(format_args!("variant '{}'", v.name)))?;
    }
    validate_cells(&req.plan, &req.work_root)?;
    let roots = std::iter::once(req.work_root.clone())
        .chain(req.plan.variants.iter().map(|v| variant_dir(v, &req.work_root)));
    for gone in roots.flat_map(|r| crate::leftovers::sweep(&r)) {
        notice(sinks, format!("removed {}, left by a racehorse run that was killed", gone.display()));
    }
    Ok(())
}

/// The Guard with the run-wide memory limit and every variant tried once.
fn guard_machine(req: &RunRequest, sinks: &mut [&mut dyn Sink]) -> Result<Guard, RunError> {
    let mut guard =
        Guard::new(req.root.clone(), req.state_file.clone()).context("preparing the machine guard")?;
    if let Some(bytes) = req.plan.suite.mem_limit_bytes {
        let l = guard.limit_memory(bytes).map_err(|e| RunError::from(e).refused("memory limit"))?;
        let (mib, version, path) = (l.limit_bytes >> 20, l.version, l.path.display());
        notice(sinks, format!("memory limit: {mib} MiB (cgroup v{version} {path})"));
    }
    check_variants(&req.plan, &req.root, &req.work_root, &mut guard)?;
    Ok(guard)
}

/// The run's record: suite, environment of the targets the cells really use, exclusivity.
fn record_run(req: &RunRequest, store: &Store, excl: &exclusivity::Exclusivity) -> Result<i64, RunError> {
    let targets = plan_targets(&req.plan, &req.work_root);
    let mut environment = env::capture(&req.root, &targets);
    environment.racehorse_version = req.version.clone();
    environment.cpu_control = cpuctl::detect_method(&req.root).as_str().to_string();
    store
        .create_run(&NewRun {
            label: req.label.clone(),
            host: environment.hostname.clone(),
            command: racehorse_store::limits::clip(&req.command, racehorse_store::limits::MAX_TEXT)
                .into_owned(),
            suite_json: suite_json(&req.plan),
            env_json: serde_json::to_string(&environment).unwrap_or_default(),
            exclusivity_json: serde_json::to_string(excl).unwrap_or_default(),
            racehorse_version: req.version.clone(),
            cpu_method: environment.cpu_control.clone(),
            inventory_name: req.inventory_name.clone(),
            campaign: req.campaign.clone(),
            tags: run_tags(req, &environment.kernel_release),
        })
        .context("creating the run in the store")
}

/// The run's tags: the user's (`run --tag`), then the automatic `kernel` (release) and
/// `racehorse` (version) unless the user set them.
fn run_tags(req: &RunRequest, kernel: &str) -> Vec<(String, String)> {
    let mut tags = req.tags.clone();
    for (k, v) in [("kernel", kernel), ("racehorse", req.version.as_str())] {
        if !v.is_empty() && !tags.iter().any(|(key, _)| key == k) {
            tags.push((k.to_string(), v.chars().take(racehorse_store::tags::MAX_TAG_VALUE).collect()));
        }
    }
    tags
}

/// What the run stores as its suite: the variants with every setting, the order (and seed)
/// and the planned cells.
fn suite_json(plan: &Plan) -> String {
    let doc = serde_json::json!({
        "name": plan.suite.name,
        "order": plan.suite.order,
        "seed": plan.suite.seed,
        "variants": plan.variants,
        "cells": plan.cells.iter().map(|c| &c.spec).collect::<Vec<_>>(),
    });
    doc.to_string()
}

/// Runs `req` to the end. `signals` must be installed before this is called (the binary
/// does it first thing); the sinks get every event, from the warnings and notices before
/// the run is recorded (waiting for the lock, the exclusivity check) to `run_finished`.
pub fn run(
    req: &RunRequest,
    store: &Store,
    signals: &StopSignals,
    sinks: &mut [&mut dyn Sink],
) -> Result<RunReport, RunError> {
    check_texts(req)?;
    let _lock = take_lock(req, signals, sinks)?;
    prepare(req, sinks)?;
    let excl = exclusivity::check(&req.root, Duration::from_millis(300));
    for w in &excl.warnings {
        tell(sinks, Event::Warning { message: w.clone() });
    }
    let mut guard = guard_machine(req, sinks)?;
    wait_for_start(req, signals, sinks);
    if signals.requested() {
        // Only a restore that worked may end in 128 + signal.
        guard.restore().map_err(|source| restore_failed(source, req, signals))?;
        return Err(stopped(signals));
    }
    let run_id = record_run(req, store, &excl)?;
    let runner = Runner {
        root: req.root.clone(),
        clock: Arc::new(RealClock::default()),
        abort: signals.flag(),
        work_root: req.work_root.clone(),
        sample_interval: req.sample_interval,
        drop_caches: req.plan.suite.drop_caches,
        profile: req.profile.clone().map(|p| ProfileSettings { run_id, ..p }),
        noise_threshold: req.noise_threshold,
        warm_up: req.warm_up,
    };
    let run_uuid = store.run(run_id).ok().flatten().map(|r| r.uuid).unwrap_or_default();
    let mut fanout = Fanout { store: StoreSink { store, run_id, run_uuid }, rest: sinks };
    let outcome = execute(&runner, &req.plan, &mut guard, &mut [&mut fanout], run_id, &req.label);
    let restored = guard.restore();
    let status = outcome.as_ref().map(|o| o.status).unwrap_or(RunStatus::Partial);
    let finished = store.finish_run(run_id, status);
    restored.map_err(|source| restore_failed(source, req, signals))?;
    let verified = guard.verify_restored().map_err(RunError::NotRestored)?;
    // The cell's own error first: it says what was lost and where it was kept.
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            return Err(RunError::RunStopped {
                run_id,
                source: Box::new(e),
                unfinished: finished.err().map(Box::new),
            })
        }
    };
    finished.context("marking the run finished")?;
    let exit_code = match status {
        RunStatus::Complete => 0,
        RunStatus::Interrupted => signals.exit_code(),
        _ => 1,
    };
    Ok(RunReport { run_id, status, outcome, verified_settings: verified, exit_code })
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
