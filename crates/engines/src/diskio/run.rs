//! Running a diskio cell: one worker thread per process on its own file, released together.
//! Pass mode ends the window when the first worker finishes (IOzone's stonewall) and
//! computes "children see" and "parent sees" (the parent's time holds every child's); a short
//! pass is repeated to fill `min_window` where a repeat measures the same thing; timed mode
//! loops until the runtime window ends.

use super::config::DiskConfig;
use super::fileops::advise;
use super::files::TestFiles;
use super::io::{engine, fsync, Done, Flow, IoEngine, RunStats};
use super::pattern::{IoDir, WrapEvict};
use crate::support::direct_io::{open_file, OpenMode};
use crate::support::disk_layout::{fallocate, FileState};
use crate::support::disk_options::DiskPhase;
use crate::support::fiemap::Allocation;
use crate::{Control, EngineError, Recorder, WorkerMeter, Workload};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// One prepared cell.
pub struct DiskCell {
    pub cfg: DiskConfig,
    pub files: TestFiles,
    /// The files' extents as the window starts (recorded as `layout_*` extras).
    pub start_allocation: Option<Allocation>,
    /// What the page cache held of them as the window starts (`layout_cached_bytes`).
    pub start_cached_bytes: Option<u64>,
}

/// What one worker reports at the end.
#[derive(Debug, Clone, Copy, Default)]
struct WorkerResult {
    /// Bytes done when the worker noticed the stonewall (or finished first), and when.
    bytes_at_stonewall: u64,
    secs_at_stonewall: f64,
    /// The totals of all its passes.
    stats: RunStats,
    /// Passes made (more than one when short passes are repeated to fill `min_window`).
    passes: u32,
    /// Bytes of its buffers in transparent huge pages, and the buffers' size ((0, 0) when
    /// `hugebufs` is off).
    buffer_huge_bytes: (u64, u64),
}

/// State shared by the workers and the driver of one cell.
struct Shared<'a> {
    cfg: &'a DiskConfig,
    /// The target is a block device shared by every worker.
    device: bool,
    ctl: &'a Control,
    rec: &'a Recorder,
    ready: Barrier,
    go: Barrier,
    /// Set by the first worker to finish its pass.
    stonewall: AtomicBool,
    /// Set by the pass-mode driver once the window's end is read (and whenever it returns): a
    /// worker that finished keeps its thread and ring until then, so that io_uring's kernel
    /// workers, which belong to the thread, are still there to be counted at the window's end.
    window_closed: AtomicBool,
    /// Set by a worker that failed; the driver stops the cell.
    failed: AtomicBool,
    first_error: Mutex<Option<EngineError>>,
    finished: AtomicU32,
    results: Mutex<Vec<WorkerResult>>,
}

impl<'a> Shared<'a> {
    fn new(cfg: &'a DiskConfig, device: bool, ctl: &'a Control, rec: &'a Recorder) -> Shared<'a> {
        Shared {
            cfg,
            device,
            ctl,
            rec,
            ready: Barrier::new(cfg.procs + 1),
            go: Barrier::new(cfg.procs + 1),
            stonewall: AtomicBool::new(false),
            window_closed: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            first_error: Mutex::new(None),
            finished: AtomicU32::new(0),
            results: Mutex::new(Vec::new()),
        }
    }

    fn fail(&self, e: EngineError) {
        let mut slot = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
        self.failed.store(true, Ordering::Release);
    }
}

fn op_name(dir: IoDir) -> &'static str {
    match dir {
        IoDir::Read => "read",
        IoDir::Write => "write",
    }
}

/// How a worker opens its file; a block device is never created or truncated.
fn open_mode(cfg: &DiskConfig, device: bool) -> OpenMode {
    OpenMode {
        write: cfg.phase.writes(),
        create_truncate: cfg.layout == FileState::Created && !device,
        direct: cfg.direct,
    }
}

/// One worker: open, wait for the go, run its passes, report.
fn worker(sh: &Shared<'_>, i: usize, path: &Path) {
    let prepared = open_file(path, open_mode(sh.cfg, sh.device))
        .and_then(|f| match sh.cfg.fadvise_hint {
            true => advise(&f, path, sh.cfg.phase.is_random()).map(|()| f),
            false => Ok(f),
        })
        .and_then(|f| engine(&sh.cfg.ioengine, sh.cfg.bs_bytes as usize, sh.cfg.queue()).map(|e| (f, e)))
        // Read before the release: /proc/self/smaps walks every mapping of the process.
        .map(|(f, e)| {
            let huge = if sh.cfg.hugebufs { e.buffers().huge_page_bytes() } else { (0, 0) };
            (f, e, huge)
        });
    sh.ready.wait();
    sh.go.wait();
    let (file, mut io, buffer_huge_bytes) = match prepared {
        Ok(x) => x,
        Err(e) => return sh.fail(e),
    };
    let start = Instant::now();
    let mut meter = WorkerMeter::new();
    meter.tick(sh.ctl);
    let mut res = WorkerResult { buffer_huge_bytes, ..WorkerResult::default() };
    let mut bytes = 0u64;
    let mut noticed = false;
    let mut on_done = |d: Done| {
        bytes += d.bytes;
        let (r, w) = if d.dir == IoDir::Read { (d.bytes, 0) } else { (0, d.bytes) };
        meter.count(sh.ctl, op_name(d.dir), d.latency_ns, d.bytes as f64, r, w);
        if !noticed && sh.stonewall.load(Ordering::Acquire) {
            noticed = true;
            res.bytes_at_stonewall = bytes;
            res.secs_at_stonewall = start.elapsed().as_secs_f64();
        }
        let go_on = meter.tick(sh.ctl) || (!sh.cfg.timed && !sh.ctl.aborted());
        if go_on && !sh.failed.load(Ordering::Relaxed) {
            Flow::Continue
        } else {
            Flow::Stop
        }
    };
    let outcome = passes(sh, i, path, (&file, io.as_mut()), &mut on_done, start);
    match outcome {
        Ok((stats, passes)) => {
            res.stats = stats;
            res.passes = passes;
            if !sh.stonewall.swap(true, Ordering::AcqRel) || !noticed {
                res.bytes_at_stonewall = stats.bytes;
                res.secs_at_stonewall = start.elapsed().as_secs_f64();
            }
            meter.tick(sh.ctl);
            meter.finish(sh.rec);
            sh.results.lock().unwrap_or_else(|p| p.into_inner()).push(res);
        }
        Err(e) => sh.fail(e),
    }
    sh.finished.fetch_add(1, Ordering::AcqRel);
    if !sh.cfg.timed {
        hold_until_window_closed(sh);
    }
    drop(io);
}

/// Pass mode: waits until the driver has read the window's end or returned (or the cell
/// failed or was interrupted) before the caller's thread closes its ring and exits, taking
/// its io_uring kernel workers with it.
fn hold_until_window_closed(sh: &Shared<'_>) {
    while !sh.window_closed.load(Ordering::Acquire) && !sh.failed.load(Ordering::Acquire) && !sh.ctl.aborted()
    {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Runs worker `i`'s pass, fsynced if asked, and repeats it while [`DiskConfig::repeats`]
/// allows and the worker's time since the release is under `min_window` (and nobody has
/// reached the stonewall, failed or interrupted). A repeated `write` truncates the file
/// first, so that every pass writes a new file. The totals of all passes, and their number.
fn passes(
    sh: &Shared<'_>,
    i: usize,
    path: &Path,
    (file, io): (&File, &mut dyn IoEngine),
    on_done: &mut dyn FnMut(Done) -> Flow,
    start: Instant,
) -> Result<(RunStats, u32), EngineError> {
    let mut total = RunStats::default();
    let mut pass = 0u32;
    loop {
        let mut pattern = sh.cfg.pattern(i, u64::from(pass));
        if sh.cfg.evicts_on_wrap() {
            let how = if sh.device { WrapEvict::FlushBuffers } else { WrapEvict::Advise };
            pattern.evict_on_wrap(file.as_raw_fd(), how);
        }
        let mut stats = io.run(file, &mut pattern, on_done)?;
        stats.evictions = pattern.evictions();
        if sh.cfg.fsync && sh.cfg.phase.writes() {
            fsync(file, path)?;
        }
        total.ops += stats.ops;
        total.bytes += stats.bytes;
        total.max_in_flight = total.max_in_flight.max(stats.max_in_flight);
        total.evictions += stats.evictions;
        pass += 1;
        let again = sh.cfg.repeats()
            && start.elapsed() < sh.cfg.min_window
            && stats.ops == sh.cfg.records()
            && !sh.stonewall.load(Ordering::Acquire)
            && !sh.failed.load(Ordering::Acquire)
            && !sh.ctl.aborted();
        if !again {
            return Ok((total, pass));
        }
        if sh.cfg.phase == DiskPhase::Write && !sh.device {
            // A new pass writes a new file again: empty, or fallocated / sparse as laid out.
            file.set_len(0).map_err(|e| EngineError::io("cannot truncate the test file", path, e))?;
            let set = match sh.cfg.layout {
                FileState::Fallocated => fallocate(file, sh.cfg.size_bytes),
                FileState::Sparse => file.set_len(sh.cfg.size_bytes),
                FileState::Created | FileState::Written => Ok(()),
            };
            set.map_err(|e| EngineError::io("cannot lay out the test file again", path, e))?;
        }
    }
}

/// Pass mode's driver: open the window at the go, close it at the stonewall, then wait for
/// every worker (the parent's wall time).
fn drive_pass(sh: &Shared<'_>) -> Result<f64, EngineError> {
    drive_pass_waking(sh, || {})
}

/// [`drive_pass`], with `woke` run as the driver returns from the release (a test delays it
/// there, as a late wake-up of the driver's thread would).
fn drive_pass_waking(sh: &Shared<'_>, woke: impl FnOnce()) -> Result<f64, EngineError> {
    sh.ready.wait();
    sh.ctl.begin_measure();
    // The parent's time starts before the release, each worker's after it: however late the
    // driver wakes from the barrier, its span holds every worker's whole pass.
    let go = Instant::now();
    sh.go.wait();
    woke();
    // Whatever way the driver leaves, finished workers may then let go of their rings.
    let _release = ReleaseHeld(&sh.window_closed);
    loop {
        if sh.ctl.aborted() {
            sh.ctl.stop();
            return Err(EngineError::Interrupted);
        }
        if sh.failed.load(Ordering::Acquire) {
            sh.ctl.stop();
            return Err(EngineError::Failed("a worker failed".into()));
        }
        // `finished` first: a worker raises the stonewall before it counts itself finished,
        // so when all have finished the stonewall is up and the window is closed below.
        let all_finished = sh.finished.load(Ordering::Acquire) as usize == sh.cfg.procs;
        let closed = sh.window_closed.load(Ordering::Acquire);
        if !closed && (all_finished || sh.stonewall.load(Ordering::Acquire)) {
            sh.ctl.end_measure();
            sh.window_closed.store(true, Ordering::Release);
        }
        if all_finished {
            return Ok(go.elapsed().as_secs_f64());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Sets its flag when dropped: the pass-mode driver's promise that no finished worker waits
/// on it after it has returned (or unwound).
struct ReleaseHeld<'a>(&'a AtomicBool);

impl Drop for ReleaseHeld<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Timed mode's driver: warm-up and window by the clock (fio time_based).
fn drive_timed(sh: &Shared<'_>) -> Result<f64, EngineError> {
    sh.ready.wait();
    let go = Instant::now();
    sh.go.wait();
    let failed = &sh.failed;
    sh.ctl.drive_window_until_failed(failed)?;
    Ok(go.elapsed().as_secs_f64())
}

impl Workload for DiskCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let cfg = &self.cfg;
        let sh = Shared::new(cfg, self.files.dir.is_none(), ctl, rec);
        let paths = &self.files.paths;
        let driven = std::thread::scope(|s| {
            for (i, p) in paths.iter().enumerate() {
                let sh = &sh;
                // Named, so that profiles and /proc show which threads are diskio's.
                std::thread::Builder::new()
                    .name(format!("diskio-w{i}"))
                    .spawn_scoped(s, move || worker(sh, i, p))
                    .expect("cannot start a diskio worker thread");
            }
            if cfg.timed {
                drive_timed(&sh)
            } else {
                drive_pass(&sh)
            }
        });
        if let Some(e) = sh.first_error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        let parent_secs = driven?;
        let results = sh.results.into_inner().unwrap_or_else(|p| p.into_inner());
        record_extras(cfg, rec, &results, parent_secs);
        if let Some(a) = self.start_allocation {
            rec.set_extra("layout_mapped_bytes", a.mapped_bytes as f64);
            rec.set_extra("layout_unwritten_bytes", a.unwritten_bytes as f64);
        }
        if let Some(b) = self.start_cached_bytes {
            rec.set_extra("layout_cached_bytes", b as f64);
        }
        Ok(())
    }

    fn cleanup(self: Box<Self>) -> Result<(), EngineError> {
        self.files.remove()
    }
}

/// IOzone's throughput-mode figures (KiB = 1024 bytes) and the deepest queue reached.
fn record_extras(cfg: &DiskConfig, rec: &Recorder, results: &[WorkerResult], parent_secs: f64) {
    let max_in_flight = results.iter().map(|r| r.stats.max_in_flight).max().unwrap_or(0);
    rec.set_extra("max_in_flight", f64::from(max_in_flight));
    if cfg.hugebufs {
        let (huge, mapped) =
            results.iter().fold((0, 0), |(h, m), r| (h + r.buffer_huge_bytes.0, m + r.buffer_huge_bytes.1));
        if mapped > 0 {
            rec.set_extra("io_buffer_huge_share", huge as f64 / mapped as f64);
        }
    }
    if cfg.evicts_on_wrap() {
        rec.set_extra("wrap_evictions", results.iter().map(|r| r.stats.evictions as f64).sum());
    }
    if cfg.timed {
        return;
    }
    if !results.is_empty() {
        let passes: f64 = results.iter().map(|r| f64::from(r.passes)).sum();
        rec.set_extra("passes", passes / results.len() as f64);
    }
    let children: f64 = results
        .iter()
        .filter(|r| r.secs_at_stonewall > 0.0)
        .map(|r| r.bytes_at_stonewall as f64 / 1024.0 / r.secs_at_stonewall)
        .sum();
    let at_stonewall: u64 = results.iter().map(|r| r.bytes_at_stonewall).sum();
    rec.set_extra("children_see_kib_per_s", children);
    if parent_secs > 0.0 {
        rec.set_extra("parent_sees_kib_per_s", at_stonewall as f64 / 1024.0 / parent_secs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RealClock;
    use std::sync::Arc;

    /// At the window's end, checks (after a pause) whether this process still holds a file
    /// open in `.0` (the cell's own directory): a worker thread keeps its file as long as its
    /// ring, so an open file means the worker has not yet let go.
    struct HeldAtEnd(std::path::PathBuf, AtomicBool);

    impl crate::WindowHooks for Arc<HeldAtEnd> {
        fn measure_ended(&self) {
            std::thread::sleep(Duration::from_millis(200));
            let fds = std::fs::read_dir("/proc/self/fd").into_iter().flatten().flatten();
            let held =
                fds.filter_map(|fd| std::fs::read_link(fd.path()).ok()).any(|to| to.starts_with(&self.0));
            self.1.store(held, Ordering::Release);
        }
    }

    /// Regression: in pass mode a worker that finished let go of its thread and io_uring ring
    /// at once, so when the window's end was read the ring's kernel workers could be gone, and
    /// their CPU was counted as the harness's. A finished worker now holds on until the end is read.
    #[test]
    fn a_finished_pass_mode_worker_keeps_its_ring_until_the_windows_end_is_read() {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir");
        let ctx = crate::testutil::cell_ctx(
            &super::super::DiskIo,
            dir.path(),
            1,
            &[
                ("phase", racehorse_core::Value::Str("randwrite".into())),
                ("ioengine", racehorse_core::Value::Str("io_uring".into())),
                ("iodepth", racehorse_core::Value::Int(4)),
                ("size", racehorse_core::Value::Int(1 << 20)),
                ("min_window_ms", racehorse_core::Value::Int(0)),
            ],
        );
        let mut cell = crate::Engine::prepare(&super::super::DiskIo, &ctx).expect("prepare");
        let seen = Arc::new(HeldAtEnd(dir.path().to_path_buf(), AtomicBool::new(false)));
        let ctl = Control::new(
            Duration::ZERO,
            Duration::from_secs(1),
            Arc::new(RealClock::default()),
            Box::new(seen.clone()),
            Arc::default(),
        );
        let rec = Recorder::new();
        let res = cell.run(&ctl, &rec);
        cell.cleanup().expect("cleanup");
        res.expect("a pass");
        assert!(
            seen.1.load(Ordering::Acquire),
            "the worker had let go of its file and ring when the window closed"
        );
    }

    /// Regression: "parent sees" reached 753,154 MiB/s against the children's 378 with one
    /// process, because the parent's time started after it woke from the release, which can
    /// be later than a worker's whole pass.
    #[test]
    fn a_driver_that_wakes_late_still_spans_every_worker() {
        let cfg = DiskConfig {
            phase: DiskPhase::Write,
            procs: 1,
            bs_bytes: 4096,
            size_bytes: 4096,
            direct: false,
            fsync: false,
            ioengine: "psync".into(),
            iodepth: 1,
            iodepth_batch: 1,
            fixedbufs: true,
            hugebufs: true,
            rwmixread: 50,
            timed: false,
            invalidate: true,
            fadvise_hint: true,
            min_window: Duration::ZERO,
            target: std::env::temp_dir(),
            destructive: false,
            layout: FileState::Created,
        };
        let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(RealClock::default()));
        let rec = Recorder::new();
        let sh = Shared::new(&cfg, false, &ctl, &rec);
        let (parent_s, child_s) = std::thread::scope(|s| {
            let child = s.spawn(|| {
                sh.ready.wait();
                sh.go.wait();
                let start = Instant::now();
                std::thread::sleep(Duration::from_millis(30));
                let secs = start.elapsed().as_secs_f64();
                sh.stonewall.store(true, Ordering::Release);
                sh.finished.fetch_add(1, Ordering::AcqRel);
                secs
            });
            let parent = drive_pass_waking(&sh, || std::thread::sleep(Duration::from_millis(60)));
            (parent.expect("driven"), child.join().expect("worker"))
        });
        assert!(parent_s >= child_s, "parent {parent_s} s, child {child_s} s");
    }
}
