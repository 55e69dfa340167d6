//! The `fileserver` engine: dbench 4.0's `fileio` load in Rust. N clients replay a
//! client.txt-style loadfile (or our built-in one) at full speed, each in its own
//! `clients/client<id>` tree; throughput is ReadX+WriteX payload bytes in the window.

mod builtin;
mod client;
mod exec;
pub mod loadfile;
mod mq;
mod procs;
mod procs_child;

use crate::info::{shortcuts, EngineInfo};
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptKind, OptionSpec, Recorder,
    SummaryArea, Workload,
};
use client::{mq_client, plain_client, ClientOutcome, Shared, StartGate};
use exec::ExecConfig;
use loadfile::Loadfile;
use racehorse_core::WorkUnit;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub struct FileServer;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "clients",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "number of clients replaying the loadfile at once (dbench's N)",
    },
    OptionSpec {
        name: "loadfile",
        kind: OptKind::Str,
        default: "",
        help: "dbench loadfile (client.txt format, e.g. /usr/share/dbench/client.txt); empty = built-in",
    },
    OptionSpec {
        name: "ipc",
        kind: OptKind::Choice(&["none", "mq", "mq_procs"]),
        default: "none",
        help: "none: each client runs its ops; mq: reader + executor threads per client over POSIX message queues; mq_procs: the same as two processes per client (seed 003)",
    },
    OptionSpec {
        name: "sync_open",
        kind: OptKind::Bool,
        default: "false",
        help: "open files with O_SYNC (dbench -s)",
    },
    OptionSpec {
        name: "fsync_dirs",
        kind: OptKind::Bool,
        default: "false",
        help: "fdatasync the parent directory after unlink, rmdir and rename (dbench -S)",
    },
    OptionSpec {
        name: "fsync_writes",
        kind: OptKind::Bool,
        default: "false",
        help: "fsync after every write (dbench -F)",
    },
];

/// The figures a cell records beside its bytes.
const FIGURES: &[Figure] = &[
    Figure::info("errors", "operations that failed", "count"),
    Figure::info("client_processes", "client processes that reported", "processes"),
];

/// What `FileServer` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "fileserver",
    about: "dbench-like file-server load: clients replay a NetBench loadfile (MB/s of read+write payload)",
    area: "File server",
    summary_area: AreaRule::Fixed(SummaryArea::ScalingCpuAndProcesses),
    unit: WorkUnit::Bytes,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::CLIENTS],
};

impl Engine for FileServer {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let clients = ctx.get_u64("clients")? as usize;
        if !(1..=4096).contains(&clients) {
            return Err(EngineError::Usage(format!("option 'clients': {clients} is outside 1..4096")));
        }
        let path = match ctx.spec.params.get("loadfile") {
            None => String::new(),
            Some(_) => ctx.get_str("loadfile")?.to_string(),
        };
        let ipc = match ctx.get_str("ipc")? {
            "none" => Ipc::None,
            "mq" => Ipc::MqThreads,
            "mq_procs" => Ipc::MqProcs,
            other => {
                return Err(EngineError::Usage(format!(
                    "option 'ipc': '{other}' is not one of none, mq, mq_procs"
                )))
            }
        };
        let cfg = ExecConfig {
            sync_open: ctx.get_bool("sync_open")?,
            fsync_dirs: ctx.get_bool("fsync_dirs")?,
            fsync_writes: ctx.get_bool("fsync_writes")?,
        };
        let lf = load(&path)?;
        probe_writable(&ctx.work_dir)?;
        crate::support::fd_limit::raise_fd_limit(clients * (lf.max_open + 8) + 64);
        if ipc == Ipc::MqProcs {
            mq::remove_leftovers();
        }
        Ok(Box::new(FileServerCell { lf: Arc::new(lf), root: ctx.work_dir.clone(), clients, ipc, cfg }))
    }
}

/// Reads and parses the loadfile (`""` = the built-in one).
fn load(path: &str) -> Result<Loadfile, EngineError> {
    if path.is_empty() {
        let text = builtin::generate(builtin::SEED, builtin::TARGET_OPS);
        return loadfile::parse(&text).map_err(|e| EngineError::Usage(e.render("builtin loadfile")));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| EngineError::io("cannot read the loadfile (option 'loadfile')", path, e))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(EngineError::Usage(format!(
            "{path}: gzip-compressed loadfiles are not read; gunzip it first"
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    loadfile::parse(&text).map_err(|e| EngineError::Usage(e.render(path)))
}

/// Fails early, with advice, when the work directory cannot take files.
fn probe_writable(dir: &Path) -> Result<(), EngineError> {
    let probe = dir.join(".fileserver-probe");
    let res = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"x"));
    let _ = std::fs::remove_file(&probe);
    res.map_err(|e| {
        let what = if e.raw_os_error() == Some(libc::ENOSPC) {
            "the work directory's filesystem is full: free space or choose another directory"
        } else {
            "cannot create files in the work directory: choose a writable directory on a filesystem with free space"
        };
        EngineError::io(what, dir, e)
    })
}

/// How a client's two halves (reading the loadfile, running the ops) are arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ipc {
    /// One thread per client does both.
    None,
    /// A reader and an executor thread per client over two POSIX message queues.
    MqThreads,
    /// A reader and an executor process per client over two POSIX message queues.
    MqProcs,
}

struct FileServerCell {
    lf: Arc<Loadfile>,
    root: PathBuf,
    clients: usize,
    ipc: Ipc,
    cfg: ExecConfig,
}

impl FileServerCell {
    fn spawn_all(&self, sh: &Shared, ctl: &Control) -> (Result<(), EngineError>, Vec<ClientOutcome>) {
        let gate = StartGate::default();
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(self.clients);
            let mut spawn_err = None;
            for id in 0..self.clients {
                let (sh, gate) = (sh, &gate);
                let body = move || {
                    if self.ipc == Ipc::MqThreads {
                        mq_client(id, sh, ctl, gate)
                    } else {
                        plain_client(id, sh, ctl, gate)
                    }
                };
                match std::thread::Builder::new()
                    .name(format!("fs-client{id}"))
                    .stack_size(256 << 10)
                    .spawn_scoped(s, body)
                {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        spawn_err = Some(EngineError::io("cannot start a client thread", &self.root, e));
                        break;
                    }
                }
            }
            gate.release(handles.len(), spawn_err.is_none());
            let res = match spawn_err {
                Some(e) => Err(e),
                None => ctl.drive_window_until_failed(&sh.failed),
            };
            if res.is_err() {
                ctl.stop();
            }
            let outcomes = handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| ClientOutcome {
                        meters: Vec::new(),
                        errors: 0,
                        fatal: Some(EngineError::Failed("fileserver: a client thread panicked".into())),
                    })
                })
                .collect();
            (res, outcomes)
        })
    }
}

impl Workload for FileServerCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let sh = Shared {
            lf: self.lf.clone(),
            root: self.root.clone(),
            cfg: self.cfg,
            failed: AtomicBool::new(false),
        };
        if self.ipc == Ipc::MqProcs {
            let (res, finished, cpu) = procs::run_processes(&sh, self.clients, ctl);
            let fatal = procs::record(finished, cpu, rec);
            return combine(res, fatal);
        }
        let (res, outcomes) = self.spawn_all(&sh, ctl);
        let mut errors = 0;
        let mut fatal = None;
        for o in outcomes {
            errors += o.errors;
            for m in o.meters {
                m.finish(rec);
            }
            if fatal.is_none() {
                fatal = o.fatal;
            }
        }
        rec.set_extra("errors", errors as f64);
        combine(res, fatal)
    }

    fn cleanup(self: Box<Self>) -> Result<(), EngineError> {
        let dir = self.root.join("clients");
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(EngineError::io("cannot remove the clients' files", dir, e))
            }
            _ => Ok(()),
        }
    }
}

/// The cell's outcome: an interrupt wins, then a client's fatal error, then the window's.
fn combine(res: Result<(), EngineError>, fatal: Option<EngineError>) -> Result<(), EngineError> {
    match (res, fatal) {
        (Err(EngineError::Interrupted), _) => Err(EngineError::Interrupted),
        (_, Some(f)) => Err(f),
        (res, None) => res,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_procs;
