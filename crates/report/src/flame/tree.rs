//! Folded stacks ("comm;outer;…;leaf" with a sample count) merged into one tree of frames:
//! identical prefixes share a node, so a frame's samples include its callees', and every
//! frame knows the CPU seconds its samples stand for (to divide by the units of work).

use racehorse_core::{CellResult, FoldedStack};
use std::collections::HashMap;

/// The name of the tree's root, the whole window.
pub const ROOT: &str = "all";

/// One frame: a function called by its parent frame (or the process name under the root).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub name: String,
    /// Samples in this frame and its callees.
    pub samples: u64,
    /// Samples with this frame as the leaf (its own time).
    pub self_samples: u64,
    /// CPU seconds those samples stand for, with callees and alone.
    pub cpu_s: f64,
    pub self_cpu_s: f64,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub depth: usize,
}

/// Frames of one point's profiled windows; index 0 is the root.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameTree {
    pub frames: Vec<Frame>,
    /// Every sample of the windows, also those whose stacks were dropped or not recorded.
    pub window_samples: u64,
    /// Samples in stacks dropped for being below the kept share.
    pub dropped_samples: u64,
    /// Units of work done in the windows the stacks come from.
    pub units: f64,
    /// Some window had no sampling frequency: its seconds per sample were estimated from the
    /// window's CPU time divided by its samples.
    pub estimated: bool,
    /// Windows merged.
    pub windows: usize,
    index: HashMap<(usize, String), usize>,
}

impl Default for FrameTree {
    fn default() -> Self {
        FrameTree::new()
    }
}

impl FrameTree {
    /// A tree with only the root.
    pub fn new() -> FrameTree {
        let root = Frame {
            name: ROOT.to_string(),
            samples: 0,
            self_samples: 0,
            cpu_s: 0.0,
            self_cpu_s: 0.0,
            parent: None,
            children: Vec::new(),
            depth: 0,
        };
        FrameTree {
            frames: vec![root],
            window_samples: 0,
            dropped_samples: 0,
            units: 0.0,
            estimated: false,
            windows: 0,
            index: HashMap::new(),
        }
    }

    /// Adds one folded stack of `samples` samples worth `s_per_sample` CPU seconds each.
    pub fn add(&mut self, stack: &str, samples: u64, s_per_sample: f64) {
        let cpu_s = samples as f64 * s_per_sample;
        let mut at = 0;
        self.bump(0, samples, cpu_s);
        for name in stack.split(';').filter(|n| !n.is_empty()) {
            at = self.child(at, name);
            self.bump(at, samples, cpu_s);
        }
        let leaf = &mut self.frames[at];
        leaf.self_samples += samples;
        leaf.self_cpu_s += cpu_s;
    }

    fn bump(&mut self, at: usize, samples: u64, cpu_s: f64) {
        self.frames[at].samples += samples;
        self.frames[at].cpu_s += cpu_s;
    }

    fn child(&mut self, parent: usize, name: &str) -> usize {
        if let Some(&i) = self.index.get(&(parent, name.to_string())) {
            return i;
        }
        let i = self.frames.len();
        let depth = self.frames[parent].depth + 1;
        self.frames.push(Frame {
            name: name.to_string(),
            samples: 0,
            self_samples: 0,
            cpu_s: 0.0,
            self_cpu_s: 0.0,
            parent: Some(parent),
            children: Vec::new(),
            depth,
        });
        self.frames[parent].children.push(i);
        self.index.insert((parent, name.to_string()), i);
        i
    }

    /// A tree of plain folded stacks (one second per sample, no units): for tests and tools.
    pub fn from_folded(stacks: &[FoldedStack]) -> FrameTree {
        let mut t = FrameTree::new();
        for s in stacks {
            t.add(&s.stack, s.samples, 1.0);
            t.window_samples += s.samples;
        }
        t.windows = 1;
        t
    }

    /// The stacks of the profiled windows among `cells` merged; None when none has stacks.
    /// A window's seconds per sample are 1 / its sampling frequency, or, for a window
    /// stored without one, its system CPU time divided by its samples (`estimated`).
    pub fn from_cells(cells: &[&CellResult]) -> Option<FrameTree> {
        let mut t = FrameTree::new();
        for c in cells {
            let Some(p) = c.profile.as_ref().filter(|p| !p.stacks.is_empty()) else { continue };
            let s_per_sample = if p.frequency_hz > 0 {
                1.0 / f64::from(p.frequency_hz)
            } else {
                t.estimated = true;
                if p.samples > 0 {
                    c.cpu.total_s() / p.samples as f64
                } else {
                    0.0
                }
            };
            for s in &p.stacks {
                t.add(&s.stack, s.samples, s_per_sample);
            }
            t.window_samples += p.samples.max(p.stacks.iter().map(|s| s.samples).sum());
            t.dropped_samples += p.stacks_dropped_samples;
            t.units += c.units;
            t.windows += 1;
        }
        (t.windows > 0).then_some(t)
    }

    /// CPU seconds per unit of work of a frame, with its callees (`own`: alone); None
    /// without units.
    pub fn per_unit(&self, frame: usize, own: bool) -> Option<f64> {
        let f = &self.frames[frame];
        let s = if own { f.self_cpu_s } else { f.cpu_s };
        (self.units > 0.0).then(|| s / self.units)
    }

    /// Share of all the windows' samples, in percent.
    pub fn share_pct(&self, frame: usize) -> f64 {
        let all = self.window_samples.max(self.frames[0].samples);
        if all == 0 {
            0.0
        } else {
            100.0 * self.frames[frame].samples as f64 / all as f64
        }
    }

    /// The names from the process down to `frame` (the root left out).
    pub fn path(&self, frame: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut at = Some(frame);
        while let Some(i) = at.filter(|&i| i != 0) {
            out.push(self.frames[i].name.as_str());
            at = self.frames[i].parent;
        }
        out.reverse();
        out
    }

    /// The frame reached by following `path` from the root.
    pub fn find(&self, path: &[&str]) -> Option<usize> {
        let mut at = 0;
        for name in path {
            at = *self.index.get(&(at, (*name).to_string()))?;
        }
        Some(at)
    }

    /// Children of a frame by name, as flame graphs order them (so two graphs line up).
    pub fn sorted_children(&self, frame: usize) -> Vec<usize> {
        let mut c = self.frames[frame].children.clone();
        c.sort_by(|a, b| self.frames[*a].name.cmp(&self.frames[*b].name));
        c
    }

    /// "leaf ← caller ← caller …": the frame and up to `callers` of its callers, nearest first.
    pub fn with_callers(&self, frame: usize, callers: usize) -> String {
        let path = self.path(frame);
        let mut parts: Vec<&str> = path.iter().rev().take(callers + 1).copied().collect();
        if path.len() > callers + 1 {
            parts.push("…");
        }
        parts.join(" ← ")
    }
}
