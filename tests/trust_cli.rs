//! Verdicts you can trust (issue 21), through the binary: one racehorse changes the machine
//! at a time (the lock, `--wait`), stop signals at any moment leave the machine as found
//! with exit codes 130/143/129, a killed plugd is restored, and another process's CPU marks
//! the cells noisy so that an A/A comparison reports no significant difference.

use crate::common::{can_hotplug, is_root, machine_lock, online_cpus, text, Sandbox};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SWAPPINESS: &str = "/proc/sys/vm/swappiness";

fn swappiness() -> String {
    std::fs::read_to_string(SWAPPINESS).unwrap_or_default().trim().to_string()
}

/// A suite of short null cells; as root, with a variant that changes vm.swappiness.
fn suite(sb: &Sandbox, runtime: &str) -> String {
    let mut text = format!(
        "runtime = \"{runtime}\"\nwarmup = \"0s\"\nreps = 2\n[[workload]]\nengine = \"null\"\nrate = 10.0\n"
    );
    if is_root() {
        let v = if swappiness() == "13" { "14" } else { "13" };
        text.push_str(&format!("[[variant]]\nname = \"low\"\nsysctl = {{ \"vm.swappiness\" = {v} }}\n"));
    }
    let path = sb.dir.path().join("suite.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The run command of `sb` with the state directory (and so the machine lock) of `shared`.
fn run_sharing(sb: &Sandbox, shared: &Sandbox, args: &[&str]) -> Command {
    let mut c = sb.cmd(args);
    c.env("RACEHORSE_STATE_DIR", shared.state_dir());
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Issue 21, case 1: two runs started at the same moment (different stores) both changed
/// the machine and both were stored complete, each measured under the other.
#[test]
fn of_two_runs_started_together_one_is_refused_or_queues_with_wait() {
    let _m = machine_lock();
    let (a, b) = (Sandbox::new(), Sandbox::new());
    let before = swappiness();
    let (sa, sb_) = (suite(&a, "400ms"), suite(&b, "400ms"));
    let pa = run_sharing(&a, &a, &["run", &sa, "--label", "a"]).spawn().unwrap();
    let pb = run_sharing(&b, &a, &["run", &sb_, "--label", "b"]).spawn().unwrap();
    let (oa, ob) = (pa.wait_with_output().unwrap(), pb.wait_with_output().unwrap());
    let codes = [oa.status.code(), ob.status.code()];
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(75)), "{codes:?}\n{}\n{}", text(&oa), text(&ob));
    let refused = if oa.status.code() == Some(75) { text(&oa) } else { text(&ob) };
    assert!(
        refused.contains("another racehorse is changing this machine") && refused.contains("--wait"),
        "{refused}"
    );
    assert!(refused.contains("racehorse run suite"), "the holder is named: {refused}");
    assert_eq!(swappiness(), before);
    assert!(!a.state_dir().join("restore.json").exists());

    let pa = run_sharing(&a, &a, &["run", &sa, "--label", "a2", "--wait"]).spawn().unwrap();
    let pb = run_sharing(&b, &a, &["run", &sb_, "--label", "b2", "--wait"]).spawn().unwrap();
    let (oa, ob) = (pa.wait_with_output().unwrap(), pb.wait_with_output().unwrap());
    assert!(oa.status.success() && ob.status.success(), "{}\n{}", text(&oa), text(&ob));
    let waited = format!("{}{}", text(&oa), text(&ob));
    assert!(waited.contains("waiting for the machine"), "{waited}");
    assert_eq!(swappiness(), before);
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Issue 21, case 9: SIGINT or SIGTERM in the first ~0.3 s of a run with variants killed
/// racehorse with the variant's sysctl still set; SIGHUP left it changed until `restore`.
#[test]
fn a_stop_signal_at_any_moment_restores_and_exits_128_plus_the_signal() {
    let _m = machine_lock();
    if !is_root() {
        racehorse_testkit::skip!("the variant's sysctl needs root (CI runs as root)");
        return;
    }
    let before = swappiness();
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        for delay_ms in [20u64, 120, 350, 900] {
            let sb = Sandbox::new();
            let s = suite(&sb, "2s");
            let child = run_sharing(&sb, &sb, &["run", &s, "-q"]).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(delay_ms));
            signal(&child, sig);
            let out = child.wait_with_output().unwrap();
            // Before its handlers are in place (the first milliseconds, before anything
            // changes) the signal's default action ends racehorse; after, it exits 128 + sig.
            use std::os::unix::process::ExitStatusExt;
            let ended = out.status.code() == Some(code) || out.status.signal() == Some(sig);
            assert!(ended, "signal {sig} after {delay_ms} ms: {:?} {}", out.status, text(&out));
            assert_eq!(swappiness(), before, "signal {sig} after {delay_ms} ms: {}", text(&out));
            assert!(!sb.state_dir().join("restore.json").exists(), "no state file left");
        }
    }
}

/// Issue 21, case 9 and case 7: a running plugd holds the machine (a run is refused, so no
/// cell measures with its CPU offline); SIGKILLed, it left cpu1 offline and `restore` said
/// "nothing to restore".
#[test]
fn a_plugd_holds_the_machine_and_a_killed_one_is_restored() {
    let _m = machine_lock();
    if !can_hotplug() {
        racehorse_testkit::skip!("needs root and /sys/devices/system/cpu/cpu1/online (CI runs as root)");
        return;
    }
    let before = online_cpus();
    let sb = Sandbox::new();
    let conf = sb.dir.path().join("plugd.conf");
    std::fs::write(&conf, "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n")
        .unwrap();
    let d = sb.dir.path();
    let mut daemon = sb
        .cmd(&["plugd", "-c", conf.to_str().unwrap(), "-f"])
        .args([
            "--pid-file",
            d.join("pid").to_str().unwrap(),
            "--lock-file",
            d.join("lock").to_str().unwrap(),
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while online_cpus() != "0" && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = sb.run(&["run", "null", "--runtime", "200ms", "--cpus", "2"]);
    let _ = daemon.kill();
    let _ = daemon.wait();
    let offline_after_kill = online_cpus();
    let restore = sb.run(&["restore"]);
    let after = online_cpus();
    assert_eq!(refused.status.code(), Some(75), "{}", text(&refused));
    assert!(text(&refused).contains("racehorse plugd"), "{}", text(&refused));
    assert_eq!(offline_after_kill, "0", "the killed daemon left cpu1 offline");
    assert!(restore.status.success() && text(&restore).contains("restored"), "{}", text(&restore));
    assert_eq!(after, before);
}

/// A process that burns one CPU, not started by racehorse; killed on drop.
struct Burner(Child);

impl Burner {
    fn start() -> Burner {
        Burner(Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
    }
}

impl Drop for Burner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Issue 21, cases 2 and 3: with another process using about one CPU, an A/A comparison
/// printed −64.7% and CPU savings −195% with no warning. Every window must now say it was
/// noisy, and the comparison must not call anything significant.
#[test]
fn another_processs_cpu_marks_cells_noisy_and_no_verdict_comes_of_it() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let args = ["run", "null", "--runtime", "500ms", "--warmup", "0s", "--reps", "3", "-q"];
    let quiet = sb.run(&[&args[..], &["--label", "base"]].concat());
    assert!(quiet.status.success(), "{}", text(&quiet));
    let burner = Burner::start();
    std::thread::sleep(Duration::from_millis(200));
    let noisy = sb.run(&[&args[..], &["--label", "new"]].concat());
    drop(burner);
    assert!(noisy.status.success(), "{}", text(&noisy));
    for c in sb.cells("new") {
        let q = &c["quality"];
        assert_eq!(q["noisy"], true, "{c}");
        let why = q["noisy_reason"].as_str().unwrap_or("");
        assert!(why.contains("(sh ") || why.contains("sh ("), "the burner is named: {why}");
        assert!(q["outside_cpu_s"].as_f64().unwrap() > 0.3, "{q}");
        assert!(q["own_cpu_s"].as_f64().is_some(), "{q}");
    }
    let cmp = sb.run(&["compare", "base", "new"]);
    let t = text(&cmp);
    assert!(cmp.status.success(), "{t}");
    assert!(t.contains("0 of 1 points significant, 1 noisy"), "noisy points are counted: {t}");
    assert!(t.contains("no significant difference"), "no verdict headline: {t}");
    let json = sb.run(&["compare", "base", "new", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("compare json");
    for r in doc["records"].as_array().expect("records") {
        assert_ne!(r["significant"], true, "no significant difference from noise: {r}");
        assert_eq!(r["new_noisy_reps"], serde_json::json!([1, 2, 3]), "{r}");
    }
}

/// Issue 21, case 8: with diskio's `-o target=` on another device, the environment and a
/// `block = { read_ahead_kb = … }` variant described and tuned the run directory's device
/// (vda), not the target's.
#[test]
fn the_environment_and_block_variants_follow_the_engines_target_device() {
    let _m = machine_lock();
    let Some(lo) = crate::common::Loop::new() else {
        racehorse_testkit::skip!("needs root and losetup to make a loop device (CI runs as root)");
        return;
    };
    let sb = Sandbox::new();
    let ra_file = lo.queue("read_ahead_kb");
    let before = std::fs::read_to_string(&ra_file).unwrap().trim().to_string();
    let ra = if before == "96" { "104" } else { "96" };
    let suite = sb.dir.path().join("t.toml");
    std::fs::write(
        &suite,
        format!(
            "runtime = \"300ms\"\nwarmup = \"0s\"\n[[workload]]\nengine = \"diskio\"\nphase = \"read\"\n\
             size = \"8m\"\nbs = \"64k\"\ntarget = \"/dev/{dev}\"\n\
             [[variant]]\nname = \"ra\"\nblock = {{ read_ahead_kb = {ra} }}\n\
             before = \"cat {ra_file} > {seen}\"\n",
            dev = lo.dev,
            ra_file = ra_file,
            seen = sb.dir.path().join("seen").display()
        ),
    )
    .unwrap();
    let out = sb.run(&["run", suite.to_str().unwrap(), "--label", "t", "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let seen = std::fs::read_to_string(sb.dir.path().join("seen")).unwrap();
    assert_eq!(seen.trim(), ra, "the variant tuned the target's device");
    assert_eq!(std::fs::read_to_string(&ra_file).unwrap().trim(), before, "and put it back");
    let cells = sb.cells("t");
    let setting = cells[0]["settings"][format!("block {} read_ahead_kb", lo.dev)].as_str();
    assert_eq!(setting, Some(ra), "{}", cells[0]["settings"]);
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "t", "--format", "json"]).stdout).unwrap();
    let targets = export["run"]["env"]["targets"].as_array().expect("targets");
    let t =
        targets.iter().find(|t| t["path"] == format!("/dev/{}", lo.dev)).expect("the target is described");
    assert_eq!(t["disk"], lo.dev.as_str(), "{t}");
    assert_eq!(t["fstype"], "block device", "{t}");
    assert_eq!(t["read_ahead_kb"].as_u64().map(|v| v.to_string()), Some(before.clone()), "{t}");
}

/// Issue 23, case 7: with a state file owned by a live racehorse, `restore` printed "nothing
/// to restore" and exited 0. It now names the running racehorse and restores nothing.
#[test]
fn restore_names_a_live_owner_and_leaves_its_state_alone() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let s = suite(&sb, "3s");
    let mut run = run_sharing(&sb, &sb, &["run", &s, "-q", "--no-warm-up"]).spawn().unwrap();
    let lock = sb.state_dir().join("machine.lock");
    let t0 = Instant::now();
    while std::fs::metadata(&lock).map_or(true, |m| m.len() == 0) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = sb.run(&["restore"]);
    signal(&run, libc::SIGTERM);
    let _ = run.wait();
    assert_eq!(out.status.code(), Some(75), "{}", text(&out));
    assert!(
        text(&out).contains("racehorse run suite") && text(&out).contains("nothing was restored"),
        "{}",
        text(&out)
    );
}
