//! `ipc = "mq"`: the modified dbench of the CPU-hotplug study (seed 003). Each client is
//! two parties joined by two POSIX message queues: a reader walks the loadfile and sends
//! each op's index, an executor receives it, runs it and replies when it is done. The
//! parties are two threads (fork() in a multithreaded program is unsafe); messages are
//! 8 bytes and each queue holds one, far below the default msg_max (10) and msgsize_max.

use super::client::{fatal_to_engine, Replayer, Shared};
use super::exec::Executor;
use super::loadfile::Loadfile;
use crate::{Control, EngineError, WorkerMeter};
use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Request: run the loadfile op with this index; or these two control words.
pub const STOP: u64 = u64::MAX;
pub const END_PASS: u64 = u64::MAX - 1;
/// Replies.
pub const DONE: u64 = 0;
pub const FAILED: u64 = 1;
const MSG_BYTES: usize = 8;

static NONCE: AtomicU64 = AtomicU64::new(0);

/// One POSIX message queue of 8-byte messages, depth 1. The name is unlinked right after
/// creation: the queue lives while its descriptor is open and never outlives the process.
pub struct Queue {
    mqd: libc::mqd_t,
}

impl Queue {
    /// Creates a fresh queue (`/racehorse-fs.<pid>.<nonce>.<client>.<role>`).
    pub fn create(client: usize, role: &str) -> Result<Queue, EngineError> {
        let name = format!(
            "/{NAME_PREFIX}{}.{}.{client}.{role}",
            std::process::id(),
            NONCE.fetch_add(1, Ordering::Relaxed)
        );
        let cname = CString::new(name.clone()).map_err(|_| EngineError::Failed("bad queue name".into()))?;
        // SAFETY: mq_attr is plain data; mq_open gets a NUL-terminated name, mode and attr.
        let mqd = unsafe {
            let mut attr: libc::mq_attr = std::mem::zeroed();
            attr.mq_maxmsg = 1;
            attr.mq_msgsize = MSG_BYTES as libc::c_long;
            let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC;
            libc::mq_open(cname.as_ptr(), flags, 0o600 as libc::mode_t, &attr as *const libc::mq_attr)
        };
        if mqd == -1 {
            let err = io::Error::last_os_error();
            let hint = match err.raw_os_error() {
                Some(libc::ENOSPC) => "too many queues: raise /proc/sys/fs/mqueue/queues_max or use fewer clients",
                Some(libc::EMFILE) => "out of queue memory (RLIMIT_MSGQUEUE) or descriptors: raise the limits or use fewer clients",
                Some(libc::ENOSYS) => "this kernel has no POSIX message queues (CONFIG_POSIX_MQUEUE): use ipc = \"none\"",
                _ => "cannot create a POSIX message queue for ipc = \"mq\"",
            };
            return Err(EngineError::io(hint, format!("/dev/mqueue{name}"), err));
        }
        // SAFETY: the name was just created; unlinking it keeps the open queue usable.
        unsafe { libc::mq_unlink(cname.as_ptr()) };
        Ok(Queue { mqd })
    }

    pub fn send(&self, word: u64) -> Result<(), EngineError> {
        let buf = word.to_le_bytes();
        loop {
            // SAFETY: sends MSG_BYTES bytes from a local buffer on our open queue.
            if unsafe { libc::mq_send(self.mqd, buf.as_ptr().cast(), MSG_BYTES, 0) } == 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(EngineError::io("mq_send failed", "/dev/mqueue", err));
            }
        }
    }

    pub fn recv(&self) -> Result<u64, EngineError> {
        let mut buf = [0u8; MSG_BYTES];
        loop {
            // SAFETY: receives at most MSG_BYTES (the queue's msgsize) into a local buffer.
            let n = unsafe {
                libc::mq_receive(self.mqd, buf.as_mut_ptr().cast(), MSG_BYTES, std::ptr::null_mut())
            };
            if n == MSG_BYTES as isize {
                return Ok(u64::from_le_bytes(buf));
            }
            let err = io::Error::last_os_error();
            if n >= 0 || err.kind() != io::ErrorKind::Interrupted {
                return Err(EngineError::io("mq_receive failed", "/dev/mqueue", err));
            }
        }
    }
}

/// An absolute CLOCK_REALTIME deadline 100 ms from now, for the timed queue calls.
fn slice_deadline() -> libc::timespec {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_nsec += 100_000_000;
    if ts.tv_nsec >= 1_000_000_000 {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1_000_000_000;
    }
    ts
}

impl Queue {
    /// Like [`Queue::send`], but waits for room in slices of 100 ms and fails once
    /// `give_up()` says so (a partner that died never makes room).
    pub fn send_unless(&self, word: u64, give_up: &dyn Fn() -> bool) -> Result<(), EngineError> {
        let buf = word.to_le_bytes();
        loop {
            let ts = slice_deadline();
            // SAFETY: sends MSG_BYTES bytes from a local buffer by an absolute deadline.
            if unsafe { libc::mq_timedsend(self.mqd, buf.as_ptr().cast(), MSG_BYTES, 0, &ts) } == 0 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::ETIMEDOUT) if give_up() => return Err(EngineError::Failed(GAVE_UP.into())),
                Some(libc::ETIMEDOUT) => {}
                _ => return Err(EngineError::io("mq_send failed", "/dev/mqueue", err)),
            }
        }
    }

    /// Like [`Queue::recv`], but waits in slices of 100 ms and fails once `give_up()` says
    /// so (the client processes: a partner that died never answers).
    pub fn recv_unless(&self, give_up: &dyn Fn() -> bool) -> Result<u64, EngineError> {
        let mut buf = [0u8; MSG_BYTES];
        loop {
            let ts = slice_deadline();
            // SAFETY: receives at most MSG_BYTES into a local buffer by an absolute deadline.
            let n = unsafe {
                libc::mq_timedreceive(self.mqd, buf.as_mut_ptr().cast(), MSG_BYTES, std::ptr::null_mut(), &ts)
            };
            if n == MSG_BYTES as isize {
                return Ok(u64::from_le_bytes(buf));
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) if n < 0 => {}
                Some(libc::ETIMEDOUT) if n < 0 => {
                    if give_up() {
                        return Err(EngineError::Failed(GAVE_UP.into()));
                    }
                }
                _ => return Err(EngineError::io("mq_receive failed", "/dev/mqueue", err)),
            }
        }
    }
}

/// The error of a client process that stopped waiting because another one failed.
pub const GAVE_UP: &str = "stopped waiting for its partner: another client process failed";

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this value owns.
        unsafe { libc::mq_close(self.mqd) };
    }
}

/// The reader's side of one mq client: op index out, completion back.
pub struct MqReader<'q> {
    pub req: &'q Queue,
    pub rep: &'q Queue,
}

impl Replayer for MqReader<'_> {
    fn run(&mut self, index: usize, _op: &super::loadfile::Op) -> Result<u64, EngineError> {
        self.req.send(index as u64)?;
        match self.rep.recv()? {
            DONE => Ok(_op.kind.payload()),
            _ => Err(EngineError::Failed("the executor failed".into())),
        }
    }
    fn end_pass(&mut self) -> Result<(), EngineError> {
        self.req.send(END_PASS)?;
        self.rep.recv().map(|_| ())
    }
}

impl Drop for MqReader<'_> {
    /// Always tells the executor to finish, so its thread can be joined.
    fn drop(&mut self) {
        let _ = self.req.send(STOP);
    }
}

/// What the executor thread hands back: its CPU meter, its error count, a fatal error.
pub struct ExecutorOutcome {
    pub meter: WorkerMeter,
    pub errors: u64,
    pub fatal: Option<EngineError>,
}

/// The executor party: runs ops as they arrive until STOP.
pub fn executor_loop(id: usize, sh: &Shared, ctl: &Control, req: &Queue, rep: &Queue) -> ExecutorOutcome {
    let mut ex = Executor::new(&sh.lf, &sh.root, id, sh.cfg);
    // Counts no units; it carries this thread's CPU time over the window.
    let mut meter = WorkerMeter::new();
    let fatal = serve(&mut ex, &sh.lf, (req, rep), None, || {
        meter.tick(ctl);
    });
    ExecutorOutcome { meter, errors: ex.errors, fatal }
}

/// The executor's service: receives requests until STOP, runs each op with `ex` and
/// replies DONE or FAILED (and stops after a failure). `on_request` runs as each request
/// arrives. With `give_up`, waits for requests by [`Queue::recv_unless`]. Returns the error
/// that ended it, if any.
pub fn serve(
    ex: &mut Executor,
    lf: &Loadfile,
    (req, rep): (&Queue, &Queue),
    give_up: Option<&dyn Fn() -> bool>,
    mut on_request: impl FnMut(),
) -> Option<EngineError> {
    let mut fatal = None;
    loop {
        let got = match give_up {
            Some(g) => req.recv_unless(g),
            None => req.recv(),
        };
        let word = match got {
            Ok(w) => w,
            Err(e) => return Some(e),
        };
        on_request();
        let reply = match word {
            STOP => break,
            END_PASS => {
                ex.close_all();
                DONE
            }
            i => match lf.ops.get(i as usize).map(|op| ex.exec(op)) {
                Some(Ok(_)) => DONE,
                Some(Err(f)) => {
                    fatal = Some(fatal_to_engine(f));
                    FAILED
                }
                None => FAILED,
            },
        };
        if rep.send(reply).is_err() || reply == FAILED {
            break;
        }
    }
    fatal
}

/// The prefix of every queue name (`/racehorse-fs.<pid>.…`).
const NAME_PREFIX: &str = "racehorse-fs.";

/// Where the mqueue file system is mounted (usually /dev/mqueue), from /proc/self/mounts.
pub fn mqueue_mount() -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let line = text.lines().find(|l| l.split_whitespace().nth(2) == Some("mqueue"))?;
    line.split_whitespace().nth(1).map(std::path::PathBuf::from)
}

/// Unlinks queues that racehorse runs which are gone left behind (a run killed between
/// creating a queue and unlinking its name): their names carry the run's pid. Needs the
/// mqueue file system mounted to list them; returns how many were removed.
pub fn remove_leftovers() -> usize {
    let Some(dir) = mqueue_mount() else { return 0 };
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(NAME_PREFIX).and_then(|r| r.split('.').next()) else { continue };
        let Ok(pid) = pid.parse::<i32>() else { continue };
        if pid <= 0 || std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let Ok(cname) = CString::new(format!("/{name}")) else { continue };
        // SAFETY: unlinks a queue name; a NUL-terminated string.
        if unsafe { libc::mq_unlink(cname.as_ptr()) } == 0 {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_round_trip_and_name_is_gone() {
        let q = Queue::create(0, "test").unwrap();
        q.send(42).unwrap();
        assert_eq!(q.recv().unwrap(), 42);
        q.send(STOP).unwrap();
        assert_eq!(q.recv().unwrap(), STOP);
    }
}
