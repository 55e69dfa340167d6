//! Cells kept outside the store (format `racehorse-cell`, docs/formats.md): a measured
//! cell the store refused (a full disk, a damaged file) is written as JSON beside the
//! store, else in the temporary directory, whole or not at all, and `racehorse import`
//! loads it into its run later. Since version 2 a kept cell names its run by uuid, so it
//! goes into that run or is refused, and a position already stored is never stored twice
//! (issue 47, case 5).

use crate::error::{Result, StoreError};
use crate::store::Store;
use racehorse_core::CellResult;
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The `format` of a kept cell.
pub const SPILL_FORMAT: &str = "racehorse-cell";
/// The version written: 2 names the run by uuid; 1 named the store's path only.
pub const SPILL_VERSION: u64 = 2;

/// A kept cell read back.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptCell {
    /// The store it was kept for, as that run named it.
    pub store: Option<String>,
    /// The run's uuid (version 2 on).
    pub run_uuid: Option<String>,
    /// The run's id in the store it was kept for.
    pub run_id: i64,
    /// The cell's position in its run.
    pub idx: usize,
    pub cell: CellResult,
}

/// What [`Store::import_kept`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptOutcome {
    /// Stored into this run (its id here) at its position.
    Stored(i64),
    /// That position of the run (its id here) already holds a cell: nothing was written.
    AlreadyStored(i64),
}

/// Writes `cell`, position `idx` of run `run_id` (uuid `run_uuid`) that `store` refused,
/// to `STORE.spill/` or else `$TMPDIR/racehorse-spill/`: the first place that takes the
/// whole file. Returns the file, or every place tried and why it failed.
pub fn keep_cell(
    store: &Path,
    run_id: i64,
    run_uuid: &str,
    idx: usize,
    cell: &CellResult,
) -> std::result::Result<PathBuf, Vec<(PathBuf, std::io::Error)>> {
    let doc = serde_json::json!({
        "format": SPILL_FORMAT,
        "version": SPILL_VERSION,
        "store": store.display().to_string(),
        "run_uuid": run_uuid,
        "run_id": run_id,
        "idx": idx,
        "cell": cell,
    });
    let name = format!("run{run_id}-cell{idx}-{}.json", std::process::id());
    let beside = PathBuf::from(format!("{}.spill", store.display()));
    let mut tries = Vec::new();
    for dir in [beside, std::env::temp_dir().join("racehorse-spill")] {
        let file = dir.join(&name);
        let wrote = std::fs::create_dir_all(&dir)
            .and_then(|_| crate::files::write_atomic(&file, doc.to_string().as_bytes()));
        match wrote {
            Ok(()) => return Ok(file),
            Err(e) => tries.push((file, e)),
        }
    }
    Err(tries)
}

/// Reads a kept cell (`doc` has format [`SPILL_FORMAT`]); the error says what is wrong.
pub fn read_kept(doc: &Json) -> std::result::Result<KeptCell, String> {
    let version = doc["version"].as_u64().filter(|v| (1..=SPILL_VERSION).contains(v));
    let version = version
        .ok_or_else(|| format!("kept cell version {} is not known to this racehorse", doc["version"]))?;
    let run_uuid = match doc["run_uuid"].as_str() {
        Some(u) if crate::fleet::is_uuid(u) => Some(u.to_ascii_lowercase()),
        _ if version >= 2 => return Err("run_uuid: missing or not a UUID".into()),
        _ => None,
    };
    let run_id = doc["run_id"].as_i64().ok_or("no run_id")?;
    let idx = doc["idx"].as_u64().and_then(|i| usize::try_from(i).ok()).ok_or("no idx")?;
    let cell: CellResult = serde_json::from_value(doc["cell"].clone()).map_err(|e| format!("cell: {e}"))?;
    if let Some(why) = crate::limits::cell_problem(&cell) {
        return Err(format!("cell: {why}"));
    }
    Ok(KeptCell { store: doc["store"].as_str().map(str::to_string), run_uuid, run_id, idx, cell })
}

/// The same file, seen through links and relative paths.
fn same_file(a: &str, b: &str) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

impl Store {
    /// The run a kept cell belongs to in this store: the run with its uuid, or for a
    /// version 1 file, the run with its id when the file was kept for this very store.
    fn kept_run(&self, kept: &KeptCell) -> Result<i64> {
        let found = match &kept.run_uuid {
            Some(uuid) => {
                self.conn.query_row("SELECT id FROM runs WHERE uuid = ?1", [uuid], |r| r.get(0)).optional()?
            }
            None if kept.store.as_deref().is_some_and(|s| same_file(s, self.path())) => {
                self.run(kept.run_id)?.map(|r| r.id)
            }
            None => None,
        };
        found.ok_or_else(|| StoreError::NotItsStore {
            run: kept.run_uuid.clone().unwrap_or_else(|| format!("run {}", kept.run_id)),
            kept_for: kept.store.clone().unwrap_or_else(|| "an unnamed store".into()),
            store: self.path().to_string(),
        })
    }

    /// Stores a kept cell into its run at its position, in one transaction, unless that
    /// position already holds a cell (a copy of the file imported again).
    pub fn import_kept(&self, kept: &KeptCell) -> Result<KeptOutcome> {
        let run_id = self.kept_run(kept)?;
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let idx = i64::try_from(kept.idx).unwrap_or(i64::MAX);
        let taken: i64 = tx.query_row(
            "SELECT count(*) FROM cells WHERE run_id = ?1 AND idx = ?2",
            params![run_id, idx],
            |r| r.get(0),
        )?;
        if taken > 0 {
            return Ok(KeptOutcome::AlreadyStored(run_id));
        }
        let cell_id = crate::cells::insert_cell_row(&tx, run_id, kept.idx, &kept.cell)?;
        crate::cells::insert_samples(&tx, cell_id, &kept.cell.samples)?;
        crate::cells::insert_latencies(&tx, cell_id, &kept.cell.latencies)?;
        tx.commit()?;
        Ok(KeptOutcome::Stored(run_id))
    }
}

#[cfg(test)]
#[path = "spill_tests.rs"]
mod tests;
