//! The matched points of a comparison: per workload (and variant, and unit) a table whose
//! rows are the points present in base and at least one new side, each with its compared
//! metrics and items per new side and the repetitions marked on either side.

use crate::compare::items::{ItemCompare, ItemKind};
use crate::compare::metric::MetricCompare;
use crate::model::Metric;
use crate::quality::NoisyRep;
use racehorse_core::{Params, WorkUnit};

/// A matched cell on one new side.
#[derive(Debug, Clone, PartialEq)]
pub struct SideCell {
    pub metrics: Vec<MetricCompare>,
    /// Failed or interrupted repetitions of the new side.
    pub not_ok: usize,
    /// Repetitions of the new side whose throughput is an outlier (kept).
    pub outlier_reps: Vec<u32>,
    /// Repetitions of the new side that ran while other processes used the CPU.
    pub noisy_reps: Vec<NoisyRep>,
    /// Repetitions of the new side whose quality of service failed (paced cells; kept).
    pub qos_failed_reps: Vec<u32>,
    /// Latency percentiles per operation and the engine's own figures (analytics' queries,
    /// paging's CPU per page moved …), compared like the metrics.
    pub items: Vec<ItemCompare>,
}

impl SideCell {
    pub fn metric(&self, m: Metric) -> Option<&MetricCompare> {
        self.metrics.iter().find(|c| c.metric == m)
    }
}

/// One row of a workload table: a matrix point present in base and at least one new side.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub params: Params,
    /// The varying parameters as `k=v k=v`.
    pub label: String,
    /// The point's area in seed 000's summary (from its engine's rule).
    pub area: String,
    pub base_not_ok: usize,
    /// Repetitions of the base whose throughput is an outlier (kept).
    pub base_outlier_reps: Vec<u32>,
    /// Repetitions of the base that ran while other processes used the CPU.
    pub base_noisy_reps: Vec<NoisyRep>,
    /// Repetitions of the base whose quality of service failed (paced cells; kept).
    pub base_qos_failed_reps: Vec<u32>,
    /// Per new side, in order; None when that side lacks the point.
    pub sides: Vec<Option<SideCell>>,
}

impl Row {
    /// Whether any repetition on either side failed or was interrupted.
    pub fn partial(&self) -> bool {
        self.base_not_ok > 0 || self.sides.iter().flatten().any(|s| s.not_ok > 0)
    }
}

/// The rows of one workload (and variant, when runs are matched by variant).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadTable {
    pub workload: String,
    /// Variant name when matched by variant, "" otherwise.
    pub variant: String,
    /// The engine's area (as listings name it).
    pub area: String,
    pub unit: WorkUnit,
    /// Parameter names that vary between rows (the table's leading columns).
    pub columns: Vec<String>,
    /// Parameters equal in every row (shown once).
    pub constant: Params,
    pub rows: Vec<Row>,
}

impl WorkloadTable {
    /// `fileserver` or `fileserver [nosmt]`.
    pub fn title(&self) -> String {
        crate::model::table_title(&self.workload, &self.variant)
    }
}

/// Whether any row of the table has items of `kind` on `side`.
pub fn has_items(t: &WorkloadTable, side: usize, kind: ItemKind) -> bool {
    t.rows.iter().filter_map(|r| r.sides.get(side)?.as_ref()).any(|c| c.items.iter().any(|i| i.kind == kind))
}
