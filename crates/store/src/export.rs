//! Machine-readable exports of one run: the versioned JSON contract ("racehorse-run" v1) and a
//! flat CSV with one row per cell. Both are documented field by field in docs/formats.md.

use crate::cells::cpu_method_str;
use crate::store::RunInfo;
use racehorse_core::{CellResult, LatencyHistogram, Value};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Version of the JSON export contract. Adding fields keeps it; renaming or removing a
/// field, or changing a unit, increments it.
pub const FORMAT_VERSION: u32 = 1;

/// The `format` field of a JSON export.
pub const FORMAT_NAME: &str = "racehorse-run";

/// A JSON column embedded as JSON: empty → null, unparsable → the text as a JSON string.
fn embedded(text: &str) -> Json {
    if text.trim().is_empty() {
        return Json::Null;
    }
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_owned()))
}

fn param_json(v: &Value) -> Json {
    match v {
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => json!(f),
        Value::Str(s) => json!(s),
    }
}

fn run_json(run: &RunInfo) -> Json {
    json!({
        "id": run.id,
        "label": run.label,
        "started_at_unix_s": run.started_at_unix_s,
        "finished_at_unix_s": run.finished_at_unix_s,
        "status": run.status.as_str(),
        "host": run.host,
        "command": run.command,
        "suite": embedded(&run.suite_json),
        "env": embedded(&run.env_json),
        "exclusivity": embedded(&run.exclusivity_json),
        "racehorse_version": run.racehorse_version,
        "cpu_method": run.cpu_method,
        "cells_ok": run.cells_ok,
        "cells_failed": run.cells_failed,
        "uuid": run.uuid,
        "inventory_name": run.inventory_name,
        "campaign": run.campaign,
    })
}

fn latency_json(op: &str, h: &LatencyHistogram) -> Json {
    json!({
        "op": op,
        "count": h.count,
        "mean_ns": h.mean_ns(),
        "p50_ns": h.quantile_ns(0.50),
        "p90_ns": h.quantile_ns(0.90),
        "p99_ns": h.quantile_ns(0.99),
        "max_ns": h.max_ns,
        "histogram": h,
    })
}

fn cell_json(cell: &CellResult) -> Json {
    let spec = &cell.spec;
    let params: Map<String, Json> = spec.params.iter().map(|(k, v)| (k.clone(), param_json(v))).collect();
    let cpu_per_unit = match (cell.cpu_total_per_unit(), cell.cpu_kernel_per_unit(), cell.cpu_user_per_unit())
    {
        (Some(total_s), Some(kernel_s), Some(user_s)) => {
            json!({ "total_s": total_s, "kernel_s": kernel_s, "user_s": user_s })
        }
        _ => Json::Null,
    };
    let wl = &cell.workload_cpu;
    json!({
        "workload": spec.workload,
        "variant": spec.variant,
        "rep": spec.rep,
        "params": params,
        "match_key": spec.match_key(),
        "status": cell.status.as_str(),
        "error": cell.error,
        "unit": cell.unit.as_str(),
        "units": cell.units,
        "window_ns": cell.window.0,
        "window_s": cell.window.as_secs_f64(),
        "throughput_per_s": cell.throughput_resolved(),
        "ops": cell.ops,
        "bytes_read": cell.bytes_read,
        "bytes_written": cell.bytes_written,
        "cpu": {
            "user_s": cell.cpu.user_s,
            "kernel_s": cell.cpu.kernel_s,
            "steal_s": cell.cpu.steal_s,
            "iowait_s": cell.cpu.iowait_s,
            "idle_s": cell.cpu.idle_s,
            "total_s": cell.cpu.total_s(),
        },
        "cpu_per_unit": cpu_per_unit,
        "workload_cpu": {
            "user_s": wl.user_s,
            "kernel_s": wl.kernel_s,
            "total_s": wl.total_s(),
            "method": cpu_method_str(wl.method),
        },
        "harness_cpu_s": cell.harness_cpu_s,
        "cpus_online": cell.cpus_online,
        "latencies": cell.latencies.iter().map(|o| latency_json(&o.op, &o.latency)).collect::<Vec<_>>(),
        "extra": cell.extra,
        "settings": cell.settings,
        "profile": cell.profile,
        "samples": cell.samples,
        "quality": quality_json(cell),
        "virt": virt_json(cell),
    })
}

/// A guest cell's CPU split (null on bare metal) with its three parts per unit (null below
/// resolution).
fn virt_json(cell: &CellResult) -> Json {
    let Some(v) = &cell.virt else { return Json::Null };
    let mut out = serde_json::to_value(v).unwrap_or(Json::Null);
    if let Some(map) = out.as_object_mut() {
        map.insert(
            "per_unit".into(),
            json!({
                "total_s": cell.virt_total_per_unit(),
                "hypervisor_s": cell.virt_hypervisor_per_unit(),
                "guest_s": cell.virt_guest_per_unit(),
            }),
        );
    }
    out
}

/// The cell's noise and resolution (additive in contract v1; see docs/formats.md).
fn quality_json(cell: &CellResult) -> Json {
    let q = &cell.quality;
    json!({
        "outside_cpu_s": q.outside_cpu_s,
        "kthread_cpu_s": q.kthread_cpu_s,
        "own_cpu_s": q.own_cpu_s,
        "noisy": q.noisy.is_some(),
        "noisy_reason": q.noisy,
        "below_resolution": q.below_resolution,
    })
}

/// The run and its cells as pretty-printed JSON (contract `racehorse-run`, [`FORMAT_VERSION`]).
/// Non-finite numbers are written as null.
pub fn export_json(run: &RunInfo, cells: &[CellResult]) -> String {
    format!("{:#}\n", export_doc(run, cells))
}

/// A stored run's history parts: its tags and the change points whose first run after the
/// change is this run.
pub fn history_parts(store: &crate::Store, run: &RunInfo) -> crate::Result<HistoryParts> {
    let tags = store.run_tags(run.id)?;
    let mut change_points = store.change_points(None)?;
    change_points.retain(|c| c.after_run_uuid == run.uuid);
    Ok(HistoryParts { tags, change_points })
}

/// The export document itself (what [`export_json`] prints), for loaders that need the
/// values rather than the text (`racehorse load` of a SQLite store).
pub fn export_doc(run: &RunInfo, cells: &[CellResult]) -> Json {
    export_doc_with(run, &HistoryParts::default(), cells)
}

/// What an export carries for history besides the run and its cells (added to version 1
/// without changing it: readers that do not know them skip them).
#[derive(Debug, Clone, Default)]
pub struct HistoryParts {
    /// The run's tags.
    pub tags: Vec<(String, String)>,
    /// The ledger's change points whose first run after the change is this run.
    pub change_points: Vec<crate::ledger::ChangePointRecord>,
}

/// The export document of a run with its tags and its change points.
pub fn export_doc_with(run: &RunInfo, history: &HistoryParts, cells: &[CellResult]) -> Json {
    let mut run_obj = run_json(run);
    let tags: Map<String, Json> =
        history.tags.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect();
    run_obj["tags"] = Json::Object(tags);
    json!({
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "run": run_obj,
        "cells": cells.iter().map(cell_json).collect::<Vec<_>>(),
        "change_points": history.change_points,
    })
}

/// Quotes a CSV field per RFC 4180 when it holds a comma, quote, CR or LF.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A number for CSV: shortest exact decimal; empty when not finite or absent.
fn csv_num(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite()).map(|x| x.to_string()).unwrap_or_default()
}

/// Fixed columns, before the per-run `param.*` and after them the `extra.*` / `lat.*` ones.
const FIXED_HEAD: &[&str] = &["run_id", "run_label", "cell_idx", "workload", "variant", "rep"];
const FIXED_TAIL: &[&str] = &[
    "status",
    "error",
    "unit",
    "units",
    "window_s",
    "throughput_per_s",
    "ops",
    "bytes_read",
    "bytes_written",
    "cpu_user_s",
    "cpu_kernel_s",
    "cpu_steal_s",
    "cpu_iowait_s",
    "cpu_idle_s",
    "cpu_total_per_unit_s",
    "cpu_kernel_per_unit_s",
    "cpu_user_per_unit_s",
    "wl_cpu_user_s",
    "wl_cpu_kernel_s",
    "wl_cpu_method",
    "harness_cpu_s",
    "cpus_online",
    "outside_cpu_s",
    "kthread_cpu_s",
    "own_cpu_s",
    "noisy",
    "below_resolution",
];
const LATENCY_FIELDS: &[&str] = &["count", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"];

fn fixed_tail_values(cell: &CellResult) -> Vec<String> {
    let n = |v: f64| csv_num(Some(v));
    vec![
        cell.status.as_str().to_owned(),
        cell.error.clone().unwrap_or_default(),
        cell.unit.as_str().to_owned(),
        n(cell.units),
        n(cell.window.as_secs_f64()),
        csv_num(cell.throughput_resolved()),
        cell.ops.to_string(),
        cell.bytes_read.to_string(),
        cell.bytes_written.to_string(),
        n(cell.cpu.user_s),
        n(cell.cpu.kernel_s),
        n(cell.cpu.steal_s),
        n(cell.cpu.iowait_s),
        n(cell.cpu.idle_s),
        csv_num(cell.cpu_total_per_unit()),
        csv_num(cell.cpu_kernel_per_unit()),
        csv_num(cell.cpu_user_per_unit()),
        n(cell.workload_cpu.user_s),
        n(cell.workload_cpu.kernel_s),
        cpu_method_str(cell.workload_cpu.method).to_owned(),
        n(cell.harness_cpu_s),
        cell.cpus_online.to_string(),
        csv_num(cell.quality.outside_cpu_s),
        csv_num(cell.quality.kthread_cpu_s),
        csv_num(cell.quality.own_cpu_s),
        cell.quality.noisy.clone().unwrap_or_default(),
        cell.quality.below_resolution.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("; "),
    ]
}

fn latency_values(cell: &CellResult, op: &str) -> Vec<String> {
    match cell.latencies.iter().find(|o| o.op == op) {
        Some(o) => {
            let h = &o.latency;
            vec![
                h.count.to_string(),
                csv_num(Some(h.mean_ns())),
                h.quantile_ns(0.50).to_string(),
                h.quantile_ns(0.90).to_string(),
                h.quantile_ns(0.99).to_string(),
                h.max_ns.to_string(),
            ]
        }
        None => vec![String::new(); LATENCY_FIELDS.len()],
    }
}

fn push_row(out: &mut String, fields: &[String]) {
    let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    let _ = writeln!(out, "{}", line.join(","));
}

/// The run's cells as CSV, one row per cell in plan order, with a header whose names carry
/// units. Parameters, extra figures and per-op latencies become `param.<name>`,
/// `extra.<name>` and `lat.<op>.<field>` columns over their union in the run.
pub fn export_csv(run: &RunInfo, cells: &[CellResult]) -> String {
    let param_names: BTreeSet<&str> =
        cells.iter().flat_map(|c| c.spec.params.keys()).map(String::as_str).collect();
    let extra_names: BTreeSet<&str> = cells.iter().flat_map(|c| c.extra.keys()).map(String::as_str).collect();
    let ops: BTreeSet<&str> = cells.iter().flat_map(|c| &c.latencies).map(|o| o.op.as_str()).collect();

    let mut header: Vec<String> = FIXED_HEAD.iter().map(|s| s.to_string()).collect();
    header.extend(param_names.iter().map(|p| format!("param.{p}")));
    header.extend(FIXED_TAIL.iter().map(|s| s.to_string()));
    header.extend(extra_names.iter().map(|e| format!("extra.{e}")));
    for op in &ops {
        header.extend(LATENCY_FIELDS.iter().map(|f| format!("lat.{op}.{f}")));
    }
    let mut out = String::new();
    push_row(&mut out, &header);
    for (idx, cell) in cells.iter().enumerate() {
        let spec = &cell.spec;
        let mut row = vec![
            run.id.to_string(),
            run.label.clone(),
            idx.to_string(),
            spec.workload.clone(),
            spec.variant.clone(),
        ];
        row.push(spec.rep.to_string());
        row.extend(
            param_names.iter().map(|p| spec.params.get(*p).map(|v| v.to_string()).unwrap_or_default()),
        );
        row.extend(fixed_tail_values(cell));
        row.extend(extra_names.iter().map(|e| csv_num(cell.extra.get(*e).copied())));
        for op in &ops {
            row.extend(latency_values(cell, op));
        }
        push_row(&mut out, &row);
    }
    out
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
