//! The one-run report's charts: throughput against the load axis (log2 for counts), CPU per
//! unit of work per point (user and kernel stacked), and the busiest cell's monitor series.

use crate::model::{load_axis, split_load, x_log2, Metric};
use crate::render::chart::{truncated, MAX_BARS};
use crate::render::units::unit_view;
use crate::run::report::RunTable;
use racehorse_chart::{LineChart, Series, StackBar, StackGroup, StackedBarChart};
use std::collections::BTreeMap;

/// Throughput against the load axis: per other-parameter set, the median with the 95%
/// t-interval of the mean as an error bar and every ok repetition as a dot.
fn run_scaling(t: &RunTable) -> Option<String> {
    let axis = load_axis(&t.columns)?;
    let u = unit_view(t.unit);
    let mut lines: BTreeMap<String, Series> = BTreeMap::new();
    for row in &t.rows {
        let Some((x, key)) = split_load(&row.params, &axis, &t.columns) else { continue };
        let Some(s) = row.metric(Metric::Throughput) else { continue };
        let color = lines.len();
        let name = if key.is_empty() { "median".to_string() } else { key.clone() };
        let series = lines.entry(key).or_insert_with(|| Series::line(name, Vec::new(), false, color));
        let median = s.median * u.tput_scale;
        series.points.push((x, median));
        let reps: Vec<f64> = row
            .reps
            .iter()
            .filter(|r| r.status == racehorse_core::CellStatus::Ok)
            .filter_map(|r| r.units_per_s)
            .collect();
        if let (Some(hw), Some(sum)) =
            (racehorse_stats::relative_half_width(&reps, 0.95), racehorse_stats::Summary::of(&reps))
        {
            let mean = sum.mean * u.tput_scale;
            series.intervals.push((x, mean * (1.0 - hw), mean * (1.0 + hw)));
        }
        series.reps.extend(reps.iter().map(|v| (x, v * u.tput_scale)));
    }
    Some(
        LineChart {
            title: format!("{}: throughput vs {axis}", t.title()),
            x_label: format!("{axis} (log2)"),
            y_label: format!("throughput ({})", u.tput_label),
            series: lines.into_values().collect(),
            y_from_zero: true,
            x_log2: x_log2(&axis),
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
                bars: vec![StackBar::new(
                    "median",
                    vec![
                        ("user".into(), v(Metric::CpuUserPerUnit)),
                        ("kernel".into(), v(Metric::CpuKernelPerUnit)),
                    ],
                )],
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
        Series::line("user %", pick(|s| s.cpu_user_pct), false, 0),
        Series::line("kernel %", pick(|s| s.cpu_kernel_pct), false, 1),
        Series::line("iowait %", pick(|s| s.cpu_iowait_pct), true, 2),
        Series::line("steal %", pick(|s| s.cpu_steal_pct), true, 3),
    ];
    Some(
        LineChart {
            title: format!("monitor: {}", ts.label),
            x_label: "time since cell start (s)".into(),
            y_label: "CPU (% of online CPUs)".into(),
            series,
            y_from_zero: true,
            x_log2: false,
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
