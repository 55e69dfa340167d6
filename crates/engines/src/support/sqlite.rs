//! Embedded SQLite as the database engines (`oltp`, `analytics`) run it: one file, WAL mode,
//! synchronous=NORMAL, a 30 s busy timeout so that writers queue instead of failing, and a
//! statement cache big enough for every prepared statement of a worker.

use rusqlite::Connection;
use std::path::Path;
use std::time::Duration;

/// Opens (creating) the database at `path` with those settings; the error says which step
/// failed.
pub fn open(path: &Path) -> Result<Connection, String> {
    let fatal = |context: &'static str| move |e: rusqlite::Error| format!("SQLite {context}: {e}");
    let c = Connection::open(path).map_err(fatal("cannot open the database"))?;
    c.busy_timeout(Duration::from_secs(30)).map_err(fatal("busy_timeout"))?;
    c.pragma_update(None, "journal_mode", "WAL").map_err(fatal("journal_mode=WAL"))?;
    c.pragma_update(None, "synchronous", "NORMAL").map_err(fatal("synchronous"))?;
    c.set_prepared_statement_cache_capacity(128);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn databases_open_in_wal_mode_and_failures_name_the_step() {
        let dir = tempfile::tempdir().expect("tmp");
        let c = open(&dir.path().join("t.sqlite")).expect("open");
        let mode: String = c.pragma_query_value(None, "journal_mode", |r| r.get(0)).expect("pragma");
        assert_eq!(mode.to_ascii_lowercase(), "wal");
        let sync: i64 = c.pragma_query_value(None, "synchronous", |r| r.get(0)).expect("pragma");
        assert_eq!(sync, 1, "NORMAL");
        let e = open(&dir.path().join("absent/t.sqlite")).expect_err("no such directory");
        assert!(e.starts_with("SQLite cannot open the database: "), "{e}");
    }
}
