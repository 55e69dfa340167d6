//! `racehorse compare` and `racehorse report` end to end: real runs of the null engine,
//! synthetic stores for the formats, bad input with exit code 2, and the HTML checked in
//! a real headless browser (Debian's chromium) with a screenshot for a person to look at.

use crate::common::{machine_lock, text, Sandbox};
use racehorse_report::synth::{synthetic_side, Shape};
use racehorse_store::{NewRun, Store};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Stores a synthetic run; returns its id.
fn store_side(db: &Path, label: &str, shape: &Shape) -> i64 {
    let store = Store::open(db).expect("open store");
    let side = synthetic_side(0, label, shape);
    let run = NewRun {
        label: label.into(),
        host: "synthetic".into(),
        racehorse_version: "0.1.0".into(),
        cpu_method: "hotplug".into(),
        ..NewRun::default()
    };
    let id = store.create_run(&run).expect("create run");
    for (i, c) in side.cells.iter().enumerate() {
        store.insert_cell(id, i, c).expect("insert cell");
    }
    store.finish_run(id, racehorse_core::RunStatus::Complete).expect("finish");
    id
}

fn two_synthetic_runs(sb: &Sandbox) {
    store_side(&sb.db(), "old", &Shape { latencies: true, ..Shape::default() });
    let new = Shape { speed: 1.25, cpu_cost: 0.8, seed: 9, latencies: true, ..Shape::default() };
    store_side(&sb.db(), "<b>new</b>", &new);
}

/// The inner markup of the first `<g class="…">` group of that class in `svg`.
fn group<'a>(svg: &'a str, class: &str) -> &'a str {
    let open = format!("<g class=\"{class}\"");
    svg.split(&open).nth(1).and_then(|s| s.split("</g>").next()).unwrap_or("")
}

/// What the page's charts must show: throughput and latency against clients on a log2 axis
/// (ticks 1, 2, 4, 8, never 1.5) with error bars and each repetition, bars by significance.
fn check_compare_charts(dom: &str) {
    let svgs: Vec<&str> = dom.split("<svg").skip(1).collect();
    let scaling = svgs.iter().find(|s| s.contains("throughput vs clients")).expect("throughput vs clients");
    let axis = group(scaling, "axis-x log2");
    for tick in ["1", "2", "4", "8"] {
        assert!(axis.contains(&format!(">{tick}</text>")), "log2 tick {tick}: {axis}");
    }
    assert!(!axis.contains(">1.5</text>") && !axis.contains(">2.5</text>"), "{axis}");
    assert!(group(scaling, "errorbars").contains("<line"), "error bars on the absolute chart");
    assert!(group(scaling, "reps").matches("<circle").count() >= 3, "a dot per repetition");
    let latency = svgs.iter().find(|s| s.contains("p99 latency vs clients")).expect("a latency chart");
    assert!(latency.contains("axis-x log2") && group(latency, "errorbars").contains("<line"));
    assert!(dom.contains(">significantly better</text>"), "bars coloured by significance");
    assert!(dom.contains("<table class=\"latency\""), "a latency table");
}

#[test]
fn compare_real_null_runs_in_every_format() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    for label in ["base", "new"] {
        let o = sb.run(&[
            "run",
            "null",
            "--label",
            label,
            "--clients",
            "1,2",
            "--runtime",
            "300ms",
            "--warmup",
            "0s",
            "--reps",
            "3",
            "--no-drop-caches",
            "--quiet",
            "--dir",
            sb.work().to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = sb.run(&["compare", "base", "new"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("racehorse compare: run 2 'new' vs run 1 'base'"), "{t}");
    assert!(t.contains("Throughput") && t.contains("Total CPU/unit") && t.contains("Kernel CPU/unit"), "{t}");
    let json = sb.run(&["compare", "base", "new", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is json only");
    assert_eq!(v["records"].as_array().map(Vec::len), Some(2 * 4));
    assert_eq!(v["records"][0]["base_n"], 3);
    assert!(v["records"][0]["ci_lo"].is_number(), "3 reps a side give an interval");
    let csv = sb.run(&["compare", "base", "new", "--format", "csv"]);
    assert_eq!(String::from_utf8_lossy(&csv.stdout).lines().count(), 1 + 8);
    let md = sb.run(&["compare", "1", "2", "--format", "md", "--ci"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("| clients | Throughput | CI |"), "{}", text(&md));
}

#[test]
fn bad_input_is_a_usage_error_with_help() {
    let sb = Sandbox::new();
    two_synthetic_runs(&sb);
    let o = sb.run(&["compare", "olld", "<b>new</b>"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("did you mean 'old'"), "{}", text(&o));
    let other = Shape { clients: vec![64], ..Shape::default() };
    store_side(&sb.db(), "other", &other);
    let o = sb.run(&["compare", "old", "other"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no cells in common") && text(&o).contains("clients=64"), "{}", text(&o));
    let o = sb.run(&["compare", "old@nosuch", "old@default"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("its variants are: default"), "{}", text(&o));
    let o = sb.run(&["compare", "old", "other", "--level", "95"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = sb.run(&["report", "old", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("racehorse export"), "{}", text(&o));
}

/// Debian's chromium, if installed.
pub(crate) fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"].iter().map(PathBuf::from).find(|p| p.exists())
}

/// Loads a page headless: (DOM after load, console lines). Any console line is an error
/// for our pages, which have no scripts.
pub(crate) fn load_in_browser(
    chrome: &Path,
    page: &Path,
    screenshot: Option<&Path>,
) -> (String, Vec<String>) {
    let mut c = Command::new(chrome);
    c.args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]);
    c.arg(format!("--user-data-dir={}", page.with_extension("profile").display()));
    match screenshot {
        Some(png) => c.arg(format!("--screenshot={}", png.display())).arg("--window-size=1280,2400"),
        None => c.arg("--dump-dom"),
    };
    let o = c.arg(format!("file://{}", page.display())).output().expect("spawn chromium");
    assert!(o.status.success(), "chromium failed: {}", text(&o));
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    (String::from_utf8_lossy(&o.stdout).into_owned(), console)
}

#[test]
fn html_reports_load_cleanly_in_a_real_browser() {
    let Some(chrome) = chromium() else {
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_BROWSER").is_none(),
            "RACEHORSE_REQUIRE_BROWSER is set but chromium is not installed"
        );
        racehorse_testkit::skip!(
            "chromium not installed (scripts/test.sh installs it: apt-get install chromium)"
        );
        return;
    };
    let sb = Sandbox::new();
    two_synthetic_runs(&sb);
    let out_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/report-check");
    std::fs::create_dir_all(&out_dir).expect("output dir");
    // The detector must see a console error when there is one.
    let bad = sb.dir.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><html><body><script>console.error('x')</script></body></html>")
        .expect("write");
    assert!(!load_in_browser(&chrome, &bad, None).1.is_empty(), "console errors are detected");

    let cmp = sb.dir.path().join("compare.html");
    let o = sb.run(&["compare", "old", "<b>new</b>", "-o", cmp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let (dom, console) = load_in_browser(&chrome, &cmp, None);
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(dom.contains("<table class=\"summary\""), "summary table");
    assert_eq!(dom.matches("<table class=\"compare\"").count(), 2, "one table per workload");
    for kind in ["chart-line", "chart-bar", "chart-stacked"] {
        assert!(dom.contains(kind), "{kind} chart present");
    }
    assert!(dom.contains("&lt;b&gt;new&lt;/b&gt;") && !dom.contains("<b>new</b>"), "labels escaped");
    check_compare_charts(&dom);
    load_in_browser(&chrome, &cmp, Some(&out_dir.join("compare.png")));

    let run = sb.dir.path().join("run.html");
    let o = sb.run(&["report", "old", "-o", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let (dom, console) = load_in_browser(&chrome, &run, None);
    assert!(console.is_empty(), "console messages: {console:?}");
    assert!(dom.contains("<table class=\"run\"") && dom.contains("<table class=\"env\""));
    load_in_browser(&chrome, &run, Some(&out_dir.join("run.png")));
    let png = std::fs::read(out_dir.join("compare.png")).expect("screenshot written");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a real screenshot");
    eprintln!("screenshots: {}", out_dir.display());
}

#[test]
fn one_run_compares_its_variants_first_as_base() {
    let sb = Sandbox::new();
    // A run with two variants: the second is 25% faster.
    let store = Store::open(&sb.db()).expect("open store");
    let run = NewRun { label: "vv".into(), host: "synthetic".into(), ..NewRun::default() };
    let id = store.create_run(&run).expect("create run");
    let slow = synthetic_side(0, "vv", &Shape::default());
    let fast = synthetic_side(0, "vv", &Shape { speed: 1.25, seed: 4, ..Shape::default() });
    let cells = slow.cells.into_iter().chain(fast.cells.into_iter().map(|mut c| {
        c.spec.variant = "fast".into();
        c
    }));
    for (i, c) in cells.enumerate() {
        store.insert_cell(id, i, &c).expect("insert");
    }
    store.finish_run(id, racehorse_core::RunStatus::Complete).expect("finish");
    let o = sb.run(&["compare", "vv"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("run 1 'vv' @fast vs run 1 'vv' @default"), "{t}");
    assert!(t.contains("+25"), "{t}");
    store_side(&sb.db(), "plain", &Shape::default());
    let o = sb.run(&["compare", "plain"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("has 1 variant"), "{}", text(&o));
}
