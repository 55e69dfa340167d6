//! Guard tests on the cgroup fixtures and the real machine's memory cgroup.

use super::*;

use crate::testutil::{read, writable_fixture as fixture};

const V1_DIR: &str = "/sys/fs/cgroup/memory/process_api/abc123";
const V2_DIR: &str = "/sys/fs/cgroup/user.slice/racehorse.scope";

#[test]
fn v1_limit_is_written_recorded_and_restored() {
    let (_d, root, state) = fixture("cgroup-v1");
    let pid = std::process::id().to_string();
    let original = root.map_host_path(Path::new(V1_DIR));
    let child = original.join(format!("racehorse-{pid}"));
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    let lim = g.limit_memory(256 << 20).expect("limit");
    let want = CgroupLimit { version: 1, path: child.clone(), limit_bytes: 256 << 20, swap_limited: true };
    assert_eq!(lim, want);
    assert_eq!(g.memory_limit(), Some(&want));
    assert_eq!(read(&child.join("memory.limit_in_bytes")), "268435456");
    assert_eq!(read(&child.join("memory.memsw.limit_in_bytes")), "268435456");
    assert_eq!(read(&child.join("cgroup.procs")), pid);
    assert_eq!(lim.memory_usage_bytes(), Some(1 << 20));
    let saved = read(&state);
    assert!(
        saved.contains(&format!("{V1_DIR}/racehorse-{pid}")) && saved.contains("\"original\""),
        "{saved}"
    );
    // Raising the limit writes memsw first (it must stay >= the limit).
    assert_eq!(g.limit_memory(512 << 20).expect("raise").limit_bytes, 512 << 20);
    assert_eq!(read(&child.join("memory.memsw.limit_in_bytes")), "536870912");
    g.restore().expect("restore");
    assert_eq!(read(&original.join("cgroup.procs")), pid, "moved back");
    assert!(!child.exists() && !state.exists());
    assert_eq!(g.memory_limit(), None);
    g.restore().expect("idempotent");
}

#[test]
fn a_limit_allowing_swap_lifts_the_swap_limit_and_goes_with_remove() {
    let (_d, root, state) = fixture("cgroup-v1");
    let child = root.map_host_path(Path::new(V1_DIR)).join(format!("racehorse-{}", std::process::id()));
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    let lim = g.limit_memory_swap(64 << 20, true).expect("limit");
    assert!(!lim.swap_limited, "pages over the limit may go to swap");
    assert_eq!(read(&child.join("memory.limit_in_bytes")), "67108864");
    assert_eq!(read(&child.join("memory.memsw.limit_in_bytes")), "-1");
    g.remove_memory_limit().expect("remove");
    assert!(!child.exists() && g.memory_limit().is_none() && !state.exists(), "nothing else was saved");
}

#[test]
fn restoring_between_variants_keeps_the_memory_limit() {
    let (_d, root, state) = fixture("cgroup-v1");
    let child = root.map_host_path(Path::new(V1_DIR)).join(format!("racehorse-{}", std::process::id()));
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    g.limit_memory(128 << 20).expect("limit");
    g.restore_keeping_memory_limit().expect("restore between variants");
    assert!(child.is_dir() && g.memory_limit().is_some(), "the limit holds for the whole run");
    assert!(read(&state).contains("racehorse-"), "the state file still names the cgroup");
    g.restore().expect("restore");
    assert!(!child.exists() && !state.exists());
}

#[test]
fn v2_enables_memory_for_the_child_and_disables_it_after() {
    let (_d, root, state) = fixture("cgroup-v2");
    let original = root.map_host_path(Path::new(V2_DIR));
    let child = original.join(format!("racehorse-{}", std::process::id()));
    {
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        let lim = g.limit_memory(64 << 20).expect("limit");
        assert_eq!((lim.version, lim.limit_bytes, lim.swap_limited), (2, 64 << 20, true));
        assert_eq!(read(&original.join("cgroup.subtree_control")), "+memory");
        assert_eq!(read(&child.join("memory.max")), "67108864");
        assert_eq!(read(&child.join("memory.swap.max")), "0");
        assert_eq!(read(&child.join("cgroup.procs")), std::process::id().to_string());
        assert_eq!(lim.memory_usage_bytes(), Some(2 << 20));
        assert!(read(&state).contains("\"enable_memory\": true"));
    }
    assert_eq!(read(&original.join("cgroup.subtree_control")), "-memory", "restored on drop");
    assert!(!child.exists() && !state.exists());
}

#[test]
fn bad_limits_and_missing_controllers_change_nothing() {
    let (_d, root, state) = fixture("cgroup-v2");
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    let e = g.limit_memory(1 << 20).expect_err("too small");
    assert!(matches!(e, MachineError::Invalid(_)) && e.to_string().contains("16 MiB"), "{e}");
    let controllers = root.map_host_path(Path::new(V2_DIR)).join("cgroup.controllers");
    std::fs::write(&controllers, "cpu io pids\n").expect("w");
    let e = g.limit_memory(64 << 20).expect_err("no memory controller");
    assert!(matches!(e, MachineError::NotPermitted(_)) && e.to_string().contains("+memory"), "{e}");
    std::fs::write(root.proc("self/mountinfo"), "22 1 254:1 / / rw - ext4 /dev/vda1 rw\n").expect("w");
    let e = g.limit_memory(64 << 20).expect_err("not mounted");
    assert!(e.to_string().contains("mount"), "{e}");
    assert!(!state.exists(), "nothing changed, nothing recorded");
}

/// A state file from dead pid 999999 that made `racehorse-999999` under the v1 fixture cgroup.
fn leave_cgroup(root: &SysRoot, state: &Path, procs: &str) -> PathBuf {
    let child = root.map_host_path(Path::new(V1_DIR)).join("racehorse-999999");
    std::fs::create_dir(&child).expect("mkdir");
    std::fs::write(child.join("cgroup.procs"), procs).expect("w");
    std::fs::write(child.join("memory.limit_in_bytes"), "268435456\n").expect("w");
    let json = format!(
        r#"{{"pid": 999999, "start_ticks": null, "online": {{}}, "sysctl": {{}},
        "cgroup": {{"version": 1, "original": "{V1_DIR}", "child": "{V1_DIR}/racehorse-999999"}}}}"#
    );
    std::fs::create_dir_all(state.parent().expect("dir")).expect("mkdir");
    std::fs::write(state, json).expect("state");
    child
}

#[test]
fn recover_removes_the_cgroup_of_a_dead_run() {
    let (_d, root, state) = fixture("cgroup-v1");
    let child = leave_cgroup(&root, &state, "");
    let msg = recover(&root, &state).expect("recover").expect("restored");
    assert!(msg.contains("999999") && msg.contains("removed cgroup"), "{msg}");
    assert!(!child.exists() && !state.exists());
}

#[test]
fn recover_leaves_a_cgroup_that_still_has_processes() {
    let (_d, root, state) = fixture("cgroup-v1");
    std::fs::create_dir_all(root.proc("4242")).expect("a live process");
    let child = leave_cgroup(&root, &state, "4242\n");
    let msg = recover(&root, &state).expect("recover").expect("restored");
    assert!(msg.contains("left cgroup") && msg.contains("4242"), "{msg}");
    assert!(child.exists() && !state.exists());
}

#[test]
fn recover_refuses_a_directory_that_is_not_ours() {
    let (_d, root, state) = fixture("cgroup-v1");
    leave_cgroup(&root, &state, "");
    let text = read(&state).replace("abc123/racehorse-999999", "abc123");
    std::fs::write(&state, text.replace(&format!("\"original\": \"{V1_DIR}\""), "\"original\": \"/x\""))
        .expect("w");
    let e = recover(&root, &state).expect_err("refused");
    assert!(e.to_string().contains("refusing"), "{e}");
    assert!(root.map_host_path(Path::new(V1_DIR)).exists() && state.exists());
}

/// Changes the real machine: moves this test process into a child memory cgroup and back.
/// The Guard restores on drop, also when an assert fails.
#[test]
fn limit_memory_real_machine() {
    let _l = cgroup::machine_lock();
    let root = SysRoot::host();
    let Ok(found) = cgroup::detect_memory_cgroup(&root) else {
        racehorse_testkit::skip!("no memory cgroup");
        return;
    };
    if euid() != 0 || !writable(&found.dir) {
        racehorse_testkit::skip!("needs root and a writable {}", found.dir.display());
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let state = dir.path().join("restore.json");
    let name = format!("racehorse-{}", std::process::id());
    let child_path = format!("{}/{name}", found.cgroup_path.trim_end_matches('/'));
    {
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        let lim = g.limit_memory(256 << 20).expect("limit");
        assert!(state.exists(), "recorded");
        assert_eq!(cgroup::detect_memory_cgroup(&root).expect("now").cgroup_path, child_path);
        let this_thread = std::fs::read_to_string("/proc/thread-self/cgroup").expect("thread-self");
        assert!(this_thread.contains(&format!("{child_path}\n")), "every thread moved: {this_thread}");
        let file = if lim.version == 1 { "memory.limit_in_bytes" } else { "memory.max" };
        let back: u64 = crate::root::read_num(&lim.path.join(file)).expect("limit reads back");
        assert!(back <= 256 << 20 && back > (256 << 20) - 65536, "{back}");
        assert_eq!(lim.limit_bytes, back);
        let mut buf = vec![0u8; 64 << 20];
        for i in (0..buf.len()).step_by(4096) {
            buf[i] = 1;
        }
        let used = lim.memory_usage_bytes().expect("usage");
        assert_eq!(std::hint::black_box(&buf).iter().step_by(4096).filter(|&&b| b == 1).count(), 16384);
        assert!(used >= 60 << 20, "64 MiB touched after the move is charged to the child: {used}");
        println!(
            "cgroup v{} {child_path} ({}): limit read back {back}, usage {used}, swap limited {}",
            lim.version,
            lim.path.display(),
            lim.swap_limited
        );
        drop(buf);
        g.restore().expect("restore");
    }
    assert_eq!(cgroup::detect_memory_cgroup(&root).expect("after").cgroup_path, found.cgroup_path);
    assert!(!found.dir.join(name).exists(), "child removed");
    assert!(!state.exists());
}
