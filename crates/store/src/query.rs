//! Selecting runs and cells across runs: `list`'s filters (label, tags, time, host, a limit)
//! and the cells of one workload over many runs that `history` reads.

use crate::cells::{cell_columns, cell_from_row};
use crate::error::{Result, StoreError};
use crate::store::{run_from_row, Store, RUN_COLUMNS};
use crate::RunInfo;
use racehorse_core::CellResult;
use rusqlite::types::Value as SqlValue;

/// Which runs to list; every given condition must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// The run's label, exactly.
    pub label: Option<String>,
    /// Tags the run carries, each KEY=VALUE exactly.
    pub tags: Vec<(String, String)>,
    /// Started at or after this Unix time.
    pub since_unix_s: Option<i64>,
    /// Started before this Unix time.
    pub until_unix_s: Option<i64>,
    /// The host name or inventory name, exactly.
    pub host: Option<String>,
    /// Only the newest this many of the runs that match.
    pub limit: Option<usize>,
}

impl RunFilter {
    /// The WHERE clause (with `?` placeholders) and its values.
    fn clause(&self) -> (String, Vec<SqlValue>) {
        let mut conds: Vec<String> = Vec::new();
        let mut values: Vec<SqlValue> = Vec::new();
        if let Some(l) = &self.label {
            conds.push("r.label = ?".into());
            values.push(SqlValue::Text(l.clone()));
        }
        for (k, v) in &self.tags {
            conds.push(
                "EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = ? AND t.value = ?)"
                    .into(),
            );
            values.push(SqlValue::Text(k.clone()));
            values.push(SqlValue::Text(v.clone()));
        }
        if let Some(t) = self.since_unix_s {
            conds.push("r.started_at_unix_s >= ?".into());
            values.push(SqlValue::Integer(t));
        }
        if let Some(t) = self.until_unix_s {
            conds.push("r.started_at_unix_s < ?".into());
            values.push(SqlValue::Integer(t));
        }
        if let Some(h) = &self.host {
            conds.push("(r.host = ? OR r.inventory_name = ?)".into());
            values.push(SqlValue::Text(h.clone()));
            values.push(SqlValue::Text(h.clone()));
        }
        let clause = if conds.is_empty() { String::new() } else { format!("WHERE {}", conds.join(" AND ")) };
        (clause, values)
    }
}

impl Store {
    /// The workloads that have cells, by name.
    pub fn workloads(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT DISTINCT workload FROM cells ORDER BY workload")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The runs that pass `filter`, newest first.
    pub fn list_runs_where(&self, filter: &RunFilter) -> Result<Vec<RunInfo>> {
        let (clause, mut values) = filter.clause();
        let limit = match filter.limit {
            Some(n) => {
                values.push(SqlValue::Integer(i64::try_from(n).unwrap_or(i64::MAX)));
                " LIMIT ?"
            }
            None => "",
        };
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r {clause} ORDER BY r.id DESC{limit}");
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(values), run_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The cells of `workload` (every workload when None) in the runs `run_ids`, as
    /// (run id, cell) in run and plan order, without samples; with their latency histograms
    /// when `latencies` is set.
    pub fn cells_across_runs(
        &self,
        workload: Option<&str>,
        run_ids: &[i64],
        latencies: bool,
    ) -> Result<Vec<(i64, CellResult)>> {
        let wanted: std::collections::HashSet<i64> = run_ids.iter().copied().collect();
        let sql = concat!(
            "SELECT id, ",
            cell_columns!(),
            ", run_id FROM cells WHERE (?1 IS NULL OR workload = ?1) ORDER BY run_id, idx, id"
        );
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map([workload], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(32)?, cell_from_row(row)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (cell_id, run_id, cell) = row?;
            if !wanted.contains(&run_id) {
                continue;
            }
            let cell = cell.map_err(|detail| StoreError::Corrupt { table: "cells", id: cell_id, detail })?;
            out.push((run_id, cell_id, cell));
        }
        if latencies {
            let mut by_run: std::collections::HashMap<i64, std::collections::HashMap<i64, _>> =
                Default::default();
            for (run_id, cell_id, cell) in &mut out {
                let hist = match by_run.entry(*run_id) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => e.insert(self.run_latencies(*run_id)?),
                };
                cell.latencies = hist.remove(cell_id).unwrap_or_default();
            }
        }
        Ok(out.into_iter().map(|(r, _, c)| (r, c)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{full_cell, new_run};

    #[test]
    fn runs_are_filtered_by_every_condition() {
        let s = Store::open_in_memory().unwrap();
        let a = s.create_run(&new_run("nightly")).unwrap();
        let b = s.create_run(&new_run("nightly")).unwrap();
        let c = s.create_run(&new_run("other")).unwrap();
        s.set_run_tags(a, &[("commit".into(), "x1".into())]).unwrap();
        s.set_run_tags(b, &[("commit".into(), "x2".into())]).unwrap();
        let ids = |f: &RunFilter| s.list_runs_where(f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(ids(&RunFilter::default()), vec![c, b, a]);
        assert_eq!(ids(&RunFilter { label: Some("nightly".into()), ..Default::default() }), vec![b, a]);
        let tag = RunFilter { tags: vec![("commit".into(), "x1".into())], ..Default::default() };
        assert_eq!(ids(&tag), vec![a]);
        assert_eq!(ids(&RunFilter { limit: Some(1), ..Default::default() }), vec![c]);
        assert_eq!(ids(&RunFilter { since_unix_s: Some(i64::MAX), ..Default::default() }), Vec::<i64>::new());
        assert_eq!(ids(&RunFilter { until_unix_s: Some(i64::MAX), ..Default::default() }).len(), 3);
        let host = new_run("x").host;
        assert_eq!(ids(&RunFilter { host: Some(host), ..Default::default() }).len(), 3);
        assert!(ids(&RunFilter { host: Some("nope".into()), ..Default::default() }).is_empty());
    }

    #[test]
    fn cells_are_read_across_runs() {
        let s = Store::open_in_memory().unwrap();
        let a = s.create_run(&new_run("a")).unwrap();
        let b = s.create_run(&new_run("b")).unwrap();
        for (run, rep) in [(a, 1), (a, 2), (b, 1)] {
            s.insert_cell(run, rep as usize, &full_cell(rep)).unwrap();
        }
        let workload = full_cell(1).spec.workload;
        let all = s.cells_across_runs(Some(&workload), &[a, b], true).unwrap();
        assert_eq!(all.iter().map(|(r, _)| *r).collect::<Vec<_>>(), vec![a, a, b]);
        assert!(all.iter().all(|(_, c)| c.samples.is_empty()));
        assert_eq!(all[0].1.latencies, full_cell(1).latencies);
        assert_eq!(s.cells_across_runs(Some(&workload), &[b], false).unwrap().len(), 1);
        assert!(s.cells_across_runs(Some("nope"), &[a, b], false).unwrap().is_empty());
        assert_eq!(s.cells_across_runs(None, &[a], false).unwrap().len(), 2);
    }
}
