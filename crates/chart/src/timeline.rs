//! A series over runs: each run a marker at its median with its interval as an error bar
//! (hollow when a repetition was left out as noisy), the segments between change points as
//! horizontal lines at their levels, and each change point as a vertical line labelled with
//! its magnitude (red when worse, green when better, grey and dashed while pending). Every
//! run's marker carries a tooltip.

use crate::axis::{clamp_value, nice_ticks};
use crate::frame::{
    draw_title, draw_x_axis_with, draw_y_axis, no_data, y_axis_margin_px, Plot, PLOT_HEIGHT_PX, PLOT_TOP_PX,
    RIGHT_MARGIN_PX, WIDTH_PX,
};
use crate::palette_color;
use crate::svg::{Anchor, Svg, TextStyle};

/// One run of a timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunMark {
    /// The run's median (None: no usable repetition; only the tooltip's x remains).
    pub median: Option<f64>,
    /// The interval of its repetitions (low, high).
    pub interval: Option<(f64, f64)>,
    /// Drawn hollow: some repetitions were left out (noisy or below resolution).
    pub hollow: bool,
    /// Tooltip text (run, date, tags, value).
    pub tooltip: String,
}

/// A stretch of runs at one level: from run index `start` to `end` (exclusive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    pub start: usize,
    pub end: usize,
    pub level: f64,
}

/// A change point between run `after - 1` and run `after`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeMark {
    pub after: usize,
    /// E.g. "-5.8% (0.942x)".
    pub label: String,
    pub worse: bool,
    pub pending: bool,
}

/// A chart of one series over runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimelineChart {
    pub title: String,
    pub y_label: String,
    /// Under the x axis, e.g. "run (oldest first)".
    pub x_label: String,
    pub runs: Vec<RunMark>,
    pub levels: Vec<Level>,
    pub changes: Vec<ChangeMark>,
}

const WORSE: &str = "#a3141d";
const BETTER: &str = "#0a6b2d";
const PENDING: &str = "#888888";
const MARKER_RADIUS_PX: f64 = 3.2;

impl TimelineChart {
    /// Renders the chart as a standalone `<svg>` element.
    pub fn to_svg(&self) -> String {
        let ys: Vec<f64> = self
            .runs
            .iter()
            .flat_map(|r| r.median.into_iter().chain(r.interval.into_iter().flat_map(|(a, b)| [a, b])))
            .chain(self.levels.iter().map(|l| l.level))
            .map(clamp_value)
            .filter(|y| y.is_finite())
            .collect();
        if ys.is_empty() || self.runs.is_empty() {
            return no_data("timeline", &self.title);
        }
        let (lo, hi) = ys.iter().fold((f64::MAX, f64::MIN), |(a, b), &y| (a.min(y), b.max(y)));
        let y_ticks = nice_ticks(lo, hi, 6);
        let n = self.runs.len();
        let x_domain = (-0.5, n as f64 - 0.5);
        let left = y_axis_margin_px(&y_ticks.labels());
        let plot =
            Plot { left, top: PLOT_TOP_PX, width: WIDTH_PX - left - RIGHT_MARGIN_PX, height: PLOT_HEIGHT_PX };
        let step = (n / 10).max(1);
        let x_ticks: Vec<(f64, String)> =
            (0..n).step_by(step).map(|i| (i as f64, (i + 1).to_string())).collect();
        let mut svg = Svg::begin("timeline", WIDTH_PX, plot.bottom() + 48.0, &self.title);
        draw_title(&mut svg, &self.title, WIDTH_PX - 24.0);
        draw_y_axis(&mut svg, &plot, &y_ticks, &self.y_label);
        draw_x_axis_with(&mut svg, &plot, x_domain, &x_ticks, &self.x_label, "axis-x");
        let (xs, ys) = (plot.x_scale(x_domain), plot.y_scale(y_ticks.domain()));
        let y = |v: f64| ys.map(clamp_value(v));
        svg.open_marks_group("levels", "none", palette_color(1), 0.9);
        for l in &self.levels {
            let (x0, x1) = (xs.map(l.start as f64 - 0.4), xs.map(l.end as f64 - 0.6));
            svg.segment((x0, y(l.level)), (x1, y(l.level)));
        }
        svg.close_group();
        for c in &self.changes {
            let x = xs.map(c.after as f64 - 0.5);
            let color = if c.pending {
                PENDING
            } else if c.worse {
                WORSE
            } else {
                BETTER
            };
            svg.open_group(Some(&c.label));
            svg.dashed_line((x, plot.top), (x, plot.bottom()), color, if c.pending { "2 3" } else { "6 3" });
            svg.text(x + 3.0, plot.top + 10.0, &c.label, TextStyle::new(10.0, Anchor::Start).colored(color));
            svg.close_group();
        }
        self.draw_runs(&mut svg, &|i| xs.map(i as f64), &y);
        svg.finish()
    }

    fn draw_runs(&self, svg: &mut Svg, x: &dyn Fn(usize) -> f64, y: &dyn Fn(f64) -> f64) {
        let color = palette_color(0);
        for (i, r) in self.runs.iter().enumerate() {
            svg.open_group(Some(&r.tooltip));
            if let Some((lo, hi)) = r.interval {
                svg.open_marks_group("errorbars", "none", color, 0.8);
                svg.segment((x(i), y(lo)), (x(i), y(hi)));
                svg.close_group();
            }
            if let Some(m) = r.median {
                svg.open_styled_group(if r.hollow { "#ffffff" } else { color }, color);
                svg.circle(x(i), y(m), MARKER_RADIUS_PX);
                svg.close_group();
            }
            svg.close_group();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{assert_hostile_escaped, assert_well_formed, HOSTILE};

    fn chart() -> TimelineChart {
        let runs = (0..12)
            .map(|i| RunMark {
                median: Some(if i < 6 { 100.0 } else { 94.0 }),
                interval: Some((93.0 + i as f64 % 2.0, 101.0)),
                hollow: i == 3,
                tooltip: format!("run {i}"),
            })
            .collect();
        TimelineChart {
            title: "fileserver throughput".into(),
            y_label: "MB/s".into(),
            x_label: "run".into(),
            runs,
            levels: vec![Level { start: 0, end: 6, level: 100.0 }, Level { start: 6, end: 12, level: 94.0 }],
            changes: vec![ChangeMark {
                after: 6,
                label: "-6.0% (0.940x)".into(),
                worse: true,
                pending: false,
            }],
        }
    }

    #[test]
    fn draws_runs_levels_and_changes() {
        let svg = chart().to_svg();
        assert_well_formed(&svg);
        assert_eq!(svg.matches("<circle").count(), 12);
        assert_eq!(svg.matches("fill=\"#ffffff\" stroke").count(), 1, "one hollow run");
        assert!(svg.contains("-6.0% (0.940x)") && svg.contains(WORSE));
        assert!(svg.contains("<title>run 3</title>"));
    }

    #[test]
    fn hostile_text_is_escaped_and_empty_charts_say_so() {
        let mut c = chart();
        c.title = HOSTILE.into();
        c.runs[0].tooltip = HOSTILE.into();
        c.changes[0].label = HOSTILE.into();
        assert_hostile_escaped(&c.to_svg());
        let empty = TimelineChart { title: "t".into(), ..TimelineChart::default() };
        assert!(empty.to_svg().contains("no data"));
    }
}
