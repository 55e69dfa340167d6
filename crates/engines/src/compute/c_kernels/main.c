/* racehorse compute: the C kernels' driver. Usage: rh-kernels CASE REPS; prints
 * "CHECKSUM WALL_NS CPU_NS" (the kernel's own elapsed time, CLOCK_MONOTONIC, and the
 * process's CPU time, CLOCK_PROCESS_CPUTIME_ID) or fails with exit 1. */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct { const char *name; int (*fn)(uint64_t, uint64_t *); } CASES[] = {
    {"sort", k_sort},   {"hash", k_hash},           {"lz", k_lz},           {"regex", k_regex},
    {"parse", k_parse}, {"align", k_align},         {"bfs", k_bfs},         {"tictactoe", k_tictactoe},
    {"nqueens", k_nqueens}, {"des", k_des},         {"sieve", k_sieve},     {"bignum", k_bignum},
};

int main(int argc, char **argv) {
    size_t i;
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASE REPS\n", argv[0]);
        return 2;
    }
    for (i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (strcmp(argv[1], CASES[i].name) == 0) {
            uint64_t reps = strtoull(argv[2], NULL, 10), sum = 0;
            struct timespec a, b, ca, cb;
            int rc;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
            clock_gettime(CLOCK_MONOTONIC, &a);
            rc = CASES[i].fn(reps, &sum);
            clock_gettime(CLOCK_MONOTONIC, &b);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
            if (rc != 0) return 1;
            printf("%llu %llu %llu\n", (unsigned long long)sum,
                   (unsigned long long)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)),
                   (unsigned long long)((cb.tv_sec - ca.tv_sec) * 1000000000LL + (cb.tv_nsec - ca.tv_nsec)));
            return 0;
        }
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
