//! Errors of the central store, each saying what the user can do; `is_usage` tells the
//! binary which are usage errors (exit 2).

use std::path::PathBuf;

/// Everything that can go wrong with the central database or the files loaded into it.
#[derive(Debug, thiserror::Error)]
pub enum CentralError {
    /// The database URL cannot be understood.
    #[error("--db {url}: {why}; write it as postgres://USER@HOST:PORT/DB[?sslmode=require]")]
    Url { url: String, why: String },

    /// No connection (server down, refused login, TLS).
    #[error("cannot connect to {url}: {why}")]
    Connect { url: String, why: String },

    /// A statement failed.
    #[error("{doing}: {why}")]
    Sql { doing: String, why: String },

    /// The central schema is newer than this racehorse.
    #[error(
        "the central database has schema version {found} but this racehorse knows versions up to \
         {known}: it was migrated by a newer racehorse; upgrade racehorse"
    )]
    TooNew { found: i32, known: i32 },

    /// A file given to `load` is not something it can load (unknown export version, not JSON).
    #[error("{}: {why}", path.display())]
    Input { path: PathBuf, why: String },

    /// A run key matched nothing, or several runs.
    #[error("{0}")]
    UnknownRun(String),

    /// Reading a SQLite store or building the in-memory copy failed.
    #[error("{0}")]
    Store(#[from] racehorse_store::StoreError),
}

impl CentralError {
    /// Whether this is the user's to fix (exit 2): a bad URL, file or run key.
    pub fn is_usage(&self) -> bool {
        matches!(self, CentralError::Url { .. } | CentralError::Input { .. } | CentralError::UnknownRun(_))
    }
}

/// A PostgreSQL error as the server said it (message, detail, hint), else the client's text.
pub fn pg_why(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{} ({})", db.message(), db.code().code());
            if let Some(d) = db.detail() {
                s.push_str(&format!("; {d}"));
            }
            if let Some(h) = db.hint() {
                s.push_str(&format!("; hint: {h}"));
            }
            s
        }
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(&format!(": {inner}"));
                src = inner.source();
            }
            s
        }
    }
}

/// Wraps a failed statement with what was being done.
pub fn sql(doing: impl Into<String>) -> impl FnOnce(postgres::Error) -> CentralError {
    let doing = doing.into();
    move |e| CentralError::Sql { doing, why: pg_why(&e) }
}
