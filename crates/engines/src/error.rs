//! Errors an engine reports; the runner marks the cell failed and keeps going.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A bad option value or combination; the message says which and what is allowed.
    #[error("{0}")]
    Usage(String),
    #[error("{context} ({path}): {source}")]
    Io {
        context: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("'{tool}' is not installed: {hint}")]
    ToolMissing { tool: String, hint: String },
    #[error("{0}")]
    Failed(String),
    #[error("interrupted")]
    Interrupted,
}

impl EngineError {
    pub fn io(context: impl Into<String>, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EngineError::Io { context: context.into(), path: path.into(), source }
    }
}

/// Program output in error messages: the one implementation is in racehorse-core (the
/// PostgreSQL cluster quotes its programs too).
pub(crate) use racehorse_core::text::bounded_output;
