//! racehorse-stats: pure statistics over repeated measurements (no I/O).
//!
//! The summaries the `show` table needs (mean, median, standard deviation, coefficient of
//! variation), plus what `compare` needs: confidence intervals for the ratio of means new/base
//! (Welch delta method or percentile bootstrap, see [`ratio_ci`]), Student's t distribution,
//! geometric means, ranges and the noisy-metric flag; the p-value of a ratio and the
//! Benjamini–Hochberg correction over many of them ([`benjamini_hochberg`]); change points in a
//! series of runs ([`changepoint`]).

mod aggregate;
pub mod changepoint;
mod pvalue;
mod ratio;
mod special;
mod spread;
mod tdist;

pub use aggregate::{geomean, noisy, range, DEFAULT_NOISY_CV};
pub use pvalue::{benjamini_hochberg, ratio_p_value};
pub use ratio::{
    ratio_ci, ratio_ci_bootstrap, ratio_ci_welch, CiMethod, RatioCi, DEFAULT_BOOTSTRAP_RESAMPLES,
    MIN_REPS_FOR_CI,
};
pub use spread::{
    outliers, relative_half_width, MIN_OUTLIER_DEVIATION, MIN_VALUES_FOR_OUTLIERS,
    MIN_VALUES_FOR_SMALL_OUTLIERS, OUTLIER_Z,
};
pub use tdist::{student_t_cdf, student_t_quantile};

/// Summary of one metric over repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); 0 for n < 2.
    pub stddev: f64,
}

impl Summary {
    /// Summarises finite values; None when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        let stddev = if n < 2 {
            0.0
        } else {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        Some(Summary { n, mean, median, min: v[0], max: v[n - 1], stddev })
    }

    /// Coefficient of variation (stddev / mean); None when the mean is 0 or n < 2.
    pub fn cv(&self) -> Option<f64> {
        (self.n >= 2 && self.mean != 0.0).then(|| self.stddev / self.mean.abs())
    }
}

/// Median of finite values.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6);
        assert_eq!((s.min, s.max), (2.0, 9.0));
    }

    #[test]
    fn empty_and_single() {
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[f64::NAN]), None);
        let s = Summary::of(&[3.0]).unwrap();
        assert_eq!((s.median, s.stddev, s.cv()), (3.0, 0.0, None));
    }

    proptest! {
        #[test]
        fn median_and_mean_lie_within_range(v in proptest::collection::vec(-1e9f64..1e9, 1..50)) {
            let s = Summary::of(&v).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
            prop_assert!(s.stddev >= 0.0);
        }
    }
}
