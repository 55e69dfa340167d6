//! `list`, `show`, `export` and `env`: reading the store.

use crate::args::{Cli, EnvArgs, ExportArgs, ExportFormat, ListArgs, ShowArgs};
use crate::catalogue::catalogue;
use crate::cmd_central::{central_url, one_run};
use crate::cmd_run::open_store_read_only;
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_machine::{env, SysRoot};
use racehorse_report::doc::Table;
use racehorse_report::escape;
use racehorse_report::units::date;
use racehorse_report::{run_report, show_json, show_text_with, CompareOptions, RunReport, ShowOptions, Side};
use racehorse_store::{export_csv, Store};

pub fn list(cli: &Cli, a: &ListArgs) -> CmdResult {
    if let Some(url) = central_url(cli) {
        return crate::cmd_central::list(&url, a);
    }
    if a.campaign.is_some() {
        return Err(Failure::usage(
            "--campaign lists a campaign of a central database: give --db postgres://USER@HOST:PORT/DB",
        ));
    }
    let json = a.json;
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    if !path.exists() && json {
        return crate::json_out::print(&crate::json_out::runs(&[]));
    }
    if !path.exists() {
        println!("no runs yet (no store at {}); try `racehorse run quick`", path.display());
        return Ok(0);
    }
    let store = open_store_read_only(cli)?;
    let filter = crate::cmd_history::run_filter(&a.filter)?;
    let runs = store.list_runs_where(&filter).context("listing runs")?;
    let tags = store.all_run_tags().context("reading tags")?;
    if json {
        return crate::json_out::print(&crate::json_out::runs_with_tags(&runs, &tags));
    }
    if runs.is_empty() {
        match filter == racehorse_store::RunFilter::default() {
            true => println!("no runs yet; try `racehorse run quick`"),
            false => println!("no runs match"),
        }
        return Ok(0);
    }
    let mut t = Table::new(&["id", "label", "date (UTC)", "status", "host", "cells ok", "failed", "tags"], 5);
    for r in runs {
        let user_tags = tags.get(&r.id).map(|t| user_tags_text(t)).unwrap_or_default();
        t.row(vec![
            r.id.to_string(),
            r.label,
            date(r.started_at_unix_s),
            r.status.as_str().to_string(),
            r.host,
            r.cells_ok.to_string(),
            r.cells_failed.to_string(),
            user_tags,
        ]);
    }
    print!("{}", t.render());
    Ok(0)
}

/// The tags a user gave (not the automatic kernel and racehorse ones), as `k=v k=v`.
fn user_tags_text(tags: &[(String, String)]) -> String {
    tags.iter()
        .filter(|(k, _)| k != "kernel" && k != "racehorse")
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The report's model of run `key`'s cells, read once for what is printed of it.
fn run_model(store: &Store, key: &str) -> Result<RunReport, Failure> {
    let run = store.resolve_run(key).map_err(Failure::usage)?;
    let cells = store.run_cells(run.id).context("reading cells")?;
    let side = Side::whole(run, cells);
    Ok(run_report(&side, CompareOptions::default().noisy_cv, &catalogue()))
}

/// Prints one run as `racehorse show` does: the report's model of the run as terminal text,
/// or with `json` as the `racehorse-show` JSON document (nothing else on stdout).
pub fn print_run(store: &Store, key: &str, opts: ShowOptions, json: bool) -> Result<(), Failure> {
    let report = run_model(store, key)?;
    let tags = store.run_tags(report.side.run_id).context("reading the run's tags")?;
    if json {
        let mut doc: serde_json::Value =
            serde_json::from_str(&show_json(&report)).context("the show document")?;
        let object: serde_json::Map<String, serde_json::Value> =
            tags.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
        doc["run"]["tags"] = serde_json::Value::Object(object);
        println!("{doc:#}");
    } else {
        print!("{}", with_tags_line(&show_text_with(&report, opts), &tags));
    }
    Ok(())
}

/// `show`'s text with a `tags: k=v …` line after its heading (all tags, the automatic ones
/// last), when the run has any.
fn with_tags_line(text: &str, tags: &[(String, String)]) -> String {
    if tags.is_empty() {
        return text.to_string();
    }
    let (auto, user): (Vec<_>, Vec<_>) = tags.iter().partition(|(k, _)| k == "kernel" || k == "racehorse");
    let line = user.iter().chain(&auto).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    let line = racehorse_report::escape::escape_control(&format!("tags: {line}"));
    match text.split_once('\n') {
        Some((head, rest)) => format!("{head}\n{line}\n{rest}"),
        None => format!("{text}\n{line}\n"),
    }
}

/// What ends `racehorse run`: the run as `show` prints it, then, for a run across several
/// areas (the `quick` tour), the per-area table.
pub fn print_finished_run(store: &Store, key: &str) -> Result<(), Failure> {
    let report = run_model(store, key)?;
    print!("{}", show_text_with(&report, ShowOptions::default()));
    if let Some(text) = racehorse_report::areas_text(&report) {
        print!("{text}");
    }
    Ok(())
}

/// The store to read and the key of the run in it: the `--db` store and `key`, or for a
/// central database an in-memory store holding the run `key` names there.
fn store_and_key(cli: &Cli, key: &str) -> Result<(Store, String), Failure> {
    match central_url(cli) {
        Some(url) => one_run(&url, key),
        None => Ok((open_store_read_only(cli)?, key.to_string())),
    }
}

pub fn show(cli: &Cli, a: &ShowArgs) -> CmdResult {
    let (store, key) = store_and_key(cli, &a.run)?;
    print_run(&store, &key, ShowOptions { reps: a.reps, latency: a.latency }, a.json)?;
    Ok(0)
}

pub fn export(cli: &Cli, a: &ExportArgs) -> CmdResult {
    let (store, key) = store_and_key(cli, &a.run)?;
    let run = store.resolve_run(&key).map_err(Failure::usage)?;
    let cells = store.run_cells(run.id).context("reading cells")?;
    let text = match a.format {
        ExportFormat::Json => {
            let parts =
                racehorse_store::history_parts(&store, &run).context("reading tags and the ledger")?;
            format!("{:#}\n", racehorse_store::export_doc_with(&run, &parts, &cells))
        }
        ExportFormat::Csv => export_csv(&run, &cells),
    };
    match &a.output {
        Some(p) => racehorse_store::files::write_atomic(p, text.as_bytes())
            .with_context(|| format!("writing {} (a file already there is kept as it was)", p.display()))?,
        None => print!("{text}"),
    }
    Ok(0)
}

pub fn env(cli: &Cli, a: &EnvArgs) -> CmdResult {
    let environment = match &a.run {
        Some(key) => {
            let (store, key) = store_and_key(cli, key)?;
            let run = store.resolve_run(&key).map_err(Failure::usage)?;
            serde_json::from_str::<env::Environment>(&run.env_json)
                .context("the run's environment is not readable")?
        }
        None => env::capture(&SysRoot::host(), &[std::env::temp_dir()]),
    };
    if a.json {
        crate::json_out::print(&crate::json_out::env(&environment)?)?;
    } else {
        print!("{}", env_text(&environment.flatten()));
    }
    Ok(0)
}

/// The environment's keys grouped by their first part (`cpu`, `kernel`, `sysctl`, `target` …,
/// in the order each first appears), a blank line between groups, each group's values aligned
/// on its own longest key so that one long key does not widen every line; a setting the
/// machine (or an older run) does not have reads "not available".
fn env_text(pairs: &[(String, String)]) -> String {
    let group = |k: &str| k.split(['.', '[']).next().unwrap_or(k).to_string();
    let mut groups: Vec<(String, Vec<&(String, String)>)> = Vec::new();
    for p in pairs {
        let g = group(&p.0);
        match groups.iter_mut().find(|(name, _)| *name == g) {
            Some((_, members)) => members.push(p),
            None => groups.push((g, vec![p])),
        }
    }
    let blocks: Vec<String> = groups
        .iter()
        .map(|(_, members)| {
            let width = members.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
            members
                .iter()
                .map(|(k, v)| {
                    let v = if v == "-" { racehorse_core::envtuning::NOT_AVAILABLE } else { v.as_str() };
                    let pad = " ".repeat(width - k.chars().count());
                    let line = format!("{}{pad}  {}", escape::cell_text(k), escape::cell_text(v));
                    line.trim_end().to_string() + "\n"
                })
                .collect()
        })
        .collect();
    blocks.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_text_groups_keys_and_says_not_available() {
        let p = |k: &str, v: &str| (k.to_string(), v.to_string());
        let pairs = [
            p("kernel.release", "6.1"),
            p("cpu.model", "x"),
            p("kernel.config.hz", "250"),
            p("cpu.governor", "-"),
        ];
        let text = env_text(&pairs);
        assert_eq!(
            text,
            "kernel.release    6.1\nkernel.config.hz  250\n\ncpu.model     x\ncpu.governor  not available\n"
        );
    }
}
