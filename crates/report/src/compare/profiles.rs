//! Where the CPU time went, base against new: for every point profiled on both sides, the
//! images and symbols whose share of the samples grew or shrank most, the frames whose own
//! CPU time per unit of work moved most (with their callers), the counters per unit, and in
//! HTML the new side's flame graph coloured by the change per unit.

use crate::compare::counters::{correct_counters, counter_compares, counters_text, Counters, COUNTERS_FDR};
use crate::compare::frames::frames_text;
use crate::model::{group_cells, GroupKey, Side};
use crate::profile::{changes, merge, name_of, Merged};
use crate::render::doc::Block;
use racehorse_core::{CellResult, WorkUnit};
use std::fmt::Write;

fn point_name(k: &GroupKey) -> String {
    let params: Vec<String> = k
        .params
        .iter()
        .map(|(n, v)| format!("{n}={}", racehorse_core::params::display_value(n, v)))
        .collect();
    format!("{} {}", k.workload, params.join(" ")).trim_end().to_string()
}

/// One point profiled on both sides.
pub(crate) struct Point<'a> {
    pub(crate) key: GroupKey,
    pub(crate) unit: WorkUnit,
    pub(crate) base: Merged,
    pub(crate) new: Merged,
    pub(crate) base_cells: Vec<&'a CellResult>,
    pub(crate) new_cells: Vec<&'a CellResult>,
}

pub(crate) fn picked(s: &Side) -> Vec<CellResult> {
    s.cells.iter().filter(|c| s.variant.as_ref().is_none_or(|v| &c.spec.variant == v)).cloned().collect()
}

/// The points profiled on both sides, in point order.
pub(crate) fn points<'a>(b_cells: &'a [CellResult], n_cells: &'a [CellResult]) -> Vec<Point<'a>> {
    let (b, n) = (group_cells(b_cells, false), group_cells(n_cells, false));
    let mut out = Vec::new();
    for (key, bg) in b {
        let Some(ng) = n.get(&key) else { continue };
        let (Some(bm), Some(nm)) = (merge(&bg.ok), merge(&ng.ok)) else { continue };
        out.push(Point {
            unit: bg.unit,
            base: bm,
            new: nm,
            base_cells: bg.ok,
            new_cells: ng.ok.clone(),
            key,
        });
    }
    out
}

/// Each point's counters, corrected over all of them (one new side's family).
pub(crate) fn side_counters(points: &[Point]) -> Vec<Counters> {
    let mut out: Vec<Counters> =
        points.iter().map(|p| counter_compares(&p.base_cells, &p.new_cells)).collect();
    correct_counters(&mut out, COUNTERS_FDR);
    out
}

fn point_text(p: &Point, counters: &Counters, top: usize) -> String {
    let mut out = String::new();
    for (what, list) in [
        ("images", changes(&p.base.images, &p.new.images, top)),
        ("symbols", changes(&p.base.symbols, &p.new.symbols, top)),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ =
            writeln!(out, "  {:>7}  {:>7}  {:>7}  {what} by share of samples", "base %", "new %", "change");
        for c in list {
            let _ = writeln!(
                out,
                "  {:>7.2}  {:>7.2}  {:>+7.2}  {}",
                c.base_pct,
                c.new_pct,
                c.delta_pp(),
                name_of(&c.image, &c.symbol)
            );
        }
    }
    if let (Some(b), Some(n)) = (&p.base.flame, &p.new.flame) {
        out.push_str(&frames_text(b, n, p.unit, top));
    } else if p.base.flame.is_some() || p.new.flame.is_some() {
        out.push_str(
            "  call stacks were recorded on one side only: record both with --profile callgraph=fp\n",
        );
    }
    out.push_str(&counters_text(counters));
    out
}

/// For every point profiled on both sides: the images and symbols whose share grew or
/// shrank most, the frames that moved most per unit of work, and the counters per unit.
/// Empty when no point was profiled on both.
pub fn compare_profiles_text(base: &Side, new: &Side, top: usize) -> String {
    let (b_cells, n_cells) = (picked(base), picked(new));
    let mut out = String::new();
    let points = points(&b_cells, &n_cells);
    for (p, counters) in points.iter().zip(side_counters(&points)) {
        let _ = writeln!(
            out,
            "\nProfile changes, {} (shares: base → new, change in points; per unit: base → new, ratio)",
            point_name(&p.key)
        );
        out.push_str(&point_text(p, &counters, top));
    }
    if !out.is_empty() {
        out.insert_str(0, &format!("\nWhere the CPU time went: {} → {}\n", base.name(), new.name()));
    }
    out
}

/// The same as blocks of an HTML page: per point a heading, the new side's flame graph
/// coloured by the change per unit of work (when both sides have call stacks), and the text.
pub fn compare_profiles_blocks(base: &Side, new: &Side, top: usize) -> Vec<Block> {
    let (b_cells, n_cells) = (picked(base), picked(new));
    let mut out = Vec::new();
    let points = points(&b_cells, &n_cells);
    for (p, counters) in points.iter().zip(side_counters(&points)) {
        let name = point_name(&p.key);
        out.push(Block::Heading(
            2,
            format!("Where the CPU time went, {name}: {} → {}", base.name(), new.name()),
        ));
        if let (Some(b), Some(n)) = (&p.base.flame, &p.new.flame) {
            let title =
                format!("{name}: {} coloured by CPU per unit of work against {}", new.name(), base.name());
            out.push(Block::Chart(crate::flame::diff_chart(b, n, &title, p.unit)));
        }
        out.push(Block::Pre(point_text(p, &counters, top).trim_end().to_string()));
    }
    out
}
