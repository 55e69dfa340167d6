//! Aggregates over values and summaries: geometric mean, range, and the noisy-metric flag.

use crate::Summary;

/// Coefficient of variation above which a metric is flagged as noisy (5%).
pub const DEFAULT_NOISY_CV: f64 = 0.05;

/// Geometric mean of the positive finite values (others are ignored); None if there are none.
///
/// Computed as exp(mean(ln xᵢ)) (log-mean-exp), pivoted on the first value p:
/// p · exp(mean(ln xᵢ − ln p)), so a constant vector returns exactly that constant, and clamped to
/// [min, max] of the values used (where the true geometric mean always lies) against rounding.
pub fn geomean(values: &[f64]) -> Option<f64> {
    let mut used = values.iter().copied().filter(|x| x.is_finite() && *x > 0.0);
    let pivot = used.next()?;
    let ln_pivot = pivot.ln();
    let (mut sum, mut count, mut lo, mut hi) = (0.0, 1usize, pivot, pivot);
    for x in used {
        sum += x.ln() - ln_pivot;
        count += 1;
        lo = lo.min(x);
        hi = hi.max(x);
    }
    Some((pivot * (sum / count as f64).exp()).clamp(lo, hi))
}

/// Minimum and maximum of the finite values; None if there are none.
pub fn range(values: &[f64]) -> Option<(f64, f64)> {
    values.iter().copied().filter(|x| x.is_finite()).fold(None, |acc, x| match acc {
        None => Some((x, x)),
        Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
    })
}

/// True when the summary's coefficient of variation exceeds `cv_threshold` (see
/// [`DEFAULT_NOISY_CV`]); false when the CV is undefined (n < 2 or a zero mean).
pub fn noisy(summary: &Summary, cv_threshold: f64) -> bool {
    summary.cv().is_some_and(|cv| cv > cv_threshold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn geomean_known_values() {
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[0.0, -1.0, f64::NAN, f64::INFINITY]), None);
        assert!((geomean(&[1.0, 4.0]).unwrap() - 2.0).abs() < 1e-15);
        assert!((geomean(&[2.0, 8.0, 4.0]).unwrap() - 4.0).abs() < 1e-14);
        // Non-positive and non-finite values are skipped.
        assert!((geomean(&[-5.0, 1.0, 0.0, 100.0, f64::NAN]).unwrap() - 10.0).abs() < 1e-13);
        // No overflow with huge values.
        assert!((geomean(&[1e300, 1e300, 1e-300]).unwrap() / 1e100 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn range_known_values() {
        assert_eq!(range(&[]), None);
        assert_eq!(range(&[f64::NAN, f64::INFINITY]), None);
        assert_eq!(range(&[3.0, -1.0, f64::NAN, 7.5, f64::NEG_INFINITY]), Some((-1.0, 7.5)));
        assert_eq!(range(&[2.0]), Some((2.0, 2.0)));
    }

    #[test]
    fn noisy_threshold() {
        // mean 100, stddev 10 → cv 0.1.
        let s = Summary::of(&[90.0, 100.0, 110.0]).unwrap();
        assert!(noisy(&s, DEFAULT_NOISY_CV));
        assert!(!noisy(&s, 0.2));
        let quiet = Summary::of(&[100.0, 101.0, 99.0]).unwrap();
        assert!(!noisy(&quiet, DEFAULT_NOISY_CV));
        // Undefined CV is not noisy.
        assert!(!noisy(&Summary::of(&[5.0]).unwrap(), DEFAULT_NOISY_CV));
        assert!(!noisy(&Summary::of(&[-1.0, 1.0]).unwrap(), DEFAULT_NOISY_CV));
    }

    proptest! {
        #[test]
        fn geomean_lies_within_range(v in proptest::collection::vec(1e-6f64..1e9, 1..50)) {
            let g = geomean(&v).unwrap();
            let (lo, hi) = range(&v).unwrap();
            prop_assert!(lo <= g && g <= hi, "{lo} {g} {hi}");
        }

        #[test]
        fn geomean_of_constant_is_constant(c in 1e-300f64..1e300, n in 1usize..40) {
            prop_assert_eq!(geomean(&vec![c; n]), Some(c));
        }
    }
}
