//! `racehorse show RUN --json`: what `show` prints as one versioned JSON document
//! (`racehorse-show`, docs/formats.md): the run, and per workload, variant and unit its fixed
//! parameters and every measured point with medians, spread, marks and latency percentiles.

use crate::model::Metric;
use crate::run::report::{RunReport, RunRow, RunTable};
use racehorse_core::Params;
use racehorse_stats::Summary;
use serde_json::{json, Value as Json};

/// Version of the `racehorse-show` document. Adding fields keeps it.
pub const SHOW_FORMAT_VERSION: u32 = 1;

fn summary(s: Option<Summary>) -> Json {
    match s {
        Some(s) => json!({
            "n": s.n,
            "median": s.median,
            "mean": s.mean,
            "min": s.min,
            "max": s.max,
            "stddev": s.stddev,
        }),
        None => Json::Null,
    }
}

fn point(t: &RunTable, row: &RunRow) -> Json {
    let metric = |m: Metric| summary(row.metric(m));
    let below: Vec<&str> = row.below.iter().map(|m| m.name()).collect();
    let noisy: Vec<Json> = row
        .noisy_reps
        .iter()
        .map(|r| json!({ "rep": r.rep, "reason": r.reason, "outside_cpu_pct": r.outside_cpu_pct }))
        .collect();
    let varying: Params =
        t.columns.iter().filter_map(|c| row.params.get(c).map(|v| (c.clone(), v.clone()))).collect();
    json!({
        "params": varying,
        "n": row.n,
        "failed": row.not_ok,
        "throughput_per_s": metric(Metric::Throughput),
        "cpu_total_per_unit_s": metric(Metric::CpuTotalPerUnit),
        "cpu_kernel_per_unit_s": metric(Metric::CpuKernelPerUnit),
        "cpu_user_per_unit_s": metric(Metric::CpuUserPerUnit),
        "scattered": row.noisy,
        "noisy_reps": noisy,
        "below_resolution": below,
        "outlier_reps": row.outlier_reps,
        "qos_checked_reps": row.qos_checked,
        "qos_failed_reps": row.qos_failed_reps,
        "workload_cpu_s": summary(row.workload_cpu_s),
        "harness_cpu_pct": summary(row.harness_cpu_pct),
        "extra": row.extras.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "latencies": row.latencies,
    })
}

/// The run as `show --json` prints it. Summed points (a phased workload's `overall`) are left
/// out, as `show` leaves them out.
pub fn show_json(r: &RunReport) -> String {
    let tables: Vec<Json> = r
        .tables
        .iter()
        .map(|t| {
            let points: Vec<Json> =
                t.rows.iter().filter(|row| !row.summed).map(|row| point(t, row)).collect();
            json!({
                "workload": t.workload,
                "variant": t.variant,
                "area": t.area,
                "unit": t.unit.as_str(),
                "fixed": t.constant,
                "points": points,
            })
        })
        .collect();
    let failures: Vec<Json> = r
        .failures
        .iter()
        .map(|f| json!({ "status": f.status.as_str(), "cell": f.label, "error": f.error }))
        .collect();
    let doc = json!({
        "format": "racehorse-show",
        "version": SHOW_FORMAT_VERSION,
        "run": r.side,
        "variant_settings": r.variant_settings.iter().map(|v| json!({ "variant": v.variant, "settings": v.settings })).collect::<Vec<_>>(),
        "tables": tables,
        "failures": failures,
    });
    format!("{doc:#}\n")
}
