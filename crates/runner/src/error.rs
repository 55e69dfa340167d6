//! The runner's one error type: everything that stops a run, refuses one before it starts,
//! or fails a step of it (a variant's setting, a sink), with the process exit code of each
//! kind decided in one place, [`RunError::exit_code`]. The typed errors of the runner's
//! modules (a profiler that cannot work, a guest, volume or plugd variant that cannot run)
//! convert into it, keeping their cases for that decision.

use crate::guest_vm::GuestRefusal;
use crate::profile::ProfileError;
use crate::suite::variant::PlugdConfigError;
use crate::volume::VolumeRefusal;
use racehorse_engines::EngineError;
use racehorse_machine::{LockError, MachineError};
use racehorse_store::StoreError;
use std::fmt::Display;
use std::path::PathBuf;

/// The exit code of a run that could not put the machine back as it found it (documented in
/// docs/cli.md): distinct from 1 (failed cells) and from 128 + signal (stopped and restored).
pub const NOT_RESTORED_EXIT: u8 = 4;

/// Why a run, or a step of it, did not happen or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A bad request: a directory, variant, setting or cell that cannot work (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The machine refused what was asked for (a variant's setting, the memory limit, a cell
    /// its engine cannot run): a bad request whatever the cause (exit 2).
    #[error("{context}: {source}")]
    Refused { context: String, source: Box<RunError> },
    /// Another racehorse holds the machine (exit 75, "try again later").
    #[error(transparent)]
    Busy(LockError),
    /// A stop signal arrived before the run was recorded (exit 128 + signal).
    #[error("stopped by signal {signal} before the first cell; nothing was changed or is left changed")]
    Stopped { signal: i32, code: u8 },
    /// The machine could not be read, controlled or restored (exit 1).
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// Settings that did not read back with their values from before the run (exit 4).
    #[error(
        "the machine was not fully restored: {}; run `racehorse restore` or set them back by hand",
        .0.join("; ")
    )]
    NotRestored(Vec<String>),
    /// The Guard could not put the machine back (exit 4, never 128 + signal, which says the
    /// machine was restored): what failed, which signal had stopped the run, and where what
    /// is left is kept for `racehorse restore`.
    #[error(
        "{}the machine was NOT restored: {source}; what is left changed is kept in {}: run `racehorse \
         restore` to put it back",
        .signal.map(|s| format!("stopped by signal {s}, but ")).unwrap_or_default(),
        .state_file.display()
    )]
    RestoreFailed { source: MachineError, signal: Option<i32>, state_file: PathBuf },
    /// An engine refused or failed (exit 2 for a bad option or a missing tool, else 1).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// `--profile` cannot work here: its settings, perf or the kernel refuse (exit 2), or its
    /// scratch directory cannot be made (exit 1).
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// Cells with `where = "guest"` cannot run here: KVM, QEMU or a guest kernel is missing
    /// (exit 2).
    #[error(transparent)]
    Guest(#[from] GuestRefusal),
    /// A variant's volume cannot be built here: the kernel, a tool or a device refuses (exit 2).
    #[error("volume: {0}")]
    Volume(#[from] VolumeRefusal),
    /// A plugd variant's configuration cannot be used (exit 2).
    #[error(transparent)]
    Plugd(#[from] PlugdConfigError),
    /// The store failed (exit 1); finished cells are stored.
    #[error(transparent)]
    Store(Box<StoreError>),
    /// The store refused a measured cell; `kept` says where it was written instead (exit 1).
    #[error("cannot store cell {cell}: {source}; {kept}")]
    CellNotStored { cell: String, source: Box<StoreError>, kept: String },
    /// A cell could be written nowhere: each place tried and why (exit 1).
    #[error("{}", .tries.iter().map(|(p, e)| format!("{}: {e}", p.display())).collect::<Vec<_>>().join("; "))]
    NotKept { tries: Vec<(PathBuf, std::io::Error)> },
    /// A file or directory the run needs (exit 1).
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    /// The event stream could not be written (exit 1).
    #[error(transparent)]
    Output(#[from] std::io::Error),
    /// The run stopped after it was recorded (exit 1): why, and whether marking it finished
    /// failed too.
    #[error(
        "run {run_id} stopped: {source} (earlier cells are stored){}",
        .unfinished.as_ref().map(|f| format!("; marking the run finished: {f}")).unwrap_or_default()
    )]
    RunStopped { run_id: i64, source: Box<RunError>, unfinished: Option<Box<StoreError>> },
    /// What was being done when `source` happened (the exit code is the source's).
    #[error("{context}: {source}")]
    Context { context: String, source: Box<RunError> },
}

impl From<StoreError> for RunError {
    fn from(e: StoreError) -> RunError {
        RunError::Store(Box::new(e))
    }
}

impl RunError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Usage(_) | RunError::Refused { .. } => 2,
            RunError::Busy(_) => 75,
            RunError::Stopped { code, .. } => *code,
            RunError::Engine(EngineError::Usage(_) | EngineError::ToolMissing { .. }) => 2,
            RunError::Profile(ProfileError::TempDir(_)) => 1,
            RunError::Profile(_) | RunError::Guest(_) | RunError::Volume(_) | RunError::Plugd(_) => 2,
            RunError::Context { source, .. } => source.exit_code(),
            RunError::NotRestored(_) | RunError::RestoreFailed { .. } => NOT_RESTORED_EXIT,
            RunError::Machine(_)
            | RunError::Engine(_)
            | RunError::Store(_)
            | RunError::CellNotStored { .. }
            | RunError::NotKept { .. }
            | RunError::Io { .. }
            | RunError::Output(_)
            | RunError::RunStopped { .. } => 1,
        }
    }

    /// "context: self", keeping this error's kind (and exit code).
    pub fn in_context(self, context: impl Display) -> RunError {
        RunError::Context { context: context.to_string(), source: Box::new(self) }
    }

    /// This error as a refusal of `context` (exit 2): "context: self".
    pub fn refused(self, context: impl Display) -> RunError {
        RunError::Refused { context: context.to_string(), source: Box::new(self) }
    }

    /// An I/O error on `what` (a path or a description of it).
    pub fn io(what: impl Display, source: std::io::Error) -> RunError {
        RunError::Io { what: what.to_string(), source }
    }
}

/// Says what was being done when an error happened, keeping its kind (and exit code).
pub(crate) trait Context<T> {
    /// `Err(e)` becomes "context: e".
    fn context(self, context: impl Display) -> Result<T, RunError>;
    /// Like [`Context::context`], with the context built only on error.
    fn with_context<C: Display>(self, context: impl FnOnce() -> C) -> Result<T, RunError>;
}

impl<T, E: Into<RunError>> Context<T> for Result<T, E> {
    fn context(self, context: impl Display) -> Result<T, RunError> {
        self.with_context(|| context)
    }

    fn with_context<C: Display>(self, context: impl FnOnce() -> C) -> Result<T, RunError> {
        self.map_err(|e| e.into().in_context(context()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_message_and_the_exit_code() {
        let busy: Result<(), MachineError> = Err(MachineError::Invalid("no such CPU".into()));
        let e = busy.context("sysctl vm.x = 1").unwrap_err();
        assert_eq!((e.to_string().as_str(), e.exit_code()), ("sysctl vm.x = 1: no such CPU", 1));
        let e = e.refused("variant 'a'");
        assert_eq!((e.to_string().as_str(), e.exit_code()), ("variant 'a': sysctl vm.x = 1: no such CPU", 2));
        let tool: Result<(), EngineError> = Err(EngineError::Usage("bad".into()));
        assert_eq!(tool.context("cell").unwrap_err().exit_code(), 2);
    }

    /// Issue 46: the modules' typed errors keep their kind in the run's exit code, and their
    /// words in its message.
    #[test]
    fn typed_errors_of_the_modules_decide_their_exit_codes() {
        let scratch = ProfileError::TempDir(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(RunError::from(scratch).exit_code(), 1, "a scratch directory is not a usage error");
        let e = RunError::from(ProfileError::NotPermitted { paranoid: 2 });
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("--profile: system-wide sampling"), "{e}");
        let e = RunError::from(GuestRefusal::NoQemu).in_context("cells");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("qemu-system-x86_64 is not on PATH"), "{e}");
        let e = RunError::from(VolumeRefusal::ToolMissing { kind: "md-raid0".into(), tool: "mdadm" });
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.refused("variant 'md'").to_string(),
            "variant 'md': volume: md-raid0 needs `mdadm` on PATH; install it (lvm2, mdadm, btrfs-progs, \
             util-linux)"
        );
        let e = RunError::from(PlugdConfigError::Rules {
            file: "p.conf".into(),
            line: 3,
            column: 7,
            message: "unknown variable".into(),
        });
        assert_eq!(
            (e.to_string().as_str(), e.exit_code()),
            ("plugd: p.conf: line 3, column 7: unknown variable", 2)
        );
    }
}
