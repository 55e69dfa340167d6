//! Slow drift: the cumulative change from an anchor run to the latest runs, with its
//! interval, where no single step between runs is large enough to be a change point.
//!
//! The spread of one run's level is estimated from successive differences of run means (half
//! the mean squared difference, von Neumann's estimator), which a slow trend or a few steps
//! barely inflate, unlike the plain variance of a drifting series.

use super::{Options, Scale};
use crate::tdist::{upper_quantile, upper_tail};

/// The change from one anchor run to the mean of the latest `min_segment` runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnchorChange {
    /// The anchor run (index into the runs).
    pub anchor: usize,
    /// The latest runs compared with it, `start..end`.
    pub latest: (usize, usize),
    /// Latest level / anchor level.
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
    /// Two-sided p-value of "no change since the anchor".
    pub p_value: Option<f64>,
}

/// The cumulative change of `runs` since run `anchor`; None when the anchor is not before the
/// latest runs or the runs have no finite values.
pub fn anchor_change(runs: &[Vec<f64>], anchor: usize, opts: &Options) -> Option<AnchorChange> {
    let n = runs.len();
    let scale = if runs.iter().flatten().filter(|x| x.is_finite()).all(|x| *x > 0.0) {
        Scale::Log
    } else {
        Scale::Linear
    };
    let means: Option<Vec<f64>> = runs
        .iter()
        .map(|r| {
            let v: Vec<f64> = r.iter().copied().filter(|x| x.is_finite()).collect();
            let v: Vec<f64> = match scale {
                Scale::Log => v.iter().map(|x| x.ln()).collect(),
                Scale::Linear => v,
            };
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect();
    let means = means?;
    let start = n.saturating_sub(opts.min_segment.max(1)).max(anchor + 1);
    if start >= n {
        return None;
    }
    let latest = &means[start..n];
    let latest_mean = latest.iter().sum::<f64>() / latest.len() as f64;
    let diff = latest_mean - means[anchor];
    let as_ratio = |d: f64| match scale {
        Scale::Log => d.exp(),
        Scale::Linear => (means[anchor] + d) / means[anchor],
    };
    let steps: Vec<f64> = means.windows(2).map(|w| (w[1] - w[0]).powi(2)).collect();
    let (interval, p_value) = if steps.len() >= 2 {
        let run_var = steps.iter().sum::<f64>() / (2.0 * steps.len() as f64);
        let se = (run_var * (1.0 + 1.0 / latest.len() as f64)).sqrt();
        let free = steps.len() as f64;
        let q = upper_quantile((1.0 - opts.level) / 2.0, free);
        let p =
            if se > 0.0 { 2.0 * upper_tail(diff.abs() / se, free) } else { f64::from(u8::from(diff == 0.0)) };
        (Some((as_ratio(diff - q * se), as_ratio(diff + q * se))), Some(p.clamp(0.0, 1.0)))
    } else {
        (None, None)
    };
    Some(AnchorChange { anchor, latest: (start, n), ratio: as_ratio(diff), interval, p_value })
}
