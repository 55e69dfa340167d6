//! The per-area table that ends a run across areas (`racehorse run quick`): one row per
//! workload, variant and unit with its area (seed 000's summary shape for a single run), how
//! many points it measured, and the range of the points' medians of throughput and of total
//! CPU per unit. A tour reads its result off one table; the full tables come before it. The
//! report of a run ends with it too.

use crate::model::Metric;
use crate::render::doc::{to_text, Block, Cell, Grid};
use crate::render::units::{num, unit_view};
use crate::run::report::{RunReport, RunRow, RunTable};
use std::collections::BTreeSet;

/// What the area table says it holds.
const CAPTION: &str = "By area (medians; a range spans the workload's points):";

/// The table as text, or None when the run covers fewer than two areas (then the workload's
/// own table already says it all).
pub fn areas_text(r: &RunReport) -> Option<String> {
    let grid = areas_grid(r)?;
    let areas: BTreeSet<&str> =
        grid.rows.iter().filter_map(|row| row.first()).map(|c| c.text.as_str()).collect();
    (areas.len() >= 2).then(|| format!("\n{}", to_text(&[Block::Table(grid)])))
}

/// One row per workload, variant and unit that measured a point, in the order they ran;
/// None when none did.
pub fn areas_grid(r: &RunReport) -> Option<Grid> {
    let mut tables: Vec<&RunTable> = r.tables.iter().filter(|t| measured(t).next().is_some()).collect();
    if tables.is_empty() {
        return None;
    }
    tables.sort_by_key(|t| measured(t).map(|row| row.first_cell).min());
    let head = ["area", "workload", "points", "throughput", "total CPU/unit", "noisy"];
    let mut grid = Grid::new("areas", CAPTION, head.map(String::from).to_vec(), 2).compact();
    for t in tables {
        let view = unit_view(t.unit);
        let noisy = measured(t).filter(|row| !row.noisy_reps.is_empty()).count();
        let cells = [
            t.area.clone(),
            t.title(),
            measured(t).count().to_string(),
            range(t, Metric::Throughput, view.tput_scale, view.tput_label),
            range(t, Metric::CpuTotalPerUnit, view.cpu_scale, view.cpu_label),
            if noisy == 0 { "-".into() } else { noisy.to_string() },
        ];
        grid.rows.push(cells.into_iter().map(Cell::plain).collect());
    }
    Some(grid)
}

/// The points a cell of their own measured (not the summed `overall` rows).
fn measured(t: &RunTable) -> impl Iterator<Item = &RunRow> {
    t.rows.iter().filter(|row| !row.summed && row.n > 0)
}

/// `12.3 MB/s` for one point, `1.2 – 3.4 MB/s` for several; points below resolution are
/// said to be, never shown as numbers.
fn range(t: &RunTable, m: Metric, scale: f64, label: &str) -> String {
    let medians: Vec<f64> = measured(t)
        .filter(|row| !row.below.contains(&m))
        .filter_map(|row| row.metric(m))
        .map(|s| s.median * scale)
        .collect();
    let below = measured(t).filter(|row| row.below.contains(&m)).count();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let shown = match medians.len() {
        0 => String::new(),
        1 => format!("{} {label}", num(lo)),
        _ => format!("{} – {} {label}", num(lo), num(hi)),
    };
    match (shown.is_empty(), below) {
        (true, 0) => "n/a".into(),
        (true, _) => "below resolution".into(),
        (false, 0) => shown,
        (false, b) => format!("{shown} ({b} below resolution)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::report::run_report;
    use crate::synth::{synthetic_side, Shape};

    fn area(w: &str) -> String {
        format!("Area of {w}")
    }

    #[test]
    fn a_run_across_areas_ends_in_one_row_per_workload_in_run_order() {
        let shape = Shape { workloads: 2, clients: vec![1, 4], cpus: vec![1], reps: 1, ..Shape::default() };
        let mut side = synthetic_side(3, "tour", &shape);
        side.cells.reverse(); // w1 ran first
        let text = areas_text(&run_report(&side, 0.05, &area)).expect("two areas");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("By area"), "{text}");
        assert!(lines[2].starts_with("area"), "{text}");
        let w1 = lines.iter().position(|l| l.starts_with("Area of w1")).expect(&text);
        let w0 = lines.iter().position(|l| l.starts_with("Area of w0")).expect(&text);
        assert!(w1 < w0, "run order, not alphabetical: {text}");
        assert!(lines[w0].contains(" 2 ") && lines[w0].contains(" – "), "two points, a range: {text}");
    }

    #[test]
    fn one_point_is_one_figure_and_below_resolution_is_never_a_number() {
        let shape = Shape { workloads: 2, clients: vec![1], cpus: vec![1], reps: 1, ..Shape::default() };
        let mut side = synthetic_side(3, "tour", &shape);
        for c in side.cells.iter_mut().filter(|c| c.spec.workload == "w1") {
            c.quality.mark_below(racehorse_core::quality::CPU, "window too short");
        }
        let text = areas_text(&run_report(&side, 0.05, &area)).expect("two areas");
        let w0 = text.lines().find(|l| l.starts_with("Area of w0")).expect(&text);
        let w1 = text.lines().find(|l| l.starts_with("Area of w1")).expect(&text);
        assert!(!w0.contains(" – "), "one point, one figure: {text}");
        assert!(w1.contains("below resolution"), "{text}");
    }

    #[test]
    fn one_area_needs_no_table() {
        let shape = Shape { workloads: 1, clients: vec![1], cpus: vec![1], reps: 1, ..Shape::default() };
        let side = synthetic_side(3, "one", &shape);
        assert_eq!(areas_text(&run_report(&side, 0.05, &area)), None);
    }
}
