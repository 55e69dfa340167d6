//! Errors of the store: what went wrong with the database, and what the user can do next.

use std::path::PathBuf;

/// Result of a store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Everything that can go wrong while opening, migrating, writing or reading the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory that should hold the database could not be created.
    #[error("cannot create the store directory {path}: {source}; choose another place with --db")]
    CreateDir { path: PathBuf, source: std::io::Error },

    /// The path given for the store is not a database file that can be read.
    #[error("{path}: {why}; choose the store with --db")]
    NotAStore { path: PathBuf, why: String },

    /// SQLite could not open or configure the database file.
    #[error("cannot open the store {path}: {source}")]
    Open { path: String, source: rusqlite::Error },

    /// The database was written by a newer racehorse whose schema this binary does not know.
    #[error(
        "the store {path} has schema version {found} but this racehorse knows versions up to \
         {known}: it was created by a newer racehorse; upgrade racehorse, or choose another \
         database with --db"
    )]
    TooNew { path: String, found: i64, known: i64 },

    /// SQLite's quick check found damage: nothing may be written to the store.
    #[error(
        "the store {path} is damaged (SQLite's quick check: {detail}); nothing was written to it. \
         Restore it from a backup, or save what is still readable with \
         `sqlite3 {path} .recover | sqlite3 {path}.recovered` and use --db {path}.recovered"
    )]
    Damaged { path: String, detail: String },

    /// A kept cell (`racehorse import`) whose run is not in this store.
    #[error(
        "the kept cell belongs to {run}, which is not in the store {store} (it was kept for \
         {kept_for}); import it into that store with --db"
    )]
    NotItsStore { run: String, kept_for: String, store: String },

    /// A schema migration step failed; the database stays at the previous version.
    #[error("cannot migrate the store {path} to schema version {version}: {source}")]
    Migration { path: String, version: i64, source: rusqlite::Error },

    /// A run id or label matched nothing.
    #[error("{}", unknown_run_message(key, suggestions))]
    UnknownRun { key: String, suggestions: Vec<String> },

    /// A value does not fit SQLite's signed 64-bit integers.
    #[error("{column} = {value} is larger than the store can hold ({max})", max = i64::MAX)]
    OutOfRange { column: &'static str, value: u64 },

    /// A stored row cannot be turned back into a result (hand-edited or damaged database).
    #[error("the store has an unreadable {table} row (id {id}): {detail}")]
    Corrupt { table: &'static str, id: i64, detail: String },

    /// No random bytes for a run's UUID.
    #[error("cannot read /dev/urandom for the run's UUID: {0}")]
    Random(std::io::Error),

    /// A tag that cannot be stored (see `tags::tag_problem`).
    #[error("{0}")]
    BadTag(String),

    /// No change point with this id in the ledger.
    #[error("no change point {0} in the ledger; list them with `racehorse alerts --all`")]
    UnknownChangePoint(i64),

    /// Any other SQLite failure.
    #[error("store database error: {0}")]
    Sqlite(#[from] rusqlite::Error),

    /// A JSON column could not be written.
    #[error("cannot encode a JSON column: {0}")]
    Json(#[from] serde_json::Error),
}

fn unknown_run_message(key: &str, suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        format!("no run with id or label '{key}'; list the stored runs with `racehorse list`")
    } else {
        format!(
            "no run with id or label '{key}'; did you mean {}? (list the stored runs with `racehorse list`)",
            suggestions.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_run_lists_suggestions() {
        let e = StoreError::UnknownRun { key: "basline".into(), suggestions: vec!["baseline".into()] };
        assert!(e.to_string().contains("did you mean 'baseline'?"), "{e}");
        let e = StoreError::UnknownRun { key: "zzz".into(), suggestions: vec![] };
        assert!(!e.to_string().contains("did you mean"), "{e}");
    }
}
