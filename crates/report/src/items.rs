//! Per-item comparisons of one matched point, beside its four metrics: the latency
//! percentiles (p50, p90, p99) of every operation, and the engines' own figures that the
//! seeds compare (analytics' time per query, paging's CPU per page moved and moves per
//! touch, java's GC and JIT figures, JMH's score). Each is compared like a metric — ratio
//! new/base, gain with + = better, interval, and significance after a Benjamini–Hochberg
//! correction over the items of one new side (a family of its own, so that many latencies do
//! not dilute the metrics' tests).

use crate::compare::{metric_compare, CompareOptions, MetricCompare, WorkloadTable};
use crate::model::{Group, Metric};
use racehorse_core::{CellResult, Direction};
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

/// An engine figure that compare shows per point (`workload` "*": of any workload that
/// records it).
struct FigureSpec {
    workload: &'static str,
    name: &'static str,
    unit: &'static str,
    direction: Direction,
    value: fn(&CellResult) -> Option<f64>,
}

/// Total CPU seconds per page moved in or out (seed 001's paging thrasher).
fn cpu_per_page_moved(c: &CellResult) -> Option<f64> {
    let moved = *c.extra.get("n_page_moved")?;
    let resolved = !c.quality.below(racehorse_core::quality::CPU);
    (moved > 0.0 && resolved).then(|| (c.cpu.user_s + c.cpu.kernel_s) / moved)
}

/// A figure of every workload.
const ANY: &str = "*";

const FIGURES: &[FigureSpec] = &[
    FigureSpec {
        workload: "paging",
        name: "CPU per page moved",
        unit: "cpu_s/page",
        direction: Direction::LowerIsBetter,
        value: cpu_per_page_moved,
    },
    // A cell run in a KVM guest: the host's CPU per unit in the seeds' three parts, for any
    // workload (only sides with guest cells have them).
    FigureSpec {
        workload: ANY,
        name: "Total CPU/unit (guest cell)",
        unit: "cpu_s/unit",
        direction: Direction::LowerIsBetter,
        value: CellResult::virt_total_per_unit,
    },
    FigureSpec {
        workload: ANY,
        name: "Hypervisor CPU/unit",
        unit: "cpu_s/unit",
        direction: Direction::LowerIsBetter,
        value: CellResult::virt_hypervisor_per_unit,
    },
    FigureSpec {
        workload: ANY,
        name: "Guest CPU/unit",
        unit: "cpu_s/unit",
        direction: Direction::LowerIsBetter,
        value: CellResult::virt_guest_per_unit,
    },
    FigureSpec {
        workload: "paging",
        name: "moves per touch",
        unit: "moves/touch",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("moves_per_touch").copied(),
    },
    FigureSpec {
        workload: "java",
        name: "GC time in window",
        unit: "ms",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("gc_time_ms").copied(),
    },
    FigureSpec {
        workload: "java",
        name: "GC pause time",
        unit: "ms",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("gc_pause_ms").copied(),
    },
    FigureSpec {
        workload: "java",
        name: "longest GC pause",
        unit: "ms",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("gc_pause_max_ms").copied(),
    },
    FigureSpec {
        workload: "java",
        name: "collections",
        unit: "GCs",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("gc_count").copied(),
    },
    FigureSpec {
        workload: "java",
        name: "heap after GC",
        unit: "MiB",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("gc_heap_after_mib").copied(),
    },
    FigureSpec {
        workload: "java",
        name: "JIT time in window",
        unit: "ms",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("jit_ms").copied(),
    },
    // JMH's own score, in one unit per direction whatever unit the benchmark printed.
    FigureSpec {
        workload: "jmh",
        name: "JMH score",
        unit: "ops/s",
        direction: Direction::HigherIsBetter,
        value: |c| c.extra.get("jmh_ops_per_s").copied(),
    },
    FigureSpec {
        workload: "jmh",
        name: "JMH score",
        unit: "ns/op",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("jmh_ns_per_op").copied(),
    },
    // Paced cells (`rate`, `qos`; engines' support::pace): the latency percentile the QoS
    // limits and the rate achieved.
    FigureSpec {
        workload: ANY,
        name: "QoS latency",
        unit: "ms",
        direction: Direction::LowerIsBetter,
        value: |c| c.extra.get("qos_measured_ms").copied(),
    },
    FigureSpec {
        workload: ANY,
        name: "paced rate achieved",
        unit: "units/s",
        direction: Direction::HigherIsBetter,
        value: |c| c.extra.get("pace_achieved_per_s").copied(),
    },
];

/// The metric whose direction an item borrows.
fn proxy(direction: Direction) -> Metric {
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

/// Every item of one matched point: latencies first, then the engine's figures.
pub fn item_compares(
    base: &Group<'_>,
    new: &Group<'_>,
    noisy_window: bool,
    opts: &CompareOptions,
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
    for f in FIGURES.iter().filter(|f| f.workload == base.workload || f.workload == ANY) {
        let values = [base, new].map(|g| g.ok.iter().filter_map(|c| (f.value)(c)).collect::<Vec<f64>>());
        if values.iter().all(Vec::is_empty) {
            continue;
        }
        let what = (ItemKind::Figure, f.name.to_string(), "", f.unit);
        out.push(item(what, f.direction, values, false, noisy_window, opts));
    }
    out.extend(query_times(base, new, noisy_window, opts));
    out
}

/// analytics: each query's run time (`q01_ms` …), lower is better.
fn query_times(
    base: &Group<'_>,
    new: &Group<'_>,
    noisy_window: bool,
    opts: &CompareOptions,
) -> Vec<ItemCompare> {
    if base.workload != "analytics" {
        return Vec::new();
    }
    let mut names: Vec<&str> = Vec::new();
    for c in base.ok.iter().chain(&new.ok) {
        for k in c.extra.keys() {
            let Some(q) = k.strip_suffix("_ms") else { continue };
            if q != "total" && !names.contains(&q) {
                names.push(q);
            }
        }
    }
    names.sort_unstable();
    names
        .into_iter()
        .map(|q| {
            let key = format!("{q}_ms");
            let values =
                [base, new].map(|g| g.ok.iter().filter_map(|c| c.extra.get(&key).copied()).collect());
            let what = (ItemKind::Figure, format!("{q} time"), "", "ms");
            item(what, Direction::LowerIsBetter, values, false, noisy_window, opts)
        })
        .collect()
}

/// Benjamini–Hochberg over the tested items of each new side (the items' own family).
pub fn correct_items(tables: &mut [WorkloadTable], sides: usize, alpha: f64) {
    for side in 0..sides {
        let items: Vec<&mut MetricCompare> = tables
            .iter_mut()
            .flat_map(|t| t.rows.iter_mut())
            .filter_map(|r| r.sides.get_mut(side)?.as_mut())
            .flat_map(|c| c.items.iter_mut().map(|i| &mut i.cmp))
            .collect();
        crate::verdicts::correct_family(items, alpha);
    }
}

/// Whether any row of the table has items of `kind` on `side`.
pub fn has_items(t: &WorkloadTable, side: usize, kind: ItemKind) -> bool {
    t.rows.iter().filter_map(|r| r.sides.get(side)?.as_ref()).any(|c| c.items.iter().any(|i| i.kind == kind))
}
