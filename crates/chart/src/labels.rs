//! Category labels under bars, written so that different cases never read the same: whole
//! on one line when they fit, wrapped at spaces into a few lines when every word fits, and
//! otherwise rotated, cut only where the cut labels stay distinct.

use crate::frame::{chars_fitting, text_width_px, truncate};
use crate::svg::{Anchor, Svg, TextStyle};

const CATEGORY_FONT_PX: f64 = 11.0;
/// Rotated labels longer than this are cut, unless cutting would make two of them equal.
const CATEGORY_MAX_CHARS: usize = 48;
const CATEGORY_ANGLE_DEG: f64 = 35.0;
/// Rotated labels end this far right of the slot centre, so they hang under their bar.
const ROTATED_SHIFT_PX: f64 = 4.0;
/// Wrapped labels take at most this many lines.
const MAX_LINES: usize = 4;
const LINE_PX: f64 = 13.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One line, centred.
    Line,
    /// Broken at spaces into lines of at most `max_chars`, centred.
    Wrapped,
    /// One rotated line.
    Rotated,
}

/// How category labels under bars are written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CategoryLabels {
    mode: Mode,
    max_chars: usize,
    /// Vertical space the labels take below their top.
    pub height_px: f64,
    /// How far a label reaches left of its slot's centre.
    pub left_reach_px: f64,
}

/// `label` broken at spaces into lines of at most `max_chars` (a longer word gets its own line).
pub(crate) fn wrap(label: &str, max_chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in label.split(' ').filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= max_chars => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The longest cut (at least `floor` characters) at which distinct labels stay distinct.
fn distinct_cut(labels: &[&str], floor: usize) -> usize {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut cut = floor.min(longest);
    loop {
        let mut shown: Vec<String> = labels.iter().map(|l| truncate(l, cut).into_owned()).collect();
        shown.sort();
        let mut originals: Vec<&str> = labels.to_vec();
        originals.sort();
        originals.dedup();
        shown.dedup();
        if shown.len() == originals.len() || cut >= longest {
            return cut;
        }
        cut += 4;
    }
}

/// Chooses how to write `labels`, each centred under a slot `slot_px` wide.
pub(crate) fn plan_category_labels<'a>(
    labels: impl Iterator<Item = &'a str>,
    slot_px: f64,
) -> CategoryLabels {
    let labels: Vec<&str> = labels.collect();
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let fits = chars_fitting(slot_px - 6.0, CATEGORY_FONT_PX);
    if longest <= fits || longest <= 3 {
        let max_chars = chars_fitting(slot_px - 2.0, CATEGORY_FONT_PX).max(longest);
        return CategoryLabels { mode: Mode::Line, max_chars, height_px: 16.0, left_reach_px: slot_px / 2.0 };
    }
    let lines = labels.iter().map(|l| wrap(l, fits)).collect::<Vec<_>>();
    let words_fit = lines.iter().flatten().all(|line| line.chars().count() <= fits);
    let most = lines.iter().map(Vec::len).max().unwrap_or(1);
    if words_fit && most <= MAX_LINES {
        let height_px = 6.0 + LINE_PX * most as f64;
        return CategoryLabels {
            mode: Mode::Wrapped,
            max_chars: fits,
            height_px,
            left_reach_px: slot_px / 2.0,
        };
    }
    let max_chars = distinct_cut(&labels, CATEGORY_MAX_CHARS);
    let shown = text_width_px(&"x".repeat(longest.min(max_chars)), CATEGORY_FONT_PX);
    let angle = CATEGORY_ANGLE_DEG.to_radians();
    let height_px = shown * angle.sin() + CATEGORY_FONT_PX * angle.cos() + 8.0;
    let left_reach_px = shown * angle.cos() - ROTATED_SHIFT_PX;
    CategoryLabels { mode: Mode::Rotated, max_chars, height_px, left_reach_px }
}

impl CategoryLabels {
    /// Whether labels are rotated.
    #[cfg(test)]
    pub(crate) fn rotated(&self) -> bool {
        self.mode == Mode::Rotated
    }

    /// Writes one label centred at `center_x`, starting just below `top`.
    pub(crate) fn draw(&self, svg: &mut Svg, center_x: f64, top: f64, label: &str) {
        match self.mode {
            Mode::Line => {
                let shown = truncate(label, self.max_chars);
                svg.text(center_x, top + 12.0, &shown, TextStyle::new(CATEGORY_FONT_PX, Anchor::Middle));
            }
            Mode::Wrapped => {
                for (i, line) in wrap(label, self.max_chars).iter().enumerate() {
                    let y = top + 12.0 + LINE_PX * i as f64;
                    svg.text(center_x, y, line, TextStyle::new(CATEGORY_FONT_PX, Anchor::Middle));
                }
            }
            Mode::Rotated => {
                let shown = truncate(label, self.max_chars);
                let style = TextStyle::new(CATEGORY_FONT_PX, Anchor::End).rotated(-CATEGORY_ANGLE_DEG);
                svg.text(center_x + ROTATED_SHIFT_PX, top + 10.0, &shown, style);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels_stay_on_one_line() {
        let short = plan_category_labels(["a", "bb"].into_iter(), 60.0);
        assert_eq!(short.mode, Mode::Line);
    }

    #[test]
    fn labels_of_short_words_wrap_instead_of_being_cut() {
        let plan = plan_category_labels(
            ["clients=4 cpus=2 mode=rr", "clients=4 cpus=2 mode=stream"].into_iter(),
            80.0,
        );
        assert_eq!(plan.mode, Mode::Wrapped);
        assert_eq!(
            wrap("clients=4 cpus=2 mode=stream", plan.max_chars),
            ["clients=4", "cpus=2", "mode=stream"]
        );
        let mut svg = Svg::begin("bar", 100.0, 100.0, "t");
        plan.draw(&mut svg, 50.0, 0.0, "clients=4 cpus=2 mode=stream");
        let out = svg.finish();
        assert!(out.contains(">mode=stream</text>") && !out.contains('…'), "{out}");
    }

    #[test]
    fn long_labels_rotate_and_stay_distinct() {
        let long =
            plan_category_labels(["clients=4 cpus=2 workload=random-read-and-write"].into_iter(), 60.0);
        assert!(long.rotated());
        let a = "workload=a-very-long-name-that-goes-on-and-on-and-on-forever phase=write";
        let b = "workload=a-very-long-name-that-goes-on-and-on-and-on-forever phase=reread";
        let plan = plan_category_labels([a, b].into_iter(), 40.0);
        assert!(plan.rotated());
        assert_ne!(truncate(a, plan.max_chars), truncate(b, plan.max_chars), "never cut into equal labels");
        let same = plan_category_labels([a, a].into_iter(), 40.0);
        assert_eq!(same.max_chars, CATEGORY_MAX_CHARS, "equal labels are cut as usual");
    }
}
