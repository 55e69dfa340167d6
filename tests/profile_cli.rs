//! `run --profile` through the binary: each window's perf samples are stored with the cell,
//! `show` lists the top images and symbols, `compare` what moved, and no perf is left over.

use crate::common::{machine_lock, text, Sandbox};

fn perf_usable() -> bool {
    let ok = std::process::Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "perf is required here");
        racehorse_testkit::skip!("perf is not installed (scripts/test.sh installs linux-perf)");
    }
    ok
}

fn profiled(sb: &Sandbox, label: &str) {
    let o = sb.run(&[
        "run",
        "smallread",
        "--profile",
        "--label",
        label,
        "-o",
        "direct=false",
        "--runtime",
        "1s",
        "--warmup",
        "200ms",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        "/var/tmp",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn profiles_are_stored_shown_and_compared() {
    if !perf_usable() {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    profiled(&sb, "a");
    profiled(&sb, "b");
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "a", "--format", "json"]).stdout).expect("json");
    let p = &export["cells"][0]["profile"];
    assert_eq!(p["event"], "cpu-clock", "{p}");
    assert!(p["samples"].as_u64().is_some_and(|n| n > 100), "a 1 s window at 999 Hz: {p}");
    let images = p["images"].as_array().expect("images");
    assert!(images.iter().any(|i| i["image"] == "[kernel.kallsyms]"), "cached reads run in the kernel: {p}");
    let total: f64 = images.iter().map(|i| i["share_pct"].as_f64().expect("share")).sum();
    assert!(total <= 100.0 + 1e-6, "shares are of all samples: {total}");
    let show = text(&sb.run(&["show", "a"]));
    assert!(show.contains("profile of #1") && show.contains("symbols"), "{show}");
    let cmp = text(&sb.run(&["compare", "a", "b"]));
    assert!(cmp.contains("Where the CPU time went") && cmp.contains("change"), "{cmp}");
    let perf_left =
        std::process::Command::new("pgrep").args(["-f", "perf record -a"]).output().expect("pgrep");
    assert!(perf_left.stdout.is_empty(), "no perf left: {}", String::from_utf8_lossy(&perf_left.stdout));
}

#[test]
fn a_run_without_profile_stores_none() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&["run", "null", "--label", "n", "--runtime", "100ms", "--warmup", "0s", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "n", "--format", "json"]).stdout).expect("json");
    assert!(export["cells"][0]["profile"].is_null());
    assert!(!text(&sb.run(&["show", "n"])).contains("profile of"));
}
