//! `racehorse bisect`: which change did it. Checks the arguments before anything is built
//! or run, records the bisect in the store, then asks the search what to measure until it is
//! done (docs/bisect.md); `--resume ID` rebuilds the search from the stored steps and goes
//! on. Ctrl-C ends the step in progress (its run restores the machine), removes the worktree
//! and leaves the bisect resumable.

use crate::args::Cli;
use crate::args_bisect::BisectArgs;
use crate::bisect_step::{measure, short, usable_values, Plan, Step};
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_bisect::git::{self, Worktree};
use racehorse_bisect::{Action, Search, SearchOptions, Wanted};
use racehorse_report::history::Figure;
use racehorse_store::bisects::{BisectRecord, BisectStep};
use racehorse_store::Store;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The options a bisect keeps with its record (so `--resume` needs none).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Kept {
    figure: String,
    wanted: String,
    params: Vec<(String, String)>,
    max_reps: usize,
    min_change: Option<f64>,
    profile: bool,
}

pub fn bisect(cli: &Cli, a: &BisectArgs) -> CmdResult {
    if a.list {
        return list(cli);
    }
    if let Some(id) = a.resume {
        return resume(cli, id, a.json);
    }
    let (record, kept) = define(a)?;
    check_run_args(&record, a)?;
    let db = store_path(cli)?;
    let store = Store::open(&db).with_context(|| format!("opening the store {}", db.display()))?;
    let id = store.create_bisect(&record).context("recording the bisect")?;
    if !a.json {
        eprintln!(
            "bisect {id}: {} candidates from {} to {} (resume with `racehorse bisect --resume {id}`)",
            candidates(&record)?.len(),
            short(&record.good),
            short(&record.bad)
        );
    }
    let rec = store
        .bisect(id)
        .context("reading the bisect")?
        .ok_or_else(|| anyhow::anyhow!("bisect {id} vanished"))?;
    execute(cli, &store, &rec, &kept, Search::new(candidates(&rec)?.len(), search_options(&kept)), a.json)
}

fn store_path(cli: &Cli) -> Result<PathBuf, Failure> {
    if crate::cmd_central::central_url(cli).is_some() {
        return Err(Failure::usage("bisect stores its runs in a SQLite store (--db FILE)"));
    }
    Ok(cli.db.clone().unwrap_or_else(racehorse_store::default_path))
}

fn candidates(r: &BisectRecord) -> Result<Vec<String>, Failure> {
    serde_json::from_str(&r.candidates_json)
        .map_err(|e| anyhow::anyhow!("the stored bisect's candidates: {e}").into())
}

/// The bisect's record from the flags, every check that needs no run done: the repository,
/// the revisions and their order, the build command, the values, the figure.
fn define(a: &BisectArgs) -> Result<(BisectRecord, Kept), Failure> {
    if a.run_args.is_empty() {
        return Err(Failure::usage(
            "give the run after `--`, e.g. `racehorse bisect … -- fileserver --clients 4`",
        ));
    }
    if !(2..=1000).contains(&a.max_reps) {
        return Err(Failure::usage(format!("--max-reps {}: give 2..1000", a.max_reps)));
    }
    if let Some(m) = a.min_change {
        if !(m > 0.0 && m < 100.0) {
            return Err(Failure::usage(format!("--min-change {m}: give a percentage in (0, 100)")));
        }
    }
    let (figure, wanted) = match (&a.worse, &a.figure) {
        (Some(w), _) => (w.clone(), worse_of(w)?),
        (None, Some(f)) => (f.clone(), "any".to_string()),
        (None, None) => ("throughput".to_string(), "any".to_string()),
    };
    Figure::parse(&figure).map_err(Failure::usage)?;
    let params = a
        .params
        .iter()
        .map(|p| p.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Failure::usage("-p: expected NAME=VALUE"))?;
    let kept =
        Kept { figure, wanted, params, max_reps: a.max_reps, min_change: a.min_change, profile: a.profile };
    let (repo, list, good, bad) = match (&a.repo, a.values.is_empty()) {
        (Some(repo), true) => commits(a, repo)?,
        (None, false) => values(a)?,
        _ => {
            return Err(Failure::usage("give --repo DIR with --good, --bad and --build, or --values V1,V2,…"))
        }
    };
    let record = BisectRecord {
        id: 0,
        uuid: String::new(),
        repo,
        good,
        bad,
        candidates_json: json!(list).to_string(),
        build: a.build.clone(),
        run_args_json: json!(a.run_args).to_string(),
        options_json: serde_json::to_string(&kept).context("encoding the options")?,
        status: String::new(),
        result_json: None,
        started_at_unix_s: 0,
        updated_at_unix_s: 0,
    };
    Ok((record, kept))
}

/// `--worse FIGURE`: the direction that is worse for it.
fn worse_of(figure: &str) -> Result<String, Failure> {
    let f = Figure::parse(figure).map_err(Failure::usage)?;
    let engine = if let Figure::Engine(k) = &f { engine_direction(k) } else { None };
    Ok(match f.direction(engine) {
        racehorse_core::Direction::HigherIsBetter => "down",
        racehorse_core::Direction::LowerIsBetter => "up",
    }
    .to_string())
}

/// An engine figure's declared direction, from any engine that declares the key.
fn engine_direction(key: &str) -> Option<racehorse_core::Direction> {
    racehorse_engines::registry()
        .iter()
        .find_map(|e| racehorse_core::figure::figure_of(e.info().figures, key).and_then(|f| f.direction))
}

type Candidates = (Option<String>, Vec<String>, String, String);

fn commits(a: &BisectArgs, repo: &Path) -> Result<Candidates, Failure> {
    let usage = |e: git::GitError| Failure::usage(e);
    let top = git::toplevel(repo).map_err(usage)?;
    let (Some(good), Some(bad)) = (&a.good, &a.bad) else {
        return Err(Failure::usage("--repo needs --good REV and --bad REV"));
    };
    match a.build.as_deref().map(str::trim) {
        None | Some("") => {
            return Err(Failure::usage(
                "--repo needs --build 'CMD' (use --build true when nothing needs building)",
            ))
        }
        Some(_) => {}
    }
    let (g, b) = (git::resolve(&top, good).map_err(usage)?, git::resolve(&top, bad).map_err(usage)?);
    if g == b {
        return Err(Failure::usage(format!("--good {good} and --bad {bad} are the same commit")));
    }
    let list = git::commits_between(&top, &g, &b).map_err(usage)?;
    Ok((Some(top.to_string_lossy().into_owned()), list, g, b))
}

fn values(a: &BisectArgs) -> Result<Candidates, Failure> {
    let mut list: Vec<String> =
        a.values.iter().map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    if a.build.is_some() {
        return Err(Failure::usage(
            "--build goes with --repo; with --values the run's arguments take {value}",
        ));
    }
    if !a.run_args.iter().any(|r| r.contains("{value}")) {
        return Err(Failure::usage(
            "--values needs {value} in the run's arguments, e.g. -- fileserver -o size={value}",
        ));
    }
    let index = |v: &Option<String>, default: usize| -> Result<usize, Failure> {
        match v {
            None => Ok(default),
            Some(x) => list
                .iter()
                .position(|c| c == x)
                .ok_or_else(|| Failure::usage(format!("{x} is not one of --values"))),
        }
    };
    let (g, b) = (index(&a.good, 0)?, index(&a.bad, list.len().saturating_sub(1))?);
    if list.len() < 2 || g >= b {
        return Err(Failure::usage("--values needs at least two values, good before bad"));
    }
    list = list[g..=b].to_vec();
    let (good, bad) = (list[0].clone(), list[list.len() - 1].clone());
    Ok((None, list, good, bad))
}

/// The run's arguments as `racehorse run` takes them, tried with `--dry-run` before anything
/// is built (with `{worktree}` as the repository and `{value}` as the first value).
fn check_run_args(record: &BisectRecord, a: &BisectArgs) -> Result<(), Failure> {
    let here = record.repo.clone().map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let value = record.good.clone();
    let args: Vec<String> =
        a.run_args.iter().map(|r| crate::bisect_step::substitute(r, &here, &value)).collect();
    let split = args.iter().position(|x| x == "--").unwrap_or(args.len());
    let mut full = vec!["run".to_string()];
    full.extend(args[..split].iter().cloned());
    full.push("--dry-run".to_string());
    full.extend(args[split..].iter().cloned());
    let out = std::process::Command::new(std::env::current_exe().context("locating racehorse")?)
        .args(&full)
        .current_dir(&here)
        .env_remove("RACEHORSE_DB")
        .output()
        .context("checking the run's arguments")?;
    if !out.status.success() {
        return Err(Failure::usage(format!(
            "`racehorse run {}` refuses these arguments: {}",
            a.run_args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

fn search_options(k: &Kept) -> SearchOptions {
    let wanted = match k.wanted.as_str() {
        "up" => Wanted::Up,
        "down" => Wanted::Down,
        _ => Wanted::Any,
    };
    SearchOptions {
        max_reps: k.max_reps,
        max_attempts: (k.max_reps / 2).max(4),
        min_change: k.min_change.map(|m| m / 100.0),
        wanted,
        ..SearchOptions::default()
    }
}

fn resume(cli: &Cli, id: i64, json_out: bool) -> CmdResult {
    let db = store_path(cli)?;
    if !db.exists() {
        return Err(Failure::usage(format!("no store at {}: nothing to resume", db.display())));
    }
    let store = Store::open(&db).with_context(|| format!("opening the store {}", db.display()))?;
    let rec = store.bisect(id).context("reading the bisect")?.ok_or_else(|| {
        Failure::usage(format!("no bisect {id} in this store; `racehorse bisect --list` lists them"))
    })?;
    let kept: Kept = serde_json::from_str(&rec.options_json).context("the stored bisect's options")?;
    let plan = plan_of(&rec, &kept, &db)?;
    let mut search = Search::new(plan.candidates.len(), search_options(&kept));
    for step in store.bisect_steps(id).context("reading the bisect's steps")? {
        match (step.skipped, step.run_id) {
            (true, _) => search.skip(step.candidate),
            (false, Some(run)) => search.record(step.candidate, &usable_values(&store, &plan, run)?),
            (false, None) => search.record(step.candidate, &[]),
        }
    }
    store.finish_bisect(id, "running", None).context("marking the bisect running")?;
    execute(cli, &store, &rec, &kept, search, json_out)
}

fn plan_of(rec: &BisectRecord, kept: &Kept, db: &Path) -> Result<Plan, Failure> {
    Ok(Plan {
        id: rec.id,
        db: db.to_path_buf(),
        repo: rec.repo.clone().map(PathBuf::from),
        candidates: candidates(rec)?,
        build: rec.build.clone(),
        run_args: serde_json::from_str(&rec.run_args_json).context("the stored run arguments")?,
        figure: Figure::parse(&kept.figure).map_err(Failure::usage)?,
        params: kept.params.clone(),
    })
}

/// Measures until the search is done, Ctrl-C or a failure; records every step.
fn execute(
    cli: &Cli,
    store: &Store,
    rec: &BisectRecord,
    kept: &Kept,
    mut search: Search,
    json_out: bool,
) -> CmdResult {
    let signals =
        racehorse_machine::StopSignals::install().context("installing the INT/TERM/HUP handlers")?;
    let plan = plan_of(rec, kept, Path::new(store.path()))?;
    // One path per bisect, the same after a resume, so that `{worktree}` in the run's
    // arguments (and so the point's parameters) stays the same across sessions.
    let workdir = std::env::temp_dir().join(format!("racehorse-bisect-{}", rec.uuid));
    let worktree = match &plan.repo {
        Some(repo) => {
            git::sweep(repo, &workdir);
            let _ = std::fs::remove_dir_all(&workdir);
            Some(Worktree::add(repo, &workdir, &plan.candidates[0]).map_err(|e| anyhow::anyhow!("{e}"))?)
        }
        None => None,
    };
    let outcome = loop {
        if signals.requested() {
            store.finish_bisect(rec.id, "interrupted", None).context("recording the stop")?;
            eprintln!("bisect {}: stopped; go on with `racehorse bisect --resume {}`", rec.id, rec.id);
            return Ok(signals.exit_code());
        }
        match search.next() {
            Action::Done(o) => break o,
            Action::Measure(i) => {
                if !json_out {
                    eprintln!(
                        "bisect {}: measuring {} ({} of {})",
                        rec.id,
                        short(&plan.candidates[i]),
                        i + 1,
                        plan.candidates.len()
                    );
                }
                match measure(&plan, worktree.as_ref(), i, cli.quiet || json_out) {
                    Ok(Step::Measured { run_id, values }) => {
                        store
                            .add_bisect_step(
                                rec.id,
                                BisectStep { candidate: i, run_id: Some(run_id), skipped: false },
                            )
                            .context("recording the step")?;
                        search.record(i, &values);
                    }
                    Ok(Step::Skipped) => {
                        store
                            .add_bisect_step(rec.id, BisectStep { candidate: i, run_id: None, skipped: true })
                            .context("recording the step")?;
                        search.skip(i);
                    }
                    Ok(Step::Stopped(code)) => {
                        store.finish_bisect(rec.id, "interrupted", None).context("recording the stop")?;
                        eprintln!(
                            "bisect {}: stopped; go on with `racehorse bisect --resume {}`",
                            rec.id, rec.id
                        );
                        return Ok(code);
                    }
                    Err(f) => {
                        store.finish_bisect(rec.id, "failed", None).context("recording the failure")?;
                        return Err(f);
                    }
                }
            }
        }
    };
    let profile = kept.profile.then_some(worktree.as_ref());
    crate::bisect_answer::answer(store, &plan, &search, &outcome, profile, json_out)
}

fn list(cli: &Cli) -> CmdResult {
    let db = store_path(cli)?;
    if !db.exists() {
        println!("no bisects (no store at {})", db.display());
        return Ok(0);
    }
    let store = Store::open_read_only(&db).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut t = racehorse_report::doc::Table::new(
        &["id", "status", "from", "to", "candidates", "repository", "started"],
        6,
    );
    for b in store.bisects().context("listing bisects")? {
        let n = candidates(&b)?.len();
        t.row(vec![
            b.id.to_string(),
            b.status,
            short(&b.good).to_string(),
            short(&b.bad).to_string(),
            n.to_string(),
            b.repo.unwrap_or_else(|| "(values)".into()),
            racehorse_report::units::date(b.started_at_unix_s),
        ]);
    }
    print!("{}", t.render());
    Ok(0)
}
