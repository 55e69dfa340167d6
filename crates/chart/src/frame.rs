//! Shared chart furniture: plot area geometry, title, axes with grid lines, legends, category
//! labels under bars, and the "no data" placeholder.

use std::borrow::Cow;

use crate::axis::{Scale, Ticks};
use crate::svg::{Anchor, Svg, TextStyle};

/// Default chart width.
pub(crate) const WIDTH_PX: f64 = 720.0;
/// Default chart height (for "no data" and as a guide for the others).
pub(crate) const HEIGHT_PX: f64 = 360.0;
/// Height of the plotting area.
pub(crate) const PLOT_HEIGHT_PX: f64 = 250.0;
/// Top of the plotting area (below the title).
pub(crate) const PLOT_TOP_PX: f64 = 44.0;
/// Space right of the plotting area.
pub(crate) const RIGHT_MARGIN_PX: f64 = 24.0;

pub(crate) const GRID_COLOR: &str = "#e4e4e4";
pub(crate) const AXIS_COLOR: &str = "#555555";
pub(crate) const MUTED_COLOR: &str = "#666666";

const TICK_FONT_PX: f64 = 11.0;
const LABEL_FONT_PX: f64 = 12.0;
const TITLE_FONT_PX: f64 = 14.0;
const LEGEND_ROW_PX: f64 = 18.0;

/// Average glyph width of a sans-serif font relative to its size (an estimate; no font metrics).
const GLYPH_WIDTH_EM: f64 = 0.55;

/// Capitals, digits aside, are wider (`QUERY_FS_INFORMATION` is half again as wide as
/// `query_fs_information`).
const CAPITAL_WIDTH_EM: f64 = 0.68;

/// Estimated rendered width of `text`.
pub(crate) fn text_width_px(text: &str, size_px: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| {
            if c.is_uppercase() || c == '_' || c == 'm' || c == 'w' {
                CAPITAL_WIDTH_EM
            } else {
                GLYPH_WIDTH_EM
            }
        })
        .sum();
    em * size_px
}

/// `text` cut to at most `max_chars` characters, with an ellipsis when cut.
pub(crate) fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    if text.chars().count() <= max_chars {
        return Cow::Borrowed(text);
    }
    let keep = max_chars.saturating_sub(1);
    let mut cut: String = text.chars().take(keep).collect();
    cut.push('…');
    Cow::Owned(cut)
}

/// Number of characters of `size_px` text that fit in `width_px` (at least 1).
pub(crate) fn chars_fitting(width_px: f64, size_px: f64) -> usize {
    ((width_px / (size_px * GLYPH_WIDTH_EM)).floor() as usize).max(1)
}

/// The plotting rectangle, in pixels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plot {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Plot {
    pub(crate) fn right(&self) -> f64 {
        self.left + self.width
    }

    pub(crate) fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// Scale for values on the vertical axis (domain bottom → plot bottom).
    pub(crate) fn y_scale(&self, domain: (f64, f64)) -> Scale {
        Scale::new(domain, (self.bottom(), self.top))
    }

    /// Scale for values on the horizontal axis.
    pub(crate) fn x_scale(&self, domain: (f64, f64)) -> Scale {
        Scale::new(domain, (self.left, self.right()))
    }
}

/// Left margin that fits the y axis label and the widest tick label.
pub(crate) fn y_axis_margin_px(tick_labels: &[String]) -> f64 {
    let widest = tick_labels.iter().map(|l| text_width_px(l, TICK_FONT_PX)).fold(0.0, f64::max);
    30.0 + widest + 8.0
}

/// Chart title, left-aligned at the top, cut to `max_width_px` (the full text is in `<title>`).
pub(crate) fn draw_title(svg: &mut Svg, title: &str, max_width_px: f64) {
    let shown = truncate(title, chars_fitting(max_width_px, TITLE_FONT_PX * 0.95));
    svg.text(12.0, 22.0, &shown, TextStyle::new(TITLE_FONT_PX, Anchor::Start).bold());
}

/// Horizontal grid lines with tick labels left of the plot, the rotated axis label, and a
/// darker line at zero when zero is inside the domain.
pub(crate) fn draw_y_axis(svg: &mut Svg, plot: &Plot, ticks: &Ticks, y_label: &str) {
    let scale = plot.y_scale(ticks.domain());
    let style = TextStyle::new(TICK_FONT_PX, Anchor::End).colored(MUTED_COLOR).centered();
    let mut widest = 0.0_f64;
    for (value, label) in ticks.values.iter().zip(ticks.labels()) {
        let y = scale.map(*value);
        svg.line((plot.left, y), (plot.right(), y), GRID_COLOR, 1.0);
        svg.text(plot.left - 6.0, y, &label, style);
        widest = widest.max(text_width_px(&label, TICK_FONT_PX));
    }
    let (lo, hi) = ticks.domain();
    if lo < 0.0 && hi > 0.0 {
        let y = scale.map(0.0);
        svg.line((plot.left, y), (plot.right(), y), AXIS_COLOR, 1.0);
    }
    svg.line((plot.left, plot.top), (plot.left, plot.bottom()), AXIS_COLOR, 1.0);
    let mid = plot.top + plot.height / 2.0;
    let shown = truncate(y_label, chars_fitting(plot.height, LABEL_FONT_PX));
    // Next to the tick labels, even when the margin is wider for other reasons.
    let x = (plot.left - widest - 22.0).max(16.0);
    svg.text(x, mid, &shown, TextStyle::new(LABEL_FONT_PX, Anchor::Middle).rotated(-90.0).centered());
}

/// Vertical grid lines at the given (value, label) ticks over `domain`, in a group of css
/// class `class` (`axis-x`, `axis-x log2`), then the bottom axis line and the axis label.
pub(crate) fn draw_x_axis_with(
    svg: &mut Svg,
    plot: &Plot,
    domain: (f64, f64),
    ticks: &[(f64, String)],
    x_label: &str,
    class: &'static str,
) {
    let scale = plot.x_scale(domain);
    let style = TextStyle::new(TICK_FONT_PX, Anchor::Middle).colored(MUTED_COLOR);
    svg.open_class_group(class);
    for (value, label) in ticks {
        let x = scale.map(*value);
        svg.line((x, plot.top), (x, plot.bottom()), GRID_COLOR, 1.0);
        svg.text(x, plot.bottom() + 16.0, label, style);
    }
    svg.close_group();
    draw_baseline(svg, plot);
    let shown = truncate(x_label, chars_fitting(plot.width, LABEL_FONT_PX));
    let center = plot.left + plot.width / 2.0;
    svg.text(center, plot.bottom() + 36.0, &shown, TextStyle::new(LABEL_FONT_PX, Anchor::Middle));
}

/// The axis line along the bottom of the plot.
pub(crate) fn draw_baseline(svg: &mut Svg, plot: &Plot) {
    svg.line((plot.left, plot.bottom()), (plot.right(), plot.bottom()), AXIS_COLOR, 1.0);
}

/// A complete placeholder chart: the title and a centred "no data".
pub(crate) fn no_data(kind: &str, title: &str) -> String {
    let mut svg = Svg::begin(kind, WIDTH_PX, HEIGHT_PX, title);
    draw_title(&mut svg, title, WIDTH_PX - 24.0);
    let style = TextStyle::new(LABEL_FONT_PX + 2.0, Anchor::Middle).colored(MUTED_COLOR).centered();
    svg.text(WIDTH_PX / 2.0, HEIGHT_PX / 2.0, "no data", style);
    svg.finish()
}

/// What a legend entry shows before its text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    /// A short line sample, dashed or solid.
    Line { color: &'static str, dashed: bool },
    /// A filled square.
    Box { color: &'static str },
}

/// One legend entry.
#[derive(Debug, Clone)]
pub(crate) struct LegendItem<'a> {
    pub swatch: Swatch,
    pub text: &'a str,
}

/// Legend entries flowed left to right into rows of at most `width_px`.
#[derive(Debug, Clone)]
pub(crate) struct LegendLayout {
    /// Top-left corner of each entry, relative to the legend origin.
    positions: Vec<(f64, f64)>,
    pub height_px: f64,
}

const LEGEND_TEXT_CHARS: usize = 40;
const LEGEND_FONT_PX: f64 = 11.0;

fn swatch_width_px(swatch: Swatch) -> f64 {
    match swatch {
        Swatch::Line { .. } => 26.0,
        Swatch::Box { .. } => 12.0,
    }
}

/// Places legend entries in rows; an empty legend has zero height.
pub(crate) fn layout_legend(items: &[LegendItem<'_>], width_px: f64) -> LegendLayout {
    let mut positions = Vec::with_capacity(items.len());
    let (mut x, mut y) = (0.0, 0.0);
    for item in items {
        let text = truncate(item.text, LEGEND_TEXT_CHARS);
        let entry = swatch_width_px(item.swatch) + 5.0 + text_width_px(&text, LEGEND_FONT_PX) + 18.0;
        if x > 0.0 && x + entry > width_px {
            x = 0.0;
            y += LEGEND_ROW_PX;
        }
        positions.push((x, y));
        x += entry;
    }
    let height_px = if items.is_empty() { 0.0 } else { y + LEGEND_ROW_PX };
    LegendLayout { positions, height_px }
}

/// Draws a legend laid out by [`layout_legend`] with its top-left corner at `origin`.
pub(crate) fn draw_legend(
    svg: &mut Svg,
    items: &[LegendItem<'_>],
    layout: &LegendLayout,
    origin: (f64, f64),
) {
    let style = TextStyle::new(LEGEND_FONT_PX, Anchor::Start).centered();
    for (item, &(dx, dy)) in items.iter().zip(&layout.positions) {
        let (x, y) = (origin.0 + dx, origin.1 + dy + LEGEND_ROW_PX / 2.0);
        match item.swatch {
            Swatch::Line { color, dashed: true } => svg.dashed_line((x, y), (x + 26.0, y), color, "6 4"),
            Swatch::Line { color, dashed: false } => svg.line((x, y), (x + 26.0, y), color, 2.0),
            Swatch::Box { color } => svg.rect(x, y - 6.0, 12.0, 12.0, color),
        }
        let text = truncate(item.text, LEGEND_TEXT_CHARS);
        svg.text(x + swatch_width_px(item.swatch) + 5.0, y, &text, style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_whole_characters() {
        assert_eq!(truncate("abc", 5), "abc");
        assert_eq!(truncate("µµµµµµ", 4), "µµµ…");
        assert_eq!(truncate("abcdef", 1), "…");
    }

    #[test]
    fn capitals_are_estimated_wider() {
        assert!(
            text_width_px("QUERY_FS_INFORMATION", 11.0) > text_width_px("query.fs.information", 11.0) * 1.15
        );
    }

    #[test]
    fn legend_wraps_into_rows() {
        let items: Vec<LegendItem<'_>> = (0..20)
            .map(|_| LegendItem { swatch: Swatch::Box { color: "#000000" }, text: "a fairly long name" })
            .collect();
        let layout = layout_legend(&items, 600.0);
        assert!(layout.height_px > LEGEND_ROW_PX);
        assert!(layout.positions.iter().all(|&(x, _)| x < 600.0));
        assert_eq!(layout_legend(&[], 600.0).height_px, 0.0);
    }
}
