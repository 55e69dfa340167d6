//! How far a set of cells can be trusted, in the words every renderer uses: repetitions that
//! ran while other processes used the CPU (noisy), figures below their resolution, how quiet
//! the machine was over the measured windows, and the run's start-of-run exclusivity warnings.

use racehorse_core::CellResult;
use serde::Serialize;

/// What a figure below its resolution reads as, instead of a number.
pub const BELOW_RES: &str = "below res";

/// The mark of a metric cell whose point had a noisy repetition on either side.
pub const NOISY_MARK: char = '?';

/// One repetition that ran while other processes used the CPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoisyRep {
    pub rep: u32,
    /// Why the runner called it noisy.
    pub reason: String,
    /// CPU used by other processes over the window, in % of one CPU; None when not measured.
    pub outside_cpu_pct: Option<f64>,
}

/// CPU used by other processes during the cell's window, in % of one CPU.
pub fn outside_cpu_pct(c: &CellResult) -> Option<f64> {
    let window_s = c.window.as_secs_f64();
    let outside_s = c.quality.outside_cpu_s?;
    (window_s > 0.0 && outside_s.is_finite()).then(|| 100.0 * outside_s / window_s)
}

/// The noisy repetitions among `cells`, in the order given.
pub fn noisy_reps(cells: &[&CellResult]) -> Vec<NoisyRep> {
    cells
        .iter()
        .filter_map(|c| {
            let reason = c.quality.noisy.clone()?;
            Some(NoisyRep { rep: c.spec.rep, reason, outside_cpu_pct: outside_cpu_pct(c) })
        })
        .collect()
}

/// `#1 #3`.
pub fn reps_text(reps: impl IntoIterator<Item = u32>) -> String {
    reps.into_iter().map(|r| format!("#{r}")).collect::<Vec<_>>().join(" ")
}

/// `noisy new #1 #3` for a note column; "" when none.
pub fn noisy_note(who: &str, reps: &[NoisyRep]) -> String {
    if reps.is_empty() {
        return String::new();
    }
    let who = if who.is_empty() { String::new() } else { format!("{who} ") };
    format!("noisy {who}{}", reps_text(reps.iter().map(|r| r.rep)))
}

/// One legend line per noisy repetition: `clients=4: new #1: reason (other processes: 98% of
/// one CPU)`.
pub fn noisy_legend(point: &str, who: &str, reps: &[NoisyRep]) -> Vec<String> {
    let point = if point.is_empty() { "all".to_string() } else { point.to_string() };
    let who = if who.is_empty() { String::new() } else { format!("{who} ") };
    reps.iter()
        .map(|r| {
            let outside = r
                .outside_cpu_pct
                .map_or(String::new(), |p| format!(" (other processes: {p:.0}% of one CPU)"));
            format!("{point}: {who}#{}: {}{outside}", r.rep, r.reason)
        })
        .collect()
}

/// Most noisy repetitions listed under one table; the rest are counted.
pub const MAX_NOISY_LINES: usize = 12;

/// The legend lines under a table, `? noisy clients=4: new #1: …`, at most
/// [`MAX_NOISY_LINES`] and a count of the rest.
pub fn noisy_lines(lines: Vec<String>) -> Vec<String> {
    let more = lines.len().saturating_sub(MAX_NOISY_LINES);
    let mut out: Vec<String> =
        lines.into_iter().take(MAX_NOISY_LINES).map(|l| format!("{NOISY_MARK} noisy {l}")).collect();
    if more > 0 {
        out.push(format!("{NOISY_MARK} … and {more} more noisy repetitions"));
    }
    out
}

/// How much CPU other processes used per measured window, in % of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quietness {
    /// Windows where it was measured.
    pub windows: usize,
    pub median_pct: f64,
    pub max_pct: f64,
}

impl Quietness {
    /// Over the cells that measured it; None when none did.
    pub fn of<'a>(cells: impl IntoIterator<Item = &'a CellResult>) -> Option<Quietness> {
        let pct: Vec<f64> = cells.into_iter().filter_map(outside_cpu_pct).collect();
        let s = racehorse_stats::Summary::of(&pct)?;
        Some(Quietness { windows: s.n, median_pct: s.median, max_pct: s.max })
    }

    /// `median 0.4%, max 2.1% of one CPU over 24 windows`.
    pub fn text(&self) -> String {
        format!(
            "median {:.1}%, max {:.1}% of one CPU over {} window{}",
            self.median_pct,
            self.max_pct,
            self.windows,
            if self.windows == 1 { "" } else { "s" }
        )
    }
}

/// The warnings of a run's exclusivity check (`racehorse_machine::exclusivity::Exclusivity`
/// as json), read loosely: an empty or unreadable record gives none.
pub fn exclusivity_warnings(json: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else { return Vec::new() };
    v.get("warnings")
        .and_then(serde_json::Value::as_array)
        .map(|w| w.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// `Before run 2 'b' the exclusivity check warned: …`; None without warnings.
pub fn exclusivity_line(name: &str, warnings: &[String]) -> Option<String> {
    (!warnings.is_empty())
        .then(|| format!("Before {name} the exclusivity check warned: {}.", warnings.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::{CellSpec, Nanos, Params, WorkUnit};

    fn cell(rep: u32, outside_s: Option<f64>, noisy: Option<&str>) -> CellResult {
        let spec = CellSpec { workload: "w".into(), params: Params::new(), variant: "default".into(), rep };
        let mut c = CellResult::empty(spec, WorkUnit::Ops);
        c.window = Nanos(2_000_000_000);
        c.quality.outside_cpu_s = outside_s;
        c.quality.noisy = noisy.map(str::to_string);
        c
    }

    #[test]
    fn noisy_reps_carry_reason_and_outside_share() {
        let (a, b) = (cell(1, Some(0.02), None), cell(2, Some(1.9), Some("outside CPU 1.9 s")));
        let reps = noisy_reps(&[&a, &b]);
        assert_eq!(reps.len(), 1);
        assert_eq!(reps[0].rep, 2);
        assert!((reps[0].outside_cpu_pct.expect("pct") - 95.0).abs() < 1e-9);
        assert_eq!(noisy_note("new", &reps), "noisy new #2");
        assert_eq!(
            noisy_legend("clients=4", "new", &reps),
            ["clients=4: new #2: outside CPU 1.9 s (other processes: 95% of one CPU)"]
        );
        let q = Quietness::of([&a, &b]).expect("measured");
        assert_eq!((q.windows, q.max_pct), (2, 95.0));
        assert_eq!(Quietness::of([&cell(1, None, None)]), None);
    }

    #[test]
    fn exclusivity_warnings_are_read_loosely() {
        let json =
            r#"{"load1":1.2,"steal_pct":0,"busy":[],"warnings":["process 7 (yes) uses 99% of a CPU"]}"#;
        assert_eq!(exclusivity_warnings(json), ["process 7 (yes) uses 99% of a CPU"]);
        assert!(exclusivity_warnings("").is_empty());
        assert!(exclusivity_warnings("{\"load1\": 0.1}").is_empty());
        assert!(exclusivity_warnings("not json").is_empty());
    }
}
