//! The ledger of change points: what `history` and `alerts` found, stored once per change
//! (found again, a point is updated in place), with a status a person sets (acknowledged with
//! a reason and a link, hidden) or the detector sets (reverted: a later segment came back).

use crate::error::{Result, StoreError};
use crate::store::{now_unix_s, Store};
use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

/// A change point's status in the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LedgerStatus {
    /// Found and not looked at yet: `alerts` lists it.
    New,
    /// Looked at and accepted (with a reason, maybe a link).
    Acknowledged,
    /// Not worth showing.
    Hidden,
    /// A later segment came back to the level before it.
    Reverted,
}

impl LedgerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerStatus::New => "new",
            LedgerStatus::Acknowledged => "acknowledged",
            LedgerStatus::Hidden => "hidden",
            LedgerStatus::Reverted => "reverted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::New, Self::Acknowledged, Self::Hidden, Self::Reverted].into_iter().find(|x| x.as_str() == s)
    }

    /// Set by a person (kept when the detector finds the point again).
    pub fn is_set_by_hand(self) -> bool {
        matches!(self, LedgerStatus::Acknowledged | LedgerStatus::Hidden)
    }
}

/// One change point of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePointRecord {
    /// The row id in this store (0 before it is stored; not carried between stores).
    #[serde(skip)]
    pub id: i64,
    /// Globally unique id, carried by export, import and `load`.
    pub uuid: String,
    /// The series: host, workload, variant, parameters and figure in one text.
    pub series_key: String,
    pub host: String,
    pub workload: String,
    pub variant: String,
    pub params_json: String,
    pub figure: String,
    pub unit: String,
    /// The last run before the change and the first run after it (run uuids).
    pub before_run_uuid: String,
    pub after_run_uuid: String,
    pub level_before: f64,
    pub level_after: f64,
    /// level_after / level_before, with its interval.
    pub ratio: f64,
    pub ratio_lo: Option<f64>,
    pub ratio_hi: Option<f64>,
    pub p_value: f64,
    /// "better" or "worse" for this figure.
    pub direction: String,
    pub status: LedgerStatus,
    pub reason: Option<String>,
    pub link: Option<String>,
    pub detected_at_unix_s: i64,
    pub updated_at_unix_s: i64,
}

const COLUMNS: &str = "id, uuid, series_key, host, workload, variant, params_json, figure, unit, \
     before_run_uuid, after_run_uuid, level_before, level_after, ratio, ratio_lo, ratio_hi, p_value, \
     direction, status, reason, link, detected_at_unix_s, updated_at_unix_s";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ChangePointRecord> {
    Ok(ChangePointRecord {
        id: row.get(0)?,
        uuid: row.get(1)?,
        series_key: row.get(2)?,
        host: row.get(3)?,
        workload: row.get(4)?,
        variant: row.get(5)?,
        params_json: row.get(6)?,
        figure: row.get(7)?,
        unit: row.get(8)?,
        before_run_uuid: row.get(9)?,
        after_run_uuid: row.get(10)?,
        level_before: row.get(11)?,
        level_after: row.get(12)?,
        ratio: row.get(13)?,
        ratio_lo: row.get(14)?,
        ratio_hi: row.get(15)?,
        p_value: row.get(16)?,
        direction: row.get(17)?,
        status: crate::store::parse_column(row, 18, LedgerStatus::parse)?,
        reason: row.get(19)?,
        link: row.get(20)?,
        detected_at_unix_s: row.get(21)?,
        updated_at_unix_s: row.get(22)?,
    })
}

/// Longest reason or link of an acknowledgement.
pub const MAX_NOTE: usize = 1000;

impl Store {
    /// The ledger's change points, of one series or all, in id order.
    pub fn change_points(&self, series_key: Option<&str>) -> Result<Vec<ChangePointRecord>> {
        let sql =
            format!("SELECT {COLUMNS} FROM change_points WHERE (?1 IS NULL OR series_key = ?1) ORDER BY id");
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([series_key], from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The change point with this id.
    pub fn change_point(&self, id: i64) -> Result<Option<ChangePointRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM change_points WHERE id = ?1");
        Ok(self.conn.query_row(&sql, [id], from_row).optional()?)
    }

    /// Stores `rec`: a new row when `rec.id` is 0 (returns its id), else an update of that
    /// row in place (its uuid, detection time and a status set by hand are kept).
    pub fn save_change_point(&self, rec: &ChangePointRecord) -> Result<i64> {
        let now = now_unix_s();
        if rec.id == 0 {
            self.conn.execute(
                &format!(
                    "INSERT INTO change_points ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, \
                     ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
                    &COLUMNS[4..]
                ),
                params![
                    rec.uuid, rec.series_key, rec.host, rec.workload, rec.variant, rec.params_json, rec.figure,
                    rec.unit, rec.before_run_uuid, rec.after_run_uuid, rec.level_before, rec.level_after, rec.ratio,
                    rec.ratio_lo, rec.ratio_hi, rec.p_value, rec.direction, rec.status.as_str(), rec.reason, rec.link,
                    rec.detected_at_unix_s.max(1), now
                ],
            )?;
            return Ok(self.conn.last_insert_rowid());
        }
        let n = self.conn.execute(
            "UPDATE change_points SET before_run_uuid = ?2, after_run_uuid = ?3, level_before = ?4, \
             level_after = ?5, ratio = ?6, ratio_lo = ?7, ratio_hi = ?8, p_value = ?9, direction = ?10, \
             status = ?11, updated_at_unix_s = ?12 WHERE id = ?1",
            params![
                rec.id,
                rec.before_run_uuid,
                rec.after_run_uuid,
                rec.level_before,
                rec.level_after,
                rec.ratio,
                rec.ratio_lo,
                rec.ratio_hi,
                rec.p_value,
                rec.direction,
                rec.status.as_str(),
                now
            ],
        )?;
        if n == 0 {
            return Err(StoreError::UnknownChangePoint(rec.id));
        }
        Ok(rec.id)
    }

    /// Sets a change point's status by hand (`ack`, `hide`), with a reason and a link.
    pub fn set_change_point_status(
        &self,
        id: i64,
        status: LedgerStatus,
        reason: Option<&str>,
        link: Option<&str>,
    ) -> Result<()> {
        for note in [reason, link].into_iter().flatten() {
            if note.chars().count() > MAX_NOTE || note.chars().any(char::is_control) {
                return Err(StoreError::BadTag(format!(
                    "a reason or link of at most {MAX_NOTE} characters without control characters"
                )));
            }
        }
        let n = self.conn.execute(
            "UPDATE change_points SET status = ?2, reason = coalesce(?3, reason), link = coalesce(?4, link), \
             updated_at_unix_s = ?5 WHERE id = ?1",
            params![id, status.as_str(), reason, link, now_unix_s()],
        )?;
        if n == 0 {
            return Err(StoreError::UnknownChangePoint(id));
        }
        Ok(())
    }

    /// Takes a change point from another store (an import): a new one is added; a known one
    /// (same uuid) takes the other's fields when they were updated later. Returns true when
    /// anything changed.
    pub fn merge_change_point(&self, rec: &ChangePointRecord) -> Result<bool> {
        let known: Option<(i64, i64)> = self
            .conn
            .query_row("SELECT id, updated_at_unix_s FROM change_points WHERE uuid = ?1", [&rec.uuid], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        match known {
            None => {
                self.save_change_point(&ChangePointRecord { id: 0, ..rec.clone() })?;
                Ok(true)
            }
            Some((id, updated)) if rec.updated_at_unix_s > updated => {
                self.save_change_point(&ChangePointRecord { id, ..rec.clone() })?;
                self.conn.execute(
                    "UPDATE change_points SET reason = ?2, link = ?3, updated_at_unix_s = ?4 WHERE id = ?1",
                    params![id, rec.reason, rec.link, rec.updated_at_unix_s],
                )?;
                Ok(true)
            }
            Some(_) => Ok(false),
        }
    }
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
pub(crate) mod tests;
