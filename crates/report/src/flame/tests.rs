//! Flame graph fixtures: folding into a tree, widths that add up, escaping, a bounded
//! picture, and the differential colours on per-unit figures.

use super::diff::{new_side_colours, GREY, PALE};
use super::layout::{layout, WIDTH_PX};
use super::*;
use racehorse_core::{CellResult, CellSpec, FoldedStack, Profile, WorkUnit};

fn folded(lines: &[(&str, u64)]) -> Vec<FoldedStack> {
    lines.iter().map(|(s, n)| FoldedStack { stack: s.to_string(), samples: *n }).collect()
}

/// A cell of `units` units whose window has `stacks` sampled at 1000 Hz.
fn cell(units: f64, stacks: &[(&str, u64)]) -> CellResult {
    let spec = CellSpec {
        workload: "command".into(),
        params: Default::default(),
        variant: "default".into(),
        rep: 1,
    };
    let mut c = CellResult::empty(spec, WorkUnit::Ops);
    c.units = units;
    let stacks = folded(stacks);
    c.profile = Some(Profile {
        event: "cpu-clock".into(),
        samples: stacks.iter().map(|s| s.samples).sum(),
        frequency_hz: 1000,
        callgraph: Some("fp".into()),
        stacks,
        ..Profile::default()
    });
    c
}

const PROGRAM: &[(&str, u64)] =
    &[("prog;main;parent;hot_a", 600), ("prog;main;parent;hot_b", 300), ("prog;main", 100)];

#[test]
fn identical_prefixes_merge_and_samples_include_callees() {
    let t = FrameTree::from_folded(&folded(PROGRAM));
    assert_eq!(t.frames.len(), 6, "all, prog, main, parent, hot_a, hot_b");
    let parent = t.find(&["prog", "main", "parent"]).expect("parent");
    assert_eq!((t.frames[parent].samples, t.frames[parent].self_samples), (900, 0));
    let main = t.find(&["prog", "main"]).expect("main");
    assert_eq!((t.frames[main].samples, t.frames[main].self_samples), (1000, 100));
    assert_eq!(t.frames[0].samples, 1000);
    let a = t.find(&["prog", "main", "parent", "hot_a"]).expect("hot_a");
    assert_eq!(t.path(a), vec!["prog", "main", "parent", "hot_a"]);
    assert_eq!(t.with_callers(a, 2), "hot_a ← parent ← main ← …");
    assert_eq!(t.share_pct(a), 60.0);
}

#[test]
fn children_share_their_parents_width_exactly() {
    let t = FrameTree::from_folded(&folded(PROGRAM));
    let l = layout(&t, WIDTH_PX);
    assert_eq!(l.rects.len(), 6);
    assert_eq!(l.omitted_frames, 0);
    for r in &l.rects {
        let kids: Vec<_> = l.rects.iter().filter(|k| t.frames[k.frame].parent == Some(r.frame)).collect();
        if kids.is_empty() {
            continue;
        }
        let sum: f64 = kids.iter().map(|k| k.w_px).sum();
        let own = t.frames[r.frame].self_samples as f64 / t.frames[r.frame].samples as f64 * r.w_px;
        assert!((sum + own - r.w_px).abs() < 1e-9, "{}: {sum} + {own} != {}", t.frames[r.frame].name, r.w_px);
        assert!(kids.iter().all(|k| k.x_px >= r.x_px - 1e-9 && k.x_px + k.w_px <= r.x_px + r.w_px + 1e-9));
    }
    assert_eq!(l.rects[0].w_px, WIDTH_PX, "the root spans the graph");
}

#[test]
fn narrow_frames_are_left_out_and_counted() {
    let t = FrameTree::from_folded(&folded(&[("p;big", 100_000), ("p;tiny;deeper", 1)]));
    let l = layout(&t, WIDTH_PX);
    assert_eq!((l.omitted_frames, l.omitted_samples), (2, 1));
    let svg = flame_chart(&t, "t", WorkUnit::Ops);
    assert!(svg.contains("2 frames (1 samples) too narrow or deep to draw, left out"), "{svg}");
    let deep: String = (0..500).map(|i| format!("f{i};")).collect();
    let t = FrameTree::from_folded(&folded(&[(&deep, 10)]));
    let l = layout(&t, WIDTH_PX);
    assert!(l.max_depth <= layout::MAX_DEPTH && l.omitted_frames > 0);
}

#[test]
fn names_are_escaped_and_labels_fit() {
    let t = FrameTree::from_folded(&folded(&[("p<x>;a&b \"q\";\u{1}ctl", 10), ("p<x>;operator<<", 1)]));
    let svg = svg::standalone(&flame_chart(&t, "point <1>", WorkUnit::Ops));
    assert!(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\""));
    assert!(!svg.contains("<x>") && !svg.contains("operator<<") && !svg.contains('\u{1}'), "{svg}");
    assert!(svg.contains("p&lt;x&gt;") && svg.contains("a&amp;b &quot;q&quot;") && svg.contains("\\x01ctl"));
    assert!(svg.contains("<title>point &lt;1&gt;</title>"));
    assert_eq!(svg.matches("<g class=\"fr\">").count(), 5);
    assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
    let long = "x".repeat(400);
    let t = FrameTree::from_folded(&folded(&[(&format!("p;{long}"), 1), ("p;y", 1000)]));
    let svg = flame_chart(&t, "t", WorkUnit::Ops);
    assert!(!svg.contains(&format!(">{long}<")), "a label longer than its frame is cut");
    assert!(svg.contains(&format!("<title>{long}\n")), "the hover text keeps the whole name");
}

#[test]
fn per_unit_cost_comes_from_frequency_and_units() {
    let c = cell(500.0, PROGRAM);
    let t = FrameTree::from_cells(&[&c]).expect("stacks");
    let a = t.find(&["prog", "main", "parent", "hot_a"]).expect("hot_a");
    // 600 samples at 1000 Hz = 0.6 s over 500 units.
    assert!((t.per_unit(a, true).unwrap() - 0.6 / 500.0).abs() < 1e-12);
    let mut old = c.clone();
    old.profile.as_mut().unwrap().frequency_hz = 0;
    old.cpu.user_s = 2.0;
    let t = FrameTree::from_cells(&[&old]).expect("stacks");
    assert!(t.estimated);
    assert!((t.per_unit(a, true).unwrap() - 0.6 * 2.0 / 500.0).abs() < 1e-12, "share × CPU per unit");
    assert!(FrameTree::from_cells(&[&cell(1.0, &[])]).is_none());
}

#[test]
fn a_frame_twice_as_costly_per_unit_is_red_with_ratio_two() {
    let base = FrameTree::from_cells(&[&cell(1000.0, PROGRAM)]).unwrap();
    let slower = [("prog;main;parent;hot_a", 600), ("prog;main;parent;hot_b", 600), ("prog;main", 100)];
    let new = FrameTree::from_cells(&[&cell(1000.0, &slower)]).unwrap();
    let changes = frame_changes(&base, &new);
    let b =
        changes.iter().find(|c| c.new_frame.map(|i| new.frames[i].name.as_str()) == Some("hot_b")).unwrap();
    assert_eq!(b.self_ratio(), Some(2.0));
    assert_eq!(b.colour(), "rgb(255,40,40)", "full red at twice the cost");
    let a =
        changes.iter().find(|c| c.new_frame.map(|i| new.frames[i].name.as_str()) == Some("hot_a")).unwrap();
    assert_eq!((a.self_ratio(), a.colour().as_str()), (Some(1.0), PALE), "hot_a's share fell, not its cost");
    let svg = diff_chart(&base, &new, "diff", WorkUnit::Ops);
    assert!(svg.contains("own: 300.0 → 600.0 µs/op (×2.00)"), "{svg}");
}

#[test]
fn twice_the_units_with_the_same_samples_is_blue() {
    let base = FrameTree::from_cells(&[&cell(1000.0, PROGRAM)]).unwrap();
    let new = FrameTree::from_cells(&[&cell(2000.0, PROGRAM)]).unwrap();
    let changes = frame_changes(&base, &new);
    let colours = new_side_colours(&changes, new.frames.len());
    let a = new.find(&["prog", "main", "parent", "hot_a"]).unwrap();
    assert_eq!(changes.iter().find(|c| c.new_frame == Some(a)).unwrap().self_ratio(), Some(0.5));
    assert_eq!(colours[a], "rgb(40,40,255)", "same shares, half the cost per unit: blue");
    let parent = new.find(&["prog", "main", "parent"]).unwrap();
    assert_eq!(colours[parent], PALE, "no own time on either side");
}

#[test]
fn new_only_frames_are_grey_and_gone_ones_are_listed() {
    let base = FrameTree::from_cells(&[&cell(1000.0, &[("p;old", 10), ("p;same", 10)])]).unwrap();
    let new = FrameTree::from_cells(&[&cell(1000.0, &[("p;fresh", 10), ("p;same", 11)])]).unwrap();
    let changes = frame_changes(&base, &new);
    let fresh = new.find(&["p", "fresh"]).unwrap();
    assert_eq!(new_side_colours(&changes, new.frames.len())[fresh], GREY);
    let gone = changes.iter().find(|c| c.new_frame.is_none()).expect("old is only in base");
    assert_eq!((gone.new_self, gone.self_ratio()), (Some(0.0), Some(0.0)));
    let same = changes.iter().find(|c| c.new_frame == new.find(&["p", "same"])).unwrap();
    assert!(same.colour().starts_with("rgb(255,"), "10% more is a light red: {}", same.colour());
}

proptest::proptest! {
    #[test]
    fn any_stacks_lay_out_inside_their_parents(
        stacks in proptest::collection::vec((proptest::collection::vec(0u8..6, 1..12), 1u64..5000), 1..60)
    ) {
        let lines: Vec<FoldedStack> = stacks
            .iter()
            .map(|(path, n)| FoldedStack {
                stack: path.iter().map(|f| format!("f{f}")).collect::<Vec<_>>().join(";"),
                samples: *n,
            })
            .collect();
        let t = FrameTree::from_folded(&lines);
        let total: u64 = lines.iter().map(|s| s.samples).sum();
        proptest::prop_assert_eq!(t.frames[0].samples, total);
        let l = layout(&t, WIDTH_PX);
        proptest::prop_assert!(l.rects.len() <= layout::MAX_FRAMES);
        let at: std::collections::HashMap<usize, &layout::Rect> = l.rects.iter().map(|r| (r.frame, r)).collect();
        for r in &l.rects {
            proptest::prop_assert!(r.x_px >= -1e-9 && r.x_px + r.w_px <= WIDTH_PX + 1e-6);
            if let Some(p) = t.frames[r.frame].parent {
                let p = at[&p];
                proptest::prop_assert!(r.x_px >= p.x_px - 1e-6 && r.x_px + r.w_px <= p.x_px + p.w_px + 1e-6);
                proptest::prop_assert_eq!(r.depth, p.depth + 1);
            }
        }
    }
}
