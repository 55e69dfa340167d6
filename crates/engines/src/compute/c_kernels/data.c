/* racehorse compute: sort (quicksort), hash (word-count table), lz (LZ77 round trip). */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_N (1u << 20)

static uint64_t mix(uint32_t v) { rng_t r = {v}; return rng_next(&r); }

static void quicksort(uint32_t *a, size_t n) {
    static size_t stack[4096][2];
    size_t sp = 0;
    stack[sp][0] = 0; stack[sp][1] = n; sp++;
    while (sp > 0) {
        size_t lo, hi, mid, i, j;
        uint32_t pivot, t;
        sp--; lo = stack[sp][0]; hi = stack[sp][1];
        if (hi - lo < 16) {
            for (i = lo + 1; i < hi; i++) {
                uint32_t v = a[i];
                j = i;
                while (j > lo && a[j - 1] > v) { a[j] = a[j - 1]; j--; }
                a[j] = v;
            }
            continue;
        }
        mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo]) { t = a[mid]; a[mid] = a[lo]; a[lo] = t; }
        if (a[hi - 1] < a[lo]) { t = a[hi - 1]; a[hi - 1] = a[lo]; a[lo] = t; }
        if (a[hi - 1] < a[mid]) { t = a[hi - 1]; a[hi - 1] = a[mid]; a[mid] = t; }
        pivot = a[mid];
        i = lo; j = hi - 1;
        for (;;) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i >= j) break;
            t = a[i]; a[i] = a[j]; a[j] = t;
            i++; j--;
        }
        stack[sp][0] = lo; stack[sp][1] = j + 1; sp++;
        stack[sp][0] = j + 1; stack[sp][1] = hi; sp++;
        if (sp >= 4094) { fprintf(stderr, "sort: stack overflow\n"); exit(1); }
    }
}

int k_sort(uint64_t reps, uint64_t *out) {
    uint32_t *a = malloc(SORT_N * sizeof *a);
    uint64_t acc = 0, rep;
    size_t i;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep};
        uint64_t before = 0, after = 0, sum = 0;
        for (i = 0; i < SORT_N; i++) { a[i] = (uint32_t)(rng_next(&r) >> 32); before += mix(a[i]); }
        quicksort(a, SORT_N);
        for (i = 0; i < SORT_N; i++) {
            if (i > 0 && a[i - 1] > a[i]) { fprintf(stderr, "sort: out of order\n"); return 1; }
            after += mix(a[i]);
            sum += (uint64_t)a[i] * (i + 1);
        }
        if (after != before) { fprintf(stderr, "sort: not a permutation\n"); return 1; }
        acc = fold(acc, sum);
    }
    free(a);
    *out = acc;
    return 0;
}

#define HASH_SLOTS (1u << 17)
#define HASH_N 75000
#define HASH_SHIFT 15

int k_hash(uint64_t reps, uint64_t *out) {
    uint32_t *keys = malloc(HASH_SLOTS * sizeof *keys), *counts = malloc(HASH_SLOTS * sizeof *counts);
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x48415348ULL};
        uint64_t distinct = 0, found = 0, total = 0;
        size_t i, h;
        memset(keys, 0, HASH_SLOTS * sizeof *keys);
        memset(counts, 0, HASH_SLOTS * sizeof *counts);
        for (i = 0; i < HASH_N; i++) {
            uint32_t k = (uint32_t)(rng_next(&r) >> 44) | 1;
            h = (k * 0x9E3779B1u) >> HASH_SHIFT;
            for (;;) {
                if (keys[h] == k) { counts[h]++; break; }
                if (keys[h] == 0) { keys[h] = k; counts[h] = 1; distinct++; break; }
                h = (h + 1) & (HASH_SLOTS - 1);
            }
        }
        for (i = 0; i < HASH_N; i++) {
            uint32_t k = (uint32_t)(rng_next(&r) >> 44) | 1;
            h = (k * 0x9E3779B1u) >> HASH_SHIFT;
            while (keys[h] != 0) {
                if (keys[h] == k) { found += counts[h]; break; }
                h = (h + 1) & (HASH_SLOTS - 1);
            }
        }
        for (i = 0; i < HASH_SLOTS; i++) total += counts[i];
        if (total != HASH_N) { fprintf(stderr, "hash: counts do not add up\n"); return 1; }
        acc = fold(acc, distinct + found * 31);
    }
    free(keys); free(counts);
    *out = acc;
    return 0;
}

#define LZ_N (1u << 20)

static void lz_input(uint64_t seed, uint8_t *out) {
    static uint8_t vocab[512][12];
    static size_t vlen[512];
    rng_t r = {seed};
    size_t w, k, n = 0;
    for (w = 0; w < 512; w++) {
        vlen[w] = 2 + (size_t)rng_below(&r, 9);
        for (k = 0; k < vlen[w]; k++) vocab[w][k] = (uint8_t)('a' + rng_below(&r, 26));
    }
    while (n < LZ_N) {
        uint64_t x = rng_below(&r, 512), y = rng_below(&r, 512);
        w = (size_t)(x * y * rng_below(&r, 512) / (512 * 512));
        for (k = 0; k < vlen[w] && n < LZ_N; k++) out[n++] = vocab[w][k];
        if (n < LZ_N) out[n++] = ' ';
    }
}

static uint32_t read4(const uint8_t *d, size_t i) {
    return (uint32_t)d[i] | (uint32_t)d[i + 1] << 8 | (uint32_t)d[i + 2] << 16 | (uint32_t)d[i + 3] << 24;
}

static size_t put16(uint8_t *o, size_t at, size_t v) { o[at] = (uint8_t)v; o[at + 1] = (uint8_t)(v >> 8); return at + 2; }

static size_t emit_literals(uint8_t *o, size_t at, const uint8_t *lit, size_t n) {
    while (n > 0) {
        size_t c = n < 65535 ? n : 65535;
        o[at++] = 0;
        at = put16(o, at, c);
        memcpy(o + at, lit, c);
        at += c; lit += c; n -= c;
    }
    return at;
}

static size_t lz_compress(const uint8_t *d, size_t n, int32_t *table, uint8_t *o) {
    size_t i = 0, lit = 0, at = 0;
    memset(table, 0xff, (1u << 16) * sizeof *table);
    while (i + 4 <= n) {
        size_t h = (read4(d, i) * 2654435761u) >> 16;
        int32_t cand = table[h];
        table[h] = (int32_t)i;
        if (cand >= 0 && i - (size_t)cand <= 65535 && read4(d, (size_t)cand) == read4(d, i)) {
            size_t c = (size_t)cand, len = 4;
            while (i + len < n && len < 65535 && d[c + len] == d[i + len]) len++;
            at = emit_literals(o, at, d + lit, i - lit);
            o[at++] = 1;
            at = put16(o, at, i - c);
            at = put16(o, at, len);
            i += len;
            lit = i;
        } else {
            i++;
        }
    }
    return emit_literals(o, at, d + lit, n - lit);
}

static size_t lz_decompress(const uint8_t *c, size_t n, uint8_t *o) {
    size_t i = 0, at = 0, k;
    while (i < n) {
        size_t a = (size_t)c[i + 1] | (size_t)c[i + 2] << 8;
        if (c[i] == 0) {
            memcpy(o + at, c + i + 3, a);
            at += a; i += 3 + a;
        } else {
            size_t len = (size_t)c[i + 3] | (size_t)c[i + 4] << 8, start = at - a;
            for (k = 0; k < len; k++) o[at + k] = o[start + k];
            at += len; i += 5;
        }
    }
    return at;
}

int k_lz(uint64_t reps, uint64_t *out) {
    uint8_t *d = malloc(LZ_N), *c = malloc(LZ_N + LZ_N / 8 + 64), *back = malloc(LZ_N + 16);
    int32_t *table = malloc((1u << 16) * sizeof *table);
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        size_t clen, blen;
        lz_input(rep, d);
        clen = lz_compress(d, LZ_N, table, c);
        blen = lz_decompress(c, clen, back);
        if (blen != LZ_N || memcmp(back, d, LZ_N) != 0) { fprintf(stderr, "lz: round trip differs\n"); return 1; }
        acc = fold(acc, clen);
    }
    free(d); free(c); free(back); free(table);
    *out = acc;
    return 0;
}
