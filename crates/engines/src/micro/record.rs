//! Timing a micro benchmark inside the measured window and turning the result into the
//! cell's figures: units of its kind over the window (so throughput is ops/s or bytes/s and
//! the runner's CPU per unit applies), and lmbench's own unit as an extra.

use super::caches;
use super::run::{timed, Setup};
use super::syscalls::Body;
use super::timing::loop_overhead_ns;
use crate::{Control, Recorder, WorkerStats};
use racehorse_machine::SysRoot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one cell measured (sent from the measuring child to the runner as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Outcome {
    /// Operations (latency, chase) or bytes (bandwidth) per second.
    per_s: f64,
    extra: BTreeMap<String, f64>,
    /// Remarks for the user (cache levels the curve disagrees with).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Outcome {
    /// Units over the window at the measured rate, and the extras.
    pub fn submit(self, ctl: &Control, rec: &Recorder) {
        let window_s = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(0.0);
        rec.submit(WorkerStats { units: self.per_s * window_s, ops: 1, ..Default::default() });
        for (k, v) in self.extra {
            rec.set_extra(&k, v);
        }
    }
}

/// The benchmark's cost from its own time `t` and its baselines' `b` (ns per operation):
/// sig_catch less the signal-0 send; prot_fault less its own baseline and less a caught
/// signal (catch − send), as lat_sig prot; ctx: half a round trip (two switches) less one
/// pipe write + read.
fn net_ns(bench: &str, t: f64, b: &[f64]) -> f64 {
    match (bench, b) {
        ("prot_fault", [own, catch, send]) => t - own - (catch - send),
        ("ctx", [pipe]) => t / 2.0 - pipe,
        (_, [base, ..]) => t - base,
        _ => t,
    }
}

/// µs per operation, baselines subtracted.
pub(crate) fn latency(s: &Setup, body: &mut Body, bases: Vec<Body>) -> Outcome {
    // One reading of the loop's cost serves the body and its baselines.
    let overhead = loop_overhead_ns();
    let t = timed(&s.method, body, overhead);
    let b: Vec<f64> = bases.into_iter().map(|mut b| timed(&s.method, &mut b, overhead).ns_per_op).collect();
    let ns = net_ns(&s.bench, t.ns_per_op, &b).max(1e-3);
    let mut extra = BTreeMap::from([
        ("latency_us".to_string(), ns / 1e3),
        ("iterations".to_string(), t.iterations as f64),
        ("gross_us".to_string(), t.ns_per_op / 1e3),
    ]);
    for (i, v) in b.iter().enumerate() {
        extra.insert(format!("baseline{}_us", i + 1), v / 1e3);
    }
    Outcome { per_s: 1e9 / ns, extra, notes: Vec::new() }
}

/// MB/s (10^6 bytes) of `bytes` per iteration.
pub(crate) fn bandwidth(s: &Setup, body: &mut Body, bytes: u64) -> Outcome {
    let t = timed(&s.method, body, 0.0);
    let per_s = bytes as f64 * 1e9 / t.ns_per_op.max(1e-3);
    let extra =
        BTreeMap::from([("mb_per_s".to_string(), per_s / 1e6), ("size_bytes".to_string(), s.size as f64)]);
    Outcome { per_s, extra, notes: Vec::new() }
}

/// ns per dependent load (the minimum of the tries).
pub(crate) fn chase(s: &Setup, body: &mut Body) -> Outcome {
    let t = timed(&s.method, body, 0.0);
    let ns = t.ns_per_op.max(1e-3);
    let extra = BTreeMap::from([("latency_ns".to_string(), ns), ("size_bytes".to_string(), s.size as f64)]);
    Outcome { per_s: 1e9 / ns, extra, notes: Vec::new() }
}

/// The random chase over lmbench's size series up to max(size, 4 × the largest cache): every point
/// (`chase_ns_<KiB>k`), the cache boundaries found in the curve and those of sysfs, and
/// their disagreements (printed, and counted in `disagreements`).
pub(crate) fn caches(s: &Setup, make: &dyn Fn(usize) -> Result<Body, String>) -> Result<Outcome, String> {
    let levels = caches::from_sysfs(&SysRoot::host(), 0)?;
    let largest = levels.iter().map(|l| l.size_bytes as usize).max().unwrap_or(0);
    let top = s.size.max(4 * largest);
    let mut points: Vec<(usize, f64)> = Vec::new();
    // One ring at a time: all of them at once would hold twice the top size.
    for z in super::chase::sizes(top).into_iter().filter(|z| *z >= 2 * s.stride) {
        let mut body = make(z)?;
        points.push((z, timed(&s.method, &mut body, 0.0).ns_per_op));
    }
    // Rings of a few lines time the loop more than the cache: steps start at 4 KiB.
    let curve: Vec<(usize, f64)> = points.iter().copied().filter(|(z, _)| *z >= 4096).collect();
    let found = caches::detect_boundaries(&curve, 1.3);
    let notes = caches::cross_check(&levels, &found);
    let mut extra: BTreeMap<String, f64> =
        points.iter().map(|(z, ns)| (format!("chase_ns_{}k", z / 1024), *ns)).collect();
    for l in &levels {
        extra.insert(format!("sysfs_l{}_bytes", l.level), l.size_bytes as f64);
    }
    for (i, b) in found.iter().enumerate() {
        extra.insert(format!("detected_{}_bytes", i + 1), *b as f64);
    }
    extra.insert("disagreements".into(), notes.len() as f64);
    let main_ns = points.last().map(|p| p.1).unwrap_or(f64::NAN).max(1e-3);
    Ok(Outcome { per_s: 1e9 / main_ns, extra, notes })
}

#[cfg(test)]
mod tests {
    use super::net_ns;

    #[test]
    fn baselines_come_off_as_lmbench_takes_them() {
        assert_eq!(net_ns("null", 5.0, &[]), 5.0);
        assert_eq!(net_ns("sig_catch", 5.0, &[1.0]), 4.0);
        assert_eq!(net_ns("prot_fault", 10.0, &[0.5, 4.0, 1.0]), 6.5, "fault − own − (catch − send)");
        assert_eq!(net_ns("ctx", 10.0, &[2.0]), 3.0, "half a round trip less one write + read");
    }
}
