//! Confidence intervals for the ratio of means new/base ("scaled to base"), by the delta method
//! with a Welch t critical value (the default) or by a percentile bootstrap.

use crate::tdist::upper_quantile;
use racehorse_core::rng::{mix64, SplitMix64};

/// Fewest finite repetitions per side for which a confidence interval is computed.
pub const MIN_REPS_FOR_CI: usize = 3;

/// Bootstrap resamples [`ratio_ci`] uses (and the number callers are expected to pass).
pub const DEFAULT_BOOTSTRAP_RESAMPLES: u32 = 2000;

/// How a [`RatioCi`] was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CiMethod {
    /// Delta method on the log of the ratio with a Welch–Satterthwaite t quantile
    /// ([`ratio_ci_welch`]).
    #[default]
    Welch,
    /// Percentile bootstrap of the ratio of means ([`ratio_ci_bootstrap`]).
    Bootstrap,
}

impl CiMethod {
    /// Stable lower-case name: `"welch"` or `"bootstrap"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CiMethod::Welch => "welch",
            CiMethod::Bootstrap => "bootstrap",
        }
    }

    /// Inverse of [`CiMethod::as_str`] (exact, lower-case match).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "welch" => Some(CiMethod::Welch),
            "bootstrap" => Some(CiMethod::Bootstrap),
            _ => None,
        }
    }
}

/// A confidence interval [lo, hi] for mean(new) / mean(base) at confidence `level` (e.g. 0.95).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioCi {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
    pub method: CiMethod,
}

impl RatioCi {
    /// True when the interval lies entirely above or below 1 (lo > 1 or hi < 1): the difference
    /// between the two sides is significant at this level.
    pub fn excludes_one(&self) -> bool {
        self.lo > 1.0 || self.hi < 1.0
    }
}

/// Confidence interval for mean(new)/mean(base) by `method`.
///
/// [`CiMethod::Welch`] calls [`ratio_ci_welch`]; [`CiMethod::Bootstrap`] calls
/// [`ratio_ci_bootstrap`] with [`DEFAULT_BOOTSTRAP_RESAMPLES`] resamples and a seed hashed from the
/// bit patterns of the finite values, so identical data always give identical intervals.
/// None under the same conditions as those functions.
pub fn ratio_ci(base: &[f64], new: &[f64], level: f64, method: CiMethod) -> Option<RatioCi> {
    match method {
        CiMethod::Welch => ratio_ci_welch(base, new, level),
        CiMethod::Bootstrap => {
            ratio_ci_bootstrap(base, new, level, DEFAULT_BOOTSTRAP_RESAMPLES, data_seed(base, new))
        }
    }
}

/// Welch-type confidence interval for the ratio of means R = m_new / m_base (delta method on ln R).
///
/// Non-finite values are dropped first. With sample means mᵢ, sample variances sᵢ² (n − 1
/// denominator) and sizes nᵢ, the delta method (first-order Taylor expansion of ln m) gives
/// Var(ln m̂ᵢ) ≈ aᵢ = sᵢ² / (nᵢ · mᵢ²), so
///
/// - se(ln R) = √(a_base + a_new);
/// - degrees of freedom by Welch–Satterthwaite on the two terms:
///   ν = (a_base + a_new)² / (a_base²/(n_base − 1) + a_new²/(n_new − 1));
/// - CI = [R · exp(−t · se), R · exp(+t · se)] with t the (1 + level)/2 quantile of Student's t
///   with ν (fractional) degrees of freedom.
///
/// Working on the log scale keeps the interval positive and makes it invert exactly when base and
/// new are swapped; it is invariant to rescaling both sides. When both sample variances are 0 the
/// interval is degenerate, [R, R].
///
/// Returns None when either side has fewer than [`MIN_REPS_FOR_CI`] finite values, either mean is
/// ≤ 0, or `level` is not in (0, 1).
///
/// References: delta method for a ratio, e.g. Casella & Berger, *Statistical Inference* §5.5.4;
/// Welch (1947) and Satterthwaite (1946) for ν.
pub fn ratio_ci_welch(base: &[f64], new: &[f64], level: f64) -> Option<RatioCi> {
    if !valid_level(level) {
        return None;
    }
    let (ratio, total, df) = welch_parts(base, new)?;
    let (lo, hi) = match df {
        None => (ratio, ratio),
        Some(df) => {
            let half = upper_quantile(0.5 * (1.0 - level), df) * total.sqrt();
            (ratio * (-half).exp(), ratio * half.exp())
        }
    };
    (lo.is_finite() && hi.is_finite()).then_some(RatioCi { lo, hi, level, method: CiMethod::Welch })
}

/// Percentile-bootstrap confidence interval for the ratio of means mean(new)/mean(base).
///
/// Non-finite values are dropped first. Each of `resamples` replicates draws n_base values from
/// base and n_new values from new, independently and with replacement, and records the ratio of
/// the two resample means; the interval is the (1 − level)/2 and (1 + level)/2 empirical quantiles
/// of the replicates (linear interpolation between order statistics; Efron & Tibshirani, *An
/// Introduction to the Bootstrap*, ch. 13). Replicates whose mean is ≤ 0 on either side (possible
/// only with non-positive data) are discarded. The generator is SplitMix64 seeded with `seed`, so
/// the result is reproducible. At very small n the percentile interval is too narrow (it covers
/// less often than `level`); prefer [`ratio_ci_welch`] there.
///
/// Returns None when either side has fewer than [`MIN_REPS_FOR_CI`] finite values, either mean is
/// ≤ 0, `level` is not in (0, 1), `resamples` is 0 or no replicate is usable.
pub fn ratio_ci_bootstrap(
    base: &[f64],
    new: &[f64],
    level: f64,
    resamples: u32,
    seed: u64,
) -> Option<RatioCi> {
    if !valid_level(level) || resamples == 0 {
        return None;
    }
    let ratios = bootstrap_ratios(base, new, resamples, seed)?;
    let alpha = 1.0 - level;
    let lo = sorted_quantile(&ratios, 0.5 * alpha);
    let hi = sorted_quantile(&ratios, 1.0 - 0.5 * alpha);
    (lo.is_finite() && hi.is_finite()).then_some(RatioCi { lo, hi, level, method: CiMethod::Bootstrap })
}

/// The sorted bootstrap replicates of mean(new)/mean(base) that [`ratio_ci_bootstrap`] takes
/// its quantiles from; None when either side does not qualify or no replicate is usable.
pub(crate) fn bootstrap_ratios(base: &[f64], new: &[f64], resamples: u32, seed: u64) -> Option<Vec<f64>> {
    let (base, new) = (finite(base), finite(new));
    Moments::of(&base)?;
    Moments::of(&new)?;
    let mut rng = SplitMix64::new(seed);
    let mut ratios = Vec::with_capacity(resamples as usize);
    for _ in 0..resamples {
        let m_b = resample_mean(&base, &mut rng);
        let m_n = resample_mean(&new, &mut rng);
        if m_b > 0.0 && m_n > 0.0 {
            ratios.push(m_n / m_b);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_unstable_by(f64::total_cmp);
    Some(ratios)
}

/// The ingredients of the Welch interval: ratio, relative variance of its log (a_base + a_new)
/// and Welch–Satterthwaite degrees of freedom (None when that variance is 0).
pub(crate) fn welch_parts(base: &[f64], new: &[f64]) -> Option<(f64, f64, Option<f64>)> {
    let b = Moments::of(&finite(base))?;
    let n = Moments::of(&finite(new))?;
    let ratio = n.mean / b.mean;
    let (a_b, a_n) = (b.rel_var_of_mean(), n.rel_var_of_mean());
    let total = a_b + a_n;
    if total == 0.0 {
        return Some((ratio, 0.0, None));
    }
    // ν written with weights wᵢ = aᵢ / (a_b + a_n), which avoids under/overflow of the squares.
    let (w_b, w_n) = (a_b / total, a_n / total);
    let df = 1.0 / (w_b * w_b / (b.n - 1.0) + w_n * w_n / (n.n - 1.0));
    Some((ratio, total, Some(df)))
}

fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

fn finite(values: &[f64]) -> Vec<f64> {
    values.iter().copied().filter(|x| x.is_finite()).collect()
}

/// Size, mean and sample variance of one side that qualifies for an interval.
struct Moments {
    n: f64,
    mean: f64,
    var: f64,
}

impl Moments {
    /// None unless there are at least [`MIN_REPS_FOR_CI`] values and the mean is positive.
    fn of(values: &[f64]) -> Option<Moments> {
        if values.len() < MIN_REPS_FOR_CI {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        if !(mean > 0.0 && mean.is_finite()) {
            return None;
        }
        let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
        Some(Moments { n, mean, var })
    }

    /// s² / (n · m²), written as (s/m)² / n so it cannot overflow.
    fn rel_var_of_mean(&self) -> f64 {
        let cv = self.var.sqrt() / self.mean;
        cv * cv / self.n
    }
}

/// Mean of one with-replacement resample of `values` (non-empty), without allocating.
fn resample_mean(values: &[f64], rng: &mut SplitMix64) -> f64 {
    let n = values.len();
    let mut sum = 0.0;
    for _ in 0..n {
        sum += values[rng.index(n)];
    }
    sum / n as f64
}

/// Quantile of sorted non-empty data by linear interpolation between order statistics
/// (Hyndman & Fan 1996, type 7).
fn sorted_quantile(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let i = h.floor() as usize;
    match sorted.get(i + 1) {
        Some(next) => sorted[i] + (h - i as f64) * (next - sorted[i]),
        None => sorted[i],
    }
}

/// Deterministic seed from the bit patterns of the finite values of both sides (and their counts,
/// so moving a value from one side to the other changes it).
pub(crate) fn data_seed(base: &[f64], new: &[f64]) -> u64 {
    let mut h = 0x5241_4345_484F_5253; // "RACEHORS"
    for side in [base, new] {
        let mut count = 0u64;
        for x in side.iter().filter(|x| x.is_finite()) {
            h = mix64(h ^ x.to_bits());
            count += 1;
        }
        h = mix64(h ^ count);
    }
    h
}

#[cfg(test)]
mod tests;
