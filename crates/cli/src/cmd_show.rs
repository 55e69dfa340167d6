//! `list`, `show`, `export`, `env` and `workloads`: reading the store and the registry.

use crate::args::{Cli, EnvArgs, ExportArgs, ExportFormat, ShowArgs, WorkloadsArgs, WorkloadsSub};
use crate::cmd_run::open_store;
use crate::table::Table;
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_core::{CellResult, CellStatus, WorkUnit};
use racehorse_engines::{find, registry};
use racehorse_machine::{env, SysRoot};
use racehorse_report::model::shown;
use racehorse_report::units::{date, num, unit_view};
use racehorse_stats::Summary;
use racehorse_store::{export_csv, export_json, Store};
use std::collections::BTreeMap;

pub fn list(cli: &Cli) -> CmdResult {
    let store = open_store(cli)?;
    let runs = store.list_runs().context("listing runs")?;
    if runs.is_empty() {
        println!("no runs yet; try `racehorse run quick`");
        return Ok(0);
    }
    let mut t = Table::new(&["id", "label", "date (UTC)", "status", "host", "cells ok", "failed"], 5);
    for r in runs {
        t.row(vec![
            r.id.to_string(),
            r.label,
            date(r.started_at_unix_s),
            r.status.as_str().to_string(),
            r.host,
            r.cells_ok.to_string(),
            r.cells_failed.to_string(),
        ]);
    }
    print!("{}", t.render());
    Ok(0)
}

fn params_text(c: &CellResult) -> String {
    c.spec.params.iter().map(|(k, v)| format!("{k}={}", shown(k, v))).collect::<Vec<_>>().join(" ")
}

fn median_of(cells: &[&CellResult], f: impl Fn(&CellResult) -> Option<f64>) -> Option<Summary> {
    let v: Vec<f64> = cells.iter().filter_map(|c| f(c)).collect();
    Summary::of(&v)
}

/// Prints the per-cell table of a run (medians over repetitions).
/// One line per variant that set something on the machine, from its cells' records.
fn print_variant_settings(cells: &[CellResult]) {
    let mut seen: Vec<&str> = Vec::new();
    for c in cells.iter().filter(|c| !c.settings.is_empty()) {
        if seen.contains(&c.spec.variant.as_str()) {
            continue;
        }
        seen.push(&c.spec.variant);
        let set: Vec<String> = c.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("variant {}: {}", c.spec.variant, set.join(", "));
    }
}

/// Images and symbols listed per profiled point.
const PROFILE_TOP: usize = 10;

/// Most rows of a workload whose extras are shown side by side.
const EXTRA_COLUMNS: usize = 10;

/// The engine's own figures (extras such as moves per touch), medians over the repetitions
/// that succeeded: one row per figure, one column per row of the table above (`#1` …).
fn print_extras(
    rows: &[&(String, String, String)],
    groups: &BTreeMap<(String, String, String), Vec<&CellResult>>,
) {
    let ok = |k: &(String, String, String)| -> Vec<&CellResult> {
        groups[k].iter().copied().filter(|c| c.status == CellStatus::Ok).collect()
    };
    let names: std::collections::BTreeSet<&str> = rows
        .iter()
        .flat_map(|k| groups[*k].iter().flat_map(|c| c.extra.keys().map(String::as_str)))
        .collect();
    if names.is_empty() {
        return;
    }
    let shown = &rows[..rows.len().min(EXTRA_COLUMNS)];
    let heads: Vec<String> = std::iter::once("extra (median)".to_string())
        .chain((1..=shown.len()).map(|i| format!("#{i}")))
        .collect();
    let head: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut t = Table::new(&head, 1);
    for name in names {
        let mut line = vec![name.to_string()];
        for k in shown {
            let cells = ok(k);
            let m = median_of(&cells, |c| c.extra.get(name).copied().filter(|v| v.is_finite()));
            line.push(m.map(|s| num(s.median)).unwrap_or("-".into()));
        }
        t.row(line);
    }
    if rows.len() > shown.len() {
        println!("(figures of the first {} rows)", shown.len());
    }
    print!("{}", t.render());
}

/// For load ramps (jobs counted per `users`, as the mix engine does): per ramp (the other
/// parameters and the variant), the peak jobs/min and its load, and the highest load run
/// before the ramp stopped. Medians over repetitions.
fn print_ramps(
    rows: &[&(String, String, String)],
    groups: &BTreeMap<(String, String, String), Vec<&CellResult>>,
) {
    let mut ramps: BTreeMap<(String, String), Vec<(u64, f64)>> = BTreeMap::new();
    for k in rows {
        let ok: Vec<&CellResult> =
            groups[*k].iter().copied().filter(|c| c.status == CellStatus::Ok).collect();
        let Some(first) = ok.first() else { continue };
        let Some(users) = first.spec.params.get("users").and_then(|v| v.as_u64()) else { continue };
        let mut others = first.spec.params.clone();
        others.remove("users");
        let label = others.iter().map(|(k, v)| format!("{k}={}", shown(k, v))).collect::<Vec<_>>().join(" ");
        if let Some(m) = median_of(&ok, |c| Some(c.throughput() * 60.0)) {
            ramps.entry((k.1.clone(), label)).or_default().push((users, m.median));
        }
    }
    for ((variant, label), mut points) in ramps {
        points.sort_by_key(|p| p.0);
        let Some(peak) = points.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) else { continue };
        let reached = points.last().map_or(0, |p| p.0);
        println!(
            "ramp [{variant}] {label}: peak {} jobs/min at {} users ({} jobs/min per user); {} loads up to {reached} users",
            num(peak.1),
            peak.0,
            num(peak.1 / peak.0.max(1) as f64),
            points.len()
        );
    }
}

pub fn print_run(store: &Store, key: &str, reps: bool) -> Result<(), Failure> {
    let run = store.resolve_run(key).map_err(Failure::usage)?;
    let cells = store.run_cells(run.id).context("reading cells")?;
    println!(
        "run {} '{}' — {} — {} on {}",
        run.id,
        run.label,
        run.status.as_str(),
        date(run.started_at_unix_s),
        run.host
    );
    print_variant_settings(&cells);
    let mut groups: BTreeMap<(String, String, String), Vec<&CellResult>> = BTreeMap::new();
    let mut order: Vec<(String, String, String)> = Vec::new();
    for c in &cells {
        let key = (c.spec.workload.clone(), c.spec.variant.clone(), params_text(c));
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(c);
    }
    // One table per workload and unit (micro counts bytes for bandwidths, ops for latencies).
    let unit_of = |k: &(String, String, String)| groups[k].first().map(|c| c.unit).unwrap_or(WorkUnit::Ops);
    let mut tables: Vec<(String, WorkUnit)> = Vec::new();
    for k in &order {
        let t = (k.0.clone(), unit_of(k));
        if !tables.contains(&t) {
            tables.push(t);
        }
    }
    for (w, unit) in tables {
        let v = unit_view(unit);
        println!(
            "\n{w} (throughput in {}, CPU per unit in {}; medians over repetitions)",
            v.tput_label, v.cpu_label
        );
        let tput_h = format!("tput {}", v.tput_label);
        let head = [
            "#",
            "variant",
            "parameters",
            "n",
            tput_h.as_str(),
            "cv %",
            "total",
            "kernel",
            "user",
            "wl cpu s",
            "harness %",
            "failed",
        ];
        let mut t = Table::new(&head, 3);
        let rows: Vec<&(String, String, String)> =
            order.iter().filter(|k| k.0 == w && unit_of(k) == unit).collect();
        for (row, key) in rows.iter().enumerate() {
            let all = &groups[key];
            let ok: Vec<&CellResult> = all.iter().copied().filter(|c| c.status == CellStatus::Ok).collect();
            let failed = all.len() - ok.len();
            let tput = median_of(&ok, |c| Some(c.throughput() * v.tput_scale));
            let cpu = |f: fn(&CellResult) -> Option<f64>| {
                median_of(&ok, |c| f(c).map(|x| x * v.cpu_scale)).map(|s| num(s.median)).unwrap_or("-".into())
            };
            let harness = median_of(&ok, |c| {
                let wl = c.workload_cpu.total_s();
                (wl > 0.0).then(|| 100.0 * c.harness_cpu_s / c.window.as_secs_f64().max(1e-9))
            });
            t.row(vec![
                (row + 1).to_string(),
                key.1.clone(),
                key.2.clone(),
                ok.len().to_string(),
                tput.map(|s| num(s.median)).unwrap_or("-".into()),
                tput.and_then(|s| s.cv()).map(|c| format!("{:.1}", c * 100.0)).unwrap_or("-".into()),
                cpu(CellResult::cpu_total_per_unit),
                cpu(CellResult::cpu_kernel_per_unit),
                cpu(CellResult::cpu_user_per_unit),
                median_of(&ok, |c| Some(c.workload_cpu.total_s()))
                    .map(|s| num(s.median))
                    .unwrap_or("-".into()),
                harness.map(|s| format!("{:.2}", s.median)).unwrap_or("-".into()),
                failed.to_string(),
            ]);
            if reps {
                for c in all.iter() {
                    let mark = c.error.as_deref().unwrap_or(c.status.as_str());
                    t.row(vec![
                        String::new(),
                        String::new(),
                        format!("  #{} {mark}", c.spec.rep),
                        String::new(),
                        num(c.throughput() * v.tput_scale),
                    ]);
                }
            }
        }
        print!("{}", t.render());
        if unit == WorkUnit::Jobs {
            print_ramps(&rows, &groups);
        }
        print_extras(&rows, &groups);
        for (i, k) in rows.iter().enumerate() {
            if let Some(m) = racehorse_report::profile::merge(&groups[*k]) {
                print!(
                    "{}",
                    racehorse_report::profile::profile_text(
                        &format!("profile of #{}", i + 1),
                        &m,
                        PROFILE_TOP
                    )
                );
            }
        }
    }
    let failed: Vec<&CellResult> = cells.iter().filter(|c| c.status != CellStatus::Ok).collect();
    for c in failed.iter().take(10) {
        println!("{} {}: {}", c.status.as_str(), c.spec.label(), c.error.as_deref().unwrap_or(""));
    }
    Ok(())
}

pub fn show(cli: &Cli, a: &ShowArgs) -> CmdResult {
    let store = open_store(cli)?;
    print_run(&store, &a.run, a.reps)?;
    Ok(0)
}

pub fn export(cli: &Cli, a: &ExportArgs) -> CmdResult {
    let store = open_store(cli)?;
    let run = store.resolve_run(&a.run).map_err(Failure::usage)?;
    let cells = store.run_cells(run.id).context("reading cells")?;
    let text = match a.format {
        ExportFormat::Json => export_json(&run, &cells),
        ExportFormat::Csv => export_csv(&run, &cells),
    };
    match &a.output {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?,
        None => print!("{text}"),
    }
    Ok(0)
}

pub fn env(cli: &Cli, a: &EnvArgs) -> CmdResult {
    let environment = match &a.run {
        Some(key) => {
            let store = open_store(cli)?;
            let run = store.resolve_run(key).map_err(Failure::usage)?;
            serde_json::from_str::<env::Environment>(&run.env_json)
                .context("the run's environment is not readable")?
        }
        None => env::capture(&SysRoot::host(), &[std::env::temp_dir()]),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&environment).context("encoding JSON")?);
    } else {
        let mut t = Table::new(&["key", "value"], 2);
        for (k, v) in environment.flatten() {
            t.row(vec![k, v]);
        }
        print!("{}", t.render());
    }
    Ok(0)
}

pub fn workloads(a: &WorkloadsArgs) -> CmdResult {
    match &a.sub {
        None => {
            let mut t = Table::new(&["name", "unit", "description"], 3);
            for e in registry() {
                t.row(vec![e.name().into(), e.unit().to_string(), e.about().into()]);
            }
            print!("{}", t.render());
            println!("\n`racehorse workloads show NAME` lists an engine's options.");
        }
        Some(WorkloadsSub::Show { name }) => {
            let e = find(name).ok_or_else(|| {
                let names: Vec<&str> = registry().iter().map(|e| e.name()).collect();
                Failure::usage(format!("unknown workload '{name}'; valid workloads: {}", names.join(", ")))
            })?;
            println!("{} — {}\nunit of work: {}\n", e.name(), e.about(), e.unit());
            let mut t = Table::new(&["option", "kind", "default", "help"], 4);
            for o in e.options() {
                t.row(vec![o.name.into(), o.kind.describe(), o.default.into(), o.help.into()]);
            }
            print!("{}", t.render());
            println!(
                "\nruntime, warmup, reps and cpus apply to every workload (see `racehorse run --help`)."
            );
        }
    }
    Ok(0)
}
