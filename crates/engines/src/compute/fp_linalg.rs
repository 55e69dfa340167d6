//! Floating-point kernels of linear algebra and spectral methods: the spectral norm of an
//! infinite matrix by the power method, dense LU factorisation with partial pivoting, and a
//! radix-2 FFT. Each checks a known value, a residual or a round trip.

use super::common::check_close;
use crate::support::rng::SplitMix64;
use std::hint::black_box;

pub const SPECTRAL_N: usize = 1000;

fn a(i: usize, j: usize) -> f64 {
    1.0 / (((i + j) * (i + j + 1) / 2 + i + 1) as f64)
}

fn mul_av(v: &[f64], out: &mut [f64], transposed: bool) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = v.iter().enumerate().map(|(j, x)| if transposed { a(j, i) } else { a(i, j) } * x).sum();
    }
}

/// ‖A‖₂ of A(i,j) = 1/((i+j)(i+j+1)/2 + i+1), n = 1000, by 10 steps of the power method on
/// AᵀA; the infinite matrix's norm is 1.2742241528… (published digits).
pub fn spectral(reps: u64) -> Result<f64, String> {
    let n = SPECTRAL_N;
    let mut last = 0.0;
    for _ in 0..reps {
        let mut u = black_box(vec![1.0; n]);
        let (mut v, mut t) = (vec![0.0; n], vec![0.0; n]);
        for _ in 0..10 {
            mul_av(&u, &mut t, false);
            mul_av(&t, &mut v, true);
            mul_av(&v, &mut t, false);
            mul_av(&t, &mut u, true);
        }
        let vbv: f64 = u.iter().zip(&v).map(|(x, y)| x * y).sum();
        let vv: f64 = v.iter().map(|x| x * x).sum();
        last = (vbv / vv).sqrt();
        check_close("spectral", "spectral norm", last, 1.274_224_152_8, 1e-6)?;
    }
    Ok(last)
}

pub const LU_N: usize = 300;

/// LU with partial pivoting in place (row-major n×n); the pivot rows.
pub fn lu_factor(m: &mut [f64], n: usize) -> Vec<usize> {
    let mut piv: Vec<usize> = (0..n).collect();
    for k in 0..n {
        let p = (k..n).max_by(|x, y| m[x * n + k].abs().total_cmp(&m[y * n + k].abs())).unwrap_or(k);
        if p != k {
            for j in 0..n {
                m.swap(k * n + j, p * n + j);
            }
            piv.swap(k, p);
        }
        let d = m[k * n + k];
        for i in k + 1..n {
            let f = m[i * n + k] / d;
            m[i * n + k] = f;
            let (top, rest) = m.split_at_mut(i * n);
            let row_k = &top[k * n + k + 1..k * n + n];
            for (x, y) in rest[k + 1..n].iter_mut().zip(row_k) {
                *x -= f * y;
            }
        }
    }
    piv
}

/// Solves with the factors of [`lu_factor`].
pub fn lu_solve(m: &[f64], n: usize, piv: &[usize], b: &[f64]) -> Vec<f64> {
    let mut x: Vec<f64> = piv.iter().map(|p| b[*p]).collect();
    for i in 0..n {
        let s: f64 = (0..i).map(|j| m[i * n + j] * x[j]).sum();
        x[i] -= s;
    }
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|j| m[i * n + j] * x[j]).sum();
        x[i] = (x[i] - s) / m[i * n + i];
    }
    x
}

/// Solves A x = b for a random 300×300 A and b = A·1 per repetition; the residual and the
/// error of x against 1 must be small.
pub fn lu(reps: u64) -> Result<f64, String> {
    let n = LU_N;
    let mut last = 0.0;
    for rep in 0..reps {
        let mut r = SplitMix64::new(rep ^ 0x4C55);
        let a0: Vec<f64> = (0..n * n).map(|_| 2.0 * r.unit_f64() - 1.0).collect();
        let b: Vec<f64> = (0..n).map(|i| a0[i * n..i * n + n].iter().sum()).collect();
        let mut m = a0.clone();
        let piv = lu_factor(black_box(&mut m), n);
        let x = lu_solve(&m, n, &piv, &b);
        let resid = (0..n)
            .map(|i| (a0[i * n..i * n + n].iter().zip(&x).map(|(p, q)| p * q).sum::<f64>() - b[i]).abs())
            .fold(0.0, f64::max);
        let norm_a =
            (0..n).map(|i| a0[i * n..i * n + n].iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
        let scaled = resid / (norm_a * f64::EPSILON * n as f64);
        check_close("lu", "scaled residual ‖Ax−b‖/(‖A‖·ε·n)", scaled, 0.0, 1.0)?;
        let err = x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
        check_close("lu", "max |x − 1|", err, 0.0, 1e-6)?;
        last = scaled;
    }
    Ok(last)
}

/// In-place iterative radix-2 FFT of (re, im); `inverse` uses +i and divides by n.
pub fn fft(re: &mut [f64], im: &mut [f64], inverse: bool) {
    let n = re.len();
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut len = 2;
    while len <= n {
        let ang = sign * 2.0 * std::f64::consts::PI / len as f64;
        for start in (0..n).step_by(len) {
            for k in 0..len / 2 {
                let (wr, wi) = ((ang * k as f64).cos(), (ang * k as f64).sin());
                let (a, b) = (start + k, start + k + len / 2);
                let (xr, xi) = (re[b] * wr - im[b] * wi, re[b] * wi + im[b] * wr);
                re[b] = re[a] - xr;
                im[b] = im[a] - xi;
                re[a] += xr;
                im[a] += xi;
            }
        }
        len <<= 1;
    }
    if inverse {
        re.iter_mut().chain(im.iter_mut()).for_each(|v| *v /= n as f64);
    }
}

pub const FFT_N: usize = 1 << 16;

/// A forward and an inverse transform of 2^16 random complex values per repetition;
/// Parseval's identity holds and the round trip restores the input.
pub fn fft_kernel(reps: u64) -> Result<f64, String> {
    let mut last = 0.0;
    for rep in 0..reps {
        let mut r = SplitMix64::new(rep ^ 0x4646);
        let re0: Vec<f64> = (0..FFT_N).map(|_| r.unit_f64() - 0.5).collect();
        let im0: Vec<f64> = (0..FFT_N).map(|_| r.unit_f64() - 0.5).collect();
        let (mut re, mut im) = (re0.clone(), im0.clone());
        fft(black_box(&mut re), &mut im, false);
        let time_e: f64 = re0.iter().chain(&im0).map(|v| v * v).sum();
        let freq_e: f64 = re.iter().chain(&im).map(|v| v * v).sum::<f64>() / FFT_N as f64;
        check_close("fft", "Parseval: energy in frequency = energy in time", freq_e, time_e, 1e-9 * time_e)?;
        fft(&mut re, &mut im, true);
        let err =
            re.iter().zip(&re0).chain(im.iter().zip(&im0)).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        check_close("fft", "round trip error", err, 0.0, 1e-12)?;
        last = freq_e;
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fft_of_an_impulse_is_flat() {
        let mut re = vec![0.0; 8];
        let mut im = vec![0.0; 8];
        re[0] = 1.0;
        fft(&mut re, &mut im, false);
        assert!(re.iter().all(|v| (v - 1.0).abs() < 1e-15) && im.iter().all(|v| v.abs() < 1e-15));
    }

    #[test]
    fn lu_solves_a_small_system() {
        let mut m = vec![0.0, 2.0, 1.0, 1.0];
        let piv = lu_factor(&mut m, 2);
        let x = lu_solve(&m, 2, &piv, &[4.0, 3.0]);
        assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 2.0).abs() < 1e-15, "{x:?}");
    }

    #[test]
    fn kernels_check_themselves() {
        assert!(lu(1).is_ok());
        assert!(fft_kernel(1).is_ok());
    }
}
