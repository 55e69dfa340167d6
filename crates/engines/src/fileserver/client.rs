//! One client's life: wait at the start gate, replay the loadfile pass after pass until the
//! window closes (ticking and counting the meter around each op), close what is left open.
//! Plain clients execute ops themselves; mq clients hand them to an executor thread.

use super::exec::{ExecConfig, Executor, Fatal};
use super::loadfile::{Loadfile, Op, OpKind};
use super::mq::{executor_loop, MqReader, Queue};
use crate::{Control, EngineError, WorkerMeter};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Read-only state every client shares, plus the flag a failing client raises.
pub struct Shared {
    pub lf: Arc<Loadfile>,
    pub root: PathBuf,
    pub cfg: ExecConfig,
    pub failed: AtomicBool,
}

/// What a client hands back after the run.
pub struct ClientOutcome {
    pub meters: Vec<WorkerMeter>,
    pub errors: u64,
    pub fatal: Option<EngineError>,
}

/// Turns a fatal executor error into an Io error that says what to do.
pub fn fatal_to_engine(f: Fatal) -> EngineError {
    let hint = match f.source.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            "the disk is full: free space or point the work directory at a larger filesystem"
        }
        Some(libc::EROFS) => "the filesystem is read-only: choose a writable work directory",
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            "out of file descriptors: raise `ulimit -n` or use fewer clients"
        }
        _ => "the file system refused an operation",
    };
    EngineError::io(
        format!("fileserver: {} failed at loadfile line {}; {hint}", f.what, f.line),
        f.path,
        f.source,
    )
}

/// Releases all clients at once, like dbench's SIGSTOP/SIGCONT start.
#[derive(Default)]
pub struct StartGate {
    state: Mutex<(usize, Option<bool>)>,
    cv: Condvar,
}

impl StartGate {
    /// Called by each client when ready; returns false if the run was called off.
    pub fn arrive(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        self.cv.notify_all();
        loop {
            if let Some(go) = s.1 {
                return go;
            }
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits for `n` arrivals, then opens the gate (`go`) or calls the run off.
    pub fn release(&self, n: usize, go: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while go && s.0 < n {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.1 = Some(go);
        self.cv.notify_all();
    }
}

/// Runs one op the client's way (directly, or through the executor).
pub trait Replayer {
    fn run(&mut self, index: usize, op: &Op) -> Result<u64, EngineError>;
    fn end_pass(&mut self) -> Result<(), EngineError>;
}

struct Direct<'a>(Executor<'a>);

impl Replayer for Direct<'_> {
    fn run(&mut self, _index: usize, op: &Op) -> Result<u64, EngineError> {
        self.0.exec(op).map_err(fatal_to_engine)
    }
    fn end_pass(&mut self) -> Result<(), EngineError> {
        self.0.close_all();
        Ok(())
    }
}

/// The replay loop: passes over the loadfile until the meter says stop.
fn replay(sh: &Shared, ctl: &Control, meter: &mut WorkerMeter, r: &mut dyn Replayer) -> Option<EngineError> {
    loop {
        for (i, op) in sh.lf.ops.iter().enumerate() {
            if !meter.tick(ctl) || sh.failed.load(Ordering::Relaxed) {
                return None;
            }
            let start = Instant::now();
            match r.run(i, op) {
                Ok(bytes) => {
                    let ns = start.elapsed().as_nanos() as u64;
                    let (rd, wr) = match op.kind {
                        OpKind::ReadX { .. } => (bytes, 0),
                        OpKind::WriteX { .. } => (0, bytes),
                        _ => (0, 0),
                    };
                    meter.count(ctl, op.kind.name(), ns, bytes as f64, rd, wr);
                }
                Err(e) => {
                    sh.failed.store(true, Ordering::Relaxed);
                    return Some(e);
                }
            }
        }
        if let Err(e) = r.end_pass() {
            sh.failed.store(true, Ordering::Relaxed);
            return Some(e);
        }
    }
}

/// A client that executes its ops itself (dbench's one process per client).
pub fn plain_client(id: usize, sh: &Shared, ctl: &Control, gate: &StartGate) -> ClientOutcome {
    let mut direct = Direct(Executor::new(&sh.lf, &sh.root, id, sh.cfg));
    let mut meter = WorkerMeter::new();
    let fatal = if gate.arrive() { replay(sh, ctl, &mut meter, &mut direct) } else { None };
    ClientOutcome { meters: vec![meter], errors: direct.0.errors, fatal }
}

/// A client as a reader/executor pair over two message queues.
pub fn mq_client(id: usize, sh: &Shared, ctl: &Control, gate: &StartGate) -> ClientOutcome {
    let queues = Queue::create(id, "req").and_then(|req| Ok((req, Queue::create(id, "rep")?)));
    let (req, rep) = match queues {
        Ok(q) => q,
        Err(e) => {
            sh.failed.store(true, Ordering::Relaxed);
            gate.arrive();
            return ClientOutcome { meters: Vec::new(), errors: 0, fatal: Some(e) };
        }
    };
    std::thread::scope(|s| {
        let exec = std::thread::Builder::new()
            .name(format!("fs-exec{id}"))
            .stack_size(256 << 10)
            .spawn_scoped(s, || executor_loop(id, sh, ctl, &req, &rep));
        let exec = match exec {
            Ok(h) => h,
            Err(e) => {
                sh.failed.store(true, Ordering::Relaxed);
                gate.arrive();
                let fatal = EngineError::io("cannot start an executor thread", &sh.root, e);
                return ClientOutcome { meters: Vec::new(), errors: 0, fatal: Some(fatal) };
            }
        };
        let mut meter = WorkerMeter::new();
        let mut reader = MqReader { req: &req, rep: &rep };
        let reader_err = if gate.arrive() { replay(sh, ctl, &mut meter, &mut reader) } else { None };
        drop(reader); // sends STOP
        let mut meters = vec![meter];
        let (errors, exec_fatal) = match exec.join() {
            Ok(out) => {
                meters.push(out.meter);
                (out.errors, out.fatal)
            }
            Err(_) => (0, Some(EngineError::Failed(format!("fileserver: executor of client {id} panicked")))),
        };
        ClientOutcome { meters, errors, fatal: exec_fatal.or(reader_err) }
    })
}
