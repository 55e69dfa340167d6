//! Seed-000-style summaries: per area (seed 000's areas; each point's comes from its engine's
//! `summary_area`, see [`crate::catalogue`]) and workload, the throughput change and the CPU
//! consumption savings as a range over the scaling points after ramp-up, and their geometric
//! means; plus the geometric mean over everything. Points with a noisy repetition and figures
//! below resolution are left out of every range and mean, and counted instead. Each row names
//! its workload and the parameters that tell it from the other rows of the same workload.

use crate::compare::table::{Row, WorkloadTable};
use crate::model::{load_axis, shown, value_cmp, Metric, Verdict};
use racehorse_core::Value;
use racehorse_stats::{geomean, range};
use serde::Serialize;

/// The rows of a table per seed area, in order of first appearance.
pub fn rows_by_area(t: &WorkloadTable) -> Vec<(String, Vec<&Row>)> {
    let mut out: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in &t.rows {
        match out.iter_mut().find(|(a, _)| *a == r.area) {
            Some((_, rows)) => rows.push(r),
            None => out.push((r.area.clone(), vec![r])),
        }
    }
    out
}

/// One line of the summary table for one new side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Index of the new side.
    pub side: usize,
    pub area: String,
    pub workload: String,
    /// The parameters that tell this row from the other rows of the same workload, `k=v`
    /// (or `k=a,b` for values that vary inside the row); "" when the workload has one row.
    pub params: String,
    pub throughput_range_pct: Option<(f64, f64)>,
    /// Throughput change of the geometric mean of ratios, in %.
    pub throughput_geomean_pct: Option<f64>,
    /// CPU consumption (total CPU per unit) savings in % (min, max); + is less CPU.
    pub cpu_savings_range_pct: Option<(f64, f64)>,
    pub cpu_savings_geomean_pct: Option<f64>,
    /// Matrix points the figures cover.
    pub points: usize,
    /// Points left out because a repetition on either side was noisy.
    pub noisy_points: usize,
    /// Points (not noisy) whose throughput or total CPU per unit is below its resolution, so
    /// left out of that figure's range and mean.
    pub below_resolution_points: usize,
    /// Of those, points with a significantly better / worse throughput.
    pub throughput_significant: (usize, usize),
    /// Of those, points with significantly lower / higher total CPU per unit.
    pub cpu_significant: (usize, usize),
    /// Ramp-up points left out, e.g. `clients=1`; None when all points count.
    pub ramp_up_excluded: Option<String>,
}

/// Geometric means over every matched point of every workload, for one new side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overall {
    pub side: usize,
    pub throughput_geomean_pct: Option<f64>,
    pub cpu_savings_geomean_pct: Option<f64>,
    pub points: usize,
}

/// Geometric means over every matched point of the workloads of one area, for one new side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AreaSummary {
    pub side: usize,
    pub area: String,
    pub throughput_geomean_pct: Option<f64>,
    pub cpu_savings_geomean_pct: Option<f64>,
    pub workloads: usize,
    pub points: usize,
}

/// Per new side and area (in order of first appearance), geometric means over all points.
pub fn by_area(tables: &[WorkloadTable], sides: usize) -> Vec<AreaSummary> {
    let parts: Vec<(String, &str, Vec<&Row>)> = tables
        .iter()
        .flat_map(|t| rows_by_area(t).into_iter().map(move |(a, rows)| (a, t.workload.as_str(), rows)))
        .collect();
    let mut areas: Vec<&str> = Vec::new();
    for (a, _, _) in &parts {
        if !areas.contains(&a.as_str()) {
            areas.push(a);
        }
    }
    let mut out = Vec::new();
    for side in 0..sides {
        for area in &areas {
            let in_area = || parts.iter().filter(|(a, _, _)| a == area);
            let tput = ratios(in_area().flat_map(|p| p.2.iter().copied()), side, Metric::Throughput);
            let cpu = ratios(in_area().flat_map(|p| p.2.iter().copied()), side, Metric::CpuTotalPerUnit);
            let mut workloads: Vec<&str> = in_area().map(|p| p.1).collect();
            workloads.dedup();
            out.push(AreaSummary {
                side,
                area: area.to_string(),
                throughput_geomean_pct: geomean(&tput).map(|r| Metric::Throughput.gain_pct(r)),
                cpu_savings_geomean_pct: geomean(&cpu).map(|r| Metric::CpuTotalPerUnit.gain_pct(r)),
                workloads: workloads.len(),
                points: tput.len(),
            });
        }
    }
    out
}

/// Ratios of a metric on side `side` over the given rows: finite and positive, from points
/// without a noisy repetition (figures below resolution have no ratio).
fn ratios<'a>(rows: impl Iterator<Item = &'a Row>, side: usize, m: Metric) -> Vec<f64> {
    rows.filter_map(|r| r.sides.get(side)?.as_ref()?.metric(m))
        .filter(|mc| !mc.noisy_window)
        .filter_map(|mc| mc.ratio)
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect()
}

/// Of the given rows present on `side`: how many are noisy, and how many (not noisy) have
/// throughput or total CPU per unit below its resolution.
fn left_out<'a>(rows: impl Iterator<Item = &'a Row>, side: usize) -> (usize, usize, usize) {
    let (mut present, mut noisy, mut below) = (0, 0, 0);
    for r in rows {
        let Some(cell) = r.sides.get(side).and_then(Option::as_ref) else { continue };
        present += 1;
        if !r.base_noisy_reps.is_empty() || !cell.noisy_reps.is_empty() {
            noisy += 1;
        } else if [Metric::Throughput, Metric::CpuTotalPerUnit]
            .iter()
            .any(|m| cell.metric(*m).is_some_and(|mc| mc.below_resolution))
        {
            below += 1;
        }
    }
    (present, noisy, below)
}

/// Points whose metric is significantly better and worse than base.
fn significant<'a>(rows: impl Iterator<Item = &'a Row>, side: usize, m: Metric) -> (usize, usize) {
    let mut out = (0, 0);
    for mc in rows.filter_map(|r| r.sides.get(side)?.as_ref()?.metric(m)) {
        match (mc.significant, mc.verdict) {
            (Some(true), Some(Verdict::Better)) => out.0 += 1,
            (Some(true), Some(Verdict::Worse)) => out.1 += 1,
            _ => {}
        }
    }
    out
}

/// Rows after ramp-up: when the table has a load axis (clients, procs, connections …) with
/// at least three values among `rows`, those at its smallest value are left out, as the seeds
/// quote ranges "after ramp up"; otherwise every row.
fn ramp_up_of<'a>(table: &WorkloadTable, rows: Vec<&'a Row>) -> (Vec<&'a Row>, Option<String>) {
    let Some(axis) = load_axis(&table.columns) else {
        return (rows, None);
    };
    let mut values: Vec<_> = rows.iter().filter_map(|r| r.params.get(&axis)).collect();
    values.sort_by(|a, b| value_cmp(a, b));
    values.dedup();
    if values.len() < 3 {
        return (rows, None);
    }
    let first = values[0].clone();
    let kept = rows.iter().copied().filter(|r| r.params.get(&axis) != Some(&first)).collect();
    (kept, Some(format!("{axis}={first}")))
}

/// One summary row before its label: a table's rows of one area.
struct Part<'a> {
    table: &'a WorkloadTable,
    area: String,
    rows: Vec<&'a Row>,
}

/// `k=v` for the parameters equal across `rows`, `k=a,b` for the others (values in order).
fn row_params(rows: &[&Row]) -> Vec<(String, String)> {
    let mut names: Vec<&String> = rows.iter().flat_map(|r| r.params.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| {
            let mut vals: Vec<&Value> = rows.iter().filter_map(|r| r.params.get(n)).collect();
            vals.sort_by(|a, b| value_cmp(a, b));
            vals.dedup();
            let mut text: Vec<String> = vals.iter().take(4).map(|v| shown(n, v)).collect();
            if vals.len() > 4 {
                text.push("…".into());
            }
            (n.clone(), format!("{n}={}", text.join(",")))
        })
        .collect()
}

/// Per part, the parameters that tell it from the other parts of the same workload title:
/// those whose values differ between them; the unit when nothing else does.
fn distinguishing(parts: &[Part<'_>]) -> Vec<String> {
    let described: Vec<Vec<(String, String)>> = parts.iter().map(|p| row_params(&p.rows)).collect();
    (0..parts.len())
        .map(|i| {
            let title = parts[i].table.title();
            let peers: Vec<usize> =
                (0..parts.len()).filter(|&j| j != i && parts[j].table.title() == title).collect();
            if peers.is_empty() {
                return String::new();
            }
            let differs = |(name, text): &(String, String)| {
                peers
                    .iter()
                    .any(|&j| described[j].iter().find(|(n, _)| n == name).is_none_or(|(_, t)| t != text))
            };
            let differing: Vec<&str> =
                described[i].iter().filter(|d| differs(d)).map(|(_, t)| t.as_str()).collect();
            // Parameters fixed inside the row say it best; varying ones only when none does.
            let fixed: Vec<&str> = differing.iter().copied().filter(|t| !t.contains(',')).collect();
            let label = if fixed.is_empty() { differing } else { fixed };
            if label.is_empty() {
                format!("in {}", crate::render::units::unit_view(parts[i].table.unit).tput_label)
            } else {
                label.join(" ")
            }
        })
        .collect()
}

/// Summary rows for every new side and workload table (a row per seed area of a table).
pub fn summarise(tables: &[WorkloadTable], sides: usize) -> Vec<SummaryRow> {
    let parts: Vec<Part<'_>> = tables
        .iter()
        .flat_map(|t| rows_by_area(t).into_iter().map(move |(area, rows)| Part { table: t, area, rows }))
        .collect();
    let labels = distinguishing(&parts);
    let mut out = Vec::new();
    for side in 0..sides {
        for (p, label) in parts.iter().zip(&labels) {
            let (rows, excluded) = ramp_up_of(p.table, p.rows.clone());
            let tput = ratios(rows.iter().copied(), side, Metric::Throughput);
            let cpu = ratios(rows.iter().copied(), side, Metric::CpuTotalPerUnit);
            let (present, noisy_points, below_resolution_points) = left_out(rows.iter().copied(), side);
            if present == 0 {
                continue;
            }
            let gain = |r: f64| Metric::Throughput.gain_pct(r);
            let save = |r: f64| Metric::CpuTotalPerUnit.gain_pct(r);
            out.push(SummaryRow {
                side,
                area: p.area.clone(),
                workload: p.table.title(),
                params: label.clone(),
                throughput_range_pct: range(&tput).map(|(lo, hi)| (gain(lo), gain(hi))),
                throughput_geomean_pct: geomean(&tput).map(gain),
                // Savings fall as the ratio rises: the range flips.
                cpu_savings_range_pct: range(&cpu).map(|(lo, hi)| (save(hi), save(lo))),
                cpu_savings_geomean_pct: geomean(&cpu).map(save),
                points: tput.len().max(cpu.len()),
                noisy_points,
                below_resolution_points,
                throughput_significant: significant(rows.iter().copied(), side, Metric::Throughput),
                cpu_significant: significant(rows.iter().copied(), side, Metric::CpuTotalPerUnit),
                ramp_up_excluded: excluded,
            });
        }
    }
    out
}

/// Overall geometric means per new side, over every matched point (ramp-up included).
pub fn overall(tables: &[WorkloadTable], sides: usize) -> Vec<Overall> {
    (0..sides)
        .map(|side| {
            let all = || tables.iter().flat_map(|t| t.rows.iter());
            let tput = ratios(all(), side, Metric::Throughput);
            let cpu = ratios(all(), side, Metric::CpuTotalPerUnit);
            Overall {
                side,
                throughput_geomean_pct: geomean(&tput).map(|r| Metric::Throughput.gain_pct(r)),
                cpu_savings_geomean_pct: geomean(&cpu).map(|r| Metric::CpuTotalPerUnit.gain_pct(r)),
                points: tput.len(),
            }
        })
        .collect()
}

/// `25% to 30%`, or `30%` when both ends round alike, as the seeds write ranges.
pub fn range_text(r: Option<(f64, f64)>) -> String {
    match r {
        None => "n/a".into(),
        Some((lo, hi)) => {
            let (a, b) = (format!("{lo:+.0}%"), format!("{hi:+.0}%"));
            if a == b {
                a
            } else {
                format!("{a} to {b}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_like_the_seeds() {
        assert_eq!(range_text(Some((25.2, 30.4))), "+25% to +30%");
        assert_eq!(range_text(Some((29.8, 30.1))), "+30%");
        assert_eq!(range_text(None), "n/a");
    }
}
