//! Guard against writable copies of the fixture trees: changes are recorded, restored on drop,
//! on panic, and recovered from a state file left by a dead process.

mod common;

use common::{read, writable_fixture};
use racehorse_machine::cpuctl::online_file;
use racehorse_machine::{recover, CpuMethod, Guard, MachineError};
use std::path::Path;

fn online(root: &racehorse_machine::SysRoot, cpu: u32) -> String {
    read(&online_file(root, cpu))
}

#[test]
fn hotplug_then_restore_on_drop() {
    let (dir, root) = writable_fixture("baremetal4");
    let state = dir.path().join("state/restore.json");
    {
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        assert_eq!(g.method(), CpuMethod::Hotplug);
        assert_eq!(g.set_cpus(2).expect("set"), CpuMethod::Hotplug);
        assert_eq!(
            (online(&root, 1), online(&root, 2), online(&root, 3)),
            ("1".into(), "0".into(), "0".into())
        );
        let saved = std::fs::read_to_string(&state).expect("state file written before the change");
        assert!(saved.contains("\"pid\""), "{saved}");
        // A second change keeps the first originals.
        g.set_cpus(1).expect("set 1");
        assert_eq!(online(&root, 1), "0");
        g.set_cpus(3).expect("set 3");
        assert_eq!(
            (online(&root, 1), online(&root, 2), online(&root, 3)),
            ("1".into(), "1".into(), "0".into())
        );
    }
    for cpu in 1..=3 {
        assert_eq!(online(&root, cpu), "1", "cpu{cpu}");
    }
    assert!(!state.exists(), "state file removed after a successful restore");
}

#[test]
fn offline_cpus_are_brought_online_and_put_back() {
    let (dir, root) = writable_fixture("baremetal4");
    std::fs::write(online_file(&root, 3), "0\n").expect("w");
    let mut g = Guard::new(root.clone(), dir.path().join("r.json")).expect("guard");
    g.set_cpus(4).expect("set");
    assert_eq!(online(&root, 3), "1");
    g.restore().expect("restore");
    assert_eq!(online(&root, 3), "0");
    g.restore().expect("restore is idempotent");
    drop(g);
    assert_eq!(online(&root, 3), "0");
}

#[test]
fn too_many_or_zero_cpus_is_an_error() {
    let (dir, root) = writable_fixture("baremetal4");
    let mut g = Guard::new(root.clone(), dir.path().join("r.json")).expect("guard");
    let e = g.set_cpus(5).expect_err("too many");
    assert!(e.to_string().contains("4 possible CPUs"), "{e}");
    assert!(matches!(g.set_cpus(0), Err(MachineError::Invalid(_))));
    assert!(!dir.path().join("r.json").exists(), "nothing changed, nothing recorded");
}

#[test]
fn sysctl_set_and_restore() {
    let (dir, root) = writable_fixture("baremetal4");
    let state = dir.path().join("r.json");
    let path = root.proc("sys/vm/swappiness");
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    g.set_sysctl("vm.swappiness", "10").expect("set");
    g.set_sysctl("vm.swappiness", "1").expect("set again");
    assert_eq!(read(&path), "1");
    assert!(state.exists());
    assert!(g.set_sysctl("../../etc/passwd", "x").is_err());
    assert!(g.set_sysctl("vm.nonexistent_knob", "1").is_err());
    g.restore().expect("restore");
    assert_eq!(read(&path), "60");
    assert!(!state.exists());
}

#[test]
fn restored_after_panic() {
    let (dir, root) = writable_fixture("baremetal4");
    let state = dir.path().join("r.json");
    let r2 = root.clone();
    let s2 = state.clone();
    let res = std::panic::catch_unwind(move || {
        let mut g = Guard::new(r2, s2).expect("guard");
        g.set_cpus(1).expect("set");
        g.set_sysctl("vm.dirty_ratio", "5").expect("sysctl");
        panic!("workload blew up");
    });
    assert!(res.is_err());
    assert_eq!((online(&root, 1), online(&root, 3)), ("1".into(), "1".into()));
    assert_eq!(read(&root.proc("sys/vm/dirty_ratio")), "20");
    assert!(!state.exists());
}

fn leave_state(root: &racehorse_machine::SysRoot, state: &Path, pid: u32) {
    std::fs::write(online_file(root, 2), "0\n").expect("w");
    std::fs::write(root.proc("sys/vm/swappiness"), "5\n").expect("w");
    let json = format!(
        r#"{{"pid": {pid}, "start_ticks": null, "online": {{"2": "1"}}, "sysctl": {{"vm.swappiness": "60"}}}}"#
    );
    std::fs::write(state, json).expect("state");
}

#[test]
fn recover_from_dead_process() {
    let (dir, root) = writable_fixture("baremetal4");
    let state = dir.path().join("r.json");
    assert_eq!(recover(&root, &state).expect("no file"), None);
    leave_state(&root, &state, 999_999);
    let msg = recover(&root, &state).expect("recover").expect("something restored");
    assert!(
        msg.contains("999999") && msg.contains("cpu2/online=1") && msg.contains("vm.swappiness=60"),
        "{msg}"
    );
    assert_eq!(online(&root, 2), "1");
    assert_eq!(read(&root.proc("sys/vm/swappiness")), "60");
    assert!(!state.exists());
}

#[test]
fn live_owner_is_left_alone() {
    let (dir, root) = writable_fixture("baremetal4");
    let state = dir.path().join("r.json");
    leave_state(&root, &state, 1); // fixture has proc/1: "alive"
    assert_eq!(recover(&root, &state).expect("alive"), None);
    assert_eq!(online(&root, 2), "0");
    let e = Guard::new(root.clone(), state.clone()).expect_err("another run owns the machine");
    assert!(matches!(e, MachineError::State { .. }), "{e}");
    assert!(state.exists());
}

#[test]
fn new_guard_recovers_stale_state_first() {
    let (dir, root) = writable_fixture("baremetal4");
    let state = dir.path().join("r.json");
    leave_state(&root, &state, 999_998);
    let g = Guard::new(root.clone(), state.clone()).expect("guard");
    assert_eq!(online(&root, 2), "1");
    assert!(!state.exists());
    drop(g);
}

#[test]
fn drop_caches_writes_3() {
    let (dir, root) = writable_fixture("baremetal4");
    let g = Guard::new(root.clone(), dir.path().join("r.json")).expect("guard");
    assert!(g.drop_caches().expect("drop"));
    assert_eq!(read(&root.proc("sys/vm/drop_caches")), "3");
    let (_d2, vm) = writable_fixture("vm2"); // has no drop_caches file
    let g2 = Guard::new(vm, dir.path().join("r2.json")).expect("guard");
    assert!(!g2.drop_caches().expect("no file"));
}

#[test]
fn default_state_file_is_named() {
    let p = racehorse_machine::default_state_file();
    assert!(p.ends_with("racehorse/restore.json"), "{}", p.display());
}
