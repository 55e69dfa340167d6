//! `racehorse prune`: removes runs from the SQLite store or the central PostgreSQL database.
//! The plan (`racehorse_store::prune::plan`) is the same for both and for `--dry-run`; the
//! removal is one transaction per invocation; without `--yes` it asks on a terminal and is
//! refused elsewhere (docs/cli.md).

use crate::args::Cli;
use crate::args_prune::PruneArgs;
use crate::cmd_central::{central_url, failure};
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_report::doc::Table;
use racehorse_report::escape::escape_control;
use racehorse_report::units::date;
use racehorse_store::prune::{plan, Plan, Selector};
use racehorse_store::prune_store::{remove_kept_cells, store_bytes};
use racehorse_store::Store;
use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

fn now_unix_s() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The conditions of `a` other than the run keys (resolved by each store), checked.
fn selector(a: &PruneArgs) -> Result<Selector, Failure> {
    let tags = a
        .tags
        .iter()
        .map(|t| racehorse_store::tags::parse_tag(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::usage)?;
    let older_than_unix_s = match a.older_than.as_deref().map(str::trim) {
        Some(t) if t.starts_with('-') => {
            return Err(Failure::usage(format!(
                "--older-than {t}: an age cannot be negative; give e.g. --older-than 90d"
            )))
        }
        Some(t) => Some(
            racehorse_report::history::series::parse_when(t, now_unix_s())
                .map_err(|e| Failure::usage(format!("--older-than {e}")))?,
        ),
        None => None,
    };
    let keep_last = match a.keep_last.as_deref().map(str::trim) {
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(Failure::usage(format!(
                    "--keep-last {n}: give a whole number of runs, at least 1 (to remove every run of \
                     a series, select them with --label, --tag or --older-than instead)"
                )))
            }
        },
        None => None,
    };
    let sel = Selector {
        runs: None,
        label: a.label.clone(),
        tags,
        host: a.host.clone(),
        older_than_unix_s,
        keep_last,
    };
    if !sel.selects() && a.runs.is_empty() && !a.vacuum {
        return Err(Failure::usage(
            "prune needs to know which runs: give RUN ids or labels, or --label, --tag, --host, \
             --older-than AGE or --keep-last N (try --older-than 90d --dry-run)",
        ));
    }
    Ok(sel)
}

pub fn prune(cli: &Cli, a: &PruneArgs) -> CmdResult {
    let mut sel = selector(a)?;
    if let Some(url) = central_url(cli) {
        return prune_central(&url, a, sel);
    }
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    if !path.is_file() {
        return Err(Failure::usage(format!("no store at {}: nothing to prune", path.display())));
    }
    let store = match a.dry_run {
        true => crate::cmd_run::open_store_read_only(cli)?,
        false => {
            let s = Store::open(&path).map_err(|e| match e {
                racehorse_store::StoreError::NotAStore { .. } => Failure::usage(e),
                e => anyhow::anyhow!("opening the store {}: {e}", path.display()).into(),
            })?;
            s.mark_abandoned_runs().context("marking runs of processes that are gone")?;
            s
        }
    };
    if !a.runs.is_empty() {
        let keys = a.runs.iter().map(|k| store.resolve_run(k).map(|r| r.uuid)).collect::<Result<_, _>>();
        sel.runs = Some(keys.map_err(Failure::usage)?);
    }
    if sel.selects() {
        prune_store(&store, &path, a, &sel)?;
    }
    match (a.vacuum, a.dry_run) {
        (true, false) => vacuum(&store, &path)?,
        (true, true) => {
            println!("would vacuum {} (now {:.1} MB)", path.display(), store_bytes(&path) as f64 / 1e6)
        }
        _ => {}
    }
    Ok(0)
}

/// Plans, lists and (unless a dry run, or declined) removes the runs `sel` selects.
fn prune_store(store: &Store, path: &Path, a: &PruneArgs, sel: &Selector) -> Result<(), Failure> {
    let cands = store.prune_candidates(sel.keep_last.is_some()).context("reading the runs")?;
    let guards = store.prune_guards().context("reading the ledger and bisects")?;
    let p = plan(&cands, sel, &guards, a.force);
    print_plan(&p, a.dry_run);
    if a.dry_run || p.remove.is_empty() {
        return Ok(());
    }
    if !confirmed(a.yes, &p, &path.display().to_string())? {
        println!("nothing removed");
        return Ok(());
    }
    let uuids: Vec<String> = p.remove.iter().map(|c| c.uuid.clone()).collect();
    let done = store.remove_runs(&uuids).context("removing the runs (nothing was removed)")?;
    let files = remove_kept_cells(path, &uuids.iter().cloned().collect::<BTreeSet<_>>());
    println!("removed {} run(s) ({} cells){}", done.runs, done.cells, files_note(files.len()));
    Ok(())
}

fn files_note(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(" and {n} kept cell file(s) of theirs"),
    }
}

fn vacuum(store: &Store, path: &Path) -> Result<(), Failure> {
    let before = store_bytes(path);
    store.vacuum().context("VACUUM of the store")?;
    let after = store_bytes(path);
    let mb = |b: u64| b as f64 / 1e6;
    println!("vacuumed {}: {:.1} MB -> {:.1} MB", path.display(), mb(before), mb(after));
    Ok(())
}

/// The runs to remove and those kept with why, then the counts.
fn print_plan(p: &Plan, dry_run: bool) {
    if p.remove.is_empty() && p.kept.is_empty() {
        println!("no runs match: nothing to remove");
        return;
    }
    let mut header = vec!["action", "id", "label", "date (UTC)", "host", "uuid", "cells"];
    if !p.kept.is_empty() {
        header.push("why kept");
    }
    let mut t = Table::new(&header, 6);
    let (verb, keep) = if dry_run { ("would remove", "would keep") } else { ("remove", "keep") };
    let row = |what: &str, c: &racehorse_store::prune::Candidate, why: String| {
        vec![
            what.to_string(),
            c.id.to_string(),
            c.label.clone(),
            date(c.started_at_unix_s),
            c.inventory_name.clone(),
            c.uuid.chars().take(8).collect(),
            c.cells.to_string(),
            why,
        ]
        .into_iter()
        .take(header.len())
        .collect::<Vec<_>>()
    };
    for c in &p.remove {
        t.row(row(verb, c, String::new()));
    }
    for (c, why) in &p.kept {
        let why = why.iter().map(|w| w.to_string()).collect::<Vec<_>>().join("; ");
        t.row(row(keep, c, why));
    }
    print!("{}", t.render());
    let cells: u64 = p.remove.iter().map(|c| c.cells).sum();
    let kept = match p.kept.len() {
        0 => String::new(),
        n => format!("; {n} selected run(s) kept"),
    };
    match dry_run {
        true => println!(
            "would remove {} run(s) ({cells} cells){kept}; nothing changed (--dry-run)",
            p.remove.len()
        ),
        false => println!("{} run(s) ({cells} cells) to remove{kept}", p.remove.len()),
    }
}

/// Whether to go on: --yes, or a "y" typed on a terminal; without a terminal, a usage error.
fn confirmed(yes: bool, p: &Plan, store: &str) -> Result<bool, Failure> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Err(Failure::usage(format!(
            "prune would remove {} run(s) from {}: add --yes to remove them (or --dry-run to only list them)",
            p.remove.len(),
            escape_control(store)
        )));
    }
    eprint!("remove these {} run(s) from {}? [y/N] ", p.remove.len(), escape_control(store));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).context("reading the answer")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// `prune --db postgres://…`: the same plan over the central runs (the ledger guards runs;
/// bisects live in SQLite stores only).
fn prune_central(url: &str, a: &PruneArgs, mut sel: Selector) -> CmdResult {
    if a.vacuum {
        return Err(Failure::usage(
            "--vacuum shrinks a SQLite file; PostgreSQL reclaims the space of removed runs itself \
             (autovacuum; VACUUM FULL returns it to the system: docs/central-store.md)",
        ));
    }
    if !a.runs.is_empty() {
        let mut reader = racehorse_central::read::Reader::open(url).map_err(failure)?;
        let keys = a.runs.iter().map(|k| reader.resolve(k).map(|r| r.uuid)).collect::<Result<_, _>>();
        sel.runs = Some(keys.map_err(failure)?);
    }
    let mut pruner = racehorse_central::prune::Pruner::open(url).map_err(failure)?;
    let cands = pruner.candidates(sel.keep_last.is_some()).map_err(failure)?;
    let guards = pruner.guards().map_err(failure)?;
    let p = plan(&cands, &sel, &guards, a.force);
    print_plan(&p, a.dry_run);
    if a.dry_run || p.remove.is_empty() {
        return Ok(0);
    }
    if !confirmed(a.yes, &p, &racehorse_central::redacted(url))? {
        println!("nothing removed");
        return Ok(0);
    }
    let uuids: Vec<String> = p.remove.iter().map(|c| c.uuid.clone()).collect();
    let done = pruner.remove(&uuids).map_err(failure)?;
    println!("removed {} run(s) ({} cells)", done.runs, done.cells);
    Ok(0)
}
