//! Tests of `Guard::set_files` on the knobs fixture, and on the real machine (THP, a loop device).

use crate::cgroup::machine_lock;
use crate::guard::{recover, Guard};
use crate::knobs::{block_queue_dir, governor_files, selected_value, thp_file};
use crate::root::{euid, SysRoot};
use crate::testutil::{read, writable_fixture};
use std::path::{Path, PathBuf};

fn item(p: &Path, v: &str) -> (PathBuf, String) {
    (p.to_path_buf(), v.to_string())
}

#[test]
fn invalid_items_change_and_record_nothing() {
    let (d, root, state) = writable_fixture("knobs");
    let sched = root.sys("block/vda/queue/scheduler");
    let outside = d.path().join("outside.txt");
    std::fs::write(&outside, "1\n").expect("w");
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    let cases: Vec<((PathBuf, String), &str)> = vec![
        (item(&outside, "0"), "refusing to write"),
        (item(&root.sys("block/../../proc/sys/vm/swappiness"), "1"), "refusing to write"),
        (item(&root.sys(""), "1"), "refusing to write"),
        (item(&root.sys("block/vda/queue/nonexistent"), "1"), "queue/nonexistent does not exist"),
        (item(&root.sys("block/vda/queue"), "1"), "is not a file"),
        (item(&sched, "foo"), "scheduler 'foo' is not one of: mq-deadline, kyber, bfq, none"),
        (item(&root.sys("block/vda/queue/read_ahead_kb"), ""), "non-empty"),
    ];
    for (bad, want) in cases {
        let e = g.set_files(&[item(&sched, "bfq"), bad.clone()]).expect_err("refused");
        assert!(e.to_string().contains(want), "{bad:?}: {e}");
        assert_eq!(read(&sched), "[mq-deadline] kyber bfq none", "{bad:?}: nothing applied");
        assert!(!state.exists(), "{bad:?}: nothing recorded");
    }
    assert_eq!(read(&outside), "1");
    assert_eq!(g.verify_restored(), Ok(0), "nothing was logged either");
}

#[test]
fn an_empty_original_is_written_back_as_empty() {
    let (_d, root, state) = writable_fixture("knobs");
    // A cgroup v2 child's cpuset.cpus reads empty until set; restore must empty it again.
    let cpus = root.sys("fs/cgroup/svc/cpuset.cpus");
    std::fs::create_dir_all(cpus.parent().expect("dir")).expect("mkdir");
    std::fs::write(&cpus, "").expect("w");
    let mut g = Guard::new(root.clone(), state).expect("guard");
    g.set_files(&[item(&cpus, "0-1")]).expect("set");
    assert_eq!(read(&cpus), "0-1");
    g.restore().expect("restore");
    assert_eq!(std::fs::read_to_string(&cpus).expect("r"), "\n", "an empty write reaches the file");
}

#[test]
fn governors_must_be_available() {
    let (_d, root, state) = writable_fixture("knobs");
    let files = governor_files(&root).expect("two CPUs");
    assert_eq!(files.len(), 2);
    let mut g = Guard::new(root.clone(), state).expect("guard");
    let items: Vec<_> = files.iter().map(|f| item(f, "ondemand")).collect();
    let e = g.set_files(&items).expect_err("not available");
    assert!(
        e.to_string().contains("scaling_governor 'ondemand' is not one of: performance, powersave"),
        "{e}"
    );
    let items: Vec<_> = files.iter().map(|f| item(f, "powersave")).collect();
    g.set_files(&items).expect("available");
    assert!(files.iter().all(|f| read(f) == "powersave"));
    g.restore().expect("restore");
    assert!(files.iter().all(|f| read(f) == "performance"));
    assert_eq!(g.verify_restored(), Ok(2));
}

#[test]
fn round_trip_keeps_first_originals_and_order() {
    let (_d, root, state) = writable_fixture("knobs");
    let q = block_queue_dir(&root, "/dev/vda1").expect("partition → disk queue");
    let (sched, nr) = (q.join("scheduler"), q.join("nr_requests"));
    let thp = thp_file(&root, "enabled").expect("thp");
    let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
    g.set_files(&[item(&sched, "bfq"), item(&nr, "64")]).expect("set");
    assert_eq!((read(&sched), read(&nr)), ("bfq".into(), "64".into()), "plain files hold what was written");
    g.set_files(&[item(&thp, "never"), item(&sched, "kyber"), item(&nr, "32")]).expect("set again");
    let text = read(&state);
    let pos = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
    assert!(pos("queue/scheduler") < pos("queue/nr_requests") && pos("queue/nr_requests") < pos("enabled"));
    assert!(
        text.contains("\"/sys/block/vda/queue/scheduler\"") && text.contains("\"original\": \"mq-deadline\"")
    );
    assert!(
        text.contains("\"original\": \"256\"") && !text.contains("\"64\""),
        "first originals kept: {text}"
    );
    g.restore().expect("restore");
    assert_eq!(read(&sched), "mq-deadline", "plain files get the selected word back");
    assert_eq!((read(&nr), read(&thp)), ("256".into(), "madvise".into()));
    assert!(!state.exists());
    assert_eq!(g.verify_restored(), Ok(3));
}

#[test]
fn recover_runs_after_commands_then_restores_files_in_order() {
    let (d, root, state) = writable_fixture("knobs");
    let log = d.path().join("log");
    std::fs::write(root.sys("block/vda/queue/scheduler"), "bfq\n").expect("w");
    std::fs::write(root.sys("block/vda/queue/nr_requests"), "64\n").expect("w");
    let json = format!(
        r#"{{"pid": 999999, "start_ticks": null, "online": {{}}, "sysctl": {{}},
        "files": [{{"path": "/sys/block/vda/queue/scheduler", "original": "mq-deadline"}},
                  {{"path": "/sys/block/vda/queue/nr_requests", "original": "256"}}],
        "commands": ["echo after >> {}"]}}"#,
        log.display()
    );
    std::fs::create_dir_all(state.parent().expect("dir")).expect("mkdir");
    std::fs::write(&state, json).expect("state");
    let msg = recover(&root, &state).expect("recover").expect("restored");
    let sched = msg.find("scheduler=mq-deadline").expect(&msg);
    let nr = msg.find("nr_requests=256").expect(&msg);
    let after = msg.find("ran after-command").expect(&msg);
    assert!(after < sched && sched < nr, "after-commands first, then files in order: {msg}");
    assert_eq!(read(&root.sys("block/vda/queue/scheduler")), "mq-deadline");
    assert_eq!((read(&root.sys("block/vda/queue/nr_requests")), read(&log)), ("256".into(), "after".into()));
    assert!(!state.exists());
}

#[test]
fn recover_refuses_a_file_outside_sys() {
    let (d, root, state) = writable_fixture("knobs");
    let victim = d.path().join("victim");
    std::fs::write(&victim, "keep\n").expect("w");
    let json = format!(
        r#"{{"pid": 999999, "start_ticks": null, "online": {{}}, "sysctl": {{}},
        "files": [{{"path": "{}", "original": "x"}}, {{"path": "/sys/../etc/x", "original": "x"}}]}}"#,
        victim.display()
    );
    std::fs::create_dir_all(state.parent().expect("dir")).expect("mkdir");
    std::fs::write(&state, json).expect("state");
    let e = recover(&root, &state).expect_err("refused");
    assert!(e.to_string().contains("refusing to restore") && e.to_string().contains("by hand"), "{e}");
    assert_eq!(read(&victim), "keep");
    assert!(state.exists(), "kept for a person to look at");
}

/// Skips (with the reason printed) unless root on a host whose /sys is writable.
fn may_change_sysfs(what: &str) -> bool {
    if euid() != 0 {
        racehorse_testkit::skip!("changing {what} needs root");
        return false;
    }
    true
}

/// Changes the real machine: THP `enabled` goes to "never" and back, also if an assert fails.
#[test]
fn thp_enabled_set_and_restored_machine() {
    let _l = machine_lock();
    let root = SysRoot::host();
    let Ok(file) = thp_file(&root, "enabled") else {
        racehorse_testkit::skip!("this kernel has no transparent hugepages");
        return;
    };
    if !may_change_sysfs("transparent hugepages") {
        return;
    }
    let original = selected_value(&read(&file));
    let dir = tempfile::tempdir().expect("tmp");
    let state = dir.path().join("restore.json");
    {
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        g.set_files(&[item(&file, "never")]).expect("set never");
        assert_eq!(selected_value(&read(&file)), "never");
        assert!(read(&state).contains("transparent_hugepage/enabled"));
        g.restore().expect("restore");
        assert_eq!(g.verify_restored(), Ok(1));
    }
    assert_eq!(selected_value(&read(&file)), original);
    assert!(!state.exists());
    println!("THP enabled: never, then back to {original}");
}

/// A loop device over a 64 MiB file in a temp dir, detached on drop.
struct Loop {
    dev: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new() -> Result<Loop, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let img = dir.path().join("loop.img");
        let f = std::fs::File::create(&img).map_err(|e| e.to_string())?;
        f.set_len(64 << 20).map_err(|e| e.to_string())?;
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || dev.is_empty() {
            return Err(format!("losetup -f failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(Loop { dev, _dir: dir })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// Changes the real machine: a loop device's scheduler, nr_requests and read_ahead_kb are
/// changed and restored, and a value the kernel refuses rolls back the call's earlier writes.
#[test]
fn loop_device_queue_set_and_restored_machine() {
    let _l = machine_lock();
    if !may_change_sysfs("a loop device") {
        return;
    }
    let lo = match Loop::new() {
        Ok(lo) => lo,
        Err(why) => {
            racehorse_testkit::skip!("no loop device ({why})");
            return;
        }
    };
    let root = SysRoot::host();
    let q = block_queue_dir(&root, &lo.dev).expect("queue dir");
    let name = lo.dev.trim_start_matches("/dev/");
    assert_eq!(q, PathBuf::from(format!("/sys/block/{name}/queue")));
    let (sched, nr, ra) = (q.join("scheduler"), q.join("nr_requests"), q.join("read_ahead_kb"));
    let before: Vec<String> = [&sched, &nr, &ra].iter().map(|f| selected_value(&read(f))).collect();
    let choices = crate::knobs::choices(&read(&sched)).unwrap_or_default();
    let Some(other) = choices.iter().find(|c| **c != before[0]).cloned() else {
        racehorse_testkit::skip!("{} offers no other scheduler ({choices:?})", sched.display());
        return;
    };
    let ra_new = if before[2] == "4096" { "256" } else { "4096" };
    let dir = tempfile::tempdir().expect("tmp");
    let mut g = Guard::new(root.clone(), dir.path().join("restore.json")).expect("guard");
    let e = g.set_files(&[item(&sched, &other), item(&ra, "not-a-number")]).expect_err("EINVAL");
    let msg = e.to_string();
    assert!(
        msg.contains("the kernel refused 'not-a-number' for /sys/block/") && msg.contains("Invalid argument"),
        "{msg}"
    );
    assert_eq!(selected_value(&read(&sched)), before[0], "the scheduler written first was put back");
    g.set_files(&[item(&sched, &other), item(&nr, "32"), item(&ra, ra_new)]).expect("set");
    assert_eq!(selected_value(&read(&sched)), other);
    assert_eq!((read(&nr), read(&ra)), ("32".to_string(), ra_new.to_string()));
    g.restore().expect("restore");
    let after: Vec<String> = [&sched, &nr, &ra].iter().map(|f| selected_value(&read(f))).collect();
    assert_eq!(after, before);
    assert_eq!(g.verify_restored(), Ok(3));
    println!(
        "{}: scheduler {other}, nr_requests 32, read_ahead_kb {ra_new}, then back to {before:?}",
        lo.dev
    );
}
