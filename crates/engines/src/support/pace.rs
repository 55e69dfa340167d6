//! Paced load with a quality of service: the engines that can run at a fixed target rate
//! (`rate`, units of work per second for the whole cell) instead of flat out, and check a
//! latency limit (`qos = "p95<=5ms"`).
//!
//! The schedule is open loop: worker `i` of `n` starts its units at intended times
//! `t_start + i/rate + k·n/rate`, whatever happened to the previous unit. A unit's latency is
//! measured from its **intended** start, so a worker that falls behind (a slow unit, a stall)
//! sees the queueing it caused in the latencies of the units after it instead of hiding it
//! (no coordinated omission). A worker ahead of its schedule sleeps (one `nanosleep`, with
//! the thread's timer slack lowered to 1 µs); it never spins, so the CPU per unit of a paced
//! cell is what the work costs at that load, not the cost of waiting for it. A late wake-up
//! is part of the measured latency.
//!
//! The cell records its pacing and QoS figures as extras (see [`record`]; docs/formats.md):
//! `pace_target_per_s`, `pace_achieved_per_s`, `pace_achieved_pct`, `qos_percentile`,
//! `qos_limit_ms`, `qos_measured_ms`, `qos_min_rate_pct` and `qos_held` (1 or 0).

use crate::control::Control;
use crate::options::{OptKind, OptionSpec};
use crate::{CellContext, EngineError, Recorder, WorkerMeter};
use racehorse_core::{Figure, LatencyHistogram, Nanos, Params, Value};
use std::sync::Mutex;
use std::time::Duration;

/// The `rate` option of every engine that can pace.
pub const RATE: OptionSpec = OptionSpec {
    name: "rate",
    kind: OptKind::Float,
    default: "",
    help: "paced load: target units of work per second for the whole cell, spread over its workers \
           (open loop; latency from each unit's intended start); absent = flat out",
};

/// The `qos` option of every engine that can pace.
pub const QOS: OptionSpec = OptionSpec {
    name: "qos",
    kind: OptKind::Str,
    default: "",
    help: "quality of service the cell must hold, e.g. \"p95<=5ms\" (a latency percentile from the \
           intended start, at most a duration) and with rate also \";rate>=95%\" (the achieved rate's \
           floor, default 95% of rate); recorded as qos_held; absent = no check",
};

/// The figures of a paced or QoS-checked cell (see [`evaluate`]), which every engine that can
/// pace ends its figure table with: compare compares the QoS latency and the rate achieved.
pub const FIGURES: [Figure; 8] = [
    Figure::lower("qos_measured_ms", "QoS latency", "ms"),
    Figure::higher("pace_achieved_per_s", "paced rate achieved", "units/s"),
    Figure::info("pace_target_per_s", "paced rate asked", "units/s"),
    Figure::info("pace_achieved_pct", "rate achieved of the target", "%"),
    Figure::info("qos_percentile", "QoS percentile", "percentile"),
    Figure::info("qos_limit_ms", "QoS latency limit", "ms"),
    Figure::info("qos_min_rate_pct", "QoS rate floor", "%"),
    Figure::info("qos_held", "QoS held", "1 = held"),
];

/// An engine's figure table with [`FIGURES`] appended (`N` = its length + 8):
/// `static FIGURES_PACED: [Figure; OWN.len() + 8] = with_pace_figures(OWN);`.
pub const fn with_pace_figures<const N: usize>(base: &[Figure]) -> [Figure; N] {
    assert!(N == base.len() + FIGURES.len(), "the paced table holds the base table and pace's figures");
    let mut out = [FIGURES[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < base.len() { base[i] } else { FIGURES[i - base.len()] };
        i += 1;
    }
    out
}

/// The syntax of `qos`, for error messages and docs.
pub const QOS_SYNTAX: &str = "PERCENTILE<=DURATION[;rate>=PCT%], e.g. \"p95<=5ms\" or \
                              \"p99.9<=20ms;rate>=90%\" (percentile p50 to p99.99; duration with ns, us, ms or s)";

/// The achieved rate's default floor, in % of `rate`, when `qos` names none.
pub const DEFAULT_MIN_RATE_PCT: f64 = 95.0;

/// The highest `rate` accepted (units per second).
pub const MAX_RATE_PER_S: f64 = 10_000_000.0;

/// The longest single sleep, so that a paced worker notices the window's end or an abort.
const MAX_SLEEP: Duration = Duration::from_millis(50);

/// An engine's option table with [`RATE`] and [`QOS`] appended (`N` = its length + 2):
/// `static OPTIONS_PACED: [OptionSpec; OPTIONS.len() + 2] = with_pace_options(OPTIONS);`.
pub const fn with_pace_options<const N: usize>(base: &[OptionSpec]) -> [OptionSpec; N] {
    assert!(N == base.len() + 2, "the paced table holds the base table and rate and qos");
    let mut out = [RATE; N];
    let mut i = 0;
    while i < base.len() {
        out[i] = base[i];
        i += 1;
    }
    out[N - 1] = QOS;
    out
}

/// A quality of service: a latency percentile's limit, and a floor for the achieved rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Qos {
    /// The percentile, e.g. 95.0 for p95.
    pub percentile: f64,
    /// The limit of that percentile's latency.
    pub limit_ns: u64,
    /// The achieved rate must reach this share of `rate`, in % (only with `rate`); None =
    /// [`DEFAULT_MIN_RATE_PCT`].
    pub min_rate_pct: Option<f64>,
}

impl Qos {
    /// The achieved rate's floor in % of `rate`.
    pub fn rate_floor_pct(&self) -> f64 {
        self.min_rate_pct.unwrap_or(DEFAULT_MIN_RATE_PCT)
    }
}

/// A duration with its unit: `5ms`, `0.5ms`, `250us`, `1s`, `800ns`.
fn duration_ns(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let ns = v * scale;
    (1.0..=3600e9).contains(&ns).then_some(ns.round() as u64)
}

/// The percentile of `p95`, `p99.9` (50 to 99.99).
fn percentile(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_prefix('p')?.parse().ok()?;
    (50.0..=99.99).contains(&v).then_some(v)
}

/// The floor of `rate>=95%` in %.
fn rate_floor(text: &str) -> Option<f64> {
    let v: f64 = text
        .trim()
        .strip_prefix("rate")?
        .trim()
        .strip_prefix(">=")?
        .trim()
        .strip_suffix('%')?
        .parse()
        .ok()?;
    (v > 0.0 && v <= 100.0).then_some(v)
}

/// Parses a `qos` value (see [`QOS_SYNTAX`]).
pub fn parse_qos(text: &str) -> Result<Qos, String> {
    let bad = |why: &str| format!("option 'qos': '{text}' {why}; write {QOS_SYNTAX}");
    let mut terms = text.split(';');
    let latency = terms.next().unwrap_or("");
    let (p, limit) = latency.split_once("<=").ok_or_else(|| bad("has no PERCENTILE<=DURATION"))?;
    let percentile = percentile(p).ok_or_else(|| bad("does not start with a percentile p50 to p99.99"))?;
    let limit_ns = duration_ns(limit).ok_or_else(|| bad("has no duration with a unit after <="))?;
    let min_rate_pct = match terms.next() {
        None => None,
        Some(t) => Some(rate_floor(t).ok_or_else(|| bad("has a second term that is not rate>=PCT%"))?),
    };
    if terms.next().is_some() {
        return Err(bad("has more than two terms"));
    }
    Ok(Qos { percentile, limit_ns, min_rate_pct })
}

/// A cell's pacing: its target rate and its QoS, each optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PaceSpec {
    pub rate_per_s: Option<f64>,
    pub qos: Option<Qos>,
}

impl PaceSpec {
    /// Reads `rate` and `qos` from a cell's parameters (absent: flat out, no check).
    pub fn of_params(params: &Params) -> Result<PaceSpec, String> {
        let rate_per_s = match params.get("rate") {
            None => None,
            Some(v) => {
                let r = v.as_f64().unwrap_or(f64::NAN);
                if !(r.is_finite() && r > 0.0 && r <= MAX_RATE_PER_S) {
                    return Err(format!(
                        "option 'rate': {v} is not a rate; give units of work per second above 0 and at most \
                         {MAX_RATE_PER_S}, e.g. rate=500"
                    ));
                }
                Some(r)
            }
        };
        let qos = match params.get("qos") {
            None => None,
            Some(Value::Str(s)) if s.trim().is_empty() => None,
            Some(Value::Str(s)) => Some(parse_qos(s)?),
            Some(v) => return Err(format!("option 'qos': {v} is not text; write {QOS_SYNTAX}")),
        };
        if let (Some(Qos { min_rate_pct: Some(_), .. }), None) = (&qos, rate_per_s) {
            return Err("option 'qos': a rate>=PCT% floor needs a target rate (-o rate=N)".into());
        }
        Ok(PaceSpec { rate_per_s, qos })
    }

    /// [`PaceSpec::of_params`] of a cell, as a usage error.
    pub fn of(ctx: &CellContext) -> Result<PaceSpec, EngineError> {
        Self::of_params(&ctx.spec.params).map_err(EngineError::Usage)
    }

    /// Whether the cell is paced or checks a QoS (and so records the figures).
    pub fn active(&self) -> bool {
        self.rate_per_s.is_some() || self.qos.is_some()
    }
}

/// Lowers the calling thread's timer slack to 1 µs, so that its sleeps end on time (the
/// default 50 µs would be added to every paced unit's latency).
fn precise_sleeps() {
    let slack_ns: libc::c_ulong = 1000;
    // SAFETY: PR_SET_TIMERSLACK changes only the calling thread's slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, slack_ns, 0, 0, 0) };
}

/// One worker's schedule and the latencies of its units (from their intended starts).
pub struct Pacer {
    /// Nanoseconds between this worker's intended starts; 0 = flat out.
    interval_ns: f64,
    /// The intended start of the next unit, on the cell's clock.
    next_ns: f64,
    /// Keep latencies for the cell's figures (paced or with a QoS).
    keep: bool,
    hist: LatencyHistogram,
}

impl Pacer {
    /// Worker `worker` of `workers` of a cell paced by `spec`; its first unit is due one
    /// cell-wide interval after the previous worker's, so the cell's starts are evenly spread.
    pub fn new(spec: &PaceSpec, worker: usize, workers: usize, ctl: &Control) -> Pacer {
        let now = ctl.now().0 as f64;
        let (interval_ns, next_ns) = match spec.rate_per_s {
            Some(rate) => {
                precise_sleeps();
                let gap = 1e9 / rate;
                (gap * workers.max(1) as f64, now + gap * worker as f64)
            }
            None => (0.0, now),
        };
        Pacer { interval_ns, next_ns, keep: spec.active(), hist: LatencyHistogram::new() }
    }

    /// Waits until the next unit's intended start and returns it (now, when flat out or
    /// behind schedule); None when the cell stopped (window closed, run aborted) meanwhile.
    /// After a wait `meter` follows the phase again, so that a unit due just after the window
    /// opened counts.
    pub fn next(&mut self, ctl: &Control, meter: &mut WorkerMeter) -> Option<Nanos> {
        if self.interval_ns == 0.0 {
            return Some(ctl.now());
        }
        let due = self.wait(ctl)?;
        meter.tick(ctl).then_some(due)
    }

    /// The paced part of [`Pacer::next`].
    fn wait(&mut self, ctl: &Control) -> Option<Nanos> {
        let intended = self.next_ns;
        self.next_ns += self.interval_ns;
        loop {
            if ctl.should_stop() {
                return None;
            }
            let left = intended - ctl.now().0 as f64;
            if left < 1.0 {
                break;
            }
            let nap = Duration::from_nanos(left as u64);
            ctl.clock().sleep(nap.min(MAX_SLEEP));
            if nap <= MAX_SLEEP {
                break;
            }
        }
        Some(Nanos(intended as u64))
    }

    /// Ends a unit that was due at `intended`: its latency in ns from that intended start,
    /// kept for the cell's figures when `meter` counts the unit (it ends inside the window,
    /// [`WorkerMeter::count`]'s rule), so the achieved rate is the engine's throughput.
    pub fn done(&mut self, ctl: &Control, meter: &WorkerMeter, intended: Nanos) -> u64 {
        let ns = ctl.now().0.saturating_sub(intended.0);
        if self.keep && meter.measuring() && ctl.measuring() {
            self.hist.record(ns);
        }
        ns
    }

    /// Hands the worker's latencies to the cell's tally.
    pub fn finish(self, tally: &PaceTally) {
        if self.keep {
            tally.lock().merge(&self.hist);
        }
    }
}

/// The latencies of a cell's paced units inside the window, over all its workers.
#[derive(Default)]
pub struct PaceTally {
    hist: Mutex<LatencyHistogram>,
}

impl PaceTally {
    fn lock(&self) -> std::sync::MutexGuard<'_, LatencyHistogram> {
        self.hist.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a paced or QoS-checked cell achieved, as its extras.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub figures: Vec<(&'static str, f64)>,
    pub held: Option<bool>,
}

/// Judges a cell: `hist` holds the latencies (from the intended starts) of the units that
/// ended inside a window of `window_s` seconds.
pub fn evaluate(spec: &PaceSpec, hist: &LatencyHistogram, window_s: f64) -> Outcome {
    let mut figures = Vec::new();
    let achieved = if window_s > 0.0 { hist.count as f64 / window_s } else { 0.0 };
    figures.push(("pace_achieved_per_s", achieved));
    if let Some(rate) = spec.rate_per_s {
        figures.push(("pace_target_per_s", rate));
        figures.push(("pace_achieved_pct", 100.0 * achieved / rate));
    }
    let Some(q) = &spec.qos else { return Outcome { figures, held: None } };
    figures.push(("qos_percentile", q.percentile));
    figures.push(("qos_limit_ms", q.limit_ns as f64 / 1e6));
    let measured_ns = (hist.count > 0).then(|| hist.quantile_ns(q.percentile / 100.0));
    if let Some(ns) = measured_ns {
        figures.push(("qos_measured_ms", ns as f64 / 1e6));
    }
    let latency_ok = measured_ns.is_some_and(|ns| ns <= q.limit_ns);
    let rate_ok = match spec.rate_per_s {
        Some(rate) => {
            figures.push(("qos_min_rate_pct", q.rate_floor_pct()));
            achieved >= rate * q.rate_floor_pct() / 100.0
        }
        None => true,
    };
    let held = latency_ok && rate_ok;
    figures.push(("qos_held", f64::from(u8::from(held))));
    Outcome { figures, held: Some(held) }
}

/// Records a cell's pacing and QoS figures (nothing for a cell neither paced nor checked).
pub fn record(rec: &Recorder, spec: &PaceSpec, tally: &PaceTally, ctl: &Control) {
    if !spec.active() {
        return;
    }
    let window_s = ctl.window().map_or(0.0, |w| w.as_secs_f64());
    for (name, v) in evaluate(spec, &tally.lock(), window_s).figures {
        rec.set_extra(name, v);
    }
}

#[cfg(test)]
#[path = "pace_tests.rs"]
mod tests;
