//! Repetition quality: outliers by the median absolute deviation (reported, never dropped)
//! and the relative half-width of a mean's confidence interval, which decides when
//! adaptive repetitions have done enough.

use crate::student_t_quantile;

/// Modified z-score above which a value is an outlier (Iglewicz and Hoaglin, 1993).
pub const OUTLIER_Z: f64 = 3.5;

/// With at least this many values the MAD alone decides; with fewer (3 or 4) a value must
/// also lie [`MIN_OUTLIER_DEVIATION`] from the median, since the MAD of so few values is set
/// by one or two of them and would call ordinary scatter an outlier.
pub const MIN_VALUES_FOR_OUTLIERS: usize = 5;

/// Fewest values in which anything is called an outlier.
pub const MIN_VALUES_FOR_SMALL_OUTLIERS: usize = 3;

/// With 3 or 4 values, the least distance from the median, relative to it, at which a value
/// can be an outlier (10%): a cold first repetition at 119 GB/s beside 198 and 200 is one,
/// 104 beside 100 and 101 is not.
pub const MIN_OUTLIER_DEVIATION: f64 = 0.10;

/// Indices of the finite values that are outliers: with [`MIN_VALUES_FOR_OUTLIERS`] or more
/// values, those whose modified z-score 0.6745·|x − median| / MAD exceeds [`OUTLIER_Z`] (none
/// when the MAD is 0); with 3 or 4 values, those that also lie more than
/// [`MIN_OUTLIER_DEVIATION`] of the median away from it (a MAD of 0 then leaves that distance
/// alone to decide); none with fewer than 3.
pub fn outliers(values: &[f64]) -> Vec<usize> {
    let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if finite.len() < MIN_VALUES_FOR_SMALL_OUTLIERS {
        return Vec::new();
    }
    let med = median_of(finite.clone());
    let mad = median_of(finite.iter().map(|x| (x - med).abs()).collect());
    let small = finite.len() < MIN_VALUES_FOR_OUTLIERS;
    if mad <= 0.0 && !small {
        return Vec::new();
    }
    let z_limit = OUTLIER_Z * mad / 0.6745;
    let limit = if small { z_limit.max(MIN_OUTLIER_DEVIATION * med.abs()) } else { z_limit };
    if limit.is_nan() || limit <= 0.0 {
        return Vec::new();
    }
    values
        .iter()
        .enumerate()
        .filter(|(_, x)| x.is_finite() && (*x - med).abs() > limit)
        .map(|(i, _)| i)
        .collect()
}

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Half-width of the Student-t confidence interval of the mean, relative to the mean
/// (0.02 = ±2%); None with fewer than 2 finite values or a mean of 0.
pub fn relative_half_width(values: &[f64], level: f64) -> Option<f64> {
    let s = crate::Summary::of(values)?;
    if s.n < 2 || s.mean == 0.0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let t = student_t_quantile(0.5 + level / 2.0, (s.n - 1) as f64);
    Some(t * s.stddev / (s.n as f64).sqrt() / s.mean.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_far_value_is_an_outlier() {
        assert_eq!(outliers(&[100.0, 101.0, 99.0, 100.5, 160.0]), vec![4]);
        assert!(outliers(&[100.0, 101.0, 99.0, 100.5]).is_empty());
        assert!(outliers(&[5.0, 5.0, 5.0, 5.0, 9.0]).is_empty(), "MAD 0: nothing can be judged");
        assert!(outliers(&[1.0, 1000.0]).is_empty(), "too few values");
    }

    /// A cold first repetition among few: flagged when far from the median, ordinary scatter not.
    #[test]
    fn a_cold_first_repetition_among_three_is_an_outlier() {
        assert_eq!(outliers(&[119e9, 198e9, 200e9]), vec![0]);
        assert_eq!(outliers(&[119e9, 200e9, 200e9]), vec![0], "MAD 0: the distance decides");
        assert_eq!(outliers(&[100.0, 100.2, 130.0, 99.9]), vec![2]);
        assert!(outliers(&[100.0, 100.5, 104.0]).is_empty(), "4% from the median is scatter");
        assert!(outliers(&[100.0, 110.0, 121.0]).is_empty(), "evenly spread values have no outlier");
    }

    #[test]
    fn half_width_matches_the_t_interval() {
        // n = 4, mean 100, sd = 1.291; t(0.975, 3) = 3.1824 → 3.1824·1.291/2/100 = 0.02054.
        let hw = relative_half_width(&[98.5, 99.5, 100.5, 101.5], 0.95).expect("hw");
        assert!((hw - 0.020_54).abs() < 1e-4, "{hw}");
        assert_eq!(relative_half_width(&[5.0], 0.95), None);
        assert_eq!(relative_half_width(&[0.0, 0.0], 0.95), None);
    }

    proptest! {
        #[test]
        fn outliers_are_valid_indices_and_a_minority(v in proptest::collection::vec(-1e6f64..1e6, 0..40)) {
            let o = outliers(&v);
            prop_assert!(o.iter().all(|&i| i < v.len()));
            prop_assert!(o.len() * 2 <= v.len());
        }

        #[test]
        fn more_agreeing_values_narrow_the_interval(base in 50f64..150.0, n in 3usize..20) {
            let few: Vec<f64> = (0..n).map(|i| base + (i % 3) as f64).collect();
            let many: Vec<f64> = (0..n * 4).map(|i| base + (i % 3) as f64).collect();
            let (a, b) = (relative_half_width(&few, 0.95).unwrap(), relative_half_width(&many, 0.95).unwrap());
            prop_assert!(b < a);
        }
    }
}
