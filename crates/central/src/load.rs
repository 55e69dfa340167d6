//! `racehorse load`: JSON exports and whole SQLite stores into the central database. Every
//! file is checked before anything is written (an export version this racehorse does not
//! know is refused). Each run is one transaction: the run is inserted, or updated when its
//! status, finish, label, environment or campaign changed, and its cells go through COPY
//! into a staging table and from there into `racehorse.cells` unless already present
//! (keyed by run UUID, match key, repetition), so loading the same files twice changes
//! nothing and a later export of a once-partial run adds only the new cells.

use crate::error::{sql, CentralError};
use crate::manifest::Manifest;
use postgres::{Client, Transaction};
use racehorse_store::export::FORMAT_NAME;
use racehorse_store::{parse_export_value, Store, FORMAT_VERSION};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// One thing to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A `racehorse export RUN --format json` file.
    Export(PathBuf),
    /// A whole SQLite store: every run in it.
    Store(PathBuf),
}

/// The header of an export, read without keeping the rest.
#[derive(serde::Deserialize)]
struct Header {
    #[serde(default)]
    format: Json,
    #[serde(default)]
    version: Json,
}

fn input_error(path: &Path, why: impl Into<String>) -> CentralError {
    CentralError::Input { path: path.to_path_buf(), why: why.into() }
}

impl Input {
    /// What `path` holds: a SQLite store (by its first bytes), or a JSON export of a version
    /// this racehorse reads; anything else is refused before anything is loaded.
    pub fn classify(path: &Path) -> Result<Input, CentralError> {
        let mut file = std::fs::File::open(path).map_err(|e| input_error(path, e.to_string()))?;
        let mut head = Vec::with_capacity(16);
        (&mut file).take(16).read_to_end(&mut head).map_err(|e| input_error(path, e.to_string()))?;
        if head.as_slice() == b"SQLite format 3\0" {
            return Ok(Input::Store(path.to_path_buf()));
        }
        let text = std::fs::read_to_string(path).map_err(|e| input_error(path, e.to_string()))?;
        let header: Header = serde_json::from_str(&text).map_err(|e| {
            input_error(path, format!("neither a SQLite store nor a JSON export (not JSON: {e})"))
        })?;
        if header.format != FORMAT_NAME {
            return Err(input_error(
                path,
                format!(
                    "not a racehorse export (its \"format\" is {}, not \"{FORMAT_NAME}\")",
                    header.format
                ),
            ));
        }
        if header.version != FORMAT_VERSION {
            return Err(input_error(
                path,
                format!(
                    "export version {} is not known to this racehorse (it loads version {FORMAT_VERSION}); \
                     load it with the racehorse that wrote it, or a newer one",
                    header.version
                ),
            ));
        }
        Ok(Input::Export(path.to_path_buf()))
    }
}

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

const STAGING: &str =
    "CREATE TEMP TABLE IF NOT EXISTS load_cells (LIKE racehorse.cells) ON COMMIT DELETE ROWS";

const COPY_CELLS: &str =
    "COPY load_cells (run_uuid, match_key, rep, dup, idx, workload, variant, status, unit, \
     throughput_per_s, cpu_total_per_unit_s, cell, loaded_at_unix_s) FROM STDIN";

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
        client.batch_execute(STAGING).map_err(sql("creating the staging table"))?;
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
        for h in &m.hosts {
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

    /// Loads every run of `input`, calling `each` after each run.
    pub fn load(&mut self, input: &Input, each: &mut dyn FnMut(&RunLoaded)) -> Result<(), CentralError> {
        match input {
            Input::Export(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| input_error(path, e.to_string()))?;
                let doc: Json = serde_json::from_str(&text).map_err(|e| input_error(path, e.to_string()))?;
                each(&self.load_doc(&doc, path)?);
            }
            Input::Store(path) => {
                let store = Store::open_read_only(path).map_err(|e| input_error(path, e.to_string()))?;
                let mut runs = store.list_runs()?;
                runs.reverse();
                for run in runs {
                    let cells = store.run_cells(run.id)?;
                    let parts = racehorse_store::history_parts(&store, &run)?;
                    each(&self.load_doc(&racehorse_store::export_doc_with(&run, &parts, &cells), path)?);
                }
            }
        }
        Ok(())
    }

    /// Loads one export document (`origin` names it in messages).
    pub fn load_doc(&mut self, doc: &Json, origin: &Path) -> Result<RunLoaded, CentralError> {
        let r = parse_export_value(doc).map_err(|e| input_error(origin, e.to_string()))?;
        let run = &doc["run"];
        let inventory = if r.run.inventory_name.is_empty() { &r.run.host } else { &r.run.inventory_name };
        let embedded = |v: &Json| (!v.is_null()).then(|| without_nul(v));
        let (suite, env, excl) =
            (embedded(&run["suite"]), embedded(&run["env"]), embedded(&run["exclusivity"]));
        let status = r.status.as_str();
        let version = FORMAT_VERSION as i32;
        let doing = format!("loading run {} of {}", r.uuid, origin.display());
        let mut tx = self.client.transaction().map_err(sql(doing.clone()))?;
        let row = tx
            .query_opt(
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
                    &suite,
                    &env,
                    &excl,
                    &version,
                    &self.now_unix_s,
                ],
            )
            .map_err(sql(doing.clone()))?;
        let outcome = match row {
            None => RunOutcome::Unchanged,
            Some(row) if row.get::<_, bool>(0) => RunOutcome::New,
            Some(_) => RunOutcome::Updated,
        };
        let cells = doc["cells"].as_array().map(Vec::as_slice).unwrap_or_default();
        let have: i64 = tx
            .query_one("SELECT count(*) FROM racehorse.cells WHERE run_uuid = $1::text::uuid", &[&r.uuid])
            .map_err(sql(doing.clone()))?
            .get(0);
        let cells_added = if outcome == RunOutcome::Unchanged && usize::try_from(have) == Ok(cells.len()) {
            0
        } else {
            copy_cells(&mut tx, &r.uuid, cells, self.now_unix_s).map_err(sql(doing.clone()))?
        };
        crate::ledger::save_tags(&mut tx, &r.uuid, &r.run.tags).map_err(sql(doing.clone()))?;
        crate::ledger::merge_points(&mut tx, &r.change_points).map_err(sql(doing.clone()))?;
        tx.commit().map_err(sql(doing))?;
        Ok(RunLoaded {
            uuid: r.uuid,
            inventory_name: inventory.clone(),
            label: r.run.label,
            outcome,
            cells_added,
            cells_read: cells.len() as u64,
        })
    }
}

/// Sends the cells through COPY into the staging table, then adds those not yet stored.
fn copy_cells(
    tx: &mut Transaction<'_>,
    uuid: &str,
    cells: &[Json],
    now: i64,
) -> Result<u64, postgres::Error> {
    let mut buf = Vec::with_capacity(cells.len() * 4096);
    let mut seen: HashMap<(&str, u64), i64> = HashMap::new();
    for (idx, c) in cells.iter().enumerate() {
        let key = c["match_key"].as_str().unwrap_or_default();
        let rep = c["rep"].as_u64().unwrap_or_default();
        let dup = seen.entry((key, rep)).and_modify(|d| *d += 1).or_insert(0);
        let text = |f: &str| Some(c[f].as_str().unwrap_or_default().to_string());
        let number = |v: &Json| v.as_f64().filter(|x| x.is_finite()).map(|x| x.to_string());
        let fields = [
            Some(uuid.to_string()),
            Some(key.to_string()),
            Some(rep.to_string()),
            Some(dup.to_string()),
            Some(idx.to_string()),
            text("workload"),
            text("variant"),
            text("status"),
            text("unit"),
            number(&c["throughput_per_s"]),
            number(&c["cpu_per_unit"]["total_s"]),
            Some(cell_text(c)),
            Some(now.to_string()),
        ];
        copy_row(&mut buf, &fields);
    }
    let mut writer = tx.copy_in(COPY_CELLS)?;
    // A write error here is the server's: finish() reports it.
    let _ = writer.write_all(&buf);
    writer.finish()?;
    tx.execute("INSERT INTO racehorse.cells SELECT * FROM load_cells ON CONFLICT DO NOTHING", &[])
}

/// One row of COPY's text format: tab-separated, `\N` for NULL, backslash escapes.
fn copy_row(buf: &mut Vec<u8>, fields: &[Option<String>]) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            buf.push(b'\t');
        }
        match f {
            None => buf.extend_from_slice(b"\\N"),
            Some(s) => {
                for &b in s.as_bytes() {
                    match b {
                        b'\\' => buf.extend_from_slice(b"\\\\"),
                        b'\t' => buf.extend_from_slice(b"\\t"),
                        b'\n' => buf.extend_from_slice(b"\\n"),
                        b'\r' => buf.extend_from_slice(b"\\r"),
                        _ => buf.push(b),
                    }
                }
            }
        }
    }
    buf.push(b'\n');
}

/// A cell as compact JSON text for jsonb (NUL characters replaced, see [`without_nul`]).
fn cell_text(c: &Json) -> String {
    let text = c.to_string();
    if text.contains("\\u0000") {
        without_nul(c).to_string()
    } else {
        text
    }
}

/// `v` with NUL characters in its strings replaced by U+FFFD (jsonb cannot hold them).
fn without_nul(v: &Json) -> Json {
    match v {
        Json::String(s) if s.contains('\0') => Json::String(s.replace('\0', "\u{fffd}")),
        Json::Array(a) => Json::Array(a.iter().map(without_nul).collect()),
        Json::Object(o) => {
            Json::Object(o.iter().map(|(k, v)| (k.replace('\0', "\u{fffd}"), without_nul(v))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_rows_escape_what_copy_reads_specially() {
        let mut buf = Vec::new();
        copy_row(&mut buf, &[Some("a\tb\\c\nd\re".into()), None, Some(String::new())]);
        assert_eq!(String::from_utf8(buf).unwrap(), "a\\tb\\\\c\\nd\\re\t\\N\t\n");
    }

    #[test]
    fn nul_characters_are_replaced() {
        let v = serde_json::json!({"e": "x\u{0}y", "l": [1, "\u{0}"]});
        assert_eq!(without_nul(&v), serde_json::json!({"e": "x\u{fffd}y", "l": [1, "\u{fffd}"]}));
    }

    #[test]
    fn inputs_are_told_apart_and_unknown_versions_refused() {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("r.json");
        std::fs::write(&export, r#"{"format": "racehorse-run", "version": 1, "run": {}, "cells": []}"#)
            .unwrap();
        assert_eq!(Input::classify(&export).unwrap(), Input::Export(export.clone()));
        std::fs::write(&export, r#"{"format": "racehorse-run", "version": 7}"#).unwrap();
        let e = Input::classify(&export).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("export version 7 is not known"), "{e}");
        std::fs::write(&export, "not json").unwrap();
        assert!(Input::classify(&export).unwrap_err().is_usage());
        let db = dir.path().join("s.db");
        Store::open(&db).unwrap();
        assert_eq!(Input::classify(&db).unwrap(), Input::Store(db.clone()));
        assert!(Input::classify(&dir.path().join("missing")).unwrap_err().is_usage());
    }
}
