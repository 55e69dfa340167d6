//! `racehorse plugd` through the binary: check, bad configs (exit 2, nothing touched), record
//! and replay, and on the real machine (root, cpu1 hotpluggable) unplug, SIGHUP reload (a bad
//! new config keeps the old one), SIGTERM restore, and SIGKILL recovery with `plugd restore`.

use crate::common::{can_hotplug, machine_lock, online_cpus, text, Sandbox};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SEED: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
    HOTPLUG=\"(loadavg > onumcpus + 0.75) & (idle < 10.0)\"\n\
    HOTUNPLUG=\"(loadavg < onumcpus - 0.25) | (idle > 50)\"\n";
const UNPLUG: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n";
const PLUG: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n";

fn write(sb: &Sandbox, name: &str, text: &str) -> PathBuf {
    let p = sb.dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn check_prints_the_rules_and_bad_configs_exit_2() {
    let sb = Sandbox::new();
    let good = write(&sb, "good.conf", SEED);
    let out = sb.run(&["plugd", "check", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("((loadavg > (onumcpus + 0.75)) & (idle < 10))") && t.contains("now: "), "{t}");
    for (conf, want) in [
        ("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"loadavg >= 2\"\nHOTUNPLUG=\"0\"\n", ":4:"),
        ("UPDATE=1\nCPU_MIN=\"1\"\n", ":1:"),
        ("UPDATE=\"1\"\nCPU_MIN=\"2\"\nCPU_MAX=\"1\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n", "CPU_MAX"),
    ] {
        let bad = write(&sb, "bad.conf", conf);
        for args in
            [vec!["plugd", "check", bad.to_str().unwrap()], vec!["plugd", "-c", bad.to_str().unwrap(), "-f"]]
        {
            let before = online_cpus();
            let out = sb.run(&args);
            assert_eq!(out.status.code(), Some(2), "{conf}: {}", text(&out));
            assert!(text(&out).contains(want), "{conf}: {}", text(&out));
            assert_eq!(online_cpus(), before, "no CPU touched");
        }
    }
    let none = sb.run(&["plugd"]);
    assert_eq!(none.status.code(), Some(2), "{}", text(&none));
}

#[test]
fn record_then_replay_prints_decisions() {
    let sb = Sandbox::new();
    let trace = sb.dir.path().join("trace.jsonl");
    let out =
        sb.run(&["plugd", "record", "-o", trace.to_str().unwrap(), "--interval", "100ms", "--count", "4"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&trace).unwrap().lines().count(), 4);
    let conf = write(&sb, "seed.conf", SEED);
    let out = sb.run(&["plugd", "-c", conf.to_str().unwrap(), "--replay", trace.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("collecting history") && t.contains("4 samples:"), "{t}");
    assert_eq!(t.lines().filter(|l| l.ends_with("hold") || l.contains("plug →")).count(), 3, "{t}");
}

struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn start(sb: &Sandbox, conf: &Path) -> Daemon {
        Daemon::start_with(sb, conf, &[])
    }
    fn start_with(sb: &Sandbox, conf: &Path, extra: &[&str]) -> Daemon {
        let d = sb.dir.path();
        let log = d.join("daemon.log");
        let child = sb
            .cmd(&["plugd", "-c", conf.to_str().unwrap(), "-f", "-V"])
            .args(extra)
            .args([
                "--pid-file",
                d.join("pid").to_str().unwrap(),
                "--lock-file",
                d.join("lock").to_str().unwrap(),
            ])
            .args(["--state-file", d.join("state.json").to_str().unwrap()])
            .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
            .spawn()
            .unwrap();
        Daemon { child, log }
    }
    fn signal(&self, sig: i32) {
        // SAFETY: kill on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    fn wait_for(&self, what: &str, cond: impl Fn() -> bool) {
        let t0 = Instant::now();
        while !cond() {
            assert!(t0.elapsed() < Duration::from_secs(15), "{what} never happened; log:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real daemon that has taken cpu1 offline, with the CPUs online before it; None (after
/// saying why) where hotplug is not possible.
fn unplugging_daemon() -> Option<(Sandbox, PathBuf, Daemon, String)> {
    if !can_hotplug() {
        racehorse_testkit::skip!("needs root and /sys/devices/system/cpu/cpu1/online (CI runs as root)");
        return None;
    }
    let before = online_cpus();
    let sb = Sandbox::new();
    let conf = write(&sb, "plugd.conf", UNPLUG);
    let d = Daemon::start(&sb, &conf);
    d.wait_for("cpu1 going offline", || online_cpus() == "0");
    Some((sb, conf, d, before))
}

#[test]
fn real_cpu_unplug_reload_and_sigterm_restore() {
    let _m = machine_lock();
    let Some((_sb, conf, d, before)) = unplugging_daemon() else { return };
    std::fs::write(&conf, "UPDATE=\"1\"\nHOTPLUG=\"loadavg >= 1\"\n").unwrap();
    d.signal(libc::SIGHUP);
    d.wait_for("the bad reload being refused", || d.log().contains("reload refused"));
    assert_eq!(online_cpus(), "0", "the old config keeps running");
    std::fs::write(&conf, PLUG).unwrap();
    d.signal(libc::SIGHUP);
    d.wait_for("cpu1 coming back after the reload", || online_cpus() == before);
    std::fs::write(&conf, UNPLUG).unwrap();
    d.signal(libc::SIGHUP);
    d.wait_for("cpu1 going offline again", || online_cpus() == "0");
    d.signal(libc::SIGTERM);
    let mut d = d;
    let status = d.child.wait().unwrap();
    assert!(status.success(), "SIGTERM exits 0; log:\n{}", d.log());
    assert_eq!(online_cpus(), before, "SIGTERM restores the CPUs found at start");
}

#[test]
fn sigkill_is_recovered_by_plugd_restore() {
    let _m = machine_lock();
    let Some((sb, _conf, mut d, before)) = unplugging_daemon() else { return };
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    assert_eq!(online_cpus(), "0", "SIGKILL leaves cpu1 offline");
    let state = sb.dir.path().join("state.json");
    let out = sb.run(&["plugd", "restore", "--state-file", state.to_str().unwrap()]);
    assert!(out.status.success() && text(&out).contains("restored"), "{}", text(&out));
    assert_eq!(online_cpus(), before);
    let again = Command::new(crate::common::bin())
        .args(["plugd", "restore", "--state-file"])
        .arg(&state)
        .output()
        .unwrap();
    assert!(text(&again).contains("nothing to restore"), "{}", text(&again));
}

/// Without root: the binary on a fake machine (4 CPUs) given with --sysroot unplugs one CPU
/// per interval, highest first, and SIGTERM puts them back.
#[test]
fn the_daemon_runs_on_a_fake_machine_with_sysroot() {
    let sb = Sandbox::new();
    let fake = sb.dir.path().join("machine");
    racehorse_machine::fixtures::copy_fixture("baremetal4", &fake);
    let online = |cpu: u32| {
        std::fs::read_to_string(fake.join(format!("sys/devices/system/cpu/cpu{cpu}/online")))
            .unwrap()
            .trim()
            .to_string()
    };
    let conf = write(&sb, "plugd.conf", &UNPLUG.replace("CPU_MIN=\"1\"", "CPU_MIN=\"2\""));
    let mut d = Daemon::start_with(&sb, &conf, &["--sysroot", fake.to_str().unwrap()]);
    d.wait_for("cpu3 and then cpu2 going offline", || online(3) == "0" && online(2) == "0");
    assert_eq!(online(1), "1", "CPU_MIN = 2 keeps cpu0 and cpu1");
    d.signal(libc::SIGTERM);
    assert!(d.child.wait().unwrap().success(), "{}", d.log());
    assert!((1..4).all(|c| online(c) == "1"), "restored; log:\n{}", d.log());
    let log = d.log();
    assert!(log.find("unplugged cpu3").unwrap() < log.find("unplugged cpu2").unwrap(), "{log}");
    let bad = sb.run(&["plugd", "-c", conf.to_str().unwrap(), "--sysroot", "/nonexistent"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}
