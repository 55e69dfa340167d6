//! Counters per unit of work, base against new, for a point profiled on both sides: each
//! window's count divided by its units (IPC: instructions over cycles), compared over the
//! point's repetitions as the other per-cell figures are (means, ratio new/base, a Welch
//! interval of the ratio at 95% with 3 or more windows a side). Lower is better for every
//! cost, higher for IPC. An event the machine does not support is said once, not shown as 0.

use racehorse_core::CellResult;
use racehorse_stats::{ratio_ci, CiMethod, Summary};
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

/// The counters table of one point as text lines; empty when neither side recorded any.
pub fn counters_text(base: &[&CellResult], new: &[&CellResult]) -> String {
    let mut out = String::new();
    let mut unsupported: Vec<&str> = Vec::new();
    for (event, label) in EVENTS {
        let (b, b_unsup) = values(base, event);
        let (n, n_unsup) = values(new, event);
        if b_unsup || n_unsup {
            if *event != "ipc" {
                unsupported.push(event);
            }
            continue;
        }
        let (Some(bs), Some(ns)) = (Summary::of(&b), Summary::of(&n)) else { continue };
        let higher_better = *event == "ipc";
        let _ = writeln!(
            out,
            "  {:>12}  {:>12}  {}  {label}",
            fmt(bs.mean),
            fmt(ns.mean),
            judge(&b, &n, higher_better)
        );
    }
    if out.is_empty() && unsupported.is_empty() {
        return String::new();
    }
    let mut text =
        String::from("  Counters per unit of work (mean over windows: base → new, ratio new/base)\n");
    if !out.is_empty() {
        let _ = writeln!(text, "  {:>12}  {:>12}  {:>18}  counter", "base", "new", "ratio");
        text.push_str(&out);
    }
    if !unsupported.is_empty() {
        let _ = writeln!(text, "  {}: not supported on this machine", unsupported.join(", "));
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

/// "1.52 worse *": the ratio, better/worse/same (±1%), and `*` when the 95% interval of the
/// ratio excludes 1 (`?` with too few windows for an interval).
fn judge(base: &[f64], new: &[f64], higher_better: bool) -> String {
    let (Some(b), Some(n)) = (Summary::of(base), Summary::of(new)) else { return "n/a".into() };
    if b.mean <= 0.0 {
        return format!("{:>18}", "n/a");
    }
    let r = n.mean / b.mean;
    let gain = if higher_better { r - 1.0 } else { 1.0 - r };
    let verdict = if gain.abs() <= 0.01 {
        "same"
    } else if gain > 0.0 {
        "better"
    } else {
        "worse"
    };
    let mark = match ratio_ci(base, new, 0.95, CiMethod::Welch) {
        Some(ci) if ci.excludes_one() => "*",
        Some(_) => " ",
        None => "?",
    };
    format!("{:>18}", format!("{} {verdict}{mark}", crate::units::ratio(r)))
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
    fn counters_compare_per_unit_with_their_direction() {
        let base: Vec<CellResult> = (0..3)
            .map(|i| cell(1000.0, &[("instructions", Some(4e6 + f64::from(i))), ("cycles", Some(2e6))]))
            .collect();
        // Twice the units, the same counts: half the instructions per unit (better), same IPC.
        let new: Vec<CellResult> = (0..3)
            .map(|i| cell(2000.0, &[("instructions", Some(4e6 + f64::from(i))), ("cycles", Some(1e6))]))
            .collect();
        let (b, n): (Vec<&CellResult>, Vec<&CellResult>) = (base.iter().collect(), new.iter().collect());
        let t = counters_text(&b, &n);
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
        let t = counters_text(&base.iter().collect::<Vec<_>>(), &new.iter().collect::<Vec<_>>());
        assert_eq!(t.matches("not supported on this machine").count(), 1, "{t}");
        assert!(t.contains("instructions, cycles: not supported on this machine"), "{t}");
        assert!(!t.contains("IPC") && !t.contains("cycles per unit"), "{t}");
        assert!(t.contains("2.00 worse?") && t.contains("page faults per unit"), "one window a side: {t}");
        assert!(counters_text(&[], &[]).is_empty());
    }
}
