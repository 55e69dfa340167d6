//! Student's t distribution: CDF and quantile (inverse CDF) for real, possibly fractional,
//! degrees of freedom, as the Welch–Satterthwaite approximation produces.
//!
//! The CDF uses the identity P(|T| > t) = I_{ν/(ν+t²)}(ν/2, ½) (Abramowitz & Stegun 26.7.1 with
//! 26.5.27), I being the regularized incomplete beta function; the quantile inverts the upper tail
//! by a bracketed (safeguarded) Newton iteration. With infinite ν the distribution is the standard
//! normal, whose tail is ½·erfc(t/√2) = ½·Q(½, t²/2) (A&S 7.1.2, 6.5.17); for very large ν the
//! tail is the normal one corrected by the first term of Fisher's expansion (R. A. Fisher,
//! "Expansion of Student's integral in powers of n⁻¹", Metron 5, 1925; cf. A&S 26.7.5):
//! P(T > t) ≈ Φ̄(t) + φ(t)(t³ + t)/(4ν).

use crate::special::{ln_beta, reg_inc_beta, reg_upper_gamma};
use std::f64::consts::PI;

/// From this many degrees of freedom on, the tail is the normal one plus the first-order term of
/// Fisher's expansion in 1/ν, whose neglected O(ν⁻²) part is far below the rounding error of
/// the incomplete-beta route there (whose continued fraction loses digits to cancellation when ν is
/// huge and x = ν/(ν + t²) is close to 1).
const LARGE_DF: f64 = 1e8;

/// Iteration cap of the quantile search (Newton converges in well under 20 steps in practice;
/// the cap only bounds the bisection fallback).
const MAX_NEWTON: usize = 400;

/// Cumulative distribution function P(T ≤ t) of Student's t with `df` degrees of freedom.
///
/// `df` may be fractional and `f64::INFINITY` (the standard normal). Returns NaN when `t` or `df`
/// is NaN or `df ≤ 0`. Accurate to about 1e-12 relative for moderate arguments.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    let tail = upper_tail(t.abs(), df);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Quantile (inverse CDF) of Student's t with `df` degrees of freedom: the t with P(T ≤ t) = p.
///
/// `p` must lie in (0, 1) (0 and 1 map to ∓∞, anything else to NaN); `df > 0`, fractional allowed,
/// `f64::INFINITY` meaning the standard normal. Solves the tail equation for q = min(p, 1 − p)
/// directly, so extreme probabilities keep their precision, and returns the result with the sign
/// of p − ½; hence quantile(1 − p) = −quantile(p). Accurate to about 1e-10 relative for df ≥ 1.
/// For tiny `df` and extreme `p` the quantile may overflow to ±∞.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() || df <= 0.0 || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p < 0.5 {
        -upper_quantile(p, df)
    } else {
        upper_quantile(1.0 - p, df)
    }
}

/// The t ≥ 0 with P(T > t) = q, for q in (0, ½]. Used by the Welch interval with q = (1 − level)/2.
pub(crate) fn upper_quantile(q: f64, df: f64) -> f64 {
    if q >= 0.5 {
        return 0.0;
    }
    // Bracket: upper_tail is decreasing, upper_tail(0) = ½ > q.
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while upper_tail(hi, df) > q {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    let mut t = 0.5 * (lo + hi);
    for _ in 0..MAX_NEWTON {
        let f = upper_tail(t, df) - q;
        if f == 0.0 {
            return t;
        }
        if f > 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        // f'(t) = −density(t), so the Newton step is t + f / density.
        let mut next = t + f / density(t, df);
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        let step = (next - t).abs();
        t = next;
        if step <= 4.0 * f64::EPSILON * t || hi - lo <= 4.0 * f64::EPSILON * hi {
            break;
        }
    }
    t
}

/// P(T > t) for t ≥ 0.
pub(crate) fn upper_tail(t: f64, df: f64) -> f64 {
    if df >= LARGE_DF {
        // Φ̄(t) + φ(t)(t³ + t)/(4ν) + O(ν⁻²); Φ̄(t) = ½ erfc(t/√2) = ½ Q(½, t²/2).
        let normal_tail = 0.5 * reg_upper_gamma(0.5, 0.5 * t * t);
        return normal_tail + density(t, f64::INFINITY) * (t * t * t + t) / (4.0 * df);
    }
    // x = ν/(ν + t²) and y = 1 − x = t²/(ν + t²), each formed without cancellation or overflow.
    let (x, y) = if t * t > df {
        let r = df / (t * t);
        (r / (1.0 + r), 1.0 / (1.0 + r))
    } else {
        let r = t * t / df;
        (1.0 / (1.0 + r), r / (1.0 + r))
    };
    0.5 * reg_inc_beta(0.5 * df, 0.5, x, y)
}

/// Probability density of Student's t: (1 + t²/ν)^{−(ν+1)/2} / (√ν · B(ν/2, ½)); the normal
/// density from [`LARGE_DF`] on (only Newton's step uses it there, and is safeguarded).
fn density(t: f64, df: f64) -> f64 {
    if df >= LARGE_DF {
        return (-0.5 * t * t).exp() / (2.0 * PI).sqrt();
    }
    (-ln_beta(0.5 * df, 0.5) - 0.5 * df.ln() - 0.5 * (df + 1.0) * (t * t / df).ln_1p()).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rel_err(got: f64, want: f64) -> f64 {
        (got - want).abs() / want.abs()
    }

    #[test]
    fn table_values() {
        // Standard two-sided 95% / one-sided 95% critical values, as printed (6 significant digits).
        let table = [
            (0.975, 1.0, 12.7062),
            (0.975, 2.0, 4.30265),
            (0.975, 4.0, 2.77645),
            (0.975, 10.0, 2.22814),
            (0.975, 30.0, 2.04227),
            (0.95, 5.0, 2.01505),
            (0.975, 1e6, 1.95996),
            (0.975, 1e9, 1.95996),
            (0.975, f64::INFINITY, 1.95996),
        ];
        for (p, df, want) in table {
            let got = student_t_quantile(p, df);
            assert!(rel_err(got, want) < 5e-6, "t({p}, {df}) = {got}, table {want}");
        }
    }

    #[test]
    fn closed_forms() {
        // ν = 1 is Cauchy: F(t) = ½ + atan(t)/π, so t_p = tan(π(p − ½)).
        // ν = 2: F(t) = ½ + t / (2√(2 + t²)), so t_p = (2p − 1) √(2 / (4p(1 − p))).
        for &p in &[0.6, 0.75, 0.9, 0.975, 0.995, 0.9999] {
            let cauchy = (PI * (p - 0.5)).tan();
            assert!(rel_err(student_t_quantile(p, 1.0), cauchy) < 1e-10, "cauchy {p}");
            let two = (2.0 * p - 1.0) * (2.0 / (4.0 * p * (1.0 - p))).sqrt();
            assert!(rel_err(student_t_quantile(p, 2.0), two) < 1e-10, "nu=2 {p}");
        }
        for &t in &[-30.0, -2.5, -0.1, 0.0, 0.7, 4.0, 100.0] {
            let cauchy = 0.5 + f64::atan(t) / PI;
            assert!(rel_err(student_t_cdf(t, 1.0), cauchy) < 1e-12, "cdf cauchy {t}");
            let two = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!(rel_err(student_t_cdf(t, 2.0), two) < 1e-12, "cdf nu=2 {t}");
        }
    }

    #[test]
    fn normal_limit() {
        // Φ(1.959963984540054) = 0.975; Φ(−3) = 0.0013498980316300946.
        assert!(rel_err(student_t_quantile(0.975, f64::INFINITY), 1.959_963_984_540_054) < 1e-12);
        assert!(rel_err(student_t_cdf(-3.0, f64::INFINITY), 0.001_349_898_031_630_094_6) < 1e-11);
        assert!(rel_err(student_t_quantile(0.975, 1e12), 1.959_963_984_540_054) < 1e-9);
    }

    #[test]
    fn large_df_matches_fisher_expansion() {
        // t_p ≈ z + (z³ + z)/(4ν) + (5z⁵ + 16z³ + 3z)/(96ν²) (A&S 26.7.5), z = Φ⁻¹(0.975).
        let z: f64 = 1.959_963_984_540_054;
        for df in [1e4, 1e5, 1e6, 1e7, 0.999e8, 1e8, 1e9] {
            let want = z
                + (z.powi(3) + z) / (4.0 * df)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * df * df);
            let got = student_t_quantile(0.975, df);
            assert!(rel_err(got, want) < 1e-9, "df {df}: {got} vs {want}");
        }
        assert!(rel_err(student_t_quantile(0.975, 1000.0), 1.962_339) < 1e-6);
    }

    #[test]
    fn fractional_df_interpolates() {
        let (a, b, c) =
            (student_t_quantile(0.975, 4.0), student_t_quantile(0.975, 4.5), student_t_quantile(0.975, 5.0));
        assert!(a > b && b > c, "{a} {b} {c}");
        let q = student_t_quantile(0.9, 0.5);
        assert!(q.is_finite() && q > 0.0);
        assert!((student_t_cdf(q, 0.5) - 0.9).abs() < 1e-10);
    }

    #[test]
    fn edge_inputs() {
        assert_eq!(student_t_quantile(0.5, 3.0), 0.0);
        assert_eq!(student_t_quantile(0.0, 3.0), f64::NEG_INFINITY);
        assert_eq!(student_t_quantile(1.0, 3.0), f64::INFINITY);
        assert!(student_t_quantile(1.5, 3.0).is_nan());
        assert!(student_t_quantile(0.5, 0.0).is_nan());
        assert!(student_t_quantile(f64::NAN, 3.0).is_nan());
        assert!(student_t_cdf(1.0, -1.0).is_nan());
        assert_eq!(student_t_cdf(0.0, 7.0), 0.5);
        assert_eq!(student_t_cdf(f64::INFINITY, 7.0), 1.0);
        assert_eq!(student_t_cdf(f64::NEG_INFINITY, 7.0), 0.0);
    }

    proptest! {
        #[test]
        fn symmetry_and_round_trip(p in 1e-6f64..0.999_999, df in 1.0f64..1000.0) {
            let t = student_t_quantile(p, df);
            let mirrored = student_t_quantile(1.0 - p, df);
            prop_assert!((t + mirrored).abs() <= 1e-9 * t.abs().max(1e-9), "{t} {mirrored}");
            let back = student_t_cdf(t, df);
            let tail = p.min(1.0 - p);
            prop_assert!((back - p).abs() <= 1e-9 * tail, "p {p} df {df} t {t} cdf {back}");
        }

        #[test]
        fn cdf_is_monotone(a in -50.0f64..50.0, d in 0.0f64..10.0, df in 0.5f64..200.0) {
            prop_assert!(student_t_cdf(a, df) <= student_t_cdf(a + d, df));
        }
    }
}
