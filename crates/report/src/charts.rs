//! Builds the report's charts from the models: throughput against load with one line per
//! other parameter set (base dashed, new solid), relative change per point as bars, CPU
//! per unit of work per point (user and kernel stacked), and a cell's monitor series. Only
//! resolved, finite figures reach a chart, so they alone set its axes; noisy points are drawn
//! pale and not judged.

use crate::compare::{Comparison, MetricCompare, WorkloadTable};
use crate::model::{load_axis, params_label, Metric, Verdict};
use crate::runreport::RunTable;
use crate::units::unit_view;
use racehorse_chart::{Bar, BarChart, LineChart, Series, StackBar, StackGroup, StackedBarChart};
use racehorse_core::{Params, Value};
use std::collections::BTreeMap;

/// Bar charts show at most this many points; more would be unreadable.
pub const MAX_BARS: usize = 48;

fn chart_verdict(m: &MetricCompare) -> racehorse_chart::Verdict {
    if m.noisy_window {
        return racehorse_chart::Verdict::Noisy;
    }
    match (m.verdict, m.significant) {
        (Some(Verdict::Better), Some(true) | None) => racehorse_chart::Verdict::Better,
        (Some(Verdict::Worse), Some(true) | None) => racehorse_chart::Verdict::Worse,
        _ => racehorse_chart::Verdict::Same,
    }
}

/// Splits parameters into the load axis value and the rest (the series key).
fn split_load(p: &Params, axis: &str, columns: &[String]) -> Option<(f64, String)> {
    let x = p.get(axis).and_then(Value::as_f64)?;
    let others: Vec<String> = columns.iter().filter(|c| c.as_str() != axis).cloned().collect();
    Some((x, params_label(p, &others)))
}

fn truncated(title: String, shown: usize, total: usize) -> String {
    if total > shown {
        format!("{title} (first {shown} of {total} points)")
    } else {
        title
    }
}

/// Throughput against the load axis: per other-parameter set, a dashed base line and a
/// solid line per new side, sharing a colour.
fn compare_scaling(c: &Comparison, t: &WorkloadTable) -> Option<String> {
    let axis = load_axis(&t.columns)?;
    let u = unit_view(t.unit);
    let mut lines: BTreeMap<String, Vec<Vec<(f64, f64)>>> = BTreeMap::new();
    for row in &t.rows {
        let Some((x, key)) = split_load(&row.params, &axis, &t.columns) else { continue };
        let entry = lines.entry(key).or_insert_with(|| vec![Vec::new(); c.news.len() + 1]);
        for (side, cell) in row.sides.iter().enumerate() {
            let Some(m) = cell.as_ref().and_then(|s| s.metric(Metric::Throughput)) else { continue };
            if side == 0 {
                if let Some(b) = m.base {
                    entry[0].push((x, b.mean * u.tput_scale));
                }
            }
            if let Some(n) = m.new {
                entry[side + 1].push((x, n.mean * u.tput_scale));
            }
        }
    }
    let mut series = Vec::new();
    for (color, (key, sides)) in lines.into_iter().enumerate() {
        for (i, points) in sides.into_iter().enumerate() {
            let who = if i == 0 { "base".to_string() } else { c.news[i - 1].name.clone() };
            let name = if key.is_empty() { who } else { format!("{key} {who}") };
            series.push(Series { name, points, dashed: i == 0, color });
        }
    }
    let chart = LineChart {
        title: format!("{}: throughput vs {axis}", t.title()),
        x_label: axis.clone(),
        y_label: format!("throughput ({})", u.tput_label),
        series,
        y_from_zero: true,
    };
    Some(chart.to_svg())
}

/// seed 000's "relative performance" chart: the throughput change vs base (%) against the
/// load axis, one line per other parameter set (e.g. per CPU count), per new side.
fn compare_relative(c: &Comparison, t: &WorkloadTable, side: usize) -> Option<String> {
    let axis = load_axis(&t.columns)?;
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in &t.rows {
        let Some((x, key)) = split_load(&row.params, &axis, &t.columns) else { continue };
        let gain =
            row.sides.get(side)?.as_ref().and_then(|s| s.metric(Metric::Throughput)).and_then(|m| m.gain_pct);
        if let Some(g) = gain {
            lines.entry(key).or_default().push((x, g));
        }
    }
    if lines.is_empty() {
        return None;
    }
    let series = lines
        .into_iter()
        .enumerate()
        .map(|(color, (key, mut points))| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name: if key.is_empty() { "all".into() } else { key }, points, dashed: false, color }
        })
        .collect();
    let vs = if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() };
    let chart = LineChart {
        title: format!("{}: relative throughput vs {axis}{vs}", t.title()),
        x_label: axis.clone(),
        y_label: "throughput change vs base (%)".into(),
        series,
        y_from_zero: true,
    };
    Some(chart.to_svg())
}

/// Relative throughput and CPU-per-unit change per point, one bar chart each per new side.
fn compare_bars(c: &Comparison, t: &WorkloadTable, side: usize, metric: Metric) -> String {
    let bars: Vec<Bar> = t
        .rows
        .iter()
        .filter_map(|row| {
            let m = row.sides.get(side)?.as_ref()?.metric(metric)?;
            let value = m.gain_pct.filter(|g| g.is_finite())?;
            let ci = m.ci.map(|ci| {
                let (a, b) = (metric.gain_pct(ci.lo), metric.gain_pct(ci.hi));
                (a.min(b), a.max(b))
            });
            Some(Bar {
                label: if row.label.is_empty() { "all".into() } else { row.label.clone() },
                value,
                ci,
                verdict: chart_verdict(m),
            })
        })
        .collect();
    let total = bars.len();
    let what = if metric == Metric::Throughput { "throughput" } else { "CPU per unit savings" };
    let vs = if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() };
    let chart = BarChart {
        title: truncated(format!("{}: {what} vs base{vs}", t.title()), MAX_BARS.min(total), total),
        y_label: "change vs base (%, + = better)".into(),
        bars: bars.into_iter().take(MAX_BARS).collect(),
    };
    chart.to_svg()
}

/// CPU per unit of work per point: base and each new side, user and kernel stacked.
fn compare_cpu(c: &Comparison, t: &WorkloadTable) -> String {
    let u = unit_view(t.unit);
    let groups: Vec<StackGroup> = t
        .rows
        .iter()
        .take(MAX_BARS)
        .map(|row| {
            let mut bars = Vec::new();
            let seg = |user: Option<f64>, kernel: Option<f64>| {
                vec![
                    ("user".to_string(), user.unwrap_or(0.0) * u.cpu_scale),
                    ("kernel".to_string(), kernel.unwrap_or(0.0) * u.cpu_scale),
                ]
            };
            for (side, cell) in row.sides.iter().enumerate() {
                let Some(cell) = cell else { continue };
                let resolved = |m: Metric| cell.metric(m).filter(|mc| !mc.below_resolution);
                let (user, kernel) = (resolved(Metric::CpuUserPerUnit), resolved(Metric::CpuKernelPerUnit));
                if user.is_none() && kernel.is_none() {
                    continue;
                }
                if side == 0 || bars.is_empty() {
                    let b = seg(
                        user.and_then(|m| m.base.map(|s| s.mean)),
                        kernel.and_then(|m| m.base.map(|s| s.mean)),
                    );
                    bars.push(StackBar { name: "base".into(), segments: b });
                }
                let n =
                    seg(user.and_then(|m| m.new.map(|s| s.mean)), kernel.and_then(|m| m.new.map(|s| s.mean)));
                let name = if c.news.len() > 1 { format!("new {}", side + 1) } else { "new".into() };
                bars.push(StackBar { name, segments: n });
            }
            StackGroup { label: if row.label.is_empty() { "all".into() } else { row.label.clone() }, bars }
        })
        .collect();
    StackedBarChart {
        title: truncated(format!("{}: CPU per unit of work", t.title()), groups.len(), t.rows.len()),
        y_label: format!("CPU per unit ({})", u.cpu_label),
        groups,
    }
    .to_svg()
}

/// Every chart of one workload in a comparison.
pub fn compare_charts(c: &Comparison, t: &WorkloadTable) -> Vec<String> {
    let mut out: Vec<String> = compare_scaling(c, t).into_iter().collect();
    for side in 0..c.news.len() {
        out.extend(compare_relative(c, t, side));
        out.push(compare_bars(c, t, side, Metric::Throughput));
        out.push(compare_bars(c, t, side, Metric::CpuTotalPerUnit));
    }
    out.push(compare_cpu(c, t));
    out
}

fn run_scaling(t: &RunTable) -> Option<String> {
    let axis = load_axis(&t.columns)?;
    let u = unit_view(t.unit);
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in &t.rows {
        let Some((x, key)) = split_load(&row.params, &axis, &t.columns) else { continue };
        if let Some(s) = row.metric(Metric::Throughput) {
            lines.entry(key).or_default().push((x, s.median * u.tput_scale));
        }
    }
    let series = lines
        .into_iter()
        .enumerate()
        .map(|(color, (key, points))| Series {
            name: if key.is_empty() { "median".into() } else { key },
            points,
            dashed: false,
            color,
        })
        .collect();
    Some(
        LineChart {
            title: format!("{}: throughput vs {axis}", t.title()),
            x_label: axis.clone(),
            y_label: format!("throughput ({})", u.tput_label),
            series,
            y_from_zero: true,
        }
        .to_svg(),
    )
}

fn run_cpu(t: &RunTable) -> String {
    let u = unit_view(t.unit);
    let groups = t
        .rows
        .iter()
        .take(MAX_BARS)
        .map(|row| {
            let v = |m: Metric| row.metric(m).map_or(0.0, |s| s.median * u.cpu_scale);
            StackGroup {
                label: if row.label.is_empty() { "all".into() } else { row.label.clone() },
                bars: vec![StackBar {
                    name: "median".into(),
                    segments: vec![
                        ("user".into(), v(Metric::CpuUserPerUnit)),
                        ("kernel".into(), v(Metric::CpuKernelPerUnit)),
                    ],
                }],
            }
        })
        .collect::<Vec<_>>();
    StackedBarChart {
        title: truncated(format!("{}: CPU per unit of work", t.title()), groups.len(), t.rows.len()),
        y_label: format!("CPU per unit ({})", u.cpu_label),
        groups,
    }
    .to_svg()
}

fn run_monitor(t: &RunTable) -> Option<String> {
    let ts = t.timeseries.as_ref()?;
    let pick = |f: fn(&racehorse_core::SamplePoint) -> f64| -> Vec<(f64, f64)> {
        ts.samples.iter().map(|s| (s.t_ms as f64 / 1000.0, f(s))).collect()
    };
    let series = vec![
        Series { name: "user %".into(), points: pick(|s| s.cpu_user_pct), dashed: false, color: 0 },
        Series { name: "kernel %".into(), points: pick(|s| s.cpu_kernel_pct), dashed: false, color: 1 },
        Series { name: "iowait %".into(), points: pick(|s| s.cpu_iowait_pct), dashed: true, color: 2 },
        Series { name: "steal %".into(), points: pick(|s| s.cpu_steal_pct), dashed: true, color: 3 },
    ];
    Some(
        LineChart {
            title: format!("monitor: {}", ts.label),
            x_label: "time since cell start (s)".into(),
            y_label: "CPU (% of online CPUs)".into(),
            series,
            y_from_zero: true,
        }
        .to_svg(),
    )
}

/// Every chart of one workload in a one-run report.
pub fn run_charts(t: &RunTable) -> Vec<String> {
    let mut out: Vec<String> = run_scaling(t).into_iter().collect();
    out.push(run_cpu(t));
    out.extend(run_monitor(t));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, CompareOptions};
    use crate::synth::{synthetic_side, Shape};

    /// seed 000's relative-performance chart: one line per CPU count over the load axis.
    #[test]
    fn relative_chart_has_a_line_per_cpu_count_over_the_load() {
        let base = synthetic_side(1, "old", &Shape::default());
        let new = synthetic_side(2, "new", &Shape { speed: 1.3, ..Shape::default() });
        let c = compare(&base, &[new], &CompareOptions::default(), &|_: &str| "Area".to_string()).unwrap();
        let t = &c.tables[0];
        let svg = compare_relative(&c, t, 0).expect("a load axis");
        assert!(svg.contains("relative throughput vs clients"), "{svg}");
        assert!(svg.contains("cpus=1") && svg.contains("cpus=2"), "one series per CPU count");
        assert!(compare_charts(&c, t).iter().any(|s| s == &svg));
    }
}
