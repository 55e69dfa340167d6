//! The daemon loop on a fixture machine (4 CPUs, cpu0 without an online file): limits at
//! start, one CPU per interval, highest first, exclusions, a failed write moving on, restore.

use super::*;

struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        let dir = tempfile::tempdir().unwrap();
        racehorse_machine::fixtures::copy_fixture("baremetal4", &dir.path().join("m"));
        Machine { dir }
    }
    fn root(&self) -> SysRoot {
        SysRoot::at(self.dir.path().join("m"))
    }
    fn online(&self, cpu: u32) -> String {
        std::fs::read_to_string(self.root().sys(format!("devices/system/cpu/cpu{cpu}/online")))
            .unwrap()
            .trim()
            .to_string()
    }
    fn run(&self, conf: &str, exclude: Vec<u32>, intervals: u64) -> (Result<(), Exit>, Vec<String>) {
        self.run_opts(conf, Backend::Sysfs, MemoryMode::Auto, exclude, intervals)
    }

    fn run_opts(
        &self,
        conf: &str,
        backend: Backend,
        memory: MemoryMode,
        exclude: Vec<u32>,
        intervals: u64,
    ) -> (Result<(), Exit>, Vec<String>) {
        let cfg = self.dir.path().join("plugd.conf");
        std::fs::write(&cfg, conf).unwrap();
        let d = self.dir.path();
        let opts = Options {
            config: cfg,
            root: self.root(),
            backend,
            memory,
            exclude,
            paths: Paths { lock: d.join("lock"), pid: d.join("pid"), state: d.join("state.json") },
            max_intervals: Some(intervals),
            interval: Some(Duration::from_millis(1)),
            machine_lock: Some(d.join("machine.lock")),
        };
        let (log, lines) = Log::captured();
        let r = run(opts, log, &Flags::default(), &mut |_| {});
        let lines = lines.lock().unwrap().clone();
        (r, lines)
    }
}

const UNPLUG: &str = "UPDATE=\"1\"\nCPU_MIN=\"2\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n";

#[test]
fn one_cpu_per_interval_highest_first_down_to_cpu_min_then_restored() {
    let m = Machine::new();
    let (r, log) = m.run(UNPLUG, vec![], 5);
    assert_eq!(r, Ok(()));
    let changes: Vec<&String> = log.iter().filter(|l| l.contains("plugged")).collect();
    assert_eq!(changes.len(), 2, "{log:?}");
    assert!(
        changes[0].starts_with("unplugged cpu3 (4 → 3)") && changes[1].starts_with("unplugged cpu2 (3 → 2)"),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("first decision after 2 samples")), "{log:?}");
    assert!((1..4).all(|c| m.online(c) == "1"), "restored on exit");
    assert!(!m.dir.path().join("state.json").exists() && !m.dir.path().join("pid").exists());
}

#[test]
fn cpu_max_is_enforced_at_start_and_exclusions_are_left_alone() {
    let m = Machine::new();
    let conf = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"1\"\n";
    let (r, log) = m.run(conf, vec![3], 4);
    assert_eq!(r, Ok(()));
    let changes: Vec<&String> = log.iter().filter(|l| l.contains("plugged")).collect();
    assert!(changes[0].contains("cpu2 unplugged to respect CPU_MAX 2"), "cpu3 is excluded: {log:?}");
    assert!(changes[1].contains("cpu1 unplugged to respect CPU_MAX 2"), "cpu0 cannot go: {log:?}");
    assert_eq!(changes.len(), 2, "{log:?}");
    assert!(log.iter().any(|l| l == "no CPU could be changed"), "cpu0 and the excluded cpu3 stay: {log:?}");
}

#[test]
fn a_cpu_that_refuses_the_write_is_skipped_for_the_next() {
    // A read-only sysfs attribute reading "1" stands for a CPU the kernel will not offline.
    let stubborn = Path::new("/sys/devices/system/cpu/cpu0/cache/index0/level");
    if std::fs::read_to_string(stubborn).map(|t| t.trim() != "1").unwrap_or(true) {
        racehorse_testkit::skip!("needs {} reading 1", stubborn.display());
        return;
    }
    let m = Machine::new();
    let f = m.root().sys("devices/system/cpu/cpu3/online");
    std::fs::remove_file(&f).unwrap();
    std::os::unix::fs::symlink(stubborn, &f).unwrap();
    let (r, log) = m.run(UNPLUG, vec![], 3);
    assert_eq!(r, Ok(()));
    assert!(log.iter().any(|l| l.starts_with("cpu3:") && l.contains("trying the next CPU")), "{log:?}");
    assert!(log.iter().any(|l| l.starts_with("unplugged cpu2")), "{log:?}");
    assert_eq!(m.online(2), "1", "restored");
}

#[test]
fn bad_configs_touch_nothing_and_exit_2() {
    let m = Machine::new();
    for (conf, want) in [
        ("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"loadavg >= 1\"\nHOTUNPLUG=\"0\"\n", ">="),
        ("UPDATE=\"1\"\n", "CPU_MIN"),
        ("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"vmstat.no_such_counter > 1\"\nHOTUNPLUG=\"0\"\n", "no_such_counter"),
    ] {
        let (r, _) = m.run(conf, vec![], 3);
        let e = r.unwrap_err();
        assert!(e.code == 2 && e.msg.contains(want), "{conf}: {e:?}");
        assert!((1..4).all(|c| m.online(c) == "1"));
    }
    let (r, _) =
        m.run("UPDATE=\"1\"\nCPU_MIN=\"9\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n", vec![], 3);
    assert_eq!(r.unwrap_err().code, 1, "CPU_MIN above the present CPUs is a runtime error");
}

impl Machine {
    fn put(&self, rel: &str, text: &str) -> std::path::PathBuf {
        let p = self.dir.path().join("m").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join("m").join(rel)).unwrap().trim().to_string()
    }
    fn run_with(
        &self,
        conf: &str,
        backend: Backend,
        memory: MemoryMode,
        n: u64,
    ) -> (Result<(), Exit>, Vec<String>) {
        self.run_opts(conf, backend, memory, vec![], n)
    }
}

#[test]
fn the_cpuset_backend_resizes_a_cgroup_and_puts_it_back() {
    let m = Machine::new();
    m.put("sys/fs/cgroup/cpuset/svc/cpuset.cpus", "0-3\n");
    let dir = m.root().sys("fs/cgroup/cpuset/svc");
    let (r, log) = m.run_with(UNPLUG, Backend::Cpuset(dir), MemoryMode::Off, 5);
    assert_eq!(r, Ok(()));
    let changes: Vec<&String> = log.iter().filter(|l| l.contains("plugged")).collect();
    assert!(changes.len() == 2 && changes[1].starts_with("unplugged cpu2 (3 → 2)"), "{log:?}");
    assert_eq!(m.read("sys/fs/cgroup/cpuset/svc/cpuset.cpus"), "0-3", "restored");
    assert!((1..4).all(|c| m.online(c) == "1"), "no CPU went offline");
}

const MEMORY: &str =
    "UPDATE=\"1\"\nCMM_MIN=\"0\"\nCMM_MAX=\"70000\"\nCMM_INC=\"30000\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n";

#[test]
fn the_cmm_balloon_grows_by_cmm_inc_up_to_cmm_max_and_is_restored() {
    let m = Machine::new();
    m.put("proc/sys/vm/cmm_pages", "0\n");
    let (r, log) = m.run_with(MEMORY, Backend::Sysfs, MemoryMode::Auto, 6);
    assert_eq!(r, Ok(()));
    let steps: Vec<&String> = log.iter().filter(|l| l.starts_with("cmm_pages")).collect();
    let want = ["cmm_pages 0 → 30000", "cmm_pages 30000 → 60000", "cmm_pages 60000 → 70000"];
    assert_eq!(steps, want.iter().collect::<Vec<_>>(), "{log:?}");
    assert_eq!(m.read("proc/sys/vm/cmm_pages"), "0", "the balloon found at start is restored");
}

#[test]
fn memory_blocks_go_offline_movable_first_within_cmm_max_and_come_back() {
    let m = Machine::new();
    m.put("sys/devices/system/memory/block_size_bytes", "8000000\n");
    for (b, zone) in [(0, "DMA32"), (1, "Normal"), (2, "Movable"), (3, "Normal")] {
        m.put(&format!("sys/devices/system/memory/memory{b}/state"), "online\n");
        m.put(&format!("sys/devices/system/memory/memory{b}/valid_zones"), &format!("{zone}\n"));
    }
    let (r, log) = m.run_with(MEMORY, Backend::Sysfs, MemoryMode::Blocks, 6);
    assert_eq!(r, Ok(()));
    let steps: Vec<&String> = log.iter().filter(|l| l.starts_with("memory")).collect();
    // 128 MiB blocks are 32768 pages: two fit under CMM_MAX = 70000.
    assert_eq!(steps, ["memory2 offline", "memory3 offline"].iter().collect::<Vec<_>>(), "{log:?}");
    assert!((0..4).all(|b| m.read(&format!("sys/devices/system/memory/memory{b}/state")) == "online"));
}

#[test]
fn the_first_decision_waits_for_the_deepest_history() {
    let m = Machine::new();
    // time[3] needs 4 samples: intervals 1-3 only collect, interval 4 decides.
    let conf = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"time[3] > 0\"\n";
    let (r, log) = m.run(conf, vec![], 4);
    assert_eq!(r, Ok(()));
    assert!(log.iter().any(|l| l.contains("first decision after 4 samples")), "{log:?}");
    let changes: Vec<&String> = log.iter().filter(|l| l.starts_with("unplugged")).collect();
    assert_eq!(changes.len(), 1, "one decision in four intervals: {log:?}");
}
