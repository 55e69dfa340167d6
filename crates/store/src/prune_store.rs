//! `racehorse prune` on a SQLite store: the runs as the planner ([`crate::prune`]) sees
//! them, what guards them (the ledger, bisects, a run still being written), their removal in
//! one transaction (cells, samples, latencies, profiles, environment and tags go with a run:
//! the schema's foreign keys cascade; a bisect step's run becomes NULL), the cells they kept
//! beside the store or in the temporary directory, and `VACUUM`.

use crate::error::Result;
use crate::prune::{guard, Candidate, Guards, KeptBecause};
use crate::store::Store;
use rusqlite::TransactionBehavior;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What a removal did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    pub runs: u64,
    pub cells: u64,
}

impl Store {
    /// Every run as a prune [`Candidate`], with the points of its cells when `points` is set
    /// (only `--keep-last` needs them).
    pub fn prune_candidates(&self, points: bool) -> Result<Vec<Candidate>> {
        let mut tags = self.all_run_tags()?;
        let mut by_run: HashMap<i64, BTreeSet<String>> = HashMap::new();
        if points {
            let mut stmt = self.conn.prepare("SELECT DISTINCT run_id, match_key FROM cells")?;
            for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
                let (run, key) = row?;
                by_run.entry(run).or_default().insert(key);
            }
        }
        let runs = self.list_runs()?;
        Ok(runs
            .into_iter()
            .map(|r| Candidate {
                tags: tags.remove(&r.id).unwrap_or_default(),
                points: by_run.remove(&r.id).unwrap_or_default(),
                cells: u64::from(r.cells_ok) + u64::from(r.cells_failed),
                uuid: r.uuid,
                id: r.id,
                label: r.label,
                host: r.host,
                inventory_name: r.inventory_name,
                started_at_unix_s: r.started_at_unix_s,
            })
            .collect())
    }

    /// What keeps runs: the ledger's change points (before and after runs), bisect steps,
    /// and runs still `running` (a live process writes them; dead ones were marked
    /// interrupted when the store was opened).
    pub fn prune_guards(&self) -> Result<Guards> {
        let mut guards = Guards::new();
        let mut stmt =
            self.conn.prepare("SELECT id, before_run_uuid, after_run_uuid FROM change_points ORDER BY id")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?;
        for row in rows {
            let (id, before, after) = row?;
            guard(&mut guards, &before, KeptBecause::ChangePoint { id, side: "before" });
            guard(&mut guards, &after, KeptBecause::ChangePoint { id, side: "after" });
        }
        let mut stmt = self.conn.prepare(
            "SELECT DISTINCT s.bisect_id, r.uuid FROM bisect_steps s JOIN runs r ON r.id = s.run_id \
             ORDER BY s.bisect_id",
        )?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
            let (id, uuid) = row?;
            guard(&mut guards, &uuid, KeptBecause::Bisect { id });
        }
        let mut stmt = self.conn.prepare("SELECT uuid FROM runs WHERE status = 'running'")?;
        for uuid in stmt.query_map([], |r| r.get::<_, String>(0))? {
            guard(&mut guards, &uuid?, KeptBecause::Running);
        }
        Ok(guards)
    }

    /// Removes the runs `uuids` and everything that hangs off them, all in one transaction:
    /// either every run goes or none does.
    pub fn remove_runs(&self, uuids: &[String]) -> Result<Removed> {
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let mut removed = Removed::default();
        for uuid in uuids {
            let cells: i64 = tx.query_row(
                "SELECT count(*) FROM cells WHERE run_id = (SELECT id FROM runs WHERE uuid = ?1)",
                [uuid],
                |r| r.get(0),
            )?;
            // cells → samples and latencies, and run_tags cascade; bisect_steps.run_id is set NULL.
            let n = tx.execute("DELETE FROM runs WHERE uuid = ?1", [uuid])?;
            removed.runs += n as u64;
            removed.cells += u64::try_from(cells).unwrap_or(0) * n as u64;
        }
        tx.commit()?;
        Ok(removed)
    }

    /// Rewrites the database file without its free pages (SQLite's `VACUUM`), then folds the
    /// write-ahead log back in, so that the file on disk shrinks.
    pub fn vacuum(&self) -> Result<()> {
        self.conn.execute_batch("VACUUM")?;
        self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }
}

/// Removes the cells kept outside the store (`crate::spill`) for the runs `uuids`: the
/// files beside `store` (`STORE.spill/`) and in `$TMPDIR/racehorse-spill/` whose run uuid is
/// one of them. Returns the files removed; a file that cannot be read is left alone.
pub fn remove_kept_cells(store: &Path, uuids: &BTreeSet<String>) -> Vec<PathBuf> {
    let beside = PathBuf::from(format!("{}.spill", store.display()));
    let mut removed = Vec::new();
    for dir in [beside, std::env::temp_dir().join("racehorse-spill")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for file in entries.flatten().map(|e| e.path()) {
            if file.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let uuid = std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|d| d["run_uuid"].as_str().map(str::to_ascii_lowercase));
            if uuid.is_some_and(|u| uuids.contains(&u)) && std::fs::remove_file(&file).is_ok() {
                removed.push(file);
            }
        }
    }
    removed
}

/// The bytes a store takes on disk: the file and its write-ahead log.
pub fn store_bytes(store: &Path) -> u64 {
    let size = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    size(store.to_path_buf()) + size(PathBuf::from(format!("{}-wal", store.display())))
}
