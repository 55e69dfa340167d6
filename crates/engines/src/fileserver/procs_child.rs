//! The two processes of one `ipc = "mq_procs"` client, after fork(): the reader walks the
//! loadfile and sends each op's index over a POSIX message queue, the executor runs it and
//! replies. They follow the window through a page shared with racehorse and report what they
//! counted as JSON over a pipe before `_exit`.

use super::exec::Executor;
use super::loadfile::{Loadfile, OpKind};
use super::mq::{serve, Queue, DONE, END_PASS, GAVE_UP, STOP};
use crate::recorder::OpLatencies;
use crate::EngineError;
use racehorse_core::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The shared page's phases: clients wait at the gate, then replay; only ops that end in
/// `MEASURE` count; `STOP` ends them.
pub const GATE: u32 = 0;
pub const WARMUP: u32 = 1;
pub const MEASURE: u32 = 2;
pub const STOP_PHASE: u32 = 3;

/// The page racehorse shares with its client processes (MAP_SHARED, set up before fork).
#[repr(C)]
pub struct Page {
    pub phase: AtomicU32,
    /// Raised by a client that failed, so racehorse ends the window early.
    pub failed: AtomicBool,
    /// Client processes that are set up and waiting at the gate.
    pub ready: AtomicU32,
}

/// A fatal error as it crosses the pipe.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ChildFatal {
    Io { context: String, path: PathBuf, errno: i32 },
    Other(String),
}

impl ChildFatal {
    pub fn of(e: EngineError) -> ChildFatal {
        match e {
            EngineError::Io { context, path, source } => {
                ChildFatal::Io { context, path, errno: source.raw_os_error().unwrap_or(libc::EIO) }
            }
            other => ChildFatal::Other(other.to_string()),
        }
    }

    /// True for the error of a process that only stopped because another one failed.
    pub fn gave_up(&self) -> bool {
        matches!(self, ChildFatal::Other(m) if m.ends_with(GAVE_UP))
    }

    pub fn into_engine(self) -> EngineError {
        match self {
            ChildFatal::Io { context, path, errno } => {
                EngineError::io(context, path, std::io::Error::from_raw_os_error(errno))
            }
            ChildFatal::Other(m) => EngineError::Failed(format!("fileserver: {m}")),
        }
    }
}

/// What a client process counted and how it ended (the executor counts no units).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ChildReport {
    /// getpid() in the child, to show it is a process of its own.
    pub pid: i32,
    pub units: f64,
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub latencies: BTreeMap<String, LatencyHistogram>,
    pub errors: u64,
    pub fatal: Option<ChildFatal>,
}

/// The body of a forked child: dies with racehorse, runs `f` (a panic is a failure), writes
/// its report to `out` and leaves with `_exit`, running none of the parent's destructors.
pub fn child_main(parent: i32, out: libc::c_int, f: impl FnOnce() -> ChildReport) -> ! {
    // SAFETY: prctl/getppid are plain syscalls; if racehorse died before prctl took
    // effect, the parent is no longer ours and the child leaves at once.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        if libc::getppid() != parent {
            libc::_exit(3);
        }
    }
    let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| ChildReport {
        fatal: Some(ChildFatal::Other("a client process panicked".into())),
        ..ChildReport::default()
    });
    crate::support::forked::write_all(out, &serde_json::to_vec(&report).unwrap_or_default());
    // SAFETY: leaving the child at once.
    unsafe { libc::_exit(0) }
}

fn my_pid() -> i32 {
    // SAFETY: getpid cannot fail.
    unsafe { libc::getpid() }
}

/// The executor process: announces itself, then serves requests until STOP.
pub fn executor(
    page: &Page,
    lf: &Loadfile,
    root: &Path,
    id: usize,
    cfg: super::exec::ExecConfig,
    q: &(Queue, Queue),
) -> ChildReport {
    let mut ex = Executor::new(lf, root, id, cfg);
    page.ready.fetch_add(1, Ordering::AcqRel);
    let give_up = || page.failed.load(Ordering::Acquire);
    let fatal = serve(&mut ex, lf, (&q.0, &q.1), Some(&give_up), || {});
    if fatal.is_some() {
        page.failed.store(true, Ordering::Release);
    }
    ChildReport {
        pid: my_pid(),
        errors: ex.errors,
        fatal: fatal.map(ChildFatal::of),
        ..ChildReport::default()
    }
}

/// Waits at the gate; false if racehorse called the run off (or the wait timed out).
fn pass_gate(page: &Page) -> bool {
    let limit = Instant::now() + Duration::from_secs(60);
    loop {
        match page.phase.load(Ordering::Acquire) {
            GATE if Instant::now() < limit => std::thread::sleep(Duration::from_millis(1)),
            GATE | STOP_PHASE => return false,
            _ => return true,
        }
    }
}

/// The reader process: passes over the loadfile, one round trip per op, until STOP.
pub fn reader(page: &Page, lf: &Loadfile, q: &(Queue, Queue)) -> ChildReport {
    let mut r = ChildReport { pid: my_pid(), ..ChildReport::default() };
    page.ready.fetch_add(1, Ordering::AcqRel);
    if pass_gate(page) {
        let mut lat = OpLatencies::default();
        if let Err(e) = replay(page, lf, q, &mut r, &mut lat) {
            page.failed.store(true, Ordering::Release);
            r.fatal = Some(ChildFatal::of(e));
        }
        r.latencies = lat.into_map();
    }
    let _ = q.0.send_unless(STOP, &|| page.failed.load(Ordering::Acquire));
    r
}

fn stopped(page: &Page) -> bool {
    page.phase.load(Ordering::Acquire) == STOP_PHASE || page.failed.load(Ordering::Acquire)
}

fn replay(
    page: &Page,
    lf: &Loadfile,
    (req, rep): &(Queue, Queue),
    r: &mut ChildReport,
    lat: &mut OpLatencies,
) -> Result<(), EngineError> {
    let give_up = || page.failed.load(Ordering::Acquire);
    loop {
        for (i, op) in lf.ops.iter().enumerate() {
            if stopped(page) {
                return Ok(());
            }
            let start = Instant::now();
            req.send_unless(i as u64, &give_up)?;
            if rep.recv_unless(&give_up)? != DONE {
                return Err(EngineError::Failed("the executor process failed".into()));
            }
            let ns = start.elapsed().as_nanos() as u64;
            if page.phase.load(Ordering::Acquire) == MEASURE {
                let bytes = op.kind.payload();
                match op.kind {
                    OpKind::ReadX { .. } => r.bytes_read += bytes,
                    OpKind::WriteX { .. } => r.bytes_written += bytes,
                    _ => {}
                }
                r.units += bytes as f64;
                r.ops += 1;
                lat.record(op.kind.name(), ns);
            }
        }
        req.send_unless(END_PASS, &give_up)?;
        rep.recv_unless(&give_up)?;
    }
}
