//! Machine control through the binary: CPUs really go offline for `--cpus 1` and come back on
//! success, and after SIGKILL `racehorse restore` (or the next run) brings them back.

use crate::common::{can_hotplug, machine_lock, online_cpus, text, Sandbox};
use std::time::Duration;

#[test]
fn cpus_axis_hotplugs_and_restores() {
    let _m = machine_lock();
    if !can_hotplug() {
        racehorse_testkit::skip!("needs root and /sys/devices/system/cpu/cpu1/online");
        return;
    }
    let before = online_cpus();
    let sb = Sandbox::new();
    let mut child = sb
        .cmd(&[
            "run",
            "null",
            "--cpus",
            "1",
            "--runtime",
            "2s",
            "--warmup",
            "0s",
            "--no-drop-caches",
            "--quiet",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let during = online_cpus();
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(during, "0", "cpu1 must be offline during the cell");
    assert_eq!(online_cpus(), before, "restored after the run");
    let env: serde_json::Value = serde_json::from_slice(&sb.run(&["env", "null", "--json"]).stdout).unwrap();
    assert_eq!(env["cpu_control"], "hotplug");
}

#[test]
fn sigkill_is_recovered_by_restore() {
    let _m = machine_lock();
    if !can_hotplug() {
        racehorse_testkit::skip!("needs root and /sys/devices/system/cpu/cpu1/online");
        return;
    }
    let before = online_cpus();
    let sb = Sandbox::new();
    let mut child = sb
        .cmd(&[
            "run",
            "null",
            "--cpus",
            "1",
            "--mem-limit",
            "256M",
            "--runtime",
            "10s",
            "--warmup",
            "0s",
            "--no-drop-caches",
            "--quiet",
        ])
        .spawn()
        .unwrap();
    let cgroup = memory_cgroup_dir().map(|d| d.join(format!("racehorse-{}", child.id())));
    // Kill it once it holds cpu1 offline and sits in its cgroup (a loaded machine is slow).
    let t0 = std::time::Instant::now();
    while !(online_cpus() == "0" && cgroup.as_ref().is_none_or(|d| d.is_dir())) {
        assert!(t0.elapsed() < Duration::from_secs(8), "the run never took cpu1 offline");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(online_cpus(), "0", "SIGKILL leaves cpu1 offline");
    if let Some(dir) = &cgroup {
        assert!(dir.is_dir(), "SIGKILL leaves the memory cgroup {}", dir.display());
    }
    let out = sb.run(&["restore"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("restored"), "{}", text(&out));
    assert_eq!(online_cpus(), before);
    if let Some(dir) = &cgroup {
        assert!(!dir.exists(), "restore removes the memory cgroup {}", dir.display());
    }
    let list = text(&sb.run(&["list"]));
    assert!(list.contains("interrupted"), "a killed run is reported as interrupted: {list}");
}

/// This process's memory cgroup directory (cgroup v1), when root can make children there.
fn memory_cgroup_dir() -> Option<std::path::PathBuf> {
    if !crate::common::is_root() {
        return None;
    }
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string()))?;
    let dir = std::path::PathBuf::from(format!("/sys/fs/cgroup/memory{rel}"));
    dir.join("memory.limit_in_bytes").exists().then_some(dir)
}

#[test]
fn mem_limit_is_applied_recorded_and_removed() {
    let _m = machine_lock();
    let Some(parent) = memory_cgroup_dir() else {
        racehorse_testkit::skip!("needs root and a cgroup v1 memory hierarchy (CI runs as root on one)");
        return;
    };
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "null",
        "--runtime",
        "300ms",
        "--warmup",
        "0s",
        "--mem-limit",
        "64M",
        "--label",
        "ml",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("memory limit: 64 MiB"), "{}", text(&out));
    let env = text(&sb.run(&["env", "ml"]));
    assert!(env.contains(&format!("{}", 64u64 << 20)), "the run records the limit: {env}");
    let left: Vec<_> = std::fs::read_dir(&parent)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("racehorse-"))
        .collect();
    assert!(left.is_empty(), "no racehorse cgroup is left: {left:?}");
    let bad = sb.run(&["run", "null", "--mem-limit", "4M"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}
