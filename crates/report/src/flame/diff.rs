//! The differential view: every frame of the new side's tree against the frame at the same
//! call path in the base's, in CPU seconds per unit of work (not in share of samples, so a
//! workload that did more work with the same samples is not read as slower). A frame is
//! coloured by the change of its own time per unit: red where it costs more, blue where it
//! costs less, the deeper the colour the bigger the change (full at ×2 or ×½), near-white
//! for changes under 5%, grey for frames the base does not have (or without units).

use crate::flame::tree::FrameTree;

/// Changes under this fraction are drawn as unchanged.
pub const UNCHANGED_FRACTION: f64 = 0.05;
/// Grey: a frame the base does not have, or no per-unit figure on a side.
pub const GREY: &str = "rgb(200,200,200)";
/// Near-white: no change worth a colour (or no own time on either side).
pub const PALE: &str = "rgb(238,238,238)";

/// A frame's own CPU time per unit (and with callees) in base and new; None = absent there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameChange {
    /// The frame in the new tree (None: only in base).
    pub new_frame: Option<usize>,
    /// The frame in the base tree (None: only in new).
    pub base_frame: Option<usize>,
    /// Own CPU seconds per unit, base and new (0 when absent on that side but the side has units).
    pub base_self: Option<f64>,
    pub new_self: Option<f64>,
    /// CPU seconds per unit with callees.
    pub base_total: Option<f64>,
    pub new_total: Option<f64>,
}

impl FrameChange {
    /// New over base own time per unit: None when a side has no figure or base is 0.
    pub fn self_ratio(&self) -> Option<f64> {
        ratio(self.base_self?, self.new_self?)
    }

    /// New over base, with callees.
    pub fn total_ratio(&self) -> Option<f64> {
        ratio(self.base_total?, self.new_total?)
    }

    /// The fill colour of the frame in the new side's graph.
    pub fn colour(&self) -> String {
        if self.base_frame.is_none() {
            return GREY.to_string();
        }
        let (Some(b), Some(n)) = (self.base_self, self.new_self) else { return GREY.to_string() };
        if b == 0.0 && n == 0.0 {
            return PALE.to_string();
        }
        // log2 of the ratio, a new own time out of nothing counted as the full step.
        let step = if b == 0.0 {
            1.0
        } else if n == 0.0 {
            -1.0
        } else {
            (n / b).log2()
        };
        if (n - b).abs() <= UNCHANGED_FRACTION * b {
            return PALE.to_string();
        }
        let t = step.abs().min(1.0);
        let fade = (225.0 - 185.0 * t).round() as u8;
        if step > 0.0 {
            format!("rgb(255,{fade},{fade})")
        } else {
            format!("rgb({fade},{fade},255)")
        }
    }
}

fn ratio(base: f64, new: f64) -> Option<f64> {
    (base > 0.0).then(|| new / base)
}

fn figures(t: &FrameTree, frame: Option<usize>) -> (Option<f64>, Option<f64>) {
    match frame {
        Some(i) => (t.per_unit(i, true), t.per_unit(i, false)),
        None => ((t.units > 0.0).then_some(0.0), (t.units > 0.0).then_some(0.0)),
    }
}

/// One change per call path of either tree (the root left out): new frames in the new tree's
/// order, then the paths only the base has.
pub fn frame_changes(base: &FrameTree, new: &FrameTree) -> Vec<FrameChange> {
    let mut out = Vec::with_capacity(new.frames.len());
    let change = |b: Option<usize>, n: Option<usize>| {
        let (base_self, base_total) = figures(base, b);
        let (new_self, new_total) = figures(new, n);
        FrameChange { new_frame: n, base_frame: b, base_self, new_self, base_total, new_total }
    };
    for i in 1..new.frames.len() {
        out.push(change(base.find(&new.path(i)), Some(i)));
    }
    for i in 1..base.frames.len() {
        if new.find(&base.path(i)).is_none() {
            out.push(change(Some(i), None));
        }
    }
    out
}

/// The colour of every frame of the new tree, by index (the root pale).
pub fn new_side_colours(changes: &[FrameChange], frames: usize) -> Vec<String> {
    let mut out = vec![PALE.to_string(); frames];
    for c in changes {
        if let Some(i) = c.new_frame {
            out[i] = c.colour();
        }
    }
    out
}
