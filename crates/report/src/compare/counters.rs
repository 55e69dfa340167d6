//! Counters per unit of work, base against new, for a point profiled on both sides: each
//! window's count divided by its units (IPC: instructions over cycles), compared over the
//! point's repetitions as the other per-cell figures are (means, ratio new/base, a Welch
//! interval of the ratio at 95% with 3 or more windows a side), significant after a
//! Benjamini–Hochberg correction over every counter of the new side's profiled points (a
//! family of their own, as the items are). Lower is better for every cost, higher for IPC.
//! An event the machine does not support is said once, not shown as 0.

use racehorse_core::CellResult;
use racehorse_stats::{benjamini_hochberg, ratio_ci, ratio_p_value, CiMethod, Summary};
use serde::Serialize;
use std::fmt::Write;

/// The events in the order they are listed, and whether more is better.
const EVENTS: &[(&str, &str)] = &[
    ("instructions", "instructions per unit"),
    ("cycles", "cycles per unit"),
    ("ipc", "IPC (instructions per cycle)"),
    ("cache-misses", "cache misses per unit"),
    ("branch-misses", "branch misses per unit"),
    ("context-switches", "context switches per unit"),
    ("cpu-migrations", "CPU migrations per unit"),
    ("page-faults", "page faults per unit"),
];

/// A window's count of `event`: Some(None) when the machine does not support it, None when
/// the window did not record it.
fn count(c: &CellResult, event: &str) -> Option<Option<f64>> {
    let p = c.profile.as_ref()?;
    p.counters.iter().find(|k| k.event == event).map(|k| k.count)
}

/// A window's per-unit value of `event` (or its IPC).
fn per_unit(c: &CellResult, event: &str) -> Option<Option<f64>> {
    if event == "ipc" {
        let (i, y) = (count(c, "instructions")?, count(c, "cycles")?);
        return Some(match (i, y) {
            (Some(i), Some(y)) if y > 0.0 => Some(i / y),
            (Some(_), Some(_)) => return None,
            _ => None,
        });
    }
    let v = count(c, event)?;
    if c.units <= 0.0 {
        return None;
    }
    Some(v.map(|v| v / c.units))
}

/// Per-window values of `event` over `cells`, and whether some window did not support it.
fn values(cells: &[&CellResult], event: &str) -> (Vec<f64>, bool) {
    let mut out = Vec::new();
    let mut unsupported = false;
    for c in cells {
        match per_unit(c, event) {
            Some(Some(v)) if v.is_finite() => out.push(v),
            Some(None) => unsupported = true,
            _ => {}
        }
    }
    (out, unsupported)
}

/// One counter of one point, base against new: the means per unit (or the IPC) over the
/// windows, their ratio new/base, and the 95% Welch interval of the ratio (None with too
/// few windows for one).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterCompare {
    /// perf's event name, or `ipc`.
    pub event: &'static str,
    pub label: &'static str,
    pub higher_is_better: bool,
    pub base_n: usize,
    pub new_n: usize,
    pub base_mean: f64,
    pub new_mean: f64,
    /// None when base's mean is 0.
    pub ratio: Option<f64>,
    pub ci_lo: Option<f64>,
    pub ci_hi: Option<f64>,
    /// Two-sided p-value of "no change" (Welch, dual to the interval) and its q-value after
    /// [`correct_counters`]; None without an interval.
    pub p_value: Option<f64>,
    pub q_value: Option<f64>,
    /// q ≤ 0.05 once corrected (before: the interval excludes 1); None without an interval.
    pub significant: Option<bool>,
    /// `better`, `worse` or `same` (within 1%); None without a ratio.
    pub verdict: Option<&'static str>,
}

/// The counters of one point: those both sides recorded, and the events some window could not
/// count on its machine (listed once, never shown as 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counters {
    pub rows: Vec<CounterCompare>,
    pub unsupported: Vec<&'static str>,
}

/// Compares every counter of one point.
pub fn counter_compares(base: &[&CellResult], new: &[&CellResult]) -> Counters {
    let mut out = Counters::default();
    for &(event, label) in EVENTS {
        let (b, b_unsup) = values(base, event);
        let (n, n_unsup) = values(new, event);
        if b_unsup || n_unsup {
            if event != "ipc" {
                out.unsupported.push(event);
            }
            continue;
        }
        let (Some(bs), Some(ns)) = (Summary::of(&b), Summary::of(&n)) else { continue };
        let higher_is_better = event == "ipc";
        let ratio = (bs.mean > 0.0).then(|| ns.mean / bs.mean);
        let ci = ratio.and(ratio_ci(&b, &n, 0.95, CiMethod::Welch));
        let verdict = ratio.map(|r| {
            let gain = if higher_is_better { r - 1.0 } else { 1.0 - r };
            match gain {
                g if g.abs() <= 0.01 => "same",
                g if g > 0.0 => "better",
                _ => "worse",
            }
        });
        out.rows.push(CounterCompare {
            event,
            label,
            higher_is_better,
            base_n: b.len(),
            new_n: n.len(),
            base_mean: bs.mean,
            new_mean: ns.mean,
            ratio,
            ci_lo: ci.map(|c| c.lo),
            ci_hi: ci.map(|c| c.hi),
            p_value: ci.and(ratio_p_value(&b, &n, CiMethod::Welch)),
            q_value: None,
            significant: ci.map(|c| c.excludes_one()),
            verdict,
        });
    }
    out
}

/// The false discovery rate of the counters' correction (the intervals are at 95%).
pub const COUNTERS_FDR: f64 = 0.05;

/// Benjamini–Hochberg over the counters of every point of one new side: each tested counter
/// gets its q-value and is significant when that is at most `alpha`.
pub fn correct_counters(points: &mut [Counters], alpha: f64) {
    let mut tested: Vec<&mut CounterCompare> =
        points.iter_mut().flat_map(|c| c.rows.iter_mut()).filter(|r| r.p_value.is_some()).collect();
    let p: Vec<f64> = tested.iter().map(|r| r.p_value.unwrap_or(1.0)).collect();
    for (r, q) in tested.iter_mut().zip(benjamini_hochberg(&p)) {
        r.q_value = Some(q);
        r.significant = Some(q <= alpha);
    }
}

/// The counters table of one point as text lines; empty when neither side recorded any.
pub fn counters_text(counters: &Counters) -> String {
    if counters.rows.is_empty() && counters.unsupported.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "  Counters per unit of work (mean over windows: base → new, ratio new/base; * after correction)\n",
    );
    if !counters.rows.is_empty() {
        let _ = writeln!(text, "  {:>12}  {:>12}  {:>18}  counter", "base", "new", "ratio");
    }
    for r in &counters.rows {
        let _ =
            writeln!(text, "  {:>12}  {:>12}  {}  {}", fmt(r.base_mean), fmt(r.new_mean), judge(r), r.label);
    }
    if !counters.unsupported.is_empty() {
        let _ = writeln!(text, "  {}: not supported on this machine", counters.unsupported.join(", "));
    }
    text
}

fn fmt(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{v:.4e}")
    } else {
        crate::units::num(v)
    }
}

/// "1.52 worse *": the ratio, better/worse/same (±1%), and `*` when it is significant (`?`
/// with too few windows for an interval).
fn judge(r: &CounterCompare) -> String {
    let (Some(ratio), Some(verdict)) = (r.ratio, r.verdict) else { return format!("{:>18}", "n/a") };
    let mark = match r.significant {
        Some(true) => "*",
        Some(false) => " ",
        None => "?",
    };
    format!("{:>18}", format!("{} {verdict}{mark}", crate::units::ratio(ratio)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::{CellSpec, Counter, Profile, WorkUnit};

    fn cell(units: f64, counts: &[(&str, Option<f64>)]) -> CellResult {
        let spec =
            CellSpec { workload: "w".into(), params: Default::default(), variant: "default".into(), rep: 1 };
        let mut c = CellResult::empty(spec, WorkUnit::Ops);
        c.units = units;
        let counters = counts.iter().map(|(e, n)| Counter { event: e.to_string(), count: *n }).collect();
        c.profile = Some(Profile { counters, ..Profile::default() });
        c
    }

    #[test]
    fn the_correction_spans_every_point_of_the_side() {
        let row = |p: Option<f64>| CounterCompare {
            event: "instructions",
            label: "instructions per unit",
            higher_is_better: false,
            base_n: 3,
            new_n: 3,
            base_mean: 1.0,
            new_mean: 1.1,
            ratio: Some(1.1),
            ci_lo: None,
            ci_hi: None,
            p_value: p,
            q_value: None,
            significant: p.map(|p| p < 0.05),
            verdict: Some("worse"),
        };
        let point =
            |ps: &[Option<f64>]| Counters { rows: ps.iter().map(|p| row(*p)).collect(), unsupported: vec![] };
        let mut side = [point(&[Some(0.01), Some(0.04)]), point(&[Some(0.5), None, Some(0.6)])];
        correct_counters(&mut side, COUNTERS_FDR);
        let q: Vec<Option<f64>> = side.iter().flat_map(|c| c.rows.iter().map(|r| r.q_value)).collect();
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
        assert!(near(q[0], 0.04) && near(q[1], 0.08) && near(q[2], 0.6) && near(q[4], 0.6), "{q:?}");
        let sig: Vec<Option<bool>> = side.iter().flat_map(|c| c.rows.iter().map(|r| r.significant)).collect();
        assert_eq!(
            sig,
            [Some(true), Some(false), Some(false), None, Some(false)],
            "0.04 alone is not enough"
        );
    }

    #[test]
    fn counters_compare_per_unit_with_their_direction() {
        let base: Vec<CellResult> = (0..3)
            .map(|i| cell(1000.0, &[("instructions", Some(4e6 + f64::from(i))), ("cycles", Some(2e6))]))
            .collect();
        // Twice the units, the same counts: half the instructions per unit (better), same IPC.
        let new: Vec<CellResult> = (0..3)
            .map(|i| cell(2000.0, &[("instructions", Some(4e6 + f64::from(i))), ("cycles", Some(1e6))]))
            .collect();
        let (b, n): (Vec<&CellResult>, Vec<&CellResult>) = (base.iter().collect(), new.iter().collect());
        let mut c = [counter_compares(&b, &n)];
        correct_counters(&mut c, COUNTERS_FDR);
        let t = counters_text(&c[0]);
        let line =
            |what: &str| t.lines().find(|l| l.ends_with(what)).unwrap_or_else(|| panic!("{what}: {t}"));
        assert!(line("instructions per unit").contains("0.500 better*"), "{t}");
        assert!(line("cycles per unit").contains("0.250 better*"), "{t}");
        assert!(line("IPC (instructions per cycle)").contains("2.00 better*"), "more IPC is better: {t}");
        assert!(!t.contains("not supported"));
    }

    #[test]
    fn an_unsupported_counter_is_said_once_never_zero() {
        let base = [cell(10.0, &[("cycles", None), ("instructions", None), ("page-faults", Some(5.0))])];
        let new = [cell(10.0, &[("cycles", None), ("instructions", None), ("page-faults", Some(10.0))])];
        let t = counters_text(&counter_compares(
            &base.iter().collect::<Vec<_>>(),
            &new.iter().collect::<Vec<_>>(),
        ));
        assert_eq!(t.matches("not supported on this machine").count(), 1, "{t}");
        assert!(t.contains("instructions, cycles: not supported on this machine"), "{t}");
        assert!(!t.contains("IPC") && !t.contains("cycles per unit"), "{t}");
        assert!(t.contains("2.00 worse?") && t.contains("page faults per unit"), "one window a side: {t}");
        assert!(counters_text(&counter_compares(&[], &[])).is_empty());
    }
}
