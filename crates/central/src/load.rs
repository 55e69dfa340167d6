//! `racehorse load`: JSON exports and whole SQLite stores into the central database. Every
//! file is read and checked before anything is written (an export version this racehorse
//! does not know is refused), each export once (`prepare`). Runs are written in batches, one
//! transaction per batch, so each run is all or nothing: under a lock on each run's uuid
//! (taken in one order, so that concurrent loaders never deadlock) the run is inserted, or
//! updated when its status, finish, label, environment or campaign changed, and those of
//! its cells not yet stored (keyed by run UUID, match key, repetition, ordinal) go through
//! COPY straight into `racehorse.cells`. Loading the same files twice changes nothing, and
//! a later export of a once-partial run adds only the new cells.

use crate::error::{sql, CentralError};
use crate::manifest::Manifest;
use crate::prepare::{PreparedRun, ROW_COLUMNS};
use postgres::{Client, Transaction};
use racehorse_store::FORMAT_VERSION;
use serde_json::Value as Json;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

pub use crate::prepare::Input;

/// What happened to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    New,
    /// Already there; its status, finish, label, environment or campaign changed.
    Updated,
    Unchanged,
}

/// One run loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLoaded {
    pub uuid: String,
    pub inventory_name: String,
    pub label: String,
    pub outcome: RunOutcome,
    pub cells_added: u64,
    pub cells_read: u64,
}

/// Totals of a load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub runs_new: u64,
    pub runs_updated: u64,
    pub runs_unchanged: u64,
    pub cells_added: u64,
    pub cells_read: u64,
}

impl LoadStats {
    pub fn add(&mut self, r: &RunLoaded) {
        match r.outcome {
            RunOutcome::New => self.runs_new += 1,
            RunOutcome::Updated => self.runs_updated += 1,
            RunOutcome::Unchanged => self.runs_unchanged += 1,
        }
        self.cells_added += r.cells_added;
        self.cells_read += r.cells_read;
    }
}

const UPSERT_RUN: &str = "INSERT INTO racehorse.runs AS r (uuid, inventory_name, campaign, source_id, label, \
     started_at_unix_s, finished_at_unix_s, status, host, command, racehorse_version, cpu_method, suite, env, \
     exclusivity, export_version, loaded_at_unix_s, updated_at_unix_s) \
     VALUES ($1::text::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17) \
     ON CONFLICT (uuid) DO UPDATE SET inventory_name = EXCLUDED.inventory_name, campaign = EXCLUDED.campaign, \
     label = EXCLUDED.label, finished_at_unix_s = EXCLUDED.finished_at_unix_s, status = EXCLUDED.status, \
     suite = EXCLUDED.suite, env = EXCLUDED.env, exclusivity = EXCLUDED.exclusivity, \
     updated_at_unix_s = EXCLUDED.updated_at_unix_s \
     WHERE (r.inventory_name, r.campaign, r.label, r.finished_at_unix_s, r.status, r.suite, r.env, r.exclusivity) \
     IS DISTINCT FROM (EXCLUDED.inventory_name, EXCLUDED.campaign, EXCLUDED.label, EXCLUDED.finished_at_unix_s, \
     EXCLUDED.status, EXCLUDED.suite, EXCLUDED.env, EXCLUDED.exclusivity) \
     RETURNING (xmax = 0)";

/// The lock each run is written under: (this namespace, a hash of its uuid).
const RUN_LOCK_SPACE: i32 = 0x7268_3434;

/// The key of a run's lock: FNV-1a of its uuid.
fn run_lock_key(uuid: &str) -> i32 {
    let h = uuid.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    i32::from_ne_bytes(h.to_ne_bytes())
}

/// A connection to the central database, migrated, ready to load.
pub struct Loader {
    client: Client,
    now_unix_s: i64,
    /// The central schema version found before this loader migrated it.
    pub found_version: i32,
}

impl Loader {
    /// Connects to `url` and brings the central schema up to date.
    pub fn open(url: &str) -> Result<Loader, CentralError> {
        let mut client = crate::connect(url)?;
        let found_version = crate::schema::migrate(&mut client)?;
        let now_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        Ok(Loader { client, now_unix_s, found_version })
    }

    /// Records the campaign and each host's outcome (a host listed again takes the new one).
    pub fn load_manifest(&mut self, m: &Manifest) -> Result<(), CentralError> {
        let doing = format!("recording campaign {}", m.campaign);
        let mut tx = self.client.transaction().map_err(sql(doing.clone()))?;
        tx.execute(
            "INSERT INTO racehorse.campaigns VALUES ($1, $2, $3) ON CONFLICT (campaign) DO UPDATE \
             SET started_at_unix_s = EXCLUDED.started_at_unix_s, loaded_at_unix_s = EXCLUDED.loaded_at_unix_s",
            &[&m.campaign, &m.started_at_unix_s, &self.now_unix_s],
        )
        .map_err(sql(doing.clone()))?;
        let stmt = tx
            .prepare(
                "INSERT INTO racehorse.campaign_hosts VALUES ($1, $2, $3, $4) ON CONFLICT (campaign, name) \
                 DO UPDATE SET outcome = EXCLUDED.outcome, detail = EXCLUDED.detail",
            )
            .map_err(sql(doing.clone()))?;
        // By name, so that loaders recording the same hosts lock their rows in one order.
        let mut hosts: Vec<_> = m.hosts.iter().collect();
        hosts.sort_by(|a, b| a.name.cmp(&b.name));
        for h in hosts {
            tx.execute(&stmt, &[&m.campaign, &h.name, &h.outcome.as_str(), &h.detail])
                .map_err(sql(doing.clone()))?;
        }
        tx.commit().map_err(sql(doing))
    }

    /// Merges change points into the central ledger (the later update of a point wins);
    /// returns how many were added or changed.
    pub fn merge_change_points(
        &mut self,
        points: &[racehorse_store::ledger::ChangePointRecord],
    ) -> Result<u64, CentralError> {
        let doing = "writing the central ledger";
        let mut tx = self.client.transaction().map_err(sql(doing))?;
        let n = crate::ledger::merge_points(&mut tx, points).map_err(sql(doing))?;
        tx.commit().map_err(sql(doing))?;
        Ok(n)
    }

    /// Loads every run of `input` (read and checked here), one transaction each, calling
    /// `each` after each run.
    pub fn load(&mut self, input: &Input, each: &mut dyn FnMut(&RunLoaded)) -> Result<(), CentralError> {
        crate::prepare::runs_of(input, &mut |run| {
            for r in self.write_batch(std::slice::from_ref(&run))? {
                each(&r);
            }
            Ok(true)
        })
    }

    /// Loads one export document (`origin` names it in messages).
    pub fn load_doc(&mut self, doc: &Json, origin: &Path) -> Result<RunLoaded, CentralError> {
        let run = crate::prepare::prepare_doc(doc, origin)?;
        let mut done = self.write_batch(std::slice::from_ref(&run))?;
        Ok(done.remove(0))
    }

    /// Writes `runs` in one transaction (all of them or none); returns what happened to each.
    pub fn write_batch(&mut self, runs: &[PreparedRun]) -> Result<Vec<RunLoaded>, CentralError> {
        let doing = match runs {
            [one] => format!("loading run {} of {}", one.run.uuid, one.origin.display()),
            _ => format!("loading {} runs", runs.len()),
        };
        let mut tx = self.client.transaction().map_err(sql(doing.clone()))?;
        // Every lock first, in one order: two loaders of the same runs wait, never deadlock.
        let mut keys: Vec<i32> = runs.iter().map(|r| run_lock_key(&r.run.uuid)).collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            tx.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&RUN_LOCK_SPACE, &key])
                .map_err(sql(doing.clone()))?;
        }
        let mut done = Vec::with_capacity(runs.len());
        for run in runs {
            let doing = format!("loading run {} of {}", run.run.uuid, run.origin.display());
            done.push(write_run(&mut tx, run, self.now_unix_s).map_err(sql(doing))?);
        }
        // The ledger's rows, too, in one order.
        let mut points: Vec<_> = runs.iter().flat_map(|r| &r.run.change_points).cloned().collect();
        points.sort_by(|a, b| a.uuid.cmp(&b.uuid));
        crate::ledger::merge_points(&mut tx, &points).map_err(sql(doing.clone()))?;
        tx.commit().map_err(sql(doing))?;
        Ok(done)
    }
}

/// Writes one run inside `tx`, under its lock: the run row, its cells not yet stored, its tags.
fn write_run(tx: &mut Transaction<'_>, p: &PreparedRun, now: i64) -> Result<RunLoaded, postgres::Error> {
    let r = &p.run;
    let inventory = if r.run.inventory_name.is_empty() { &r.run.host } else { &r.run.inventory_name };
    let status = r.status.as_str();
    let version = FORMAT_VERSION as i32;
    let row = tx.query_opt(
        UPSERT_RUN,
        &[
            &r.uuid,
            inventory,
            &r.run.campaign,
            &r.source_id,
            &r.run.label,
            &r.started_at_unix_s,
            &r.finished_at_unix_s,
            &status,
            &r.run.host,
            &r.run.command,
            &r.run.racehorse_version,
            &r.run.cpu_method,
            &p.suite,
            &p.env,
            &p.exclusivity,
            &version,
            &now,
        ],
    )?;
    let outcome = match row {
        None => RunOutcome::Unchanged,
        Some(row) if row.get::<_, bool>(0) => RunOutcome::New,
        Some(_) => RunOutcome::Updated,
    };
    // A new run has no cells yet; a known one may have some or all of them.
    let mut have = HashSet::new();
    if outcome != RunOutcome::New {
        for row in tx.query(
            "SELECT match_key, rep, dup FROM racehorse.cells WHERE run_uuid = $1::text::uuid",
            &[&r.uuid],
        )? {
            have.insert((
                row.get::<_, String>(0),
                i64::from(row.get::<_, i32>(1)),
                i64::from(row.get::<_, i32>(2)),
            ));
        }
    }
    let mut buf = Vec::new();
    let cells_added = p.rows_into(&mut buf, now, |c| !have.contains(&(c.match_key.clone(), c.rep, c.dup)));
    if cells_added > 0 {
        let copy = format!("COPY racehorse.cells ({ROW_COLUMNS}) FROM STDIN");
        let mut writer = tx.copy_in(copy.as_str())?;
        // A write error here is the server's: finish() reports it.
        let _ = writer.write_all(&buf);
        writer.finish()?;
        // The run's counts (what `list` shows), from its cells: the run's lock is held, so
        // no other loader adds to them before this transaction commits.
        tx.execute(
            "UPDATE racehorse.runs SET (cells_ok, cells_failed) = (SELECT count(*) FILTER (WHERE status = 'ok'), \
             count(*) FILTER (WHERE status <> 'ok') FROM racehorse.cells WHERE run_uuid = $1::text::uuid) \
             WHERE uuid = $1::text::uuid",
            &[&r.uuid],
        )?;
    }
    crate::ledger::save_tags(tx, &r.uuid, &r.run.tags)?;
    Ok(RunLoaded {
        uuid: r.uuid.clone(),
        inventory_name: inventory.clone(),
        label: r.run.label.clone(),
        outcome,
        cells_added,
        cells_read: p.cell_count() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::prepare_file;
    use racehorse_store::Store;

    #[test]
    fn inputs_are_told_apart_and_unknown_versions_refused() {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("r.json");
        std::fs::write(&export, r#"{"format": "racehorse-run", "version": 7}"#).unwrap();
        assert_eq!(Input::classify(&export).unwrap(), Input::Export(export.clone()));
        let e = prepare_file(&export).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("export version 7 is not known"), "{e}");
        assert!(e.to_string().contains("load it with the racehorse that wrote it"), "{e}");
        std::fs::write(&export, "not json").unwrap();
        let e = prepare_file(&export).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("neither a SQLite store nor a JSON export"), "{e}");
        std::fs::write(&export, r#"{"format": "racehorse-other", "version": 1}"#).unwrap();
        assert!(prepare_file(&export).unwrap_err().to_string().contains("\"format\" is \"racehorse-other\""));
        let db = dir.path().join("s.db");
        Store::open(&db).unwrap();
        assert_eq!(Input::classify(&db).unwrap(), Input::Store(db.clone()));
        assert!(Input::classify(&dir.path().join("missing")).unwrap_err().is_usage());
    }

    #[test]
    fn run_lock_keys_spread_and_stay_the_same() {
        let a = run_lock_key("5b0c1d2e-0000-4000-8000-000000000001");
        assert_eq!(a, run_lock_key("5b0c1d2e-0000-4000-8000-000000000001"));
        assert_ne!(a, run_lock_key("5b0c1d2e-0000-4000-8000-000000000002"));
    }
}
