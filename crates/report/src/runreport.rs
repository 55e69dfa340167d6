//! The model of a one-run report: every workload's points with medians, means and spread
//! over repetitions, a monitor time series per workload, and the environment.

use crate::envdiff::env_pairs;
use crate::model::{group_cells, params_label, split_params, Metric, Side, SideInfo};
use crate::overall::overall_cells;
use crate::quality::NoisyRep;
use racehorse_core::{Params, SamplePoint, WorkUnit};
use racehorse_stats::{noisy, Summary};
use std::collections::BTreeMap;

/// One matrix point of the run over its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub params: Params,
    pub label: String,
    /// Ok repetitions.
    pub n: usize,
    /// Failed or interrupted repetitions.
    pub not_ok: usize,
    /// Repetitions whose throughput is an outlier (kept in every figure).
    pub outlier_reps: Vec<u32>,
    pub metrics: Vec<(Metric, Option<Summary>)>,
    /// Throughput's coefficient of variation is above the threshold.
    pub noisy: bool,
    /// Repetitions that ran while other processes used the CPU.
    pub noisy_reps: Vec<NoisyRep>,
    /// Metrics below their resolution in some repetition (shown as such, never as a number).
    pub below: Vec<Metric>,
}

impl RunRow {
    pub fn metric(&self, m: Metric) -> Option<Summary> {
        self.metrics.iter().find(|(k, _)| *k == m).and_then(|(_, s)| *s)
    }
}

/// The sampler's series of one cell, for the monitor chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeseries {
    pub label: String,
    pub samples: Vec<SamplePoint>,
}

/// One workload (and variant) of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTable {
    pub workload: String,
    pub variant: String,
    pub area: String,
    pub unit: WorkUnit,
    pub columns: Vec<String>,
    pub constant: Params,
    pub rows: Vec<RunRow>,
    pub timeseries: Option<Timeseries>,
}

impl RunTable {
    /// `fileserver` or `fileserver [nosmt]`.
    pub fn title(&self) -> String {
        crate::model::table_title(&self.workload, &self.variant)
    }
}

/// Everything `racehorse report RUN` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub side: SideInfo,
    pub tables: Vec<RunTable>,
    pub env: Vec<(String, String)>,
}

/// Builds the report of one run (or one variant of it).
pub fn run_report(side: &Side, noisy_cv: f64, area_of: &dyn Fn(&str) -> String) -> RunReport {
    let cells: Vec<_> =
        side.cells.iter().filter(|c| side.variant.iter().all(|v| &c.spec.variant == v)).collect();
    let overall = overall_cells(cells.iter().copied());
    let groups = group_cells(cells.into_iter().chain(&overall), true);
    // One table per workload, variant and unit (an engine may count bytes in some cells and
    // operations in others, as micro does).
    let mut by_table: BTreeMap<(String, String, &str), Vec<_>> = BTreeMap::new();
    for (k, g) in &groups {
        by_table.entry((k.workload.clone(), k.variant.clone(), g.unit.as_str())).or_default().push(g);
    }
    let tables = by_table
        .into_iter()
        .map(|((workload, variant, _), gs)| {
            let (columns, constant) = split_params(gs.iter().map(|g| &g.params));
            let rows: Vec<RunRow> = gs
                .iter()
                .map(|g| {
                    let below: Vec<Metric> = Metric::ALL.into_iter().filter(|m| g.below(*m)).collect();
                    let metrics: Vec<_> = Metric::ALL
                        .iter()
                        .map(|m| (*m, if below.contains(m) { None } else { Summary::of(&g.values(*m)) }))
                        .collect();
                    let tput = metrics[0].1;
                    RunRow {
                        params: g.params.clone(),
                        label: params_label(&g.params, &columns),
                        n: g.ok.len(),
                        not_ok: g.not_ok,
                        outlier_reps: g.outlier_reps(),
                        noisy: tput.is_some_and(|s| noisy(&s, noisy_cv)),
                        noisy_reps: g.noisy_reps(),
                        below,
                        metrics,
                    }
                })
                .collect();
            // The monitor series of the busiest point's first repetition that has samples.
            let timeseries = gs.iter().rev().find_map(|g| {
                g.ok.iter()
                    .find(|c| !c.samples.is_empty())
                    .map(|c| Timeseries { label: c.spec.label(), samples: c.samples.clone() })
            });
            let unit = gs.first().map(|g| g.unit).unwrap_or(WorkUnit::Ops);
            RunTable {
                area: area_of(&workload),
                workload,
                variant,
                unit,
                columns,
                constant,
                rows,
                timeseries,
            }
        })
        .collect();
    RunReport { side: SideInfo::of(side), tables, env: env_pairs(&side.run) }
}
