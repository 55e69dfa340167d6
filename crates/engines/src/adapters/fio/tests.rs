//! Tests of the fio adapter; most run the real fio and skip (saying so) only when it is missing.

use super::*;
use crate::control::RealClock;
use crate::OptKind;
use racehorse_core::{CellSpec, Params};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn have_fio() -> bool {
    if fio_path().is_none() {
        racehorse_testkit::skip!("fio is not installed (apt-get install fio)");
        return false;
    }
    true
}

fn ctx(dir: &Path, opts: &[(&str, &str)]) -> CellContext {
    let mut params = Params::new();
    for o in OPTIONS {
        if let Some(v) = o.default_value() {
            params.insert(o.name.to_string(), v);
        }
    }
    for (k, v) in opts {
        let o = OPTIONS.iter().find(|o| o.name == *k).unwrap();
        params.insert(k.to_string(), o.parse_text(v).unwrap());
    }
    CellContext {
        spec: CellSpec { workload: "fio".into(), params, variant: String::new(), rep: 1 },
        work_dir: dir.to_path_buf(),
        cpus: 2,
        env: Default::default(),
    }
}

fn control(warmup_ms: u64, runtime_ms: u64) -> Control {
    Control::simple(
        Duration::from_millis(warmup_ms),
        Duration::from_millis(runtime_ms),
        Arc::new(RealClock::default()),
    )
}

/// Prepares and runs one cell in `dir`; returns the recorder's totals.
fn run_cell(dir: &Path, opts: &[(&str, &str)], ctl: &Control) -> crate::Totals {
    let rec = Recorder::new();
    let mut w = Fio.prepare(&ctx(dir, opts)).unwrap();
    w.run(ctl, &rec).unwrap();
    w.cleanup().unwrap();
    rec.totals()
}

fn assert_extras(t: &crate::Totals) {
    for name in [
        "fio_bw_bytes_per_s",
        "fio_iops",
        "fio_runtime_ms",
        "fio_usr_cpu_pct",
        "fio_sys_cpu_pct",
        "fio_clat_mean_ns",
    ] {
        assert!(t.extra.contains_key(name), "extra {name} missing: {:?}", t.extra);
    }
    assert!(t.extra["fio_bw_bytes_per_s"] > 0.0);
    assert!(t.extra.contains_key("fio_clat_p50_ns") && t.extra.contains_key("fio_clat_p99_ns"));
}

#[test]
fn option_table_is_sound() {
    for o in OPTIONS {
        assert!(!o.help.is_empty(), "{}", o.name);
        if !o.default.is_empty() {
            assert!(o.default_value().is_some(), "{} default does not parse", o.name);
        }
    }
    let phase = OPTIONS.iter().find(|o| o.name == "phase").unwrap();
    assert_eq!(phase.kind, OptKind::Choice(DiskPhase::NAMES));
    assert_eq!(Fio.info().unit, WorkUnit::Bytes);
    assert_eq!(Fio.info().caps.external_tool.map(|t| t.program), Some("fio"));
    // An empty target has no default value: the work dir is used.
    let c = ctx(Path::new("/tmp"), &[]);
    assert!(!c.spec.params.contains_key("target"));
}

#[test]
fn missing_fio_is_a_clear_tool_error() {
    let empty = tempfile::tempdir().unwrap();
    let dirs = std::env::split_paths(empty.path().as_os_str());
    assert_eq!(crate::support::path::find_in(dirs, "fio", Path::is_file), None);
    let msg = TOOL.missing().to_string();
    assert!(msg.contains("'fio' is not installed") && msg.contains("apt-get install fio"), "{msg}");
    assert!(matches!(TOOL.missing(), EngineError::ToolMissing { .. }));
}

#[test]
fn bad_target_and_sizes_are_usage_errors() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let e = Fio.prepare(&ctx(dir.path(), &[("target", "/nonexistent/racehorse")])).err().unwrap();
    assert!(matches!(e, EngineError::Usage(ref m) if m.contains("not an existing directory")), "{e}");
    let e = Fio.prepare(&ctx(dir.path(), &[("bs", "1m"), ("size", "64k")])).err().unwrap();
    assert!(matches!(e, EngineError::Usage(ref m) if m.contains("at least bs")), "{e}");
}

#[test]
fn read_pass_of_16_mib() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctl = control(0, 1000);
    let t = run_cell(dir.path(), &[("phase", "read"), ("size", "16m")], &ctl);
    assert_eq!(t.units, (16u64 << 20) as f64);
    assert_eq!((t.bytes_read, t.bytes_written, t.ops), (16 << 20, 0, 256));
    assert!(ctl.window().is_some_and(|w| w.0 > 0));
    assert_eq!(t.workload_cpu.method, racehorse_core::CpuMethod::Children);
    let cpu = t.workload_cpu.user_s + t.workload_cpu.kernel_s;
    assert!(cpu > 0.0, "{:?}", t.workload_cpu);
    // The window follows the job's I/O, not fio's ~0.25 s start-up.
    let (w, fio_ms) = (ctl.window().unwrap().as_secs_f64(), t.extra["fio_runtime_ms"]);
    assert!(w * 1e3 < fio_ms + 150.0, "window {w} s, fio ran {fio_ms} ms");
    assert_extras(&t);
    assert!(dir.path().join("fio-layout.json").is_file(), "read lays its file out first");
    assert!(!dir.path().join("rhfio.0").exists(), "cleanup removes the data files");
}

#[test]
fn timed_randread_io_uring_depth_8() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctl = control(300, 1000);
    let opts = [
        ("phase", "randread"),
        ("bs", "4k"),
        ("size", "16m"),
        ("ioengine", "io_uring"),
        ("iodepth", "8"),
        ("timed", "true"),
    ];
    let t = run_cell(dir.path(), &opts, &ctl);
    assert!(t.units > 0.0 && t.ops > 0);
    assert_eq!(t.units, t.bytes_read as f64);
    // fio counts I/Os that were in flight when the ramp ended but not their bytes.
    assert!((t.ops * 4096).abs_diff(t.bytes_read) <= 8 * 4096, "{} ios, {} bytes", t.ops, t.bytes_read);
    let w = ctl.window().unwrap().as_secs_f64();
    assert!((0.9..5.0).contains(&w), "window {w} s");
    assert_extras(&t);
    let fio_ms = t.extra["fio_runtime_ms"];
    assert!((900.0..1200.0).contains(&fio_ms), "fio ran {fio_ms} ms");
}

#[test]
fn write_creates_new_files_per_process() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A stale, larger file must not be rewritten in place.
    std::fs::write(dir.path().join("rhfio.0"), vec![1u8; 6 << 20]).unwrap();
    let ctl = control(0, 1000);
    let rec = Recorder::new();
    let mut w = Fio.prepare(&ctx(dir.path(), &[("phase", "write"), ("procs", "2"), ("size", "4m")])).unwrap();
    w.run(&ctl, &rec).unwrap();
    for f in ["rhfio.0", "rhfio.1"] {
        assert_eq!(std::fs::metadata(dir.path().join(f)).unwrap().len(), 4 << 20, "{f}");
    }
    assert!(!dir.path().join("fio-layout.json").exists(), "write has no layout pass");
    w.cleanup().unwrap();
    let t = rec.totals();
    assert_eq!((t.bytes_read, t.bytes_written), (0, 8 << 20));
    assert_eq!(t.units, (8u64 << 20) as f64);
}

#[test]
fn rewrite_and_reread_run_their_untimed_passes() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t =
        run_cell(dir.path(), &[("phase", "rewrite"), ("size", "4m"), ("fsync", "true")], &control(0, 1000));
    assert_eq!((t.bytes_read, t.bytes_written), (0, 4 << 20));
    assert!(dir.path().join("fio-layout.json").is_file());
    let t = run_cell(dir.path(), &[("phase", "reread"), ("size", "4m")], &control(0, 1000));
    assert_eq!((t.bytes_read, t.bytes_written), (4 << 20, 0));
    assert!(dir.path().join("fio-warm.json").is_file());
}

#[test]
fn untimed_randrw_does_size_over_bs_ios() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = [("phase", "randrw"), ("bs", "4k"), ("size", "4m"), ("rwmixread", "70")];
    let t = run_cell(dir.path(), &opts, &control(0, 1000));
    assert_eq!(t.ops, 1024);
    assert!(t.bytes_read > t.bytes_written && t.bytes_written > 0);
    assert!(t.extra.contains_key("fio_clat_p99_ns_read") && t.extra.contains_key("fio_clat_p99_ns_write"));
}

/// Processes whose command line mentions `needle`.
fn procs_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) {
                found.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    found
}

#[test]
fn abort_kills_every_fio_process_quickly() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let abort = Arc::new(AtomicBool::new(false));
    let ctl = Control::new(
        Duration::ZERO,
        Duration::from_secs(30),
        Arc::new(RealClock::default()),
        Box::new(NoHooksForTest),
        abort.clone(),
    );
    let opts = [("phase", "randread"), ("procs", "2"), ("size", "8m"), ("bs", "4k"), ("timed", "true")];
    let mut w = Fio.prepare(&ctx(dir.path(), &opts)).unwrap();
    let needle = dir.path().to_string_lossy().into_owned();
    let handle = std::thread::spawn(move || {
        let rec = Recorder::new();
        let res = w.run(&ctl, &rec);
        (res, Instant::now())
    });
    // Wait until the measured fio's job processes are up, then abort.
    let t0 = Instant::now();
    while procs_mentioning(&needle).len() < 3 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(procs_mentioning(&needle).len() >= 3, "fio's job processes never appeared");
    std::thread::sleep(Duration::from_millis(200));
    let aborted_at = Instant::now();
    abort.store(true, Ordering::Relaxed);
    let (res, returned_at) = handle.join().unwrap();
    assert!(matches!(res, Err(EngineError::Interrupted)), "{res:?}");
    let took = returned_at.duration_since(aborted_at);
    assert!(took < Duration::from_millis(500), "took {took:?}");
    // Killed processes leave /proc once the kernel has torn them down and fio reaped them:
    // allow a loaded machine 2 s for that (the abort itself returned within 500 ms above).
    let gone = Instant::now();
    while !procs_mentioning(&needle).is_empty() && gone.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(procs_mentioning(&needle), Vec::<String>::new(), "fio processes survived the abort");
}

struct NoHooksForTest;
impl crate::WindowHooks for NoHooksForTest {}

#[test]
fn failing_fio_reports_its_stderr() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut spec = job_spec(&ctx(dir.path(), &[("size", "1m")])).unwrap();
    spec.dir = dir.path().join("missing-subdir").to_string_lossy().into_owned();
    let mut cell = FioCell { spec, work_dir: dir.path().to_path_buf(), env: Default::default() };
    let ctl = control(0, 1000);
    let e = cell.run(&ctl, &Recorder::new()).err().unwrap();
    let msg = e.to_string();
    assert!(matches!(e, EngineError::Failed(_)), "{msg}");
    assert!(msg.contains("layout pass failed") && msg.contains("fio"), "{msg}");
    assert_eq!(ctl.window(), None);
}

/// Prints racehorse's and fio's own figures side by side; true when the windows agree.
fn compare(label: &str, t: &crate::Totals, ctl: &Control) -> bool {
    let w = ctl.window().unwrap().as_secs_f64();
    let fio_ms = t.extra["fio_runtime_ms"];
    println!(
        "{label:9} window {:8.1} ms fio {fio_ms:6} ms  racehorse {:6.1} MB/s fio {:6.1} MB/s  cpu {:.3}+{:.3} s \
         (fio's jobs {:.3}+{:.3} s)",
        w * 1e3,
        t.units / w / 1e6,
        t.extra["fio_bw_bytes_per_s"] / 1e6,
        t.workload_cpu.user_s,
        t.workload_cpu.kernel_s,
        t.extra["fio_usr_cpu_pct"] * fio_ms / 1e5,
        t.extra["fio_sys_cpu_pct"] * fio_ms / 1e5,
    );
    (w * 1e3 - fio_ms).abs() < (0.05 * fio_ms).max(10.0)
}

/// Every phase over 16 MiB with fsync: racehorse's window matches fio's own runtime.
/// A phase gets three tries: these runs last 5-40 ms, and a test thread that other tests keep
/// off the CPU for 10 ms opens the window late once in a while. A window that is wrong by
/// design (a missed marker, fio's start-up counted) fails all three.
#[test]
fn untimed_phases_agree_with_fio() {
    if fio_path().is_none() {
        racehorse_testkit::skip!("fio is not installed (apt-get install fio)");
        return;
    }
    for phase in DiskPhase::NAMES {
        let agreed = (0..3).any(|_| {
            let dir = tempfile::tempdir_in("/var/tmp").unwrap();
            let ctl = control(0, 1000);
            let t = run_cell(dir.path(), &[("phase", phase), ("size", "16m"), ("fsync", "true")], &ctl);
            compare(phase, &t, &ctl)
        });
        assert!(agreed, "{phase}: racehorse's window and fio's runtime differed in three tries (see above)");
    }
}
