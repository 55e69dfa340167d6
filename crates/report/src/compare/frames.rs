//! The frames whose own CPU time per unit of work moved most between base and new, with
//! their callers: `compare`'s text answer to "where did the extra CPU go, called from where".

use crate::flame::{frame_changes, FrameChange, FrameTree};
use crate::units::{num, unit_view};
use racehorse_core::WorkUnit;
use std::fmt::Write;

/// Callers listed after a frame (nearest first), the rest as "…".
const CALLERS: usize = 3;
/// A frame name is cut to this many characters in the table.
const NAME_CHARS: usize = 60;

fn cut(s: &str) -> String {
    if s.chars().count() <= NAME_CHARS {
        s.to_string()
    } else {
        s.chars().take(NAME_CHARS - 1).collect::<String>() + "…"
    }
}

/// The changed frame's stack, outermost caller first, from the tree that has the frame.
pub fn stack_of<'t>(c: &FrameChange, base: &'t FrameTree, new: &'t FrameTree) -> Vec<&'t str> {
    match (c.new_frame, c.base_frame) {
        (Some(i), _) => new.path(i),
        (None, Some(i)) => base.path(i),
        (None, None) => Vec::new(),
    }
}

/// "leaf ← caller ← …" of a change, from the tree that has the frame.
fn name_with_callers(c: &FrameChange, base: &FrameTree, new: &FrameTree) -> String {
    let path = stack_of(c, base, new);
    let mut parts: Vec<String> = path.iter().rev().take(CALLERS + 1).map(|n| cut(n)).collect();
    if path.len() > CALLERS + 1 {
        parts.push("…".into());
    }
    parts.join(" ← ")
}

/// The `top` changes of own CPU per unit, largest absolute move first (frames with no own
/// time on either side left out).
pub fn moved_most(base: &FrameTree, new: &FrameTree, top: usize) -> Vec<FrameChange> {
    let delta = |c: &FrameChange| match (c.base_self, c.new_self) {
        (Some(b), Some(n)) => (n - b).abs(),
        _ => 0.0,
    };
    let mut all: Vec<FrameChange> = frame_changes(base, new).into_iter().filter(|c| delta(c) > 0.0).collect();
    all.sort_by(|a, b| delta(b).total_cmp(&delta(a)));
    all.truncate(top);
    all
}

/// The table as text lines, CPU per unit in the unit's display scale (µs/op, ms/MB …);
/// empty when neither side has units of work.
pub fn frames_text(base: &FrameTree, new: &FrameTree, unit: WorkUnit, top: usize) -> String {
    if base.units <= 0.0 || new.units <= 0.0 {
        return String::new();
    }
    let u = unit_view(unit);
    let mut out = format!(
        "  Frames whose own CPU per unit of work moved most ({}: base → new, ratio new/base), with callers\n",
        u.cpu_label
    );
    if base.estimated || new.estimated {
        out.push_str("  (a side was sampled at an unknown frequency: its CPU per sample is estimated)\n");
    }
    let _ = writeln!(out, "  {:>9}  {:>9}  {:>6}  frame ← callers", "base", "new", "ratio");
    for c in moved_most(base, new, top) {
        let (b, n) = (c.base_self.unwrap_or(0.0) * u.cpu_scale, c.new_self.unwrap_or(0.0) * u.cpu_scale);
        let ratio = match c.self_ratio() {
            Some(r) => crate::units::ratio(r),
            None if c.base_frame.is_none() => "new".into(),
            None => "n/a".into(),
        };
        let _ = writeln!(
            out,
            "  {:>9}  {:>9}  {:>6}  {}",
            num(b),
            num(n),
            ratio,
            name_with_callers(&c, base, new)
        );
    }
    out
}
