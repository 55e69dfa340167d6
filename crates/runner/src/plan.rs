//! Matrix expansion: a suite becomes an ordered list of cells (variant × repetition ×
//! workload × CPU count × every combination of option values), with an estimated duration.

use crate::suite::variant::{shuffle, Order, Variant};
use crate::suite::{engine_names, Suite, SuiteError, WorkloadEntry};
use racehorse_core::{CellSpec, Params, Value};
use racehorse_engines::Engine;
use std::collections::BTreeMap;
use std::time::Duration;

/// Per-cell overhead assumed by the ETA (prepare, cache drop, cleanup).
const CELL_OVERHEAD: Duration = Duration::from_secs(1);
/// Refuse plans larger than this: almost certainly a typo in an axis.
const MAX_CELLS: usize = 100_000;

/// An engine, resolved by name once when the plan is built. Two are equal when their names
/// are; it prints as its name.
#[derive(Clone, Copy)]
pub struct EngineRef(pub &'static dyn Engine);

impl EngineRef {
    /// The engine named `name`, or a usage error listing the valid names.
    pub fn find(name: &str) -> Result<EngineRef, SuiteError> {
        racehorse_engines::find(name).map(EngineRef).ok_or_else(|| {
            SuiteError::usage(format!("unknown workload '{name}'; valid workloads: {}", engine_names()))
        })
    }
}

impl std::ops::Deref for EngineRef {
    type Target = dyn Engine;
    fn deref(&self) -> &(dyn Engine + 'static) {
        self.0
    }
}

impl std::fmt::Debug for EngineRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EngineRef({})", self.0.name())
    }
}

impl PartialEq for EngineRef {
    fn eq(&self, other: &EngineRef) -> bool {
        self.0.name() == other.0.name()
    }
}

/// One cell with everything the runner needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCell {
    pub index: usize,
    pub spec: CellSpec,
    /// The engine of `spec.workload`.
    pub engine: EngineRef,
    pub cpus: u32,
    /// Exactly these CPUs online (a variant's `cpu_list`); None = the first `cpus` CPUs.
    pub cpu_list: Option<Vec<u32>>,
    pub runtime: Duration,
    pub warmup: Duration,
    /// Index into `Plan::variants`.
    pub variant: usize,
}

/// The ordered cells of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub suite: Suite,
    pub variants: Vec<Variant>,
    pub cells: Vec<PlannedCell>,
}

/// Every combination of the axes' values, in axis-name order, last axis fastest.
fn combinations(axes: &BTreeMap<String, Vec<Value>>) -> Vec<Params> {
    let mut out = vec![Params::new()];
    for (name, values) in axes {
        let mut next = Vec::with_capacity(out.len() * values.len());
        for base in &out {
            for v in values {
                let mut p = base.clone();
                p.insert(name.clone(), v.clone());
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// The CPU-count axis of a workload.
fn cpus_axis(suite: &Suite, w: &WorkloadEntry, default_cpus: u32) -> Vec<u32> {
    w.cpus
        .clone()
        .unwrap_or_else(|| if suite.cpus.is_empty() { vec![default_cpus] } else { suite.cpus.clone() })
}

/// The CPUs a variant runs every cell on, when it sets them (`cpus` or `cpu_list`).
fn variant_cpus(v: &Variant) -> Option<u32> {
    v.cpu_list.as_ref().map(|l| l.len() as u32).or(v.cpus)
}

/// A seed for the random order when the suite names none.
fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    t.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
}

impl Plan {
    /// Expands `suite`; `max_cpus` is the number of CPUs the machine has (possible CPUs),
    /// `default_cpus` the count used when the suite names none. Repetition `r` of every
    /// variant runs before repetition `r + 1` of any (unless the order is `grouped`).
    pub fn expand(suite: &Suite, max_cpus: u32, default_cpus: u32) -> Result<Plan, SuiteError> {
        let mut suite = suite.clone();
        if suite.order == Order::Random && suite.seed.is_none() {
            suite.seed = Some(fresh_seed());
        }
        let variants = if suite.variants.is_empty() {
            vec![Variant { name: "default".into(), ..Variant::default() }]
        } else {
            suite.variants.clone()
        };
        let max_reps = suite.workloads.iter().map(|w| w.reps.unwrap_or(suite.reps)).max().unwrap_or(1);
        let mut rounds: Vec<Vec<PlannedCell>> = Vec::new();
        for rep in 1..=max_reps {
            let mut round = Vec::new();
            for (vi, v) in variants.iter().enumerate() {
                expand_variant(&suite, vi, v, rep, max_cpus, default_cpus, &mut round)?;
            }
            rounds.push(round);
        }
        let cells = order_cells(&suite, rounds);
        if cells.len() > MAX_CELLS {
            return Err(SuiteError::usage(format!(
                "the plan has more than {MAX_CELLS} cells; shorten the axes"
            )));
        }
        Ok(Plan { suite, variants, cells })
    }

    /// Estimated wall time of the cells from `from` on.
    pub fn eta_from(&self, from: usize) -> Duration {
        self.cells.iter().skip(from).map(|c| c.warmup + c.runtime + CELL_OVERHEAD).sum()
    }

    pub fn eta(&self) -> Duration {
        self.eta_from(0)
    }
}

/// The cells of repetition `rep` of one variant, in workload and axis order.
fn expand_variant(
    suite: &Suite,
    vi: usize,
    v: &Variant,
    rep: u32,
    max_cpus: u32,
    default_cpus: u32,
    out: &mut Vec<PlannedCell>,
) -> Result<(), SuiteError> {
    for (wi, w) in suite.workloads.iter().enumerate() {
        let listed = match &w.variants {
            None => true,
            Some(names) => names.contains(&v.name),
        };
        if rep > w.reps.unwrap_or(suite.reps) || !listed {
            continue;
        }
        let engine = EngineRef::find(&w.engine)?;
        let axis = cpus_axis(suite, w, default_cpus);
        if let Some(&bad) = axis.iter().chain(variant_cpus(v).as_ref()).find(|&&c| c > max_cpus) {
            let key = if w.cpus.is_some() { format!("workload.{wi}") } else { "cpus".to_string() };
            return Err(SuiteError::with_origin(
                suite.origins.get(&key),
                format!("cpus = {bad} but this machine has {max_cpus} CPUs; use 1..{max_cpus}"),
            ));
        }
        if let Some(&bad) = v.cpu_list.iter().flatten().find(|&&c| c >= max_cpus) {
            return Err(SuiteError::usage(format!(
                "variant '{}': cpu_list names CPU {bad} but this machine has CPUs 0..{}",
                v.name,
                max_cpus - 1
            )));
        }
        // Cells that dropping unused options made equal run once.
        let mut seen = std::collections::HashSet::new();
        for &cpus in &axis {
            for mut params in combinations(&w.axes) {
                params.insert("cpus".into(), Value::Int(i64::from(cpus)));
                engine.0.drop_unused(&mut params);
                let key: Vec<(String, String)> =
                    params.iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
                if !seen.insert(key) {
                    continue;
                }
                out.push(PlannedCell {
                    index: 0,
                    spec: CellSpec { workload: w.engine.clone(), params, variant: v.name.clone(), rep },
                    engine,
                    cpus: variant_cpus(v).unwrap_or(cpus),
                    cpu_list: v.cpu_list.clone(),
                    runtime: w.runtime.unwrap_or(suite.runtime),
                    warmup: w.warmup.unwrap_or(suite.warmup),
                    variant: vi,
                });
                if out.len() > MAX_CELLS {
                    return Err(SuiteError::usage(format!(
                        "the plan has more than {MAX_CELLS} cells; shorten the axes"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Puts the rounds (one per repetition, variants in turn) in the suite's order and numbers
/// the cells.
fn order_cells(suite: &Suite, rounds: Vec<Vec<PlannedCell>>) -> Vec<PlannedCell> {
    let mut cells: Vec<PlannedCell> = match suite.order {
        Order::Grouped => {
            let mut all: Vec<PlannedCell> = rounds.into_iter().flatten().collect();
            all.sort_by_key(|c| c.variant); // stable: repetitions stay in order
            all
        }
        Order::Interleaved => rounds.into_iter().flatten().collect(),
        Order::Random => rounds
            .into_iter()
            .enumerate()
            .flat_map(|(i, mut round)| {
                shuffle(&mut round, round_seed(suite, i as u64));
                round
            })
            .collect(),
    };
    for (i, c) in cells.iter_mut().enumerate() {
        c.index = i;
    }
    cells
}

/// The seed that shuffles round `round` (0 = the first repetition).
pub fn round_seed(suite: &Suite, round: u64) -> u64 {
    suite.seed.unwrap_or(0) ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23, case 5: `cpus = [99]` in a suite gave no file:line:col.
    #[test]
    fn too_many_cpus_are_reported_where_the_suite_asks_for_them() {
        let s =
            Suite::parse("s.toml", "reps = 1\ncpus = [1, 99]\n[[workload]]\nengine = \"null\"\n").unwrap();
        let e = Plan::expand(&s, 2, 2).unwrap_err().to_string();
        assert!(e.starts_with("s.toml:2:") && e.contains("cpus = 99"), "{e}");
        let w = Suite::parse(
            "w.toml",
            "[[workload]]\nengine = \"null\"\n\n[[workload]]\nengine = \"null\"\ncpus = 7\n",
        )
        .unwrap();
        let e = Plan::expand(&w, 2, 2).unwrap_err().to_string();
        assert!(e.starts_with("w.toml:4:") && e.contains("cpus = 7"), "{e}");
    }

    fn suite() -> Suite {
        Suite::parse(
            "s.toml",
            "runtime = \"10s\"\nwarmup = \"2s\"\nreps = 2\ncpus = [1, 2]\n[[workload]]\nengine = \"null\"\nclients = [1, 4, 8]\n",
        )
        .unwrap()
    }

    #[test]
    fn expands_the_full_matrix() {
        let p = Plan::expand(&suite(), 2, 2).unwrap();
        assert_eq!(p.cells.len(), 2 * 2 * 3, "reps × cpus × clients");
        assert_eq!(p.cells[0].spec.rep, 1);
        assert_eq!(p.cells[0].spec.params["cpus"], Value::Int(1));
        assert_eq!(p.cells[0].spec.params["clients"], Value::Int(1));
        assert_eq!(p.cells[1].spec.params["clients"], Value::Int(4));
        assert_eq!(p.cells[11].spec.rep, 2);
        assert!(p.cells.iter().enumerate().all(|(i, c)| c.index == i));
        assert_eq!(p.eta(), Duration::from_secs(12 * 13));
    }

    /// Issue 22: each cell carries its engine, resolved once when the plan is built.
    #[test]
    fn cells_carry_their_engine_and_an_unknown_one_is_refused() {
        let p = Plan::expand(&suite(), 2, 2).unwrap();
        assert!(p.cells.iter().all(|c| c.engine.name() == "null"));
        assert_eq!(format!("{:?}", p.cells[0].engine), "EngineRef(null)");
        assert_eq!(p.cells[0].engine, EngineRef::find("null").unwrap());
        let mut s = suite();
        s.workloads[0].engine = "nope".into();
        let e = Plan::expand(&s, 2, 2).unwrap_err().to_string();
        assert!(e.starts_with("unknown workload 'nope'; valid workloads: ") && e.contains("null"), "{e}");
    }

    /// Issue 27: compute names a compiler only where a C kernel runs, telco's form only where
    /// telco runs; cells that became equal run once.
    #[test]
    fn unused_options_are_dropped_and_equal_cells_run_once() {
        let s = Suite::parse(
            "c.toml",
            "reps = 1\ncpus = 1\n[[workload]]\nengine = \"compute\"\ncase = [\"telco\", \"sort\"]\n\
             arith = [\"rust-decimal\", \"c-double\"]\ncc = \"gcc\"\n",
        )
        .unwrap();
        let p = Plan::expand(&s, 2, 2).unwrap();
        let labels: Vec<String> = p.cells.iter().map(|c| c.spec.label()).collect();
        assert_eq!(labels.len(), 3, "sort once, telco in two forms: {labels:?}");
        assert!(labels
            .iter()
            .any(|l| l.contains("arith=rust-decimal case=telco clock") && !l.contains("cc=")));
        assert!(labels.iter().any(|l| l.contains("arith=c-double case=telco cc=gcc cflags=-O2")));
        assert!(labels.iter().any(|l| l.contains("case=sort cc=gcc") && !l.contains("arith")));
    }

    #[test]
    fn too_many_cpus_is_refused() {
        let e = Plan::expand(&suite(), 1, 1).unwrap_err();
        assert!(e.to_string().contains("this machine has 1 CPUs"), "{e}");
    }

    const VARIANTS: &str = "reps = 2\ncpus = [2]\n[[workload]]\nengine = \"null\"\nclients = [1, 2]\n\
        [[workload]]\nengine = \"null\"\nrate = 5.0\nvariants = [\"b\"]\n\
        [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\ncpu_list = [1]\n";

    fn order_of(extra: &str) -> Vec<(u32, String, u32)> {
        let s = Suite::parse("v.toml", &format!("{extra}\n{VARIANTS}")).unwrap();
        let p = Plan::expand(&s, 2, 2).unwrap();
        assert!(p.cells.iter().enumerate().all(|(i, c)| c.index == i));
        p.cells.iter().map(|c| (c.spec.rep, c.spec.variant.clone(), c.cpus)).collect()
    }

    #[test]
    fn variants_interleave_by_repetition() {
        let cells = order_of("");
        let names: Vec<String> = cells.iter().map(|c| format!("{}{}", c.1, c.0)).collect();
        assert_eq!(names, ["a1", "a1", "b1", "b1", "b1", "a2", "a2", "b2", "b2", "b2"]);
        // Variant b has cpu_list = [1]: one CPU, whatever the suite's axis says; its cells
        // keep the axis value as their parameter, so that they match a's in a comparison.
        let s = Suite::parse("v.toml", VARIANTS).unwrap();
        let p = Plan::expand(&s, 2, 2).unwrap();
        assert!(p.cells.iter().all(|c| c.spec.params["cpus"] == Value::Int(2)));
        assert!(cells.iter().all(|c| c.2 == if c.1 == "b" { 1 } else { 2 }));
    }

    #[test]
    fn grouped_order_keeps_each_variant_together() {
        let names: Vec<String> =
            order_of("order = \"grouped\"").iter().map(|c| format!("{}{}", c.1, c.0)).collect();
        assert_eq!(names, ["a1", "a1", "a2", "a2", "b1", "b1", "b1", "b2", "b2", "b2"]);
    }

    #[test]
    fn random_order_shuffles_within_repetitions_by_seed() {
        let a = order_of("order = \"random\"\nseed = 42");
        assert_eq!(a, order_of("order = \"random\"\nseed = 42"), "a seed replays its order");
        assert!(a[..5].iter().all(|c| c.0 == 1) && a[5..].iter().all(|c| c.0 == 2), "{a:?}");
        let seeds: Vec<Vec<(u32, String, u32)>> =
            (0..8).map(|s| order_of(&format!("order = \"random\"\nseed = {s}"))).collect();
        assert!(seeds.iter().any(|o| o != &order_of("")), "some seed departs from the plain order");
        let s = Suite::parse("v.toml", &format!("order = \"random\"\n{VARIANTS}")).unwrap();
        assert!(Plan::expand(&s, 2, 2).unwrap().suite.seed.is_some(), "a chosen seed is recorded");
    }

    #[test]
    fn variant_cpus_beyond_the_machine_are_refused() {
        let s = Suite::parse("v.toml", &VARIANTS.replace("cpu_list = [1]", "cpu_list = [0, 5]")).unwrap();
        let e = Plan::expand(&s, 2, 2).unwrap_err().to_string();
        assert!(e.contains("variant 'b'") && e.contains("CPU 5"), "{e}");
        let bad = Suite::parse("v.toml", &VARIANTS.replace("variants = [\"b\"]", "variants = [\"c\"]"));
        let e = bad.unwrap_err().to_string();
        assert!(e.contains("'c', which is not defined (variants: a, b)"), "{e}");
    }

    #[test]
    fn default_cpus_used_when_unset() {
        let mut s = suite();
        s.cpus.clear();
        let p = Plan::expand(&s, 8, 8).unwrap();
        assert!(p.cells.iter().all(|c| c.cpus == 8));
    }
}
