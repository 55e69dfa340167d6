//! `ipc = "mq"`: the modified dbench of the CPU-hotplug study (seed 003). Each client is
//! two parties joined by two POSIX message queues: a reader walks the loadfile and sends
//! each op's index, an executor receives it, runs it and replies when it is done. The
//! parties are two threads (fork() in a multithreaded program is unsafe); messages are
//! 8 bytes and each queue holds one, far below the default msg_max (10) and msgsize_max.

use super::client::{fatal_to_engine, Replayer, Shared};
use super::exec::Executor;
use crate::{Control, EngineError, WorkerMeter};
use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Request: run the loadfile op with this index; or these two control words.
const STOP: u64 = u64::MAX;
const END_PASS: u64 = u64::MAX - 1;
/// Replies.
const DONE: u64 = 0;
const FAILED: u64 = 1;
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
            "/racehorse-fs.{}.{}.{client}.{role}",
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
    let mut fatal = None;
    loop {
        let word = match req.recv() {
            Ok(w) => w,
            Err(e) => {
                fatal = Some(e);
                break;
            }
        };
        meter.tick(ctl);
        let reply = match word {
            STOP => break,
            END_PASS => {
                ex.close_all();
                DONE
            }
            i => match sh.lf.ops.get(i as usize).map(|op| ex.exec(op)) {
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
    ExecutorOutcome { meter, errors: ex.errors, fatal }
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
