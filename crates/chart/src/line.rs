//! Line charts: one polyline with point markers per series over a linear or log2 x axis and
//! a linear y axis, optionally with each point's interval as an error bar and the single
//! repetitions as pale dots, and a legend that shows each series' colour and dash style.

use crate::axis::{clamp_value, log2_ticks, nice_ticks};
use crate::frame::{
    draw_legend, draw_title, draw_x_axis_with, draw_y_axis, layout_legend, no_data, y_axis_margin_px,
    LegendItem, Plot, Swatch, PLOT_HEIGHT_PX, PLOT_TOP_PX, RIGHT_MARGIN_PX, WIDTH_PX,
};
use crate::palette_color;
use crate::svg::Svg;

/// One line of a line chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points; drawn sorted by x; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (base runs) instead of solid (new runs).
    pub dashed: bool,
    /// Index into the built-in palette (wraps around).
    pub color: usize,
    /// Error bars: (x, low, high), e.g. the confidence interval of the mean at x.
    pub intervals: Vec<(f64, f64, f64)>,
    /// Single observations drawn as pale dots: (x, y), e.g. each repetition.
    pub reps: Vec<(f64, f64)>,
}

impl Series {
    /// A plain line: no error bars, no single observations.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>, dashed: bool, color: usize) -> Series {
        Series { name: name.into(), points, dashed, color, ..Series::default() }
    }
}

/// A chart of lines over a numeric x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    /// E.g. "clients (processes)".
    pub x_label: String,
    /// E.g. "throughput (MB/s)".
    pub y_label: String,
    pub series: Vec<Series>,
    /// Start the y axis at 0 (or end it there, for negative data).
    pub y_from_zero: bool,
    /// A log2 x axis with ticks at 1, 2, 4, 8 … (counts of clients, threads, connections);
    /// linear when any x is not positive.
    pub x_log2: bool,
}

/// `stroke-dasharray` of dashed series.
const DASH: &str = "6 4";
const MARKER_RADIUS_PX: f64 = 3.0;
const REP_RADIUS_PX: f64 = 2.2;
/// Error bars and repetitions of dashed (base) series sit this far left of the point, those of
/// solid series as far right, so that base and new do not hide each other.
const SIDE_SHIFT_PX: f64 = 4.0;
/// Gap between the plot bottom and the legend (room for tick labels and the x label).
const LEGEND_GAP_PX: f64 = 50.0;

/// Bounding box of all points.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    x_min: f64,
    x_max: f64,
    y_min: f64,
    y_max: f64,
}

/// A series' drawable data with x already on the axis' scale (log2 or linear).
#[derive(Debug, Clone, Default)]
struct Clean {
    points: Vec<(f64, f64)>,
    intervals: Vec<(f64, f64, f64)>,
    reps: Vec<(f64, f64)>,
}

fn finite2(&(x, y): &(f64, f64)) -> bool {
    x.is_finite() && y.is_finite()
}

/// Finite data, clamped to the drawable range, x through `fx`, points sorted by x.
fn clean(s: &Series, fx: &dyn Fn(f64) -> f64) -> Clean {
    let c = |v: f64| clamp_value(v);
    let mut points: Vec<(f64, f64)> =
        s.points.iter().filter(|p| finite2(p)).map(|&(x, y)| (fx(c(x)), c(y))).collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let intervals = s
        .intervals
        .iter()
        .filter(|(x, lo, hi)| x.is_finite() && lo.is_finite() && hi.is_finite())
        .map(|&(x, lo, hi)| (fx(c(x)), c(lo.min(hi)), c(lo.max(hi))))
        .collect();
    let reps = s.reps.iter().filter(|p| finite2(p)).map(|&(x, y)| (fx(c(x)), c(y))).collect();
    Clean { points, intervals, reps }
}

fn bounds(series: &[Clean]) -> Option<Bounds> {
    let mut all = series.iter().flat_map(|s| {
        let bars = s.intervals.iter().flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]);
        s.points.iter().copied().chain(bars).chain(s.reps.iter().copied())
    });
    let (x, y) = all.next()?;
    let start = Bounds { x_min: x, x_max: x, y_min: y, y_max: y };
    Some(all.fold(start, |b, (x, y)| Bounds {
        x_min: b.x_min.min(x),
        x_max: b.x_max.max(x),
        y_min: b.y_min.min(y),
        y_max: b.y_max.max(y),
    }))
}

impl LineChart {
    /// Whether the x axis is drawn log2: asked for, and every x is positive.
    fn log2_x(&self) -> bool {
        let positive = |x: &f64| !x.is_finite() || *x > 0.0;
        self.x_log2
            && self.series.iter().all(|s| {
                s.points.iter().map(|p| &p.0).all(positive)
                    && s.intervals.iter().map(|i| &i.0).all(positive)
                    && s.reps.iter().map(|p| &p.0).all(positive)
            })
    }

    /// Renders the chart as a standalone `<svg>` element.
    pub fn to_svg(&self) -> String {
        let log2 = self.log2_x();
        let fx = |x: f64| if log2 { x.log2() } else { x };
        let cleaned: Vec<Clean> = self.series.iter().map(|s| clean(s, &fx)).collect();
        let Some(b) = bounds(&cleaned) else {
            return no_data("line", &self.title);
        };
        let (mut y_lo, mut y_hi) = (b.y_min, b.y_max);
        if self.y_from_zero {
            y_lo = y_lo.min(0.0);
            y_hi = y_hi.max(0.0);
        }
        let (x_domain, x_ticks, x_class) = if log2 {
            let (domain, ticks) = log2_ticks(2f64.powf(b.x_min), 2f64.powf(b.x_max));
            (domain, ticks, "axis-x log2")
        } else {
            let t = nice_ticks(b.x_min, b.x_max, 8);
            (t.domain(), t.values.iter().copied().zip(t.labels()).collect(), "axis-x")
        };
        let y_ticks = nice_ticks(y_lo, y_hi, 6);
        let left = y_axis_margin_px(&y_ticks.labels());
        let plot =
            Plot { left, top: PLOT_TOP_PX, width: WIDTH_PX - left - RIGHT_MARGIN_PX, height: PLOT_HEIGHT_PX };

        let items: Vec<LegendItem<'_>> = self
            .series
            .iter()
            .map(|s| LegendItem {
                swatch: Swatch::Line { color: palette_color(s.color), dashed: s.dashed },
                text: &s.name,
            })
            .collect();
        let legend = layout_legend(&items, WIDTH_PX - 2.0 * RIGHT_MARGIN_PX);
        let legend_top = plot.bottom() + LEGEND_GAP_PX;
        let height = legend_top + legend.height_px + 10.0;

        let mut svg = Svg::begin("line", WIDTH_PX, height, &self.title);
        draw_title(&mut svg, &self.title, WIDTH_PX - 24.0);
        draw_y_axis(&mut svg, &plot, &y_ticks, &self.y_label);
        draw_x_axis_with(&mut svg, &plot, x_domain, &x_ticks, &self.x_label, x_class);
        let x_scale = plot.x_scale(x_domain);
        let y_scale = plot.y_scale(y_ticks.domain());
        let any_dashed = self.series.iter().any(|s| s.dashed);
        for (series, data) in self.series.iter().zip(&cleaned) {
            let shift = match (series.dashed, any_dashed) {
                (true, _) => -SIDE_SHIFT_PX,
                (false, true) => SIDE_SHIFT_PX,
                (false, false) => 0.0,
            };
            let px = |&(x, y): &(f64, f64)| (x_scale.map(x), y_scale.map(y));
            let bars: Vec<(f64, f64, f64)> = data
                .intervals
                .iter()
                .map(|&(x, lo, hi)| (x_scale.map(x) + shift, y_scale.map(lo), y_scale.map(hi)))
                .collect();
            let reps: Vec<(f64, f64)> = data.reps.iter().map(|p| (px(p).0 + shift, px(p).1)).collect();
            let pixels: Vec<(f64, f64)> = data.points.iter().map(px).collect();
            draw_series(&mut svg, series, &pixels, &bars, &reps);
        }
        draw_legend(&mut svg, &items, &legend, (RIGHT_MARGIN_PX, legend_top));
        svg.finish()
    }
}

/// One series: its repetitions, error bars, line (when it has 2+ points) and markers, hollow
/// for dashed series.
fn draw_series(
    svg: &mut Svg,
    series: &Series,
    pixels: &[(f64, f64)],
    bars: &[(f64, f64, f64)],
    reps: &[(f64, f64)],
) {
    if pixels.is_empty() && bars.is_empty() && reps.is_empty() {
        return;
    }
    let color = palette_color(series.color);
    svg.open_group(Some(&series.name));
    if !reps.is_empty() {
        svg.open_marks_group("reps", color, "none", 0.45);
        for &(x, y) in reps {
            svg.circle(x, y, REP_RADIUS_PX);
        }
        svg.close_group();
    }
    if !bars.is_empty() {
        svg.open_marks_group("errorbars", "none", color, 0.9);
        for &(x, lo, hi) in bars {
            svg.segment((x, lo), (x, hi));
            svg.segment((x - 3.0, lo), (x + 3.0, lo));
            svg.segment((x - 3.0, hi), (x + 3.0, hi));
        }
        svg.close_group();
    }
    if pixels.len() > 1 {
        svg.polyline(pixels, color, series.dashed.then_some(DASH));
    }
    let fill = if series.dashed { "#ffffff" } else { color };
    svg.open_styled_group(fill, color);
    for &(x, y) in pixels {
        svg.circle(x, y, MARKER_RADIUS_PX);
    }
    svg.close_group();
    svg.close_group();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{assert_hostile_escaped, assert_well_formed, HOSTILE};
    use proptest::prelude::*;
    use std::time::{Duration, Instant};

    fn series(name: &str, points: Vec<(f64, f64)>, dashed: bool, color: usize) -> Series {
        Series::line(name, points, dashed, color)
    }

    fn chart(series: Vec<Series>) -> LineChart {
        LineChart {
            title: "throughput".into(),
            x_label: "clients (processes)".into(),
            y_label: "throughput (MB/s)".into(),
            series,
            y_from_zero: true,
            x_log2: false,
        }
    }

    fn sample() -> LineChart {
        chart(vec![
            series("base 2 cpus", vec![(1.0, 100.0), (2.0, 180.0), (4.0, 300.0)], true, 0),
            series("new 2 cpus", vec![(4.0, 320.0), (1.0, 110.0), (2.0, 190.0)], false, 0),
        ])
    }

    #[test]
    fn renders_well_formed_svg_with_title_and_axes() {
        let svg = sample().to_svg();
        assert_well_formed(&svg);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart chart-line\""));
        assert!(svg.contains("<title>throughput</title>"));
        assert!(svg.contains(">clients (processes)</text>"));
        assert!(svg.contains(">throughput (MB/s)</text>"));
        assert!(svg.contains("font-family=\"sans-serif\""));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 6);
    }

    #[test]
    fn dashed_series_carry_dasharray() {
        let svg = sample().to_svg();
        let polylines: Vec<&str> = svg.split("<polyline").skip(1).collect();
        assert!(polylines[0].split("/>").next().is_some_and(|p| p.contains("stroke-dasharray")));
        assert!(polylines[1].split("/>").next().is_some_and(|p| !p.contains("stroke-dasharray")));
    }

    #[test]
    fn points_are_drawn_sorted_by_x() {
        let c = chart(vec![series("s", vec![(3.0, 1.0), (1.0, 1.0), (2.0, 1.0)], false, 1)]);
        let svg = c.to_svg();
        let points = svg.split("points=\"").nth(1).and_then(|s| s.split('"').next()).unwrap();
        let xs: Vec<f64> = points.split(' ').map(|p| p.split(',').next().unwrap().parse().unwrap()).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
    }

    #[test]
    fn empty_inputs_say_no_data() {
        for c in [
            chart(vec![]),
            chart(vec![series("a", vec![], false, 0)]),
            chart(vec![series("a", vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)], false, 0)]),
        ] {
            let svg = c.to_svg();
            assert_well_formed(&svg);
            assert!(svg.contains(">no data</text>"));
            assert!(svg.contains("<title>throughput</title>"));
        }
    }

    #[test]
    fn single_point_and_equal_x_and_negative_values() {
        for points in [vec![(5.0, 7.0)], vec![(2.0, 1.0), (2.0, 3.0)], vec![(-3.0, -5.0), (4.0, -1.0)]] {
            let mut c = chart(vec![series("one", points, false, 2)]);
            for from_zero in [true, false] {
                c.y_from_zero = from_zero;
                let svg = c.to_svg();
                assert_well_formed(&svg);
                assert!(!svg.contains("no data"));
                assert!(svg.contains("<circle"));
            }
        }
    }

    #[test]
    fn caller_text_is_escaped() {
        let mut c = chart(vec![series(HOSTILE, vec![(1.0, 1.0)], true, 0)]);
        c.title = HOSTILE.into();
        c.x_label = HOSTILE.into();
        c.y_label = HOSTILE.into();
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert_hostile_escaped(&svg);
        let empty = LineChart { series: vec![], ..c };
        assert_hostile_escaped(&empty.to_svg());
    }

    #[test]
    fn colours_come_from_the_palette_and_wrap() {
        let c = chart(vec![series("a", vec![(1.0, 1.0), (2.0, 2.0)], false, 9)]);
        assert!(c.to_svg().contains(&format!("stroke=\"{}\"", palette_color(1))));
    }

    #[test]
    fn log2_axis_has_power_of_two_ticks_only() {
        let mut c = chart(vec![series("s", vec![(1.0, 1.0), (2.0, 2.0), (3.0, 2.5), (16.0, 3.0)], false, 0)]);
        c.x_log2 = true;
        let svg = c.to_svg();
        assert_well_formed(&svg);
        let axis =
            svg.split("<g class=\"axis-x log2\">").nth(1).and_then(|s| s.split("</g>").next()).unwrap();
        let labels: Vec<&str> = axis
            .split("\">")
            .skip(1)
            .filter_map(|t| t.split("</text>").next())
            .filter(|t| !t.is_empty())
            .collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16"], "{axis}");
        // Equal steps between powers of two; x = 3 lies between 2 and 4.
        c.series[0].points.push((0.0, 1.0));
        assert!(!c.to_svg().contains("log2"), "a zero falls back to a linear axis");
    }

    #[test]
    fn error_bars_and_repetitions_are_drawn_and_set_the_axis() {
        let mut s = series("new", vec![(1.0, 100.0), (2.0, 180.0)], false, 1);
        s.intervals = vec![(1.0, 90.0, 110.0), (2.0, 170.0, 400.0)];
        s.reps = vec![(1.0, 95.0), (1.0, 105.0), (2.0, 175.0)];
        let mut base = series("base", vec![(1.0, 90.0)], true, 1);
        base.intervals = vec![(1.0, f64::NAN, 3.0)];
        let svg = chart(vec![base, s]).to_svg();
        assert_well_formed(&svg);
        let bars = svg.split("<g class=\"errorbars\"").nth(1).and_then(|s| s.split("</g>").next()).unwrap();
        assert_eq!(bars.matches("<line").count(), 6, "two error bars of three lines; the NaN one is skipped");
        let reps = svg.split("<g class=\"reps\"").nth(1).and_then(|s| s.split("</g>").next()).unwrap();
        assert_eq!(reps.matches("<circle").count(), 3);
        assert!(svg.contains(">400</text>"), "the interval's top sets the y axis");
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(sample().to_svg(), sample().to_svg());
    }

    #[test]
    fn many_series_render_quickly() {
        let big = chart(
            (0..20)
                .map(|s| {
                    let points = (0..50).map(|i| (i as f64, (i * s) as f64 * 1.37)).collect();
                    series(&format!("series {s}"), points, s % 2 == 0, s / 2)
                })
                .collect(),
        );
        let svg = big.to_svg();
        assert_well_formed(&svg);
        let start = Instant::now();
        for _ in 0..20 {
            std::hint::black_box(big.to_svg());
        }
        // Generous even for unoptimised test builds; a release build takes well under 1 ms.
        assert!(start.elapsed() < Duration::from_millis(20 * 20), "{:?}", start.elapsed());
    }

    proptest! {
        #[test]
        fn arbitrary_points_give_well_formed_svg(
            points in prop::collection::vec((-1e12f64..1e12, -1e12f64..1e12), 0..30),
            extremes in prop::collection::vec((any::<f64>(), any::<f64>()), 0..4),
            dashed in any::<bool>(),
            from_zero in any::<bool>(),
        ) {
            let mut c = chart(vec![series("a", points, dashed, 3), series("b", extremes, !dashed, 4)]);
            c.y_from_zero = from_zero;
            let svg = c.to_svg();
            prop_assert!(crate::testutil::check_well_formed(&svg).is_ok(), "{}", svg);
            prop_assert!(!svg.contains("NaN") && !svg.contains("inf"));
        }
    }
}
