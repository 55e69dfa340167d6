//! `racehorse run` and `racehorse restore`: build the suite from a preset, a workload name or
//! a file plus flags, check it, then run it with the machine guarded and every cell stored.

use crate::args::{Cli, RunArgs, RunFormat};
use crate::{cmd_show, CmdResult, Failure};
use anyhow::Context;
use racehorse_core::Value;
use racehorse_engines::{find, ready, registry};
use racehorse_machine::guard::default_state_file;
use racehorse_machine::lock::{LockError, MachineLock};
use racehorse_machine::recovery::recover_all;
use racehorse_machine::{cpuctl, StopSignals, SysRoot};
use racehorse_runner::adaptive::{Adaptive, MIN_REPS};
use racehorse_runner::duration::{human, parse_duration};
use racehorse_runner::lifecycle::{self, RunRequest};
use racehorse_runner::presets::{left_out, preset, preset_text, PRESETS};
use racehorse_runner::suite::{engine_names, WorkloadEntry};
use racehorse_runner::{JsonLinesSink, Order, Plan, ProgressSink, Sink, Suite};
use racehorse_store::Store;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

/// The words as one /bin/sh command line: each quoted unless it is plainly safe, so the shell
/// sees exactly these arguments (braces stay, for `{clients}`-style substitution).
fn shell_join(words: &[String]) -> String {
    let safe =
        |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c));
    let quoted: Vec<String> = words
        .iter()
        .map(|w| if safe(w) { w.clone() } else { format!("'{}'", w.replace('\'', "'\\''")) })
        .collect();
    quoted.join(" ")
}

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
        out.push((option.to_string(), vec![shell_join(&a.program)]));
    }
    Ok(out)
}

/// Applies command-line option values to every workload of the suite that has the option.
fn apply_options(suite: &mut Suite, opts: &[(String, Vec<String>)]) -> Result<(), Failure> {
    for (name, raw) in opts {
        if name == racehorse_runner::guest::WHERE {
            let vals: Result<Vec<Value>, String> =
                raw.iter().map(|r| racehorse_runner::guest::check_where(Value::Str(r.clone()))).collect();
            let vals = vals.map_err(Failure::usage)?;
            suite.workloads.iter_mut().for_each(|w| {
                w.axes.insert(name.clone(), vals.clone());
            });
            continue;
        }
        let mut used = false;
        for w in &mut suite.workloads {
            let Some(spec) = find(&w.engine).and_then(|e| e.options().iter().find(|o| o.name == name)) else {
                continue;
            };
            let vals: Result<Vec<Value>, String> = raw.iter().map(|r| spec.parse_text(r)).collect();
            w.axes.insert(name.clone(), vals.map_err(Failure::usage)?);
            used = true;
        }
        if !used {
            let names: Vec<&str> = suite.workloads.iter().map(|w| w.engine.as_str()).collect();
            if name == "rate" || name == "qos" {
                return Err(Failure::usage(format!(
                    "no workload in this run can run paced (options rate and qos; workloads: {}); the engines \
                     that can: {}",
                    names.join(", "),
                    racehorse_engines::paced_engines().join(", ")
                )));
            }
            return Err(Failure::usage(format!(
                "no workload in this run has an option '{name}' (workloads: {}); see `racehorse workloads show NAME`",
                names.join(", ")
            )));
        }
    }
    Ok(())
}

fn duration_flag(name: &str, v: &Option<String>) -> Result<Option<Duration>, Failure> {
    v.as_deref()
        .map(|t| {
            parse_duration(t).ok_or_else(|| {
                Failure::usage(format!("--{name} '{t}': expected e.g. 20s, 500ms, 2m (at most 7 days)"))
            })
        })
        .transpose()
}

/// Builds the suite from WHAT and the flags; returns it with its default label.
pub fn build_suite(a: &RunArgs, all_cpus: u32) -> Result<(Suite, String), Failure> {
    let path = Path::new(&a.what);
    let (mut suite, label) = if a.what.ends_with(".toml") || path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("cannot read suite file {}: {e}", path.display())))?;
        let s = Suite::parse(&a.what, &text).map_err(Failure::usage)?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("suite").to_string();
        (s, stem)
    } else if let Some(p) = preset(&a.what, all_cpus) {
        for note in left_out(&a.what, all_cpus) {
            eprintln!("note: preset {}: {note}", a.what);
        }
        (p.map_err(Failure::usage)?, a.what.clone())
    } else if find(&a.what).is_some() {
        let w = WorkloadEntry::new(&a.what, BTreeMap::new()).map_err(Failure::usage)?;
        (Suite { name: a.what.clone(), workloads: vec![w], ..Suite::default() }, a.what.clone())
    } else {
        let presets: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        return Err(Failure::usage(format!(
            "'{}' is not a suite file, a preset ({}) or a workload ({})",
            a.what,
            presets.join(", "),
            engine_names()
        )));
    };
    apply_options(&mut suite, &flag_options(a)?)?;
    let is_file = a.what.ends_with(".toml") || path.is_file();
    if !is_file && preset_text(&a.what, all_cpus).is_some() {
        // Options can make a preset's workloads identical (`racehorse run net -o mode=rr -o
        // request=1 -o response=1` picks one of its profiles): run each once.
        let mut distinct: Vec<WorkloadEntry> = Vec::new();
        for w in std::mem::take(&mut suite.workloads) {
            if !distinct.contains(&w) {
                distinct.push(w);
            }
        }
        suite.workloads = distinct;
    }
    if let Some(r) = duration_flag("runtime", &a.runtime)? {
        suite.runtime = r;
        suite.workloads.iter_mut().for_each(|w| w.runtime = None);
    }
    if let Some(w) = duration_flag("warmup", &a.warmup)? {
        suite.warmup = w;
        suite.workloads.iter_mut().for_each(|x| x.warmup = None);
    }
    apply_reps(&mut suite, a)?;
    if !a.cpus.is_empty() {
        if a.cpus.contains(&0) {
            return Err(Failure::usage("--cpus: a CPU count must be at least 1"));
        }
        suite.cpus = a.cpus.clone();
        suite.workloads.iter_mut().for_each(|x| x.cpus = None);
    }
    if let Some(m) = &a.mem_limit {
        suite.mem_limit_bytes = Some(
            racehorse_runner::suite::mem_limit_value(m)
                .map_err(|e| Failure::usage(format!("--mem-limit: {e}")))?,
        );
    }
    if suite.runtime.is_zero() {
        return Err(Failure::usage("runtime must be longer than 0 s"));
    }
    if let Some(d) = &a.dir {
        suite.dir = Some(d.clone());
    }
    if a.no_drop_caches {
        suite.drop_caches = false;
    }
    apply_variant_flags(&mut suite, a)?;
    Ok((suite, a.label.clone().unwrap_or(label)))
}

/// `--variant`, `--order` and `--seed`.
fn apply_variant_flags(suite: &mut Suite, a: &RunArgs) -> Result<(), Failure> {
    if !a.variants.is_empty() {
        let defined: Vec<String> = suite.variants.iter().map(|v| v.name.clone()).collect();
        if let Some(bad) = a.variants.iter().find(|n| !defined.contains(n)) {
            let list = if defined.is_empty() { "none".to_string() } else { defined.join(", ") };
            return Err(Failure::usage(format!(
                "--variant {bad}: the suite has no such variant (variants: {list})"
            )));
        }
        suite.variants.retain(|v| a.variants.contains(&v.name));
        for w in &mut suite.workloads {
            if let Some(names) = &mut w.variants {
                names.retain(|n| a.variants.contains(n));
            }
        }
    }
    if let Some(o) = &a.order {
        suite.order = Order::parse(o).map_err(|e| Failure::usage(format!("--order: {e}")))?;
    }
    if a.seed.is_some() {
        if suite.order != Order::Random {
            return Err(Failure::usage("--seed needs --order random (or order = \"random\" in the suite)"));
        }
        suite.seed = a.seed;
    }
    Ok(())
}

fn print_plan(plan: &Plan) {
    println!("plan: {} cells, estimated {}", plan.cells.len(), human(plan.eta()));
    if plan.suite.variants.len() > 1 || plan.variants.iter().any(|v| !v.is_plain()) {
        let seed = plan.suite.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
        let order = serde_json::to_value(plan.suite.order).ok();
        let order = order.as_ref().and_then(|o| o.as_str()).unwrap_or("?");
        println!("variants ({order} order{seed}):");
        for v in &plan.variants {
            let d = v.describe();
            let what = if d.is_empty() { "the machine as found".to_string() } else { d.join(", ") };
            println!("  {}: {what}", v.name);
        }
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
            ready(e, !a.dry_run).map_err(Failure::usage)?;
        }
    }
    let plan = Plan::expand(&suite, possible, online).map_err(Failure::usage)?;
    if a.dry_run {
        print_plan(&plan);
        return Ok(0);
    }
    if !(a.noise_threshold > 0.0 && a.noise_threshold <= 100.0) {
        return Err(Failure::usage(format!(
            "--noise-threshold {}: use a percentage in (0, 100]",
            a.noise_threshold
        )));
    }
    // Before anything changes: without a usable perf, --profile is a usage error.
    let profile = if a.profile {
        let perf =
            racehorse_runner::profile::find_perf().map_err(|e| Failure::usage(format!("--profile: {e}")))?;
        Some(racehorse_runner::profiling::ProfileSettings::with_perf(perf))
    } else {
        None
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

/// `--reps N` or `--reps auto`, then --max-reps and --target-ci-pct, which need adaptive
/// repetitions (from `--reps auto` or the suite's `reps = "auto"`).
fn apply_reps(suite: &mut Suite, a: &RunArgs) -> Result<(), Failure> {
    match a.reps.as_deref() {
        None => {}
        Some("auto") => {
            suite.workloads.iter_mut().for_each(|x| x.reps = None);
            suite.reps = MIN_REPS;
            suite.adaptive = Some(Adaptive::default());
        }
        Some(text) => match text.parse::<u32>() {
            Ok(r) if (1..=1000).contains(&r) => {
                suite.workloads.iter_mut().for_each(|x| x.reps = None);
                suite.reps = r;
                suite.adaptive = None;
            }
            _ => return Err(Failure::usage(format!("--reps {text}: use 1..1000 or auto"))),
        },
    }
    if a.max_reps.is_none() && a.target_ci_pct.is_none() {
        return Ok(());
    }
    let Some(ad) = suite.adaptive.as_mut() else {
        return Err(Failure::usage("--max-reps and --target-ci-pct need --reps auto"));
    };
    if let Some(m) = a.max_reps {
        if !(MIN_REPS..=1000).contains(&m) {
            return Err(Failure::usage(format!("--max-reps {m}: use {MIN_REPS}..1000")));
        }
        ad.max_reps = m;
    }
    if let Some(t) = a.target_ci_pct {
        if !(t > 0.0 && t < 100.0) {
            return Err(Failure::usage(format!("--target-ci-pct {t}: use a percentage in (0, 100)")));
        }
        ad.target_half_width = t / 100.0;
    }
    Ok(())
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
