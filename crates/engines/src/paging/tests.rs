//! Tests of the paging engine without a memory limit (the limit is the runner's; the CLI
//! tests run the engine under one as root).

use super::*;
use crate::testutil::cell_ctx;
use crate::{RealClock, Totals};
use racehorse_core::Value;
use std::sync::Arc;
use std::time::Duration;

fn ctx(dir: &Path, opts: &[(&str, Value)]) -> CellContext {
    cell_ctx(&Paging, dir, 1, opts)
}

fn run(c: &CellContext) -> Totals {
    let mut cell = Paging.prepare(c).expect("prepare");
    let ctl = Control::simple(
        Duration::from_millis(50),
        Duration::from_millis(300),
        Arc::new(RealClock::default()),
    );
    let rec = Recorder::new();
    cell.run(&ctl, &rec).expect("run");
    rec.totals()
}

#[test]
fn touches_are_counted_and_moves_reported_per_touch() {
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let opts = [
        ("region", Value::Int(8 << 20)),
        ("limit", Value::Int(4 << 20)),
        ("backing", Value::Str("file".into())),
        ("writes", Value::Int(50)),
        ("threads", Value::Int(2)),
    ];
    let c = ctx(dir.path(), &opts);
    assert_eq!(
        Paging.memory_limit(&c).expect("limit"),
        Some(MemoryLimit { bytes: 4 << 20, allow_swap: false, zram_bytes: None }),
        "a file-backed region pages to its file, so swap stays limited"
    );
    let t = run(&c);
    assert!(t.units > 1000.0, "a resident 8 MiB region is touched often in 300 ms: {}", t.units);
    assert_eq!(t.latencies["touch"].count, t.units as u64, "one latency per touch");
    assert_eq!(t.extra["file_backed"], 1.0);
    for k in ["moves_per_touch", "major_faults_per_touch", "pages_in_per_touch", "n_page_moved"] {
        let v = t.extra[k];
        assert!(v.is_finite() && v >= 0.0, "{k} = {v}");
    }
    assert!(dir.path().join("paging.dat").exists(), "the file lives in the work directory");
}

#[test]
fn impossible_settings_are_refused_with_the_reason() {
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let e = setup(&ctx(dir.path(), &[("limit", Value::Int(480 << 20))])).expect_err("limit = region");
    assert!(e.to_string().contains("must be below region"), "{e}");
    let anon = setup(&ctx(dir.path(), &[("backing", Value::Str("anon".into()))]));
    let zram = zram_available(&SysRoot::host());
    let auto = setup(&ctx(dir.path(), &[])).expect("auto").backing;
    if swap_on() {
        assert_eq!(anon.expect("swap is on").backing, Backing::Anon);
        assert_eq!(auto, Backing::Anon);
    } else {
        let e = anon.expect_err("anon without swap");
        assert!(e.to_string().contains("backing=file"), "{e}");
        assert_eq!(
            auto,
            if zram { Backing::Zram } else { Backing::File },
            "auto: zram where it can, else file"
        );
    }
    if zram {
        let c = ctx(dir.path(), &[("backing", Value::Str("zram".into()))]);
        let want = MemoryLimit { bytes: 180 << 20, allow_swap: true, zram_bytes: Some(480 << 20) };
        assert_eq!(Paging.memory_limit(&c).expect("limit"), Some(want), "a zram swap as large as the region");
    }
}

#[test]
fn memory_filesystems_are_told_apart_from_disks() {
    assert!(memory_filesystem(Path::new("/dev/shm")), "/dev/shm is tmpfs");
    assert!(memory_filesystem(Path::new("/dev/shm/not/yet/made")), "judged by the nearest existing parent");
    assert!(!memory_filesystem(Path::new("/var/tmp")), "/var/tmp is on the disk here");
}
