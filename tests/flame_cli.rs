//! Flame graphs end to end on stored runs with planted call stacks: `profile` lists a point's
//! hottest frames or writes a standalone SVG, `report` draws a flame graph per profiled point,
//! and `compare` finds the function made twice as costly per unit of work, in its text and
//! as a red frame of its HTML (checked in a headless browser where chromium is installed).

use crate::common::{text, Sandbox};
use racehorse_core::{Counter, FoldedStack, Profile};
use racehorse_report::synth::{synthetic_side, Shape};
use racehorse_store::{NewRun, Store};
use std::path::Path;

/// The program's stacks: `work` calls `hot_a` and `hot_b`; `b_samples` in `hot_b`.
fn stacks(b_samples: u64) -> Vec<FoldedStack> {
    [("prog;main;work;hot_a", 600), ("prog;main;work;hot_b", b_samples), ("prog;main", 100)]
        .iter()
        .map(|(s, n)| FoldedStack { stack: s.to_string(), samples: *n })
        .collect()
}

/// Stores a run of one workload at clients 1 and 2, three repetitions, 1000 units a window,
/// every window profiled at 1000 Hz with `hot_b` taking `b_samples`.
fn store_run(db: &Path, label: &str, b_samples: u64, call_chains: bool) {
    let shape = Shape { workloads: 1, clients: vec![1, 2], cpus: vec![1], ..Shape::default() };
    let side = synthetic_side(0, label, &shape);
    let store = Store::open(db).expect("open store");
    let run = NewRun { label: label.into(), host: "synthetic".into(), ..NewRun::default() };
    let id = store.create_run(&run).expect("create run");
    for (i, c) in side.cells.iter().enumerate() {
        let mut c = c.clone();
        c.units = 1000.0;
        let stacks = if call_chains { stacks(b_samples) } else { Vec::new() };
        c.profile = Some(Profile {
            event: "cpu-clock".into(),
            samples: stacks.iter().map(|s| s.samples).sum::<u64>().max(1),
            frequency_hz: 1000,
            callgraph: call_chains.then(|| "fp".to_string()),
            stacks,
            counters: vec![
                Counter { event: "cycles".into(), count: None },
                Counter { event: "context-switches".into(), count: Some(2000.0 + (i % 3) as f64) },
            ],
            ..Profile::default()
        });
        store.insert_cell(id, i, &c).expect("insert cell");
    }
    store.finish_run(id, racehorse_core::RunStatus::Complete).expect("finish");
}

fn two_runs(sb: &Sandbox) {
    store_run(&sb.db(), "base", 300, true);
    store_run(&sb.db(), "slow", 600, true);
}

#[test]
fn profile_lists_frames_and_writes_a_standalone_svg() {
    let sb = Sandbox::new();
    two_runs(&sb);
    let o = sb.run(&["profile", "base"]);
    assert_eq!(o.status.code(), Some(2), "two profiled points: {}", text(&o));
    assert!(
        text(&o).contains("w0 clients=1 cpus=1") && text(&o).contains("w0 clients=2 cpus=1"),
        "{}",
        text(&o)
    );
    let o = sb.run(&["profile", "base", "clients=1"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("hot_a ← work ← main ← prog"), "callers listed: {}", text(&o));
    let o = sb.run(&["profile", "base", "clients=9"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let svg = sb.dir.path().join("flame.svg");
    let o = sb.run(&["profile", "base", "w0 clients=2", "--svg", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = std::fs::read_to_string(&svg).expect("svg written");
    assert!(doc.starts_with("<?xml version=\"1.0\""), "an XML header");
    assert!(doc.contains("xmlns=\"http://www.w3.org/2000/svg\"") && doc.trim_end().ends_with("</svg>"));
    assert_eq!(doc.matches("<g class=\"fr\">").count(), 6, "all, prog, main, work, hot_a, hot_b");
    if let Some(chrome) = crate::compare_cli::chromium() {
        // Chromium parses an .svg file as XML and shows a `parsererror` when it is not well formed.
        let (dom, _) = crate::compare_cli::load_in_browser(&chrome, &svg, None);
        assert!(!dom.contains("parsererror") && dom.contains("hot_b"), "well-formed XML: {dom}");
    } else {
        racehorse_testkit::skip!("the SVG's XML check needs chromium (apt-get install chromium)");
    }
    let show = text(&sb.run(&["show", "base"]));
    assert!(show.contains("call stacks of 3000 samples: `racehorse profile`"), "{show}");
    store_run(&sb.db(), "flat", 300, false);
    let o = sb.run(&["profile", "flat", "clients=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("record with --profile callgraph=fp"), "{}", text(&o));
}

#[test]
fn compare_shows_the_frame_twice_as_costly_per_unit() {
    let sb = Sandbox::new();
    two_runs(&sb);
    let o = sb.run(&["compare", "base", "slow"]);
    let t = text(&o);
    let line = t.lines().find(|l| l.contains("hot_b ← work")).unwrap_or_else(|| panic!("hot_b listed: {t}"));
    assert!(line.contains("300000") && line.contains("600000") && line.contains(" 2.00 "), "ms/MB: {line}");
    assert!(t.contains("cycles: not supported on this machine"), "{t}");
    assert!(t.contains("context switches per unit"), "{t}");
    compare_json_has_the_profiles(&sb);
    let page = sb.dir.path().join("cmp.html");
    let o = sb.run(&["compare", "base", "slow", "-o", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&page).expect("page");
    let frame = html.split("<g class=\"fr\"><title>hot_b").nth(1).expect("hot_b in the flame graph");
    let frame = frame.split("</g>").next().unwrap_or("");
    assert!(frame.contains("fill=\"rgb(255,40,40)\"") && frame.contains("(×2.00)"), "red, doubled: {frame}");
    let report = sb.dir.path().join("run.html");
    let o = sb.run(&["report", "slow", "-o", report.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&report).expect("page");
    assert_eq!(html.matches("class=\"flame\"").count(), 2, "a flame graph per profiled point");
    browser_check(&page, &report);
}

/// `compare --format json` carries the same answer in `profiles[]`: per point, the frame
/// twice as costly per unit and the counters per unit with their intervals.
fn compare_json_has_the_profiles(sb: &Sandbox) {
    let o = sb.run(&["compare", "base", "slow", "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("compare json");
    let points = v["profiles"].as_array().expect("profiles[]");
    assert_eq!(points.len(), 2, "both points profiled on both sides: {points:?}");
    let p = &points[0];
    assert_eq!((p["side"].as_u64(), p["cpu_unit"].as_str()), (Some(0), Some("cpu_s/byte")), "{p}");
    let frames = p["frames"].as_array().expect("frames[]");
    let hot_b = frames.iter().find(|f| f["stack"].as_array().and_then(|s| s.last()) == Some(&"hot_b".into()));
    let hot_b = hot_b.unwrap_or_else(|| panic!("hot_b listed: {frames:?}"));
    assert!((hot_b["self_ratio"].as_f64().expect("ratio") - 2.0).abs() < 1e-9, "{hot_b}");
    assert_eq!(hot_b["stack"][0], "prog", "outermost caller first: {hot_b}");
    let cs = &p["counters"][0];
    assert_eq!(cs["event"], "context-switches", "{p}");
    assert!((cs["ratio"].as_f64().expect("ratio") - 1.0).abs() < 1e-3, "{cs}");
    assert_eq!(cs["verdict"], "same", "{cs}");
    assert_eq!(p["counters_unsupported"], serde_json::json!(["cycles"]), "{p}");
}

fn browser_check(compare: &Path, report: &Path) {
    let Some(chrome) = crate::compare_cli::chromium() else {
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_BROWSER").is_none(),
            "RACEHORSE_REQUIRE_BROWSER is set but chromium is not installed"
        );
        racehorse_testkit::skip!(
            "chromium not installed (scripts/test.sh installs it: apt-get install chromium)"
        );
        return;
    };
    for page in [compare, report] {
        let (dom, console) = crate::compare_cli::load_in_browser(&chrome, page, None);
        assert!(console.is_empty(), "console messages: {console:?}");
        assert!(dom.contains("class=\"flame\"") && dom.contains("hot_b"), "the flame graph is in the page");
    }
}
