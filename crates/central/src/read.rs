//! Reading the central database: the runs (newest first, with their cell counts and the
//! campaign's record of their host), the campaign's hosts that have no run, resolving
//! `[HOST:]RUN` (RUN: a label, the run's id on its host, a UUID or its prefix, or `latest`),
//! and copying a run into an in-memory SQLite store through the import path, so that
//! `show`, `compare`, `report` and `export` render it with their usual code.

use crate::error::{sql, CentralError};
use postgres::{Client, Row};
use racehorse_store::Store;
use serde_json::Value as Json;

/// A run as the central database lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CentralRun {
    pub uuid: String,
    pub inventory_name: String,
    pub campaign: Option<String>,
    /// The run's id in the store of its host.
    pub source_id: i64,
    pub label: String,
    pub started_at_unix_s: i64,
    pub finished_at_unix_s: Option<i64>,
    pub status: String,
    pub host: String,
    pub racehorse_version: String,
    pub cells_ok: i64,
    pub cells_failed: i64,
    /// How the campaign's manifest says the host ended (`ok`, `unreachable`, `failed`), when loaded.
    pub host_outcome: Option<String>,
}

/// A host of a campaign's manifest without any run of that campaign.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MissingHost {
    pub name: String,
    pub outcome: String,
    pub detail: String,
}

const RUN_SELECT: &str = "SELECT r.uuid::text, r.inventory_name, r.campaign, r.source_id, r.label, \
     r.started_at_unix_s, r.finished_at_unix_s, r.status, r.host, r.racehorse_version, \
     r.cells_ok, r.cells_failed, h.outcome \
     FROM racehorse.runs r \
     LEFT JOIN racehorse.campaign_hosts h ON h.campaign = r.campaign AND h.name = r.inventory_name";

const ORDER: &str = "ORDER BY r.started_at_unix_s DESC, r.inventory_name, r.uuid";

fn run_from_row(row: &Row) -> CentralRun {
    CentralRun {
        uuid: row.get(0),
        inventory_name: row.get(1),
        campaign: row.get(2),
        source_id: row.get(3),
        label: row.get(4),
        started_at_unix_s: row.get(5),
        finished_at_unix_s: row.get(6),
        status: row.get(7),
        host: row.get(8),
        racehorse_version: row.get(9),
        cells_ok: row.get(10),
        cells_failed: row.get(11),
        host_outcome: row.get(12),
    }
}

/// A connection for reading.
pub struct Reader {
    client: Client,
}

impl Reader {
    /// Connects to `url`; the database must hold the central schema at this racehorse's version.
    pub fn open(url: &str) -> Result<Reader, CentralError> {
        let client = crate::connect::connect_current(
            url,
            "`racehorse load --db URL FILE…` creates and migrates the schema",
        )?;
        Ok(Reader { client })
    }

    /// Every run, or a campaign's, newest first.
    pub fn runs(&mut self, campaign: Option<&str>) -> Result<Vec<CentralRun>, CentralError> {
        let q = format!("{RUN_SELECT} WHERE $1::text IS NULL OR r.campaign = $1 {ORDER}");
        let rows = self.client.query(&q, &[&campaign]).map_err(sql("listing the central runs"))?;
        Ok(rows.iter().map(run_from_row).collect())
    }

    /// Whether a manifest of `campaign` was loaded.
    pub fn campaign_known(&mut self, campaign: &str) -> Result<bool, CentralError> {
        let row = self
            .client
            .query_one("SELECT count(*) FROM racehorse.campaigns WHERE campaign = $1", &[&campaign])
            .map_err(sql("reading the campaigns"))?;
        Ok(row.get::<_, i64>(0) > 0)
    }

    /// The hosts of `campaign`'s manifest that have no run of the campaign, by name.
    pub fn missing_hosts(&mut self, campaign: &str) -> Result<Vec<MissingHost>, CentralError> {
        let rows = self
            .client
            .query(
                "SELECT h.name, h.outcome, h.detail FROM racehorse.campaign_hosts h WHERE h.campaign = $1 \
                 AND NOT EXISTS (SELECT 1 FROM racehorse.runs r WHERE r.campaign = h.campaign \
                 AND r.inventory_name = h.name) ORDER BY h.name",
                &[&campaign],
            )
            .map_err(sql("reading the campaign's hosts"))?;
        Ok(rows.iter().map(|r| MissingHost { name: r.get(0), outcome: r.get(1), detail: r.get(2) }).collect())
    }

    /// The inventory names that have runs.
    pub fn hosts(&mut self) -> Result<Vec<String>, CentralError> {
        let rows = self
            .client
            .query("SELECT DISTINCT inventory_name FROM racehorse.runs ORDER BY 1", &[])
            .map_err(sql("listing the hosts"))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// The run `key` names: `HOST:RUN` (HOST an inventory name; the first colon whose left
    /// part is one) or `RUN` alone, which must then name runs of one host only.
    pub fn resolve(&mut self, key: &str) -> Result<CentralRun, CentralError> {
        let hosts = self.hosts()?;
        for (i, _) in key.match_indices(':') {
            if hosts.iter().any(|h| h == &key[..i]) {
                return self.resolve_in(Some(&key[..i]), &key[i + 1..], key);
            }
        }
        self.resolve_in(None, key, key)
    }

    fn matching(
        &mut self,
        host: Option<&str>,
        cond: &str,
        arg: &str,
    ) -> Result<Vec<CentralRun>, CentralError> {
        let q = format!("{RUN_SELECT} WHERE ($1::text IS NULL OR r.inventory_name = $1) AND {cond} {ORDER}");
        let rows = self.client.query(&q, &[&host, &arg]).map_err(sql("finding the run"))?;
        Ok(rows.iter().map(run_from_row).collect())
    }

    fn resolve_in(&mut self, host: Option<&str>, run: &str, key: &str) -> Result<CentralRun, CentralError> {
        let lower = run.to_ascii_lowercase();
        let found = if run == "latest" {
            self.matching(host, "$2::text IS NOT NULL", run)?
        } else {
            let mut found = Vec::new();
            if run.parse::<i64>().is_ok() {
                found = self.matching(host, "r.source_id = $2::text::bigint", run)?;
            }
            if found.is_empty() {
                found = self.matching(host, "r.label = $2", run)?;
            }
            let uuid_like = lower.len() >= 8 && lower.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-');
            if found.is_empty() && uuid_like {
                found = self.matching(host, "starts_with(r.uuid::text, $2)", &lower)?;
                if found.len() > 1 {
                    return Err(CentralError::UnknownRun(format!(
                        "'{key}' is the start of several runs' uuids; give more of it"
                    )));
                }
            }
            found
        };
        let mut hosts: Vec<&str> = found.iter().map(|r| r.inventory_name.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        if run != "latest" && hosts.len() > 1 {
            return Err(CentralError::UnknownRun(format!(
                "'{key}' names runs of {} hosts ({}); name one as HOST:{run}",
                hosts.len(),
                hosts.iter().take(8).copied().collect::<Vec<_>>().join(", ")
            )));
        }
        found.into_iter().next().ok_or_else(|| {
            CentralError::UnknownRun(format!(
                "no run '{key}' in the central database; `racehorse list --db URL` lists them \
                 (name a run as HOST:RUN, RUN a label, id, uuid or latest)"
            ))
        })
    }

    /// The runs that pass `filter` (and are of `campaign`, when given), newest first.
    pub fn runs_where(
        &mut self,
        filter: &racehorse_store::RunFilter,
        campaign: Option<&str>,
    ) -> Result<Vec<CentralRun>, CentralError> {
        let uuids = crate::ledger::runs_where(&mut self.client, filter, campaign)?;
        let q = format!("{RUN_SELECT} WHERE r.uuid::text = ANY($1) {ORDER}");
        let rows = self.client.query(&q, &[&uuids]).map_err(sql("listing the central runs"))?;
        Ok(rows.iter().map(run_from_row).collect())
    }

    /// Every change point of the central ledger, with the central database's ids.
    pub fn ledger(&mut self) -> Result<Vec<racehorse_store::ledger::ChangePointRecord>, CentralError> {
        crate::ledger::points(&mut self.client, None)
    }

    /// Sets a change point's status by hand (`ack`, `hide`).
    pub fn set_change_point_status(
        &mut self,
        id: i64,
        status: racehorse_store::ledger::LedgerStatus,
        reason: Option<&str>,
        link: Option<&str>,
    ) -> Result<(), CentralError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        crate::ledger::set_status(&mut self.client, id, status, reason, link, now)
    }

    /// Copies `run` with its cells and change points into `store` (import path); returns its
    /// id there.
    pub fn copy_into(&mut self, run: &CentralRun, store: &Store) -> Result<i64, CentralError> {
        let ids = crate::copy::copy_runs(&mut self.client, std::slice::from_ref(run), None, true, store)?;
        Ok(ids[0])
    }

    /// Copies `runs` into `store` with the cells of the points `keys` only (every cell when
    /// None) and their tags, as `history` needs, reading each table once for all of them; their
    /// change points are left to the caller, who copies the ledger whole.
    pub fn copy_runs_into(
        &mut self,
        runs: &[CentralRun],
        keys: Option<&[String]>,
        store: &Store,
    ) -> Result<Vec<i64>, CentralError> {
        crate::copy::copy_runs(&mut self.client, runs, keys, false, store)
    }

    /// Every point of the store (its match key) with its parameters, in key order. The keys
    /// are found by skipping through the index on `match_key` (one probe per distinct key, not
    /// a read of every cell), and each key's parameters come from one of its cells.
    pub fn points(&mut self) -> Result<Vec<(String, Json)>, CentralError> {
        let rows = self
            .client
            .query(
                "WITH RECURSIVE k(key) AS ( \
                   (SELECT match_key FROM racehorse.cells ORDER BY match_key LIMIT 1) \
                   UNION ALL \
                   SELECT (SELECT c.match_key FROM racehorse.cells c WHERE c.match_key > k.key \
                           ORDER BY c.match_key LIMIT 1) FROM k WHERE k.key IS NOT NULL) \
                 SELECT k.key, (SELECT c.cell->'params' FROM racehorse.cells c WHERE c.match_key = k.key LIMIT 1) \
                 FROM k WHERE k.key IS NOT NULL",
                &[],
            )
            .map_err(sql("listing the points"))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get::<_, Option<Json>>(1).unwrap_or(Json::Null))).collect())
    }
}
