/* racehorse compute: telco (Cowlishaw's billing benchmark) in C, in two arithmetic forms,
 * the same bill as ../telco.rs: per call, price = rate x seconds rounded half-even to cents,
 * base tax 6.75% and (odd durations, "distance") district tax 3.41% each truncated to
 * cents, the total written as "D.CC\r\n" through a 64 KiB buffer.
 *
 *   telco_double:    binary double, amounts in currency units, rounded to cents at each step.
 *                    The exact product of a rate and an amount has at most 4 decimals of a
 *                    cent, so the scaled product is first snapped to 1/10000 of a cent (this
 *                    removes the binary representation error, ~1e-15) and then rounded:
 *                    rint (half-even) for the price, floor (truncation) for the taxes.
 *   telco_decimal64: C _Decimal64 (IEEE 754 decimal64; on x86 gcc's libgcc implements it in
 *                    software, BID encoding); products and sums in decimal, rounding to cents
 *                    by the integer part and the decimal remainder. Compiled only with
 *                    -DRH_DECIMAL64, since not every compiler has the type.
 *
 * Each pass: delete the output, read the input (8-byte big-endian seconds), bill, write,
 * close. The checksum folds each pass's sums in cents (sumT, sumB, sumD). */
#include "common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The input's durations; *n their count. NULL when the file cannot be read. */
static uint64_t *read_calls(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char rec[8];
    size_t cap = 1 << 20, len = 0;
    uint64_t *v;
    if (!f) return NULL;
    v = malloc(cap * sizeof *v);
    while (v && fread(rec, 1, 8, f) == 8) {
        uint64_t x = 0;
        int i;
        for (i = 0; i < 8; i++) x = (x << 8) | rec[i];
        if (len == cap) {
            uint64_t *w = realloc(v, (cap *= 2) * sizeof *v);
            if (!w) { free(v); v = NULL; break; }
            v = w;
        }
        v[len++] = x;
    }
    fclose(f);
    *n = len;
    return v;
}

/* Writes cents as "D.CC\r\n" into buf; its length. */
static size_t format_cents(char *buf, long long cents) {
    char tmp[24];
    size_t k = 0, len = 0;
    long long whole = cents / 100, frac = cents % 100;
    do { tmp[k++] = (char)('0' + whole % 10); whole /= 10; } while (whole > 0);
    while (k > 0) buf[len++] = tmp[--k];
    buf[len++] = '.';
    buf[len++] = (char)('0' + frac / 10);
    buf[len++] = (char)('0' + frac % 10);
    buf[len++] = '\r';
    buf[len++] = '\n';
    return len;
}

/* One pass's file handling around `bill`, which fills sums[3] in cents. */
typedef int (*bill_fn)(const uint64_t *calls, size_t n, FILE *out, long long sums[3]);

static int passes(bill_fn bill, uint64_t reps, const char *input, const char *output, uint64_t *sum) {
    uint64_t rep;
    static char buf[64 << 10];
    *sum = 0;
    for (rep = 0; rep < reps; rep++) {
        size_t n = 0;
        long long sums[3];
        uint64_t *calls;
        FILE *out;
        remove(output);
        calls = read_calls(input, &n);
        if (!calls) { fprintf(stderr, "telco: cannot read %s\n", input); return 1; }
        out = fopen(output, "wb");
        if (!out) { fprintf(stderr, "telco: cannot create %s\n", output); free(calls); return 1; }
        setvbuf(out, buf, _IOFBF, sizeof buf);
        if (bill(calls, n, out, sums) != 0 || fclose(out) != 0) {
            fprintf(stderr, "telco: cannot write %s\n", output);
            free(calls);
            return 1;
        }
        free(calls);
        *sum = fold(fold(fold(*sum, (uint64_t)sums[0]), (uint64_t)sums[1]), (uint64_t)sums[2]);
    }
    return 0;
}

/* x (currency units, >= 0) in cents, snapped to 1/10000 of a cent. */
static double snapped_cents(double x) { return nearbyint(x * 1e6) / 1e4; }

static int bill_double(const uint64_t *calls, size_t n, FILE *out, long long sums[3]) {
    double sum_t = 0, sum_b = 0, sum_d = 0;
    size_t i;
    char line[32];
    for (i = 0; i < n; i++) {
        int distance = (calls[i] & 1) != 0;
        double rate = distance ? 0.00894 : 0.0013;
        double price = rint(snapped_cents(rate * (double)calls[i])) / 100.0;
        double btax = floor(snapped_cents(price * 0.0675)) / 100.0;
        double total = price + btax;
        sum_b += btax;
        if (distance) {
            double dtax = floor(snapped_cents(price * 0.0341)) / 100.0;
            total += dtax;
            sum_d += dtax;
        }
        sum_t += total;
        if (fwrite(line, 1, format_cents(line, llround(total * 100.0)), out) == 0) return 1;
    }
    sums[0] = llround(sum_t * 100.0);
    sums[1] = llround(sum_b * 100.0);
    sums[2] = llround(sum_d * 100.0);
    return 0;
}

int k_telco_double(uint64_t reps, const char *input, const char *output, uint64_t *sum) {
    return passes(bill_double, reps, input, output, sum);
}

#ifdef RH_DECIMAL64
/* x (>= 0) rounded to cents: half-even, or toward zero when `truncate`. */
static _Decimal64 to_cents(_Decimal64 x, int truncate) {
    _Decimal64 c = x * 100.DD;
    long long whole = (long long)c; /* conversion truncates */
    _Decimal64 rest = c - (_Decimal64)whole;
    if (!truncate && (rest > 0.5DD || (rest == 0.5DD && (whole & 1)))) whole++;
    return (_Decimal64)whole * 0.01DD;
}

static int bill_decimal64(const uint64_t *calls, size_t n, FILE *out, long long sums[3]) {
    _Decimal64 sum_t = 0.DD, sum_b = 0.DD, sum_d = 0.DD;
    size_t i;
    char line[32];
    for (i = 0; i < n; i++) {
        int distance = (calls[i] & 1) != 0;
        _Decimal64 rate = distance ? 0.00894DD : 0.0013DD;
        _Decimal64 price = to_cents(rate * (_Decimal64)calls[i], 0);
        _Decimal64 btax = to_cents(price * 0.0675DD, 1);
        _Decimal64 total = price + btax;
        sum_b += btax;
        if (distance) {
            _Decimal64 dtax = to_cents(price * 0.0341DD, 1);
            total += dtax;
            sum_d += dtax;
        }
        sum_t += total;
        if (fwrite(line, 1, format_cents(line, (long long)(total * 100.DD)), out) == 0) return 1;
    }
    sums[0] = (long long)(sum_t * 100.DD);
    sums[1] = (long long)(sum_b * 100.DD);
    sums[2] = (long long)(sum_d * 100.DD);
    return 0;
}

int k_telco_decimal64(uint64_t reps, const char *input, const char *output, uint64_t *sum) {
    return passes(bill_decimal64, reps, input, output, sum);
}
#endif
