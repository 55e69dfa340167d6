//! Minimal SVG writer: appends elements to a String, numbers rounded to at most 2 decimals,
//! all caller text escaped.

use std::fmt::{self, Write};

use crate::escape;

/// Largest coordinate magnitude written; keeps attributes finite and short.
const COORD_LIMIT: f64 = 1.0e6;

/// A number formatted for an SVG attribute: finite, at most 2 decimals, never "-0".
#[derive(Debug, Clone, Copy)]
pub(crate) struct Num(pub f64);

impl Num {
    /// Appends the number to `out` without going through `fmt` (the hot path for markers and
    /// polylines): integer arithmetic on hundredths, exact and fast.
    pub(crate) fn push_to(self, out: &mut String) {
        let v = if self.0.is_finite() { self.0.clamp(-COORD_LIMIT, COORD_LIMIT) } else { 0.0 };
        let hundredths = (v * 100.0).round() as i64;
        let abs = hundredths.unsigned_abs();
        // Built right to left: [-]digits[.d[d]]
        let mut buf = [0u8; 24];
        let mut start = buf.len();
        let mut put = |byte: u8| {
            start -= 1;
            buf[start] = byte;
        };
        let frac = abs % 100;
        let last_digit = frac % 10;
        if last_digit != 0 {
            put(b'0' + last_digit as u8);
        }
        if frac != 0 {
            put(b'0' + (frac / 10) as u8);
            put(b'.');
        }
        let mut whole = abs / 100;
        loop {
            put(b'0' + (whole % 10) as u8);
            whole /= 10;
            if whole == 0 {
                break;
            }
        }
        if hundredths < 0 {
            put(b'-');
        }
        out.push_str(std::str::from_utf8(&buf[start..]).unwrap_or("0"));
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(12);
        self.push_to(&mut text);
        f.write_str(&text)
    }
}

/// Horizontal text anchoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn as_str(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// How a piece of text is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TextStyle {
    pub size_px: f64,
    pub anchor: Anchor,
    pub bold: bool,
    pub color: &'static str,
    /// Rotation in degrees around the text's anchor point (0 = none).
    pub rotate_deg: f64,
    /// Shift the baseline down by a third of an em, so `y` is roughly the text's middle.
    pub v_center: bool,
}

impl TextStyle {
    pub(crate) const fn new(size_px: f64, anchor: Anchor) -> TextStyle {
        TextStyle { size_px, anchor, bold: false, color: TEXT_COLOR, rotate_deg: 0.0, v_center: false }
    }

    pub(crate) const fn bold(self) -> TextStyle {
        TextStyle { bold: true, ..self }
    }

    pub(crate) const fn rotated(self, rotate_deg: f64) -> TextStyle {
        TextStyle { rotate_deg, ..self }
    }

    pub(crate) const fn colored(self, color: &'static str) -> TextStyle {
        TextStyle { color, ..self }
    }

    pub(crate) const fn centered(self) -> TextStyle {
        TextStyle { v_center: true, ..self }
    }
}

/// Default text colour.
pub(crate) const TEXT_COLOR: &str = "#222222";

/// Accumulates one `<svg>` document.
#[derive(Debug)]
pub(crate) struct Svg {
    out: String,
}

impl Svg {
    /// Opens the document: root element, accessible `<title>`, white background, and a group
    /// carrying the font settings (closed by [`Svg::finish`]).
    pub(crate) fn begin(kind: &str, width_px: f64, height_px: f64, title: &str) -> Svg {
        let mut out = String::with_capacity(8192);
        let (w, h) = (Num(width_px), Num(height_px));
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart chart-{kind}\" \
             viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\">"
        );
        let _ = write!(out, "<title>{}</title>", escape(title));
        let _ = write!(out, "<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>");
        out.push_str("<g font-family=\"sans-serif\" font-size=\"11\">");
        Svg { out }
    }

    /// Closes the document and returns it.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</g></svg>");
        self.out
    }

    /// Opens a `<g>`, optionally with an (escaped) tooltip `<title>`.
    pub(crate) fn open_group(&mut self, tooltip: Option<&str>) {
        self.out.push_str("<g>");
        if let Some(tip) = tooltip {
            let _ = write!(self.out, "<title>{}</title>", escape(tip));
        }
    }

    /// Opens a `<g>` with a fill and stroke shared by its children.
    pub(crate) fn open_styled_group(&mut self, fill: &str, stroke: &str) {
        let _ = write!(self.out, "<g fill=\"{fill}\" stroke=\"{stroke}\">");
    }

    /// Opens a `<g>` of a css class (our own constant names, not caller text).
    pub(crate) fn open_class_group(&mut self, class: &'static str) {
        let _ = write!(self.out, "<g class=\"{class}\">");
    }

    /// Opens a `<g>` of a css class whose children share a fill, stroke and opacity.
    pub(crate) fn open_marks_group(&mut self, class: &'static str, fill: &str, stroke: &str, opacity: f64) {
        let _ = write!(
            self.out,
            "<g class=\"{class}\" fill=\"{fill}\" stroke=\"{stroke}\" opacity=\"{}\">",
            Num(opacity)
        );
    }

    pub(crate) fn close_group(&mut self) {
        self.out.push_str("</g>");
    }

    /// A filled rectangle; negative sizes are normalised.
    pub(crate) fn rect(&mut self, x: f64, y: f64, width: f64, height: f64, fill: &str) {
        let (x, width) = if width < 0.0 { (x + width, -width) } else { (x, width) };
        let (y, height) = if height < 0.0 { (y + height, -height) } else { (y, height) };
        let _ = write!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/>",
            Num(x),
            Num(y),
            Num(width),
            Num(height)
        );
    }

    /// A straight line; `dash` is a `stroke-dasharray` value.
    pub(crate) fn line(&mut self, from: (f64, f64), to: (f64, f64), stroke: &str, width_px: f64) {
        let _ = write!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" stroke-width=\"{}\"/>",
            Num(from.0),
            Num(from.1),
            Num(to.0),
            Num(to.1),
            Num(width_px)
        );
    }

    /// A straight line whose stroke comes from the enclosing group.
    pub(crate) fn segment(&mut self, from: (f64, f64), to: (f64, f64)) {
        let _ = write!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke-width=\"1.5\"/>",
            Num(from.0),
            Num(from.1),
            Num(to.0),
            Num(to.1)
        );
    }

    /// A dashed straight line.
    pub(crate) fn dashed_line(&mut self, from: (f64, f64), to: (f64, f64), stroke: &str, dash: &str) {
        let _ = write!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" stroke-width=\"2\" \
             stroke-dasharray=\"{dash}\"/>",
            Num(from.0),
            Num(from.1),
            Num(to.0),
            Num(to.1)
        );
    }

    /// An open polyline through `points` (pixel coordinates).
    pub(crate) fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, dash: Option<&str>) {
        self.out.push_str("<polyline fill=\"none\" stroke=\"");
        self.out.push_str(stroke);
        self.out.push_str("\" stroke-width=\"2\" stroke-linejoin=\"round\"");
        if let Some(dash) = dash {
            let _ = write!(self.out, " stroke-dasharray=\"{dash}\"");
        }
        self.out.push_str(" points=\"");
        for (i, &(x, y)) in points.iter().enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            Num(x).push_to(&mut self.out);
            self.out.push(',');
            Num(y).push_to(&mut self.out);
        }
        self.out.push_str("\"/>");
    }

    /// A circle whose fill and stroke come from the enclosing group.
    pub(crate) fn circle(&mut self, cx: f64, cy: f64, radius_px: f64) {
        self.out.push_str("<circle cx=\"");
        Num(cx).push_to(&mut self.out);
        self.out.push_str("\" cy=\"");
        Num(cy).push_to(&mut self.out);
        self.out.push_str("\" r=\"");
        Num(radius_px).push_to(&mut self.out);
        self.out.push_str("\"/>");
    }

    /// Text at (x, y); the content is escaped.
    pub(crate) fn text(&mut self, x: f64, y: f64, content: &str, style: TextStyle) {
        let _ = write!(self.out, "<text x=\"{}\" y=\"{}\"", Num(x), Num(y));
        if style.anchor != Anchor::Start {
            let _ = write!(self.out, " text-anchor=\"{}\"", style.anchor.as_str());
        }
        if style.size_px != 11.0 {
            let _ = write!(self.out, " font-size=\"{}\"", Num(style.size_px));
        }
        if style.bold {
            self.out.push_str(" font-weight=\"bold\"");
        }
        if style.v_center {
            self.out.push_str(" dy=\"0.35em\"");
        }
        if style.rotate_deg != 0.0 {
            let _ =
                write!(self.out, " transform=\"rotate({} {} {})\"", Num(style.rotate_deg), Num(x), Num(y));
        }
        let _ = write!(self.out, " fill=\"{}\">{}</text>", style.color, escape(content));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_at_most_two_decimals() {
        assert_eq!(Num(1.0).to_string(), "1");
        assert_eq!(Num(12.345_678).to_string(), "12.35");
        assert_eq!(Num(0.1 + 0.2).to_string(), "0.3");
        assert_eq!(Num(-0.001).to_string(), "0");
        assert_eq!(Num(-2.5).to_string(), "-2.5");
        assert_eq!(Num(f64::NAN).to_string(), "0");
        assert_eq!(Num(f64::INFINITY).to_string(), "0");
        assert_eq!(Num(1e300).to_string(), "1000000");
        assert_eq!(Num(-1e300).to_string(), "-1000000");
        assert_eq!(Num(0.05).to_string(), "0.05");
        assert_eq!(Num(-3.5).to_string(), "-3.5");
        assert_eq!(Num(-0.4).to_string(), "-0.4");
        assert_eq!(Num(720.0).to_string(), "720");
        assert_eq!(Num(413.374).to_string(), "413.37");
    }

    #[test]
    fn text_is_escaped_and_styled() {
        let mut svg = Svg::begin("line", 100.0, 50.0, "a<b");
        svg.text(1.0, 2.0, "x&y", TextStyle::new(11.0, Anchor::Middle).rotated(-90.0));
        let out = svg.finish();
        assert!(out.contains("<title>a&lt;b</title>"));
        assert!(out.contains("text-anchor=\"middle\""));
        assert!(out.contains("transform=\"rotate(-90 1 2)\""));
        assert!(out.contains(">x&amp;y</text>"));
        assert!(out.starts_with(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart chart-line\" \
             viewBox=\"0 0 100 50\" width=\"100\" height=\"50\" role=\"img\"><title>"
        ));
        assert!(out.ends_with("</svg>"));
    }
}
