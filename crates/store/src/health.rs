//! Checks a store before anything is written to it: SQLite's quick check over every page, so
//! that a damaged store is refused before a run measures anything (a cell stored into a
//! damaged file could never be read back), with what the user can do about it.

use crate::error::{Result, StoreError};
use rusqlite::{Connection, ErrorCode};

/// Most problems the quick check lists in the error (it stops after as many).
const MAX_PROBLEMS: usize = 3;

/// How much of the store the check maps at most (SQLite caps it at its own limit).
const CHECK_MMAP_BYTES: u64 = 1 << 31;

/// Runs `PRAGMA quick_check` on `conn` (the store at `path`): Ok when SQLite answers "ok",
/// else [`StoreError::Damaged`] with the first problems it found; a file that is no SQLite
/// database at all is [`StoreError::NotAStore`].
pub fn quick_check(conn: &Connection, path: &str) -> Result<()> {
    // Through a memory map the kernel reads ahead: the check visits every page, and read one
    // 4 KiB page at a time a large store took five times as long (docs/formats.md, "Limits").
    let _ = conn.query_row(&format!("PRAGMA mmap_size = {CHECK_MMAP_BYTES}"), [], |_| Ok(()));
    let pragma = format!("PRAGMA quick_check({MAX_PROBLEMS})");
    let rows = conn.prepare(&pragma).and_then(|mut stmt| {
        stmt.query_map([], |row| row.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<String>>>()
    });
    let _ = conn.query_row("PRAGMA mmap_size = 0", [], |_| Ok(()));
    let problems = match rows {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => return Ok(()),
        Ok(rows) => rows,
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) => {
            let why = format!("not a SQLite database ({e})");
            return Err(StoreError::NotAStore { path: path.into(), why });
        }
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseCorrupt) => vec![e.to_string()],
        Err(e) => return Err(StoreError::Open { path: path.to_owned(), source: e }),
    };
    Err(StoreError::Damaged { path: path.to_owned(), detail: problems.join("; ") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use std::io::{Seek, SeekFrom, Write};

    /// A store with a few runs, closed (its write-ahead log folded into the file).
    fn store_with_runs(path: &std::path::Path) {
        let store = Store::open(path).unwrap();
        for i in 0..40 {
            let run = crate::testutil::new_run(&format!("run-{i}"));
            let id = store.create_run(&run).unwrap();
            store.insert_cell(id, 0, &crate::testutil::full_cell(1)).unwrap();
        }
    }

    #[test]
    fn a_sound_store_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ok.db");
        store_with_runs(&path);
        let conn = Connection::open(&path).unwrap();
        quick_check(&conn, "ok.db").unwrap();
    }

    /// Random bytes over the first page of the cells table (where every new cell goes).
    pub(crate) fn damage_cells_page(path: &std::path::Path) {
        let conn = Connection::open(path).unwrap();
        let page: u64 = conn
            .query_row("SELECT rootpage FROM sqlite_schema WHERE name = 'cells'", [], |r| r.get(0))
            .unwrap();
        let size: u64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        drop(conn);
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
        let mut rng = racehorse_core::rng::SplitMix64::new(47);
        let junk: Vec<u8> = (0..2000).map(|_| rng.next_u64() as u8).collect();
        f.write_all(&junk).unwrap();
    }

    /// Issue 47, case 2: random bytes over a page of the store; opening it to write is
    /// refused, saying what to do, where the unchecked store took a run and lost its cells.
    #[test]
    fn issue47_a_damaged_store_is_refused_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.db");
        store_with_runs(&path);
        damage_cells_page(&path);
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("is damaged") && msg.contains(".recover") && msg.contains("backup"), "{msg}");
    }
}
