/* racehorse compute: the floating-point cases in C, the same algorithms, inputs and
 * self-checks as ../fp_phys.rs and ../fp_linalg.rs. A floating-point result depends on the
 * compiler's order of operations and on libm, so the checks (conservation, closed forms,
 * residuals, round trips) run here and the checksum is the bits of the last value, not
 * compared with Rust's. The environment variable RACEHORSE_COMPUTE_INJECT_FAULT=<case> feeds
 * the checks a wrong answer, as in the Rust kernels. */
#include "common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double unit_f64(rng_t *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static int faulty(const char *name) {
    const char *f = getenv("RACEHORSE_COMPUTE_INJECT_FAULT");
    return f && strcmp(f, name) == 0;
}

/* Fails unless |got - want| <= tol (with the fault hook, got is off by 1 + 10 tol). */
static int close_to(const char *name, const char *what, double got, double want, double tol) {
    if (faulty(name)) got += 1.0 + 10.0 * tol;
    if (fabs(got - want) <= tol) return 1;
    fprintf(stderr, "SELF-CHECK FAILED: %s: %s is %e, expected %e within %e\n", name, what, got, want, tol);
    return 0;
}

static uint64_t bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ---- nbody ---- */
typedef struct { double p[3], v[3], m; } body_t;
#define PI 3.141592653589793
#define SOLAR_MASS (4.0 * PI * PI)
#define DAYS_PER_YEAR 365.24

static void planets(body_t s[5]) {
    static const double init[5][7] = {
        {0, 0, 0, 0, 0, 0, 1.0},
        {4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01, 1.66007664274403694e-03,
         7.69901118419740425e-03, -6.90460016972063023e-05, 9.54791938424326609e-04},
        {8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01, -2.76742510726862411e-03,
         4.99852801234917238e-03, 2.30417297573763929e-05, 2.85885980666130812e-04},
        {1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01, 2.96460137564761618e-03,
         2.37847173959480950e-03, -2.96589568540237556e-05, 4.36624404335156298e-05},
        {1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01, 2.68067772490389322e-03,
         1.62824170038242295e-03, -9.51592254519715870e-05, 5.15138902046611451e-05},
    };
    int i, k;
    for (i = 0; i < 5; i++) {
        for (k = 0; k < 3; k++) {
            s[i].p[k] = init[i][k];
            s[i].v[k] = init[i][3 + k] * DAYS_PER_YEAR;
        }
        s[i].m = init[i][6] * SOLAR_MASS;
    }
    for (k = 0; k < 3; k++) {
        double p = 0;
        for (i = 0; i < 5; i++) p += s[i].v[k] * s[i].m;
        s[0].v[k] = -p / SOLAR_MASS;
    }
}

static double energy(const body_t s[5]) {
    double e = 0;
    int i, j, k;
    for (i = 0; i < 5; i++) {
        e += 0.5 * s[i].m * (s[i].v[0] * s[i].v[0] + s[i].v[1] * s[i].v[1] + s[i].v[2] * s[i].v[2]);
        for (j = i + 1; j < 5; j++) {
            double d = 0;
            for (k = 0; k < 3; k++) d += (s[i].p[k] - s[j].p[k]) * (s[i].p[k] - s[j].p[k]);
            e -= s[i].m * s[j].m / sqrt(d);
        }
    }
    return e;
}

static void advance(body_t s[5], double dt) {
    int i, j, k;
    for (i = 0; i < 5; i++)
        for (j = i + 1; j < 5; j++) {
            double d[3], d2, mag;
            for (k = 0; k < 3; k++) d[k] = s[i].p[k] - s[j].p[k];
            d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            mag = dt / (d2 * sqrt(d2));
            for (k = 0; k < 3; k++) {
                s[i].v[k] -= d[k] * s[j].m * mag;
                s[j].v[k] += d[k] * s[i].m * mag;
            }
        }
    for (i = 0; i < 5; i++)
        for (k = 0; k < 3; k++) s[i].p[k] += dt * s[i].v[k];
}

int k_nbody(uint64_t reps, uint64_t *sum) {
    uint64_t rep, step;
    double last = 0;
    for (rep = 0; rep < reps; rep++) {
        body_t s[5];
        double e0;
        planets(s);
        e0 = energy(s);
        if (!close_to("nbody", "initial energy", e0, -0.169075164, 1e-9)) return 1;
        for (step = 0; step < 200000; step++) advance(s, 0.01);
        last = energy(s);
        if (!close_to("nbody", "energy after the steps (conservation)", last, e0, 2e-4 * fabs(e0))) return 1;
    }
    *sum = bits(last);
    return 0;
}

/* ---- stencil ---- */
#define SN 256
int k_stencil(uint64_t reps, uint64_t *sum) {
    uint64_t rep;
    double last = 0;
    double *u = malloc(SN * SN * sizeof *u), *v = malloc(SN * SN * sizeof *v);
    if (!u || !v) return 1;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x5354};
        double sum0 = 0, lo = 1e308, hi = -1e308, total = 0;
        int i, j, t, ok = 1;
        for (i = 0; i < SN * SN; i++) {
            u[i] = unit_f64(&r);
            sum0 += u[i];
            lo = u[i] < lo ? u[i] : lo;
            hi = u[i] > hi ? u[i] : hi;
        }
        for (t = 0; t < 100; t++) {
            double *w;
            for (i = 0; i < SN; i++) {
                int up = (i + SN - 1) % SN * SN, down = (i + 1) % SN * SN, row = i * SN;
                for (j = 0; j < SN; j++) {
                    int l = (j + SN - 1) % SN, rr = (j + 1) % SN;
                    double c = u[row + j];
                    v[row + j] = c + 0.2 * (u[row + l] + u[row + rr] + u[up + j] + u[down + j] - 4.0 * c);
                }
            }
            w = u; u = v; v = w;
        }
        for (i = 0; i < SN * SN; i++) {
            total += u[i];
            ok &= u[i] >= lo && u[i] <= hi;
        }
        if (!close_to("stencil", "total heat", total, sum0, 1e-9 * sum0)) return 1;
        if (!ok || faulty("stencil")) {
            fprintf(stderr, "SELF-CHECK FAILED: stencil: values stay within the initial range\n");
            return 1;
        }
        last = total;
    }
    free(u);
    free(v);
    *sum = bits(last);
    return 0;
}

/* ---- spectral ---- */
#define SPN 1000
static double a_ij(size_t i, size_t j) { return 1.0 / (double)((i + j) * (i + j + 1) / 2 + i + 1); }

static void mul_av(const double *v, double *out, int transposed) {
    size_t i, j;
    for (i = 0; i < SPN; i++) {
        double s = 0;
        for (j = 0; j < SPN; j++) s += (transposed ? a_ij(j, i) : a_ij(i, j)) * v[j];
        out[i] = s;
    }
}

int k_spectral(uint64_t reps, uint64_t *sum) {
    static double u[SPN], v[SPN], t[SPN];
    uint64_t rep;
    double last = 0;
    for (rep = 0; rep < reps; rep++) {
        double vbv = 0, vv = 0;
        int i, k;
        for (i = 0; i < SPN; i++) u[i] = 1.0;
        for (k = 0; k < 10; k++) {
            mul_av(u, t, 0);
            mul_av(t, v, 1);
            mul_av(v, t, 0);
            mul_av(t, u, 1);
        }
        for (i = 0; i < SPN; i++) {
            vbv += u[i] * v[i];
            vv += v[i] * v[i];
        }
        last = sqrt(vbv / vv);
        if (!close_to("spectral", "spectral norm", last, 1.2742241528, 1e-6)) return 1;
    }
    *sum = bits(last);
    return 0;
}
