//! Where each frame's rectangle goes: the root spans the full width, every frame's children
//! share its width in proportion to their samples, side by side in name order. Frames
//! narrower than a minimum width, deeper than a maximum depth, or past a maximum count are
//! left out with their callees, and counted, so the picture stays bounded.

use crate::flame::tree::FrameTree;

/// Width of a flame graph in pixels.
pub const WIDTH_PX: f64 = 1200.0;
/// Frames narrower than this are not drawn (nor their callees).
pub const MIN_FRAME_PX: f64 = 1.0;
/// Frames deeper than this are not drawn.
pub const MAX_DEPTH: usize = 96;
/// At most this many rectangles per graph.
pub const MAX_FRAMES: usize = 2000;

/// One frame's rectangle, in pixels from the left; `depth` 0 is the root.
#[derive(Debug, Clone, PartialEq)]
pub struct Rect {
    pub frame: usize,
    pub x_px: f64,
    pub w_px: f64,
    pub depth: usize,
}

/// The rectangles of a tree and what was left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    pub rects: Vec<Rect>,
    /// Deepest drawn depth.
    pub max_depth: usize,
    /// Frames left out (with their callees) and the samples in them.
    pub omitted_frames: usize,
    pub omitted_samples: u64,
}

/// Lays `tree` out over `width_px`.
pub fn layout(tree: &FrameTree, width_px: f64) -> Layout {
    let mut out = Layout::default();
    let total = tree.frames[0].samples;
    if total == 0 {
        return out;
    }
    let px_per_sample = width_px / total as f64;
    // Depth first, children in name order, each child starting where its elder sibling ended.
    let mut todo: Vec<(usize, f64)> = vec![(0, 0.0)];
    while let Some((i, x_px)) = todo.pop() {
        let f = &tree.frames[i];
        let w_px = f.samples as f64 * px_per_sample;
        if w_px < MIN_FRAME_PX || f.depth > MAX_DEPTH || out.rects.len() >= MAX_FRAMES {
            out.omitted_frames += count_frames(tree, i);
            out.omitted_samples += f.samples;
            continue;
        }
        out.max_depth = out.max_depth.max(f.depth);
        out.rects.push(Rect { frame: i, x_px, w_px, depth: f.depth });
        let mut x = x_px;
        let mut kids = Vec::new();
        for c in tree.sorted_children(i) {
            kids.push((c, x));
            x += tree.frames[c].samples as f64 * px_per_sample;
        }
        todo.extend(kids.into_iter().rev());
    }
    out
}

/// The frame and all its callees.
fn count_frames(tree: &FrameTree, frame: usize) -> usize {
    let mut n = 0;
    let mut todo = vec![frame];
    while let Some(i) = todo.pop() {
        n += 1;
        todo.extend(tree.frames[i].children.iter().copied());
    }
    n
}
