//! The model of one run, which `racehorse report RUN` and `racehorse show RUN` both render:
//! every workload's points with medians, means and spread over repetitions, each point's
//! repetitions, the engines' own figures, latencies and profiles, load ramps, what each
//! variant set, the failed cells, a monitor time series per workload, and the environment.

use crate::catalogue::EngineFacts;
use crate::envdiff::env_pairs;
use crate::model::{group_cells, params_label, shown, split_params, Group, Metric, Side, SideInfo};
use crate::overall::overall_cells;
use crate::profile::Merged;
use crate::quality::NoisyRep;
use crate::run::latency::{latencies, OpLatency};
use racehorse_core::{CellResult, CellStatus, Params, SamplePoint, WorkUnit};
use racehorse_stats::{noisy, Summary};
use std::collections::BTreeMap;

/// One repetition of a point, as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct RepLine {
    pub rep: u32,
    pub status: CellStatus,
    pub error: Option<String>,
    /// It ran while other processes used the CPU.
    pub noisy: bool,
    /// Its throughput is an outlier among the point's ok repetitions.
    pub outlier: bool,
    /// Units of work per second; None when below its resolution.
    pub units_per_s: Option<f64>,
}

/// One matrix point of the run over its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub params: Params,
    pub label: String,
    /// Position of the point's first cell in the run (the order points ran in).
    pub first_cell: usize,
    /// The summed `overall` point of a phased workload (no cell of its own ran).
    pub summed: bool,
    /// Ok repetitions.
    pub n: usize,
    /// Failed or interrupted repetitions.
    pub not_ok: usize,
    /// Repetitions whose throughput is an outlier (kept in every figure).
    pub outlier_reps: Vec<u32>,
    /// Ok repetitions that checked a quality of service (`qos`), and those where it failed.
    pub qos_checked: usize,
    pub qos_failed_reps: Vec<u32>,
    pub metrics: Vec<(Metric, Option<Summary>)>,
    /// Throughput's coefficient of variation is above the threshold.
    pub noisy: bool,
    /// Repetitions that ran while other processes used the CPU.
    pub noisy_reps: Vec<NoisyRep>,
    /// Metrics below their resolution in some repetition (shown as such, never as a number).
    pub below: Vec<Metric>,
    /// CPU seconds of the workload's own processes per window, over the ok repetitions.
    pub workload_cpu_s: Option<Summary>,
    /// racehorse's own CPU in % of the window, over the ok repetitions that measured the
    /// workload's CPU.
    pub harness_cpu_pct: Option<Summary>,
    /// The engine's own figures by name (sorted), with their median over the ok repetitions;
    /// None when no ok repetition has a finite value.
    pub extras: Vec<(String, Option<f64>)>,
    /// The profiles of its windows, merged.
    pub profile: Option<Merged>,
    /// Latency percentiles per operation over the ok repetitions (engines that time them).
    pub latencies: Vec<OpLatency>,
    /// Every repetition in the order it ran.
    pub reps: Vec<RepLine>,
}

impl RunRow {
    pub fn metric(&self, m: Metric) -> Option<Summary> {
        self.metrics.iter().find(|(k, _)| *k == m).and_then(|(_, s)| *s)
    }

    /// The median of an engine figure; None when not measured.
    pub fn extra(&self, name: &str) -> Option<f64> {
        self.extras.iter().find(|(k, _)| k == name).and_then(|(_, v)| *v)
    }
}

/// One load of a ramp and its throughput (median over repetitions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RampPoint {
    pub users: u64,
    pub units_per_s: f64,
}

/// A load ramp: the points of a table that differ only in `users` (jobs counted per user,
/// as the mix engine does), by load.
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    /// The other parameters, `k=v k=v`.
    pub label: String,
    pub points: Vec<RampPoint>,
}

impl Ramp {
    /// The load with the most throughput.
    pub fn peak(&self) -> Option<RampPoint> {
        self.points.iter().copied().max_by(|a, b| a.units_per_s.total_cmp(&b.units_per_s))
    }

    /// The highest load run before the ramp stopped.
    pub fn reached_users(&self) -> u64 {
        self.points.last().map_or(0, |p| p.users)
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
    /// Load ramps of a table counted in jobs, by label; empty otherwise.
    pub ramps: Vec<Ramp>,
    pub timeseries: Option<Timeseries>,
}

impl RunTable {
    /// `fileserver` or `fileserver [nosmt]`.
    pub fn title(&self) -> String {
        crate::model::table_title(&self.workload, &self.variant)
    }
}

/// What one variant set on the machine (from its first cell that recorded settings).
#[derive(Debug, Clone, PartialEq)]
pub struct VariantSettings {
    pub variant: String,
    pub settings: Vec<(String, String)>,
}

/// A cell that failed or was interrupted.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedCell {
    pub status: CellStatus,
    /// `workload k=v … #rep`.
    pub label: String,
    pub error: Option<String>,
}

/// Everything `racehorse report RUN` and `racehorse show RUN` show.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub side: SideInfo,
    pub tables: Vec<RunTable>,
    pub env: Vec<(String, String)>,
    /// Variants that set something, in the order they first ran.
    pub variant_settings: Vec<VariantSettings>,
    /// Failed and interrupted cells in the order they ran.
    pub failures: Vec<FailedCell>,
}

/// Builds the report of one run (or one variant of it); `engines` names each workload's area.
pub fn run_report(side: &Side, noisy_cv: f64, engines: &dyn EngineFacts) -> RunReport {
    let cells: Vec<&CellResult> =
        side.cells.iter().filter(|c| side.variant.iter().all(|v| &c.spec.variant == v)).collect();
    let overall = overall_cells(cells.iter().copied());
    let groups = group_cells(cells.iter().copied().chain(&overall), true);
    // One table per workload, variant and unit (an engine may count bytes in some cells and
    // operations in others, as micro does).
    let mut by_table: BTreeMap<(String, String, &str), Vec<_>> = BTreeMap::new();
    for (k, g) in &groups {
        by_table.entry((k.workload.clone(), k.variant.clone(), g.unit.as_str())).or_default().push(g);
    }
    let tables = by_table
        .into_iter()
        .map(|((workload, variant, _), gs)| {
            let area = engines.area(&workload);
            run_table(workload, variant, area, &gs, noisy_cv, cells.len())
        })
        .collect();
    RunReport {
        side: SideInfo::of(side),
        tables,
        env: env_pairs(&side.run),
        variant_settings: variant_settings(&cells),
        failures: failures(&cells),
    }
}

/// The table of one workload, variant and unit; groups at or after `measured` are summed.
fn run_table(
    workload: String,
    variant: String,
    area: String,
    gs: &[&Group],
    noisy_cv: f64,
    measured: usize,
) -> RunTable {
    let (columns, constant) = split_params(gs.iter().map(|g| &g.params));
    let rows: Vec<RunRow> = gs.iter().map(|g| run_row(g, &columns, noisy_cv, measured)).collect();
    // The monitor series of the busiest point's first repetition that has samples.
    let timeseries = gs.iter().rev().find_map(|g| {
        g.ok.iter()
            .find(|c| !c.samples.is_empty())
            .map(|c| Timeseries { label: c.spec.label(), samples: c.samples.clone() })
    });
    let unit = gs.first().map(|g| g.unit).unwrap_or(WorkUnit::Ops);
    let ramps = if unit == WorkUnit::Jobs { ramps(&rows) } else { Vec::new() };
    RunTable { area, workload, variant, unit, columns, constant, rows, ramps, timeseries }
}

fn run_row(g: &Group, columns: &[String], noisy_cv: f64, measured: usize) -> RunRow {
    let below: Vec<Metric> = Metric::ALL.into_iter().filter(|m| g.below(*m)).collect();
    let metrics: Vec<_> = Metric::ALL
        .iter()
        .map(|m| (*m, if below.contains(m) { None } else { Summary::of(&g.values(*m)) }))
        .collect();
    let tput = metrics[0].1;
    let outlier_reps = g.outlier_reps();
    let over_ok = |f: &dyn Fn(&CellResult) -> Option<f64>| -> Option<Summary> {
        Summary::of(&g.ok.iter().filter_map(|c| f(c)).collect::<Vec<_>>())
    };
    RunRow {
        params: g.params.clone(),
        label: params_label(&g.params, columns),
        first_cell: g.first,
        summed: g.first >= measured,
        n: g.ok.len(),
        not_ok: g.not_ok,
        noisy: tput.is_some_and(|s| noisy(&s, noisy_cv)),
        noisy_reps: g.noisy_reps(),
        qos_checked: g.ok.iter().filter(|c| c.extra.contains_key("qos_held")).count(),
        qos_failed_reps: g.qos_failed_reps(),
        below,
        metrics,
        workload_cpu_s: over_ok(&|c| Some(c.workload_cpu.total_s())),
        harness_cpu_pct: over_ok(&|c| {
            let workload_s = c.workload_cpu.total_s();
            (workload_s > 0.0).then(|| 100.0 * c.harness_cpu_s / c.window.as_secs_f64().max(1e-9))
        }),
        extras: extras(g),
        profile: crate::profile::merge(&g.cells),
        latencies: latencies(&g.cells),
        reps: rep_lines(g, &outlier_reps),
        outlier_reps,
    }
}

/// Every extra any repetition reported, with its median over the ok ones.
fn extras(g: &Group) -> Vec<(String, Option<f64>)> {
    let names: std::collections::BTreeSet<&String> = g.cells.iter().flat_map(|c| c.extra.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let v: Vec<f64> =
                g.ok.iter().filter_map(|c| c.extra.get(name).copied().filter(|v| v.is_finite())).collect();
            (name.clone(), Summary::of(&v).map(|s| s.median))
        })
        .collect()
}

fn rep_lines(g: &Group, outlier_reps: &[u32]) -> Vec<RepLine> {
    g.cells
        .iter()
        .map(|c| RepLine {
            rep: c.spec.rep,
            status: c.status,
            error: c.error.clone(),
            noisy: c.quality.noisy.is_some(),
            outlier: c.status == CellStatus::Ok && outlier_reps.contains(&c.spec.rep),
            units_per_s: c.throughput_resolved(),
        })
        .collect()
}

/// The ramps of a table's measured rows: those with a `users` parameter, by their other
/// parameters, each by load.
fn ramps(rows: &[RunRow]) -> Vec<Ramp> {
    let mut by_label: BTreeMap<String, Vec<RampPoint>> = BTreeMap::new();
    for row in rows.iter().filter(|r| !r.summed) {
        let Some(users) = row.params.get("users").and_then(|v| v.as_u64()) else { continue };
        let Some(tput) = row.metric(Metric::Throughput) else { continue };
        let label = row
            .params
            .iter()
            .filter(|(k, _)| *k != "users")
            .map(|(k, v)| format!("{k}={}", shown(k, v)))
            .collect::<Vec<_>>()
            .join(" ");
        by_label.entry(label).or_default().push(RampPoint { users, units_per_s: tput.median });
    }
    by_label
        .into_iter()
        .map(|(label, mut points)| {
            points.sort_by_key(|p| p.users);
            Ramp { label, points }
        })
        .collect()
}

fn variant_settings(cells: &[&CellResult]) -> Vec<VariantSettings> {
    let mut out: Vec<VariantSettings> = Vec::new();
    for c in cells.iter().filter(|c| !c.settings.is_empty()) {
        if out.iter().any(|v| v.variant == c.spec.variant) {
            continue;
        }
        let settings = c.settings.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        out.push(VariantSettings { variant: c.spec.variant.clone(), settings });
    }
    out
}

fn failures(cells: &[&CellResult]) -> Vec<FailedCell> {
    cells
        .iter()
        .filter(|c| c.status != CellStatus::Ok)
        .map(|c| FailedCell { status: c.status, label: c.spec.label(), error: c.error.clone() })
        .collect()
}
