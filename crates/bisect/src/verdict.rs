//! The three-valued verdict between two measured candidates. A candidate is measured by
//! runs, each run by repetitions; runs of one build differ more than repetitions of one run
//! (a new process, page cache, placement), so the **run** is the unit: each run counts as the
//! mean of its usable repetitions (of their logarithms: a change is a ratio), and the spread of
//! one run's mean is pooled over every candidate measured more than once — a property of the
//! machine and the workload, not of the commit. Then for `after` against `before`:
//!
//! - **different**: the two-sided p-value of Student's t on the candidates' mean run means is
//!   at most `alpha` (default 0.01) and the change is at least `min_change`, in the wanted
//!   direction when one is asked for;
//! - **same**: the 95% interval of the ratio lies inside ±`same_margin` (equivalence: a change
//!   of that size would have shown; a bisect sets it to one and a half times `min_change`
//!   compounded, (1 + m)^1.5 − 1: three eighths of the endpoints' change by default), or it
//!   changed significantly the other way;
//! - **unknown**: neither yet; another run decides.

use racehorse_stats::{student_t_cdf, student_t_quantile};
use serde::Serialize;

/// A verdict between two candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Different,
    Same,
    Unknown,
}

/// Which direction of change counts: either, or only an increase or a decrease of the
/// figure (after / before).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Wanted {
    Any,
    Up,
    Down,
}

/// The spread of one run's mean (log scale) pooled over candidates, with its degrees of
/// freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pooled {
    pub run_var: f64,
    pub df: f64,
}

impl Pooled {
    /// Pooled over candidates given as their runs' log means; None until some candidate has
    /// two runs.
    pub fn of(candidates: &[Vec<f64>]) -> Option<Pooled> {
        let (mut ss, mut df) = (0.0, 0usize);
        for runs in candidates.iter().filter(|r| r.len() >= 2) {
            let mean = runs.iter().sum::<f64>() / runs.len() as f64;
            ss += runs.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
            df += runs.len() - 1;
        }
        (df > 0).then(|| Pooled { run_var: ss / df as f64, df: df as f64 })
    }
}

/// The comparison of `after` against `before`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    /// after / before: the ratio of the geometric means of their runs.
    pub ratio: f64,
    /// Its 95% interval.
    pub interval: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    pub verdict: Verdict,
}

/// What a comparison asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// The smallest change that counts (relative: 0.0125 = 1.25%).
    pub min_change: f64,
    /// Candidates whose interval lies within ±this (relative) are the same.
    pub same_margin: f64,
    /// The p-value at or below which candidates differ.
    pub alpha: f64,
    pub wanted: Wanted,
}

/// Compares `after` with `before`, each given as its runs' log means.
pub fn compare(before: &[f64], after: &[f64], pooled: Option<Pooled>, rule: Rule) -> Comparison {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let diff = mean(after) - mean(before);
    let ratio = diff.exp();
    let (interval, p_value) = match pooled {
        Some(p) if !before.is_empty() && !after.is_empty() => {
            let se = (p.run_var * (1.0 / before.len() as f64 + 1.0 / after.len() as f64)).sqrt();
            if se > 0.0 {
                let q = student_t_quantile(0.975, p.df);
                let t = diff.abs() / se;
                (
                    Some(((diff - q * se).exp(), (diff + q * se).exp())),
                    Some((2.0 * (1.0 - student_t_cdf(t, p.df))).clamp(0.0, 1.0)),
                )
            } else {
                (Some((ratio, ratio)), Some(if diff == 0.0 { 1.0 } else { 0.0 }))
            }
        }
        _ => (None, None),
    };
    let band = (1.0 / (1.0 + rule.min_change), 1.0 + rule.min_change);
    let same = (1.0 / (1.0 + rule.same_margin), 1.0 + rule.same_margin);
    let in_direction = match rule.wanted {
        Wanted::Any => true,
        Wanted::Up => ratio > 1.0,
        Wanted::Down => ratio < 1.0,
    };
    let large = ratio >= band.1 || ratio <= band.0;
    let verdict = match (p_value, interval) {
        (Some(p), _) if p <= rule.alpha && large && in_direction => Verdict::Different,
        (_, Some((lo, hi))) if lo > same.0 && hi < same.1 => Verdict::Same,
        (Some(p), _) if p <= rule.alpha && !in_direction => Verdict::Same,
        _ => Verdict::Unknown,
    };
    Comparison { ratio, interval, p_value, verdict }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(levels: &[f64]) -> Vec<f64> {
        levels.iter().map(|x| x.ln()).collect()
    }

    const RULE: Rule = Rule { min_change: 0.02, same_margin: 0.02, alpha: 0.01, wanted: Wanted::Any };

    #[test]
    fn pooled_spread_is_over_candidates_with_two_runs() {
        let p = Pooled::of(&[vec![0.0, 0.02], vec![1.0], vec![0.5, 0.5, 0.53]]).unwrap();
        assert_eq!(p.df, 3.0);
        assert!((p.run_var - (0.0002 + 0.0006) / 3.0).abs() < 1e-12, "{p:?}");
        assert_eq!(Pooled::of(&[vec![1.0], vec![2.0]]), None);
    }

    #[test]
    fn a_clear_change_is_different_a_tiny_one_same() {
        let pooled = Some(Pooled { run_var: 0.005f64.powi(2), df: 10.0 });
        let c = compare(&logs(&[100.0, 100.5]), &logs(&[90.0, 90.4]), pooled, RULE);
        assert_eq!(c.verdict, Verdict::Different);
        assert!((c.ratio - 0.9).abs() < 0.005);
        let c = compare(&logs(&[100.0, 100.2, 99.9]), &logs(&[100.1, 99.8, 100.0]), pooled, RULE);
        assert_eq!(c.verdict, Verdict::Same, "{c:?}");
    }

    #[test]
    fn without_a_spread_or_with_a_wide_one_it_is_unknown() {
        assert_eq!(compare(&[0.0], &[1.0], None, RULE).verdict, Verdict::Unknown);
        let wide = Some(Pooled { run_var: 0.2f64.powi(2), df: 2.0 });
        assert_eq!(compare(&logs(&[100.0]), &logs(&[95.0]), wide, RULE).verdict, Verdict::Unknown);
    }

    #[test]
    fn the_wanted_direction_counts() {
        let pooled = Some(Pooled { run_var: 0.005f64.powi(2), df: 10.0 });
        let (a, b) = (logs(&[100.0, 100.5]), logs(&[90.0, 90.4]));
        let down = Rule { wanted: Wanted::Down, ..RULE };
        let up = Rule { wanted: Wanted::Up, ..RULE };
        assert_eq!(compare(&a, &b, pooled, down).verdict, Verdict::Different);
        assert_eq!(compare(&a, &b, pooled, up).verdict, Verdict::Same);
    }
}
