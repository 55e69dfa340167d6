//! How surprising a ratio new/base is if nothing changed (a two-sided p-value, dual to the
//! interval of [`crate::ratio_ci`]), and the Benjamini–Hochberg correction that keeps the
//! false positives of many such tests, one per matched point and metric, in check.

use crate::ratio::{bootstrap_ratios, data_seed, welch_parts};
use crate::tdist::upper_tail;
use crate::{CiMethod, DEFAULT_BOOTSTRAP_RESAMPLES};

/// Two-sided p-value of "the ratio of means is 1" by `method`, computed the way the interval
/// is, so that the interval at level L excludes 1 exactly when p < 1 − L (Welch) or nearly so
/// (bootstrap, from the same replicates).
///
/// - Welch: t = |ln R| / se(ln R) with the Welch–Satterthwaite degrees of freedom, p = 2·P(T > t);
///   when both sides have no spread, 0 if R ≠ 1 and 1 if R = 1.
/// - Bootstrap: twice the smaller share of replicates at or below 1 and at or above 1, at most 1.
///
/// None under the same conditions as the interval (fewer than 3 finite values a side, a mean
/// ≤ 0).
pub fn ratio_p_value(base: &[f64], new: &[f64], method: CiMethod) -> Option<f64> {
    match method {
        CiMethod::Welch => {
            let (ratio, total, df) = welch_parts(base, new)?;
            let p = match df {
                None if ratio == 1.0 => 1.0,
                None => 0.0,
                Some(df) => 2.0 * upper_tail(ratio.ln().abs() / total.sqrt(), df),
            };
            p.is_finite().then_some(p.clamp(0.0, 1.0))
        }
        CiMethod::Bootstrap => {
            let r = bootstrap_ratios(base, new, DEFAULT_BOOTSTRAP_RESAMPLES, data_seed(base, new))?;
            let n = r.len() as f64;
            let below = r.iter().filter(|x| **x <= 1.0).count() as f64 / n;
            let above = r.iter().filter(|x| **x >= 1.0).count() as f64 / n;
            Some((2.0 * below.min(above)).min(1.0))
        }
    }
}

/// Benjamini–Hochberg adjusted p-values ("q-values"), in the order given: for the i-th
/// smallest of m p-values, min over j ≥ i of p₍ⱼ₎·m/j, at most 1. Rejecting every test whose
/// q-value is at most α keeps the expected share of false rejections among all rejections at
/// α or below (for independent or positively dependent tests); when no test has a real
/// effect, the chance of any rejection at all is at most α. Non-finite p-values count as 1.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean = |x: f64| if x.is_finite() { x.clamp(0.0, 1.0) } else { 1.0 };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean(p[a]).total_cmp(&clean(p[b])));
    let mut q = vec![1.0; m];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(clean(p[i]) * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratio_ci;
    use proptest::prelude::*;

    #[test]
    fn welch_p_value_is_dual_to_the_interval() {
        let base = [9.0, 10.0, 11.0];
        let new = [18.0, 20.0, 22.0];
        let p = ratio_p_value(&base, &new, CiMethod::Welch).expect("p");
        // The interval at level 1 − p has 1 on its edge.
        let ci = ratio_ci(&base, &new, 1.0 - p, CiMethod::Welch).expect("ci");
        assert!((ci.lo - 1.0).abs() < 1e-6, "{p} {ci:?}");
        assert_eq!(ratio_p_value(&base, &base, CiMethod::Welch), Some(1.0));
        assert_eq!(ratio_p_value(&[5.0; 3], &[6.0; 3], CiMethod::Welch), Some(0.0));
        assert_eq!(ratio_p_value(&[5.0; 3], &[5.0; 3], CiMethod::Welch), Some(1.0));
        assert_eq!(ratio_p_value(&[5.0, 6.0], &[6.0; 3], CiMethod::Welch), None);
    }

    #[test]
    fn bootstrap_p_value_agrees_with_its_interval() {
        let base = [100.0, 101.0, 99.0, 100.0];
        let new = [120.0, 121.0, 119.0, 120.0];
        let p = ratio_p_value(&base, &new, CiMethod::Bootstrap).expect("p");
        assert!(p < 0.05, "{p}");
        let same = ratio_p_value(&base, &base, CiMethod::Bootstrap).expect("p");
        assert!(same > 0.5, "{same}");
    }

    #[test]
    fn benjamini_hochberg_known_values() {
        // m = 4: sorted 0.01, 0.02, 0.03, 0.5 → 0.04, 0.04, 0.04, 0.5.
        let q = benjamini_hochberg(&[0.5, 0.01, 0.03, 0.02]);
        let want = [0.5, 0.04, 0.04, 0.04];
        assert!(q.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12), "{q:?}");
        assert_eq!(benjamini_hochberg(&[]), Vec::<f64>::new());
        assert_eq!(benjamini_hochberg(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
    }

    proptest! {
        #[test]
        fn q_values_are_at_least_p_and_keep_the_order(p in proptest::collection::vec(0.0f64..1.0, 1..40)) {
            let q = benjamini_hochberg(&p);
            for i in 0..p.len() {
                prop_assert!(q[i] >= p[i] - 1e-15 && q[i] <= 1.0);
                for j in 0..p.len() {
                    if p[i] < p[j] {
                        prop_assert!(q[i] <= q[j] + 1e-15);
                    }
                }
            }
        }
    }
}
