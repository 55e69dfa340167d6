//! The error type of racehorse-machine: every variant says which file or setting failed and what to do.

use std::path::PathBuf;

/// Errors from reading or controlling the machine.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// A file could not be read or written.
    #[error("cannot access {path}: {source} (check that it exists and that racehorse may read/write it; changes need root)")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file had an unexpected format.
    #[error("cannot parse {path} line {line}: {msg} (unexpected kernel file format; please report it)")]
    Parse { path: PathBuf, line: usize, msg: String },
    /// A request that cannot be satisfied on this machine (e.g. more CPUs than exist).
    #[error("{0}")]
    Invalid(String),
    /// The operation needs privileges or an interface that is not available.
    #[error("not permitted: {0}")]
    NotPermitted(String),
    /// The restore state file is unreadable or belongs to a live process.
    #[error("restore state file {path}: {msg}")]
    State { path: PathBuf, msg: String },
}

impl MachineError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MachineError::Io { path: path.into(), source }
    }

    /// A parse error; `path` may be a placeholder that a reader replaces with [`MachineError::at_path`].
    pub fn parse(path: impl Into<PathBuf>, line: usize, msg: impl Into<String>) -> Self {
        MachineError::Parse { path: path.into(), line, msg: msg.into() }
    }

    /// Replaces the path of a parse error with the file actually read.
    pub fn at_path(self, real: impl Into<PathBuf>) -> Self {
        match self {
            MachineError::Parse { line, msg, .. } => MachineError::Parse { path: real.into(), line, msg },
            other => other,
        }
    }
}
