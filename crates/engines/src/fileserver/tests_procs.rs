//! Tests of `ipc = "mq_procs"`: it counts what the threaded form counts, its clients are
//! processes of their own, failures cross the process boundary, and no queue is left.

use super::client::Shared;
use super::procs::{run_processes, Role};
use super::tests::{ctx, run_cell, EXCERPT_PATH};
use super::*;
use crate::{Control, RealClock};
use std::collections::BTreeSet;
use std::ffi::CString;
use std::time::Duration;

/// Two writes and a read of 1000 bytes per pass, so units = 1000 × (WriteX + ReadX ops).
const FIXED: &str = "Mkdir \"\\clients\" NT_STATUS_OK\n\
Mkdir \"\\clients\\client1\" NT_STATUS_OK\n\
NTCreateX \"\\clients\\client1\\f.dat\" 0x44 0x5 7 NT_STATUS_OK\n\
WriteX 7 0 1000 1000 NT_STATUS_OK\n\
WriteX 7 1000 1000 1000 NT_STATUS_OK\n\
ReadX 7 0 1000 1000 NT_STATUS_OK\n\
Close 7 NT_STATUS_OK\n";

fn count(t: &crate::Totals, op: &str) -> f64 {
    t.latencies.get(op).map_or(0, |h| h.count) as f64
}

#[test]
fn mq_procs_counts_what_the_threaded_form_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let lf = tmp.path().join("fixed.txt");
    std::fs::write(&lf, FIXED).unwrap();
    let mut names = Vec::new();
    for ipc in ["mq", "mq_procs"] {
        let work = tmp.path().join(ipc);
        std::fs::create_dir_all(&work).unwrap();
        let (res, t) = run_cell(&ctx(&work, 2, lf.to_str().unwrap(), ipc), 300);
        res.unwrap();
        assert!(t.units > 0.0, "{ipc}");
        assert_eq!(t.units, (t.bytes_read + t.bytes_written) as f64, "{ipc}");
        assert_eq!(t.units, 1000.0 * (count(&t, "WriteX") + count(&t, "ReadX")), "{ipc}");
        assert_eq!(t.bytes_read as f64, 1000.0 * count(&t, "ReadX"), "{ipc}");
        assert_eq!(t.ops as f64, t.latencies.values().map(|h| h.count as f64).sum::<f64>(), "{ipc}");
        assert_eq!(t.extra["errors"], 0.0, "{ipc}");
        assert!(t.workload_cpu.total_s() > 0.0, "{ipc}: {:?}", t.workload_cpu);
        if ipc == "mq_procs" {
            assert_eq!(t.workload_cpu.method, racehorse_core::CpuMethod::Children);
            assert_eq!(t.extra["client_processes"], 4.0, "two processes per client");
        }
        names.push(t.latencies.keys().cloned().collect::<Vec<_>>());
    }
    assert_eq!(names[0], names[1], "the same ops are timed");
}

#[test]
fn mq_procs_runs_the_excerpt_without_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let (res, t) = run_cell(&ctx(tmp.path(), 3, EXCERPT_PATH, "mq_procs"), 300);
    res.unwrap();
    assert!(t.units > 0.0 && t.latencies.contains_key("NTCreateX"));
    assert_eq!(t.extra["errors"], 0.0);
    assert!(!tmp.path().join("clients").exists(), "cleanup removes the trees");
}

#[test]
fn mq_procs_clients_are_processes_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let lf = load(EXCERPT_PATH).unwrap();
    let sh = Shared {
        lf: Arc::new(lf),
        root: tmp.path().to_path_buf(),
        cfg: ExecConfig::default(),
        failed: AtomicBool::new(false),
    };
    let ctl = Control::simple(Duration::ZERO, Duration::from_millis(200), Arc::new(RealClock::default()));
    let (res, finished, cpu) = run_processes(&sh, 2, &ctl);
    res.unwrap();
    assert!(cpu.unwrap().total_s() > 0.0);
    assert_eq!(finished.len(), 4);
    let me = std::process::id() as i32;
    let mut pids = BTreeSet::new();
    for f in &finished {
        let r = f.report.as_ref().expect("every process reports");
        assert_eq!(r.pid, f.pid, "getpid() in the child is the pid racehorse forked");
        assert_ne!(r.pid, me);
        assert!(pids.insert(r.pid), "distinct pids: {finished:?}");
        assert!(!std::path::Path::new(&format!("/proc/{}", f.pid)).exists(), "reaped");
        assert!(libc::WIFEXITED(f.status) && libc::WEXITSTATUS(f.status) == 0, "{f:?}");
        match f.role {
            Role::Reader => assert!(r.ops > 0 && r.units > 0.0),
            Role::Executor => assert_eq!(r.ops, 0, "the executor counts nothing"),
        }
    }
    let readers = finished.iter().filter(|f| f.role == Role::Reader).count();
    assert_eq!(readers, 2);
}

#[test]
fn mq_procs_full_disk_is_an_io_error_from_the_executor() {
    let tmp = tempfile::tempdir().unwrap();
    let lf = tmp.path().join("full.txt");
    std::fs::write(
        &lf,
        "NTCreateX \"\\clients\\client1\\full\" 0x0 0x1 1 NT_STATUS_OK\nWriteX 1 0 10 10 NT_STATUS_OK\n",
    )
    .unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("clients/client0")).unwrap();
    std::os::unix::fs::symlink("/dev/full", work.join("clients/client0/full")).unwrap();
    let start = std::time::Instant::now();
    let (res, _) = run_cell(&ctx(&work, 1, lf.to_str().unwrap(), "mq_procs"), 5_000);
    assert!(start.elapsed() < Duration::from_secs(2), "a failed client ends the window early");
    match res {
        Err(EngineError::Io { context, source, .. }) => {
            assert!(context.contains("disk is full") && context.contains("line 2"), "{context}");
            assert_eq!(source.raw_os_error(), Some(libc::ENOSPC));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn mq_procs_interrupt_stops_the_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cell = FileServer.prepare(&ctx(tmp.path(), 2, EXCERPT_PATH, "mq_procs")).unwrap();
    let abort = Arc::new(AtomicBool::new(false));
    struct NoHooks;
    impl crate::WindowHooks for NoHooks {}
    let ctl = Control::new(
        Duration::ZERO,
        Duration::from_secs(10),
        Arc::new(RealClock::default()),
        Box::new(NoHooks),
        abort.clone(),
    );
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        abort.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let start = std::time::Instant::now();
    assert!(matches!(cell.run(&ctl, &Recorder::new()), Err(EngineError::Interrupted)));
    assert!(start.elapsed() < Duration::from_secs(2));
    setter.join().unwrap();
    cell.cleanup().unwrap();
}

/// The mqueue file system's mount point; mounted at /dev/mqueue for the test (and unmounted
/// on drop) when it is not mounted.
struct MqueueDir {
    dir: PathBuf,
    mounted_here: bool,
    created: bool,
}

impl MqueueDir {
    fn get() -> Option<MqueueDir> {
        if let Some(dir) = mq::mqueue_mount() {
            return Some(MqueueDir { dir, mounted_here: false, created: false });
        }
        let created = std::fs::create_dir("/dev/mqueue").is_ok();
        // SAFETY: mount(2) with NUL-terminated strings and no data.
        let r = unsafe {
            libc::mount(c"mqueue".as_ptr(), c"/dev/mqueue".as_ptr(), c"mqueue".as_ptr(), 0, std::ptr::null())
        };
        if r != 0 {
            eprintln!(
                "SKIP: mqueue is not mounted and mounting it failed: {}",
                std::io::Error::last_os_error()
            );
            return None;
        }
        mq::mqueue_mount().map(|dir| MqueueDir { dir, mounted_here: true, created })
    }
}

impl Drop for MqueueDir {
    fn drop(&mut self) {
        if self.mounted_here {
            // SAFETY: unmounts what `get` mounted, by a NUL-terminated path.
            unsafe { libc::umount2(c"/dev/mqueue".as_ptr(), libc::MNT_DETACH) };
        }
        if self.created {
            let _ = std::fs::remove_dir("/dev/mqueue");
        }
    }
}

fn our_queues(dir: &Path) -> Vec<String> {
    let prefix = format!("racehorse-fs.{}.", std::process::id());
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn mq_procs_leaves_no_queue_and_leftovers_of_dead_runs_are_removed() {
    let Some(mqueue) = MqueueDir::get() else { return };
    let dir = mqueue.dir.clone();
    let tmp = tempfile::tempdir().unwrap();
    let (res, _) = run_cell(&ctx(tmp.path(), 2, EXCERPT_PATH, "mq_procs"), 200);
    res.unwrap();
    assert_eq!(our_queues(&dir), Vec::<String>::new());
    // A leftover of a run that is gone: a queue named with the pid of a reaped process.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let name = CString::new(format!("/racehorse-fs.{dead}.0.0.req")).unwrap();
    // SAFETY: mq_open/mq_close with a NUL-terminated name and default attributes.
    let mqd = unsafe {
        libc::mq_open(
            name.as_ptr(),
            libc::O_CREAT | libc::O_RDWR,
            0o600 as libc::mode_t,
            std::ptr::null_mut::<libc::mq_attr>(),
        )
    };
    assert!(mqd >= 0, "{}", std::io::Error::last_os_error());
    unsafe { libc::mq_close(mqd) };
    assert!(dir.join(&name.to_str().unwrap()[1..]).exists());
    FileServer.prepare(&ctx(tmp.path(), 1, EXCERPT_PATH, "mq_procs")).unwrap();
    // SAFETY: as above, without O_CREAT: the name must be gone.
    let again = unsafe { libc::mq_open(name.as_ptr(), libc::O_RDWR) };
    assert_eq!(again, -1, "the leftover queue was removed");
    assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::ENOENT));
}

/// Children of this process whose name (the forking thread's) is `comm`.
fn forked_by(comm: &str) -> Vec<i32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Some(stat) = racehorse_machine::pidstat::PidStat::of(std::path::Path::new("/proc"), pid) else {
            continue;
        };
        if stat.comm == comm && stat.ppid == me {
            out.push(pid as i32);
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn mq_procs_a_killed_client_process_fails_the_cell_promptly() {
    for (n, pick_first) in [true, false].into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let comm = format!("rh-fs-kill{n}");
        let sh = Shared {
            lf: Arc::new(load(EXCERPT_PATH).unwrap()),
            root: tmp.path().to_path_buf(),
            cfg: ExecConfig::default(),
            failed: AtomicBool::new(false),
        };
        let ctl = Control::simple(Duration::ZERO, Duration::from_secs(20), Arc::new(RealClock::default()));
        let run = std::thread::Builder::new()
            .name(comm.clone())
            .spawn(move || {
                let start = std::time::Instant::now();
                let (res, finished, _) = run_processes(&sh, 1, &ctl);
                let rec = Recorder::new();
                (res, procs::record(finished, None, &rec), start.elapsed())
            })
            .unwrap();
        let limit = std::time::Instant::now() + Duration::from_secs(10);
        let mut kids = forked_by(&comm);
        while kids.len() < 2 && std::time::Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(10));
            kids = forked_by(&comm);
        }
        assert_eq!(kids.len(), 2, "an executor and a reader");
        std::thread::sleep(Duration::from_millis(100));
        let victim = if pick_first { kids[0] } else { kids[1] };
        // SAFETY: kills a client process forked by this test's run.
        unsafe { libc::kill(victim, libc::SIGKILL) };
        let (res, fatal, took) = run.join().unwrap();
        assert!(took < Duration::from_secs(5), "the cell ended early: {took:?}");
        assert!(res.is_err(), "the window ended early");
        let msg = fatal.expect("a fatal error").to_string();
        assert!(msg.contains("died of signal 9"), "{msg}");
        assert!(forked_by(&comm).is_empty(), "all reaped");
    }
}

#[test]
fn record_reports_the_root_cause_first() {
    use super::procs::{record, Finished};
    use super::procs_child::{ChildFatal, ChildReport};
    let report = |pid, fatal: Option<ChildFatal>| ChildReport { pid, fatal, ..ChildReport::default() };
    let gave_up = || Some(ChildFatal::of(EngineError::Failed(mq::GAVE_UP.into())));
    let enospc = || {
        Some(ChildFatal::of(EngineError::io(
            "disk is full",
            "/x",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        )))
    };
    let fin = |client, role, pid, report: Option<ChildReport>, status| Finished {
        client,
        role,
        pid,
        report,
        status,
    };
    // A killed reader: its death, not its partner giving up, is the error.
    let rec = Recorder::new();
    let e = record(
        vec![
            fin(0, Role::Executor, 10, Some(report(10, gave_up())), 0),
            fin(0, Role::Reader, 11, None, libc::SIGKILL),
        ],
        None,
        &rec,
    );
    assert_eq!(e.unwrap().to_string(), "fileserver: the reader process of client 0 died of signal 9");
    assert_eq!(rec.totals().extra["client_processes"], 1.0);
    // A full disk in an executor beats the reader's "the executor failed" and others giving up.
    let e = record(
        vec![
            fin(
                0,
                Role::Reader,
                11,
                Some(report(11, Some(ChildFatal::Other("the executor process failed".into())))),
                0,
            ),
            fin(0, Role::Executor, 10, Some(report(10, enospc())), 0),
            fin(1, Role::Reader, 13, Some(report(13, gave_up())), 0),
        ],
        None,
        &Recorder::new(),
    );
    assert!(
        matches!(e, Some(EngineError::Io { ref source, .. }) if source.raw_os_error() == Some(libc::ENOSPC)),
        "{e:?}"
    );
    // A report from another pid than the one forked does not count as a process of its own.
    let rec = Recorder::new();
    assert!(record(vec![fin(0, Role::Reader, 11, Some(report(12, None)), 0)], None, &rec).is_none());
    assert_eq!(rec.totals().extra["client_processes"], 0.0);
}
