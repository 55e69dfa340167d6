//! The profiled points of one run for `racehorse profile`: each point's windows merged into
//! a frame tree, named so a user can pick one, and its hottest frames as text.

use crate::flame::tree::FrameTree;
use crate::model::{group_cells, shown, table_title, Side};
use crate::units::{num, unit_view};
use racehorse_core::WorkUnit;
use std::fmt::Write;

/// One point of a run with at least one profiled window.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfiledPoint {
    /// `workload k=v …`, with ` [variant]` for a variant other than the default.
    pub label: String,
    /// Words that select it: the workload, the variant, and each `k=v`.
    pub words: Vec<String>,
    pub unit: WorkUnit,
    /// Profiled windows.
    pub windows: usize,
    /// The call stacks merged, None when the windows were profiled without call chains.
    pub tree: Option<FrameTree>,
}

impl ProfiledPoint {
    /// Whether every word of `query` (space separated) names this point.
    pub fn matches(&self, query: &str) -> bool {
        query.split_whitespace().all(|q| self.words.iter().any(|w| w == q))
    }
}

/// The profiled points of a side in the order they ran.
pub fn profiled_points(side: &Side) -> Vec<ProfiledPoint> {
    let cells: Vec<_> =
        side.cells.iter().filter(|c| side.variant.as_ref().is_none_or(|v| &c.spec.variant == v)).collect();
    let mut groups: Vec<_> = group_cells(cells.iter().copied(), true).into_iter().collect();
    groups.sort_by_key(|(_, g)| g.first);
    let mut out = Vec::new();
    for (key, g) in groups {
        let windows = g.cells.iter().filter(|c| c.profile.is_some()).count();
        if windows == 0 {
            continue;
        }
        let params: Vec<String> = key.params.iter().map(|(n, v)| format!("{n}={}", shown(n, v))).collect();
        let label = format!("{} {}", table_title(&key.workload, &key.variant), params.join(" "));
        let mut words = params;
        words.push(key.workload.clone());
        words.push(key.variant.clone());
        out.push(ProfiledPoint {
            label: label.trim_end().to_string(),
            words,
            unit: g.unit,
            windows,
            tree: FrameTree::from_cells(&g.ok),
        });
    }
    out
}

/// The `top` frames with the most own samples, with their callers, as text.
pub fn top_frames_text(tree: &FrameTree, unit: WorkUnit, top: usize) -> String {
    let u = unit_view(unit);
    let mut own: Vec<usize> = (1..tree.frames.len()).filter(|&i| tree.frames[i].self_samples > 0).collect();
    own.sort_by(|a, b| tree.frames[*b].self_samples.cmp(&tree.frames[*a].self_samples).then(a.cmp(b)));
    let all = tree.window_samples.max(1) as f64;
    let mut out = format!(
        "{} samples in {} window(s); frames by own samples (own %, with callees %, own CPU {}), with callers\n",
        tree.window_samples, tree.windows, u.cpu_label
    );
    if tree.dropped_samples > 0 {
        let _ = writeln!(out, "{} samples in rare stacks were not kept", tree.dropped_samples);
    }
    let _ = writeln!(out, "  {:>6}  {:>7}  {:>9}  frame ← callers", "own %", "total %", u.cpu_label);
    for i in own.into_iter().take(top) {
        let f = &tree.frames[i];
        let cpu = tree.per_unit(i, true).map_or_else(|| "n/a".to_string(), |v| num(v * u.cpu_scale));
        let _ = writeln!(
            out,
            "  {:>6.2}  {:>7.2}  {:>9}  {}",
            100.0 * f.self_samples as f64 / all,
            tree.share_pct(i),
            cpu,
            tree.with_callers(i, 3)
        );
    }
    out
}
