//! One metric of one matched point compared as a single test: means, ratio new/base
//! ("scaled to base"), gain in % (+ is better), the ratio's interval and p-value, and the
//! marks that keep it from being judged (noisy repetitions, figures below resolution). The
//! correction over every test of a new side is [`crate::compare::verdicts`]'s.

use crate::model::{Metric, Verdict};
use racehorse_stats::{noisy, ratio_ci, ratio_p_value, CiMethod, RatioCi, Summary};

/// Knobs of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// Confidence level of ratio intervals (0.95).
    pub level: f64,
    pub ci_method: CiMethod,
    /// Coefficient of variation above which a side's cell is flagged noisy (0.05).
    pub noisy_cv: f64,
    /// Changes within ± this many percent are "same" (1.0).
    pub same_within_pct: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions { level: 0.95, ci_method: CiMethod::Welch, noisy_cv: 0.05, same_within_pct: 1.0 }
    }
}

/// One metric of one matched cell: base vs new.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricCompare {
    pub metric: Metric,
    pub base: Option<Summary>,
    pub new: Option<Summary>,
    /// new mean / base mean.
    pub ratio: Option<f64>,
    /// Signed change in %, + is better (throughput gain, CPU savings).
    pub gain_pct: Option<f64>,
    /// Interval of the ratio; None with fewer than 3 repetitions a side.
    pub ci: Option<RatioCi>,
    /// Two-sided p-value of "no change", dual to the interval; None without an interval.
    pub p_value: Option<f64>,
    /// The p-value after the Benjamini–Hochberg correction over every test of this new side;
    /// None when the point was not tested (no interval, noisy, below resolution).
    pub q_value: Option<f64>,
    /// The change is significant after the correction (`*`); None when there is no interval
    /// ("n/a": never guessed) or the point is noisy (not judged).
    pub significant: Option<bool>,
    /// Better, worse or same from the gain; None without a ratio or for a noisy point.
    pub verdict: Option<Verdict>,
    /// Either side's coefficient of variation is above the threshold.
    pub noisy: bool,
    /// A repetition on either side ran while other processes used the CPU: not judged.
    pub noisy_window: bool,
    /// A repetition on either side has this figure below its resolution: no number at all.
    pub below_resolution: bool,
    /// The single repetitions' figures (for the charts' dots), base and new.
    pub base_values: Vec<f64>,
    pub new_values: Vec<f64>,
}

impl MetricCompare {
    /// A figure below its resolution on either side: nothing but the flag.
    pub fn below_resolution(metric: Metric) -> MetricCompare {
        MetricCompare {
            metric,
            base: None,
            new: None,
            ratio: None,
            gain_pct: None,
            ci: None,
            p_value: None,
            q_value: None,
            significant: None,
            verdict: None,
            noisy: false,
            noisy_window: false,
            below_resolution: true,
            base_values: Vec::new(),
            new_values: Vec::new(),
        }
    }

    /// Whether this metric takes part in the significance tests of its new side.
    pub fn tested(&self) -> bool {
        self.p_value.is_some() && !self.noisy_window && !self.below_resolution
    }
}

/// Compares one metric's repetitions as a single test: `significant` is the interval's own
/// verdict until [`crate::compare::verdicts::correct`] replaces it with the corrected one.
pub fn metric_compare(metric: Metric, base: &[f64], new: &[f64], opts: &CompareOptions) -> MetricCompare {
    let b = Summary::of(base);
    let n = Summary::of(new);
    let ratio = match (b, n) {
        (Some(b), Some(n)) if b.mean > 0.0 => Some(n.mean / b.mean).filter(|r| r.is_finite()),
        _ => None,
    };
    let gain_pct = ratio.map(|r| metric.gain_pct(r));
    let ci = ratio_ci(base, new, opts.level, opts.ci_method);
    let p_value = ci.and_then(|_| ratio_p_value(base, new, opts.ci_method));
    let noisy_either = [b, n].iter().flatten().any(|s| noisy(s, opts.noisy_cv));
    MetricCompare {
        metric,
        base: b,
        new: n,
        ratio,
        gain_pct,
        significant: ci.map(|c| c.excludes_one()),
        verdict: gain_pct.map(|g| Verdict::of_gain(g, opts.same_within_pct)),
        ci,
        p_value,
        q_value: None,
        noisy: noisy_either,
        noisy_window: false,
        below_resolution: false,
        base_values: base.to_vec(),
        new_values: new.to_vec(),
    }
}
