//! The `layout` option pinned by what the filesystem says (FIEMAP) when the window opens:
//! random writes start on unwritten extents by default (fio's new file at its defaults), on
//! written ones with `written` or `iozone` (as on a file fio has written before), on none
//! with `sparse`; and the measured state is recorded with the cell.

use super::tests::{ctx, run_cell, s, tmp};
use super::*;
use crate::support::fiemap::allocation;
use racehorse_core::Value;

const SIZE_BYTES: f64 = (2 << 20) as f64;

/// The extras `layout_mapped_bytes` and `layout_unwritten_bytes` of one randwrite cell.
fn start_state(layout: &str) -> Option<(f64, f64)> {
    let dir = tmp();
    let probe = std::fs::File::create(dir.path().join("probe")).unwrap();
    if let Err(e) = allocation(&probe) {
        racehorse_testkit::skip!("the filesystem of {} has no FIEMAP ({e})", dir.path().display());
        return None;
    }
    let c =
        ctx(dir.path(), &[("phase", s("randwrite")), ("layout", s(layout)), ("timed", Value::Bool(false))]);
    let (res, t) = run_cell(&c, None);
    res.unwrap();
    Some((t.extra["layout_mapped_bytes"], t.extra["layout_unwritten_bytes"]))
}

#[test]
fn random_writes_start_on_a_new_fallocated_file_by_default_as_fio() {
    let Some(auto) = start_state("auto") else { return };
    assert_eq!(auto, (SIZE_BYTES, SIZE_BYTES), "auto: fio's new file, every byte unwritten");
    assert_eq!(start_state("written"), Some((SIZE_BYTES, 0.0)), "written: nothing unwritten");
    assert_eq!(start_state("iozone"), Some((SIZE_BYTES, 0.0)), "iozone: the file as written before");
}

#[test]
fn fallocate_and_sparse_layouts_start_unwritten_or_empty() {
    let Some(f) = start_state("fallocate") else { return };
    assert_eq!(f, (SIZE_BYTES, SIZE_BYTES), "fallocate: every byte an unwritten extent");
    assert_eq!(start_state("sparse"), Some((0.0, 0.0)), "sparse: no extents at all");
}

#[test]
fn reading_an_unwritten_layout_is_refused_before_anything_is_written() {
    let dir = tmp();
    let c = ctx(dir.path(), &[("phase", s("randread")), ("layout", s("sparse"))]);
    let e = DiskIo.validate(&c).unwrap_err().to_string();
    assert!(e.contains("nothing to read") && e.contains("written"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_repeated_write_pass_gets_its_fallocated_file_again() {
    let dir = tmp();
    let c = ctx(
        dir.path(),
        &[("phase", s("write")), ("layout", s("fallocate")), ("min_window_ms", Value::Int(200))],
    );
    let (res, t) = run_cell(&c, None);
    res.unwrap();
    assert!(t.extra["passes"] >= 1.0);
    assert_eq!(t.bytes_written % (2 << 20), 0, "whole passes: {}", t.bytes_written);
}

/// `layout_cached_bytes` of a cell of `phase` on a written file, with buffered I/O.
fn cached_at_start(phase: &str) -> Option<f64> {
    cached_at_start_with(phase, &[])
}

fn cached_at_start_with(phase: &str, more: &[(&str, Value)]) -> Option<f64> {
    let dir = tmp();
    let probe = std::fs::File::create(dir.path().join("probe")).unwrap();
    if allocation(&probe).is_err() {
        racehorse_testkit::skip!("the filesystem of {} has no FIEMAP", dir.path().display());
        return None;
    }
    let mut opts = vec![("phase", s(phase)), ("layout", s("written")), ("timed", Value::Bool(false))];
    opts.extend_from_slice(more);
    let c = ctx(dir.path(), &opts);
    let (res, t) = run_cell(&c, None);
    res.unwrap();
    Some(t.extra["layout_cached_bytes"])
}

#[test]
fn written_files_start_uncached_as_after_fios_invalidate_except_for_rewrite_and_reread() {
    // Random writes into the cached layout went through ext4's block-mapping path on every
    // 4 KiB write (2-10x fio's CPU per write on 6.18): fio starts from an evicted file.
    for phase in ["randwrite", "read", "randread", "randrw"] {
        let Some(cached) = cached_at_start(phase) else { return };
        assert!(cached < SIZE_BYTES / 4.0, "{phase}: {cached} bytes cached when the window opened");
    }
    for phase in ["rewrite", "reread"] {
        let Some(cached) = cached_at_start(phase) else { return };
        assert_eq!(cached, SIZE_BYTES, "{phase} keeps the file cached");
    }
}

#[test]
fn invalidate_false_keeps_what_the_layout_left_in_the_cache() {
    let Some(cached) = cached_at_start_with("randread", &[("invalidate", Value::Bool(false))]) else {
        return;
    };
    assert_eq!(cached, SIZE_BYTES, "fio's invalidate=0: the written file stays cached");
}

/// The extra `key` of a cell run with `base` then `more` options (None when not recorded).
fn extra_of(key: &str, base: &[(&str, Value)], more: &[(&str, Value)]) -> Option<f64> {
    let dir = tmp();
    let opts = [base, more].concat();
    let (res, t) = run_cell(&ctx(dir.path(), &opts), None);
    res.unwrap();
    t.extra.get(key).copied()
}

/// `wrap_evictions` of a timed buffered sequential read (None when not recorded).
fn wrap_evictions(more: &[(&str, Value)]) -> Option<f64> {
    let base = [("phase", s("read")), ("timed", Value::Bool(true)), ("bs", Value::Int(256 << 10))];
    extra_of("wrap_evictions", &base, more)
}

#[test]
fn a_timed_sequential_run_drops_its_file_each_time_it_wraps_as_fio_does() {
    // 2 MiB files read for 350 ms wrap many times; each new pass must read from the device
    // again, as fio's time-based job does with invalidate=1, not from the previous pass's cache.
    let n = wrap_evictions(&[]).expect("recorded for a buffered timed sequential run");
    assert!(n >= 1.0, "{n} evictions");
    assert_eq!(
        wrap_evictions(&[("invalidate", Value::Bool(false))]),
        None,
        "invalidate=false keeps the cache"
    );
    assert_eq!(wrap_evictions(&[("direct", Value::Bool(true))]), None, "direct I/O has no cache to drop");
}

/// `io_buffer_huge_share` of a short direct random read at 64 KiB × 4.
fn huge_share(more: &[(&str, Value)]) -> Option<f64> {
    let base = [
        ("phase", s("randread")),
        ("direct", Value::Bool(true)),
        ("ioengine", s("io_uring")),
        ("iodepth", Value::Int(4)),
    ];
    extra_of("io_buffer_huge_share", &base, more)
}

#[test]
fn io_buffers_get_a_huge_page_of_their_own_unless_hugebufs_is_false() {
    let sys = |f: &str| {
        std::fs::read_to_string(format!("/sys/kernel/mm/transparent_hugepage/{f}")).unwrap_or_default()
    };
    let (thp, defrag) = (sys("enabled"), sys("defrag"));
    let share = huge_share(&[]).expect("recorded with hugebufs=true");
    let on = thp.contains("[always]") || thp.contains("[madvise]");
    // These defrag settings compact memory at the fault of an MADV_HUGEPAGE region, so the
    // huge page is granted unless memory is exhausted; the others may fall back to 4 KiB.
    let compacts = ["[always]", "[madvise]", "[defer+madvise]"].iter().any(|d| defrag.contains(d));
    if on && compacts {
        assert_eq!(share, 1.0, "a 256 KiB buffer in one 2 MiB huge page");
    } else {
        eprintln!(
            "huge pages may not be granted here ({thp:?}, defrag {defrag:?}): only the record is checked"
        );
        assert!(share == 0.0 || share == 1.0, "{share}");
    }
    for (engine, depth) in [("io_uring", 4), ("psync", 1)] {
        let psync = [("ioengine", s(engine)), ("iodepth", Value::Int(depth))];
        assert!(huge_share(&psync).is_some(), "{engine}: recorded");
        let off = [psync[0].clone(), psync[1].clone(), ("hugebufs", Value::Bool(false))];
        assert_eq!(huge_share(&off), None, "{engine}: heap buffers, as fio's malloc");
    }
}
