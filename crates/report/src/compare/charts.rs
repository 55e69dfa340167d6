//! Builds a comparison's charts from the model: throughput against load (a log2 axis for
//! counts) with one line per other parameter set (base dashed, new solid), each mean with its
//! interval as an error bar and every repetition as a dot; relative change per point as bars
//! coloured by significance; CPU per unit of work per point (user and kernel stacked); and per
//! workload the latency percentiles and the engines' own figures. Only resolved, finite
//! figures reach a chart, so they alone set its axes; noisy points are drawn pale, not judged.

use crate::compare::comparison::Comparison;
use crate::compare::items::ItemKind;
use crate::compare::metric::MetricCompare;
use crate::compare::table::{has_items, WorkloadTable};
use crate::model::{load_axis, split_load, x_log2, Metric};
use crate::render::chart::{truncated, MAX_BARS};
use crate::render::units::unit_view;
use racehorse_chart::{Bar, BarChart, LineChart, Series, StackBar, StackGroup, StackedBarChart};
use std::collections::BTreeMap;

/// The latency line chart shows at most this many operations (each a base and a new line).
const MAX_LATENCY_LINES: usize = 8;

/// The bar colour of a compared figure: coloured only when the change is significant after
/// the correction, whatever its size; grey when tested and not significant; pale when there
/// is no interval (fewer than 3 repetitions) or the point is noisy.
pub fn chart_verdict(m: &MetricCompare) -> racehorse_chart::Verdict {
    use racehorse_chart::Verdict as V;
    if m.noisy_window {
        return V::Noisy;
    }
    match (m.significant, m.gain_pct) {
        (Some(true), Some(g)) if g > 0.0 => V::Better,
        (Some(true), Some(g)) if g < 0.0 => V::Worse,
        (Some(_), _) => V::Same,
        (None, _) => V::Untested,
    }
}

/// Adds one side's mean, interval and repetitions at `x` to a series (values × `scale`).
fn add_point(s: &mut Series, x: f64, values: &[f64], scale: f64, level: f64) {
    let Some(sum) = racehorse_stats::Summary::of(values) else { return };
    let mean = sum.mean * scale;
    s.points.push((x, mean));
    if let Some(hw) = racehorse_stats::relative_half_width(values, level) {
        // Throughput and latency are never negative: the interval is drawn from 0 at most.
        s.intervals.push((x, (mean * (1.0 - hw)).max(0.0), mean * (1.0 + hw)));
    }
    s.reps.extend(values.iter().map(|v| (x, v * scale)));
}

/// Throughput against the load axis: per other-parameter set, a dashed base line and a
/// solid line per new side, sharing a colour; error bars are the t-interval of each mean at
/// the comparison's level, dots the single repetitions.
fn compare_scaling(c: &Comparison, t: &WorkloadTable) -> Option<String> {
    let axis = load_axis(&t.columns)?;
    let u = unit_view(t.unit);
    let level = c.options.level;
    let mut lines: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    let color_of: BTreeMap<String, usize> = {
        let keys: std::collections::BTreeSet<String> =
            t.rows.iter().filter_map(|r| split_load(&r.params, &axis, &t.columns)).map(|(_, k)| k).collect();
        keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect()
    };
    for row in &t.rows {
        let Some((x, key)) = split_load(&row.params, &axis, &t.columns) else { continue };
        let color = color_of.get(&key).copied().unwrap_or(0);
        let entry = lines.entry(key.clone()).or_insert_with(|| {
            (0..=c.news.len())
                .map(|i| {
                    let who = if i == 0 { "base".to_string() } else { c.news[i - 1].name.clone() };
                    let name = if key.is_empty() { who } else { format!("{key} {who}") };
                    Series::line(name, Vec::new(), i == 0, color)
                })
                .collect()
        });
        for (side, cell) in row.sides.iter().enumerate() {
            let Some(m) = cell.as_ref().and_then(|s| s.metric(Metric::Throughput)) else { continue };
            if m.below_resolution {
                continue;
            }
            if side == 0 {
                add_point(&mut entry[0], x, &m.base_values, u.tput_scale, level);
            }
            add_point(&mut entry[side + 1], x, &m.new_values, u.tput_scale, level);
        }
    }
    let chart = LineChart {
        title: format!("{}: throughput vs {axis}", t.title()),
        x_label: format!("{axis} (log2)"),
        y_label: format!("throughput ({})", u.tput_label),
        series: lines.into_values().flatten().collect(),
        y_from_zero: true,
        x_log2: x_log2(&axis),
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
        .map(|(color, (key, points))| {
            Series::line(if key.is_empty() { "all".to_string() } else { key }, points, false, color)
        })
        .collect();
    let vs = if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() };
    let chart = LineChart {
        title: format!("{}: relative throughput vs {axis}{vs}", t.title()),
        x_label: format!("{axis} (log2)"),
        y_label: "throughput change vs base (%)".into(),
        series,
        y_from_zero: true,
        x_log2: x_log2(&axis),
    };
    Some(chart.to_svg())
}

/// A bar of a compared figure: its gain, its interval as gains, its significance colour.
fn gain_bar(label: String, metric: Metric, m: &MetricCompare) -> Option<Bar> {
    let value = m.gain_pct.filter(|g| g.is_finite())?;
    let ci = m.ci.map(|ci| {
        let (a, b) = (metric.gain_pct(ci.lo), metric.gain_pct(ci.hi));
        (a.min(b), a.max(b))
    });
    Some(Bar { label, value, ci, verdict: chart_verdict(m) })
}

fn row_label(label: &str) -> String {
    if label.is_empty() {
        "all".into()
    } else {
        label.to_string()
    }
}

/// Relative throughput and CPU-per-unit change per point, one bar chart each per new side.
fn compare_bars(c: &Comparison, t: &WorkloadTable, side: usize, metric: Metric) -> String {
    let bars: Vec<Bar> = t
        .rows
        .iter()
        .filter_map(|row| {
            let m = row.sides.get(side)?.as_ref()?.metric(metric)?;
            gain_bar(row_label(&row.label), metric, m)
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

/// The change of every item of a kind per point and item — for latencies the p99 only (the
/// table has all three) — as bars coloured by significance; None when the table has none.
fn item_bars(c: &Comparison, t: &WorkloadTable, side: usize, kind: ItemKind) -> Option<String> {
    if !has_items(t, side, kind) {
        return None;
    }
    let one_row = t.rows.len() == 1;
    let mut bars: Vec<Bar> = Vec::new();
    for row in &t.rows {
        let Some(cell) = row.sides.get(side).and_then(Option::as_ref) else { continue };
        for i in cell.items.iter().filter(|i| i.kind == kind && (kind == ItemKind::Figure || i.stat == "p99"))
        {
            let label = if one_row { i.label() } else { format!("{} {}", row_label(&row.label), i.label()) };
            bars.extend(gain_bar(label, i.cmp.metric, &i.cmp));
        }
    }
    let total = bars.len();
    let what = match kind {
        ItemKind::Latency => "p99 latency (shorter is better)",
        ItemKind::Figure => "engine figures",
    };
    let vs = if c.news.len() > 1 { format!(", {}", c.news[side].name) } else { String::new() };
    let chart = BarChart {
        title: truncated(format!("{}: {what} vs base{vs}", t.title()), MAX_BARS.min(total), total),
        y_label: "change vs base (%, + = better)".into(),
        bars: bars.into_iter().take(MAX_BARS).collect(),
    };
    Some(chart.to_svg())
}

/// p99 latency per operation against the load axis, base dashed and new solid, with error
/// bars and repetitions as for throughput; None without a load axis or latencies.
fn latency_scaling(c: &Comparison, t: &WorkloadTable) -> Option<String> {
    let axis = load_axis(&t.columns)?;
    let mut lines: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    let mut max_ns = 0.0_f64;
    for row in &t.rows {
        for cell in row.sides.iter().flatten() {
            for i in cell.items.iter().filter(|i| i.kind == ItemKind::Latency && i.stat == "p99") {
                max_ns = i.cmp.base_values.iter().chain(&i.cmp.new_values).fold(max_ns, |m, v| m.max(*v));
            }
        }
    }
    let (unit, scale) = crate::compare::item_layout::latency_unit(max_ns);
    for row in &t.rows {
        let Some((x, key)) = split_load(&row.params, &axis, &t.columns) else { continue };
        for (side, cell) in row.sides.iter().enumerate() {
            let Some(cell) = cell else { continue };
            for i in cell.items.iter().filter(|i| i.kind == ItemKind::Latency && i.stat == "p99") {
                let k = if key.is_empty() { i.item.clone() } else { format!("{key} {}", i.item) };
                let color = lines.len();
                let entry = lines.entry(k.clone()).or_insert_with(|| {
                    (0..=c.news.len())
                        .map(|s| {
                            let who = if s == 0 { "base".to_string() } else { c.news[s - 1].name.clone() };
                            Series::line(format!("{k} {who}"), Vec::new(), s == 0, color)
                        })
                        .collect()
                });
                if side == 0 {
                    add_point(&mut entry[0], x, &i.cmp.base_values, scale, c.options.level);
                }
                add_point(&mut entry[side + 1], x, &i.cmp.new_values, scale, c.options.level);
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let total = lines.len();
    let title = format!("{}: p99 latency vs {axis}", t.title());
    let title = if total > MAX_LATENCY_LINES {
        format!("{title} (first {MAX_LATENCY_LINES} of {total} operations)")
    } else {
        title
    };
    let chart = LineChart {
        title,
        x_label: format!("{axis} (log2)"),
        y_label: format!("p99 latency ({unit})"),
        series: lines.into_values().take(MAX_LATENCY_LINES).flatten().collect(),
        y_from_zero: true,
        x_log2: x_log2(&axis),
    };
    Some(chart.to_svg())
}

/// A stacked bar with the interval of the mean of its total and each repetition's total.
fn with_spread(bar: StackBar, totals: &[f64], scale: f64, level: f64) -> StackBar {
    let interval =
        racehorse_stats::Summary::of(totals).zip(racehorse_stats::relative_half_width(totals, level));
    StackBar {
        interval: interval
            .map(|(s, hw)| ((s.mean * (1.0 - hw) * scale).max(0.0), s.mean * (1.0 + hw) * scale)),
        reps: totals.iter().map(|v| v * scale).collect(),
        ..bar
    }
}

/// CPU per unit of work per point: base and each new side, user and kernel stacked, with the
/// interval of the total's mean as an error bar and each repetition's total as a dot.
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
                let total = resolved(Metric::CpuTotalPerUnit);
                let level = c.options.level;
                if side == 0 || bars.is_empty() {
                    let b = seg(
                        user.and_then(|m| m.base.map(|s| s.mean)),
                        kernel.and_then(|m| m.base.map(|s| s.mean)),
                    );
                    let values = total.map_or(&[][..], |m| &m.base_values);
                    bars.push(with_spread(StackBar::new("base", b), values, u.cpu_scale, level));
                }
                let n =
                    seg(user.and_then(|m| m.new.map(|s| s.mean)), kernel.and_then(|m| m.new.map(|s| s.mean)));
                let name = if c.news.len() > 1 { format!("new {}", side + 1) } else { "new".to_string() };
                let values = total.map_or(&[][..], |m| &m.new_values);
                bars.push(with_spread(StackBar::new(name, n), values, u.cpu_scale, level));
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
    out.extend(latency_scaling(c, t));
    for side in 0..c.news.len() {
        out.extend(item_bars(c, t, side, ItemKind::Latency));
        out.extend(item_bars(c, t, side, ItemKind::Figure));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::comparison::compare;
    use crate::compare::metric::CompareOptions;
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
