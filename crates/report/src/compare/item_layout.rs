//! Lays out the per-item comparisons under a workload's table: latency percentiles per
//! point and operation (ratios, lower is better, so + = shorter), the engines' own figures
//! per point, and the load ramps' highest load reached.

use crate::compare::cell::{metric_cell, View};
use crate::compare::comparison::Comparison;
use crate::compare::items::{ItemCompare, ItemKind, PERCENTILES};
use crate::compare::table::{has_items, Row, WorkloadTable};
use crate::model::shown;
use crate::render::doc::{Block, Cell, Grid, Tone};
use crate::render::units::{num, pct};

/// A display unit for latencies in nanoseconds whose largest value is `max_ns`.
pub fn latency_unit(max_ns: f64) -> (&'static str, f64) {
    if max_ns >= 1e6 {
        ("ms", 1e-6)
    } else if max_ns >= 1e3 {
        ("µs", 1e-3)
    } else {
        ("ns", 1.0)
    }
}

/// A figure's display unit and scale from its base unit: CPU seconds per a thing
/// (`cpu_s/page`) in µs, any other unit as declared.
fn figure_unit(unit: &str) -> (String, f64) {
    match unit.strip_prefix("cpu_s/") {
        Some(thing) => (format!("µs/{thing}"), 1e6),
        None => (unit.to_string(), 1.0),
    }
}

fn point_cells(t: &WorkloadTable, row: &Row) -> Vec<Cell> {
    if t.columns.is_empty() {
        return vec![Cell::plain("all")];
    }
    t.columns.iter().map(|c| Cell::plain(row.params.get(c).map_or("-".into(), |v| shown(c, v)))).collect()
}

fn point_header(t: &WorkloadTable) -> Vec<String> {
    if t.columns.is_empty() {
        vec!["point".into()]
    } else {
        t.columns.clone()
    }
}

/// The mean of one side of an item in display units, `below res` or `n/a`.
fn mean_text(i: &ItemCompare, new: bool, scale: f64) -> String {
    if i.cmp.below_resolution {
        return crate::quality::BELOW_RES.into();
    }
    let s = if new { i.cmp.new } else { i.cmp.base };
    s.map_or("n/a".into(), |s| num(s.mean * scale))
}

/// Latency percentiles of one workload for one new side: a row per point and operation.
pub fn latency_grid(c: &Comparison, t: &WorkloadTable, side: usize, view: View) -> Option<Grid> {
    if !has_items(t, side, ItemKind::Latency) {
        return None;
    }
    let latencies = || {
        t.rows.iter().filter_map(move |r| Some((r, r.sides.get(side)?.as_ref()?))).flat_map(|(r, cell)| {
            cell.items.iter().filter(|i| i.kind == ItemKind::Latency).map(move |i| (r, i))
        })
    };
    let max_ns =
        latencies().flat_map(|(_, i)| [i.cmp.base, i.cmp.new]).flatten().fold(0.0, |m, s| s.mean.max(m));
    let (unit, scale) = latency_unit(max_ns);
    let mut header = point_header(t);
    header.push("operation".into());
    for (p, _) in PERCENTILES {
        if view.absolute {
            header.push(format!("base {p} {unit}"));
            header.push(format!("new {p} {unit}"));
        }
        header.push(p.to_string());
    }
    let vs = if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() };
    let caption = format!(
        "{} latency percentiles (scaled to {}{vs}): ratio new/base of the mean percentile over the \
         repetitions; + = shorter",
        t.title(),
        c.base.name
    );
    let mut g = Grid::new("latency", caption, header, point_header(t).len() + 1);
    for row in &t.rows {
        let Some(cell) = row.sides.get(side).and_then(Option::as_ref) else { continue };
        let mut ops: Vec<&str> = Vec::new();
        for i in cell.items.iter().filter(|i| i.kind == ItemKind::Latency) {
            if !ops.contains(&i.item.as_str()) {
                ops.push(&i.item);
            }
        }
        for op in ops {
            let mut cells = point_cells(t, row);
            cells.push(Cell::plain(op));
            for (p, _) in PERCENTILES {
                let it =
                    cell.items.iter().find(|x| x.kind == ItemKind::Latency && x.item == op && x.stat == p);
                if view.absolute {
                    cells.push(Cell::plain(it.map_or("-".into(), |x| mean_text(x, false, scale))));
                    cells.push(Cell::plain(it.map_or("-".into(), |x| mean_text(x, true, scale))));
                }
                cells.push(it.map_or(Cell::toned("-", Tone::Muted), |x| metric_cell(&x.cmp)));
            }
            g.rows.push(cells);
        }
    }
    Some(g)
}

/// The engines' own figures of one workload for one new side: a row per point and figure,
/// with both means (the units differ from figure to figure).
pub fn figure_grid(c: &Comparison, t: &WorkloadTable, side: usize) -> Option<Grid> {
    if !has_items(t, side, ItemKind::Figure) {
        return None;
    }
    let mut header = point_header(t);
    header.extend(["figure", "unit", "base", "new", "change"].map(String::from));
    let vs = if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() };
    let caption = format!("{} figures per point (scaled to {}{vs}); + is better", t.title(), c.base.name);
    let mut g = Grid::new("figures", caption, header, point_header(t).len() + 2);
    for row in &t.rows {
        let Some(cell) = row.sides.get(side).and_then(Option::as_ref) else { continue };
        for i in cell.items.iter().filter(|i| i.kind == ItemKind::Figure) {
            let (unit, scale) = figure_unit(i.unit);
            let mut cells = point_cells(t, row);
            cells.push(Cell::plain(&i.item));
            cells.push(Cell::plain(unit));
            cells.push(Cell::plain(mean_text(i, false, scale)));
            cells.push(Cell::plain(mean_text(i, true, scale)));
            cells.push(metric_cell(&i.cmp));
            g.rows.push(cells);
        }
    }
    Some(g)
}

/// Every per-item table of one workload.
pub fn item_blocks(c: &Comparison, t: &WorkloadTable, side: usize, view: View) -> Vec<Block> {
    let mut out = Vec::new();
    out.extend(latency_grid(c, t, side, view).map(Block::Table));
    out.extend(figure_grid(c, t, side).map(Block::Table));
    out
}

/// The load ramps: the highest load each side reached and its peak.
pub fn ramp_blocks(c: &Comparison) -> Vec<Block> {
    if c.ramps.is_empty() {
        return Vec::new();
    }
    let multi = c.news.len() > 1;
    let mut header: Vec<String> = if multi { vec!["new".into()] } else { Vec::new() };
    header.extend(
        ["workload", "ramp", "base reached", "new reached", "change", "base peak", "new peak", "peak change"]
            .map(String::from),
    );
    let mut g = Grid::new(
        "ramps",
        "Highest load reached (users) and the peak (jobs/min at users); one ramp a side, so no interval",
        header,
        if multi { 3 } else { 2 },
    );
    let peak = |e: Option<crate::compare::ramps::RampEnd>| {
        e.map_or("-".into(), |e| format!("{} at {}", num(e.peak_units_per_s * 60.0), e.peak_users))
    };
    for r in &c.ramps {
        let mut row = Vec::new();
        if multi {
            row.push(Cell::plain(c.news.get(r.side).map_or(String::new(), |n| n.name.clone())));
        }
        row.push(Cell::plain(crate::model::table_title(&r.workload, &r.variant)));
        row.push(Cell::plain(&r.label));
        row.push(Cell::plain(r.base.map_or("-".into(), |e| e.reached_users.to_string())));
        row.push(Cell::plain(r.new.map_or("-".into(), |e| e.reached_users.to_string())));
        row.push(Cell::plain(r.reached_gain_pct().map_or("n/a".into(), pct)));
        row.push(Cell::plain(peak(r.base)));
        row.push(Cell::plain(peak(r.new)));
        row.push(Cell::plain(r.peak_gain_pct().map_or("n/a".into(), pct)));
        g.rows.push(row);
    }
    vec![Block::Heading(2, "Load ramps".into()), Block::Table(g)]
}
