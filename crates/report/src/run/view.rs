//! `racehorse show RUN`: the one-run model ([`RunReport`]) as terminal text. Per workload and
//! unit, a table of every measured point in the order it ran (variant, parameters, medians
//! over repetitions, the workload's and racehorse's own CPU; with `--reps` a line per
//! repetition), the legend of its marks, load ramps, the engines' own figures and profiles;
//! then the failed cells.

use crate::model::{params_label, qos_note, shown, split_params, Metric, SideInfo};
use crate::profile::profile_text;
use crate::quality::{exclusivity_line, noisy_legend, noisy_lines, BELOW_RES, NOISY_MARK};
use crate::render::doc::Table;
use crate::render::escape::{escape_control, escape_lines};
use crate::render::units::{date, num, unit_view, UnitView};
use crate::run::latency::{latency_table, point_latencies, OpLatency};
use crate::run::report::{Ramp, RunReport, RunRow, RunTable};
use racehorse_core::{CellResult, WorkUnit};
use std::collections::BTreeSet;

/// Images and symbols listed per profiled point.
const PROFILE_TOP: usize = 10;

/// Most rows of a workload whose extras are shown side by side.
const EXTRA_COLUMNS: usize = 10;

/// Failed cells listed after the tables.
const FAILURES_LISTED: usize = 10;

/// What the marks of a table mean; printed when any of them is used.
const MARKS_LEGEND: &str = "n? = noisy: other processes used the CPU during a repetition (listed below);\n\
     below res = below the measurement's resolution, no figure;\n\
     outlier #n = a repetition whose throughput lies far from the others' median (kept in every figure);\n\
     QoS failed #n = a paced repetition that missed its latency limit or rate floor (kept; see pace #).";

/// The measured points of one workload and unit over every variant, in the order they ran.
struct Section<'a> {
    workload: &'a str,
    unit: WorkUnit,
    rows: Vec<(&'a RunTable, &'a RunRow)>,
}

impl Section<'_> {
    /// Parameter names that vary between the rows, and the `k=v` of those that do not
    /// (with the variant when every row has the same one other than `default`).
    fn split(&self) -> (Vec<String>, Vec<String>) {
        let (columns, constant) = split_params(self.rows.iter().map(|(_, r)| &r.params));
        let mut fixed: Vec<String> = constant.iter().map(|(k, v)| format!("{k}={}", shown(k, v))).collect();
        if !self.many_variants() {
            let v = self.rows.first().map_or("default", |(t, _)| t.variant.as_str());
            if v != "default" {
                fixed.insert(0, format!("variant={v}"));
            }
        }
        (columns, fixed)
    }

    fn many_variants(&self) -> bool {
        self.rows.iter().any(|(t, _)| t.variant != self.rows[0].0.variant)
    }
}

/// What `racehorse show` adds to the tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShowOptions {
    /// A line per repetition under each point.
    pub reps: bool,
    /// A table of latency percentiles per point and operation under each workload's table.
    pub latency: bool,
}

/// Widest line of a table `show` aims for on a terminal; the fixed parameters wrap at it.
pub const SHOW_WIDTH: usize = 100;

/// The whole run as `racehorse show` prints it; `reps` adds a line per repetition.
pub fn show_text(r: &RunReport, reps: bool) -> String {
    show_text_with(r, &[], ShowOptions { reps, latency: false })
}

/// The whole run with the run's `cells` at hand for the latencies (none: no latency lines).
/// Every label, parameter, variant name and error text has its control characters escaped.
pub fn show_text_with(r: &RunReport, cells: &[CellResult], opts: ShowOptions) -> String {
    let mut out = header_text(&r.side);
    for v in &r.variant_settings {
        let set: Vec<String> = v.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&escape_control(&format!("variant {}: {}", v.variant, set.join(", "))));
        out.push('\n');
    }
    for s in sections(r) {
        // Ramps, extras and profiles hold parameter values and perf's symbol names too.
        out.push_str(&escape_lines(&section_text(r, &s, cells, opts)));
    }
    for f in r.failures.iter().take(FAILURES_LISTED) {
        let line = format!("{} {}: {}", f.status.as_str(), f.label, f.error.as_deref().unwrap_or(""));
        out.push_str(&escape_control(&line));
        out.push('\n');
    }
    out
}

/// The run's header: id, label, status, date and host; the exclusivity check's warnings; and
/// how much CPU other processes used per measured window.
fn header_text(s: &SideInfo) -> String {
    let name = format!("run {} '{}'", s.run_id, s.label);
    let mut out = format!("{name} — {} — {} on {}", s.status, date(s.started_at_unix_s), s.host);
    out = escape_control(&out) + "\n";
    if let Some(line) = exclusivity_line(&name, &s.exclusivity_warnings) {
        out.push_str(&escape_control(&line));
        out.push('\n');
    }
    if let Some(q) = s.outside_cpu {
        out.push_str(&format!("CPU used by other processes per measured window: {}.\n", q.text()));
    }
    out
}

/// `fixed: k=v k=v …` wrapped at [`SHOW_WIDTH`], continuation lines indented; "" when
/// nothing is fixed.
pub fn fixed_lines(fixed: &[String]) -> String {
    if fixed.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut line = "fixed:".to_string();
    for item in fixed {
        let item = escape_control(item);
        if line.chars().count() + 1 + item.chars().count() > SHOW_WIDTH && line.trim() != "fixed:" {
            out.push_str(&line);
            out.push('\n');
            line = "      ".to_string();
        }
        line.push(' ');
        line.push_str(&item);
    }
    out + &line + "\n"
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

/// One section: its table, latencies, ramps, extras and profiles.
fn section_text(r: &RunReport, s: &Section, cells: &[CellResult], opts: ShowOptions) -> String {
    let v = unit_view(s.unit);
    let mut out = points_text(s, v, opts.reps);
    let lats: Vec<(usize, Vec<OpLatency>)> = s
        .rows
        .iter()
        .enumerate()
        .map(|(i, (t, row))| (i + 1, point_latencies(cells, &t.workload, &t.variant, &row.params)))
        .collect();
    let ops: BTreeSet<&str> = lats.iter().flat_map(|(_, l)| l.iter().map(|o| o.op.as_str())).collect();
    if opts.latency {
        out.push_str(&latency_table(&lats));
    } else if !ops.is_empty() {
        out.push_str(&format!(
            "latency percentiles of {} operation(s) are stored: show --latency lists p50/p90/p99\n",
            ops.len()
        ));
    }
    for t in r.tables.iter().filter(|t| t.workload == s.workload && t.unit == s.unit) {
        for ramp in &t.ramps {
            out.push_str(&ramp_line(&t.variant, ramp, v));
        }
    }
    out.push_str(&pace_lines(&s.rows));
    out.push_str(&extras_text(&s.rows));
    for (i, (_, row)) in s.rows.iter().enumerate() {
        if let Some(m) = &row.profile {
            out.push_str(&profile_text(&format!("profile of #{}", i + 1), m, PROFILE_TOP));
        }
    }
    out
}

/// The table of one section: the fixed parameters once, a row per point with the varying
/// ones (with `reps`, a line per repetition under it), then the legend of its marks and
/// noisy repetitions.
fn points_text(s: &Section, v: UnitView, reps: bool) -> String {
    let mut out = format!(
        "\n{} (throughput in {}, CPU per unit in {}; medians over repetitions)\n",
        s.workload, v.tput_label, v.cpu_label
    );
    let (columns, fixed) = s.split();
    out.push_str(&fixed_lines(&fixed));
    let tput_h = format!("tput {}", v.tput_label);
    let failed = s.rows.iter().any(|(_, r)| r.not_ok > 0);
    let (variants, params) = (s.many_variants(), !columns.is_empty());
    let mut head = vec!["#"];
    head.extend(variants.then_some("variant"));
    head.extend(params.then_some("parameters"));
    head.extend(["n", tput_h.as_str(), "cv %", "total", "kernel", "user", "wl cpu s", "harness %"]);
    head.extend(failed.then_some("failed"));
    let noted = s.rows.iter().any(|(_, r)| !r.outlier_reps.is_empty() || !r.qos_failed_reps.is_empty());
    head.extend(noted.then_some("note"));
    let mut table = Table::new(&head, 1 + usize::from(variants) + usize::from(params));
    let (mut legend, mut marked) = (Vec::new(), false);
    for (i, (t, row)) in s.rows.iter().enumerate() {
        let label = params_label(&row.params, &columns);
        let mut line = point_row(i, row, v, failed);
        if !noted {
            line.pop();
        }
        if params {
            line.insert(1, label.clone());
        }
        if variants {
            line.insert(1, t.variant.clone());
        }
        table.row(line);
        legend.extend(noisy_legend(&label, "rep", &row.noisy_reps));
        marked |= !row.below.is_empty()
            || !row.noisy_reps.is_empty()
            || !row.outlier_reps.is_empty()
            || !row.qos_failed_reps.is_empty();
        if reps {
            let pad = usize::from(variants) + usize::from(params);
            rep_rows(row, v, pad).into_iter().for_each(|r| table.row(r));
        }
    }
    out.push_str(&table.render());
    if marked {
        out.push_str(MARKS_LEGEND);
        out.push('\n');
    }
    for line in noisy_lines(legend) {
        out.push_str(&escape_control(&line));
        out.push('\n');
    }
    out
}

/// One point without its variant and parameters: medians over the ok repetitions in display
/// units, `below res` for a figure below its resolution, `n?` for noisy repetitions (listed
/// under the table) and outliers in the note.
fn point_row(i: usize, row: &RunRow, v: UnitView, failed: bool) -> Vec<String> {
    let figure = |m: Metric, scale: f64| -> String {
        if row.below.contains(&m) {
            return BELOW_RES.into();
        }
        row.metric(m).map_or("-".into(), |s| num(s.median * scale))
    };
    let tput = row.metric(Metric::Throughput);
    let n = if row.noisy_reps.is_empty() { row.n.to_string() } else { format!("{}{NOISY_MARK}", row.n) };
    let mut out = vec![
        (i + 1).to_string(),
        n,
        figure(Metric::Throughput, v.tput_scale),
        tput.and_then(|s| s.cv()).map_or("-".into(), |c| format!("{:.1}", c * 100.0)),
        figure(Metric::CpuTotalPerUnit, v.cpu_scale),
        figure(Metric::CpuKernelPerUnit, v.cpu_scale),
        figure(Metric::CpuUserPerUnit, v.cpu_scale),
        row.workload_cpu_s.map_or("-".into(), |s| num(s.median)),
        row.harness_cpu_pct.map_or("-".into(), |s| format!("{:.2}", s.median)),
    ];
    if failed {
        out.push(row.not_ok.to_string());
    }
    let outliers: Vec<String> = row.outlier_reps.iter().map(|r| format!("#{r}")).collect();
    let outliers =
        if outliers.is_empty() { String::new() } else { format!("outlier {}", outliers.join(" ")) };
    let notes = [outliers, qos_note("", &row.qos_failed_reps)];
    out.push(notes.into_iter().filter(|n| !n.is_empty()).collect::<Vec<_>>().join("; "));
    out
}

/// One line per paced point (`rate`, `qos`; medians over its ok repetitions): whether its
/// quality of service held, the percentile against its limit, the rate achieved of the
/// target.
fn pace_lines(rows: &[(&RunTable, &RunRow)]) -> String {
    let mut out = String::new();
    for (i, (_, r)) in rows.iter().enumerate() {
        let (Some(achieved), target) = (r.extra("pace_achieved_per_s"), r.extra("pace_target_per_s")) else {
            continue;
        };
        let mut parts = Vec::new();
        if r.qos_checked > 0 {
            let failed = &r.qos_failed_reps;
            let verdict = if failed.is_empty() {
                format!("QoS held in {} of {} reps", r.qos_checked, r.qos_checked)
            } else {
                let list: Vec<String> = failed.iter().map(|f| format!("#{f}")).collect();
                format!("QoS FAILED in {} of {} reps ({})", failed.len(), r.qos_checked, list.join(" "))
            };
            parts.push(verdict);
            let p = r.extra("qos_percentile").map_or("p?".into(), |p| format!("p{p}"));
            let measured =
                r.extra("qos_measured_ms").map_or("none in the window".into(), |m| format!("{} ms", num(m)));
            let limit = r.extra("qos_limit_ms").map_or("?".into(), num);
            parts.push(format!("{p} {measured} (limit {limit} ms)"));
        }
        let rate = match (target, r.extra("pace_achieved_pct")) {
            (Some(t), Some(pct)) => {
                let floor = r.extra("qos_min_rate_pct").map_or(String::new(), |f| format!(", floor {f}%"));
                format!("paced {}/s of {}/s ({:.1}%{floor})", num(achieved), num(t), pct)
            }
            _ => format!("flat out at {}/s", num(achieved)),
        };
        parts.push(rate);
        out.push_str(&format!("pace #{}: {}\n", i + 1, parts.join("; ")));
    }
    out
}

/// One line per repetition under its point: status (or error), its marks, and throughput;
/// `pad` label columns come before the one it is written in.
fn rep_rows(row: &RunRow, v: UnitView, pad: usize) -> Vec<Vec<String>> {
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
            // The repetition goes in the last label column (parameters, variant or #).
            let mut line = vec![String::new(); pad];
            line.extend([format!("  #{} {mark}", r.rep), String::new(), tput]);
            line
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
