//! fileserver's `ipc = "mq_procs"` (seed 003's two processes per client) through the binary:
//! beside the threaded `mq` in one run, and a run killed with SIGKILL leaves no client
//! process and no message queue behind.

use crate::common::{machine_lock, text, Sandbox};
use std::time::{Duration, Instant};

#[test]
fn mq_procs_runs_beside_the_threaded_form() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let dir = sb.work();
    std::fs::create_dir_all(&dir).expect("work dir");
    let o = sb.run(&[
        "run",
        "fileserver",
        "-o",
        "ipc=mq,mq_procs",
        "--clients",
        "2",
        "--runtime",
        "300ms",
        "--warmup",
        "100ms",
        "--label",
        "fsp",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("fsp");
    assert_eq!(cells.len(), 2, "{cells:?}");
    for c in &cells {
        assert_eq!(c["status"], "ok", "{c}");
        assert!(c["throughput_per_s"].as_f64().is_some_and(|t| t > 0.0), "{c}");
        assert_eq!(c["extra"]["errors"], 0.0, "{c}");
    }
    let procs = cells.iter().find(|c| c["params"]["ipc"] == "mq_procs").expect("an mq_procs cell");
    assert_eq!(procs["extra"]["client_processes"], 4.0, "{procs}");
    assert_eq!(procs["workload_cpu"]["method"], "children", "{procs}");
    let threads = cells.iter().find(|c| c["params"]["ipc"] == "mq").expect("an mq cell");
    assert_eq!(threads["workload_cpu"]["method"], "threads", "{threads}");
}

/// The pids whose parent is `ppid`, from /proc.
fn children_of(ppid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else { continue };
        if rest.split_whitespace().nth(1).and_then(|w| w.parse::<u32>().ok()) == Some(ppid) {
            out.push(pid);
        }
    }
    out
}

/// Alive and not a zombie.
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    stat.rfind(')').and_then(|i| stat[i + 2..].chars().next()).is_some_and(|s| s != 'Z')
}

/// Mounts the mqueue file system at /dev/mqueue for the test when it is not mounted, and
/// undoes that on drop; None if it cannot be listed.
struct Mqueue {
    dir: Option<String>,
    mounted_here: bool,
    created: bool,
}

fn mqueue_mount() -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let line = text.lines().find(|l| l.split_whitespace().nth(2) == Some("mqueue"))?;
    line.split_whitespace().nth(1).map(str::to_string)
}

impl Mqueue {
    fn get() -> Mqueue {
        if let Some(dir) = mqueue_mount() {
            return Mqueue { dir: Some(dir), mounted_here: false, created: false };
        }
        let created = std::fs::create_dir("/dev/mqueue").is_ok();
        let ok = std::process::Command::new("mount")
            .args(["-t", "mqueue", "mqueue", "/dev/mqueue"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        Mqueue { dir: mqueue_mount(), mounted_here: ok, created }
    }
}

impl Drop for Mqueue {
    fn drop(&mut self) {
        if self.mounted_here {
            let _ = std::process::Command::new("umount").arg("/dev/mqueue").status();
        }
        if self.created {
            let _ = std::fs::remove_dir("/dev/mqueue");
        }
    }
}

#[test]
fn a_killed_mq_procs_run_leaves_no_process_and_no_queue() {
    let _m = machine_lock();
    let mqueue = Mqueue::get();
    let sb = Sandbox::new();
    let dir = sb.work();
    std::fs::create_dir_all(&dir).expect("work dir");
    let mut child = sb
        .cmd(&[
            "run",
            "fileserver",
            "-o",
            "ipc=mq_procs",
            "--clients",
            "2",
            "--runtime",
            "30s",
            "--warmup",
            "0s",
            "--quiet",
            "--no-drop-caches",
            "--dir",
            dir.to_str().expect("utf-8 path"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn racehorse");
    let pid = child.id();
    let limit = Instant::now() + Duration::from_secs(20);
    let mut kids = children_of(pid);
    while kids.len() < 4 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
        kids = children_of(pid);
    }
    assert!(kids.len() >= 4, "two processes per client: {kids:?}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    child.wait().expect("reap racehorse");
    let limit = Instant::now() + Duration::from_secs(5);
    while kids.iter().any(|k| running(*k)) && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = kids.iter().copied().filter(|k| running(*k)).collect();
    assert!(left.is_empty(), "client processes outlived racehorse: {left:?}");
    let Some(queues) = mqueue.dir.as_ref().and_then(|d| std::fs::read_dir(d).ok()) else {
        eprintln!("queue check skipped: the mqueue file system is not mounted and could not be mounted");
        return;
    };
    let prefix = format!("racehorse-fs.{pid}.");
    let ours: Vec<String> = queues
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(ours.is_empty(), "queues left: {ours:?}");
}
