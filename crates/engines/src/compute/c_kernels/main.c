/* racehorse compute: the C kernels' driver. Usage: rh-kernels CASE REPS [INPUT OUTPUT]
 * (telco's forms take the input and output files); prints "CHECKSUM WALL_NS CPU_NS" (the
 * kernel's own elapsed time, CLOCK_MONOTONIC, and the process's CPU time,
 * CLOCK_PROCESS_CPUTIME_ID) or fails with exit 1. */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct { const char *name; int (*fn)(uint64_t, uint64_t *); } CASES[] = {
    {"sort", k_sort},   {"hash", k_hash},           {"lz", k_lz},           {"regex", k_regex},
    {"parse", k_parse}, {"align", k_align},         {"bfs", k_bfs},         {"tictactoe", k_tictactoe},
    {"nqueens", k_nqueens}, {"des", k_des},         {"sieve", k_sieve},     {"bignum", k_bignum},
    {"nbody", k_nbody}, {"stencil", k_stencil},     {"montecarlo", k_montecarlo},
    {"spectral", k_spectral}, {"lu", k_lu},         {"fft", k_fft},
};

typedef int (*telco_fn)(uint64_t, const char *, const char *, uint64_t *);

static const struct { const char *name; telco_fn fn; } TELCO[] = {
    {"telco-double", k_telco_double},
#ifdef RH_DECIMAL64
    {"telco-decimal64", k_telco_decimal64},
#endif
};

static uint64_t ns(struct timespec a, struct timespec b) {
    return (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
}

int main(int argc, char **argv) {
    size_t i;
    int (*int_fn)(uint64_t, uint64_t *) = NULL;
    telco_fn telco = NULL;
    uint64_t reps, sum = 0;
    struct timespec a, b, ca, cb;
    int rc;
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: %s CASE REPS [INPUT OUTPUT]\n", argv[0]);
        return 2;
    }
    for (i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        if (argc == 3 && strcmp(argv[1], CASES[i].name) == 0) int_fn = CASES[i].fn;
    for (i = 0; i < sizeof TELCO / sizeof TELCO[0]; i++)
        if (argc == 5 && strcmp(argv[1], TELCO[i].name) == 0) telco = TELCO[i].fn;
    if (!int_fn && !telco) {
        fprintf(stderr, "unknown case %s (or wrong arguments for it)\n", argv[1]);
        return 2;
    }
    reps = strtoull(argv[2], NULL, 10);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
    clock_gettime(CLOCK_MONOTONIC, &a);
    rc = int_fn ? int_fn(reps, &sum) : telco(reps, argv[3], argv[4], &sum);
    clock_gettime(CLOCK_MONOTONIC, &b);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
    if (rc != 0) return 1;
    printf("%llu %llu %llu\n", (unsigned long long)sum, (unsigned long long)ns(a, b),
           (unsigned long long)ns(ca, cb));
    return 0;
}
