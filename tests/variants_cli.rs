//! Variants on the real machine through the binary: settings applied, recorded per cell and
//! restored (proved by reading them back); a knob the machine refuses stops the run before
//! anything is applied or stored; after SIGKILL, `racehorse restore` puts everything back and
//! runs the pending `after` command.

use crate::common::{is_root, machine_lock, text, Loop, Sandbox};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const SWAPPINESS: &str = "/proc/sys/vm/swappiness";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default().trim().to_string()
}

/// The selected word of a choice file ("always [madvise] never" → "madvise").
fn selected(path: &str) -> String {
    let t = read(path);
    t.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or(t)
}

/// Values of the knobs the tests touch, to compare before and after.
fn snapshot(lo: &Loop) -> Vec<String> {
    vec![
        read(SWAPPINESS),
        selected(THP),
        read(&lo.queue("read_ahead_kb")),
        selected(&lo.queue("scheduler")),
        crate::common::online_cpus(),
        racehorse_cgroups(),
    ]
}

/// racehorse-* children of this process's memory cgroup (where a run's limit lives).
fn racehorse_cgroups() -> String {
    let cg = read("/proc/self/cgroup");
    let Some(rel) = cg.lines().find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string())) else {
        return String::new();
    };
    let dir = format!("/sys/fs/cgroup/memory{rel}");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.retain(|n| n.starts_with("racehorse-"));
    names.join(",")
}

/// A value different from the current one among `choices`.
fn other(current: &str, choices: &[&str]) -> String {
    choices.iter().find(|c| **c != current).unwrap_or(&choices[0]).to_string()
}

fn suite(sb: &Sandbox, lo: &Loop, runtime: &str, log: &Path) -> PathBuf {
    let swap = if read(SWAPPINESS) == "13" { "14" } else { "13" };
    let thp = other(&selected(THP), &["never", "always"]);
    let sched = other(&selected(&lo.queue("scheduler")), &["mq-deadline", "none"]);
    let ra = if read(&lo.queue("read_ahead_kb")) == "512" { "256" } else { "512" };
    let text = format!(
        "runtime = \"{runtime}\"\nwarmup = \"0s\"\nreps = 2\ndrop_caches = false\n\
         [[workload]]\nengine = \"null\"\n\
         [[variant]]\nname = \"base\"\n\
         [[variant]]\nname = \"tuned\"\nsysctl = {{ \"vm.swappiness\" = {swap} }}\nthp = \"{thp}\"\n\
         block = {{ device = \"{dev}\", scheduler = \"{sched}\", read_ahead_kb = {ra} }}\n\
         env = {{ RH_VARIANT = \"tuned\" }}\ncpus = 1\nmem_limit = \"128M\"\n\
         before = \"echo before >> {log}\"\nafter = \"echo after >> {log}\"\n",
        dev = lo.dev,
        log = log.display()
    );
    let path = sb.dir.path().join("variants.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn machine_setup() -> Option<(Sandbox, Loop)> {
    if !is_root() || !Path::new(THP).exists() {
        racehorse_testkit::skip!("needs root and {THP} (CI runs as root)");
        return None;
    }
    let Some(lo) = Loop::new() else {
        racehorse_testkit::skip!(
            "losetup could not attach a loop device (scripts/test.sh installs util-linux)"
        );
        return None;
    };
    Some((Sandbox::new(), lo))
}

#[test]
fn variants_are_applied_recorded_and_proved_restored() {
    let _m = machine_lock();
    let Some((sb, lo)) = machine_setup() else { return };
    let before = snapshot(&lo);
    let log = sb.dir.path().join("commands.log");
    let path = suite(&sb, &lo, "300ms", &log);
    let out = sb.run(&["run", path.to_str().unwrap(), "--label", "v", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("settings read back with their values from before the run"),
        "{}",
        text(&out)
    );
    assert_eq!(snapshot(&lo), before, "every knob is back");
    assert_eq!(
        read(log.to_str().unwrap()).lines().collect::<Vec<_>>(),
        ["before", "after", "before", "after"]
    );
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "v", "--format", "json"]).stdout).unwrap();
    let cells = export["cells"].as_array().unwrap();
    let order: Vec<&str> = cells.iter().map(|c| c["variant"].as_str().unwrap()).collect();
    assert_eq!(order, ["base", "tuned", "base", "tuned"], "interleaved by repetition");
    let tuned = &cells[1]["settings"];
    assert_eq!(tuned[format!("block {} read_ahead_kb", lo.dev)].as_str().map(|s| s != before[2]), Some(true));
    assert_eq!(tuned["mem_limit"], "128 MiB");
    assert_eq!((cells[1]["cpus_online"].as_u64(), cells[0]["cpus_online"].as_u64()), (Some(1), Some(2)));
    for key in ["sysctl vm.swappiness", "thp enabled", "env RH_VARIANT", "before", "after", "cpus"] {
        assert!(tuned.get(key).is_some(), "{key} recorded: {tuned}");
    }
    assert_eq!(cells[0]["settings"], serde_json::json!({}), "the base variant sets nothing");
    let suite = &export["run"]["suite"];
    assert!(suite["variants"][1]["thp"].as_str().is_some(), "definitions stored: {suite}");
    let show = text(&sb.run(&["show", "v"]));
    assert!(show.contains("variant tuned: ") && show.contains("sysctl vm.swappiness="), "{show}");
    let cmp = text(&sb.run(&["compare", "v"]));
    assert!(cmp.contains("set sysctl vm.swappiness"), "the comparison names what differs: {cmp}");
}

#[test]
fn a_refused_knob_stops_the_run_before_anything_is_applied() {
    let _m = machine_lock();
    let Some((sb, lo)) = machine_setup() else { return };
    let before = snapshot(&lo);
    let log = sb.dir.path().join("commands.log");
    let good = std::fs::read_to_string(suite(&sb, &lo, "300ms", &log)).unwrap();
    for (bad, want) in [
        ("sysctl = { \"vm.no_such_knob\" = 1 }", "vm.no_such_knob"),
        ("block = { device = \"nosuchdisk\", read_ahead_kb = 64 }", "nosuchdisk"),
        (&format!("block = {{ device = \"{}\", scheduler = \"fastest\" }}", lo.dev), "fastest"),
        (&format!("block = {{ device = \"{}\", nr_requests = 100000 }}", lo.dev), "nr_requests"),
        ("thp = \"sometimes\"", "sometimes"),
        ("dir = \"/proc/racehorse-nope\"", "racehorse-nope"),
    ] {
        let text_ = format!("{good}[[variant]]\nname = \"broken\"\n{bad}\n");
        let path = sb.dir.path().join("bad.toml");
        std::fs::write(&path, text_).unwrap();
        let out = sb.run(&["run", path.to_str().unwrap(), "--quiet"]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out));
        assert!(
            text(&out).contains("variant 'broken'") && text(&out).contains(want),
            "{bad}: {}",
            text(&out)
        );
        assert_eq!(snapshot(&lo), before, "{bad}: nothing stays applied");
        assert!(!log.exists(), "{bad}: no before command ran");
    }
    let list = text(&sb.run(&["list"]));
    assert!(!list.contains("bad"), "no run was stored: {list}");
}

#[test]
fn sigkill_during_a_variant_is_recovered_by_restore() {
    let _m = machine_lock();
    let Some((sb, lo)) = machine_setup() else { return };
    let before = snapshot(&lo);
    let log = sb.dir.path().join("commands.log");
    let path = suite(&sb, &lo, "10s", &log);
    let mut child =
        sb.cmd(&["run", path.to_str().unwrap(), "--variant", "tuned", "--quiet"]).spawn().unwrap();
    let t0 = Instant::now();
    while !read(log.to_str().unwrap()).ends_with("before") || snapshot(&lo) == before {
        assert!(t0.elapsed() < Duration::from_secs(15), "the tuned variant never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(snapshot(&lo), before, "SIGKILL leaves the variant applied");
    let out = sb.run(&["restore"]);
    assert!(out.status.success() && text(&out).contains("restored"), "{}", text(&out));
    assert_eq!(snapshot(&lo), before, "restore puts every knob back");
    assert!(read(log.to_str().unwrap()).ends_with("before\nafter"), "the pending after command ran");
}
