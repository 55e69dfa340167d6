//! `list`, `show`, `export` and `env`: reading the store.

use crate::args::{Cli, EnvArgs, ExportArgs, ExportFormat, ShowArgs};
use crate::cmd_run::open_store_read_only;
use crate::table::Table;
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_core::{CellResult, CellStatus, WorkUnit};
use racehorse_machine::{env, SysRoot};
use racehorse_report::model::{outlier_note, shown, Metric};
use racehorse_report::quality;
use racehorse_report::units::{date, num, unit_view, UnitView};
use racehorse_stats::Summary;
use racehorse_store::{export_csv, export_json, RunInfo, Store};
use std::collections::BTreeMap;

pub fn list(cli: &Cli) -> CmdResult {
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    if !path.exists() {
        println!("no runs yet (no store at {}); try `racehorse run quick`", path.display());
        return Ok(0);
    }
    let store = open_store_read_only(cli)?;
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
    racehorse_report::flat::params_text(&c.spec.params)
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
        if let Some(m) = median_of(&ok, |c| c.throughput_resolved().map(|t| t * 60.0)) {
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

/// A point of the table: workload, variant and parameters as text.
type Key = (String, String, String);

/// The cells of a run by point, and the points in the order they ran.
fn group_points(cells: &[CellResult]) -> (BTreeMap<Key, Vec<&CellResult>>, Vec<Key>) {
    let mut groups: BTreeMap<Key, Vec<&CellResult>> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    for c in cells {
        let key = (c.spec.workload.clone(), c.spec.variant.clone(), params_text(c));
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(c);
    }
    (groups, order)
}

/// The run's header: id, label, status, date and host; the exclusivity check's warnings; and
/// how much CPU other processes used per measured window.
fn header_text(run: &RunInfo, cells: &[CellResult]) -> String {
    let mut out = format!(
        "run {} '{}' — {} — {} on {}\n",
        run.id,
        run.label,
        run.status.as_str(),
        date(run.started_at_unix_s),
        run.host
    );
    let name = format!("run {} '{}'", run.id, run.label);
    if let Some(line) =
        quality::exclusivity_line(&name, &quality::exclusivity_warnings(&run.exclusivity_json))
    {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(q) = quality::Quietness::of(cells) {
        out.push_str(&format!("CPU used by other processes per measured window: {}.\n", q.text()));
    }
    out
}

/// What the marks of the table mean; printed when any of them is used.
const MARKS_LEGEND: &str = "n? = noisy: other processes used the CPU during a repetition (listed below); \
     below res = below the measurement's resolution, no figure; outlier #n = a repetition whose \
     throughput lies far from the others' median (kept in every figure).";

/// One point of the table: its cells (medians over the ok repetitions, `below res` where a
/// repetition's figure is below resolution, marks for noisy and outlier repetitions), the
/// legend lines of its noisy repetitions, and whether it used a mark.
fn point_row(row: usize, key: &Key, all: &[&CellResult], v: UnitView) -> (Vec<String>, Vec<String>, bool) {
    let ok: Vec<&CellResult> = all.iter().copied().filter(|c| c.status == CellStatus::Ok).collect();
    let below_tput = quality::below(&ok, Metric::Throughput);
    let below_cpu = quality::below(&ok, Metric::CpuTotalPerUnit);
    let tput =
        if below_tput { None } else { median_of(&ok, |c| c.throughput_resolved().map(|t| t * v.tput_scale)) };
    let cpu = |f: fn(&CellResult) -> Option<f64>| {
        if below_cpu {
            return quality::BELOW_RES.to_string();
        }
        median_of(&ok, |c| f(c).map(|x| x * v.cpu_scale)).map(|s| num(s.median)).unwrap_or("-".into())
    };
    let harness = median_of(&ok, |c| {
        let wl = c.workload_cpu.total_s();
        (wl > 0.0).then(|| 100.0 * c.harness_cpu_s / c.window.as_secs_f64().max(1e-9))
    });
    let noisy = quality::noisy_reps(&ok);
    let outliers = outlier_reps(&ok, below_tput);
    let note = [quality::noisy_note("", &noisy), outlier_note(&outliers)]
        .into_iter()
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let n =
        if noisy.is_empty() { ok.len().to_string() } else { format!("{}{}", ok.len(), quality::NOISY_MARK) };
    let cells = vec![
        (row + 1).to_string(),
        key.1.clone(),
        key.2.clone(),
        n,
        if below_tput {
            quality::BELOW_RES.into()
        } else {
            tput.map(|s| num(s.median)).unwrap_or("-".into())
        },
        tput.and_then(|s| s.cv()).map(|c| format!("{:.1}", c * 100.0)).unwrap_or("-".into()),
        cpu(CellResult::cpu_total_per_unit),
        cpu(CellResult::cpu_kernel_per_unit),
        cpu(CellResult::cpu_user_per_unit),
        median_of(&ok, |c| Some(c.workload_cpu.total_s())).map(|s| num(s.median)).unwrap_or("-".into()),
        harness.map(|s| format!("{:.2}", s.median)).unwrap_or("-".into()),
        (all.len() - ok.len()).to_string(),
        note,
    ];
    let marked = below_tput || below_cpu || !noisy.is_empty() || !outliers.is_empty();
    (cells, quality::noisy_legend(&key.2, "rep", &noisy), marked)
}

/// Repetitions whose throughput is an outlier among the ok ones (none below resolution).
fn outlier_reps(ok: &[&CellResult], below: bool) -> Vec<u32> {
    if below {
        return Vec::new();
    }
    let tput: Vec<f64> = ok.iter().map(|c| c.throughput_resolved().unwrap_or(f64::NAN)).collect();
    racehorse_stats::outliers(&tput).into_iter().map(|i| ok[i].spec.rep).collect()
}

/// One line per repetition under its point (`--reps`): status, throughput, and its marks.
fn rep_rows(all: &[&CellResult], v: UnitView) -> Vec<Vec<String>> {
    let ok: Vec<&CellResult> = all.iter().copied().filter(|c| c.status == CellStatus::Ok).collect();
    let outliers = outlier_reps(&ok, quality::below(&ok, Metric::Throughput));
    all.iter()
        .map(|c| {
            let mut mark = c.error.as_deref().unwrap_or(c.status.as_str()).to_string();
            if c.quality.noisy.is_some() {
                mark.push_str(" noisy");
            }
            if outliers.contains(&c.spec.rep) && c.status == CellStatus::Ok {
                mark.push_str(" outlier");
            }
            let tput = c.throughput_resolved().map_or(quality::BELOW_RES.into(), |t| num(t * v.tput_scale));
            vec![String::new(), String::new(), format!("  #{} {mark}", c.spec.rep), String::new(), tput]
        })
        .collect()
}

/// The table of one workload and unit: a row per point (with `--reps`, a line per
/// repetition under it), then the legend of its marks and noisy repetitions.
fn table_text(
    w: &str,
    unit: WorkUnit,
    rows: &[&Key],
    groups: &BTreeMap<Key, Vec<&CellResult>>,
    reps: bool,
) -> String {
    let v = unit_view(unit);
    let mut out = format!(
        "\n{w} (throughput in {}, CPU per unit in {}; medians over repetitions)\n",
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
        "note",
    ];
    let mut t = Table::new(&head, 3);
    let (mut legend, mut marked) = (Vec::new(), false);
    for (row, key) in rows.iter().enumerate() {
        let (cells, lines, mark) = point_row(row, key, &groups[*key], v);
        t.row(cells);
        legend.extend(lines);
        marked |= mark;
        if reps {
            rep_rows(&groups[*key], v).into_iter().for_each(|r| t.row(r));
        }
    }
    out.push_str(&t.render());
    if marked {
        out.push_str(MARKS_LEGEND);
        out.push('\n');
    }
    for line in quality::noisy_lines(legend) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

pub fn print_run(store: &Store, key: &str, reps: bool) -> Result<(), Failure> {
    let run = store.resolve_run(key).map_err(Failure::usage)?;
    let cells = store.run_cells(run.id).context("reading cells")?;
    print!("{}", header_text(&run, &cells));
    print_variant_settings(&cells);
    let (groups, order) = group_points(&cells);
    // One table per workload and unit (micro counts bytes for bandwidths, ops for latencies).
    let unit_of = |k: &Key| groups[k].first().map(|c| c.unit).unwrap_or(WorkUnit::Ops);
    let mut tables: Vec<(String, WorkUnit)> = Vec::new();
    for k in &order {
        let t = (k.0.clone(), unit_of(k));
        if !tables.contains(&t) {
            tables.push(t);
        }
    }
    for (w, unit) in tables {
        let rows: Vec<&Key> = order.iter().filter(|k| k.0 == w && unit_of(k) == unit).collect();
        print!("{}", table_text(&w, unit, &rows, &groups, reps));
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
    let store = open_store_read_only(cli)?;
    print_run(&store, &a.run, a.reps)?;
    Ok(0)
}

pub fn export(cli: &Cli, a: &ExportArgs) -> CmdResult {
    let store = open_store_read_only(cli)?;
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
            let store = open_store_read_only(cli)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_report::synth::{synthetic_side, Shape};

    /// One workload, clients 1, 2 and 4 on one CPU, three repetitions: clients=1 ran beside a
    /// busy process, clients=2 had a cold first repetition, clients=4 a figure below resolution.
    fn run_with_caveats() -> (RunInfo, Vec<CellResult>) {
        let shape = Shape { workloads: 1, clients: vec![1, 2, 4], cpus: vec![1], ..Shape::default() };
        let mut side = synthetic_side(7, "busy", &shape);
        side.run.exclusivity_json =
            r#"{"load1":1.1,"warnings":["process 99 (yes) uses 97% of a CPU"]}"#.into();
        for c in &mut side.cells {
            c.quality.outside_cpu_s = Some(0.05);
            match (c.spec.params.get("clients").and_then(|v| v.as_u64()), c.spec.rep) {
                (Some(1), _) => {
                    c.quality.noisy = Some("other processes used 9.7 s of CPU".into());
                    c.quality.outside_cpu_s = Some(9.7);
                }
                (Some(2), rep) => {
                    c.units = if rep == 1 { 119e9 } else { 198e9 + f64::from(rep) * 1e9 } * 10.0
                }
                (Some(4), 1) => {
                    c.units = 1e13;
                    c.quality.mark_below(racehorse_core::quality::THROUGHPUT, "window too short");
                }
                _ => {}
            }
        }
        (side.run, side.cells)
    }

    fn shown_text(reps: bool) -> String {
        let (run, cells) = run_with_caveats();
        let (groups, order) = group_points(&cells);
        let rows: Vec<&Key> = order.iter().collect();
        header_text(&run, &cells) + &table_text("w0", WorkUnit::Bytes, &rows, &groups, reps)
    }

    fn fields<'a>(text: &'a str, params: &str) -> Vec<&'a str> {
        let line = text.lines().find(|l| l.contains(params) && !l.starts_with('?')).unwrap_or("");
        line.split("  ").map(str::trim).filter(|f| !f.is_empty()).collect()
    }

    #[test]
    fn show_marks_noisy_points_outliers_and_figures_below_resolution() {
        let text = shown_text(false);
        assert!(text.contains("the exclusivity check warned: process 99 (yes) uses 97% of a CPU"), "{text}");
        assert!(text.contains("median 0.5%, max 97.0% of one CPU over 9 windows"), "{text}");
        let noisy = fields(&text, "clients=1 cpus=1");
        assert_eq!(noisy[3], "3?", "{text}");
        assert_eq!(noisy.last(), Some(&"noisy #1 #2 #3"), "{text}");
        assert!(text.contains("? noisy clients=1 cpus=1: rep #1: other processes used 9.7 s"), "{text}");
        assert_eq!(fields(&text, "clients=2 cpus=1").last(), Some(&"outlier #1 (kept)"), "{text}");
        let below = fields(&text, "clients=4 cpus=1");
        assert_eq!(below[4..6], ["below res", "-"], "no spread of a figure below resolution: {text}");
        assert!(!text.contains("1000000") && !text.contains("1.00e"), "no absurd figure: {text}");
        assert!(text.contains("n? = noisy"), "the marks are explained: {text}");
    }

    #[test]
    fn show_reps_marks_each_repetition() {
        let text = shown_text(true);
        assert!(text.contains("#1 ok noisy"), "{text}");
        assert!(text.contains("#1 ok outlier"), "{text}");
        let rep = text.lines().find(|l| l.contains("#1 ok") && l.contains("below res"));
        assert!(rep.is_some(), "the below-resolution repetition: {text}");
    }
}
