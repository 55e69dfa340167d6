//! `racehorse show RUN`: the one-run model ([`RunReport`]) as terminal text. Per workload and
//! unit, a table of every measured point in the order it ran (variant, parameters, medians
//! over repetitions, the workload's and racehorse's own CPU; with `--reps` a line per
//! repetition), the legend of its marks, load ramps, the engines' own figures and profiles;
//! then the failed cells.

use crate::doc::Table;
use crate::flat::params_text;
use crate::model::{outlier_note, Metric, SideInfo};
use crate::profile::profile_text;
use crate::quality::{exclusivity_line, noisy_legend, noisy_lines, noisy_note, BELOW_RES, NOISY_MARK};
use crate::runreport::{Ramp, RunReport, RunRow, RunTable};
use crate::units::{date, num, unit_view, UnitView};
use racehorse_core::WorkUnit;
use std::collections::BTreeSet;

/// Images and symbols listed per profiled point.
const PROFILE_TOP: usize = 10;

/// Most rows of a workload whose extras are shown side by side.
const EXTRA_COLUMNS: usize = 10;

/// Failed cells listed after the tables.
const FAILURES_LISTED: usize = 10;

/// What the marks of a table mean; printed when any of them is used.
const MARKS_LEGEND: &str = "n? = noisy: other processes used the CPU during a repetition (listed below); \
     below res = below the measurement's resolution, no figure; outlier #n = a repetition whose \
     throughput lies far from the others' median (kept in every figure).";

/// The measured points of one workload and unit over every variant, in the order they ran.
struct Section<'a> {
    workload: &'a str,
    unit: WorkUnit,
    rows: Vec<(&'a RunTable, &'a RunRow)>,
}

/// The whole run as `racehorse show` prints it; `reps` adds a line per repetition.
pub fn show_text(r: &RunReport, reps: bool) -> String {
    let mut out = header_text(&r.side);
    for v in &r.variant_settings {
        let set: Vec<String> = v.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!("variant {}: {}\n", v.variant, set.join(", ")));
    }
    for s in sections(r) {
        out.push_str(&section_text(r, &s, reps));
    }
    for f in r.failures.iter().take(FAILURES_LISTED) {
        out.push_str(&format!("{} {}: {}\n", f.status.as_str(), f.label, f.error.as_deref().unwrap_or("")));
    }
    out
}

/// The run's header: id, label, status, date and host; the exclusivity check's warnings; and
/// how much CPU other processes used per measured window.
fn header_text(s: &SideInfo) -> String {
    let name = format!("run {} '{}'", s.run_id, s.label);
    let mut out = format!("{name} — {} — {} on {}\n", s.status, date(s.started_at_unix_s), s.host);
    if let Some(line) = exclusivity_line(&name, &s.exclusivity_warnings) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(q) = s.outside_cpu {
        out.push_str(&format!("CPU used by other processes per measured window: {}.\n", q.text()));
    }
    out
}

/// The model's tables regrouped by workload and unit, variants side by side; summed points
/// (which no cell of their own measured) left out.
fn sections(r: &RunReport) -> Vec<Section<'_>> {
    let mut rows: Vec<(&RunTable, &RunRow)> = r
        .tables
        .iter()
        .flat_map(|t| t.rows.iter().filter(|row| !row.summed).map(move |row| (t, row)))
        .collect();
    rows.sort_by_key(|(_, row)| row.first_cell);
    let mut out: Vec<Section> = Vec::new();
    for (t, row) in rows {
        match out.iter_mut().find(|s| s.workload == t.workload && s.unit == t.unit) {
            Some(s) => s.rows.push((t, row)),
            None => out.push(Section { workload: &t.workload, unit: t.unit, rows: vec![(t, row)] }),
        }
    }
    out
}

/// One section: its table, ramps, extras and profiles.
fn section_text(r: &RunReport, s: &Section, reps: bool) -> String {
    let v = unit_view(s.unit);
    let mut out = points_text(s, v, reps);
    for t in r.tables.iter().filter(|t| t.workload == s.workload && t.unit == s.unit) {
        for ramp in &t.ramps {
            out.push_str(&ramp_line(&t.variant, ramp, v));
        }
    }
    out.push_str(&extras_text(&s.rows));
    for (i, (_, row)) in s.rows.iter().enumerate() {
        if let Some(m) = &row.profile {
            out.push_str(&profile_text(&format!("profile of #{}", i + 1), m, PROFILE_TOP));
        }
    }
    out
}

/// The table of one section: a row per point (with `reps`, a line per repetition under it),
/// then the legend of its marks and noisy repetitions.
fn points_text(s: &Section, v: UnitView, reps: bool) -> String {
    let mut out = format!(
        "\n{} (throughput in {}, CPU per unit in {}; medians over repetitions)\n",
        s.workload, v.tput_label, v.cpu_label
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
    let mut table = Table::new(&head, 3);
    let (mut legend, mut marked) = (Vec::new(), false);
    for (i, (t, row)) in s.rows.iter().enumerate() {
        table.row(point_row(i, &t.variant, row, v));
        legend.extend(noisy_legend(&params_text(&row.params), "rep", &row.noisy_reps));
        marked |= !row.below.is_empty() || !row.noisy_reps.is_empty() || !row.outlier_reps.is_empty();
        if reps {
            rep_rows(row, v).into_iter().for_each(|r| table.row(r));
        }
    }
    out.push_str(&table.render());
    if marked {
        out.push_str(MARKS_LEGEND);
        out.push('\n');
    }
    for line in noisy_lines(legend) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// One point: medians over the ok repetitions in display units, `below res` for a figure
/// below its resolution, `n?` and a note for noisy and outlier repetitions.
fn point_row(i: usize, variant: &str, row: &RunRow, v: UnitView) -> Vec<String> {
    let figure = |m: Metric, scale: f64| -> String {
        if row.below.contains(&m) {
            return BELOW_RES.into();
        }
        row.metric(m).map_or("-".into(), |s| num(s.median * scale))
    };
    let tput = row.metric(Metric::Throughput);
    let note = [noisy_note("", &row.noisy_reps), outlier_note(&row.outlier_reps)]
        .into_iter()
        .filter(|n| !n.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let n = if row.noisy_reps.is_empty() { row.n.to_string() } else { format!("{}{NOISY_MARK}", row.n) };
    vec![
        (i + 1).to_string(),
        variant.to_string(),
        params_text(&row.params),
        n,
        figure(Metric::Throughput, v.tput_scale),
        tput.and_then(|s| s.cv()).map_or("-".into(), |c| format!("{:.1}", c * 100.0)),
        figure(Metric::CpuTotalPerUnit, v.cpu_scale),
        figure(Metric::CpuKernelPerUnit, v.cpu_scale),
        figure(Metric::CpuUserPerUnit, v.cpu_scale),
        row.workload_cpu_s.map_or("-".into(), |s| num(s.median)),
        row.harness_cpu_pct.map_or("-".into(), |s| format!("{:.2}", s.median)),
        row.not_ok.to_string(),
        note,
    ]
}

/// One line per repetition under its point: status (or error), its marks, and throughput.
fn rep_rows(row: &RunRow, v: UnitView) -> Vec<Vec<String>> {
    row.reps
        .iter()
        .map(|r| {
            let mut mark = r.error.clone().unwrap_or_else(|| r.status.as_str().to_string());
            if r.noisy {
                mark.push_str(" noisy");
            }
            if r.outlier {
                mark.push_str(" outlier");
            }
            let tput = r.units_per_s.map_or(BELOW_RES.into(), |t| num(t * v.tput_scale));
            vec![String::new(), String::new(), format!("  #{} {mark}", r.rep), String::new(), tput]
        })
        .collect()
}

/// Per ramp: the peak throughput and its load, and the highest load run.
fn ramp_line(variant: &str, ramp: &Ramp, v: UnitView) -> String {
    let Some(peak) = ramp.peak() else { return String::new() };
    let at_peak = peak.units_per_s * v.tput_scale;
    format!(
        "ramp [{variant}] {}: peak {} {unit} at {} users ({} {unit} per user); {} loads up to {} users\n",
        ramp.label,
        num(at_peak),
        peak.users,
        num(at_peak / peak.users.max(1) as f64),
        ramp.points.len(),
        ramp.reached_users(),
        unit = v.tput_label,
    )
}

/// The engines' own figures (extras such as moves per touch), medians over the repetitions
/// that succeeded: one row per figure, one column per row of the table above (`#1` …).
fn extras_text(rows: &[(&RunTable, &RunRow)]) -> String {
    let names: BTreeSet<&str> =
        rows.iter().flat_map(|(_, r)| r.extras.iter().map(|(k, _)| k.as_str())).collect();
    if names.is_empty() {
        return String::new();
    }
    let shown = &rows[..rows.len().min(EXTRA_COLUMNS)];
    let heads: Vec<String> = std::iter::once("extra (median)".to_string())
        .chain((1..=shown.len()).map(|i| format!("#{i}")))
        .collect();
    let head: Vec<&str> = heads.iter().map(String::as_str).collect();
    let mut table = Table::new(&head, 1);
    for name in names {
        let mut line = vec![name.to_string()];
        line.extend(shown.iter().map(|(_, r)| r.extra(name).map_or("-".into(), num)));
        table.row(line);
    }
    let mut out = String::new();
    if rows.len() > shown.len() {
        out.push_str(&format!("(figures of the first {} rows)\n", shown.len()));
    }
    out.push_str(&table.render());
    out
}
