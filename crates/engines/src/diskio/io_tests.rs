//! Tests of the diskio I/O layer: psync and io_uring engines, O_DIRECT during I/O, helpers.

use super::*;
use crate::support::direct_io::{open_file, AlignedBuf, OpenMode};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/var/tmp").expect("tempdir in /var/tmp")
}

fn create_mode() -> OpenMode {
    OpenMode { write: true, create_truncate: true, direct: false }
}

/// Runs `engine` over `pattern`, returning the stats and every Done reported.
fn run_all(eng: &mut dyn IoEngine, file: &File, pattern: &mut Pattern) -> (RunStats, Vec<Done>) {
    let mut seen = Vec::new();
    let stats = eng
        .run(file, pattern, &mut |d| {
            seen.push(d);
            Flow::Continue
        })
        .expect("run");
    (stats, seen)
}

/// Writes a `size`-byte file sequentially with psync and returns its path.
fn make_file(dir: &Path, size: u64, bs: u64) -> PathBuf {
    let path = dir.join("data");
    let file = open_file(&path, create_mode()).expect("create");
    let mut psync = Psync::new(bs as usize, Backing::Auto).expect("psync");
    run_all(&mut psync, &file, &mut Pattern::sequential(IoDir::Write, size, bs, false));
    path
}

fn assert_dones(dones: &[Done], dir: IoDir, bs: u64) {
    assert!(dones.iter().all(|d| d.dir == dir && d.bytes == bs && d.latency_ns > 0), "{:?}", dones.first());
}

/// Every 4 KiB block of the file is non-zero and no two blocks are equal.
fn assert_blocks_distinct(path: &Path) {
    let data = std::fs::read(path).expect("read back");
    let mut seen = HashSet::new();
    for block in data.chunks(4096) {
        assert!(block.iter().any(|&b| b != 0), "an all-zero block: a write did not land");
        assert!(seen.insert(block.to_vec()), "two identical 4 KiB blocks");
    }
}

#[test]
fn psync_sequential_write_then_read_4mib() {
    let dir = scratch();
    let path = dir.path().join("seq");
    let (size, bs) = (4 * MIB, 64 * KIB);
    let file = open_file(&path, create_mode()).expect("create");
    let mut eng = Psync::new(bs as usize, Backing::Auto).expect("psync");
    let (stats, dones) = run_all(&mut eng, &file, &mut Pattern::sequential(IoDir::Write, size, bs, false));
    assert_eq!(stats, RunStats { ops: 64, bytes: size, max_in_flight: 1, evictions: 0 });
    assert_eq!(dones.len(), 64);
    assert_dones(&dones, IoDir::Write, bs);
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), size);
    assert_blocks_distinct(&path);

    let file = open_file(&path, OpenMode::default()).expect("open");
    let (stats, dones) = run_all(&mut eng, &file, &mut Pattern::sequential(IoDir::Read, size, bs, false));
    assert_eq!(stats, RunStats { ops: 64, bytes: size, max_in_flight: 1, evictions: 0 });
    assert_dones(&dones, IoDir::Read, bs);
    assert_eq!(eng.name(), "psync");
}

#[test]
fn psync_random_read_of_nrecs_ops() {
    let dir = scratch();
    let (size, bs) = (2 * MIB, 4 * KIB);
    let path = make_file(dir.path(), size, bs);
    let file = open_file(&path, OpenMode::default()).expect("open");
    let nrecs = size / bs;
    let mut eng = Psync::new(bs as usize, Backing::Auto).expect("psync");
    let (stats, dones) =
        run_all(&mut eng, &file, &mut Pattern::random(IoDir::Read, size, bs, Some(nrecs), 3));
    assert_eq!(stats, RunStats { ops: nrecs, bytes: size, max_in_flight: 1, evictions: 0 });
    assert_dones(&dones, IoDir::Read, bs);
}

#[test]
fn uring_reads_keep_depth_in_flight_and_report_every_op_once() {
    let dir = scratch();
    let (size, bs) = (8 * MIB, 4 * KIB);
    let path = make_file(dir.path(), size, 64 * KIB);
    let file = open_file(&path, OpenMode::default()).expect("open");
    for (depth, batch, fixed) in [(8u32, 1u32, true), (16, 1, false), (8, 3, false), (16, 16, true)] {
        let mut eng = Uring::with_buffers(bs as usize, depth, fixed, Backing::Auto).expect("uring");
        eng.set_submit_batch(batch);
        let (stats, dones) = run_all(&mut eng, &file, &mut Pattern::sequential(IoDir::Read, size, bs, false));
        assert_eq!(stats, RunStats { ops: size / bs, bytes: size, max_in_flight: depth, evictions: 0 });
        assert_eq!(dones.len() as u64, size / bs);
        assert_eq!(dones.iter().map(|d| d.bytes).sum::<u64>(), size);
        assert_dones(&dones, IoDir::Read, bs);
        // The engine is reusable: a second run on the same ring.
        let (again, _) = run_all(&mut eng, &file, &mut Pattern::random(IoDir::Read, size, bs, Some(500), 1));
        assert_eq!(again.ops, 500);
        assert_eq!(eng.name(), "io_uring");
    }
}

#[test]
fn uring_write_then_psync_read_back() {
    let dir = scratch();
    let path = dir.path().join("uw");
    let (size, bs) = (8 * MIB, 16 * KIB);
    let file = open_file(&path, create_mode()).expect("create");
    let mut eng = engine("io_uring", bs as usize, Queue::plain(8)).expect("uring");
    let (stats, dones) =
        run_all(eng.as_mut(), &file, &mut Pattern::sequential(IoDir::Write, size, bs, false));
    assert_eq!(stats, RunStats { ops: size / bs, bytes: size, max_in_flight: 8, evictions: 0 });
    assert_dones(&dones, IoDir::Write, bs);
    fsync(&file, &path).expect("fsync");
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), size);
    assert_blocks_distinct(&path);

    let file = open_file(&path, OpenMode::default()).expect("open");
    let mut eng =
        engine("psync", bs as usize, Queue { depth: 32, submit_batch: 1, fixed_bufs: true, huge_bufs: true })
            .expect("psync ignores depth");
    let (stats, _) = run_all(eng.as_mut(), &file, &mut Pattern::sequential(IoDir::Read, size, bs, false));
    assert_eq!(stats.bytes, size);
}

#[test]
fn uring_mixed_pattern_reads_and_writes() {
    let dir = scratch();
    let (size, bs) = (4 * MIB, 4 * KIB);
    let path = make_file(dir.path(), size, 64 * KIB);
    let file = open_file(&path, OpenMode { write: true, ..OpenMode::default() }).expect("open rw");
    let mut eng = Uring::with_buffers(bs as usize, 4, true, Backing::Auto).expect("uring");
    let (stats, dones) = run_all(&mut eng, &file, &mut Pattern::mixed(50, size, bs, Some(4000), 11));
    assert_eq!(stats.ops, 4000);
    let reads = dones.iter().filter(|d| d.dir == IoDir::Read).count();
    assert!((1700..2300).contains(&reads), "reads {reads}");
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), size);
}

/// Opens `path` with O_DIRECT, or says why the test can't run (EINVAL: no O_DIRECT there).
fn open_direct(path: &Path, mode: OpenMode) -> Option<File> {
    match open_file(path, OpenMode { direct: true, ..mode }) {
        Ok(f) => Some(f),
        Err(EngineError::Usage(msg)) if msg.contains("O_DIRECT") => {
            racehorse_testkit::skip!("O_DIRECT open failed with EINVAL on {}: {msg}", path.display());
            None
        }
        Err(e) => panic!("unexpected open error: {e}"),
    }
}

#[test]
fn direct_io_works_on_var_tmp() {
    let dir = scratch();
    let path = dir.path().join("direct");
    let (size, bs) = (4 * MIB, 4 * KIB);
    let Some(file) = open_direct(&path, create_mode()) else { return };
    let mut ps = Psync::new(bs as usize, Backing::Auto).expect("psync");
    let (stats, _) = run_all(&mut ps, &file, &mut Pattern::sequential(IoDir::Write, size, bs, false));
    assert_eq!(stats.bytes, size);
    let Some(file) = open_direct(&path, OpenMode::default()) else { return };
    let mut ur = Uring::with_buffers(bs as usize, 16, true, Backing::Auto).expect("uring");
    let (stats, dones) = run_all(&mut ur, &file, &mut Pattern::random(IoDir::Read, size, bs, Some(2000), 5));
    assert_eq!((stats.ops, stats.max_in_flight), (2000, 16));
    assert_dones(&dones, IoDir::Read, bs);
    let (stats, _) = run_all(&mut ps, &file, &mut Pattern::sequential(IoDir::Read, size, bs, false));
    assert_eq!(stats.bytes, size);
    assert_blocks_distinct(&path);
}

#[test]
fn direct_on_dev_shm_is_usage_error_or_supported() {
    // tmpfs gained O_DIRECT in Linux 6.6; older kernels fail the open with EINVAL.
    let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
        racehorse_testkit::skip!("/dev/shm is not usable here");
        return;
    };
    let path = dir.path().join("d");
    match open_file(&path, OpenMode { direct: true, ..create_mode() }) {
        Err(EngineError::Usage(msg)) => {
            assert!(msg.contains("O_DIRECT is not supported by the filesystem of"), "{msg}");
            assert!(msg.contains(&path.display().to_string()), "{msg}");
        }
        Err(other) => panic!("expected Usage, got {other:?}"),
        Ok(file) => {
            eprintln!("note: tmpfs supports O_DIRECT on this kernel; checking that a direct run works");
            let mut ps = Psync::new(4096, Backing::Auto).expect("psync");
            let res =
                ps.run(&file, &mut Pattern::sequential(IoDir::Write, 64 * KIB, 4096, false), &mut |_| {
                    Flow::Continue
                });
            match res {
                Ok(stats) => assert_eq!(stats.ops, 16),
                Err(EngineError::Usage(msg)) => assert!(msg.contains("O_DIRECT is not supported"), "{msg}"),
                Err(other) => panic!("expected success or Usage, got {other:?}"),
            }
        }
    }
}

#[test]
fn direct_einval_during_io_maps_to_usage() {
    let file = File::open("/proc/self/status").expect("open");
    let einval = io::Error::from_raw_os_error(libc::EINVAL);
    let err = op_error(&file, true, IoDir::Read, 8192, 4096, &einval);
    assert!(
        matches!(&err, EngineError::Usage(m) if m.contains("O_DIRECT is not supported by the filesystem of /proc/")),
        "{err:?}"
    );
    let err = op_error(&file, false, IoDir::Write, 8192, 4096, &einval);
    assert!(
        matches!(&err, EngineError::Failed(m) if m.contains("offset 8192") && m.contains("/proc/")),
        "{err:?}"
    );
}

#[test]
fn stop_from_on_done_stops_promptly() {
    let dir = scratch();
    let (size, bs) = (4 * MIB, 4 * KIB);
    let path = make_file(dir.path(), size, 64 * KIB);
    let file = open_file(&path, OpenMode::default()).expect("open");
    let stop_after = 100u64;
    for (name, depth) in [("psync", 1u32), ("io_uring", 8), ("io_uring", 32)] {
        let mut eng = engine(
            name,
            bs as usize,
            Queue { depth, submit_batch: depth, fixed_bufs: depth == 8, huge_bufs: depth == 8 },
        )
        .expect("engine");
        let mut seen = 0u64;
        let mut pattern = Pattern::random(IoDir::Read, size, bs, None, 2);
        let stats = eng
            .run(&file, &mut pattern, &mut |_| {
                seen += 1;
                if seen >= stop_after {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            })
            .expect("run");
        assert!(stats.ops >= stop_after && stats.ops <= stop_after + u64::from(depth), "{name}: {stats:?}");
        assert_eq!(seen, stats.ops, "{name}: drained completions are reported too");
    }
}

#[test]
fn reading_past_end_of_file_is_an_error() {
    let dir = scratch();
    let path = make_file(dir.path(), 64 * KIB, 4 * KIB);
    let file = open_file(&path, OpenMode::default()).expect("open");
    for name in ENGINE_NAMES {
        let mut eng =
            engine(name, 4096, Queue { depth: 4, submit_batch: 1, fixed_bufs: true, huge_bufs: true })
                .expect("engine");
        let err = eng
            .run(&file, &mut Pattern::sequential(IoDir::Read, 128 * KIB, 4096, false), &mut |_| {
                Flow::Continue
            })
            .expect_err("file is too short");
        assert!(
            matches!(&err, EngineError::Failed(m) if m.contains("unexpected end of file at offset 65536")),
            "{name}: {err:?}"
        );
    }
}

#[test]
fn pattern_bs_larger_than_engine_bs_is_usage() {
    let dir = scratch();
    let path = make_file(dir.path(), 64 * KIB, 4 * KIB);
    let file = open_file(&path, OpenMode::default()).expect("open");
    for name in ENGINE_NAMES {
        let mut eng =
            engine(name, 4096, Queue { depth: 2, submit_batch: 1, fixed_bufs: true, huge_bufs: true })
                .expect("engine");
        let res = eng.run(&file, &mut Pattern::sequential(IoDir::Read, 64 * KIB, 8192, false), &mut |_| {
            Flow::Continue
        });
        assert!(matches!(res, Err(EngineError::Usage(_))), "{name}");
    }
}

#[test]
fn helpers_work() {
    let dir = scratch();
    let path = make_file(dir.path(), MIB, 64 * KIB);
    let file = open_file(&path, OpenMode::default()).expect("open");
    evict_from_cache(&file, &path).expect("evict");
    fsync(&file, &path).expect("fsync");
    assert!(free_bytes(Path::new("/var/tmp")).expect("statvfs") > 0);
    assert!(matches!(free_bytes(&dir.path().join("absent")), Err(EngineError::Usage(_))));
}

#[test]
fn engine_names_and_parameters_are_checked() {
    match engine("libaio", 4096, Queue::plain(1)) {
        Err(EngineError::Usage(msg)) => {
            assert!(msg.contains("libaio") && msg.contains("psync") && msg.contains("io_uring"), "{msg}")
        }
        other => panic!("expected Usage, got {:?}", other.map(|e| e.name())),
    }
    assert!(matches!(Uring::with_buffers(4096, 0, true, Backing::Auto), Err(EngineError::Usage(_))));
    assert!(matches!(
        Uring::with_buffers(4096, MAX_URING_DEPTH + 1, true, Backing::Auto),
        Err(EngineError::Usage(_))
    ));
    assert!(matches!(Psync::new(0, Backing::Auto), Err(EngineError::Usage(_))));
}

#[test]
fn stamping_makes_the_same_buffer_distinct_per_offset() {
    let mut buf = AlignedBuf::new(8192).expect("buf");
    stamp_blocks(buf.as_mut_slice(), 0);
    let first = buf.as_slice().to_vec();
    stamp_blocks(buf.as_mut_slice(), 8192);
    assert_ne!(first[..4096], buf.as_slice()[..4096]);
    assert_eq!(first[8..4096], buf.as_slice()[8..4096]);
}
