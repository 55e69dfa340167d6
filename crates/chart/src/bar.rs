//! Bar charts of relative change per case: signed bars around a zero line, coloured by verdict,
//! with the value ("+12.5%") at the bar end and an optional confidence-interval whisker.

use crate::axis::{clamp_value, format_percent, nice_ticks, Scale};
use crate::frame::{
    draw_legend, draw_title, draw_y_axis, layout_legend, no_data, y_axis_margin_px, LegendItem, Plot, Swatch,
    AXIS_COLOR, PLOT_HEIGHT_PX, PLOT_TOP_PX, RIGHT_MARGIN_PX, WIDTH_PX,
};
use crate::labels::plan_category_labels;
use crate::svg::{Anchor, Svg, TextStyle};

/// How a case compares with its baseline, by significance: only a significant change is
/// coloured as better or worse, whatever its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significantly better.
    Better,
    /// Significantly worse.
    Worse,
    /// Tested, and not significant.
    Same,
    /// Not tested: too few repetitions for an interval.
    Untested,
    /// Not judged: the case ran while something else disturbed the machine.
    Noisy,
}

impl Verdict {
    /// Every verdict, in legend order.
    pub const ALL: [Verdict; 5] =
        [Verdict::Better, Verdict::Worse, Verdict::Same, Verdict::Untested, Verdict::Noisy];

    /// Fill colour: green for significantly better, red (vermillion) for significantly worse,
    /// grey for not significant, pale blue-grey for untested, pale grey for noisy.
    pub fn color(self) -> &'static str {
        match self {
            Verdict::Better => "#009E73",
            Verdict::Worse => "#D55E00",
            Verdict::Same => "#9E9E9E",
            Verdict::Untested => "#B9C7D8",
            Verdict::Noisy => "#E3E3E3",
        }
    }

    /// Lower-case words for legends and tooltips.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "significantly better",
            Verdict::Worse => "significantly worse",
            Verdict::Same => "not significant",
            Verdict::Untested => "not tested (< 3 repetitions)",
            Verdict::Noisy => "noisy, not judged",
        }
    }
}

/// One case: its relative change in percent (new vs base).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Case label, e.g. "clients=4 cpus=2".
    pub label: String,
    /// Deviation in percent, signed.
    pub value: f64,
    /// Optional confidence interval in percent, drawn as an error whisker.
    pub ci: Option<(f64, f64)>,
    pub verdict: Verdict,
}

/// Signed bars, one per case.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub bars: Vec<Bar>,
}

/// Narrowest slot per bar; wider charts grow instead of squeezing bars.
const MIN_SLOT_PX: f64 = 56.0;
const MAX_BAR_WIDTH_PX: f64 = 64.0;
/// Headroom above/below the longest bar for its value label, as a fraction of the data span.
const HEADROOM: f64 = 0.12;
const WHISKER_COLOR: &str = "#333333";
const VALUE_FONT_PX: f64 = 10.0;

/// Finite interval bounds in ascending order.
fn finite_ci(bar: &Bar) -> Option<(f64, f64)> {
    let (a, b) = bar.ci?;
    (a.is_finite() && b.is_finite()).then(|| (clamp_value(a.min(b)), clamp_value(a.max(b))))
}

/// How far whiskers may reach: three times the largest bar, at least 20 (%). A ratio's
/// interval turned into a "lower is better" gain is unbounded below (a CPU-per-unit ratio
/// of 100 is a gain of −9900%), and one wide interval must not flatten every bar; clipped
/// whiskers have no cap at the clipped end, and the tooltip keeps the whole interval.
fn whisker_limit(bars: &[Bar]) -> f64 {
    let largest = bars.iter().map(|b| b.value).filter(|v| v.is_finite()).fold(0.0_f64, |m, v| m.max(v.abs()));
    (3.0 * clamp_value(largest)).max(20.0)
}

/// The interval as drawn: clipped to ± `limit`, with whether each end was clipped.
fn drawn_ci(bar: &Bar, limit: f64) -> Option<((f64, bool), (f64, bool))> {
    let (a, b) = finite_ci(bar)?;
    Some(((a.max(-limit), a < -limit), (b.min(limit), b > limit)))
}

/// Value range to show: zero, all finite values and (clipped) intervals, plus headroom for
/// labels.
fn value_range(bars: &[Bar]) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0_f64, 0.0_f64);
    let limit = whisker_limit(bars);
    for bar in bars {
        if bar.value.is_finite() {
            let v = clamp_value(bar.value);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if let Some(((a, _), (b, _))) = drawn_ci(bar, limit) {
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    let span = (hi - lo).min(f64::MAX);
    if hi > 0.0 {
        hi += span * HEADROOM;
    }
    if lo < 0.0 {
        lo -= span * HEADROOM;
    }
    (lo, hi)
}

impl BarChart {
    /// Renders the chart as a standalone `<svg>` element.
    pub fn to_svg(&self) -> String {
        if self.bars.is_empty() {
            return no_data("bar", &self.title);
        }
        let (lo, hi) = value_range(&self.bars);
        let ticks = nice_ticks(lo, hi, 6);
        let left = y_axis_margin_px(&ticks.labels());
        let min_width = WIDTH_PX - left - RIGHT_MARGIN_PX;
        let slot = (min_width / self.bars.len() as f64).max(MIN_SLOT_PX);
        let labels = plan_category_labels(self.bars.iter().map(|b| b.label.as_str()), slot);
        // Make room for the first label when rotated labels reach further left than the margin.
        let left = left.max(labels.left_reach_px - slot / 2.0 + 8.0);
        let plot =
            Plot { left, top: PLOT_TOP_PX, width: slot * self.bars.len() as f64, height: PLOT_HEIGHT_PX };
        let width = plot.right() + RIGHT_MARGIN_PX;

        let verdicts: Vec<Verdict> =
            Verdict::ALL.into_iter().filter(|v| self.bars.iter().any(|b| b.verdict == *v)).collect();
        let items: Vec<LegendItem<'_>> = verdicts
            .iter()
            .map(|v| LegendItem { swatch: Swatch::Box { color: v.color() }, text: v.as_str() })
            .collect();
        let legend = layout_legend(&items, width - 2.0 * RIGHT_MARGIN_PX);
        let legend_top = plot.bottom() + 4.0 + labels.height_px + 8.0;
        let height = legend_top + legend.height_px + 8.0;

        let mut svg = Svg::begin("bar", width, height, &self.title);
        draw_title(&mut svg, &self.title, width - 24.0);
        draw_y_axis(&mut svg, &plot, &ticks, &self.y_label);
        let scale = plot.y_scale(ticks.domain());
        let limit = whisker_limit(&self.bars);
        let bar_width = (slot * 0.6).min(MAX_BAR_WIDTH_PX);
        for (i, bar) in self.bars.iter().enumerate() {
            let center = plot.left + slot * (i as f64 + 0.5);
            svg.open_group(Some(&tooltip(bar)));
            draw_bar(&mut svg, bar, &scale, center, bar_width, limit);
            labels.draw(&mut svg, center, plot.bottom() + 4.0, &bar.label);
            svg.close_group();
        }
        let zero = scale.map(0.0);
        svg.line((plot.left, zero), (plot.right(), zero), AXIS_COLOR, 1.5);
        draw_legend(&mut svg, &items, &legend, (RIGHT_MARGIN_PX, legend_top));
        svg.finish()
    }
}

/// Full description of a bar, shown on hover.
fn tooltip(bar: &Bar) -> String {
    let mut text = format!("{}: {}", bar.label, format_percent(bar.value));
    if let Some((a, b)) = finite_ci(bar) {
        text.push_str(&format!(" (CI {} … {})", format_percent(a), format_percent(b)));
    }
    text.push_str(", ");
    text.push_str(bar.verdict.as_str());
    text
}

/// The bar from zero to its value, the whisker, and the value label beyond both.
fn draw_bar(svg: &mut Svg, bar: &Bar, scale: &Scale, center: f64, bar_width: f64, limit: f64) {
    let zero = scale.map(0.0);
    let style = TextStyle::new(VALUE_FONT_PX, Anchor::Middle);
    if !bar.value.is_finite() {
        svg.text(center, zero - 4.0, "n/a", style);
        return;
    }
    let value = clamp_value(bar.value);
    let end = scale.map(value);
    // Keep zero-height bars visible as a thin line.
    let (top, height) = if (end - zero).abs() < 1.0 { (zero - 0.5, 1.0) } else { (end, zero - end) };
    svg.rect(center - bar_width / 2.0, top, bar_width, height, bar.verdict.color());
    let drawn = drawn_ci(bar, limit);
    if let Some(((a, a_clipped), (b, b_clipped))) = drawn {
        let (y_lo, y_hi) = (scale.map(a), scale.map(b));
        let cap = bar_width / 4.0;
        svg.line((center, y_lo), (center, y_hi), WHISKER_COLOR, 1.5);
        if !a_clipped {
            svg.line((center - cap, y_lo), (center + cap, y_lo), WHISKER_COLOR, 1.5);
        }
        if !b_clipped {
            svg.line((center - cap, y_hi), (center + cap, y_hi), WHISKER_COLOR, 1.5);
        }
    }
    let ci = drawn.map(|((a, _), (b, _))| (a, b));
    let label = format_percent(value);
    if value >= 0.0 {
        let outer = ci.map_or(end, |(_, b)| end.min(scale.map(b)));
        svg.text(center, outer - 4.0, &label, style);
    } else {
        let outer = ci.map_or(end, |(a, _)| end.max(scale.map(a)));
        svg.text(center, outer + 4.0 + VALUE_FONT_PX, &label, style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{assert_hostile_escaped, assert_well_formed, check_well_formed, HOSTILE};
    use proptest::prelude::*;

    fn bar(label: &str, value: f64, ci: Option<(f64, f64)>, verdict: Verdict) -> Bar {
        Bar { label: label.to_string(), value, ci, verdict }
    }

    fn sample() -> BarChart {
        BarChart {
            title: "throughput change".into(),
            y_label: "change (%)".into(),
            bars: vec![
                bar("clients=1 cpus=2", 12.5, Some((8.0, 17.0)), Verdict::Better),
                bar("clients=4 cpus=2", -7.25, Some((-10.0, -4.0)), Verdict::Worse),
                bar("clients=8 cpus=2", 0.4, None, Verdict::Same),
                bar("clients=16 cpus=2", -60.0, None, Verdict::Noisy),
            ],
        }
    }

    #[test]
    fn renders_bars_values_and_whiskers() {
        let svg = sample().to_svg();
        assert_well_formed(&svg);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart chart-bar\""));
        assert!(svg.contains(">+12.5%</text>"));
        assert!(svg.contains(">-7.3%</text>") || svg.contains(">-7.2%</text>"));
        assert!(svg.contains(">+0.4%</text>"));
        assert!(svg.contains(">change (%)</text>"));
        // Two whiskers of three lines each.
        assert_eq!(svg.matches(&format!("stroke=\"{WHISKER_COLOR}\"")).count(), 6);
    }

    #[test]
    fn bars_are_coloured_by_verdict() {
        let svg = sample().to_svg();
        for v in [Verdict::Better, Verdict::Worse, Verdict::Same, Verdict::Noisy] {
            assert!(svg.contains(&format!("fill=\"{}\"", v.color())), "{v:?}");
        }
        assert!(svg.contains(">significantly better</text>") && svg.contains(">not significant</text>"));
        let colors: std::collections::BTreeSet<&str> = Verdict::ALL.iter().map(|v| v.color()).collect();
        assert_eq!(colors.len(), Verdict::ALL.len(), "every verdict has its own colour");
        assert!(svg.contains(">noisy, not judged</text>"), "the legend names noisy bars");
        assert_ne!(Verdict::Better.color(), Verdict::Worse.color());
        assert_ne!(Verdict::Same.color(), Verdict::Worse.color());
    }

    #[test]
    fn positive_bars_go_up_and_negative_down() {
        let c = BarChart {
            title: "t".into(),
            y_label: "%".into(),
            bars: vec![bar("up", 10.0, None, Verdict::Better), bar("down", -10.0, None, Verdict::Worse)],
        };
        let (lo, hi) = value_range(&c.bars);
        let scale =
            Plot { left: 0.0, top: 0.0, width: 1.0, height: 100.0 }.y_scale(nice_ticks(lo, hi, 6).domain());
        assert!(scale.map(10.0) < scale.map(0.0) && scale.map(-10.0) > scale.map(0.0));
        assert_well_formed(&c.to_svg());
    }

    #[test]
    fn empty_says_no_data() {
        let c = BarChart { title: "empty".into(), y_label: "%".into(), bars: vec![] };
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert!(svg.contains(">no data</text>") && svg.contains("<title>empty</title>"));
    }

    #[test]
    fn single_and_odd_bars() {
        for b in [
            bar("only", 3.0, None, Verdict::Same),
            bar("zero", 0.0, Some((-1.0, 1.0)), Verdict::Same),
            bar("nan", f64::NAN, Some((f64::NAN, 2.0)), Verdict::Worse),
            bar("huge", 1e305, Some((2e305, -1e305)), Verdict::Better),
        ] {
            let c = BarChart { title: "t".into(), y_label: "%".into(), bars: vec![b] };
            let svg = c.to_svg();
            assert_well_formed(&svg);
            assert!(!svg.contains("NaN") && !svg.contains("inf"));
        }
    }

    #[test]
    fn long_labels_are_truncated_with_full_text_in_title() {
        let long = "clients=64 cpus=16 workload=random-read-write-mixed-with-fsync";
        let c = BarChart {
            title: "t".into(),
            y_label: "%".into(),
            bars: (0..30).map(|i| bar(long, i as f64 - 15.0, None, Verdict::Same)).collect(),
        };
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert!(svg.contains(&format!("<title>{long}: ")));
        assert!(svg.contains("rotate(-35"));
        assert!(svg.contains('…'));
        assert!(svg.contains("width=\"") && !svg.contains("width=\"720\" height"), "chart should grow");
    }

    #[test]
    fn caller_text_is_escaped() {
        let c = BarChart {
            title: HOSTILE.into(),
            y_label: HOSTILE.into(),
            bars: vec![bar(HOSTILE, 1.0, None, Verdict::Better)],
        };
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert_hostile_escaped(&svg);
    }

    #[test]
    fn one_huge_interval_does_not_flatten_the_other_bars() {
        let c = BarChart {
            title: "t".into(),
            y_label: "%".into(),
            bars: vec![
                bar("a", -30.0, Some((-99_900.0, 10.0)), Verdict::Same),
                bar("b", 12.0, Some((8.0, 16.0)), Verdict::Better),
            ],
        };
        let (lo, hi) = value_range(&c.bars);
        assert!(lo >= -120.0 && hi < 100.0, "{lo} {hi}");
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert_eq!(
            svg.matches(&format!("stroke=\"{WHISKER_COLOR}\"")).count(),
            5,
            "the clipped end has no cap"
        );
        assert!(svg.contains("CI -99900.0%") || svg.contains("CI -99.9k%"), "the tooltip keeps the interval");
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(sample().to_svg(), sample().to_svg());
    }

    proptest! {
        #[test]
        fn arbitrary_bars_give_well_formed_svg(
            values in prop::collection::vec((any::<f64>(), prop::option::of((-1e6f64..1e6, -1e6f64..1e6)), 0..5u8), 0..20),
        ) {
            let bars = values
                .into_iter()
                .enumerate()
                .map(|(i, (v, ci, k))| bar(&format!("case {i}"), v, ci, Verdict::ALL[k as usize]))
                .collect();
            let svg = BarChart { title: "t".into(), y_label: "%".into(), bars }.to_svg();
            prop_assert!(check_well_formed(&svg).is_ok(), "{}", svg);
        }
    }
}
