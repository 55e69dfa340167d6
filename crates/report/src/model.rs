//! The comparison's vocabulary: metrics with their direction, verdicts, one side of a
//! comparison (a run, or one variant inside a run), and cells grouped over repetitions.

use racehorse_core::{CellResult, CellStatus, Direction, Params, RunStatus, Value, WorkUnit};
use racehorse_store::RunInfo;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The metrics every comparison table carries, in column order (seed 001's columns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Units of work per second.
    Throughput,
    /// (user + kernel) CPU seconds per unit of work.
    CpuTotalPerUnit,
    /// Kernel CPU seconds per unit of work.
    CpuKernelPerUnit,
    /// User CPU seconds per unit of work.
    CpuUserPerUnit,
}

impl Metric {
    pub const ALL: [Metric; 4] =
        [Metric::Throughput, Metric::CpuTotalPerUnit, Metric::CpuKernelPerUnit, Metric::CpuUserPerUnit];

    /// Name in machine formats.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::CpuTotalPerUnit => "cpu_total_per_unit",
            Metric::CpuKernelPerUnit => "cpu_kernel_per_unit",
            Metric::CpuUserPerUnit => "cpu_user_per_unit",
        }
    }

    /// Column header in tables, as the seeds write it.
    pub fn header(self) -> &'static str {
        match self {
            Metric::Throughput => "Throughput",
            Metric::CpuTotalPerUnit => "Total CPU/unit",
            Metric::CpuKernelPerUnit => "Kernel CPU/unit",
            Metric::CpuUserPerUnit => "User CPU/unit",
        }
    }

    pub fn direction(self) -> Direction {
        match self {
            Metric::Throughput => Direction::HigherIsBetter,
            _ => Direction::LowerIsBetter,
        }
    }

    /// The metric of one cell in base units (units/s, CPU s/unit); None when not measured.
    pub fn value(self, c: &CellResult) -> Option<f64> {
        let v = match self {
            Metric::Throughput => c.throughput_resolved(),
            Metric::CpuTotalPerUnit => c.cpu_total_per_unit(),
            Metric::CpuKernelPerUnit => c.cpu_kernel_per_unit(),
            Metric::CpuUserPerUnit => c.cpu_user_per_unit(),
        };
        v.filter(|x| x.is_finite())
    }

    /// Base unit of the metric in machine formats, e.g. `bytes/s`, `cpu_s/byte`.
    pub fn base_unit(self, unit: WorkUnit) -> String {
        let singular = match unit {
            WorkUnit::Bytes => "byte",
            WorkUnit::Ops => "op",
            WorkUnit::Transactions => "transaction",
            WorkUnit::Jobs => "job",
            WorkUnit::Iterations => "iteration",
        };
        match self {
            Metric::Throughput => format!("{}/s", unit.as_str()),
            _ => format!("cpu_s/{singular}"),
        }
    }

    /// The name under which the metric's figure is listed in `CellQuality::below_resolution`.
    pub fn resolution_name(self) -> &'static str {
        match self {
            Metric::Throughput => racehorse_core::quality::THROUGHPUT,
            _ => racehorse_core::quality::CPU,
        }
    }

    /// Signed change in percent such that `+` always reads as better: throughput gain, or
    /// CPU-per-unit savings.
    pub fn gain_pct(self, ratio: f64) -> f64 {
        match self.direction() {
            Direction::HigherIsBetter => (ratio - 1.0) * 100.0,
            Direction::LowerIsBetter => (1.0 - ratio) * 100.0,
        }
    }
}

/// Better or worse than base, in the metric's own direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Better,
    Worse,
    /// Within the dead band around no change.
    Same,
}

impl Verdict {
    /// From a gain in percent (+ is better) and the dead band in percent.
    pub fn of_gain(gain_pct: f64, same_within_pct: f64) -> Verdict {
        if gain_pct > same_within_pct {
            Verdict::Better
        } else if gain_pct < -same_within_pct {
            Verdict::Worse
        } else {
            Verdict::Same
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
        }
    }
}

/// One side of a comparison: a stored run, optionally narrowed to one variant.
#[derive(Debug, Clone)]
pub struct Side {
    pub run: RunInfo,
    pub variant: Option<String>,
    pub cells: Vec<CellResult>,
    /// Where the run was read from and which value of a compared dimension it is.
    pub scope: Scope,
}

/// What narrows a side beyond its run and variant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// The store file the run was read from, when it is not the main store (`--db`).
    pub store: Option<String>,
    /// The dimension this side is one value of (`compare --by`): name and value as shown,
    /// e.g. (`cflags`, `-O0`). The side's cells no longer carry that parameter.
    pub by: Option<(String, String)>,
}

impl Side {
    /// A whole run read from the main store.
    pub fn whole(run: RunInfo, cells: Vec<CellResult>) -> Side {
        Side { run, variant: None, cells, scope: Scope::default() }
    }
}

impl Side {
    /// How the side is named in headers: `run 3 'label'` or `run 3 'label' @variant`.
    pub fn name(&self) -> String {
        let mut s = format!("run {}", self.run.id);
        if !self.run.label.is_empty() {
            s.push_str(&format!(" '{}'", self.run.label));
        }
        if let Some(v) = &self.variant {
            s.push_str(&format!(" @{v}"));
        }
        if let Some((k, v)) = &self.scope.by {
            s.push_str(&format!(" {k}={v}"));
        }
        if let Some(store) = &self.scope.store {
            s.push_str(&format!(" (in {store})"));
        }
        crate::render::escape::escape_control(&s)
    }

    /// Whether the run did not finish every cell (partial, interrupted or still running).
    pub fn incomplete(&self) -> bool {
        self.run.status != RunStatus::Complete
    }
}

/// A summary of the side for headers and machine formats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideInfo {
    pub name: String,
    pub run_id: i64,
    pub label: String,
    pub variant: Option<String>,
    pub status: String,
    pub host: String,
    pub started_at_unix_s: i64,
    pub racehorse_version: String,
    pub cpu_method: String,
    /// Warnings of the exclusivity check at the start of the run (load, busy processes, steal).
    pub exclusivity_warnings: Vec<String>,
    /// CPU other processes used per measured window of the side's cells; None when not measured.
    pub outside_cpu: Option<crate::quality::Quietness>,
    /// The compared dimension's value of this side (`compare --by`), as `name=value`.
    pub by: Option<String>,
    /// The store file the run was read from when it is not the main store.
    pub store: Option<String>,
}

impl SideInfo {
    /// The run alone, without the variant: `run 3 'label'`.
    pub fn run_name(&self) -> String {
        if self.label.is_empty() {
            format!("run {}", self.run_id)
        } else {
            crate::render::escape::escape_control(&format!("run {} '{}'", self.run_id, self.label))
        }
    }

    pub fn of(side: &Side) -> SideInfo {
        SideInfo {
            name: side.name(),
            run_id: side.run.id,
            label: side.run.label.clone(),
            variant: side.variant.clone(),
            status: side.run.status.as_str().to_string(),
            host: side.run.host.clone(),
            started_at_unix_s: side.run.started_at_unix_s,
            racehorse_version: side.run.racehorse_version.clone(),
            cpu_method: side.run.cpu_method.clone(),
            exclusivity_warnings: crate::quality::exclusivity_warnings(&side.run.exclusivity_json),
            outside_cpu: crate::quality::Quietness::of(
                side.cells.iter().filter(|c| side.variant.iter().all(|v| &c.spec.variant == v)),
            ),
            by: side.scope.by.as_ref().map(|(k, v)| format!("{k}={v}")),
            store: side.scope.store.clone(),
        }
    }
}

/// The cells of one matrix point over repetitions (its workload and variant are its key's).
#[derive(Debug, Clone)]
pub struct Group<'a> {
    pub params: Params,
    pub unit: WorkUnit,
    pub ok: Vec<&'a CellResult>,
    /// Cells that failed or were interrupted.
    pub not_ok: usize,
    /// Every repetition, ok or not, in the order given.
    pub cells: Vec<&'a CellResult>,
    /// Position of the group's first cell among the cells given (the order points ran in).
    pub first: usize,
}

impl Group<'_> {
    /// Repetition numbers whose throughput is an outlier (median/MAD); reported, never dropped.
    /// None when the throughput is below its resolution.
    pub fn outlier_reps(&self) -> Vec<u32> {
        if self.below(Metric::Throughput) {
            return Vec::new();
        }
        let tput: Vec<f64> = self.ok.iter().map(|c| c.throughput_resolved().unwrap_or(f64::NAN)).collect();
        racehorse_stats::outliers(&tput).into_iter().map(|i| self.ok[i].spec.rep).collect()
    }

    /// Repetitions of a paced point whose quality of service failed (`qos_held` = 0): stored
    /// and compared like the others, marked in every table's note.
    pub fn qos_failed_reps(&self) -> Vec<u32> {
        qos_failed(&self.ok)
    }

    /// The ok repetitions that ran while other processes used the CPU.
    pub fn noisy_reps(&self) -> Vec<crate::quality::NoisyRep> {
        crate::quality::noisy_reps(&self.ok)
    }

    /// Whether any ok repetition has the metric's figure below its resolution: then the
    /// point's figure is not shown, as the others alone would be a biased choice.
    pub fn below(&self, m: Metric) -> bool {
        let name = m.resolution_name();
        self.ok.iter().any(|c| c.quality.below(name))
    }

    /// Finite values of a metric over the ok repetitions.
    pub fn values(&self, m: Metric) -> Vec<f64> {
        self.ok.iter().filter_map(|c| m.value(c)).collect()
    }
}

/// Groups cells by workload + parameters, and by variant when `by_variant`; keys sort by
/// workload, then parameters in natural order.
pub fn group_cells<'a>(
    cells: impl IntoIterator<Item = &'a CellResult>,
    by_variant: bool,
) -> BTreeMap<GroupKey, Group<'a>> {
    let mut out: BTreeMap<GroupKey, Group<'a>> = BTreeMap::new();
    for (i, c) in cells.into_iter().enumerate() {
        let variant = if by_variant { c.spec.variant.clone() } else { String::new() };
        let key = GroupKey { workload: c.spec.workload.clone(), variant, params: c.spec.params.clone() };
        let g = out.entry(key).or_insert_with(|| Group {
            params: c.spec.params.clone(),
            unit: c.unit,
            ok: Vec::new(),
            not_ok: 0,
            cells: Vec::new(),
            first: i,
        });
        g.cells.push(c);
        if c.status == CellStatus::Ok {
            g.ok.push(c);
        } else {
            g.not_ok += 1;
        }
    }
    out
}

/// Identity of a group: workload, variant ("" when not matched by variant) and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupKey {
    pub workload: String,
    pub variant: String,
    pub params: Params,
}

impl Eq for GroupKey {}

impl PartialOrd for GroupKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for GroupKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.workload
            .cmp(&other.workload)
            .then_with(|| self.variant.cmp(&other.variant))
            .then_with(|| params_cmp(&self.params, &other.params))
    }
}

/// Natural order of parameter sets: name by name, numbers numerically.
pub fn params_cmp(a: &Params, b: &Params) -> Ordering {
    let mut ia = a.iter();
    let mut ib = b.iter();
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((ka, va)), Some((kb, vb))) => {
                let o = ka.cmp(kb).then_with(|| value_cmp(va, vb));
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

/// IOzone's phases in the order they run and the seeds list them (seed 001: initial write,
/// rewrite, initial read, reread), then the random ones; `overall` comes after all of them.
pub const PHASE_ORDER: [&str; 7] = ["write", "rewrite", "read", "reread", "randread", "randwrite", "randrw"];

/// Numbers numerically (ints and floats together), then booleans, then strings: IOzone's
/// phases in [`PHASE_ORDER`] before other strings, the rest alphabetically, and the summed
/// `overall` phase after every other value, as the seeds put it last.
pub fn value_cmp(a: &Value, b: &Value) -> Ordering {
    let rank = |v: &Value| {
        let s = v.as_str();
        if s == Some(crate::overall::OVERALL) {
            return PHASE_ORDER.len() + 1;
        }
        s.and_then(|s| PHASE_ORDER.iter().position(|p| *p == s)).unwrap_or(PHASE_ORDER.len())
    };
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => rank(a).cmp(&rank(b)).then_with(|| a.to_string().cmp(&b.to_string())),
    }
}

/// Parameter names whose value differs between groups (table columns), and those that are
/// the same in every group (shown once, in the caption).
pub fn split_params<'p>(all: impl Iterator<Item = &'p Params> + Clone) -> (Vec<String>, Params) {
    let mut names: Vec<String> = Vec::new();
    for p in all.clone() {
        for k in p.keys() {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    names.sort();
    let mut varying = Vec::new();
    let mut constant = Params::new();
    for n in names {
        let mut vals = all.clone().map(|p| p.get(&n));
        let first = vals.next().flatten();
        if first.is_some() && vals.all(|v| v == first) {
            constant.insert(n, first.cloned().unwrap_or(Value::Bool(false)));
        } else {
            varying.push(n);
        }
    }
    (varying, constant)
}

/// Parameters that count concurrent load, in order of preference: the x axis of scaling
/// charts and the axis whose first point is the ramp-up in summaries.
pub const LOAD_AXES: [&str; 10] = [
    "clients",
    "procs",
    "processes",
    "threads",
    "jobs",
    "streams",
    "users",
    "tasks",
    "connections",
    "warehouses",
];

/// The load axis among `names`, if any.
pub fn load_axis(names: &[String]) -> Option<String> {
    LOAD_AXES.iter().find(|a| names.iter().any(|n| n == *a)).map(|a| a.to_string())
}

/// Every load axis counts (clients, threads, connections …): charts draw it on a log2 axis.
pub fn x_log2(axis: &str) -> bool {
    LOAD_AXES.contains(&axis)
}

/// Splits parameters into the load axis value and the rest (a chart's series key).
pub fn split_load(p: &Params, axis: &str, columns: &[String]) -> Option<(f64, String)> {
    let x = p.get(axis).and_then(Value::as_f64)?;
    let others: Vec<String> = columns.iter().filter(|c| c.as_str() != axis).cloned().collect();
    Some((x, params_label(p, &others)))
}

/// The repetitions among `cells` whose quality of service failed (`qos_held` = 0).
pub fn qos_failed(cells: &[&CellResult]) -> Vec<u32> {
    cells.iter().filter(|c| c.extra.get("qos_held") == Some(&0.0)).map(|c| c.spec.rep).collect()
}

/// `QoS failed #1 #3` for a note column (with `who` before it, e.g. `base`); "" when none.
pub fn qos_note(who: &str, reps: &[u32]) -> String {
    if reps.is_empty() {
        return String::new();
    }
    let list: Vec<String> = reps.iter().map(|r| format!("#{r}")).collect();
    format!("{who}{}QoS failed {}", if who.is_empty() { "" } else { " " }, list.join(" "))
}

/// `outlier #3 #7` for a note column; "" when there are none.
pub fn outlier_note(reps: &[u32]) -> String {
    if reps.is_empty() {
        return String::new();
    }
    let list: Vec<String> = reps.iter().map(|r| format!("#{r}")).collect();
    format!("outlier {} (kept)", list.join(" "))
}

/// A table's title: `fileserver`, or `fileserver [nosmt]` for a variant other than the default.
pub fn table_title(workload: &str, variant: &str) -> String {
    if variant.is_empty() || variant == "default" {
        workload.to_string()
    } else {
        format!("{workload} [{variant}]")
    }
}

/// `k=v k=v` over the given parameter names (missing ones skipped), values as [`shown`].
pub fn params_label(p: &Params, names: &[String]) -> String {
    names
        .iter()
        .filter_map(|n| p.get(n).map(|v| format!("{n}={}", shown(n, v))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A parameter value as people write it (`bs=64k`, `size=2g`); see
/// [`racehorse_core::params::display_value`].
pub fn shown(name: &str, v: &Value) -> String {
    racehorse_core::params::display_value(name, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, Value)]) -> Params {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn gain_reads_plus_as_better() {
        assert!((Metric::Throughput.gain_pct(1.25) - 25.0).abs() < 1e-9);
        assert!((Metric::CpuTotalPerUnit.gain_pct(0.75) - 25.0).abs() < 1e-9);
        assert!(Metric::CpuKernelPerUnit.gain_pct(1.1) < 0.0);
        assert_eq!(Verdict::of_gain(0.5, 1.0), Verdict::Same);
        assert_eq!(Verdict::of_gain(-2.0, 1.0), Verdict::Worse);
    }

    #[test]
    fn params_sort_numerically() {
        let a = p(&[("clients", Value::Int(2))]);
        let b = p(&[("clients", Value::Int(10))]);
        assert_eq!(params_cmp(&a, &b), Ordering::Less);
        assert_eq!(value_cmp(&Value::Float(1.5), &Value::Int(2)), Ordering::Less);
    }

    #[test]
    fn phases_sort_as_iozone_runs_them_and_overall_last() {
        let mut v: Vec<Value> = ["overall", "read", "randread", "reread", "rewrite", "write", "other"]
            .iter()
            .map(|s| Value::Str(s.to_string()))
            .collect();
        v.sort_by(value_cmp);
        let names: Vec<&str> = v.iter().filter_map(Value::as_str).collect();
        assert_eq!(names, ["write", "rewrite", "read", "reread", "randread", "other", "overall"]);
    }

    #[test]
    fn split_finds_varying_and_constant() {
        let a = p(&[("clients", Value::Int(1)), ("runtime", Value::Int(5))]);
        let b = p(&[("clients", Value::Int(4)), ("runtime", Value::Int(5))]);
        let (varying, constant) = split_params([&a, &b].into_iter());
        assert_eq!(varying, vec!["clients".to_string()]);
        assert_eq!(constant.get("runtime"), Some(&Value::Int(5)));
        assert_eq!(load_axis(&varying).as_deref(), Some("clients"));
    }

    #[test]
    fn sizes_show_with_suffixes() {
        assert_eq!(shown("bs", &Value::Int(65536)), "64k");
        assert_eq!(shown("size", &Value::Int(2 << 30)), "2g");
        assert_eq!(shown("size", &Value::Int(1000)), "1000");
        assert_eq!(shown("procs", &Value::Int(4096)), "4096");
        assert_eq!(shown("mem_bytes", &Value::Int(3 << 20)), "3m");
    }

    #[test]
    fn base_units_name_the_unit() {
        assert_eq!(Metric::Throughput.base_unit(WorkUnit::Bytes), "bytes/s");
        assert_eq!(Metric::CpuUserPerUnit.base_unit(WorkUnit::Ops), "cpu_s/op");
    }
}
