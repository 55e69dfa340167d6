//! Load ramps compared (re-aim's study, seed 000): for each ramp — the points of one workload
//! that differ only in `users`, run until the engine's stop rule ended them — the highest
//! load each side reached and its peak throughput. A ramp that reaches further is its own
//! finding, even where the loads both sides ran compare point by point in the tables.

use crate::model::{Group, GroupKey};
use racehorse_stats::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// The parameter a ramp raises.
pub const RAMP_PARAM: &str = "users";

/// One side's ramp: the highest load it ran with an ok repetition, and its best load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RampEnd {
    /// Highest load with at least one ok repetition.
    pub reached_users: u64,
    /// Loads run.
    pub loads: usize,
    /// The load with the highest mean throughput, and that throughput (units/s).
    pub peak_users: u64,
    pub peak_units_per_s: f64,
}

/// One ramp on one new side against the base.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RampCompare {
    pub side: usize,
    pub workload: String,
    pub variant: String,
    /// The other parameters, `k=v k=v`.
    pub label: String,
    pub base: Option<RampEnd>,
    pub new: Option<RampEnd>,
}

impl RampCompare {
    /// Change of the highest load reached, in % (+ = further).
    pub fn reached_gain_pct(&self) -> Option<f64> {
        let (b, n) = (self.base?, self.new?);
        (b.reached_users > 0).then(|| (n.reached_users as f64 / b.reached_users as f64 - 1.0) * 100.0)
    }

    /// Change of the peak throughput, in % (+ = more).
    pub fn peak_gain_pct(&self) -> Option<f64> {
        let (b, n) = (self.base?, self.new?);
        (b.peak_units_per_s > 0.0).then(|| (n.peak_units_per_s / b.peak_units_per_s - 1.0) * 100.0)
    }
}

/// (workload, variant, other parameters) → per load: mean throughput of the ok repetitions.
type Ramps = BTreeMap<(String, String, String), Vec<(u64, Option<f64>)>>;

fn ramps_of(groups: &BTreeMap<GroupKey, Group<'_>>) -> Ramps {
    let mut out: Ramps = BTreeMap::new();
    for (k, g) in groups {
        let Some(users) = k.params.get(RAMP_PARAM).and_then(|v| v.as_u64()) else { continue };
        if g.ok.is_empty() {
            continue;
        }
        let others: Vec<String> = k.params.keys().filter(|n| n.as_str() != RAMP_PARAM).cloned().collect();
        let label = crate::model::params_label(&k.params, &others);
        let tput = Summary::of(&g.values(crate::model::Metric::Throughput)).map(|s| s.mean);
        out.entry((k.workload.clone(), k.variant.clone(), label)).or_default().push((users, tput));
    }
    out.retain(|_, loads| loads.len() >= 2);
    out
}

fn end_of(loads: &[(u64, Option<f64>)]) -> Option<RampEnd> {
    let reached_users = loads.iter().map(|l| l.0).max()?;
    let peak = loads
        .iter()
        .filter_map(|&(u, t)| Some((u, t?)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
    Some(RampEnd {
        reached_users,
        loads: loads.len(),
        peak_users: peak.map_or(0, |p| p.0),
        peak_units_per_s: peak.map_or(0.0, |p| p.1),
    })
}

/// Per new side, every ramp of base or that side (a ramp of one side only has no other end).
pub fn compare_ramps(
    base: &BTreeMap<GroupKey, Group<'_>>,
    news: &[BTreeMap<GroupKey, Group<'_>>],
) -> Vec<RampCompare> {
    let b = ramps_of(base);
    let mut out = Vec::new();
    for (side, new) in news.iter().enumerate() {
        let n = ramps_of(new);
        let mut keys: Vec<&(String, String, String)> = b.keys().chain(n.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            out.push(RampCompare {
                side,
                workload: k.0.clone(),
                variant: k.1.clone(),
                label: k.2.clone(),
                base: b.get(k).and_then(|l| end_of(l)),
                new: n.get(k).and_then(|l| end_of(l)),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_a_ramp_is_its_highest_load_and_its_peak() {
        let e = end_of(&[(1, Some(10.0)), (2, Some(18.0)), (3, Some(17.0)), (4, None)]).unwrap();
        assert_eq!((e.reached_users, e.loads, e.peak_users), (4, 4, 2));
        let r = RampCompare {
            side: 0,
            workload: "mix".into(),
            variant: String::new(),
            label: "workfile=compute".into(),
            base: Some(e),
            new: Some(RampEnd { reached_users: 6, loads: 6, peak_users: 5, peak_units_per_s: 27.0 }),
        };
        assert_eq!(r.reached_gain_pct(), Some(50.0));
        assert_eq!(r.peak_gain_pct(), Some(50.0));
    }
}
