//! `racehorse prune --db postgres://…`: the central runs as the planner
//! (`racehorse_store::prune`) sees them, the change points that guard runs, and the removal
//! of runs in one transaction (a run's cells and tags cascade with it; campaigns and their
//! manifests stay).

use crate::error::{sql, CentralError};
use postgres::Client;
use racehorse_store::prune::{guard, Candidate, Guards, KeptBecause};
use racehorse_store::prune_store::Removed;
use std::collections::{BTreeSet, HashMap};

/// A connection for pruning.
pub struct Pruner {
    client: Client,
}

impl Pruner {
    /// Connects to `url`, which must hold the central schema at this racehorse's version.
    pub fn open(url: &str) -> Result<Pruner, CentralError> {
        let client = crate::connect::connect_current(url, "nothing to prune")?;
        Ok(Pruner { client })
    }

    /// Every run as a prune [`Candidate`] (its id is the one on its host), with the points
    /// of its cells when `points` is set.
    pub fn candidates(&mut self, points: bool) -> Result<Vec<Candidate>, CentralError> {
        let doing = "reading the central runs to prune";
        let mut tags: HashMap<String, Vec<(String, String)>> = HashMap::new();
        let q = "SELECT run_uuid::text, key, value FROM racehorse.run_tags ORDER BY run_uuid, key";
        for row in self.client.query(q, &[]).map_err(sql(doing))? {
            tags.entry(row.get(0)).or_default().push((row.get(1), row.get(2)));
        }
        let mut by_run: HashMap<String, BTreeSet<String>> = HashMap::new();
        if points {
            let q = "SELECT DISTINCT run_uuid::text, match_key FROM racehorse.cells";
            for row in self.client.query(q, &[]).map_err(sql(doing))? {
                by_run.entry(row.get(0)).or_default().insert(row.get(1));
            }
        }
        let q = "SELECT r.uuid::text, r.source_id, r.label, r.host, r.inventory_name, r.started_at_unix_s, \
                 (SELECT count(*) FROM racehorse.cells c WHERE c.run_uuid = r.uuid) FROM racehorse.runs r";
        let rows = self.client.query(q, &[]).map_err(sql(doing))?;
        Ok(rows
            .iter()
            .map(|r| {
                let uuid: String = r.get(0);
                Candidate {
                    tags: tags.remove(&uuid).unwrap_or_default(),
                    points: by_run.remove(&uuid).unwrap_or_default(),
                    uuid,
                    id: r.get(1),
                    label: r.get(2),
                    host: r.get(3),
                    inventory_name: r.get(4),
                    started_at_unix_s: r.get(5),
                    cells: u64::try_from(r.get::<_, i64>(6)).unwrap_or(0),
                }
            })
            .collect())
    }

    /// The runs the ledger cites: each change point's before and after run.
    pub fn guards(&mut self) -> Result<Guards, CentralError> {
        let q =
            "SELECT id, before_run_uuid::text, after_run_uuid::text FROM racehorse.change_points ORDER BY id";
        let rows = self.client.query(q, &[]).map_err(sql("reading the change-point ledger"))?;
        let mut guards = Guards::new();
        for r in rows {
            let id: i64 = r.get(0);
            guard(&mut guards, &r.get::<_, String>(1), KeptBecause::ChangePoint { id, side: "before" });
            guard(&mut guards, &r.get::<_, String>(2), KeptBecause::ChangePoint { id, side: "after" });
        }
        Ok(guards)
    }

    /// Removes the runs `uuids` with their cells and tags, in one transaction: every run goes
    /// or none does.
    pub fn remove(&mut self, uuids: &[String]) -> Result<Removed, CentralError> {
        let doing = "removing runs from the central database";
        let mut tx = self.client.transaction().map_err(sql(doing))?;
        let cells: i64 = tx
            .query_one(
                "SELECT count(*) FROM racehorse.cells WHERE run_uuid = ANY($1::text[]::uuid[])",
                &[&uuids],
            )
            .map_err(sql(doing))?
            .get(0);
        let runs = tx
            .execute("DELETE FROM racehorse.runs WHERE uuid = ANY($1::text[]::uuid[])", &[&uuids])
            .map_err(sql(doing))?;
        tx.commit().map_err(sql(doing))?;
        Ok(Removed { runs, cells: u64::try_from(cells).unwrap_or(0) })
    }
}

#[cfg(test)]
#[path = "pg_prune_tests.rs"]
mod tests;
