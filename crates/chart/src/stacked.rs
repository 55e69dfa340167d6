//! Stacked bar charts of absolute values per case: groups side by side (one per case), bars
//! within a group side by side (e.g. "base", "new"), each bar stacked from named segments
//! (e.g. "user", "kernel") with one colour per segment name.

use std::collections::BTreeMap;

use crate::axis::{clamp_value, format_value, nice_ticks, Scale};
use crate::frame::{
    chars_fitting, draw_baseline, draw_legend, draw_title, draw_y_axis, layout_legend, no_data,
    text_width_px, truncate, y_axis_margin_px, LegendItem, Plot, Swatch, PLOT_HEIGHT_PX, PLOT_TOP_PX,
    RIGHT_MARGIN_PX, WIDTH_PX,
};
use crate::labels::plan_category_labels;
use crate::palette_color;
use crate::svg::{Anchor, Svg, TextStyle};

/// Absolute values per case: each case a group of bars, each bar stacked from segments.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedBarChart {
    pub title: String,
    /// E.g. "CPU per unit (µs/op)".
    pub y_label: String,
    pub groups: Vec<StackGroup>,
}

/// One case: a label and its bars.
#[derive(Debug, Clone, PartialEq)]
pub struct StackGroup {
    pub label: String,
    pub bars: Vec<StackBar>,
}

/// One bar: a name (shown under it) and its segments, bottom first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StackBar {
    pub name: String,
    /// Segment name → value (≥ 0; negative and non-finite values count as 0).
    pub segments: Vec<(String, f64)>,
    /// An error bar for the bar's total (low, high), e.g. the interval of the mean.
    pub interval: Option<(f64, f64)>,
    /// The totals of single observations (e.g. each repetition), drawn as dots.
    pub reps: Vec<f64>,
}

impl StackBar {
    /// A bar of segments without error bar or repetitions.
    pub fn new(name: impl Into<String>, segments: Vec<(String, f64)>) -> StackBar {
        StackBar { name: name.into(), segments, ..StackBar::default() }
    }

    /// The finite interval, ordered, as drawn.
    fn drawn_interval(&self) -> Option<(f64, f64)> {
        let (a, b) = self.interval?;
        (a.is_finite() && b.is_finite()).then(|| (segment_value(a.min(b)), segment_value(a.max(b))))
    }

    /// The highest value the bar reaches: its total, interval or a repetition.
    fn reach(&self) -> f64 {
        let reps = self.reps.iter().map(|v| segment_value(*v)).fold(0.0, f64::max);
        bar_total(self)
            .max(self.drawn_interval().map_or(0.0, |i| i.1))
            .max(reps)
            .min(crate::axis::VALUE_LIMIT)
    }
}

const MIN_BAR_SLOT_PX: f64 = 30.0;
const MAX_BAR_SLOT_PX: f64 = 80.0;
const MAX_BAR_WIDTH_PX: f64 = 56.0;
const GROUP_GAP_PX: f64 = 24.0;
const NAME_FONT_PX: f64 = 10.0;
/// Space under the plot for bar names before the group labels start.
const NAME_ROW_PX: f64 = 18.0;

/// A segment value as drawn.
fn segment_value(v: f64) -> f64 {
    clamp_value(v).max(0.0)
}

fn bar_total(bar: &StackBar) -> f64 {
    bar.segments.iter().map(|(_, v)| segment_value(*v)).sum::<f64>().min(crate::axis::VALUE_LIMIT)
}

/// Palette index per segment name, in order of first appearance.
fn segment_colors(groups: &[StackGroup]) -> (BTreeMap<&str, usize>, Vec<&str>) {
    let mut index = BTreeMap::new();
    let mut order = Vec::new();
    for (name, _) in groups.iter().flat_map(|g| &g.bars).flat_map(|b| &b.segments) {
        if !index.contains_key(name.as_str()) {
            index.insert(name.as_str(), order.len());
            order.push(name.as_str());
        }
    }
    (index, order)
}

/// Horizontal layout: width of one bar slot and of the whole plot.
fn slot_width_px(groups: &[StackGroup], min_plot_width_px: f64) -> (f64, f64) {
    let widest_name =
        groups.iter().flat_map(|g| &g.bars).map(|b| text_width_px(&b.name, NAME_FONT_PX)).fold(0.0, f64::max);
    let mut slot = (widest_name + 8.0).clamp(MIN_BAR_SLOT_PX, MAX_BAR_SLOT_PX);
    let slots: usize = groups.iter().map(|g| g.bars.len().max(1)).sum();
    let gaps = groups.len() as f64 * GROUP_GAP_PX;
    let natural = slots as f64 * slot + gaps;
    if natural < min_plot_width_px {
        slot = (min_plot_width_px - gaps) / slots as f64;
    }
    (slot, slots as f64 * slot + gaps)
}

impl StackedBarChart {
    /// Renders the chart as a standalone `<svg>` element.
    pub fn to_svg(&self) -> String {
        if self.groups.iter().all(|g| g.bars.is_empty()) {
            return no_data("stacked", &self.title);
        }
        let max_total = self.groups.iter().flat_map(|g| &g.bars).map(StackBar::reach).fold(0.0, f64::max);
        let ticks =
            if max_total > 0.0 { nice_ticks(0.0, max_total * 1.08, 6) } else { nice_ticks(0.0, 1.0, 6) };
        let left = y_axis_margin_px(&ticks.labels());
        let (slot, plot_width) = slot_width_px(&self.groups, WIDTH_PX - left - RIGHT_MARGIN_PX);
        let group_width = |g: &StackGroup| g.bars.len().max(1) as f64 * slot + GROUP_GAP_PX;
        let min_group_width = self.groups.iter().map(group_width).fold(f64::INFINITY, f64::min);
        let labels = plan_category_labels(self.groups.iter().map(|g| g.label.as_str()), min_group_width);
        // Make room for the first label when rotated labels reach further left than the margin.
        let first_half = self.groups.first().map_or(0.0, |g| group_width(g) / 2.0);
        let left = left.max(labels.left_reach_px - first_half + 8.0);
        let plot = Plot { left, top: PLOT_TOP_PX, width: plot_width, height: PLOT_HEIGHT_PX };
        let width = plot.right() + RIGHT_MARGIN_PX;

        let (color_index, segment_order) = segment_colors(&self.groups);
        let items: Vec<LegendItem<'_>> = segment_order
            .iter()
            .enumerate()
            .map(|(i, name)| LegendItem { swatch: Swatch::Box { color: palette_color(i) }, text: name })
            .collect();
        let legend = layout_legend(&items, width - 2.0 * RIGHT_MARGIN_PX);
        let labels_top = plot.bottom() + NAME_ROW_PX;
        let legend_top = labels_top + labels.height_px + 8.0;
        let height = legend_top + legend.height_px + 8.0;

        let mut svg = Svg::begin("stacked", width, height, &self.title);
        draw_title(&mut svg, &self.title, width - 24.0);
        draw_y_axis(&mut svg, &plot, &ticks, &self.y_label);
        let scale = plot.y_scale(ticks.domain());
        let bar_width = (slot - 8.0).min(MAX_BAR_WIDTH_PX);
        let mut x = plot.left + GROUP_GAP_PX / 2.0;
        for group in &self.groups {
            for (j, bar) in group.bars.iter().enumerate() {
                let center = x + slot * (j as f64 + 0.5);
                svg.open_group(Some(&tooltip(group, bar)));
                draw_stack(&mut svg, bar, &scale, center, bar_width, &color_index);
                let name = truncate(&bar.name, chars_fitting(slot - 2.0, NAME_FONT_PX));
                let style = TextStyle::new(NAME_FONT_PX, Anchor::Middle);
                svg.text(center, plot.bottom() + 13.0, &name, style);
                svg.close_group();
            }
            let own_width = group_width(group) - GROUP_GAP_PX;
            svg.open_group(Some(&group.label));
            labels.draw(&mut svg, x + own_width / 2.0, labels_top, &group.label);
            svg.close_group();
            x += own_width + GROUP_GAP_PX;
        }
        draw_baseline(&mut svg, &plot);
        draw_legend(&mut svg, &items, &legend, (RIGHT_MARGIN_PX, legend_top));
        svg.finish()
    }
}

/// "case / bar: total (segment value, …)", shown on hover.
fn tooltip(group: &StackGroup, bar: &StackBar) -> String {
    let mut text = format!("{} / {}: {}", group.label, bar.name, format_value(bar_total(bar)));
    for (i, (name, value)) in bar.segments.iter().enumerate() {
        text.push_str(if i == 0 { " (" } else { ", " });
        text.push_str(name);
        text.push(' ');
        text.push_str(&format_value(segment_value(*value)));
    }
    if !bar.segments.is_empty() {
        text.push(')');
    }
    text
}

/// Segments stacked bottom-up from zero, and the total above the bar.
fn draw_stack(
    svg: &mut Svg,
    bar: &StackBar,
    scale: &Scale,
    center: f64,
    bar_width: f64,
    color_index: &BTreeMap<&str, usize>,
) {
    let mut base = 0.0;
    for (name, value) in &bar.segments {
        let value = segment_value(*value);
        if value == 0.0 {
            continue;
        }
        let top = (base + value).min(crate::axis::VALUE_LIMIT);
        let (y_bottom, y_top) = (scale.map(base), scale.map(top));
        let color = palette_color(color_index.get(name.as_str()).copied().unwrap_or(0));
        svg.rect(center - bar_width / 2.0, y_top, bar_width, y_bottom - y_top, color);
        base = top;
    }
    let mut label_at = base;
    if !bar.reps.is_empty() {
        svg.open_marks_group("reps", "#222222", "none", 0.5);
        for v in bar.reps.iter().filter(|v| v.is_finite()) {
            svg.circle(center + bar_width / 4.0, scale.map(segment_value(*v)), 2.0);
        }
        svg.close_group();
    }
    if let Some((lo, hi)) = bar.drawn_interval() {
        let (y_lo, y_hi) = (scale.map(lo), scale.map(hi));
        svg.open_marks_group("errorbars", "none", "#222222", 0.9);
        svg.segment((center, y_lo), (center, y_hi));
        svg.segment((center - 4.0, y_lo), (center + 4.0, y_lo));
        svg.segment((center - 4.0, y_hi), (center + 4.0, y_hi));
        svg.close_group();
        label_at = label_at.max(hi);
    }
    let style = TextStyle::new(NAME_FONT_PX, Anchor::Middle);
    svg.text(center, scale.map(label_at) - 4.0, &format_value(base), style);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{assert_hostile_escaped, assert_well_formed, check_well_formed, HOSTILE};
    use proptest::prelude::*;

    fn stack(name: &str, user: f64, kernel: f64) -> StackBar {
        StackBar::new(name, vec![("user".into(), user), ("kernel".into(), kernel)])
    }

    fn sample() -> StackedBarChart {
        StackedBarChart {
            title: "CPU per operation".into(),
            y_label: "CPU per unit (µs/op)".into(),
            groups: vec![
                StackGroup {
                    label: "clients=1".into(),
                    bars: vec![stack("base", 12.0, 30.0), stack("new", 11.0, 25.5)],
                },
                StackGroup {
                    label: "clients=4".into(),
                    bars: vec![stack("base", 14.0, 41.0), stack("new", 13.0, 38.0)],
                },
            ],
        }
    }

    #[test]
    fn renders_groups_bars_segments_and_legend() {
        let svg = sample().to_svg();
        assert_well_formed(&svg);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart chart-stacked\""));
        assert!(svg.contains(">CPU per unit (µs/op)</text>"));
        assert_eq!(svg.matches(">base</text>").count(), 2);
        assert_eq!(svg.matches(">new</text>").count(), 2);
        assert!(svg.contains(">clients=4</text>"));
        assert!(svg.contains(">user</text>") && svg.contains(">kernel</text>"));
        assert!(svg.contains(">55</text>"), "total label");
        // 8 segments + 2 legend boxes + background, all segments of one name share a colour.
        assert_eq!(svg.matches(&format!("fill=\"{}\"", palette_color(0))).count(), 5);
        assert_eq!(svg.matches(&format!("fill=\"{}\"", palette_color(1))).count(), 5);
    }

    #[test]
    fn segments_stack_upwards() {
        let svg = sample().to_svg();
        let ys: Vec<f64> = svg
            .split("<rect x=")
            .skip(1)
            .take(2)
            .map(|r| r.split("y=\"").nth(1).and_then(|s| s.split('"').next()).unwrap().parse().unwrap())
            .collect();
        assert!(ys[1] < ys[0], "second segment above the first: {ys:?}");
    }

    #[test]
    fn empty_says_no_data() {
        for groups in [vec![], vec![StackGroup { label: "x".into(), bars: vec![] }]] {
            let svg = StackedBarChart { title: "t".into(), y_label: "y".into(), groups }.to_svg();
            assert_well_formed(&svg);
            assert!(svg.contains(">no data</text>"));
        }
    }

    #[test]
    fn odd_values_are_tolerated() {
        let bars = vec![
            StackBar::new("empty", vec![]),
            StackBar::new("zero", vec![("a".into(), 0.0)]),
            StackBar::new("bad", vec![("a".into(), -5.0), ("b".into(), f64::NAN)]),
            StackBar::new("huge", vec![("a".into(), 1e308), ("b".into(), 1e308)]),
        ];
        let groups =
            vec![StackGroup { label: "g".into(), bars }, StackGroup { label: "none".into(), bars: vec![] }];
        let svg = StackedBarChart { title: "t".into(), y_label: "y".into(), groups }.to_svg();
        assert_well_formed(&svg);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn totals_carry_error_bars_and_repetitions() {
        let mut bar = stack("new", 1.0, 2.0);
        bar.interval = Some((2.5, 9.0));
        bar.reps = vec![2.8, 3.1, 3.3];
        let c = StackedBarChart {
            title: "t".into(),
            y_label: "u".into(),
            groups: vec![StackGroup { label: "g".into(), bars: vec![bar, stack("base", 1.0, 1.0)] }],
        };
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert_eq!(svg.matches("<g class=\"errorbars\"").count(), 1);
        assert_eq!(
            svg.split("<g class=\"reps\"")
                .nth(1)
                .unwrap()
                .split("</g>")
                .next()
                .unwrap()
                .matches("<circle")
                .count(),
            3
        );
        assert!(svg.contains(">10</text>") || svg.contains(">9</text>"), "the interval sets the axis");
    }

    #[test]
    fn caller_text_is_escaped() {
        let bar = StackBar::new(HOSTILE, vec![(HOSTILE.into(), 1.0)]);
        let c = StackedBarChart {
            title: HOSTILE.into(),
            y_label: HOSTILE.into(),
            groups: vec![StackGroup { label: HOSTILE.into(), bars: vec![bar] }],
        };
        let svg = c.to_svg();
        assert_well_formed(&svg);
        assert_hostile_escaped(&svg);
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(sample().to_svg(), sample().to_svg());
    }

    proptest! {
        #[test]
        fn arbitrary_stacks_give_well_formed_svg(
            groups in prop::collection::vec(
                prop::collection::vec(prop::collection::vec((0..4u8, any::<f64>()), 0..4), 0..4),
                0..6,
            ),
        ) {
            let groups = groups
                .into_iter()
                .enumerate()
                .map(|(i, bars)| StackGroup {
                    label: format!("case {i}"),
                    bars: bars
                        .into_iter()
                        .enumerate()
                        .map(|(j, segs)| {
                            StackBar::new(
                                format!("bar {j}"),
                                segs.into_iter().map(|(k, v)| (format!("seg {k}"), v)).collect(),
                            )
                        })
                        .collect(),
                })
                .collect();
            let svg = StackedBarChart { title: "t".into(), y_label: "y".into(), groups }.to_svg();
            prop_assert!(check_well_formed(&svg).is_ok(), "{}", svg);
        }
    }
}
