//! Counters per unit of work, base against new, for a point profiled on both sides: each
//! window's count divided by its units (IPC: instructions over cycles), compared over the
//! point's repetitions as the other per-cell figures are (means, ratio new/base, a Welch
//! interval of the ratio at 95% with 3 or more windows a side), significant after a
//! Benjamini–Hochberg correction over every counter of the new side's profiled points (a
//! family of their own, as the items are). Lower is better for every cost, higher for IPC.
//! An event the machine does not support is said once, not shown as 0.

use crate::compare::items::proxy;
use crate::compare::metric::{metric_compare, CompareOptions, MetricCompare};
use crate::compare::verdicts::correct_family;
use racehorse_core::{CellResult, Direction};
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

/// One counter of one point, base against new, compared as the items are (means per unit or
/// IPC over the windows, ratio new/base, 95% Welch interval, verdict within 1%).
#[derive(Debug, Clone, PartialEq)]
pub struct CounterCompare {
    /// perf's event name, or `ipc`.
    pub event: &'static str,
    pub label: &'static str,
    pub cmp: MetricCompare,
}

/// The counters of one point: those both sides recorded, and the events some window could not
/// count on its machine (listed once, never shown as 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub rows: Vec<CounterCompare>,
    pub unsupported: Vec<&'static str>,
}

/// Compares every counter of one point; `significant` is each test's own until
/// [`correct_counters`].
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
        if b.is_empty() || n.is_empty() {
            continue;
        }
        let direction = if event == "ipc" { Direction::HigherIsBetter } else { Direction::LowerIsBetter };
        let cmp = metric_compare(proxy(direction), &b, &n, &CompareOptions::default());
        out.rows.push(CounterCompare { event, label, cmp });
    }
    out
}

/// The false discovery rate of the counters' correction (the intervals are at 95%).
pub const COUNTERS_FDR: f64 = 0.05;

/// Benjamini–Hochberg over the counters of every point of one new side (a family of their
/// own, as the items are).
pub fn correct_counters(points: &mut [Counters], alpha: f64) {
    correct_family(points.iter_mut().flat_map(|c| c.rows.iter_mut().map(|r| &mut r.cmp)).collect(), alpha);
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
        let mean = |s: Option<racehorse_stats::Summary>| fmt(s.map_or(f64::NAN, |s| s.mean));
        let _ = writeln!(
            text,
            "  {:>12}  {:>12}  {}  {}",
            mean(r.cmp.base),
            mean(r.cmp.new),
            judge(&r.cmp),
            r.label
        );
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
fn judge(m: &MetricCompare) -> String {
    let (Some(ratio), Some(verdict)) = (m.ratio, m.verdict) else { return format!("{:>18}", "n/a") };
    let mark = match m.significant {
        Some(true) => "*",
        Some(false) => " ",
        None => "?",
    };
    format!("{:>18}", format!("{} {}{mark}", crate::units::ratio(ratio), verdict.as_str()))
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
        let row = |p: Option<f64>| {
            let mut cmp =
                metric_compare(proxy(Direction::LowerIsBetter), &[1.0], &[1.1], &CompareOptions::default());
            (cmp.p_value, cmp.significant) = (p, p.map(|p| p < 0.05));
            CounterCompare { event: "instructions", label: "instructions per unit", cmp }
        };
        let point =
            |ps: &[Option<f64>]| Counters { rows: ps.iter().map(|p| row(*p)).collect(), unsupported: vec![] };
        let mut side = [point(&[Some(0.01), Some(0.04)]), point(&[Some(0.5), None, Some(0.6)])];
        correct_counters(&mut side, COUNTERS_FDR);
        let q: Vec<Option<f64>> = side.iter().flat_map(|c| c.rows.iter().map(|r| r.cmp.q_value)).collect();
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
        assert!(near(q[0], 0.04) && near(q[1], 0.08) && near(q[2], 0.6) && near(q[4], 0.6), "{q:?}");
        let sig: Vec<Option<bool>> =
            side.iter().flat_map(|c| c.rows.iter().map(|r| r.cmp.significant)).collect();
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
