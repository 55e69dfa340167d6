/* racehorse compute: shared declarations of the C kernels (the same algorithms, inputs and
 * checksums as the Rust kernels in ../int_*.rs; telco's forms as ../telco.rs's bill). */
#ifndef RH_COMMON_H
#define RH_COMMON_H
#include <stdint.h>
#include <stddef.h>

typedef struct { uint64_t s; } rng_t;

static inline uint64_t rng_next(rng_t *r) {
    uint64_t z;
    r->s += 0x9E3779B97F4A7C15ULL;
    z = r->s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t rng_below(rng_t *r, uint64_t n) { return rng_next(r) % n; }

static inline uint64_t fold(uint64_t acc, uint64_t x) {
    return ((acc << 5) | (acc >> 59)) ^ (x * 0x9E3779B97F4A7C15ULL);
}

/* Each kernel runs `reps` repetitions, stores the checksum and returns 0, or prints what
 * failed to stderr and returns 1. */
int k_sort(uint64_t reps, uint64_t *sum);
int k_hash(uint64_t reps, uint64_t *sum);
int k_lz(uint64_t reps, uint64_t *sum);
int k_regex(uint64_t reps, uint64_t *sum);
int k_parse(uint64_t reps, uint64_t *sum);
int k_align(uint64_t reps, uint64_t *sum);
int k_bfs(uint64_t reps, uint64_t *sum);
int k_tictactoe(uint64_t reps, uint64_t *sum);
int k_nqueens(uint64_t reps, uint64_t *sum);
int k_des(uint64_t reps, uint64_t *sum);
int k_sieve(uint64_t reps, uint64_t *sum);
int k_bignum(uint64_t reps, uint64_t *sum);

/* The floating-point cases (fp.c, fp_linalg.c) check their own results; the checksum is
 * the bits of the last value. */
int k_nbody(uint64_t reps, uint64_t *sum);
int k_stencil(uint64_t reps, uint64_t *sum);
int k_spectral(uint64_t reps, uint64_t *sum);
int k_lu(uint64_t reps, uint64_t *sum);
int k_fft(uint64_t reps, uint64_t *sum);
int k_montecarlo(uint64_t reps, uint64_t *sum);

/* telco (telco.c): `reps` billing passes of INPUT into OUTPUT; the checksum folds each
 * pass's sums in cents. The decimal64 form exists only when compiled with -DRH_DECIMAL64. */
int k_telco_double(uint64_t reps, const char *input, const char *output, uint64_t *sum);
#ifdef RH_DECIMAL64
int k_telco_decimal64(uint64_t reps, const char *input, const char *output, uint64_t *sum);
#endif

#endif
