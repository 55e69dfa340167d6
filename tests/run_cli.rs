//! The main job end to end with the deterministic `null` engine: run, list, show, export.

use crate::common::{machine_lock, text, Sandbox};

fn quick_null(sb: &Sandbox, label: &str) -> std::process::Output {
    sb.run(&[
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
        "2",
        "--no-drop-caches",
        "--quiet",
        "--dir",
        sb.work().to_str().unwrap(),
    ])
}

#[test]
fn null_run_is_stored_listed_shown_and_exported() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let out = quick_null(&sb, "base");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("complete — 4 ok, 0 failed"), "{}", text(&out));

    let list = sb.run(&["list"]);
    let l = text(&list);
    assert!(list.status.success() && l.contains("base") && l.contains("complete"), "{l}");

    let show = sb.run(&["show", "base"]);
    let s = text(&show);
    assert!(s.contains("clients=1") && s.contains("clients=2") && s.contains("tput ops/s"), "{s}");

    let json = sb.run(&["export", "base", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("export is JSON");
    assert_eq!(v["version"], 1);
    let cells = v["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 4);
    for c in cells {
        // null counts `rate` (1000/s) units per second of its 300 ms window.
        let units = c["units"].as_f64().unwrap();
        assert!((units - 300.0).abs() <= 20.0, "units {units}");
        assert!(c["window_s"].as_f64().unwrap() >= 0.29);
    }

    let csv = sb.run(&["export", "1", "--format", "csv"]);
    let body = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(body.lines().count(), 5, "header + 4 rows: {body}");
}

#[test]
fn json_format_streams_events_only() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "null",
        "--runtime",
        "200ms",
        "--warmup",
        "0s",
        "--no-drop-caches",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"run_started"));
    assert_eq!(kinds.last(), Some(&"run_finished"));
    assert!(kinds.contains(&"cell_finished"));
}

#[test]
fn dry_run_prints_plan_and_stores_nothing() {
    let sb = Sandbox::new();
    let out = sb.run(&["run", "null", "--clients", "1,4,8", "--reps", "3", "--runtime", "10s", "--dry-run"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("plan: 9 cells"), "{t}");
    assert!(!sb.db().exists(), "dry run must not create the store");
}

/// Issue 46: a dry run shows the run's settings, not only its cells: disk-regression's memory
/// limit (its ballast rule), cache drops, and each variant with the machine changes it makes.
#[test]
fn dry_run_shows_the_memory_limit_cache_drops_and_variants() {
    let sb = Sandbox::new();
    let out = sb.run(&["run", "disk-regression", "--dry-run"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("memory limit: 128 MiB for the whole run"), "{t}");
    assert!(t.contains("page cache: synced and dropped before each cell"), "{t}");
    assert!(t.contains("3 repetition(s)") && t.contains("variants: none"), "{t}");
    let suite = sb.dir.path().join("dirty.toml");
    std::fs::write(
        &suite,
        "[[workload]]\nengine = \"null\"\n[[variant]]\nname = \"base\"\n[[variant]]\nname = \"low\"\n\
         sysctl = { \"vm.dirty_ratio\" = 2 }\nmem_limit = \"256M\"\n",
    )
    .unwrap();
    let out = sb.run(&["run", suite.to_str().unwrap(), "--dry-run", "--no-drop-caches", "--no-warm-up"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("memory limit: none") && t.contains("page cache: kept between cells"), "{t}");
    assert!(t.contains("warm-up cell: none (--no-warm-up)"), "{t}");
    assert!(t.contains("  base: the machine as found"), "{t}");
    assert!(t.contains("  low: sysctl vm.dirty_ratio=2, mem_limit=256 MiB"), "{t}");
}

#[test]
fn workloads_lists_engines_and_options() {
    let sb = Sandbox::new();
    let out = sb.run(&["workloads"]);
    let t = text(&out);
    assert!(t.contains("fileserver") && t.contains("dbench") && t.contains("null"), "{t}");
    let show = text(&sb.run(&["workloads", "show", "fileserver"]));
    assert!(show.contains("clients") && show.contains("loadfile") && show.contains("ipc"), "{show}");
}

#[test]
fn env_captures_this_machine() {
    let sb = Sandbox::new();
    let out = sb.run(&["env", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("env --json is JSON");
    assert!(v["cpus_online"].as_u64().unwrap() >= 1);
    assert!(!v["kernel_release"].as_str().unwrap().is_empty());
}

#[test]
fn reps_auto_settles_steady_points_after_three() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&[
        "run",
        "null",
        "--label",
        "auto",
        "--clients",
        "1,2",
        "--runtime",
        "300ms",
        "--warmup",
        "0s",
        "--reps",
        "auto",
        "--max-reps",
        "4",
        "--no-drop-caches",
        "--quiet",
        "--dir",
        sb.work().to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("reps auto: 2 of 2 points within ±2.0%"), "{t}");
    let bad = sb.run(&["run", "null", "--reps", "auto", "--max-reps", "2"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("--max-reps 2"), "{}", text(&bad));
    let stray = sb.run(&["run", "null", "--reps", "3", "--max-reps", "5"]);
    assert_eq!(stray.status.code(), Some(2), "{}", text(&stray));
    assert!(text(&stray).contains("need --reps auto"), "{}", text(&stray));
}
