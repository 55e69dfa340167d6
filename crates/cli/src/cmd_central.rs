//! The central PostgreSQL database from the command line: `racehorse load`, `list --db
//! postgres://…` (with `--campaign`, also the hosts of the campaign's manifest that have no
//! run), and the in-memory SQLite store that `show`, `export`, `env`, `compare` and `report`
//! read central runs from: each named run is copied into it through the import path, so
//! every renderer works unchanged.

use crate::args::{Cli, ListArgs, LoadArgs};
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_central::bulk;
use racehorse_central::load::RunOutcome;
use racehorse_central::read::Reader;
use racehorse_central::schema::CENTRAL_VERSION;
use racehorse_central::{
    is_central, parse_manifest, CentralError, Input, LoadStats, Loader, Manifest, Outcome,
};
use racehorse_report::doc::Table;
use racehorse_report::escape::escape_control;
use racehorse_report::units::date;
use racehorse_store::Store;
use std::path::Path;
use std::time::Instant;

/// The central database's URL when `--db` names one.
pub fn central_url(cli: &Cli) -> Option<String> {
    cli.db.as_ref().and_then(|p| p.to_str()).filter(|s| is_central(s)).map(str::to_string)
}

/// A central error with its exit code: 2 for what the user must fix, else 1.
pub fn failure(e: CentralError) -> Failure {
    if e.is_usage() {
        Failure::usage(e)
    } else {
        Failure::from(anyhow::Error::new(e))
    }
}

fn read_manifest(path: &Path) -> Result<Manifest, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("--campaign-manifest {}: {e}", path.display())))?;
    parse_manifest(&text).map_err(|e| Failure::usage(format!("--campaign-manifest {}: {e}", path.display())))
}

fn manifest_line(m: &Manifest) -> String {
    let count = |o: Outcome| m.hosts.iter().filter(|h| h.outcome == o).count();
    format!(
        "campaign {}: {} host(s) recorded ({} ok, {} unreachable, {} failed)",
        escape_control(&m.campaign),
        m.hosts.len(),
        count(Outcome::Ok),
        count(Outcome::Unreachable),
        count(Outcome::Failed)
    )
}

/// How much of the rows made while checking `load` keeps for writing; files beyond it are
/// read a second time while the first ones are written.
const KEEP_BYTES: usize = 1 << 30;

/// `racehorse load --db postgres://… [--campaign-manifest FILE] [--jobs N] PATH…`.
pub fn load(cli: &Cli, a: &LoadArgs) -> CmdResult {
    let Some(url) = central_url(cli) else {
        return Err(Failure::usage(
            "`load` writes into a central PostgreSQL database: give --db postgres://USER@HOST:PORT/DB",
        ));
    };
    let manifest = a.campaign_manifest.as_deref().map(read_manifest).transpose()?;
    // Every file is checked, whole, before anything is written (docs/central-store.md).
    let inputs =
        a.paths.iter().map(|p| Input::classify(p)).collect::<Result<Vec<_>, _>>().map_err(failure)?;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let pending = bulk::check_all(&inputs, cpus, KEEP_BYTES).map_err(failure)?;
    let start = Instant::now();
    let mut loader = Loader::open(&url).map_err(failure)?;
    if loader.found_version < CENTRAL_VERSION {
        eprintln!("central schema migrated from version {} to {CENTRAL_VERSION}", loader.found_version);
    }
    if let Some(m) = &manifest {
        loader.load_manifest(m).map_err(failure)?;
        println!("{}", manifest_line(m));
    }
    drop(loader);
    let jobs = a.jobs.map_or(cpus.min(4), |j| j as usize);
    let mut stats = LoadStats::default();
    bulk::write_all(&url, pending, jobs, &mut |r| {
        stats.add(r);
        if !cli.quiet {
            let what = match r.outcome {
                RunOutcome::New => "new",
                RunOutcome::Updated => "updated",
                RunOutcome::Unchanged => "unchanged",
            };
            let name = escape_control(&format!("{} '{}'", r.inventory_name, r.label));
            println!("  {name} {}: {what}, {} of {} cells added", &r.uuid[..8], r.cells_added, r.cells_read);
        }
    })
    .map_err(failure)?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "loaded {} path(s): runs {} new, {} updated, {} unchanged; cells {} added of {} read in {secs:.2} s ({:.0} cells/s)",
        inputs.len(),
        stats.runs_new,
        stats.runs_updated,
        stats.runs_unchanged,
        stats.cells_added,
        stats.cells_read,
        stats.cells_read as f64 / secs.max(1e-9)
    );
    Ok(0)
}

/// `racehorse list --db postgres://… [--campaign ID] [--json]`.
pub fn list(url: &str, a: &ListArgs) -> CmdResult {
    let mut reader = Reader::open(url).map_err(failure)?;
    let filter = crate::cmd_history::run_filter(&a.filter)?;
    let runs = match filter == racehorse_store::RunFilter::default() {
        true => reader.runs(a.campaign.as_deref()),
        false => reader.runs_where(&filter, a.campaign.as_deref()),
    }
    .map_err(failure)?;
    let missing = match &a.campaign {
        Some(c) => {
            if runs.is_empty() && !reader.campaign_known(c).map_err(failure)? {
                return Err(Failure::usage(format!(
                    "no campaign '{}' in the central database (no run and no manifest of it); \
                     `racehorse list --db URL` shows every run with its campaign",
                    escape_control(c)
                )));
            }
            reader.missing_hosts(c).map_err(failure)?
        }
        None => Vec::new(),
    };
    if a.json {
        let doc = serde_json::json!({
            "format": "racehorse-central-runs", "version": 1, "runs": runs, "hosts_without_runs": missing,
        });
        return crate::json_out::print(&doc);
    }
    let mut t = Table::new(
        &["host", "uuid", "id", "label", "date (UTC)", "status", "campaign", "cells ok", "failed"],
        7,
    );
    for r in &runs {
        let status = match r.host_outcome.as_deref() {
            Some(o) if o != "ok" => format!("{} (host {o})", r.status),
            _ => r.status.clone(),
        };
        t.row(vec![
            r.inventory_name.clone(),
            r.uuid[..8].to_string(),
            r.source_id.to_string(),
            r.label.clone(),
            date(r.started_at_unix_s),
            status,
            r.campaign.clone().unwrap_or_default(),
            r.cells_ok.to_string(),
            r.cells_failed.to_string(),
        ]);
    }
    for h in &missing {
        let campaign = a.campaign.clone().unwrap_or_default();
        let status = format!("no run ({})", h.outcome);
        t.row(vec![
            h.name.clone(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            status,
            campaign,
            "0".into(),
            "0".into(),
        ]);
    }
    if runs.is_empty() && missing.is_empty() {
        println!("no runs in the central database yet; load exports with `racehorse load --db URL FILE…`");
        return Ok(0);
    }
    print!("{}", t.render());
    for h in missing.iter().filter(|h| !h.detail.is_empty()) {
        println!("{}: {}: {}", escape_control(&h.name), h.outcome, escape_control(&h.detail));
    }
    Ok(0)
}

/// Copies the run `key` names (`[HOST:]RUN[@VARIANT]`) into `store`; returns the key that
/// names it there (its id, with the variant).
fn copy_key(reader: &mut Reader, store: &Store, key: &str) -> Result<String, Failure> {
    let (run, variant) = match reader.resolve(key) {
        Ok(run) => (run, None),
        Err(first) => match key.rsplit_once('@') {
            Some((run_key, v)) if !v.is_empty() && first.is_usage() => {
                (reader.resolve(run_key).map_err(failure)?, Some(v))
            }
            _ => return Err(failure(first)),
        },
    };
    let id = reader.copy_into(&run, store).map_err(failure)?;
    Ok(match variant {
        Some(v) => format!("{id}@{v}"),
        None => id.to_string(),
    })
}

/// An in-memory store holding the central run `key` names, and its key there.
pub fn one_run(url: &str, key: &str) -> Result<(Store, String), Failure> {
    let (store, keys) = runs(url, &[key.to_string()])?;
    Ok((store, keys.into_iter().next().unwrap_or_default()))
}

/// An in-memory store holding the central runs `keys` name, and their keys there. A key
/// whose part before a colon is an existing file stays `FILE:RUN` (a SQLite store file).
pub fn runs(url: &str, keys: &[String]) -> Result<(Store, Vec<String>), Failure> {
    let mut reader = Reader::open(url).map_err(failure)?;
    let store = Store::open_in_memory().context("creating the in-memory store")?;
    let mut mapped = Vec::new();
    for key in keys {
        let names_file = key.match_indices(':').any(|(i, _)| Path::new(&key[..i]).is_file());
        mapped.push(if names_file { key.clone() } else { copy_key(&mut reader, &store, key)? });
    }
    Ok((store, mapped))
}
