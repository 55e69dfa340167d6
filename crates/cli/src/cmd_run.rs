//! `racehorse run` and `racehorse restore`: the flags mapped to the runner's types (the
//! suite's [`Overrides`], the [`RunRequest`]); the suite is built and changed by the runner
//! (`racehorse_runner::suite`), checked, then run with the machine guarded and every cell
//! stored.

use crate::args::{Cli, RunArgs, RunFormat};
use crate::{cmd_show, CmdResult, Failure};
use anyhow::Context;
use racehorse_engines::{find, ready, registry};
use racehorse_machine::guard::default_state_file;
use racehorse_machine::lock::{LockError, MachineLock};
use racehorse_machine::recovery::recover_all;
use racehorse_machine::{cpuctl, StopSignals, SysRoot};
use racehorse_runner::duration::human;
use racehorse_runner::lifecycle::{self, RunRequest};
use racehorse_runner::{JsonLinesSink, Overrides, Plan, ProgressSink, RunError, Sink, Suite};
use racehorse_store::Store;
use std::io::IsTerminal;
use std::time::Duration;

/// Parses `NAME=V1,V2` into the option name and its raw values.
fn parse_opt(text: &str) -> Result<(String, Vec<String>), Failure> {
    if let Some((name, whole)) = text.split_once(":=").filter(|(n, _)| !n.contains('=')) {
        return Ok((name.trim().to_string(), vec![whole.to_string()]));
    }
    let (name, vals) = text
        .split_once('=')
        .ok_or_else(|| Failure::usage(format!("--opt '{text}': expected NAME=VALUE[,VALUE...]")))?;
    Ok((name.trim().to_string(), vals.split(',').map(|v| v.trim().to_string()).collect()))
}

/// Engine option values given on the command line: the shortcut flags, `--opt`, and the
/// words after `--`.
fn flag_options(a: &RunArgs) -> Result<crate::shortcuts::OptionValues, Failure> {
    let mut out = a.shortcut_values.clone();
    for o in &a.opts {
        out.push(parse_opt(o)?);
    }
    if !a.program.is_empty() {
        let option = crate::shortcuts::trailing_option(registry(), &a.what).map_err(Failure::usage)?;
        out.push((option.to_string(), vec![racehorse_core::shell::join(&a.program)]));
    }
    Ok(out)
}

/// Builds the suite from WHAT and the flags; returns it with its label (`--label`, or the
/// suite's default). Notes (what a preset left out on this machine) go to stderr.
pub fn build_suite(a: &RunArgs, all_cpus: u32) -> Result<(Suite, String), Failure> {
    let (mut suite, label, notes) = Suite::from_what(&a.what, all_cpus).map_err(Failure::usage)?;
    for note in notes {
        eprintln!("note: {note}");
    }
    suite.apply(&overrides(a)?).map_err(Failure::usage)?;
    Ok((suite, a.label.clone().unwrap_or(label)))
}

/// What the flags change in the suite, as given.
fn overrides(a: &RunArgs) -> Result<Overrides, Failure> {
    Ok(Overrides {
        options: flag_options(a)?,
        runtime: a.runtime.clone(),
        warmup: a.warmup.clone(),
        reps: a.reps.clone(),
        max_reps: a.max_reps,
        target_ci_pct: a.target_ci_pct,
        cpus: a.cpus.clone(),
        mem_limit: a.mem_limit.clone(),
        dir: a.dir.clone(),
        no_drop_caches: a.no_drop_caches,
        variants: a.variants.clone(),
        order: a.order.clone(),
        seed: a.seed,
    })
}

fn print_plan(plan: &Plan, warm_up: bool) {
    println!("plan: {} cells, estimated {}", plan.cells.len(), human(plan.eta()));
    for line in run_settings(&plan.suite, warm_up) {
        println!("{line}");
    }
    if plan.suite.variants.len() > 1 || plan.variants.iter().any(|v| !v.is_plain()) {
        let seed = plan.suite.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
        let order = serde_json::to_value(plan.suite.order).ok();
        let order = order.as_ref().and_then(|o| o.as_str()).unwrap_or("?");
        println!("variants ({order} order{seed}), each with the machine changes it makes:");
        for v in &plan.variants {
            let d = v.describe();
            let what = if d.is_empty() { "the machine as found".to_string() } else { d.join(", ") };
            println!("  {}: {what}", v.name);
        }
    } else {
        println!("variants: none (the machine as found)");
    }
    for c in &plan.cells {
        println!(
            "  {:>4}  {}  (warmup {}, window {})",
            c.index,
            c.spec.label(),
            human(c.warmup),
            human(c.runtime)
        );
    }
}

/// The run's settings a dry run shows before its cells: repetitions, the memory limit, cache
/// drops, where files go and the warm-up cell.
fn run_settings(suite: &Suite, warm_up: bool) -> Vec<String> {
    let reps = match &suite.adaptive {
        Some(a) => format!(
            "repetitions until the {:.0}% interval is within ±{}%, at most {}",
            a.level * 100.0,
            a.target_half_width * 100.0,
            a.max_reps
        ),
        None => format!("{} repetition(s)", suite.reps),
    };
    let mem = match suite.mem_limit_bytes {
        Some(b) => format!(
            "{} MiB for the whole run, in a memory cgroup (root only): the page cache cannot hold \
             more, so larger files are read from the disk",
            b >> 20
        ),
        None => "none".to_string(),
    };
    let caches = if suite.drop_caches {
        "synced and dropped before each cell (root only)"
    } else {
        "kept between cells (--no-drop-caches)"
    };
    let dir = suite.dir.clone().unwrap_or_else(std::env::temp_dir);
    let warm = if warm_up {
        "the first cell once, unmeasured, before the first window"
    } else {
        "none (--no-warm-up)"
    };
    vec![
        "settings:".to_string(),
        format!("  runtime {}, warmup {} per cell; {reps}", human(suite.runtime), human(suite.warmup)),
        format!("  memory limit: {mem}"),
        format!("  page cache: {caches}"),
        format!("  files of disk workloads: under {}", dir.display()),
        format!("  warm-up cell: {warm}"),
    ]
}

pub fn open_store(cli: &Cli) -> Result<Store, Failure> {
    refuse_central(cli)?;
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    // A damaged store is refused here, before anything is measured (exit 1).
    let store = Store::open(&path).map_err(|e| match e {
        racehorse_store::StoreError::NotAStore { .. } => Failure::usage(e),
        e => anyhow::anyhow!("opening the store {}: {e}", path.display()).into(),
    })?;
    let _ = store.mark_abandoned_runs();
    Ok(store)
}

/// A run and `import` write a SQLite store; a central database is loaded with `load`.
fn refuse_central(cli: &Cli) -> Result<(), Failure> {
    match crate::cmd_central::central_url(cli) {
        Some(url) => Err(Failure::usage(format!(
            "{} is a central PostgreSQL database: runs and `import` write a SQLite store (--db FILE); \
             export runs and `racehorse load --db URL FILE…` them into the central database",
            racehorse_central::redacted(&url)
        ))),
        None => Ok(()),
    }
}

/// The store for a command that only reads it (list, show, export, env, compare, report):
/// opened read-only, so read-only media and other users' stores work and nothing is
/// created. A missing store or a path that is not a store is a usage error.
pub fn open_store_read_only(cli: &Cli) -> Result<Store, Failure> {
    refuse_central(cli)?;
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    Store::open_read_only(&path).map_err(|e| match e {
        racehorse_store::StoreError::NotAStore { .. } => Failure::usage(e),
        e => anyhow::anyhow!("opening the store {} to read: {e}", path.display()).into(),
    })
}

pub fn run(cli: &Cli, a: &RunArgs) -> CmdResult {
    // The stop signals first: nothing may change the machine before they are handled.
    let signals = if a.dry_run {
        StopSignals::never()
    } else {
        StopSignals::install().context("installing the INT/TERM/HUP handlers")?
    };
    let root = SysRoot::host();
    let possible = cpuctl::possible_cpus(&root).map(|v| v.len() as u32).unwrap_or(1).max(1);
    let online = cpuctl::online_cpus(&root).map(|v| v.len() as u32).unwrap_or(1).max(1);
    let (suite, label) = build_suite(a, online)?;
    for w in &suite.workloads {
        if let Some(e) = find(&w.engine) {
            ready(e, !a.dry_run).map_err(RunError::from)?;
        }
    }
    let plan = Plan::expand(&suite, possible, online).map_err(Failure::usage)?;
    // Settings that cannot parse are refused even by a dry run.
    if let Some(spec) = &a.profile {
        racehorse_runner::profile::parse_spec(spec).map_err(RunError::from)?;
    }
    if a.dry_run {
        print_plan(&plan, !a.no_warm_up);
        return Ok(0);
    }
    if !(a.noise_threshold > 0.0 && a.noise_threshold <= 100.0) {
        return Err(Failure::usage(format!(
            "--noise-threshold {}: use a percentage in (0, 100]",
            a.noise_threshold
        )));
    }
    // Before anything changes: without a usable perf, --profile is a usage error.
    let profile = match &a.profile {
        Some(spec) => {
            let (settings, notes) = racehorse_runner::profiling::prepare(spec, a.keep_profile.as_deref())
                .map_err(RunError::from)?;
            for note in notes {
                eprintln!("note: {note}");
            }
            Some(settings)
        }
        None if a.keep_profile.is_some() => {
            return Err(Failure::usage("--keep-profile keeps the perf data of --profile: add --profile"))
        }
        None => None,
    };
    let store = open_store(cli)?;
    let req = RunRequest {
        work_root: plan.suite.dir.clone().unwrap_or_else(std::env::temp_dir),
        plan,
        label,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        root,
        state_file: default_state_file(),
        wait_for_lock: a.wait,
        sample_interval: (a.sample_ms > 0).then(|| Duration::from_millis(a.sample_ms)),
        profile,
        noise_threshold: a.noise_threshold / 100.0,
        warm_up: !a.no_warm_up,
        start_at: start_at(a.start_at)?,
        version: env!("CARGO_PKG_VERSION").to_string(),
        inventory_name: fleet_name("--inventory-name", a.inventory_name.as_deref())?.unwrap_or_default(),
        campaign: fleet_name("--campaign", a.campaign.as_deref())?,
        tags: run_tags(&a.tags)?,
    };
    execute_plan(cli, a, &store, &req, &signals)
}

/// `--start-at UNIX_S` as a time: a finite time after 2001 and at most 7 days ahead (a
/// larger value is most likely milliseconds or a typo).
fn start_at(v: Option<f64>) -> Result<Option<std::time::SystemTime>, Failure> {
    let Some(s) = v else { return Ok(None) };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64());
    let now = now.map_err(|e| anyhow::anyhow!("the clock is before 1970: {e}"))?;
    if !(s.is_finite() && s > 1.0e9 && s <= now + 7.0 * 86400.0) {
        return Err(Failure::usage(format!(
            "--start-at {s}: give a Unix time in seconds within the next 7 days, e.g. $(( $(date +%s) + 60 ))"
        )));
    }
    Ok(Some(std::time::UNIX_EPOCH + Duration::from_secs_f64(s)))
}

/// `--tag KEY=VALUE` flags, each checked, no key twice.
fn run_tags(flags: &[String]) -> Result<Vec<(String, String)>, Failure> {
    let tags: Vec<(String, String)> = flags
        .iter()
        .map(|t| racehorse_store::tags::parse_tag(t))
        .collect::<Result<_, _>>()
        .map_err(Failure::usage)?;
    match racehorse_store::tags::tags_problem(&tags) {
        Some(why) => Err(Failure::usage(format!("--tag: {why}"))),
        None => Ok(tags),
    }
}

/// An inventory name or campaign id as given (flag or environment), checked.
fn fleet_name(flag: &str, value: Option<&str>) -> Result<Option<String>, Failure> {
    match value {
        None => Ok(None),
        Some(v) => match racehorse_store::fleet::name_problem(flag, v) {
            Some(why) => {
                Err(Failure::usage(format!("{why}; give a short name such as web-1 or 2026-11-kernel")))
            }
            None => Ok(Some(v.to_string())),
        },
    }
}

fn execute_plan(cli: &Cli, a: &RunArgs, store: &Store, req: &RunRequest, signals: &StopSignals) -> CmdResult {
    let json = a.format == RunFormat::Json;
    let etas = (0..req.plan.cells.len()).map(|i| req.plan.eta_from(i)).collect();
    let quiet = cli.quiet || json || !std::io::stderr().is_terminal();
    let mut progress = ProgressSink::new(quiet, etas).verbose(cli.verbose > 0 && !json);
    let mut json_sink = JsonLinesSink::new(std::io::stdout());
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut progress];
    if json {
        sinks.push(&mut json_sink);
    }
    let report = lifecycle::run(req, store, signals, &mut sinks)?;
    if json {
        return Ok(report.exit_code);
    }
    if report.verified_settings > 0 {
        eprintln!(
            "machine restored: {} settings read back with their values from before the run",
            report.verified_settings
        );
    }
    let (run_id, outcome) = (report.run_id, &report.outcome);
    cmd_show::print_finished_run(store, &run_id.to_string())?;
    eprintln!(
        "run {run_id} ({}): {} — {} ok, {} failed",
        racehorse_report::escape::escape_control(&req.label),
        report.status.as_str(),
        outcome.ok,
        outcome.failed
    );
    if let (Some(s), Some(ad)) = (outcome.adaptive, req.plan.suite.adaptive) {
        eprintln!(
            "reps auto: {} of {} points within ±{:.1}% (95% interval of throughput) after {} extra cells",
            s.converged,
            s.points,
            ad.target_half_width * 100.0,
            s.extra_cells
        );
        if s.converged < s.points {
            eprintln!(
                "  {} points did not settle by --max-reps {} (or failed); their cv % shows how noisy they are",
                s.points - s.converged,
                ad.max_reps
            );
        }
    }
    Ok(report.exit_code)
}

/// Restores what a killed racehorse (a run or a plugd) left, under the machine lock: while
/// another racehorse runs, it says who and restores nothing.
pub fn restore() -> CmdResult {
    let root = SysRoot::host();
    let state = default_state_file();
    let lock = racehorse_machine::lock::lock_file_for(&state);
    let _held = match MachineLock::acquire(&lock, "racehorse restore") {
        Ok(l) => l,
        Err(LockError::Held { holder, .. }) => {
            return Err(Failure {
                code: 75,
                error: anyhow::anyhow!(
                    "a racehorse is running and owns the machine state ({holder}); nothing was restored. \
                     Stop it (Ctrl-C or kill -TERM) and it restores the machine itself"
                ),
            })
        }
        Err(e) => return Err(anyhow::anyhow!("{e}").into()),
    };
    let done = recover_all(&root, &state).context("restoring from the state files")?;
    let live = racehorse_machine::recovery::live_owners(&root, &state);
    if done.is_empty() && live.is_empty() {
        println!("nothing to restore");
    }
    for what in &done {
        println!("restored: {what}");
    }
    if !live.is_empty() {
        return Err(anyhow::anyhow!(
            "not restored, their owners still run and restore on exit: {}; stop them (kill -TERM PID) instead",
            live.join(", ")
        )
        .into());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opt_flag_splits_values() {
        assert_eq!(parse_opt("clients=1,4").unwrap(), ("clients".into(), vec!["1".into(), "4".into()]));
        assert_eq!(parse_opt("clients").unwrap_err().code, 2);
    }

    #[test]
    fn start_at_takes_unix_seconds_within_a_week() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        let at = start_at(Some(now + 10.5)).unwrap().unwrap();
        let got = at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        assert!((got - (now + 10.5)).abs() < 1e-3, "{got}");
        assert_eq!(start_at(None).unwrap(), None);
        for bad in [f64::NAN, 12.0, now * 1000.0, now + 8.0 * 86400.0] {
            assert_eq!(start_at(Some(bad)).unwrap_err().code, 2, "{bad}");
        }
    }
}
