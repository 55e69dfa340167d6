//! racehorse-chart: SVG charts for reports, written as plain strings (no JavaScript, no fonts
//! needed at build time), so that an HTML report stays one self-contained file.
//!
//! Four kinds: [`LineChart`] (one line per series), [`BarChart`] (signed relative changes per
//! case, coloured by [`Verdict`]), [`StackedBarChart`] (absolute values per case, bars of
//! stacked segments) and [`TimelineChart`] (one figure over runs, with its change points). Every `to_svg` returns a well-formed `<svg>` element; all caller text is
//! passed through [`escape`], and the same input always gives the same string.

mod axis;
mod bar;
mod frame;
mod labels;
mod line;
mod stacked;
mod svg;
#[cfg(test)]
mod testutil;
mod timeline;

pub use bar::{Bar, BarChart, Verdict};
pub use line::{LineChart, Series};
pub use stacked::{StackBar, StackGroup, StackedBarChart};
pub use timeline::{ChangeMark, Level, RunMark, TimelineChart};

/// Series colours: the Okabe–Ito colour-blind-safe palette, reordered so that the first
/// colours contrast best on white, with its pale yellow replaced by a darker olive.
pub const PALETTE: [&str; 8] =
    ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999933"];

/// Colour for a palette index (wraps around).
pub fn palette_color(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// XML-escapes text for SVG/HTML: `& < > " '` become entities; characters that XML 1.0 does
/// not allow at all (most control characters) become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_characters() {
        assert_eq!(escape("<script>&\"'"), "&lt;script&gt;&amp;&quot;&#39;");
        assert_eq!(escape("plain µs/op"), "plain µs/op");
        assert_eq!(escape("a\u{1}b\tc"), "a\u{FFFD}b\tc");
        assert_eq!(escape(""), "");
    }

    #[test]
    fn palette_wraps() {
        assert_eq!(palette_color(0), palette_color(PALETTE.len()));
        assert_ne!(palette_color(0), palette_color(1));
    }
}
