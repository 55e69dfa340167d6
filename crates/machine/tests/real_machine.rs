//! Tests that change the real machine (CPU hotplug, affinity). All hold one lock so they never
//! overlap; hotplug runs only as root with cpu1 hotplug, else prints a skip note.

use racehorse_machine::cpuctl::online_file;
use racehorse_machine::guard::current_affinity;
use racehorse_machine::{online_cpus, CpuMethod, Guard, SysRoot};
use std::sync::Mutex;

static REAL_MACHINE: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    REAL_MACHINE.lock().unwrap_or_else(|p| p.into_inner())
}

fn cpu1_online() -> String {
    std::fs::read_to_string(online_file(&SysRoot::host(), 1)).expect("read").trim().to_string()
}

#[test]
fn hotplug_cpu1_off_and_back() {
    let _l = lock();
    let root = SysRoot::host();
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root || !online_file(&root, 1).exists() {
        racehorse_testkit::skip!("needs root and cpu1 hotplug");
        return;
    }
    assert_eq!(cpu1_online(), "1", "cpu1 must be online before the test");
    let dir = tempfile::tempdir().expect("tmp");
    let state = dir.path().join("restore.json");
    {
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        assert_eq!(g.method(), CpuMethod::Hotplug);
        g.set_cpus(1).expect("offline cpu1");
        assert_eq!(cpu1_online(), "0");
        assert!(state.exists());
        assert_eq!(online_cpus(&root).expect("online"), vec![0]);
    }
    assert_eq!(cpu1_online(), "1");
    assert!(!state.exists());
}

#[test]
fn affinity_pins_and_restores() {
    let _l = lock();
    let root = SysRoot::host();
    let before = current_affinity().expect("affinity");
    if before.len() < 2 {
        racehorse_testkit::skip!("needs 2 usable CPUs");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    {
        let mut g = Guard::new(root, dir.path().join("restore.json")).expect("guard");
        g.set_method(CpuMethod::Affinity);
        assert_eq!(g.set_cpus(1).expect("pin"), CpuMethod::Affinity);
        assert_eq!(current_affinity().expect("affinity"), vec![before[0]]);
        let child = std::thread::spawn(|| current_affinity().expect("affinity")).join().expect("join");
        assert_eq!(child, vec![before[0]], "threads spawned later inherit the mask");
        let too_many = before.len() as u32 + 1;
        assert!(g.set_cpus(too_many).is_err());
    }
    assert_eq!(current_affinity().expect("affinity"), before);
}
