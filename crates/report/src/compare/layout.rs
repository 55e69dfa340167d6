//! Lays out a comparison as a document: header, legend, the seed-000 summary, one table
//! per workload (ratios scaled to base, gains with + = better, significance), unmatched
//! points and the environment diff. Charts are added by the HTML renderer's caller.

use crate::compare::cell::{ci_cell, metric_cell, View};
use crate::compare::comparison::Comparison;
use crate::compare::metric::MetricCompare;
use crate::compare::summary::range_text;
use crate::compare::table::{Row, WorkloadTable};
use crate::model::{outlier_note, qos_note, shown, Metric, SideInfo};
use crate::quality::{exclusivity_line, noisy_legend, noisy_note, BELOW_RES, NOISY_MARK};
use crate::render::doc::{Block, Cell, Grid, Tone};
use crate::render::units::{date, num, pct, unit_view};

pub fn side_line(role: &str, s: &SideInfo) -> String {
    format!(
        "{role}: {} — {} — {} on {} (racehorse {}, CPUs by {})",
        s.name,
        s.status,
        date(s.started_at_unix_s),
        s.host,
        s.racehorse_version,
        s.cpu_method
    )
}

fn legend(c: &Comparison) -> String {
    format!(
        "Ratios are new/base (\"scaled to base\"); gains in %, + is better (more throughput, less CPU \
         per unit of work). * = significant: the {:.0}% {} confidence interval of the ratio excludes 1 \
         and the change stays significant after a Benjamini–Hochberg correction over every point and \
         metric of the new run (needs ≥ 3 repetitions a side; n/a with fewer). ~ = scattered: \
         coefficient of variation above {:.0}%. {NOISY_MARK} = noisy: other processes used the CPU \
         during a repetition on either side (listed under the table); never significant, left out of \
         the summary. {BELOW_RES} = below the measurement's resolution, no figure. outlier #n = a \
         repetition whose throughput lies far from the others' median; kept in every figure.{}",
        c.options.level * 100.0,
        c.options.ci_method.as_str(),
        c.options.noisy_cv * 100.0,
        if any_qos_failed(c) { QOS_LEGEND } else { "" }
    )
}

/// The legend's sentence on failed QoS, added when some point has one.
const QOS_LEGEND: &str = " QoS failed #n = a paced repetition that missed its quality of service (its \
                          latency limit or rate floor); compared like the others.";

/// Whether any repetition on either side of any point failed its QoS.
fn any_qos_failed(c: &Comparison) -> bool {
    c.tables.iter().flat_map(|t| &t.rows).any(|r| {
        !r.base_qos_failed_reps.is_empty() || r.sides.iter().flatten().any(|s| !s.qos_failed_reps.is_empty())
    })
}

/// Display value of a metric mean: throughput or CPU per unit in the table's units.
fn mean_shown(t: &WorkloadTable, mc: &MetricCompare, v: Option<f64>) -> String {
    if mc.below_resolution {
        return BELOW_RES.into();
    }
    let m = mc.metric;
    let u = unit_view(t.unit);
    let scale = if m == Metric::Throughput { u.tput_scale } else { u.cpu_scale };
    v.map_or_else(|| "n/a".into(), |x| num(x * scale))
}

fn header(t: &WorkloadTable, view: View) -> Vec<String> {
    let u = unit_view(t.unit);
    let mut h: Vec<String> = if t.columns.is_empty() { vec!["point".into()] } else { t.columns.clone() };
    for m in Metric::ALL {
        if view.absolute {
            let unit = if m == Metric::Throughput { u.tput_label } else { u.cpu_label };
            h.push(format!("base {unit}"));
            h.push(format!("new {unit}"));
        }
        h.push(m.header().to_string());
        if view.ci {
            h.push("CI".into());
        }
    }
    h.push("note".into());
    h
}

fn row_cells(t: &WorkloadTable, row: &Row, side: usize, view: View) -> Option<Vec<Cell>> {
    let cell = row.sides.get(side)?.as_ref()?;
    let mut out: Vec<Cell> = if t.columns.is_empty() {
        vec![Cell::plain("all")]
    } else {
        t.columns.iter().map(|c| Cell::plain(row.params.get(c).map_or("-".into(), |v| shown(c, v)))).collect()
    };
    for m in Metric::ALL {
        let Some(mc) = cell.metric(m) else { continue };
        if view.absolute {
            out.push(Cell::plain(mean_shown(t, mc, mc.base.map(|s| s.mean))));
            out.push(Cell::plain(mean_shown(t, mc, mc.new.map(|s| s.mean))));
        }
        out.push(metric_cell(mc));
        if view.ci {
            out.push(ci_cell(mc));
        }
    }
    let mut notes = Vec::new();
    if row.base_not_ok > 0 || cell.not_ok > 0 {
        notes.push(format!("partial: {} base, {} new reps failed", row.base_not_ok, cell.not_ok));
    }
    for (who, reps) in [("base", &row.base_noisy_reps), ("new", &cell.noisy_reps)] {
        if !reps.is_empty() {
            notes.push(noisy_note(who, reps));
        }
    }
    for (who, reps) in [("base", &row.base_outlier_reps), ("new", &cell.outlier_reps)] {
        if !reps.is_empty() {
            notes.push(format!("{who} {}", outlier_note(reps)));
        }
    }
    for (who, reps) in [("base", &row.base_qos_failed_reps), ("new", &cell.qos_failed_reps)] {
        if !reps.is_empty() {
            notes.push(qos_note(who, reps));
        }
    }
    let note = notes.join("; ");
    let tone = if note.is_empty() { Tone::Plain } else { Tone::Worse };
    out.push(Cell::toned(note, tone));
    Some(out)
}

/// The table of one workload for one new side.
pub fn workload_grid(c: &Comparison, t: &WorkloadTable, side: usize, view: View) -> Grid {
    let u = unit_view(t.unit);
    let mut caption = format!(
        "{} results (scaled to {}){}; throughput in {}, CPU per unit in {}",
        t.title(),
        c.base.name,
        if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() },
        u.tput_label,
        u.cpu_label
    );
    if !t.constant.is_empty() {
        let fixed: Vec<String> = t.constant.iter().map(|(k, v)| format!("{k}={}", shown(k, v))).collect();
        caption.push_str(&format!("; fixed: {}", fixed.join(" ")));
    }
    let left = t.columns.len().max(1);
    let mut g = Grid::new("compare", caption, header(t, view), left);
    g.rows = t.rows.iter().filter_map(|r| row_cells(t, r, side, view)).collect();
    g
}

/// The legend under one workload's table: one line per noisy repetition with its reason.
pub fn noisy_lines(t: &WorkloadTable, side: usize) -> Vec<Block> {
    let mut lines: Vec<String> = Vec::new();
    for row in &t.rows {
        let Some(cell) = row.sides.get(side).and_then(Option::as_ref) else { continue };
        lines.extend(noisy_legend(&row.label, "base", &row.base_noisy_reps));
        lines.extend(noisy_legend(&row.label, "new", &cell.noisy_reps));
    }
    crate::quality::noisy_lines(lines).into_iter().map(Block::Para).collect()
}

/// The points column of the summary: `6 (without clients=1; 2 noisy left out)`.
fn points_text(s: &crate::compare::summary::SummaryRow) -> String {
    let mut why: Vec<String> = s.ramp_up_excluded.iter().map(|x| format!("without {x}")).collect();
    if s.noisy_points > 0 {
        why.push(format!("{} noisy left out", s.noisy_points));
    }
    if s.below_resolution_points > 0 {
        why.push(format!("{} below res", s.below_resolution_points));
    }
    if why.is_empty() {
        s.points.to_string()
    } else {
        format!("{} ({})", s.points, why.join("; "))
    }
}

fn summary_grid(c: &Comparison) -> Grid {
    let multi = c.news.len() > 1;
    let mut h: Vec<String> = Vec::new();
    if multi {
        h.push("new".into());
    }
    h.extend(
        ["Area", "Workload", "Throughput", "geomean", "CPU consumption savings", "geomean", "points"]
            .map(String::from),
    );
    let left = if multi { 3 } else { 2 };
    let mut g = Grid::new(
        "summary",
        "Ranges over the points after ramp-up, and geometric means; + is better",
        h,
        left,
    );
    for s in &c.summary {
        let mut row = Vec::new();
        if multi {
            row.push(Cell::plain(c.news.get(s.side).map_or(String::new(), |n| n.name.clone())));
        }
        // Coloured only when some point is significant that way and none the other way.
        let band = c.options.same_within_pct;
        let tone = |v: Option<f64>, (better, worse): (usize, usize)| match v {
            Some(x) if x > band && better > 0 && worse == 0 => Tone::Better,
            Some(x) if x < -band && worse > 0 && better == 0 => Tone::Worse,
            _ => Tone::Plain,
        };
        row.push(Cell::plain(&s.area));
        row.push(Cell::plain(if s.params.is_empty() {
            s.workload.clone()
        } else {
            format!("{} {}", s.workload, s.params)
        }));
        row.push(Cell::toned(
            range_text(s.throughput_range_pct),
            tone(s.throughput_geomean_pct, s.throughput_significant),
        ));
        row.push(Cell::plain(s.throughput_geomean_pct.map_or("n/a".into(), pct)));
        row.push(Cell::toned(
            range_text(s.cpu_savings_range_pct),
            tone(s.cpu_savings_geomean_pct, s.cpu_significant),
        ));
        row.push(Cell::plain(s.cpu_savings_geomean_pct.map_or("n/a".into(), pct)));
        row.push(Cell::plain(points_text(s)));
        g.rows.push(row);
    }
    g
}

fn area_grid(c: &Comparison) -> Grid {
    let multi = c.news.len() > 1;
    let mut h: Vec<String> = if multi { vec!["new".into()] } else { Vec::new() };
    h.extend(
        ["Area", "Throughput (geomean)", "CPU savings (geomean)", "workloads", "points"].map(String::from),
    );
    let none_significant = c.verdicts.iter().all(|v| v.significant == 0);
    let caption = if none_significant {
        "By area: geometric means over every point — point estimates only, no point is significant"
    } else {
        "By area: geometric means over every point"
    };
    let mut g = Grid::new("areas", caption, h, if multi { 2 } else { 1 });
    for a in &c.areas {
        let mut row = Vec::new();
        if multi {
            row.push(Cell::plain(c.news.get(a.side).map_or(String::new(), |n| n.name.clone())));
        }
        row.push(Cell::plain(&a.area));
        row.push(Cell::plain(a.throughput_geomean_pct.map_or("n/a".into(), pct)));
        row.push(Cell::plain(a.cpu_savings_geomean_pct.map_or("n/a".into(), pct)));
        row.push(Cell::plain(a.workloads.to_string()));
        row.push(Cell::plain(a.points.to_string()));
        g.rows.push(row);
    }
    g
}

/// The document of a comparison; `chart` adds charts after each workload's tables (HTML).
pub fn compare_doc(c: &Comparison, view: View, chart: &dyn Fn(&WorkloadTable) -> Vec<String>) -> Vec<Block> {
    let names: Vec<&str> = c.news.iter().map(|n| n.name.as_str()).collect();
    let mut doc = vec![
        Block::Heading(1, format!("racehorse compare: {} vs {}", names.join(", "), c.base.name)),
        Block::Para(side_line("base", &c.base)),
    ];
    doc.extend(c.news.iter().map(|n| Block::Para(side_line("new", n))));
    let mut runs_seen: Vec<i64> = Vec::new();
    for s in std::iter::once(&c.base).chain(&c.news) {
        if !runs_seen.contains(&s.run_id) {
            runs_seen.push(s.run_id);
            doc.extend(exclusivity_line(&s.run_name(), &s.exclusivity_warnings).map(Block::Para));
        }
    }
    for s in std::iter::once(&c.base).chain(&c.news).filter(|s| s.status != "complete") {
        doc.push(Block::Para(format!(
            "Note: {} is {}; its missing cells are not compared.",
            s.name, s.status
        )));
    }
    doc.push(Block::Para(legend(c)));
    doc.push(Block::Heading(2, "Summary".into()));
    summary_lines(c, &mut doc);
    doc.push(Block::Table(summary_grid(c)));
    doc.push(Block::Table(area_grid(c)));
    overall_lines(c, &mut doc);
    for t in &c.tables {
        let areas: Vec<String> =
            crate::compare::summary::rows_by_area(t).into_iter().map(|(a, _)| a).collect();
        doc.push(Block::Heading(2, format!("{} — {}", t.title(), areas.join(", "))));
        for side in 0..c.news.len() {
            doc.push(Block::Table(workload_grid(c, t, side, view)));
            doc.extend(noisy_lines(t, side));
            doc.extend(crate::compare::item_layout::item_blocks(c, t, side, view));
        }
        doc.extend(chart(t).into_iter().map(Block::Chart));
    }
    doc.extend(crate::compare::item_layout::ramp_blocks(c));
    unmatched(c, &mut doc);
    env_section(c, &mut doc);
    doc
}

/// How many points are significant, noisy and below resolution — always all three, so that
/// a reader sees what was left unjudged — and how many have an outlier repetition.
pub fn headline(v: &crate::compare::verdicts::SideVerdicts) -> String {
    let mut s = format!(
        "{} of {} points significant, {} noisy, {} below resolution",
        v.significant, v.points, v.noisy, v.below_resolution
    );
    match v.with_outliers {
        0 => {}
        1 => s.push_str(", 1 with an outlier repetition"),
        n => s.push_str(&format!(", {n} with outlier repetitions")),
    }
    s
}

/// What the points amount to per new side, and how quiet the machine was on each side.
fn summary_lines(c: &Comparison, doc: &mut Vec<Block>) {
    for v in &c.verdicts {
        let name = c.news.get(v.side).map_or("", |n| n.name.as_str());
        doc.push(Block::Para(format!("{name} vs {}: {}.", c.base.name, headline(v))));
    }
    let sides: Vec<&SideInfo> = std::iter::once(&c.base).chain(&c.news).collect();
    if sides.iter().all(|s| s.outside_cpu.is_none()) {
        return;
    }
    let parts: Vec<String> = sides
        .iter()
        .map(|s| format!("{}: {}", s.name, s.outside_cpu.map_or("not measured".into(), |q| q.text())))
        .collect();
    doc.push(Block::Para(format!("CPU used by other processes per measured window — {}.", parts.join("; "))));
}

/// The overall geometric means per new side; with no significant point, no figure that could
/// read as a verdict.
fn overall_lines(c: &Comparison, doc: &mut Vec<Block>) {
    for o in &c.overall {
        let name = c.news.get(o.side).map_or("", |n| n.name.as_str());
        let v = c.verdicts.iter().find(|v| v.side == o.side);
        if v.is_none_or(|v| v.significant == 0) {
            let points = v.map_or(o.points, |v| v.points);
            doc.push(Block::Para(format!(
                "Overall ({name}): no significant difference at any of the {points} points."
            )));
            continue;
        }
        doc.push(Block::Para(format!(
            "Overall ({name}, geometric mean over {} points): throughput {}, CPU per unit of work {}.",
            o.points,
            o.throughput_geomean_pct.map_or("n/a".into(), pct),
            o.cpu_savings_geomean_pct.map_or("n/a".into(), |v| format!("{} savings", pct(v)))
        )));
    }
}

fn unmatched(c: &Comparison, doc: &mut Vec<Block>) {
    let any_new = c.only_new.iter().any(|v| !v.is_empty());
    if c.only_base.is_empty() && !any_new {
        return;
    }
    doc.push(Block::Heading(2, "Not compared".into()));
    if !c.only_base.is_empty() {
        doc.push(Block::Para(format!("Only in {}: {}", c.base.name, c.only_base.join("; "))));
    }
    for (i, v) in c.only_new.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
        doc.push(Block::Para(format!("Only in {}: {}", c.news[i].name, v.join("; "))));
    }
}

fn env_section(c: &Comparison, doc: &mut Vec<Block>) {
    doc.push(Block::Heading(2, "Environment differences".into()));
    for (i, d) in c.env_diff.iter().enumerate() {
        if d.is_empty() {
            let noisy = c.verdicts.get(i).map_or(0, |v| v.noisy);
            let caveat = if noisy > 0 {
                format!(" Other processes are not part of it: {noisy} points are noisy (see the summary).")
            } else {
                String::new()
            };
            doc.push(Block::Para(format!(
                "{} and {}: no differences in the captured environment.{caveat}",
                c.base.name, c.news[i].name
            )));
            continue;
        }
        let mut g = Grid::new(
            "env",
            format!("{} vs {}", c.news[i].name, c.base.name),
            vec!["key".into(), "base".into(), "new".into()],
            3,
        );
        g.rows =
            d.iter().map(|e| vec![Cell::plain(&e.key), Cell::plain(&e.base), Cell::plain(&e.new)]).collect();
        doc.push(Block::Table(g));
    }
}
