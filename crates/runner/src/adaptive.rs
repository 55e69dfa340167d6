//! Adaptive repetitions (`reps = "auto"`): after the first three repetitions of every
//! point, further rounds repeat only the points whose throughput is not yet known well
//! enough — the Student-t 95% interval of the mean wider than ±target — until each is
//! within it or has reached the maximum count. Rounds keep the plan order, so drift during
//! the run still touches every point alike.

use crate::plan::{Plan, PlannedCell};
use crate::suite::values::{Adaptive, MIN_REPS};
use racehorse_core::{CellResult, CellStatus};
use racehorse_stats::relative_half_width;
use std::collections::BTreeMap;

/// Throughput per point (match key) over the repetitions finished so far.
#[derive(Debug, Default, Clone)]
pub struct Tracker {
    values: BTreeMap<String, Vec<f64>>,
    /// Highest repetition number run per point, ok or not.
    last_rep: BTreeMap<String, u32>,
}

impl Tracker {
    pub fn record(&mut self, r: &CellResult) {
        let key = r.spec.match_key();
        let last = self.last_rep.entry(key.clone()).or_default();
        *last = (*last).max(r.spec.rep);
        if r.status == CellStatus::Ok {
            self.values.entry(key).or_default().push(r.throughput());
        }
    }

    /// The interval's relative half-width for `key`, if it has one.
    pub fn half_width(&self, key: &str, a: &Adaptive) -> Option<f64> {
        self.values.get(key).and_then(|v| relative_half_width(v, a.level))
    }

    /// Within the target (with at least [`MIN_REPS`] ok repetitions).
    pub fn converged(&self, key: &str, a: &Adaptive) -> bool {
        let n = self.values.get(key).map_or(0, Vec::len);
        n >= MIN_REPS as usize && self.half_width(key, a).is_some_and(|h| h <= a.target_half_width)
    }

    fn last_rep(&self, key: &str) -> u32 {
        self.last_rep.get(key).copied().unwrap_or(0)
    }
}

/// The points of the plan, each once: its first-repetition cell.
fn templates(plan: &Plan) -> impl Iterator<Item = &PlannedCell> {
    plan.cells.iter().filter(|c| c.spec.rep == 1)
}

/// One more repetition of every point that has not converged and may still repeat, in plan
/// order (shuffled when the order is random), numbered from `next_index`.
pub fn next_round(plan: &Plan, t: &Tracker, a: &Adaptive, next_index: usize) -> Vec<PlannedCell> {
    let mut out = Vec::new();
    for c in templates(plan) {
        let key = c.spec.match_key();
        let last = t.last_rep(&key);
        if t.converged(&key, a) || last >= a.max_reps || last == 0 {
            continue;
        }
        let mut cell = c.clone();
        cell.spec.rep = last + 1;
        out.push(cell);
    }
    if plan.suite.order == crate::suite::variant::Order::Random {
        crate::suite::variant::shuffle(&mut out, crate::plan::round_seed(&plan.suite, next_index as u64));
    }
    for (i, c) in out.iter_mut().enumerate() {
        c.index = next_index + i;
    }
    out
}

/// How the adaptive repetitions ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdaptiveSummary {
    pub points: usize,
    pub converged: usize,
    /// Cells run beyond the first round.
    pub extra_cells: usize,
}

pub fn summary(plan: &Plan, t: &Tracker, a: &Adaptive, extra_cells: usize) -> AdaptiveSummary {
    let keys: Vec<String> = templates(plan).map(|c| c.spec.match_key()).collect();
    AdaptiveSummary {
        points: keys.len(),
        converged: keys.iter().filter(|k| t.converged(k, a)).count(),
        extra_cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Suite;
    use racehorse_core::{Nanos, WorkUnit};

    fn plan() -> Plan {
        let s = Suite::parse("t", "reps = 3\n[[workload]]\nengine = \"null\"\nclients = [1, 2]\n").unwrap();
        Plan::expand(&s, 2, 2).unwrap()
    }

    fn result(c: &PlannedCell, tput: f64) -> CellResult {
        let mut r = CellResult::empty(c.spec.clone(), WorkUnit::Ops);
        r.window = Nanos(1_000_000_000);
        r.units = tput;
        r
    }

    #[test]
    fn only_scattered_points_repeat_until_the_maximum() {
        let p = plan();
        let a = Adaptive { max_reps: 5, ..Adaptive::default() };
        let mut t = Tracker::default();
        for c in &p.cells {
            let clients = c.spec.params["clients"].as_i64().unwrap();
            // clients=1 is steady; clients=2 scatters by ±20%.
            let tput = if clients == 1 {
                1000.0 + c.spec.rep as f64
            } else {
                [800.0, 1200.0, 1000.0][c.spec.rep as usize - 1]
            };
            t.record(&result(c, tput));
        }
        let round = next_round(&p, &t, &a, p.cells.len());
        assert_eq!(round.len(), 1);
        assert_eq!(round[0].spec.params["clients"].as_i64(), Some(2));
        assert_eq!((round[0].spec.rep, round[0].index), (4, 6));
        let mut cell = round[0].clone();
        for rep in 4..=5 {
            cell.spec.rep = rep;
            t.record(&result(&cell, 1300.0));
        }
        assert!(next_round(&p, &t, &a, 8).is_empty(), "max_reps reached");
        let s = summary(&p, &t, &a, 2);
        assert_eq!((s.points, s.converged, s.extra_cells), (2, 1, 2));
    }
}
