//! Flame graphs of a point's measured windows: folded call stacks merged into a frame tree
//! (`tree`), laid out as rectangles whose widths are proportional to samples (`layout`),
//! drawn as a static SVG (`svg`), and the differential view that colours the new side's
//! frames by the change of their CPU time per unit of work (`diff`).

pub(crate) mod diff;
pub(crate) mod layout;
pub mod points;
pub mod svg;
pub(crate) mod tree;

#[cfg(test)]
mod tests;

pub use diff::{frame_changes, FrameChange};
pub use points::{profiled_points, top_frames_text, ProfiledPoint};
pub use svg::standalone;
pub use tree::FrameTree;

use crate::units::{num, unit_view};
use racehorse_core::WorkUnit;

/// The flame graph of one point's windows (an inline SVG element).
pub fn flame_chart(tree: &FrameTree, title: &str, unit: WorkUnit) -> String {
    let u = unit_view(unit);
    let fill = |i: usize| svg::warm(&tree.frames[i].name);
    let note = |i: usize| svg::plain_note(tree, i, u.cpu_label, u.cpu_scale);
    let legend = "width: share of the window's samples; colours only tell frames apart".to_string();
    svg::flame_svg(tree, title, &svg::Paint { fill: &fill, note: &note, legend })
}

/// The new side's flame graph coloured by the change of each frame's own CPU time per unit
/// of work against base (an inline SVG element).
pub fn diff_chart(base: &FrameTree, new: &FrameTree, title: &str, unit: WorkUnit) -> String {
    let u = unit_view(unit);
    let changes = frame_changes(base, new);
    let colours = diff::new_side_colours(&changes, new.frames.len());
    let mut by_frame: Vec<Option<&FrameChange>> = vec![None; new.frames.len()];
    for c in &changes {
        if let Some(i) = c.new_frame {
            by_frame[i] = Some(c);
        }
    }
    let fill = |i: usize| colours[i].clone();
    let note = |i: usize| by_frame[i].map_or_else(String::new, |c| change_note(c, u.cpu_label, u.cpu_scale));
    let mut legend =
        "width: new samples; red: costs more per unit of work, blue: less, grey: not in base".to_string();
    if base.estimated || new.estimated {
        legend.push_str(" (seconds per sample estimated from CPU time)");
    }
    svg::flame_svg(new, title, &svg::Paint { fill: &fill, note: &note, legend })
}

/// "own: 1.20 → 2.40 µs/op (×2.00)" and the same with callees, for a hover text.
pub fn change_note(c: &FrameChange, label: &str, scale: f64) -> String {
    let show = |b: Option<f64>, n: Option<f64>, r: Option<f64>| match (b, n) {
        (Some(b), Some(n)) if b == 0.0 && n == 0.0 => "none".to_string(),
        (Some(b), Some(n)) => {
            let r = r.map_or_else(|| "new".to_string(), |r| format!("×{r:.2}"));
            format!("{} → {} {label} ({r})", num(b * scale), num(n * scale))
        }
        _ => "no units of work on a side".to_string(),
    };
    if c.base_frame.is_none() {
        return "\nnot in base".to_string();
    }
    format!(
        "\nown: {}\nwith callees: {}",
        show(c.base_self, c.new_self, c.self_ratio()),
        show(c.base_total, c.new_total, c.total_ratio())
    )
}
