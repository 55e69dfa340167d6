//! Machine control through the binary: CPUs really go offline for `--cpus 1` and come back on
//! success, and after SIGKILL `racehorse restore` (or the next run) brings them back.

use crate::common::{can_hotplug, machine_lock, online_cpus, text, Sandbox};
use std::time::Duration;

#[test]
fn cpus_axis_hotplugs_and_restores() {
    let _m = machine_lock();
    if !can_hotplug() {
        eprintln!("skipped: needs root and /sys/devices/system/cpu/cpu1/online");
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
        eprintln!("skipped: needs root and /sys/devices/system/cpu/cpu1/online");
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
            "5s",
            "--warmup",
            "0s",
            "--no-drop-caches",
            "--quiet",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(online_cpus(), "0", "SIGKILL leaves cpu1 offline");
    let out = sb.run(&["restore"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("restored"), "{}", text(&out));
    assert_eq!(online_cpus(), before);
    let list = text(&sb.run(&["list"]));
    assert!(list.contains("interrupted"), "a killed run is reported as interrupted: {list}");
}
