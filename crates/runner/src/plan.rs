//! Matrix expansion: a suite becomes an ordered list of cells (variant × repetition ×
//! workload × CPU count × every combination of option values), with an estimated duration.

use crate::suite::{Suite, SuiteError, Variant};
use racehorse_core::{CellSpec, Params, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// Per-cell overhead assumed by the ETA (prepare, cache drop, cleanup).
const CELL_OVERHEAD: Duration = Duration::from_secs(1);
/// Refuse plans larger than this: almost certainly a typo in an axis.
const MAX_CELLS: usize = 100_000;

/// One cell with everything the runner needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCell {
    pub index: usize,
    pub spec: CellSpec,
    pub cpus: u32,
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

impl Plan {
    /// Expands `suite`; `max_cpus` is the number of CPUs the machine has (possible CPUs),
    /// `default_cpus` the count used when the suite names none.
    pub fn expand(suite: &Suite, max_cpus: u32, default_cpus: u32) -> Result<Plan, SuiteError> {
        let variants = if suite.variants.is_empty() {
            vec![Variant { name: "default".into(), ..Variant::default() }]
        } else {
            suite.variants.clone()
        };
        let max_reps = suite.workloads.iter().map(|w| w.reps.unwrap_or(suite.reps)).max().unwrap_or(1);
        let mut cells = Vec::new();
        for (vi, variant) in variants.iter().enumerate() {
            for rep in 1..=max_reps {
                for w in &suite.workloads {
                    if rep > w.reps.unwrap_or(suite.reps) {
                        continue;
                    }
                    let cpus_axis = w.cpus.clone().unwrap_or_else(|| {
                        if suite.cpus.is_empty() {
                            vec![default_cpus]
                        } else {
                            suite.cpus.clone()
                        }
                    });
                    if let Some(&bad) = cpus_axis.iter().find(|&&c| c > max_cpus) {
                        return Err(SuiteError::usage(format!(
                            "cpus = {bad} but this machine has {max_cpus} CPUs; use 1..{max_cpus}"
                        )));
                    }
                    for &cpus in &cpus_axis {
                        for mut params in combinations(&w.axes) {
                            params.insert("cpus".into(), Value::Int(i64::from(cpus)));
                            cells.push(PlannedCell {
                                index: cells.len(),
                                spec: CellSpec {
                                    workload: w.engine.clone(),
                                    params,
                                    variant: variant.name.clone(),
                                    rep,
                                },
                                cpus,
                                runtime: w.runtime.unwrap_or(suite.runtime),
                                warmup: w.warmup.unwrap_or(suite.warmup),
                                variant: vi,
                            });
                            if cells.len() > MAX_CELLS {
                                return Err(SuiteError::usage(format!(
                                    "the plan has more than {MAX_CELLS} cells; shorten the axes"
                                )));
                            }
                        }
                    }
                }
            }
        }
        Ok(Plan { suite: suite.clone(), variants, cells })
    }

    /// Estimated wall time of the cells from `from` on.
    pub fn eta_from(&self, from: usize) -> Duration {
        self.cells.iter().skip(from).map(|c| c.warmup + c.runtime + CELL_OVERHEAD).sum()
    }

    pub fn eta(&self) -> Duration {
        self.eta_from(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn too_many_cpus_is_refused() {
        let e = Plan::expand(&suite(), 1, 1).unwrap_err();
        assert!(e.to_string().contains("this machine has 1 CPUs"), "{e}");
    }

    #[test]
    fn default_cpus_used_when_unset() {
        let mut s = suite();
        s.cpus.clear();
        let p = Plan::expand(&s, 8, 8).unwrap();
        assert!(p.cells.iter().all(|c| c.cpus == 8));
    }
}
