/* racehorse compute: LU, FFT and Monte Carlo in C, the same algorithms, inputs and
 * self-checks as ../fp_linalg.rs and ../fp_phys.rs (see fp.c for how they are checked). */
#include "common.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double unit_f64(rng_t *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static int close_to(const char *name, const char *what, double got, double want, double tol) {
    const char *f = getenv("RACEHORSE_COMPUTE_INJECT_FAULT");
    if (f && strcmp(f, name) == 0) got += 1.0 + 10.0 * tol;
    if (fabs(got - want) <= tol) return 1;
    fprintf(stderr, "SELF-CHECK FAILED: %s: %s is %e, expected %e within %e\n", name, what, got, want, tol);
    return 0;
}

static uint64_t bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- lu ---- */
#define LN 300
static void lu_factor(double *m, size_t *piv) {
    size_t i, j, k;
    for (k = 0; k < LN; k++) piv[k] = k;
    for (k = 0; k < LN; k++) {
        size_t p = k;
        double d;
        for (i = k + 1; i < LN; i++)
            if (fabs(m[i * LN + k]) >= fabs(m[p * LN + k])) p = i;
        if (p != k) {
            size_t t = piv[k];
            for (j = 0; j < LN; j++) {
                double x = m[k * LN + j];
                m[k * LN + j] = m[p * LN + j];
                m[p * LN + j] = x;
            }
            piv[k] = piv[p];
            piv[p] = t;
        }
        d = m[k * LN + k];
        for (i = k + 1; i < LN; i++) {
            double f = m[i * LN + k] / d;
            m[i * LN + k] = f;
            for (j = k + 1; j < LN; j++) m[i * LN + j] -= f * m[k * LN + j];
        }
    }
}

static void lu_solve(const double *m, const size_t *piv, const double *b, double *x) {
    size_t i, j;
    for (i = 0; i < LN; i++) x[i] = b[piv[i]];
    for (i = 0; i < LN; i++) {
        double s = 0;
        for (j = 0; j < i; j++) s += m[i * LN + j] * x[j];
        x[i] -= s;
    }
    for (i = LN; i-- > 0;) {
        double s = 0;
        for (j = i + 1; j < LN; j++) s += m[i * LN + j] * x[j];
        x[i] = (x[i] - s) / m[i * LN + i];
    }
}

int k_lu(uint64_t reps, uint64_t *sum) {
    static double a0[LN * LN], m[LN * LN], b[LN], x[LN];
    static size_t piv[LN];
    uint64_t rep;
    double last = 0;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x4C55};
        double resid = 0, norm_a = 0, err = 0, scaled;
        size_t i, j;
        for (i = 0; i < LN * LN; i++) a0[i] = 2.0 * unit_f64(&r) - 1.0;
        for (i = 0; i < LN; i++) {
            double s = 0;
            for (j = 0; j < LN; j++) s += a0[i * LN + j];
            b[i] = s;
        }
        memcpy(m, a0, sizeof m);
        lu_factor(m, piv);
        lu_solve(m, piv, b, x);
        for (i = 0; i < LN; i++) {
            double s = 0, row = 0;
            for (j = 0; j < LN; j++) {
                s += a0[i * LN + j] * x[j];
                row += fabs(a0[i * LN + j]);
            }
            resid = fmax(resid, fabs(s - b[i]));
            norm_a = fmax(norm_a, row);
            err = fmax(err, fabs(x[i] - 1.0));
        }
        scaled = resid / (norm_a * DBL_EPSILON * LN);
        if (!close_to("lu", "scaled residual", scaled, 0.0, 1.0)) return 1;
        if (!close_to("lu", "max |x - 1|", err, 0.0, 1e-6)) return 1;
        last = scaled;
    }
    *sum = bits(last);
    return 0;
}

/* ---- fft ---- */
#define FN (1 << 16)
static void fft(double *re, double *im, int inverse) {
    size_t i, j = 0, len, start, k, n = FN;
    for (i = 1; i < n; i++) {
        size_t bit = n >> 1;
        while (j & bit) { j ^= bit; bit >>= 1; }
        j |= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (len = 2; len <= n; len <<= 1) {
        double ang = (inverse ? 1.0 : -1.0) * 2.0 * 3.141592653589793 / (double)len;
        for (start = 0; start < n; start += len)
            for (k = 0; k < len / 2; k++) {
                double wr = cos(ang * (double)k), wi = sin(ang * (double)k);
                size_t a = start + k, b = start + k + len / 2;
                double xr = re[b] * wr - im[b] * wi, xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr;
                im[b] = im[a] - xi;
                re[a] += xr;
                im[a] += xi;
            }
    }
    if (inverse)
        for (i = 0; i < n; i++) { re[i] /= (double)n; im[i] /= (double)n; }
}

int k_fft(uint64_t reps, uint64_t *sum) {
    static double re0[FN], im0[FN], re[FN], im[FN];
    uint64_t rep;
    double last = 0;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x4646};
        double time_e = 0, freq_e = 0, err = 0;
        size_t i;
        for (i = 0; i < FN; i++) re0[i] = unit_f64(&r) - 0.5;
        for (i = 0; i < FN; i++) im0[i] = unit_f64(&r) - 0.5;
        memcpy(re, re0, sizeof re);
        memcpy(im, im0, sizeof im);
        fft(re, im, 0);
        for (i = 0; i < FN; i++) time_e += re0[i] * re0[i];
        for (i = 0; i < FN; i++) time_e += im0[i] * im0[i];
        for (i = 0; i < FN; i++) freq_e += re[i] * re[i];
        for (i = 0; i < FN; i++) freq_e += im[i] * im[i];
        freq_e /= FN;
        if (!close_to("fft", "Parseval: energy in frequency = energy in time", freq_e, time_e, 1e-9 * time_e))
            return 1;
        fft(re, im, 1);
        for (i = 0; i < FN; i++) err = fmax(err, fmax(fabs(re[i] - re0[i]), fabs(im[i] - im0[i])));
        if (!close_to("fft", "round trip error", err, 0.0, 1e-12)) return 1;
        last = freq_e;
    }
    *sum = bits(last);
    return 0;
}

/* ---- montecarlo ---- */
/* erfc(x) by the Chebyshev fit of Numerical Recipes (fractional error < 1.2e-7). */
static double erfc_fit(double x) {
    double z = fabs(x), t = 1.0 / (1.0 + 0.5 * z), r;
    double poly = -z * z - 1.26551223 +
                  t * (1.00002368 +
                       t * (0.37409196 +
                            t * (0.09678418 +
                                 t * (-0.18628806 +
                                      t * (0.27886807 +
                                           t * (-1.13520398 +
                                                t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    r = t * exp(poly);
    return x >= 0 ? r : 2.0 - r;
}

static double norm_cdf(double x) { return 0.5 * erfc_fit(-x / sqrt(2.0)); }

int k_montecarlo(uint64_t reps, uint64_t *sum) {
    const double s0 = 100, k = 100, rate = 0.05, sigma = 0.2, t = 1, pi = 3.141592653589793;
    double d1 = (log(s0 / k) + (rate + 0.5 * sigma * sigma) * t) / (sigma * sqrt(t));
    double want = s0 * norm_cdf(d1) - k * exp(-rate * t) * norm_cdf(d1 - sigma * sqrt(t));
    double drift = (rate - 0.5 * sigma * sigma) * t, vol = sigma * sqrt(t), last = 0;
    uint64_t rep, i;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x4D43};
        double s = 0, s2 = 0, n = 1e6, mean, se, price;
        for (i = 0; i < 500000; i++) {
            double u1 = 1.0 - unit_f64(&r), u2 = unit_f64(&r), rad = sqrt(-2.0 * log(u1));
            double z[2];
            int q;
            z[0] = rad * cos(2.0 * pi * u2);
            z[1] = rad * sin(2.0 * pi * u2);
            for (q = 0; q < 2; q++) {
                double payoff = fmax(s0 * exp(drift + vol * z[q]) - k, 0.0);
                s += payoff;
                s2 += payoff * payoff;
            }
        }
        mean = s / n;
        se = sqrt((s2 / n - mean * mean) / n);
        price = exp(-rate * t) * mean;
        if (!close_to("montecarlo", "option price vs Black-Scholes (4 standard errors)", price, want, 4.0 * se))
            return 1;
        last = price;
    }
    *sum = bits(last);
    return 0;
}
