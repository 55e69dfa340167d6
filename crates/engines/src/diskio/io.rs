//! Low-level disk I/O of the diskio engine: the `psync` and `io_uring` engines that run a [`Pattern`]
//! against one file, and cache/fsync/free-space helpers. Opening files (O_DIRECT) and the aligned
//! data buffers are shared with the other disk engines (`crate::support::direct_io`).

use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use io_uring::{opcode, squeue, types, IoUring};

pub use super::fileops::{evict_from_cache, free_bytes, fsync};
use super::pattern::{stamp_blocks, IoDir, Pattern};
use crate::error::EngineError;
use crate::support::direct_io::{AlignedBuf, Backing};

/// The engine names [`engine`] accepts.
pub const ENGINE_NAMES: [&str; 2] = ["psync", "io_uring"];
/// Largest io_uring queue depth (the kernel's IORING_MAX_ENTRIES).
pub const MAX_URING_DEPTH: u32 = 32768;

/// The path behind an open file, for messages (via /proc/self/fd), or "fd N" when unknown.
fn file_name(file: &File) -> String {
    let fd = file.as_raw_fd();
    match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
        Ok(p) => p.display().to_string(),
        Err(_) => format!("fd {fd}"),
    }
}

/// Whether the file was opened with O_DIRECT.
fn is_direct(file: &File) -> bool {
    // SAFETY: F_GETFL on a descriptor we borrow; no memory is passed.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    flags >= 0 && flags & libc::O_DIRECT != 0
}

fn dir_word(dir: IoDir) -> &'static str {
    match dir {
        IoDir::Read => "read",
        IoDir::Write => "write",
    }
}

/// Maps an error of one operation to an EngineError naming the file and offset.
fn op_error(file: &File, direct: bool, dir: IoDir, offset: u64, len: usize, e: &io::Error) -> EngineError {
    let name = file_name(file);
    let what = dir_word(dir);
    if direct && e.raw_os_error() == Some(libc::EINVAL) {
        return EngineError::Usage(format!(
            "O_DIRECT is not supported by the filesystem of {name} (EINVAL on a {len}-byte {what} at offset \
             {offset}; bs must also be a multiple of the device's logical block size); \
             use direct=false or another target"
        ));
    }
    if e.kind() == io::ErrorKind::UnexpectedEof {
        return EngineError::Failed(format!("{e} in {name} (the file is shorter than the run expects)"));
    }
    EngineError::Failed(format!("{what} of {len} bytes at offset {offset} in {name} failed: {e}"))
}

/// The error for a transfer of 0 bytes before the record was complete.
fn zero_transfer(dir: IoDir, offset: u64) -> io::Error {
    match dir {
        IoDir::Read => {
            io::Error::new(io::ErrorKind::UnexpectedEof, format!("unexpected end of file at offset {offset}"))
        }
        IoDir::Write => {
            io::Error::new(io::ErrorKind::WriteZero, format!("write of 0 bytes at offset {offset}"))
        }
    }
}

/// One finished operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub dir: IoDir,
    pub bytes: u64,
    pub latency_ns: u64,
}

/// What `on_done` wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Totals of one [`IoEngine::run`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    pub ops: u64,
    pub bytes: u64,
    pub max_in_flight: u32,
    /// Times the pattern dropped the file from the page cache as it wrapped (set by the
    /// worker around the engine, not by the engines).
    pub evictions: u64,
}

/// An I/O engine runs a pattern against one open file, reporting each completion. It returns when the
/// pattern ends or `on_done` returns Stop (after draining what is in flight; drained completions are
/// still reported to `on_done` but their Flow is ignored). The pattern's bs must not exceed the bs the
/// engine was built with (only the first `pattern.bs_bytes()` bytes of each buffer are used).
pub trait IoEngine: Send {
    fn run(
        &mut self,
        file: &File,
        pattern: &mut Pattern,
        on_done: &mut dyn FnMut(Done) -> Flow,
    ) -> Result<RunStats, EngineError>;
    /// The engine's name (the tests check which engine a constructor made).
    #[cfg(test)]
    fn name(&self) -> &'static str;
    /// The engine's I/O buffers.
    fn buffers(&self) -> &AlignedBuf;
}

/// The record size to use for `pattern` with buffers of `buf_bytes`.
fn record_bytes(pattern: &Pattern, buf_bytes: usize) -> Result<usize, EngineError> {
    match usize::try_from(pattern.bs_bytes()) {
        Ok(bs) if bs > 0 && bs <= buf_bytes => Ok(bs),
        _ => Err(EngineError::Usage(format!(
            "the pattern's bs={} bytes does not fit the engine's {buf_bytes}-byte buffers; \
             build the engine with the same bs",
            pattern.bs_bytes()
        ))),
    }
}

fn elapsed_ns(since: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(since).as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// `psync`: pread/pwrite, one op at a time; loops on short transfers (retrying EINTR); a read returning
/// 0 before the record is complete is an error.
pub struct Psync {
    buf: AlignedBuf,
}

impl Psync {
    pub fn new(bs_bytes: usize, backing: Backing) -> Result<Psync, EngineError> {
        Ok(Psync { buf: AlignedBuf::with_backing(bs_bytes, backing)? })
    }
}

/// pread/pwrite all of `buf` at `offset`, continuing after short transfers and EINTR.
fn transfer_full(file: &File, dir: IoDir, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        let res = match dir {
            IoDir::Read => file.read_at(&mut buf[done..], at),
            IoDir::Write => file.write_at(&buf[done..], at),
        };
        match res {
            Ok(0) => return Err(zero_transfer(dir, at)),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl IoEngine for Psync {
    fn run(
        &mut self,
        file: &File,
        pattern: &mut Pattern,
        on_done: &mut dyn FnMut(Done) -> Flow,
    ) -> Result<RunStats, EngineError> {
        let bs = record_bytes(pattern, self.buf.len())?;
        let direct = is_direct(file);
        let mut stats = RunStats::default();
        while let Some((dir, offset)) = pattern.next() {
            let buf = &mut self.buf.as_mut_slice()[..bs];
            if dir == IoDir::Write {
                stamp_blocks(buf, offset);
            }
            let start = Instant::now();
            let res = transfer_full(file, dir, buf, offset);
            let latency_ns = elapsed_ns(start, Instant::now());
            res.map_err(|e| op_error(file, direct, dir, offset, bs, &e))?;
            stats.ops += 1;
            stats.bytes += bs as u64;
            stats.max_in_flight = 1;
            if on_done(Done { dir, bytes: bs as u64, latency_ns }) == Flow::Stop {
                break;
            }
        }
        Ok(stats)
    }

    #[cfg(test)]
    fn name(&self) -> &'static str {
        "psync"
    }

    fn buffers(&self) -> &AlignedBuf {
        &self.buf
    }
}

/// State of one io_uring slot (one buffer of bs bytes).
#[derive(Debug, Clone, Copy)]
struct Slot {
    dir: IoDir,
    offset: u64,
    /// Bytes already transferred (a buffered short transfer resubmits the rest).
    done_bytes: usize,
    submitted: Instant,
}

/// `io_uring`: keeps up to `depth` operations in flight, each in its own bs-sized slot of one aligned
/// buffer, using READ/WRITE opcodes with explicit offsets. Latency = reap time − submission time.
///
/// Short transfers: with O_DIRECT they are reported as errors; on buffered files the remainder is
/// resubmitted (latency still counts from the first submission); a read that returns 0 bytes before the
/// record is complete is "unexpected end of file". EINTR/EAGAIN completions are resubmitted.
/// On an error the engine stops submitting, drains what is in flight, and returns the first error.
pub struct Uring {
    ring: IoUring,
    bufs: ManuallyDrop<AlignedBuf>,
    bs_bytes: usize,
    depth: u32,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// The buffer is registered with the ring (pinned once; READ_FIXED / WRITE_FIXED).
    fixed: bool,
    /// Operations queued per submission (fio's `iodepth_batch_submit`): 1 submits each one
    /// as it is queued.
    submit_batch: u32,
    /// Set while operations may be in the kernel; still set after an aborted run (a failed submit or a
    /// panic in `on_done`), in which case the buffers are leaked on drop rather than freed under the kernel.
    maybe_in_flight: bool,
}

impl Uring {
    /// An engine of `depth` slots of `bs_bytes`; `register`: the buffers are registered with
    /// the ring (fio's `fixedbufs`), else every operation passes plain user memory; the
    /// buffers' memory from `backing`.
    pub fn with_buffers(
        bs_bytes: usize,
        depth: u32,
        register_bufs: bool,
        backing: Backing,
    ) -> Result<Uring, EngineError> {
        if depth == 0 || depth > MAX_URING_DEPTH {
            return Err(EngineError::Usage(format!(
                "iodepth={depth} is out of range for io_uring; use 1..={MAX_URING_DEPTH}"
            )));
        }
        if bs_bytes == 0 {
            return Err(EngineError::Usage("bs must be > 0".into()));
        }
        let total = bs_bytes.checked_mul(depth as usize).ok_or_else(|| {
            EngineError::Usage(format!("bs={bs_bytes} × iodepth={depth} is too large; lower one of them"))
        })?;
        let bufs = AlignedBuf::with_backing(total, backing)?;
        let ring = new_ring(depth.next_power_of_two()).map_err(|e| {
            EngineError::Usage(format!("io_uring is not available here ({e}); use ioengine=psync"))
        })?;
        let now = Instant::now();
        let slots = vec![Slot { dir: IoDir::Read, offset: 0, done_bytes: 0, submitted: now }; depth as usize];
        let fixed = register_bufs && register(&ring, &bufs);
        Ok(Uring {
            ring,
            fixed,
            submit_batch: 1,
            bufs: ManuallyDrop::new(bufs),
            bs_bytes,
            depth,
            slots,
            free: (0..depth as usize).rev().collect(),
            maybe_in_flight: false,
        })
    }
}

/// A ring whose completion work runs only when its one submitting thread asks for events
/// (single issuer, deferred and cooperative task running, as fio sets up): without these
/// the kernel interrupts the thread for every completion, which in a VM costs an IPI each
/// and measured 2-4× less bandwidth at 1 MiB × depth 8. Older kernels get a plain ring.
fn new_ring(entries: u32) -> std::io::Result<IoUring> {
    IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
}

/// Registers the whole buffer as fixed buffer 0, so the kernel pins its pages once rather
/// than on every operation; false (plain reads and writes) when it cannot, e.g. under a
/// small RLIMIT_MEMLOCK.
fn register(ring: &IoUring, bufs: &AlignedBuf) -> bool {
    let iov = libc::iovec { iov_base: bufs.raw_at(0).cast(), iov_len: bufs.len() };
    // SAFETY: the iovec covers memory owned by `bufs`. Operations use it only while a run
    // is active; `bufs` is freed in Uring's Drop only when nothing is in flight (else it is
    // leaked), and the kernel keeps its own references to the pinned pages until the ring
    // closes, so unmapping them first cannot hand freed memory to an operation.
    unsafe { ring.submitter().register_buffers(&[iov]).is_ok() }
}

impl Drop for Uring {
    fn drop(&mut self) {
        if !self.maybe_in_flight {
            // SAFETY: no operation references the buffers any more, and they are dropped only here.
            unsafe { ManuallyDrop::drop(&mut self.bufs) }
        }
    }
}

/// What one run needs to know about its file.
struct RunCtx<'a> {
    file: &'a File,
    fd: types::Fd,
    direct: bool,
    bs: usize,
}

/// Progress of one run.
#[derive(Default)]
struct RunState {
    stats: RunStats,
    in_flight: u32,
    stopping: bool,
    exhausted: bool,
    first_err: Option<EngineError>,
    /// Slots pushed since the last submit; they get their submission time just before it.
    just_pushed: Vec<usize>,
    cqes: Vec<(u64, i32)>,
}

impl RunState {
    fn fail(&mut self, err: EngineError) {
        self.stopping = true;
        if self.first_err.is_none() {
            self.first_err = Some(err);
        }
    }
}

impl Uring {
    /// Submits after every `n` queued operations (at least 1, at most the depth).
    pub fn set_submit_batch(&mut self, n: u32) {
        self.submit_batch = n.clamp(1, self.depth);
    }

    /// Queues the (remaining part of the) operation in `slot`.
    fn push(&mut self, ctx: &RunCtx, idx: usize) -> Result<(), EngineError> {
        let slot = self.slots[idx];
        let start = idx * self.bs_bytes + slot.done_bytes;
        let ptr = self.bufs.raw_at(start);
        let len = (ctx.bs - slot.done_bytes) as u32;
        let offset = slot.offset + slot.done_bytes as u64;
        let entry: squeue::Entry = match (slot.dir, self.fixed) {
            (IoDir::Read, true) => opcode::ReadFixed::new(ctx.fd, ptr, len, 0).offset(offset).build(),
            (IoDir::Write, true) => opcode::WriteFixed::new(ctx.fd, ptr, len, 0).offset(offset).build(),
            (IoDir::Read, false) => opcode::Read::new(ctx.fd, ptr, len).offset(offset).build(),
            (IoDir::Write, false) => opcode::Write::new(ctx.fd, ptr, len).offset(offset).build(),
        };
        let entry = entry.user_data(idx as u64);
        // SAFETY: the buffer range [start, start+len) belongs to this slot alone and lives in self.bufs,
        // which is neither freed nor reused until the completion is reaped (run always drains, and
        // Drop leaks the buffers if a run was aborted). The fd is borrowed for the whole run.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        pushed.map_err(|_| EngineError::Failed("io_uring submission queue unexpectedly full".into()))
    }

    /// Starts new operations from the pattern in every free slot.
    fn fill(&mut self, ctx: &RunCtx, pattern: &mut Pattern, st: &mut RunState) -> Result<(), EngineError> {
        while st.in_flight < self.depth {
            let Some(&idx) = self.free.last() else { break };
            let Some((dir, offset)) = pattern.next() else {
                st.exhausted = true;
                break;
            };
            self.free.pop();
            let submitted = self.slots[idx].submitted; // set for real just before the submit
            self.slots[idx] = Slot { dir, offset, done_bytes: 0, submitted };
            if dir == IoDir::Write {
                // SAFETY: this slot's range is inside the buffer and idle (the slot was free), so no
                // operation is using it; other slots are not touched.
                let slot_buf =
                    unsafe { std::slice::from_raw_parts_mut(self.bufs.raw_at(idx * self.bs_bytes), ctx.bs) };
                stamp_blocks(slot_buf, offset);
            }
            self.push(ctx, idx)?;
            st.in_flight += 1;
            st.just_pushed.push(idx);
            if st.just_pushed.len() >= self.submit_batch as usize {
                self.submit_queued(ctx, st)?;
            }
        }
        Ok(())
    }

    /// Submits what is queued without waiting (the operations' latency starts now).
    fn submit_queued(&mut self, ctx: &RunCtx, st: &mut RunState) -> Result<(), EngineError> {
        let now = Instant::now();
        for idx in st.just_pushed.drain(..) {
            self.slots[idx].submitted = now;
        }
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => {
                    return Err(EngineError::Failed(format!(
                        "io_uring submit failed on {}: {e}",
                        file_name(ctx.file)
                    )))
                }
            }
        }
    }

    /// Submits everything queued and waits for at least one completion.
    fn submit_and_wait(&mut self, ctx: &RunCtx, st: &mut RunState) -> Result<(), EngineError> {
        let now = Instant::now();
        for idx in st.just_pushed.drain(..) {
            self.slots[idx].submitted = now;
        }
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => {
                    return Err(EngineError::Failed(format!(
                        "io_uring submit failed on {}: {e}",
                        file_name(ctx.file)
                    )))
                }
            }
        }
    }

    /// Handles every completion that is ready.
    fn reap(&mut self, ctx: &RunCtx, st: &mut RunState, on_done: &mut dyn FnMut(Done) -> Flow) {
        let now = Instant::now();
        let mut cqes = std::mem::take(&mut st.cqes);
        cqes.extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
        for &(user_data, res) in &cqes {
            self.complete(ctx, st, user_data as usize, res, now, on_done);
        }
        cqes.clear();
        st.cqes = cqes;
    }

    fn complete(
        &mut self,
        ctx: &RunCtx,
        st: &mut RunState,
        idx: usize,
        res: i32,
        now: Instant,
        on_done: &mut dyn FnMut(Done) -> Flow,
    ) {
        st.in_flight -= 1;
        let Some(slot) = self.slots.get_mut(idx) else {
            st.fail(EngineError::Failed(format!("io_uring returned an unknown operation id {idx}")));
            return;
        };
        let at = slot.offset + slot.done_bytes as u64;
        let (dir, offset) = (slot.dir, slot.offset);
        let outcome = match usize::try_from(res) {
            Err(_) => Err(io::Error::from_raw_os_error(-res)),
            Ok(0) => Err(zero_transfer(dir, at)),
            Ok(n) => {
                slot.done_bytes += n;
                Ok(slot.done_bytes)
            }
        };
        let retry = match &outcome {
            Err(e) => matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)),
            Ok(done) => *done < ctx.bs && !ctx.direct,
        };
        if retry && st.first_err.is_none() {
            match self.push(ctx, idx) {
                Ok(()) => st.in_flight += 1,
                Err(e) => {
                    self.free.push(idx);
                    st.fail(e);
                }
            }
            return;
        }
        self.free.push(idx);
        match outcome {
            Err(e) => st.fail(op_error(ctx.file, ctx.direct, dir, offset, ctx.bs, &e)),
            Ok(done) if done < ctx.bs => st.fail(EngineError::Failed(format!(
                "short {}{}: {done} of {} bytes at offset {offset} in {}",
                dir_word(dir),
                if ctx.direct { " with O_DIRECT" } else { "" },
                ctx.bs,
                file_name(ctx.file)
            ))),
            Ok(_) => {
                let latency_ns = elapsed_ns(self.slots[idx].submitted, now);
                st.stats.ops += 1;
                st.stats.bytes += ctx.bs as u64;
                if on_done(Done { dir, bytes: ctx.bs as u64, latency_ns }) == Flow::Stop {
                    st.stopping = true;
                }
            }
        }
    }
}

impl IoEngine for Uring {
    fn run(
        &mut self,
        file: &File,
        pattern: &mut Pattern,
        on_done: &mut dyn FnMut(Done) -> Flow,
    ) -> Result<RunStats, EngineError> {
        if self.maybe_in_flight {
            return Err(EngineError::Failed(
                "this io_uring engine was left unusable by an earlier failed run; build a new one".into(),
            ));
        }
        let bs = record_bytes(pattern, self.bs_bytes)?;
        let ctx = RunCtx { file, fd: types::Fd(file.as_raw_fd()), direct: is_direct(file), bs };
        let mut st = RunState::default();
        self.maybe_in_flight = true;
        loop {
            if !st.stopping && !st.exhausted {
                if let Err(e) = self.fill(&ctx, pattern, &mut st) {
                    st.fail(e);
                }
            }
            st.stats.max_in_flight = st.stats.max_in_flight.max(st.in_flight);
            if st.in_flight == 0 {
                break;
            }
            // A failed submit leaves the ring in an unknown state: keep maybe_in_flight set.
            self.submit_and_wait(&ctx, &mut st)?;
            self.reap(&ctx, &mut st, on_done);
        }
        self.maybe_in_flight = false;
        match st.first_err {
            Some(e) => Err(e),
            None => Ok(st.stats),
        }
    }

    #[cfg(test)]
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn buffers(&self) -> &AlignedBuf {
        &self.bufs
    }
}

/// How an io_uring engine queues: operations in flight, per submission, and whether its
/// buffers are registered (psync ignores all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queue {
    pub depth: u32,
    pub submit_batch: u32,
    pub fixed_bufs: bool,
    /// Buffers in a huge page of their own ([`Backing::HugePages`]), else the heap.
    pub huge_bufs: bool,
}

impl Queue {
    /// `depth` in flight, each submitted as it is queued, plain buffers (fio's defaults).
    #[cfg(test)]
    pub fn plain(depth: u32) -> Queue {
        Queue { depth, submit_batch: 1, fixed_bufs: false, huge_bufs: false }
    }
}

/// Builds an engine by name: "psync" or "io_uring".
pub fn engine(name: &str, bs_bytes: usize, q: Queue) -> Result<Box<dyn IoEngine>, EngineError> {
    let backing = if q.huge_bufs { Backing::HugePages } else { Backing::Heap };
    match name {
        "psync" => Ok(Box::new(Psync::new(bs_bytes, backing)?)),
        "io_uring" => {
            let (depth, submit_batch) = (q.depth, q.submit_batch);
            let mut u = Uring::with_buffers(bs_bytes, depth, q.fixed_bufs, backing)?;
            u.set_submit_batch(submit_batch);
            Ok(Box::new(u))
        }
        other => Err(EngineError::Usage(format!(
            "unknown ioengine '{other}'; valid ioengines are: {}",
            ENGINE_NAMES.join(", ")
        ))),
    }
}

#[cfg(test)]
#[path = "io_tests.rs"]
mod tests;
