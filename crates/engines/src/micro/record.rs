//! Timing a micro benchmark inside the measured window and turning the result into the
//! cell's figures: units of its kind over the window (so throughput is ops/s or bytes/s and
//! the runner's CPU per unit applies), and lmbench's own unit as an extra. A latency is a
//! difference (gross less the loop's and the baselines' cost); when that difference is not
//! clearly above the noise of what was subtracted, the figure is below its resolution: it is
//! marked so, with its raw inputs as extras, and never stored as a number.

use super::caches;
use super::run::{timed, Setup};
use super::syscalls::Body;
use super::timing::{loop_overhead, Timed};
use crate::{Control, Recorder, WorkerStats};
use racehorse_core::quality::THROUGHPUT;
use racehorse_machine::SysRoot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A net latency must be at least this many times the noise of its subtraction.
pub(crate) const NOISE_FACTOR: f64 = 3.0;
/// ... and at least this share of what was subtracted.
pub(crate) const OVERHEAD_SHARE: f64 = 0.05;

/// What one cell measured (sent from the measuring child to the runner as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Outcome {
    /// Operations (latency, chase) or bytes (bandwidth) per second; 0 when the figure is
    /// below its resolution (then no units are counted, so no CPU per unit either).
    per_s: f64,
    extra: BTreeMap<String, f64>,
    /// Remarks for the user (cache levels the curve disagrees with).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Figures below their resolution: name → why.
    #[serde(default)]
    pub below: BTreeMap<String, String>,
}

impl Outcome {
    fn new(per_s: f64, extra: BTreeMap<String, f64>) -> Outcome {
        Outcome { per_s, extra, notes: Vec::new(), below: BTreeMap::new() }
    }

    /// Units over the window at the measured rate, the extras and the figures below
    /// their resolution.
    pub fn submit(self, ctl: &Control, rec: &Recorder) {
        let window_s = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(0.0);
        rec.submit(WorkerStats { units: self.per_s * window_s, ops: 1, ..Default::default() });
        for (k, v) in self.extra {
            rec.set_extra(&k, v);
        }
        for (name, why) in self.below {
            rec.below_resolution(&name, why);
        }
    }
}

/// The weight of each timed figure in a benchmark's cost, the body first, then its
/// baselines: sig_catch less the signal-0 send; prot_fault less its own baseline and less a
/// caught signal (catch − send), as lat_sig prot; ctx: half a round trip (two switches) less
/// one pipe write + read.
fn weights(bench: &str, bases: usize) -> Vec<f64> {
    match (bench, bases) {
        ("prot_fault", 3) => vec![1.0, -1.0, -1.0, 1.0],
        ("ctx", 1) => vec![0.5, -1.0],
        (_, 0) => vec![1.0],
        (_, n) => std::iter::once(1.0).chain(std::iter::repeat_n(-1.0, n)).collect(),
    }
}

/// A latency as a difference: `net_ns = gross_ns − overhead_ns`, and the noise of that
/// difference (ns per operation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Net {
    /// The body's time per operation (half of it for ctx).
    pub gross_ns: f64,
    /// What is subtracted: the baselines as weighted (own + catch − send for prot_fault) and
    /// the empty loop's cost, once for each loop iteration the weighted figures leave over.
    pub overhead_ns: f64,
    /// Σ |weight| × spread of every figure, the loop's included.
    pub noise_ns: f64,
    pub net_ns: f64,
}

/// The net cost of `bench` from its body's timing, its baselines' and the empty loop's; the
/// noise is that of the overhead (baselines and loop), the "overhead's own noise".
/// Every timed figure holds one loop iteration per operation, so the loop comes off as often
/// as the weights add up to (once for a plain call, never for prot_fault, −½ for ctx).
pub(crate) fn net(bench: &str, body: &Timed, bases: &[Timed], empty_loop: &Timed) -> Net {
    let figures = std::iter::once(body).chain(bases);
    let (mut gross, mut overhead, mut noise, mut loops) = (0.0, 0.0, 0.0, 0.0);
    for (i, (w, t)) in weights(bench, bases.len()).into_iter().zip(figures).enumerate() {
        if i == 0 {
            gross = w * t.ns_per_op;
        } else {
            // The noise that matters is the subtracted overhead's own: the body's spread is
            // in every figure alike and shows between repetitions.
            overhead -= w * t.ns_per_op;
            noise += w.abs() * t.spread_ns();
        }
        loops += w;
    }
    overhead += loops * empty_loop.ns_per_op;
    noise += f64::abs(loops) * empty_loop.spread_ns();
    Net { gross_ns: gross, overhead_ns: overhead, noise_ns: noise, net_ns: gross - overhead }
}

impl Net {
    /// Why the net figure is below its resolution, or None when it stands: it must be
    /// positive, at least [`NOISE_FACTOR`] × the noise and at least [`OVERHEAD_SHARE`] of
    /// the overhead (tries of one figure agree better than figures timed one after another).
    pub fn unresolved(&self) -> Option<String> {
        let floor = (NOISE_FACTOR * self.noise_ns).max(OVERHEAD_SHARE * self.overhead_ns.abs());
        let ok = self.net_ns > 0.0 && self.net_ns >= floor;
        (!ok).then(|| {
            format!(
                "gross {:.1} ns less overhead {:.1} ns leaves {:.1} ns per operation, below the resolution \
                 of {:.1} ns ({NOISE_FACTOR}× the noise of {:.1} ns, or {}% of the overhead)",
                self.gross_ns,
                self.overhead_ns,
                self.net_ns,
                floor,
                self.noise_ns,
                OVERHEAD_SHARE * 100.0
            )
        })
    }
}

/// The name under which a micro latency is marked below its resolution.
pub(crate) fn latency_mark(bench: &str) -> String {
    format!("latency {bench}")
}

/// µs per operation, baselines and the empty loop subtracted.
pub(crate) fn latency(s: &Setup, body: &mut Body, bases: Vec<Body>) -> Outcome {
    // One reading of the loop's cost serves the body and its baselines.
    let empty_loop = loop_overhead();
    let t = timed(&s.method, body);
    let b: Vec<Timed> = bases.into_iter().map(|mut b| timed(&s.method, &mut b)).collect();
    latency_outcome(&s.bench, &t, &b, &empty_loop)
}

/// The figures of a latency benchmark from its timings.
pub(crate) fn latency_outcome(bench: &str, t: &Timed, b: &[Timed], empty_loop: &Timed) -> Outcome {
    let n = net(bench, t, b, empty_loop);
    let mut extra = BTreeMap::from([
        ("iterations".to_string(), t.iterations as f64),
        ("gross_us".to_string(), t.ns_per_op / 1e3),
        ("gross_ns".to_string(), n.gross_ns),
        ("overhead_ns".to_string(), n.overhead_ns),
        ("noise_ns".to_string(), n.noise_ns),
        ("loop_ns".to_string(), empty_loop.ns_per_op),
    ]);
    for (i, v) in b.iter().enumerate() {
        extra.insert(format!("baseline{}_us", i + 1), v.ns_per_op / 1e3);
    }
    let Some(why) = n.unresolved() else {
        extra.insert("latency_us".to_string(), n.net_ns / 1e3);
        return Outcome::new(1e9 / n.net_ns, extra);
    };
    let mut out = Outcome::new(0.0, extra);
    out.below.insert(THROUGHPUT.to_string(), why.clone());
    out.below.insert(latency_mark(bench), why);
    out
}

/// The rate of a unit that takes `ns_per_unit`, or the Outcome marked below resolution
/// when the timing is not positive (a body timed at the clock's own cost).
fn rate(ns_per_unit: f64, units_per_op: f64, extra: BTreeMap<String, f64>) -> Outcome {
    if ns_per_unit > 0.0 {
        return Outcome::new(units_per_op * 1e9 / ns_per_unit, extra);
    }
    let mut out = Outcome::new(0.0, extra);
    out.below.insert(
        THROUGHPUT.to_string(),
        format!("{ns_per_unit:.3} ns per operation after the clock's cost: not measurable"),
    );
    out
}

/// MB/s (10^6 bytes) of `bytes` per iteration.
pub(crate) fn bandwidth(s: &Setup, body: &mut Body, bytes: u64) -> Outcome {
    let t = timed(&s.method, body);
    let mut extra = BTreeMap::from([("size_bytes".to_string(), s.size as f64)]);
    if t.ns_per_op > 0.0 {
        extra.insert("mb_per_s".to_string(), bytes as f64 * 1e3 / t.ns_per_op);
    }
    rate(t.ns_per_op, bytes as f64, extra)
}

/// ns per dependent load (the minimum of the tries).
pub(crate) fn chase(s: &Setup, body: &mut Body) -> Outcome {
    let t = timed(&s.method, body);
    let extra =
        BTreeMap::from([("latency_ns".to_string(), t.ns_per_op), ("size_bytes".to_string(), s.size as f64)]);
    rate(t.ns_per_op, 1.0, extra)
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
        points.push((z, timed(&s.method, &mut body).ns_per_op));
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
    let main_ns = points.last().map(|p| p.1).unwrap_or(f64::NAN);
    Ok(Outcome { notes, ..rate(main_ns, 1.0, extra) })
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
