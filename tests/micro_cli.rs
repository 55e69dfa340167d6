//! The micro engine through the binary: latencies and bandwidths in one run, shown in
//! tables per unit with lmbench's figures, compared between runs, and bad names or levels
//! refused with the valid choices.

use crate::common::{machine_lock, text, Sandbox};

fn micro(sb: &Sandbox, label: &str) -> std::process::Output {
    sb.run(&[
        "run",
        "micro",
        "--label",
        label,
        "-o",
        "bench=null,pipe,fork,bw_frd,chase",
        "-o",
        "level=l1",
        "-o",
        "tries=3",
        "-o",
        "enough_ms=2",
        "--quiet",
        "--no-drop-caches",
    ])
}

#[test]
fn latencies_and_bandwidths_are_stored_shown_and_compared() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    for label in ["a", "b"] {
        let o = micro(&sb, label);
        assert!(o.status.success(), "{}", text(&o));
    }
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "a", "--format", "json"]).stdout).expect("json");
    let cells = export["cells"].as_array().expect("cells");
    let by = |b: &str| cells.iter().find(|c| c["params"]["bench"] == b).expect(b).clone();
    assert_eq!(by("null")["unit"], "ops");
    assert!(by("null")["extra"]["latency_us"].as_f64().is_some_and(|v| v > 0.0 && v < 50.0));
    assert!(by("pipe")["extra"]["latency_us"].as_f64().is_some_and(|v| v > 0.5));
    // fork is timed in a freshly executed racehorse (see micro/child.rs).
    assert!(by("fork")["extra"]["latency_us"].as_f64().is_some_and(|v| v > 5.0), "{}", by("fork"));
    assert_eq!(by("bw_frd")["unit"], "bytes");
    // A file read from the page cache runs at memory speed: over 100 MB/s on any machine —
    // unless other processes took the CPU in the window, which the cell then says (noisy).
    let frd = by("bw_frd");
    let floor = if frd["quality"]["noisy"] == true { 10.0 } else { 100.0 };
    assert!(frd["extra"]["mb_per_s"].as_f64().is_some_and(|v| v > floor), "{frd}");
    assert!(by("chase")["extra"]["latency_ns"].as_f64().is_some_and(|v| v > 0.0));
    let show = text(&sb.run(&["show", "a"]));
    assert!(show.contains("throughput in ops/s") && show.contains("throughput in MB/s"), "{show}");
    assert!(show.contains("latency_us") && show.contains("mb_per_s"), "{show}");
    let cmp = sb.run(&["compare", "a", "b"]);
    assert!(cmp.status.success(), "{}", text(&cmp));
    assert!(text(&cmp).contains("Kernel functions"), "{}", text(&cmp));
}

#[test]
fn unknown_benchmarks_and_missing_levels_are_refused() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&["run", "micro", "-o", "bench=nope", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("null") && text(&o).contains("bw_frd"), "the choices are listed: {}", text(&o));
    let o = sb.run(&["run", "micro", "-o", "bench=bw_rd", "-o", "level=size", "-o", "size=1t", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("smaller size"), "{}", text(&o));
    let has_l4 = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache/index4").exists();
    if !has_l4 {
        let o = sb.run(&["run", "micro", "-o", "bench=bw_rd", "-o", "level=l4", "--quiet"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("level=l4"), "{}", text(&o));
    }
}

#[test]
fn the_lmbench_preset_plans_every_benchmark() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&["run", "lmbench", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    for b in ["null", "select_tcp", "prot_fault", "bw_fcp", "mmap_rd_o2c", "chase_rand", "caches"] {
        assert!(t.contains(b), "{b} is planned: {t}");
    }
}
