//! Writes one sample of each chart kind to /tmp/chart-samples/{line,bar,stacked}.svg, for
//! looking at the rendering by eye (e.g. screenshot with a headless browser).

use std::fs;
use std::path::Path;

use racehorse_chart::{Bar, BarChart, LineChart, Series, StackBar, StackGroup, StackedBarChart, Verdict};

const CLIENTS: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

fn line_chart() -> LineChart {
    let mut series = Vec::new();
    for (color, cpus) in [1.0_f64, 2.0, 4.0, 8.0].into_iter().enumerate() {
        for (dashed, gain) in [(true, 1.0), (false, 1.08)] {
            let points = CLIENTS
                .iter()
                .map(|&c| {
                    let saturation = c.min(cpus * 2.0) / (cpus * 2.0);
                    (c, gain * 420.0 * cpus.sqrt() * (0.35 + 0.65 * saturation) - c * 1.5)
                })
                .collect();
            let run = if dashed { "base" } else { "new" };
            let mut s = Series::line(format!("{run} {cpus} CPUs"), points, dashed, color);
            s.intervals = s.points.iter().map(|&(x, y)| (x, y * 0.97, y * 1.03)).collect();
            s.reps = s.points.iter().flat_map(|&(x, y)| [(x, y * 0.98), (x, y * 1.02)]).collect();
            series.push(s);
        }
    }
    LineChart {
        title: "dbench throughput by clients".into(),
        x_label: "clients (processes)".into(),
        y_label: "throughput (MB/s)".into(),
        series,
        y_from_zero: true,
        x_log2: true,
    }
}

fn bar_chart() -> BarChart {
    let values = [12.5, -7.25, 0.4, 3.1, -18.0, 1.2, 25.0, -2.0, 6.5];
    let bars = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let ci = (i % 3 != 2).then_some((v - 3.0, v + 3.5));
            let verdict = match ci {
                Some((lo, _)) if lo > 0.0 => Verdict::Better,
                Some((_, hi)) if hi < 0.0 => Verdict::Worse,
                _ => Verdict::Same,
            };
            let cpus = 1 << (i % 3);
            Bar { label: format!("clients={} cpus={cpus}", 1 << (i / 3 * 2)), value: v, ci, verdict }
        })
        .collect();
    BarChart { title: "throughput change, new vs base".into(), y_label: "change (%)".into(), bars }
}

fn stacked_chart() -> StackedBarChart {
    let groups = [1, 4, 16, 64]
        .iter()
        .map(|&clients| {
            let load = f64::from(clients).ln_1p();
            let bar = |name: &str, factor: f64| {
                let segments = vec![
                    ("user".into(), 3.2 * factor + load),
                    ("kernel".into(), 9.5 * factor + 2.0 * load),
                    ("iowait".into(), 1.5 * load),
                ];
                let total: f64 = segments.iter().map(|(_, v): &(String, f64)| v).sum();
                StackBar {
                    interval: Some((total * 0.95, total * 1.05)),
                    reps: vec![total * 0.97, total * 1.02],
                    ..StackBar::new(name, segments)
                }
            };
            StackGroup { label: format!("clients={clients}"), bars: vec![bar("base", 1.0), bar("new", 0.85)] }
        })
        .collect();
    StackedBarChart {
        title: "CPU cost per operation".into(), y_label: "CPU per unit (µs/op)".into(), groups
    }
}

fn main() -> std::io::Result<()> {
    let dir = Path::new("/tmp/chart-samples");
    fs::create_dir_all(dir)?;
    fs::write(dir.join("line.svg"), line_chart().to_svg())?;
    fs::write(dir.join("bar.svg"), bar_chart().to_svg())?;
    fs::write(dir.join("stacked.svg"), stacked_chart().to_svg())?;
    println!("wrote line.svg, bar.svg, stacked.svg to {}", dir.display());
    Ok(())
}
