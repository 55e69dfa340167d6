//! A bisect's record in the store: its definition (repository or values, good and bad, the
//! candidates in order, the build command, the run's arguments, the options), its status and
//! answer, and its steps (the run measuring a candidate, or a skipped candidate), from which
//! `bisect --resume` rebuilds where it stopped.

use crate::error::{Result, StoreError};
use crate::store::{now_unix_s, Store};
use rusqlite::{params, OptionalExtension, Row};

/// A bisect as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BisectRecord {
    pub id: i64,
    pub uuid: String,
    /// The git repository; None for a bisect over values.
    pub repo: Option<String>,
    pub good: String,
    pub bad: String,
    /// The candidates in order (commit shas, or values), JSON array of strings.
    pub candidates_json: String,
    pub build: Option<String>,
    /// The arguments of `racehorse run`, JSON array of strings.
    pub run_args_json: String,
    /// The search's options and the figure, JSON object.
    pub options_json: String,
    /// `running`, `found`, `no-difference`, `undecided`, `unmeasurable`, `failed`, `interrupted`.
    pub status: String,
    pub result_json: Option<String>,
    pub started_at_unix_s: i64,
    pub updated_at_unix_s: i64,
}

/// One step: candidate `candidate` measured by run `run_id`, or skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BisectStep {
    pub candidate: usize,
    pub run_id: Option<i64>,
    pub skipped: bool,
}

const COLUMNS: &str =
    "id, uuid, repo, good, bad, candidates_json, build, run_args_json, options_json, status, \
     result_json, started_at_unix_s, updated_at_unix_s";

fn from_row(r: &Row<'_>) -> rusqlite::Result<BisectRecord> {
    Ok(BisectRecord {
        id: r.get(0)?,
        uuid: r.get(1)?,
        repo: r.get(2)?,
        good: r.get(3)?,
        bad: r.get(4)?,
        candidates_json: r.get(5)?,
        build: r.get(6)?,
        run_args_json: r.get(7)?,
        options_json: r.get(8)?,
        status: r.get(9)?,
        result_json: r.get(10)?,
        started_at_unix_s: r.get(11)?,
        updated_at_unix_s: r.get(12)?,
    })
}

impl Store {
    /// Records a new bisect (status `running`); returns its id.
    pub fn create_bisect(&self, b: &BisectRecord) -> Result<i64> {
        let uuid = crate::fleet::new_uuid().map_err(StoreError::Random)?;
        let now = now_unix_s();
        self.conn.execute(
            "INSERT INTO bisects (uuid, repo, good, bad, candidates_json, build, run_args_json, options_json, \
             status, started_at_unix_s, updated_at_unix_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9, ?9)",
            params![uuid, b.repo, b.good, b.bad, b.candidates_json, b.build, b.run_args_json, b.options_json, now],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The bisect with this id.
    pub fn bisect(&self, id: i64) -> Result<Option<BisectRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM bisects WHERE id = ?1");
        Ok(self.conn.query_row(&sql, [id], from_row).optional()?)
    }

    /// Every bisect, newest first.
    pub fn bisects(&self) -> Result<Vec<BisectRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM bisects ORDER BY id DESC");
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Adds a step to bisect `id`.
    pub fn add_bisect_step(&self, id: i64, step: BisectStep) -> Result<()> {
        self.conn.execute(
            "INSERT INTO bisect_steps (bisect_id, candidate, run_id, skipped, at_unix_s) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, step.candidate as i64, step.run_id, i64::from(step.skipped), now_unix_s()],
        )?;
        Ok(())
    }

    /// The steps of bisect `id`, in order.
    pub fn bisect_steps(&self, id: i64) -> Result<Vec<BisectStep>> {
        let mut stmt = self.conn.prepare(
            "SELECT candidate, run_id, skipped FROM bisect_steps WHERE bisect_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(BisectStep {
                candidate: r.get::<_, i64>(0)? as usize,
                run_id: r.get(1)?,
                skipped: r.get::<_, i64>(2)? != 0,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Sets bisect `id`'s status and answer.
    pub fn finish_bisect(&self, id: i64, status: &str, result_json: Option<&str>) -> Result<()> {
        self.conn.execute(
            "UPDATE bisects SET status = ?2, result_json = coalesce(?3, result_json), updated_at_unix_s = ?4 WHERE id = ?1",
            params![id, status, result_json, now_unix_s()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bisect_and_its_steps_are_kept() {
        let s = Store::open_in_memory().unwrap();
        let rec = BisectRecord {
            id: 0,
            uuid: String::new(),
            repo: Some("/r".into()),
            good: "a".into(),
            bad: "c".into(),
            candidates_json: r#"["a","b","c"]"#.into(),
            build: Some("make".into()),
            run_args_json: r#"["null"]"#.into(),
            options_json: "{}".into(),
            status: String::new(),
            result_json: None,
            started_at_unix_s: 0,
            updated_at_unix_s: 0,
        };
        let id = s.create_bisect(&rec).unwrap();
        s.add_bisect_step(id, BisectStep { candidate: 0, run_id: None, skipped: false }).unwrap();
        s.add_bisect_step(id, BisectStep { candidate: 1, run_id: None, skipped: true }).unwrap();
        assert_eq!(s.bisect_steps(id).unwrap().len(), 2);
        assert!(s.bisect_steps(id).unwrap()[1].skipped);
        let got = s.bisect(id).unwrap().unwrap();
        assert_eq!((got.status.as_str(), got.repo.as_deref()), ("running", Some("/r")));
        s.finish_bisect(id, "found", Some("{}")).unwrap();
        assert_eq!(s.bisects().unwrap()[0].status, "found");
        assert!(s.finish_bisect(id, "nonsense", None).is_err(), "the status is checked");
    }
}
