//! Importing an export of a run the store already has: a later export of it (the run was
//! partial or still running when first exported) adds the cells not yet stored and the
//! run's new status, as `load` does in the central database (issue 47, case 4). A cell is
//! the same cell when its match key and repetition agree, counting repeats of that pair
//! in plan order; a cell already stored is never stored twice.

use crate::cells::{insert_cell_row, insert_latencies, insert_samples};
use crate::error::Result;
use crate::import::ExportedRun;
use crate::store::Store;
use racehorse_core::RunStatus;
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use std::collections::{HashMap, HashSet};

/// A cell's identity within its run: match key, repetition, and which repeat of that pair.
type CellKey = (String, u32, usize);

/// Numbers each (match key, repetition) pair's repeats in order.
fn keyed(pairs: impl IntoIterator<Item = (String, u32)>) -> Vec<CellKey> {
    let mut seen: HashMap<(String, u32), usize> = HashMap::new();
    pairs
        .into_iter()
        .map(|(key, rep)| {
            let n = seen.entry((key.clone(), rep)).or_insert(0);
            *n += 1;
            (key, rep, *n - 1)
        })
        .collect()
}

/// How far a run got: running, then stopped (interrupted), then finished (partial or
/// complete). An export whose run got further than the stored one brings its status.
fn rank(status: RunStatus) -> u8 {
    match status {
        RunStatus::Running => 0,
        RunStatus::Interrupted => 1,
        RunStatus::Partial | RunStatus::Complete => 2,
    }
}

/// What a merge changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Merged {
    pub cells_added: usize,
    /// The run's status or finish time changed.
    pub run_updated: bool,
}

impl Store {
    /// Adds to run `run_id` (the same run as `r`) the cells of `r` it does not have, and
    /// takes `r`'s status and finish time when it adds cells or its run got
    /// further (see [`rank`]); the run's tags are set to `r`'s. One transaction.
    pub(crate) fn merge_run(&self, run_id: i64, r: &ExportedRun) -> Result<Merged> {
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let stored: Vec<(String, u32, i64)> = tx
            .prepare("SELECT match_key, rep, idx FROM cells WHERE run_id = ?1 ORDER BY idx, id")?
            .query_map([run_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut taken: HashSet<i64> = stored.iter().map(|s| s.2).collect();
        let have: HashSet<CellKey> =
            keyed(stored.into_iter().map(|(k, rep, _)| (k, rep))).into_iter().collect();
        let mut next = taken.iter().max().map_or(0, |m| m + 1);
        let keys = keyed(r.cells.iter().map(|c| (c.spec.match_key(), c.spec.rep)));
        let mut cells_added = 0;
        for (i, (cell, key)) in r.cells.iter().zip(keys).enumerate() {
            if have.contains(&key) {
                continue;
            }
            // Its position in the export when free, else after every stored cell.
            let wanted = i64::try_from(i).unwrap_or(i64::MAX);
            let idx = if taken.contains(&wanted) { next } else { wanted };
            taken.insert(idx);
            next = next.max(idx + 1);
            let cell_id = insert_cell_row(&tx, run_id, usize::try_from(idx).unwrap_or(usize::MAX), cell)?;
            insert_samples(&tx, cell_id, &cell.samples)?;
            insert_latencies(&tx, cell_id, &cell.latencies)?;
            cells_added += 1;
        }
        let stored_status: Option<String> =
            tx.query_row("SELECT status FROM runs WHERE id = ?1", [run_id], |row| row.get(0)).optional()?;
        let further =
            stored_status.as_deref().and_then(RunStatus::parse).is_some_and(|s| rank(r.status) > rank(s));
        let run_updated = (cells_added > 0 || further)
            && tx.execute(
                "UPDATE runs SET status = ?1, finished_at_unix_s = ?2 WHERE id = ?3 \
                 AND (status, finished_at_unix_s) IS NOT (?1, ?2)",
                params![r.status.as_str(), r.finished_at_unix_s, run_id],
            )? > 0;
        for (k, v) in &r.run.tags {
            tx.execute(
                "INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                params![run_id, k, v],
            )?;
        }
        tx.commit()?;
        Ok(Merged { cells_added, run_updated })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{parse_export_value, Imported};
    use crate::testutil::{full_cell, new_run};

    /// Issue 47, case 4: an export of a partial run (3 cells), imported, then the finished
    /// export (8 cells): "already in the store; nothing imported" kept 3 of 8 cells.
    #[test]
    fn issue47_a_later_export_of_a_known_run_adds_its_cells_and_status() {
        let source = Store::open_in_memory().unwrap();
        let mut run = new_run("grows");
        run.tags = vec![("commit".into(), "abc".into())];
        let id = source.create_run(&run).unwrap();
        for i in 0..3 {
            source.insert_cell(id, i, &full_cell(i as u32 + 1)).unwrap();
        }
        let export = |s: &Store| {
            let info = s.run(id).unwrap().unwrap();
            let parts = crate::history_parts(s, &info).unwrap();
            parse_export_value(&crate::export_doc_with(&info, &parts, &s.run_cells(id).unwrap())).unwrap()
        };
        let partial = export(&source);
        for i in 3..8 {
            source.insert_cell(id, i, &full_cell(i as u32 + 1)).unwrap();
        }
        source.finish_run(id, RunStatus::Complete).unwrap();
        source.set_run_tags(id, &[("build".into(), "7".into())]).unwrap();
        let whole = export(&source);
        let here = Store::open_in_memory().unwrap();
        let Imported::New(mine) = here.import_run(&partial).unwrap() else { panic!("new") };
        assert_eq!(here.run_cells(mine).unwrap().len(), 3);
        assert_eq!(here.import_run(&whole).unwrap(), Imported::Updated { id: mine, cells_added: 5 });
        let info = here.run(mine).unwrap().unwrap();
        assert_eq!((info.status, info.cells_ok), (RunStatus::Complete, 8));
        assert_eq!(here.run_cells(mine).unwrap(), source.run_cells(id).unwrap());
        assert_eq!(here.run_tags(mine).unwrap().len(), 2, "tags merged");
        assert_eq!(here.import_run(&whole).unwrap(), Imported::AlreadyPresent(mine), "idempotent");
        assert_eq!(
            here.import_run(&partial).unwrap(),
            Imported::AlreadyPresent(mine),
            "an older one adds nothing"
        );
        assert_eq!(here.run(mine).unwrap().unwrap().status, RunStatus::Complete);
    }
}
