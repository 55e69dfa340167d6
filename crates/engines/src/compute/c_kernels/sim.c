/* racehorse compute: des (closed queueing network, binary-heap event list), sieve, bignum. */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DES_QUEUES 64
#define DES_CUSTOMERS 1024
#define DES_EVENTS 400000

typedef struct { uint64_t *k; size_t n; } heap_t;

static void heap_push(heap_t *h, uint64_t key) {
    size_t i = h->n++;
    h->k[i] = key;
    while (i > 0 && h->k[(i - 1) / 2] > h->k[i]) {
        uint64_t t = h->k[i]; h->k[i] = h->k[(i - 1) / 2]; h->k[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static uint64_t heap_pop(heap_t *h) {
    uint64_t top = h->k[0];
    size_t i = 0;
    h->k[0] = h->k[--h->n];
    for (;;) {
        size_t l = 2 * i + 1, r = 2 * i + 2, m = i;
        uint64_t t;
        if (l < h->n && h->k[l] < h->k[m]) m = l;
        if (r < h->n && h->k[r] < h->k[m]) m = r;
        if (m == i) break;
        t = h->k[i]; h->k[i] = h->k[m]; h->k[m] = t;
        i = m;
    }
    return top;
}

typedef struct {
    uint32_t ring[DES_QUEUES][DES_CUSTOMERS];
    size_t head[DES_QUEUES], len[DES_QUEUES];
    uint64_t arrived[DES_CUSTOMERS], keys[DES_QUEUES + 1], seq;
    heap_t heap;
    rng_t r;
} net_t;

static void start(net_t *n, size_t q, uint64_t now) {
    uint64_t t = now + 1 + rng_below(&n->r, 100 + 4 * (uint64_t)q);
    heap_push(&n->heap, (t << 30) | ((n->seq & 0xFFFFFF) << 6) | q);
    n->seq++;
}

static void push_back(net_t *n, size_t q, uint32_t c) {
    n->ring[q][(n->head[q] + n->len[q]) % DES_CUSTOMERS] = c;
    n->len[q]++;
}

int k_des(uint64_t reps, uint64_t *out) {
    net_t *n = malloc(sizeof *n);
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        uint64_t now = 0, sojourn = 0, e;
        size_t q, c;
        memset(n, 0, sizeof *n);
        n->heap.k = n->keys;
        n->r.s = rep ^ 0x4445;
        for (c = 0; c < DES_CUSTOMERS; c++) push_back(n, c % DES_QUEUES, (uint32_t)c);
        for (q = 0; q < DES_QUEUES; q++) start(n, q, 0);
        for (e = 0; e < DES_EVENTS && n->heap.n > 0; e++) {
            uint64_t k = heap_pop(&n->heap), t = k >> 30;
            size_t to;
            q = (size_t)(k & 63);
            if (t < now) { fprintf(stderr, "des: time went back\n"); return 1; }
            now = t;
            c = n->ring[q][n->head[q]];
            n->head[q] = (n->head[q] + 1) % DES_CUSTOMERS;
            n->len[q]--;
            sojourn += now - n->arrived[c];
            if (n->len[q] > 0) start(n, q, now);
            to = (size_t)rng_below(&n->r, DES_QUEUES);
            n->arrived[c] = now;
            push_back(n, to, (uint32_t)c);
            if (n->len[to] == 1) start(n, to, now);
        }
        acc = fold(acc, sojourn ^ (now << 40));
    }
    free(n);
    *out = acc;
    return 0;
}

#define SIEVE_N 10000000u

#define SIEVE_SEGMENT (128u << 10)

/* Segmented over odd numbers (index k stands for 2k + 1), as the Rust kernel. */
int k_sieve(uint64_t reps, uint64_t *out) {
    uint8_t *seg = malloc(SIEVE_SEGMENT);
    size_t primes[512], next[512], np, half = (SIEVE_N + 1) / 2;
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        volatile size_t limit = SIEVE_N;
        size_t n = limit, root = 1, p, q, i, lo, hi, k;
        uint64_t count = 1, sum = 2;
        while ((root + 1) * (root + 1) <= n) root++;
        for (np = 0, p = 3; p <= root; p += 2) {
            for (q = 0; q < np && primes[q] * primes[q] <= p; q++)
                if (p % primes[q] == 0) break;
            if (q == np || primes[q] * primes[q] > p) { primes[np] = p; next[np] = p * p / 2; np++; }
        }
        for (lo = 1; lo < half; lo = hi) {
            hi = lo + SIEVE_SEGMENT < half ? lo + SIEVE_SEGMENT : half;
            memset(seg, 0, hi - lo);
            for (i = 0; i < np; i++) {
                for (k = next[i]; k < hi; k += primes[i]) seg[k - lo] = 1;
                next[i] = k;
            }
            for (k = lo; k < hi; k++)
                if (!seg[k - lo]) { count++; sum += 2 * k + 1; }
        }
        if (count != 664579) { fprintf(stderr, "sieve: pi(10^7) = %llu\n", (unsigned long long)count); return 1; }
        acc = fold(acc, sum);
    }
    free(seg);
    *out = acc;
    return 0;
}

#define BASE 1000000000u

int k_bignum(uint64_t reps, uint64_t *out) {
    uint32_t *limbs = malloc(8192 * sizeof *limbs);
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        volatile uint64_t base_n = 1500;
        uint64_t n = base_n + rep % 500, k, sum = 0;
        size_t len = 1, i;
        limbs[0] = 1;
        for (k = 2; k <= n; k++) {
            uint64_t carry = 0;
            for (i = 0; i < len; i++) {
                uint64_t v = (uint64_t)limbs[i] * k + carry;
                limbs[i] = (uint32_t)(v % BASE);
                carry = v / BASE;
            }
            while (carry > 0) { limbs[len++] = (uint32_t)(carry % BASE); carry /= BASE; }
        }
        for (i = 0; i < len; i++) sum = sum * 31 + limbs[i];
        acc = fold(acc, sum ^ (uint64_t)len);
    }
    free(limbs);
    *out = acc;
    return 0;
}
