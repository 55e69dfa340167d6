//! Per-item comparisons of one matched point, beside its four metrics: the latency
//! percentiles (p50, p90, p99) of every operation, the harness's figures of a guest cell, and
//! the figures its engine declares with a direction (`EngineInfo::figures`, read through
//! [`crate::catalogue`]: analytics' time per query, paging's CPU per page moved, java's GC and
//! JIT figures, JMH's score, a paced cell's QoS latency …). Each is compared like a metric —
//! ratio new/base, gain with + = better, interval, and significance after a
//! Benjamini–Hochberg correction over the items of one new side (a family of its own, so that
//! many latencies do not dilute the metrics' tests).

use crate::compare::metric::{metric_compare, CompareOptions, MetricCompare};
use crate::model::{Group, Metric};
use racehorse_core::figure::{figure_of, Source};
use racehorse_core::{CellResult, Direction, Figure};
use serde::Serialize;

/// The percentiles compared per operation.
pub const PERCENTILES: [(&str, f64); 3] = [("p50", 0.50), ("p90", 0.90), ("p99", 0.99)];

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A latency percentile of one operation (nanoseconds, lower is better).
    Latency,
    /// An engine's own figure.
    Figure,
}

/// One item of one matched point on one new side.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemCompare {
    pub kind: ItemKind,
    /// The operation (`read`, `q01`) or the figure (`CPU per page moved`).
    pub item: String,
    /// `p50`, `p90`, `p99` for latencies; "" for figures.
    pub stat: String,
    /// Base unit: `ns`, `ms`, `cpu_s/page`, `moves/touch`.
    pub unit: &'static str,
    /// The comparison; its `metric` only carries the direction (throughput: higher is
    /// better, CPU per unit: lower is better).
    pub cmp: MetricCompare,
}

impl ItemCompare {
    pub fn direction(&self) -> Direction {
        self.cmp.metric.direction()
    }

    /// `read p99`, `q01 time`, `CPU per page moved`.
    pub fn label(&self) -> String {
        if self.stat.is_empty() {
            self.item.clone()
        } else {
            format!("{} {}", self.item, self.stat)
        }
    }
}

/// A figure of the harness, for every workload: a cell run in a KVM guest has the host's CPU
/// per unit in the seeds' three parts (only sides with guest cells have them).
struct HarnessFigure {
    name: &'static str,
    unit: &'static str,
    value: fn(&CellResult) -> Option<f64>,
}

const GUEST_CELL_FIGURES: [HarnessFigure; 3] = [
    HarnessFigure {
        name: "Total CPU/unit (guest cell)",
        unit: "cpu_s/unit",
        value: CellResult::virt_total_per_unit,
    },
    HarnessFigure {
        name: "Hypervisor CPU/unit",
        unit: "cpu_s/unit",
        value: CellResult::virt_hypervisor_per_unit,
    },
    HarnessFigure { name: "Guest CPU/unit", unit: "cpu_s/unit", value: CellResult::virt_guest_per_unit },
];

/// The value of an engine's figure of `key` in a cell.
fn figure_value(f: &Figure, key: &str, c: &CellResult) -> Option<f64> {
    let v = *c.extra.get(key)?;
    match f.source {
        Source::Extra => Some(v),
        // Total CPU seconds per one counted thing (seed 001's CPU per page moved).
        Source::CpuPerExtra => {
            let resolved = !c.quality.below(racehorse_core::quality::CPU);
            (v > 0.0 && resolved).then(|| (c.cpu.user_s + c.cpu.kernel_s) / v)
        }
    }
}

/// The metric whose direction an item borrows.
pub(crate) fn proxy(direction: Direction) -> Metric {
    match direction {
        Direction::HigherIsBetter => Metric::Throughput,
        Direction::LowerIsBetter => Metric::CpuTotalPerUnit,
    }
}

/// Compares one item's per-repetition values; `below` on either side shows no number.
fn item(
    (kind, name, stat, unit): (ItemKind, String, &str, &'static str),
    direction: Direction,
    values: [Vec<f64>; 2],
    below: bool,
    noisy_window: bool,
    opts: &CompareOptions,
) -> ItemCompare {
    let m = proxy(direction);
    let mut cmp = if below {
        MetricCompare::below_resolution(m)
    } else {
        metric_compare(m, &values[0], &values[1], opts)
    };
    if noisy_window && !below {
        cmp.noisy_window = true;
        cmp.significant = None;
        cmp.verdict = None;
    }
    ItemCompare { kind, item: name, stat: stat.to_string(), unit, cmp }
}

/// Operations with latencies in the ok repetitions, in order of first appearance; an
/// operation timed once per repetition (a single query) has no percentiles worth showing.
fn operations(groups: [&Group<'_>; 2]) -> Vec<String> {
    let mut ops: Vec<String> = Vec::new();
    for c in groups.iter().flat_map(|g| g.ok.iter()) {
        for o in &c.latencies {
            if !ops.contains(&o.op) {
                ops.push(o.op.clone());
            }
        }
    }
    let timed_often = |op: &String| {
        groups
            .iter()
            .flat_map(|g| g.ok.iter())
            .any(|c| c.latencies.iter().any(|o| &o.op == op && o.latency.count > 1))
    };
    ops.retain(timed_often);
    ops
}

/// A percentile of one operation over a side's ok repetitions (those that timed it).
fn percentile_values(g: &Group<'_>, op: &str, q: f64) -> Vec<f64> {
    g.ok.iter()
        .filter_map(|c| c.latencies.iter().find(|o| o.op == op))
        .filter(|o| o.latency.count > 0)
        .map(|o| o.latency.quantile_ns(q) as f64)
        .collect()
}

/// Every item of one matched point: latencies first, then the figures: the engine's CPU per
/// a counted thing, a guest cell's CPU split, the engine's other compared figures in the order
/// it declares them, and last the members of its families (`q01 time` …), in key order.
pub fn item_compares(
    base: &Group<'_>,
    new: &Group<'_>,
    noisy_window: bool,
    opts: &CompareOptions,
    figures: &[Figure],
) -> Vec<ItemCompare> {
    let mut out = Vec::new();
    for op in operations([base, new]) {
        let name = format!("latency {op}");
        let below = [base, new].iter().any(|g| g.ok.iter().any(|c| c.quality.below(&name)));
        for (stat, q) in PERCENTILES {
            let values = [percentile_values(base, &op, q), percentile_values(new, &op, q)];
            let what = (ItemKind::Latency, op.clone(), stat, "ns");
            out.push(item(what, Direction::LowerIsBetter, values, below, noisy_window, opts));
        }
    }
    let mut push = |name: String,
                    unit: &'static str,
                    direction: Direction,
                    value: &dyn Fn(&CellResult) -> Option<f64>| {
        let values = [base, new].map(|g| g.ok.iter().filter_map(|c| value(c)).collect::<Vec<f64>>());
        if values.iter().any(|v| !v.is_empty()) {
            let what = (ItemKind::Figure, name, "", unit);
            out.push(item(what, direction, values, false, noisy_window, opts));
        }
    };
    let compared = || figures.iter().filter_map(|f| Some((f, f.direction?)));
    let exact = || compared().filter(|(f, _)| !f.is_family());
    for (f, d) in exact().filter(|(f, _)| f.source == Source::CpuPerExtra) {
        push(f.name.to_string(), f.unit, d, &|c| figure_value(f, f.key, c));
    }
    for h in &GUEST_CELL_FIGURES {
        push(h.name.to_string(), h.unit, Direction::LowerIsBetter, &h.value);
    }
    for (f, d) in exact().filter(|(f, _)| f.source != Source::CpuPerExtra) {
        push(f.name.to_string(), f.unit, d, &|c| figure_value(f, f.key, c));
    }
    for (key, f, d) in family_members(base, new, figures) {
        push(f.name_of(&key), f.unit, d, &|c| figure_value(f, &key, c));
    }
    out
}

/// The extras of either side's ok repetitions that belong to a compared family of `figures`
/// (not to an exact key), ordered by what the pattern matched.
fn family_members<'f>(
    base: &Group<'_>,
    new: &Group<'_>,
    figures: &'f [Figure],
) -> Vec<(String, &'f Figure, Direction)> {
    let mut keys: Vec<&String> = base.ok.iter().chain(&new.ok).flat_map(|c| c.extra.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out: Vec<(Vec<&str>, String, &Figure, Direction)> = keys
        .into_iter()
        .filter_map(|k| {
            let f = figure_of(figures, k).filter(|f| f.is_family())?;
            Some((f.matches(k)?, k.clone(), f, f.direction?))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, k, f, d)| (k, f, d)).collect()
}
