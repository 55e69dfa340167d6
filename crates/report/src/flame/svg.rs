//! A flame graph as static SVG: one rectangle per frame (root at the bottom), a label cut to
//! fit, and a `<title>` (shown on hover) naming the frame with its samples and share, and
//! whatever the caller's painter adds (the differential view's change per unit of work).
//! No script: the report pages forbid them (docs/profiling.md, "Reading flame graphs").

use crate::flame::layout::{layout, WIDTH_PX};
use crate::flame::tree::FrameTree;
use crate::render::escape::escape_control;
use racehorse_chart::escape;
use std::fmt::Write;

const ROW_PX: f64 = 16.0;
const TOP_PX: f64 = 40.0;
const BOTTOM_PX: f64 = 24.0;
const FONT_PX: f64 = 11.0;
/// Width of one character of the monospace label font, about 0.6 em.
const CHAR_PX: f64 = FONT_PX * 0.6;

/// How frames are coloured and what their hover text adds.
pub struct Paint<'a> {
    /// The fill colour of a frame (`#rrggbb` or `rgb(…)`).
    pub fill: &'a dyn Fn(usize) -> String,
    /// Lines added to a frame's hover text after its samples and share.
    pub note: &'a dyn Fn(usize) -> String,
    /// A line under the graph's title (e.g. the colour legend).
    pub legend: String,
}

/// A warm colour from a frame's name, the same name always the same colour.
pub fn warm(name: &str) -> String {
    let h = name.bytes().fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
    let r = 205 + (h % 50);
    let g = 60 + ((h >> 8) % 170);
    let b = (h >> 16) % 60;
    format!("rgb({r},{g},{b})")
}

/// Plain colouring by name, with CPU per unit in the hover text when the tree has units.
pub fn plain_note(tree: &FrameTree, frame: usize, cpu_label: &str, cpu_scale: f64) -> String {
    match tree.per_unit(frame, false) {
        Some(v) => format!("\n{} {cpu_label} with callees", crate::units::num(v * cpu_scale)),
        None => String::new(),
    }
}

/// A label of `name` that fits `w_px`, cut with "..", or nothing when not even 3 characters fit.
fn label(name: &str, w_px: f64) -> Option<String> {
    let fits = ((w_px - 4.0) / CHAR_PX).floor() as usize;
    if fits < 3 {
        return None;
    }
    let n = name.chars().count();
    Some(if n <= fits { name.to_string() } else { name.chars().take(fits - 2).collect::<String>() + ".." })
}

/// The SVG element (no XML declaration) of `tree` titled `title`.
pub fn flame_svg(tree: &FrameTree, title: &str, paint: &Paint) -> String {
    let l = layout(tree, WIDTH_PX);
    let rows = l.max_depth + 1;
    let height = TOP_PX + rows as f64 * ROW_PX + BOTTOM_PX;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" width=\"{w}\" height=\"{height}\" \
         viewBox=\"0 0 {w} {height}\" font-family=\"monospace\" font-size=\"{FONT_PX}\">\n\
         <style>.fr:hover rect{{stroke:#000;stroke-width:1}}</style>\n\
         <title>{t}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n\
         <text x=\"{cx}\" y=\"16\" text-anchor=\"middle\" font-size=\"14\">{t}</text>\n\
         <text x=\"{cx}\" y=\"31\" text-anchor=\"middle\" fill=\"#555\">{legend}</text>\n",
        w = WIDTH_PX,
        cx = WIDTH_PX / 2.0,
        t = escape(&escape_control(title)),
        legend = escape(&escape_control(&paint.legend)),
    );
    for r in &l.rects {
        let f = &tree.frames[r.frame];
        let y = TOP_PX + (l.max_depth - r.depth) as f64 * ROW_PX;
        let name = escape_control(&f.name);
        let hover = format!(
            "{name}\n{} samples, {:.2}% of the window{}",
            f.samples,
            tree.share_pct(r.frame),
            (paint.note)(r.frame)
        );
        let _ = write!(
            out,
            "<g class=\"fr\"><title>{}</title><rect x=\"{:.2}\" y=\"{y}\" width=\"{:.2}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\" rx=\"2\"/>",
            escape(&hover),
            r.x_px,
            r.w_px,
            ROW_PX - 1.0,
            (paint.fill)(r.frame)
        );
        if let Some(text) = label(&name, r.w_px) {
            let _ =
                write!(out, "<text x=\"{:.2}\" y=\"{}\">{}</text>", r.x_px + 2.0, y + 11.5, escape(&text));
        }
        out.push_str("</g>\n");
    }
    let mut foot = format!("{} samples in {} window(s)", tree.window_samples, tree.windows);
    if tree.dropped_samples > 0 {
        let _ = write!(foot, "; {} samples in rare stacks not kept", tree.dropped_samples);
    }
    if l.omitted_frames > 0 {
        let _ = write!(
            foot,
            "; {} frames ({} samples) too narrow or deep to draw, left out",
            l.omitted_frames, l.omitted_samples
        );
    }
    let _ =
        writeln!(out, "<text x=\"4\" y=\"{}\" fill=\"#555\">{}</text>\n</svg>", height - 8.0, escape(&foot));
    out
}

/// A standalone SVG file: the XML declaration, then the graph.
pub fn standalone(svg: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n{svg}")
}
