//! Line charts: one polyline with point markers per series over linear x and y axes, with a
//! legend that shows each series' colour and dash style.

use crate::axis::{clamp_value, nice_ticks};
use crate::frame::{
    draw_legend, draw_title, draw_x_axis, draw_y_axis, layout_legend, no_data, y_axis_margin_px, LegendItem,
    Plot, Swatch, PLOT_HEIGHT_PX, PLOT_TOP_PX, RIGHT_MARGIN_PX, WIDTH_PX,
};
use crate::palette_color;
use crate::svg::Svg;

/// One line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points; drawn sorted by x; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// Dashed line (base runs) instead of solid (new runs).
    pub dashed: bool,
    /// Index into the built-in palette (wraps around).
    pub color: usize,
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
}

/// `stroke-dasharray` of dashed series.
const DASH: &str = "6 4";
const MARKER_RADIUS_PX: f64 = 3.0;
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

/// Finite points, clamped to the drawable range, sorted by x.
fn clean_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (clamp_value(x), clamp_value(y)))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn bounds(series: &[Vec<(f64, f64)>]) -> Option<Bounds> {
    let mut all = series.iter().flatten();
    let &(x, y) = all.next()?;
    let start = Bounds { x_min: x, x_max: x, y_min: y, y_max: y };
    Some(all.fold(start, |b, &(x, y)| Bounds {
        x_min: b.x_min.min(x),
        x_max: b.x_max.max(x),
        y_min: b.y_min.min(y),
        y_max: b.y_max.max(y),
    }))
}

impl LineChart {
    /// Renders the chart as a standalone `<svg>` element.
    pub fn to_svg(&self) -> String {
        let cleaned: Vec<Vec<(f64, f64)>> = self.series.iter().map(|s| clean_points(&s.points)).collect();
        let Some(b) = bounds(&cleaned) else {
            return no_data("line", &self.title);
        };
        let (mut y_lo, mut y_hi) = (b.y_min, b.y_max);
        if self.y_from_zero {
            y_lo = y_lo.min(0.0);
            y_hi = y_hi.max(0.0);
        }
        let x_ticks = nice_ticks(b.x_min, b.x_max, 8);
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
        draw_x_axis(&mut svg, &plot, &x_ticks, &self.x_label);
        let x_scale = plot.x_scale(x_ticks.domain());
        let y_scale = plot.y_scale(y_ticks.domain());
        let mut pixels: Vec<(f64, f64)> = Vec::new();
        for (series, points) in self.series.iter().zip(&cleaned) {
            if points.is_empty() {
                continue;
            }
            pixels.clear();
            pixels.extend(points.iter().map(|&(x, y)| (x_scale.map(x), y_scale.map(y))));
            draw_series(&mut svg, series, &pixels);
        }
        draw_legend(&mut svg, &items, &legend, (RIGHT_MARGIN_PX, legend_top));
        svg.finish()
    }
}

/// One series: its line (when it has 2+ points) and markers, hollow for dashed series.
fn draw_series(svg: &mut Svg, series: &Series, pixels: &[(f64, f64)]) {
    let color = palette_color(series.color);
    svg.open_group(Some(&series.name));
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
        Series { name: name.to_string(), points, dashed, color }
    }

    fn chart(series: Vec<Series>) -> LineChart {
        LineChart {
            title: "throughput".into(),
            x_label: "clients (processes)".into(),
            y_label: "throughput (MB/s)".into(),
            series,
            y_from_zero: true,
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
