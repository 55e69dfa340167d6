//! Writing and reading cells: one transaction per cell (row + samples + latencies), committed
//! as soon as the cell finishes, and the reverse mapping back to full `CellResult`s.

use crate::error::{Result, StoreError};
use crate::limits::{clip, MAX_TEXT};
use crate::store::{now_unix_s, parse_column, Store};
use racehorse_core::{
    CellQuality, CellResult, CellSpec, CellStatus, CpuMethod, CpuUsage, LatencyHistogram, Nanos, OpStats,
    Params, SamplePoint, WorkUnit, WorkloadCpu,
};
use rusqlite::{params, Row, Transaction};
use std::collections::BTreeMap;

const CELL_INSERT: &str = "INSERT INTO cells (run_id, idx, workload, variant, rep, params_json, match_key, \
     status, error, unit, units, window_ns, ops, bytes_read, bytes_written, cpu_user_s, cpu_kernel_s, \
     cpu_steal_s, cpu_iowait_s, cpu_idle_s, wl_cpu_user_s, wl_cpu_kernel_s, wl_cpu_method, harness_cpu_s, \
     cpus_online, extra_json, finished_at_unix_s, settings_json, profile_json, outside_cpu_s, kthread_cpu_s, \
     own_cpu_s, noisy, below_resolution_json, virt_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, \
     ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35)";

/// The columns [`cell_from_row`] reads after the cell's id, for every query of whole cells.
macro_rules! cell_columns {
    () => {
        "workload, variant, rep, params_json, status, error, unit, units, window_ns, ops, bytes_read, \
         bytes_written, cpu_user_s, cpu_kernel_s, cpu_steal_s, cpu_iowait_s, cpu_idle_s, wl_cpu_user_s, \
         wl_cpu_kernel_s, wl_cpu_method, harness_cpu_s, cpus_online, extra_json, settings_json, \
         profile_json, outside_cpu_s, kthread_cpu_s, own_cpu_s, noisy, below_resolution_json, virt_json"
    };
}
pub(crate) use cell_columns;

const CELL_SELECT: &str =
    concat!("SELECT id, ", cell_columns!(), " FROM cells WHERE run_id = ?1 ORDER BY idx, id");

const SAMPLE_COLUMNS: &str = "t_ms, cpu_user_pct, cpu_kernel_pct, cpu_iowait_pct, cpu_steal_pct, \
     cpu_idle_pct, run_queue_tasks, blocked_tasks, mem_free_bytes, mem_cached_bytes, mem_dirty_bytes, \
     pgpgin_per_s, pgpgout_per_s, pswpin_per_s, pswpout_per_s, disk_read_bytes_per_s, \
     disk_write_bytes_per_s, ctxt_per_s";

/// Converts an unsigned count to SQLite's signed integer, refusing values above `i64::MAX`.
fn int(column: &'static str, value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange { column, value })
}

/// Reads a REAL column; SQLite stores NaN as NULL, so NULL reads back as NaN.
fn real(row: &Row<'_>, idx: usize) -> rusqlite::Result<f64> {
    Ok(row.get::<_, Option<f64>>(idx)?.unwrap_or(f64::NAN))
}

pub(crate) fn cpu_method_str(method: CpuMethod) -> &'static str {
    match method {
        CpuMethod::None => "none",
        CpuMethod::Threads => "threads",
        CpuMethod::Children => "children",
        CpuMethod::Cgroup => "cgroup",
    }
}

pub(crate) fn parse_cpu_method(s: &str) -> Option<CpuMethod> {
    [CpuMethod::None, CpuMethod::Threads, CpuMethod::Children, CpuMethod::Cgroup]
        .into_iter()
        .find(|m| cpu_method_str(*m) == s)
}

pub(crate) fn parse_cell_status(s: &str) -> Option<CellStatus> {
    [CellStatus::Ok, CellStatus::Failed, CellStatus::Interrupted].into_iter().find(|c| c.as_str() == s)
}

/// `extra` as JSON; non-finite values (which JSON cannot hold) become null.
fn extra_to_json(extra: &BTreeMap<String, f64>) -> Result<String> {
    let map: BTreeMap<&str, Option<f64>> =
        extra.iter().map(|(k, v)| (k.as_str(), v.is_finite().then_some(*v))).collect();
    Ok(serde_json::to_string(&map)?)
}

fn extra_from_json(json: &str) -> serde_json::Result<BTreeMap<String, f64>> {
    let map: BTreeMap<String, Option<f64>> = serde_json::from_str(json)?;
    Ok(map.into_iter().map(|(k, v)| (k, v.unwrap_or(f64::NAN))).collect())
}

impl Store {
    /// Stores one finished cell at plan position `idx` of run `run_id`, with its samples and
    /// latencies, in one transaction that is committed before this returns.
    pub fn insert_cell(&self, run_id: i64, idx: usize, cell: &CellResult) -> Result<i64> {
        if self.run(run_id)?.is_none() {
            return Err(StoreError::UnknownRun { key: run_id.to_string(), suggestions: Vec::new() });
        }
        let tx = self.conn.unchecked_transaction()?;
        let cell_id = insert_cell_row(&tx, run_id, idx, cell)?;
        insert_samples(&tx, cell_id, &cell.samples)?;
        insert_latencies(&tx, cell_id, &cell.latencies)?;
        tx.commit()?;
        Ok(cell_id)
    }

    /// The cells of a run in plan order, rebuilt with samples and latency histograms.
    pub fn run_cells(&self, run_id: i64) -> Result<Vec<CellResult>> {
        self.load_cells(run_id, true)
    }

    /// The cells of a run in plan order without their samples and latency histograms
    /// (empty): what comparisons need, in about half the time.
    pub fn run_cells_without_series(&self, run_id: i64) -> Result<Vec<CellResult>> {
        self.load_cells(run_id, false)
    }

    /// The cells of a run in plan order with their latency histograms but without samples:
    /// what comparisons need (they compare latency percentiles, not the monitor series).
    pub fn run_cells_with_latencies(&self, run_id: i64) -> Result<Vec<CellResult>> {
        self.load_cells_with(run_id, false, true)
    }

    fn load_cells(&self, run_id: i64, with_series: bool) -> Result<Vec<CellResult>> {
        self.load_cells_with(run_id, with_series, with_series)
    }

    fn load_cells_with(&self, run_id: i64, samples: bool, latencies: bool) -> Result<Vec<CellResult>> {
        // One query for the whole run's histograms, not one per cell.
        let mut by_cell = if latencies { self.run_latencies(run_id)? } else { Default::default() };
        let mut stmt = self.conn.prepare(CELL_SELECT)?;
        let rows = stmt.query_map([run_id], |row| Ok((row.get::<_, i64>(0)?, cell_from_row(row)?)))?;
        let mut cells = Vec::new();
        for row in rows {
            let (cell_id, cell) = row?;
            let mut cell =
                cell.map_err(|detail| StoreError::Corrupt { table: "cells", id: cell_id, detail })?;
            if samples {
                cell.samples = self.samples(cell_id)?;
            }
            if latencies {
                cell.latencies = by_cell.remove(&cell_id).unwrap_or_default();
            }
            cells.push(cell);
        }
        Ok(cells)
    }

    fn samples(&self, cell_id: i64) -> Result<Vec<SamplePoint>> {
        let sql = format!("SELECT {SAMPLE_COLUMNS} FROM samples WHERE cell_id = ?1 ORDER BY rowid");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([cell_id], sample_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Every latency histogram of a run's cells, by cell id, each cell's in the order written.
    pub(crate) fn run_latencies(&self, run_id: i64) -> Result<std::collections::HashMap<i64, Vec<OpStats>>> {
        let mut stmt = self.conn.prepare(
            "SELECT l.cell_id, l.op, l.histogram_json FROM latencies l JOIN cells c ON c.id = l.cell_id \
             WHERE c.run_id = ?1 ORDER BY l.rowid",
        )?;
        let rows = stmt.query_map([run_id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?))
        })?;
        let mut out: std::collections::HashMap<i64, Vec<OpStats>> = std::collections::HashMap::new();
        for row in rows {
            let (cell_id, op, json) = row?;
            let latency: LatencyHistogram = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                table: "latencies",
                id: cell_id,
                detail: format!("histogram of op '{op}': {e}"),
            })?;
            out.entry(cell_id).or_default().push(OpStats { op, latency });
        }
        Ok(out)
    }
}

pub(crate) fn insert_cell_row(
    tx: &Transaction<'_>,
    run_id: i64,
    idx: usize,
    cell: &CellResult,
) -> Result<i64> {
    let spec = &cell.spec;
    let idx = int("idx", u64::try_from(idx).unwrap_or(u64::MAX))?;
    tx.execute(
        CELL_INSERT,
        params![
            run_id,
            idx,
            spec.workload,
            spec.variant,
            spec.rep,
            serde_json::to_string(&spec.params)?,
            spec.match_key(),
            cell.status.as_str(),
            cell.error.as_deref().map(|e| clip(e, MAX_TEXT)),
            cell.unit.as_str(),
            cell.units,
            int("window_ns", cell.window.0)?,
            int("ops", cell.ops)?,
            int("bytes_read", cell.bytes_read)?,
            int("bytes_written", cell.bytes_written)?,
            cell.cpu.user_s,
            cell.cpu.kernel_s,
            cell.cpu.steal_s,
            cell.cpu.iowait_s,
            cell.cpu.idle_s,
            cell.workload_cpu.user_s,
            cell.workload_cpu.kernel_s,
            cpu_method_str(cell.workload_cpu.method),
            cell.harness_cpu_s,
            cell.cpus_online,
            extra_to_json(&cell.extra)?,
            now_unix_s(),
            serde_json::to_string(&cell.settings)?,
            cell.profile.as_ref().map(serde_json::to_string).transpose()?,
            cell.quality.outside_cpu_s,
            cell.quality.kthread_cpu_s,
            cell.quality.own_cpu_s,
            cell.quality.noisy.as_deref().map(|n| clip(n, MAX_TEXT)),
            serde_json::to_string(&cell.quality.below_resolution)?,
            cell.virt.as_ref().map(serde_json::to_string).transpose()?,
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

pub(crate) fn insert_samples(tx: &Transaction<'_>, cell_id: i64, samples: &[SamplePoint]) -> Result<()> {
    let sql = format!(
        "INSERT INTO samples (cell_id, {SAMPLE_COLUMNS}) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    );
    let mut stmt = tx.prepare_cached(&sql)?;
    for s in samples {
        stmt.execute(params![
            cell_id,
            int("t_ms", s.t_ms)?,
            s.cpu_user_pct,
            s.cpu_kernel_pct,
            s.cpu_iowait_pct,
            s.cpu_steal_pct,
            s.cpu_idle_pct,
            s.run_queue,
            s.blocked,
            int("mem_free_bytes", s.mem_free_bytes)?,
            int("mem_cached_bytes", s.mem_cached_bytes)?,
            int("mem_dirty_bytes", s.mem_dirty_bytes)?,
            s.pgpgin_per_s,
            s.pgpgout_per_s,
            s.pswpin_per_s,
            s.pswpout_per_s,
            s.disk_read_bytes_per_s,
            s.disk_write_bytes_per_s,
            s.ctxt_per_s,
        ])?;
    }
    Ok(())
}

pub(crate) fn insert_latencies(tx: &Transaction<'_>, cell_id: i64, latencies: &[OpStats]) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO latencies (cell_id, op, count, mean_ns, p50_ns, p90_ns, p99_ns, max_ns, histogram_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for op in latencies {
        let h = &op.latency;
        stmt.execute(params![
            cell_id,
            op.op,
            int("latency count", h.count)?,
            h.mean_ns(),
            int("p50_ns", h.quantile_ns(0.50))?,
            int("p90_ns", h.quantile_ns(0.90))?,
            int("p99_ns", h.quantile_ns(0.99))?,
            int("max_ns", h.max_ns)?,
            serde_json::to_string(h)?,
        ])?;
    }
    Ok(())
}

/// Rebuilds a cell (without samples and latencies) from a `CELL_SELECT` row. The outer error
/// is SQLite's; the inner one describes a JSON column that does not parse.
pub(crate) fn cell_from_row(row: &Row<'_>) -> rusqlite::Result<Result<CellResult, String>> {
    let params_json: String = row.get(4)?;
    let extra_json: String = row.get(23)?;
    let params: Params = match serde_json::from_str(&params_json) {
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("params_json: {e}"))),
    };
    let extra = match extra_from_json(&extra_json) {
        Ok(x) => x,
        Err(e) => return Ok(Err(format!("extra_json: {e}"))),
    };
    let settings_json: String = row.get(24)?;
    let settings = match serde_json::from_str(&settings_json) {
        Ok(x) => x,
        Err(e) => return Ok(Err(format!("settings_json: {e}"))),
    };
    let profile_json: Option<String> = row.get(25)?;
    let profile = match profile_json.as_deref().map(serde_json::from_str).transpose() {
        Ok(x) => x,
        Err(e) => return Ok(Err(format!("profile_json: {e}"))),
    };
    let below_json: String = row.get(30)?;
    let below_resolution = match serde_json::from_str(&below_json) {
        Ok(x) => x,
        Err(e) => return Ok(Err(format!("below_resolution_json: {e}"))),
    };
    let virt_json: Option<String> = row.get(31)?;
    let virt = match virt_json.as_deref().map(serde_json::from_str).transpose() {
        Ok(x) => x,
        Err(e) => return Ok(Err(format!("virt_json: {e}"))),
    };
    let quality = CellQuality {
        outside_cpu_s: row.get(26)?,
        kthread_cpu_s: row.get(27)?,
        own_cpu_s: row.get(28)?,
        noisy: row.get(29)?,
        below_resolution,
    };
    let spec = CellSpec { workload: row.get(1)?, params, variant: row.get(2)?, rep: row.get(3)? };
    Ok(Ok(CellResult {
        spec,
        status: parse_column(row, 5, parse_cell_status)?,
        error: row.get(6)?,
        unit: parse_column(row, 7, WorkUnit::parse)?,
        units: real(row, 8)?,
        window: Nanos(row.get(9)?),
        ops: row.get(10)?,
        bytes_read: row.get(11)?,
        bytes_written: row.get(12)?,
        cpu: CpuUsage {
            user_s: real(row, 13)?,
            kernel_s: real(row, 14)?,
            steal_s: real(row, 15)?,
            iowait_s: real(row, 16)?,
            idle_s: real(row, 17)?,
        },
        workload_cpu: WorkloadCpu {
            user_s: real(row, 18)?,
            kernel_s: real(row, 19)?,
            method: parse_column(row, 20, parse_cpu_method)?,
        },
        harness_cpu_s: real(row, 21)?,
        cpus_online: row.get(22)?,
        latencies: Vec::new(),
        samples: Vec::new(),
        extra,
        settings,
        profile,
        quality,
        virt,
    }))
}

fn sample_from_row(row: &Row<'_>) -> rusqlite::Result<SamplePoint> {
    Ok(SamplePoint {
        t_ms: row.get(0)?,
        cpu_user_pct: real(row, 1)?,
        cpu_kernel_pct: real(row, 2)?,
        cpu_iowait_pct: real(row, 3)?,
        cpu_steal_pct: real(row, 4)?,
        cpu_idle_pct: real(row, 5)?,
        run_queue: row.get(6)?,
        blocked: row.get(7)?,
        mem_free_bytes: row.get(8)?,
        mem_cached_bytes: row.get(9)?,
        mem_dirty_bytes: row.get(10)?,
        pgpgin_per_s: real(row, 11)?,
        pgpgout_per_s: real(row, 12)?,
        pswpin_per_s: real(row, 13)?,
        pswpout_per_s: real(row, 14)?,
        disk_read_bytes_per_s: real(row, 15)?,
        disk_write_bytes_per_s: real(row, 16)?,
        ctxt_per_s: real(row, 17)?,
    })
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;
