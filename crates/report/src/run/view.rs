//! The one document of a run ([`RunReport`]), which `racehorse show RUN` prints and
//! `racehorse report RUN` renders as text, markdown or HTML. Per workload and unit, a table of
//! every measured point in the order it ran (variant, parameters, medians over repetitions,
//! the workload's and racehorse's own CPU; with `--reps` a line per repetition), the legend of
//! its marks, latencies, load ramps, pacing, the engines' own figures and profiles; then the
//! failed cells. The report's document is `show`'s with a title, the summed `overall` points
//! of phased workloads, charts (HTML) and the environment added.

use crate::model::{params_label, qos_note, shown, split_params, Metric, SideInfo};
use crate::profile::profile_text;
use crate::quality::{exclusivity_line, noisy_legend, noisy_lines, BELOW_RES, NOISY_MARK};
use crate::render::doc::{Block, Cell, Grid, Tone};
use crate::render::escape::escape_control;
use crate::render::units::{date, num, unit_view, UnitView};
use crate::run::areas::areas_grid;
use crate::run::latency::{latency_grid, OpLatency};
use crate::run::report::{Ramp, RunReport, RunRow, RunTable};
use racehorse_core::WorkUnit;
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

/// What the report says of its figures, after the tables.
const CPU_PER_UNIT: &str =
    "CPU per unit of work is system-wide CPU (user + kernel) over the measured window \
     divided by the units of work; wl cpu s is the workload's own processes' CPU seconds per window, \
     harness % racehorse's own CPU in % of the window.";

/// The caption of the report's table of summed points.
const OVERALL_CAPTION: &str = "overall: the phases of each repetition summed (seed 001's overall results)";

/// Widest line of a table `show` aims for on a terminal; the fixed parameters wrap at it.
pub const SHOW_WIDTH: usize = 100;

/// What `racehorse show` adds to the tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShowOptions {
    /// A line per repetition under each point.
    pub reps: bool,
    /// A table of latency percentiles per point and operation under each workload's table.
    pub latency: bool,
}

/// Charts of one workload's table (HTML only), added after its table in the report.
pub type Charts<'a> = &'a dyn Fn(&RunTable) -> Vec<String>;

/// The measured points of one workload and unit over every variant, in the order they ran;
/// in the report also its summed points.
struct Section<'a> {
    workload: &'a str,
    unit: WorkUnit,
    rows: Vec<(&'a RunTable, &'a RunRow)>,
    summed: Vec<(&'a RunTable, &'a RunRow)>,
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

    /// The model's tables of this section (one per variant).
    fn tables<'r>(&self, r: &'r RunReport) -> Vec<&'r RunTable> {
        r.tables.iter().filter(|t| t.workload == self.workload && t.unit == self.unit).collect()
    }
}

/// The document `racehorse show` prints.
pub fn show_blocks(r: &RunReport, opts: ShowOptions) -> Vec<Block> {
    body(r, opts, None)
}

/// The document of `racehorse report RUN`: `show`'s (without repetitions or latency tables)
/// under a title, with each phased workload's summed points, `chart`'s charts after each
/// workload's table, then the area of each workload, what CPU per unit is, and the
/// environment.
pub fn report_blocks(r: &RunReport, chart: Charts) -> Vec<Block> {
    let mut doc = vec![Block::Heading(1, format!("racehorse report: {}", r.side.name))];
    doc.extend(body(r, ShowOptions::default(), Some(chart)));
    if let Some(areas) = areas_grid(r) {
        doc.push(Block::Heading(2, "By area".into()));
        let caption = "Medians; a range spans the workload's points.".into();
        doc.push(Block::Table(Grid { caption, compact: false, ..areas }));
    }
    doc.push(Block::Para(CPU_PER_UNIT.into()));
    doc.push(Block::Heading(2, "Environment".into()));
    let mut g = Grid::new("env", "", vec!["key".into(), "value".into()], 2);
    g.rows = r.env.iter().map(|(k, v)| vec![Cell::plain(k), Cell::plain(v)]).collect();
    doc.push(Block::Table(g));
    doc
}

/// Header, variant settings, one section per workload and unit, failed cells; `report` holds
/// the report's charts (and asks for its summed points).
fn body(r: &RunReport, opts: ShowOptions, report: Option<Charts>) -> Vec<Block> {
    let mut doc = header_blocks(&r.side);
    for v in &r.variant_settings {
        let set: Vec<String> = v.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        doc.push(line(&format!("variant {}: {}", v.variant, set.join(", "))));
    }
    for s in sections(r, report.is_some()) {
        doc.extend(section_blocks(r, &s, opts, report));
    }
    for f in r.failures.iter().take(FAILURES_LISTED) {
        doc.push(line(&format!("{} {}: {}", f.status.as_str(), f.label, f.error.as_deref().unwrap_or(""))));
    }
    doc
}

/// One line of text from the store: every control character escaped, line breaks included.
fn line(text: &str) -> Block {
    Block::Para(escape_control(text))
}

/// The run's header: id, label, status, date and host; the exclusivity check's warnings; and
/// how much CPU other processes used per measured window.
fn header_blocks(s: &SideInfo) -> Vec<Block> {
    let name = format!("run {} '{}'", s.run_id, s.label);
    let mut out = vec![line(&format!("{name} — {} — {} on {}", s.status, date(s.started_at_unix_s), s.host))];
    out.extend(exclusivity_line(&name, &s.exclusivity_warnings).map(|l| line(&l)));
    if let Some(q) = s.outside_cpu {
        out.push(Block::Para(format!("CPU used by other processes per measured window: {}.", q.text())));
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
/// (which no cell of their own measured) apart, and only `with_summed`.
fn sections(r: &RunReport, with_summed: bool) -> Vec<Section<'_>> {
    let mut rows: Vec<(&RunTable, &RunRow)> = r
        .tables
        .iter()
        .flat_map(|t| t.rows.iter().filter(|row| with_summed || !row.summed).map(move |row| (t, row)))
        .collect();
    rows.sort_by_key(|(_, row)| row.first_cell);
    let mut out: Vec<Section> = Vec::new();
    for (t, row) in rows {
        let i = match out.iter().position(|s| s.workload == t.workload && s.unit == t.unit) {
            Some(i) => i,
            None => {
                out.push(Section {
                    workload: &t.workload,
                    unit: t.unit,
                    rows: Vec::new(),
                    summed: Vec::new(),
                });
                out.len() - 1
            }
        };
        let s = &mut out[i];
        let list = if row.summed { &mut s.summed } else { &mut s.rows };
        list.push((t, row));
    }
    out
}

/// One section: its table (and the report's summed points and charts), latencies, ramps,
/// pacing, extras and profiles.
fn section_blocks(r: &RunReport, s: &Section, opts: ShowOptions, report: Option<Charts>) -> Vec<Block> {
    let v = unit_view(s.unit);
    let heading = format!(
        "{} (throughput in {}, CPU per unit in {}; medians over repetitions)",
        s.workload, v.tput_label, v.cpu_label
    );
    let mut out = vec![Block::Heading(2, heading)];
    let (columns, fixed) = s.split();
    let fixed = fixed_lines(&fixed);
    if !fixed.is_empty() {
        out.push(Block::Para(fixed.trim_end().to_string()));
    }
    let grid = |rows: &[(&RunTable, &RunRow)], first: usize, caption: &str| {
        let shape = Shape { columns: &columns, variants: s.many_variants(), unit: v, reps: opts.reps, first };
        points_blocks(rows, &shape, caption)
    };
    out.extend(grid(&s.rows, 1, ""));
    if let Some(chart) = report {
        if !s.summed.is_empty() {
            out.extend(grid(&s.summed, s.rows.len() + 1, OVERALL_CAPTION));
        }
        out.extend(s.tables(r).into_iter().flat_map(chart).map(Block::Chart));
    }
    out.extend(latency_blocks(&s.rows, opts.latency));
    for t in s.tables(r) {
        out.extend(t.ramps.iter().filter_map(|ramp| ramp_line(&t.variant, ramp, v)).map(|l| line(&l)));
    }
    out.extend(pace_lines(&s.rows).into_iter().map(|l| line(&l)));
    out.extend(extras_grid(&s.rows).map(Block::Table));
    for (i, (_, row)) in s.rows.iter().enumerate() {
        if let Some(m) = &row.profile {
            let text = profile_text(&format!("profile of #{}", i + 1), m, PROFILE_TOP);
            out.push(Block::Pre(text.trim_end_matches('\n').to_string()));
            if let (Some(tree), Some(_)) = (&m.flame, &report) {
                let title = format!(
                    "flame graph of #{}: {} {}",
                    i + 1,
                    s.workload,
                    params_label(&row.params, &columns)
                );
                out.push(Block::Chart(crate::flame::flame_chart(tree, title.trim_end(), s.unit)));
            }
        }
    }
    out
}

/// The latency table (`show --latency`), or the line saying how many operations have stored
/// latencies; nothing when none has.
fn latency_blocks(rows: &[(&RunTable, &RunRow)], table: bool) -> Option<Block> {
    let lats: Vec<(usize, &[OpLatency])> =
        rows.iter().enumerate().map(|(i, (_, row))| (i + 1, row.latencies.as_slice())).collect();
    let ops: BTreeSet<&str> = lats.iter().flat_map(|(_, l)| l.iter().map(|o| o.op.as_str())).collect();
    if table {
        latency_grid(&lats).map(Block::Table)
    } else {
        (!ops.is_empty()).then(|| {
            Block::Para(format!(
                "latency percentiles of {} operation(s) are stored: show --latency lists p50/p90/p99",
                ops.len()
            ))
        })
    }
}

/// How a section's points are laid out: the varying parameters, whether variants vary, the
/// display units, a line per repetition, and the number of the first row.
struct Shape<'a> {
    columns: &'a [String],
    variants: bool,
    unit: UnitView,
    reps: bool,
    first: usize,
}

/// The table of some points of a section: a row per point with the varying parameters (with
/// `reps`, a line per repetition under it), then the legend of its marks and noisy
/// repetitions.
fn points_blocks(rows: &[(&RunTable, &RunRow)], shape: &Shape, caption: &str) -> Vec<Block> {
    let v = shape.unit;
    let tput_h = format!("tput {}", v.tput_label);
    let failed = rows.iter().any(|(_, r)| r.not_ok > 0);
    let (variants, params) = (shape.variants, !shape.columns.is_empty());
    let mut head = vec!["#"];
    head.extend(variants.then_some("variant"));
    head.extend(params.then_some("parameters"));
    head.extend(["n", tput_h.as_str(), "cv %", "total", "kernel", "user", "wl cpu s", "harness %"]);
    head.extend(failed.then_some("failed"));
    let noted = rows.iter().any(|(_, r)| !r.outlier_reps.is_empty() || !r.qos_failed_reps.is_empty());
    head.extend(noted.then_some("note"));
    let left = 1 + usize::from(variants) + usize::from(params);
    let mut grid = Grid::new("run", caption, head.into_iter().map(String::from).collect(), left).compact();
    let (mut legend, mut marked) = (Vec::new(), false);
    for (i, (t, row)) in rows.iter().enumerate() {
        let label = params_label(&row.params, shape.columns);
        let mut cells = point_row(shape.first + i, row, v, failed);
        if !noted {
            cells.pop();
        }
        if params {
            cells.insert(1, Cell::plain(label.clone()));
        }
        if variants {
            cells.insert(1, Cell::plain(t.variant.clone()));
        }
        grid.rows.push(cells);
        legend.extend(noisy_legend(&label, "rep", &row.noisy_reps));
        marked |= !row.below.is_empty()
            || !row.noisy_reps.is_empty()
            || !row.outlier_reps.is_empty()
            || !row.qos_failed_reps.is_empty();
        if shape.reps {
            grid.rows.extend(rep_rows(row, v, left - 1));
        }
    }
    let mut out = vec![Block::Table(grid)];
    if marked {
        out.push(Block::Para(MARKS_LEGEND.into()));
    }
    out.extend(noisy_lines(legend).iter().map(|l| line(l)));
    out
}

/// One point without its variant and parameters: number, medians over the ok repetitions in
/// display units, `below res` for a figure below its resolution, `n?` for noisy repetitions
/// (listed under the table) and outliers in the note.
fn point_row(number: usize, row: &RunRow, v: UnitView, failed: bool) -> Vec<Cell> {
    let figure = |m: Metric, scale: f64| -> Cell {
        if row.below.contains(&m) {
            return Cell::toned(BELOW_RES, Tone::Muted);
        }
        Cell::plain(row.metric(m).map_or("-".into(), |s| num(s.median * scale)))
    };
    let tput = row.metric(Metric::Throughput);
    let n = if row.noisy_reps.is_empty() {
        Cell::plain(row.n.to_string())
    } else {
        Cell::toned(format!("{}{NOISY_MARK}", row.n), Tone::Muted)
    };
    let cv = tput.and_then(|s| s.cv()).map_or("-".into(), |c| format!("{:.1}", c * 100.0));
    let mut out = vec![
        Cell::plain(number.to_string()),
        n,
        figure(Metric::Throughput, v.tput_scale),
        Cell::toned(cv, if row.noisy { Tone::Worse } else { Tone::Plain }),
        figure(Metric::CpuTotalPerUnit, v.cpu_scale),
        figure(Metric::CpuKernelPerUnit, v.cpu_scale),
        figure(Metric::CpuUserPerUnit, v.cpu_scale),
        Cell::plain(row.workload_cpu_s.map_or("-".into(), |s| num(s.median))),
        Cell::plain(row.harness_cpu_pct.map_or("-".into(), |s| format!("{:.2}", s.median))),
    ];
    if failed {
        out.push(Cell::toned(row.not_ok.to_string(), if row.not_ok > 0 { Tone::Worse } else { Tone::Plain }));
    }
    let outliers: Vec<String> = row.outlier_reps.iter().map(|r| format!("#{r}")).collect();
    let outliers =
        if outliers.is_empty() { String::new() } else { format!("outlier {}", outliers.join(" ")) };
    let notes = [outliers, qos_note("", &row.qos_failed_reps)];
    let note = notes.into_iter().filter(|n| !n.is_empty()).collect::<Vec<_>>().join("; ");
    let tone = if note.is_empty() { Tone::Plain } else { Tone::Worse };
    out.push(Cell::toned(note, tone));
    out
}

/// One line per paced point (`rate`, `qos`; medians over its ok repetitions): whether its
/// quality of service held, the percentile against its limit, the rate achieved of the
/// target.
fn pace_lines(rows: &[(&RunTable, &RunRow)]) -> Vec<String> {
    let mut out = Vec::new();
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
        out.push(format!("pace #{}: {}", i + 1, parts.join("; ")));
    }
    out
}

/// One line per repetition under its point: status (or error), its marks, and throughput;
/// `pad` label columns come before the one it is written in.
fn rep_rows(row: &RunRow, v: UnitView, pad: usize) -> Vec<Vec<Cell>> {
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
            let mut line = vec![Cell::plain(""); pad];
            line.extend([Cell::plain(format!("  #{} {mark}", r.rep)), Cell::plain(""), Cell::plain(tput)]);
            line
        })
        .collect()
}

/// Per ramp: the peak throughput and its load, and the highest load run; None without a peak.
fn ramp_line(variant: &str, ramp: &Ramp, v: UnitView) -> Option<String> {
    let peak = ramp.peak()?;
    let at_peak = peak.units_per_s * v.tput_scale;
    Some(format!(
        "ramp [{variant}] {}: peak {} {unit} at {} users ({} {unit} per user); {} loads up to {} users",
        ramp.label,
        num(at_peak),
        peak.users,
        num(at_peak / peak.users.max(1) as f64),
        ramp.points.len(),
        ramp.reached_users(),
        unit = v.tput_label,
    ))
}

/// The engines' own figures (extras such as moves per touch), medians over the repetitions
/// that succeeded: one row per figure, one column per row of the table above (`#1` …).
fn extras_grid(rows: &[(&RunTable, &RunRow)]) -> Option<Grid> {
    let names: BTreeSet<&str> =
        rows.iter().flat_map(|(_, r)| r.extras.iter().map(|(k, _)| k.as_str())).collect();
    if names.is_empty() {
        return None;
    }
    let shown = &rows[..rows.len().min(EXTRA_COLUMNS)];
    let head: Vec<String> = std::iter::once("extra (median)".to_string())
        .chain((1..=shown.len()).map(|i| format!("#{i}")))
        .collect();
    let caption = if rows.len() > shown.len() {
        format!("(figures of the first {} rows)", shown.len())
    } else {
        String::new()
    };
    let mut grid = Grid::new("extras", caption, head, 1).compact();
    for name in names {
        let mut line = vec![Cell::plain(name)];
        line.extend(shown.iter().map(|(_, r)| Cell::plain(r.extra(name).map_or("-".into(), num))));
        grid.rows.push(line);
    }
    Some(grid)
}
