//! End-to-end tests of the engine: real Control (short windows), plain and mq modes, errors.

use super::*;
use crate::{Control, RealClock};
use racehorse_core::{CellSpec, Params, Value};
use std::sync::atomic::Ordering;
use std::time::Duration;

pub(super) const EXCERPT_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/fileserver/excerpt.txt");

pub(super) fn ctx(dir: &Path, clients: i64, loadfile: &str, ipc: &str) -> CellContext {
    let mut params = Params::new();
    params.insert("clients".into(), Value::Int(clients));
    params.insert("loadfile".into(), Value::Str(loadfile.into()));
    params.insert("ipc".into(), Value::Str(ipc.into()));
    for b in ["sync_open", "fsync_dirs", "fsync_writes"] {
        params.insert(b.into(), Value::Bool(false));
    }
    CellContext {
        spec: CellSpec { workload: "fileserver".into(), params, variant: String::new(), rep: 1 },
        work_dir: dir.to_path_buf(),
        cpus: 1,
        env: Default::default(),
    }
}

pub(super) fn run_cell(c: &CellContext, runtime_ms: u64) -> (Result<(), EngineError>, crate::Totals) {
    let mut cell = FileServer.prepare(c).unwrap();
    let ctl =
        Control::simple(Duration::ZERO, Duration::from_millis(runtime_ms), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    let res = cell.run(&ctl, &rec);
    cell.cleanup().unwrap();
    (res, rec.totals())
}

#[test]
fn two_clients_count_payload_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (res, t) = run_cell(&ctx(tmp.path(), 2, EXCERPT_PATH, "none"), 300);
    res.unwrap();
    assert!(t.units > 0.0);
    assert_eq!(t.units, (t.bytes_read + t.bytes_written) as f64);
    assert!(t.ops > 0 && t.latencies.contains_key("NTCreateX"));
    assert_eq!(t.extra["errors"], 0.0);
    assert!(!tmp.path().join("clients").exists(), "cleanup removes the trees");
}

#[test]
fn builtin_loadfile_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (res, t) = run_cell(&ctx(tmp.path(), 2, "", "none"), 300);
    res.unwrap();
    assert!(t.units > 0.0);
    assert_eq!(t.units, (t.bytes_read + t.bytes_written) as f64);
    assert_eq!(t.extra["errors"], 0.0);
}

#[test]
fn mq_mode_runs_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let (res, t) = run_cell(&ctx(tmp.path(), 2, EXCERPT_PATH, "mq"), 300);
    res.unwrap();
    assert!(t.units > 0.0);
    assert_eq!(t.units, (t.bytes_read + t.bytes_written) as f64);
    assert_eq!(t.extra["errors"], 0.0);
}

#[test]
fn unwritable_work_dir_is_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, b"").unwrap();
    let err = FileServer.prepare(&ctx(&file, 1, "", "none")).err().unwrap();
    match err {
        EngineError::Io { context, path, .. } => {
            assert!(context.contains("writable directory"), "{context}");
            assert_eq!(path, file);
        }
        other => panic!("{other:?}"),
    }
    let err = FileServer.prepare(&ctx(Path::new("/proc/self"), 1, "", "none")).err().unwrap();
    assert!(matches!(err, EngineError::Io { .. }), "{err:?}");
}

#[test]
fn full_disk_during_run_is_an_io_error() {
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
    let c = ctx(&work, 1, lf.to_str().unwrap(), "none");
    let start = std::time::Instant::now();
    let (res, _) = run_cell(&c, 5_000);
    assert!(start.elapsed() < Duration::from_secs(2), "a failed client ends the window early");
    match res {
        Err(EngineError::Io { context, source, .. }) => {
            assert!(context.contains("disk is full"), "{context}");
            assert_eq!(source.raw_os_error(), Some(libc::ENOSPC));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_loadfile_is_a_usage_error_with_line() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/fileserver/bad-op.txt");
    let err = FileServer.prepare(&ctx(tmp.path(), 1, bad, "none")).err().unwrap();
    match err {
        EngineError::Usage(m) => assert!(m.contains("bad-op.txt:3: unknown operation"), "{m}"),
        other => panic!("{other:?}"),
    }
    let err = FileServer.prepare(&ctx(tmp.path(), 1, "/nonexistent/client.txt", "none")).err().unwrap();
    assert!(matches!(err, EngineError::Io { .. }));
}

#[test]
fn interrupt_stops_workers_and_propagates() {
    let tmp = tempfile::tempdir().unwrap();
    let c = ctx(tmp.path(), 2, EXCERPT_PATH, "mq");
    let mut cell = FileServer.prepare(&c).unwrap();
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
    let rec = Recorder::new();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        abort.store(true, Ordering::Relaxed);
    });
    let start = std::time::Instant::now();
    assert!(matches!(cell.run(&ctl, &rec), Err(EngineError::Interrupted)));
    assert!(start.elapsed() < Duration::from_secs(2));
    setter.join().unwrap();
}

#[test]
fn options_have_lowercase_names_and_defaults() {
    for o in FileServer.info().options {
        assert!(o.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
        assert!(!o.help.is_empty());
    }
    assert_eq!(FileServer.info().name, "fileserver");
    assert!(FileServer.info().caps.needs_disk);
}
