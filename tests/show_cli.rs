//! `racehorse show` through the binary: fixed parameters once and rows within 100 columns for
//! a diskio run (and fileserver, in compare_by_cli), `--latency`, `--json`, and control
//! characters in labels escaped in `show`, `list` and `compare`.

use crate::common::{machine_lock, text, Sandbox};

/// Every line of `show`'s tables (not the prose lines about noise and the exclusivity check)
/// fits 100 columns.
pub fn assert_fits_100_columns(show: &str) {
    let prose = ["? ", "Before run", "CPU used by other processes", "run "];
    for line in show.lines().filter(|l| !prose.iter().any(|p| l.starts_with(p))) {
        assert!(line.chars().count() <= 100, "{} columns: {line}\n{show}", line.chars().count());
    }
    assert!(show.contains("\nfixed: "), "the fixed parameters are listed once: {show}");
}

#[test]
fn show_of_a_diskio_run_is_narrow_and_has_latencies_and_json() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.work()).expect("work dir");
    let o = sb.run(&[
        "run",
        "diskio",
        "-o",
        "bs=4k,64k",
        "-o",
        "phase=write,read",
        "--runtime",
        "300ms",
        "--warmup",
        "0s",
        "--reps",
        "2",
        "--label",
        "dio",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        sb.work().to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let show = text(&sb.run(&["show", "dio"]));
    assert_fits_100_columns(&show);
    assert!(show.contains("1  bs=4k phase=write"), "varying parameters only: {show}");
    assert!(show.contains("show --latency lists p50/p90/p99"), "{show}");
    let lat = text(&sb.run(&["show", "dio", "--latency"]));
    assert!(lat.contains("latency per operation") && lat.contains("p99"), "{lat}");
    let json = sb.run(&["show", "dio", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is JSON only");
    assert_eq!(v["format"], "racehorse-show");
    assert_eq!(v["tables"][0]["points"].as_array().map(Vec::len), Some(4), "{v}");
    assert!(v["tables"][0]["points"][0]["latencies"][0]["p99_ns"].as_u64().is_some(), "{v}");
    let both = sb.run(&["show", "dio", "--json", "--reps"]);
    assert_eq!(both.status.code(), Some(2), "--json prints the data, not a layout");
}

#[test]
fn control_characters_in_labels_are_escaped_in_every_text_output() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    for rate in ["1000", "2000"] {
        let o = sb.run(&[
            "run",
            "null",
            "-o",
            &format!("rate={rate}"),
            "--label",
            "evil\x1b[2J\x07label",
            "--runtime",
            "200ms",
            "--warmup",
            "0s",
            "--reps",
            "1",
            "--quiet",
            "--no-drop-caches",
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let outputs = [
        sb.run(&["show", "1"]),
        sb.run(&["list"]),
        sb.run(&["compare", "1", "2", "--by", "rate"]),
        sb.run(&["compare", "1", "2", "--by", "rate", "-f", "md"]),
    ];
    for o in &outputs {
        let t = text(o);
        assert!(o.status.success(), "{t}");
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
        assert!(t.contains("evil\\x1b[2J\\x07label") || t.contains("evil\\\\x1b\\[2J\\\\x07label"), "{t}");
    }
}
