//! The comparison as flat records, one per (new side, matched point, metric): the shape
//! both csv and json carry, with base units, direction, n, means, ratio and CI.

use crate::compare::comparison::Comparison;
use crate::model::params_label;
use racehorse_core::{Direction, Params};
use serde::Serialize;

/// Version of the compare json/csv contract (docs/formats.md).
pub const COMPARE_FORMAT_VERSION: u32 = 1;

/// One metric of one matched point on one new side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlatRecord {
    /// Index of the new side (0-based) and its run id.
    pub side: usize,
    pub new_run_id: i64,
    pub workload: String,
    /// Variant when matched by variant, else "".
    pub variant: String,
    pub params: Params,
    pub metric: &'static str,
    /// Base unit, e.g. `bytes/s`, `cpu_s/byte`.
    pub unit: String,
    pub direction: Direction,
    pub base_n: usize,
    pub base_mean: Option<f64>,
    pub base_stddev: Option<f64>,
    pub new_n: usize,
    pub new_mean: Option<f64>,
    pub new_stddev: Option<f64>,
    /// new mean / base mean.
    pub ratio: Option<f64>,
    /// Change in %, + is better.
    pub gain_pct: Option<f64>,
    pub ci_lo: Option<f64>,
    pub ci_hi: Option<f64>,
    pub ci_level: Option<f64>,
    pub ci_method: Option<&'static str>,
    /// Significant after the Benjamini–Hochberg correction over the new side's tests; null
    /// without an interval, for a noisy point and below resolution (not judged).
    pub significant: Option<bool>,
    /// Better, worse or same; null for a noisy point (not judged) or without a ratio.
    pub verdict: Option<&'static str>,
    pub noisy: bool,
    /// Two-sided p-value of no change, and after the correction; null when not tested.
    pub p_value: Option<f64>,
    pub q_value: Option<f64>,
    /// A repetition on either side ran while other processes used the CPU.
    pub noisy_window: bool,
    /// The figure is below its resolution on either side: no means, ratio or interval.
    pub below_resolution: bool,
    /// Some repetition of this point failed or was interrupted on either side.
    pub partial: bool,
    /// Repetitions whose throughput is an outlier (median/MAD), per side; kept in every figure.
    pub base_outlier_reps: Vec<u32>,
    pub new_outlier_reps: Vec<u32>,
    /// Repetitions that ran while other processes used the CPU, per side.
    pub base_noisy_reps: Vec<u32>,
    pub new_noisy_reps: Vec<u32>,
    /// Repetitions of a paced point whose quality of service failed (`qos_held` = 0), per side.
    pub base_qos_failed_reps: Vec<u32>,
    pub new_qos_failed_reps: Vec<u32>,
}

/// Every record of a comparison, table by table, row by row, side by side.
pub fn flat_records(c: &Comparison) -> Vec<FlatRecord> {
    let mut out = Vec::new();
    for t in &c.tables {
        for row in &t.rows {
            for (side, cell) in row.sides.iter().enumerate() {
                let Some(cell) = cell else { continue };
                for m in &cell.metrics {
                    out.push(FlatRecord {
                        side,
                        new_run_id: c.news.get(side).map_or(0, |s| s.run_id),
                        workload: t.workload.clone(),
                        variant: t.variant.clone(),
                        params: row.params.clone(),
                        metric: m.metric.name(),
                        unit: m.metric.base_unit(t.unit),
                        direction: m.metric.direction(),
                        base_n: m.base.map_or(0, |s| s.n),
                        base_mean: m.base.map(|s| s.mean),
                        base_stddev: m.base.map(|s| s.stddev),
                        new_n: m.new.map_or(0, |s| s.n),
                        new_mean: m.new.map(|s| s.mean),
                        new_stddev: m.new.map(|s| s.stddev),
                        ratio: m.ratio,
                        gain_pct: m.gain_pct,
                        ci_lo: m.ci.map(|x| x.lo),
                        ci_hi: m.ci.map(|x| x.hi),
                        ci_level: m.ci.map(|x| x.level),
                        ci_method: m.ci.map(|x| x.method.as_str()),
                        significant: m.significant,
                        verdict: m.verdict.map(|v| v.as_str()),
                        noisy: m.noisy,
                        p_value: m.p_value,
                        q_value: m.q_value,
                        noisy_window: m.noisy_window,
                        below_resolution: m.below_resolution,
                        partial: row.base_not_ok > 0 || cell.not_ok > 0,
                        base_outlier_reps: row.base_outlier_reps.clone(),
                        new_outlier_reps: cell.outlier_reps.clone(),
                        base_noisy_reps: row.base_noisy_reps.iter().map(|r| r.rep).collect(),
                        new_noisy_reps: cell.noisy_reps.iter().map(|r| r.rep).collect(),
                        base_qos_failed_reps: row.base_qos_failed_reps.clone(),
                        new_qos_failed_reps: cell.qos_failed_reps.clone(),
                    });
                }
            }
        }
    }
    out
}

/// The params of a record as `k=v k=v` (csv's one column).
pub fn params_text(p: &Params) -> String {
    let names: Vec<String> = p.keys().cloned().collect();
    params_label(p, &names)
}
