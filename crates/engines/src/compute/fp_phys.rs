//! Floating-point kernels of physics and finance: n-body (the outer planets around the sun,
//! symplectic Euler), a stencil (explicit heat diffusion on a periodic grid) and Monte Carlo
//! (a European option priced by simulation). Each checks a conserved quantity or a closed
//! form.

use super::common::{check, check_close};
use crate::support::rng::SplitMix64;
use std::f64::consts::PI;
use std::hint::black_box;

const SOLAR_MASS: f64 = 4.0 * PI * PI;
const DAYS_PER_YEAR: f64 = 365.24;

#[derive(Clone, Copy)]
struct Body {
    p: [f64; 3],
    v: [f64; 3],
    m: f64,
}

/// The sun and the four giant planets (positions in AU, velocities in AU/day, as published
/// with the Computer Language Benchmarks Game's nbody).
fn planets() -> [Body; 5] {
    let b = |p: [f64; 3], v: [f64; 3], m: f64| Body { p, v: v.map(|x| x * DAYS_PER_YEAR), m: m * SOLAR_MASS };
    let mut s = [
        b([0.0; 3], [0.0; 3], 1.0),
        b(
            [4.841_431_442_464_72, -1.160_320_044_027_428_4, -0.103_622_044_471_123_11],
            [1.660_076_642_744_037e-3, 7.699_011_184_197_404e-3, -6.904_600_169_720_63e-5],
            9.547_919_384_243_266e-4,
        ),
        b(
            [8.343_366_718_244_58, 4.124_798_564_124_305, -0.403_523_417_114_321_4],
            [-2.767_425_107_268_624e-3, 4.998_528_012_349_172e-3, 2.304_172_975_737_639_3e-5],
            2.858_859_806_661_308e-4,
        ),
        b(
            [12.894_369_562_139_131, -15.111_151_401_698_631, -0.223_307_578_892_655_73],
            [2.964_601_375_647_616e-3, 2.378_471_739_594_81e-3, -2.965_895_685_402_375_6e-5],
            4.366_244_043_351_563e-5,
        ),
        b(
            [15.379_697_114_850_917, -25.919_314_609_987_964, 0.179_258_772_950_371_18],
            [2.680_677_724_903_893_2e-3, 1.628_241_700_382_423e-3, -9.515_922_545_197_159e-5],
            5.151_389_020_466_114_5e-5,
        ),
    ];
    // The sun takes the planets' momentum, so the system's is zero.
    for k in 0..3 {
        let p: f64 = s.iter().map(|b| b.v[k] * b.m).sum();
        s[0].v[k] = -p / SOLAR_MASS;
    }
    s
}

fn energy(s: &[Body; 5]) -> f64 {
    let mut e = 0.0;
    for i in 0..5 {
        e += 0.5 * s[i].m * s[i].v.iter().map(|v| v * v).sum::<f64>();
        for j in i + 1..5 {
            let d: f64 = (0..3).map(|k| (s[i].p[k] - s[j].p[k]).powi(2)).sum();
            e -= s[i].m * s[j].m / d.sqrt();
        }
    }
    e
}

fn advance(s: &mut [Body; 5], dt: f64) {
    for i in 0..5 {
        for j in i + 1..5 {
            let d = [s[i].p[0] - s[j].p[0], s[i].p[1] - s[j].p[1], s[i].p[2] - s[j].p[2]];
            let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let mag = dt / (d2 * d2.sqrt());
            let (mi, mj) = (s[i].m, s[j].m);
            for (k, dk) in d.iter().enumerate() {
                s[i].v[k] -= dk * mj * mag;
                s[j].v[k] += dk * mi * mag;
            }
        }
    }
    for b in s.iter_mut() {
        for k in 0..3 {
            b.p[k] += dt * b.v[k];
        }
    }
}

pub const NBODY_STEPS: u64 = 200_000;

/// 200,000 steps of 0.01 days per repetition; the energy must stay within 2·10^-4 (relative)
/// of the start, which is the published −0.169075164.
pub fn nbody(reps: u64) -> Result<f64, String> {
    let mut last = 0.0;
    for _ in 0..reps {
        let mut s = black_box(planets());
        let e0 = energy(&s);
        check_close("nbody", "initial energy", e0, -0.169_075_164, 1e-9)?;
        for _ in 0..NBODY_STEPS {
            advance(&mut s, 0.01);
        }
        last = energy(&s);
        check_close("nbody", "energy after the steps (conservation)", last, e0, 2e-4 * e0.abs())?;
    }
    Ok(last)
}

pub const STENCIL_N: usize = 256;
pub const STENCIL_STEPS: usize = 100;

/// 100 explicit steps of 2-D heat diffusion (5 points, factor 0.2) on a periodic 256×256 grid
/// per repetition; heat is conserved and values stay within the initial range.
pub fn stencil(reps: u64) -> Result<f64, String> {
    let n = STENCIL_N;
    let mut last = 0.0;
    for rep in 0..reps {
        let mut r = SplitMix64::new(rep ^ 0x5354);
        let mut u: Vec<f64> = (0..n * n).map(|_| r.unit_f64()).collect();
        let mut v = vec![0.0; n * n];
        let sum0: f64 = u.iter().sum();
        let (lo, hi) = u.iter().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        for _ in 0..STENCIL_STEPS {
            for i in 0..n {
                let (up, down) = ((i + n - 1) % n * n, (i + 1) % n * n);
                let row = i * n;
                for j in 0..n {
                    let (l, rr) = ((j + n - 1) % n, (j + 1) % n);
                    let c = u[row + j];
                    v[row + j] = c + 0.2 * (u[row + l] + u[row + rr] + u[up + j] + u[down + j] - 4.0 * c);
                }
            }
            std::mem::swap(&mut u, black_box(&mut v));
        }
        let sum: f64 = u.iter().sum();
        check_close("stencil", "total heat", sum, sum0, 1e-9 * sum0)?;
        check("stencil", "values stay within the initial range", u.iter().all(|x| *x >= lo && *x <= hi))?;
        last = sum;
    }
    Ok(last)
}

/// erfc(x) by the Chebyshev fit of Numerical Recipes (fractional error < 1.2·10^-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Black–Scholes price of a European call.
pub fn black_scholes_call(s: f64, k: f64, r: f64, sigma: f64, t: f64) -> f64 {
    let d1 = ((s / k).ln() + (r + 0.5 * sigma * sigma) * t) / (sigma * t.sqrt());
    let d2 = d1 - sigma * t.sqrt();
    s * norm_cdf(d1) - k * (-r * t).exp() * norm_cdf(d2)
}

pub const MC_PATHS: u64 = 1_000_000;

/// Prices a one-year at-the-money call (S=K=100, r=5%, σ=20%) from 10^6 simulated terminal
/// prices (Box–Muller normals) per repetition; within 4 standard errors of Black–Scholes.
pub fn montecarlo(reps: u64) -> Result<f64, String> {
    let (s0, k, rate, sigma, t) = (100.0, 100.0, 0.05, 0.2, 1.0);
    let want = black_scholes_call(s0, k, rate, sigma, t);
    let drift = (rate - 0.5 * sigma * sigma) * t;
    let vol = sigma * f64::sqrt(t);
    let mut last = 0.0;
    for rep in 0..reps {
        let mut r = SplitMix64::new(black_box(rep ^ 0x4D43));
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..MC_PATHS / 2 {
            let (u1, u2) = (1.0 - r.unit_f64(), r.unit_f64());
            let rad = (-2.0 * u1.ln()).sqrt();
            for z in [rad * (2.0 * PI * u2).cos(), rad * (2.0 * PI * u2).sin()] {
                let payoff = (s0 * (drift + vol * z).exp() - k).max(0.0);
                sum += payoff;
                sum2 += payoff * payoff;
            }
        }
        let n = MC_PATHS as f64;
        let mean = sum / n;
        let se = ((sum2 / n - mean * mean) / n).sqrt();
        let price = (-rate * t).exp() * mean;
        check_close(
            "montecarlo",
            "option price vs Black-Scholes (4 standard errors)",
            price,
            want,
            4.0 * se,
        )?;
        last = price;
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_and_energy_match_published_values() {
        assert!((black_scholes_call(100.0, 100.0, 0.05, 0.2, 1.0) - 10.450_583_572).abs() < 1e-5);
        assert!((energy(&planets()) + 0.169_075_164).abs() < 1e-9);
        let mut s = planets();
        for _ in 0..1000 {
            advance(&mut s, 0.01);
        }
        assert!((energy(&s) + 0.169_087_605).abs() < 1e-9, "the benchmarks game's 1000-step figure");
    }

    #[test]
    fn kernels_check_themselves() {
        assert!(stencil(1).is_ok());
        assert!(montecarlo(1).is_ok());
    }
}
