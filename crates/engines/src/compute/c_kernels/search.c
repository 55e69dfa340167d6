/* racehorse compute: bfs (breadth-first search), tictactoe (complete minimax), nqueens. */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BFS_NODES (1u << 14)
#define BFS_EDGES (4u * BFS_NODES)

int k_bfs(uint64_t reps, uint64_t *out) {
    uint32_t *eu = malloc(BFS_EDGES * 4), *ev = malloc(BFS_EDGES * 4), *start = malloc((BFS_NODES + 1) * 4);
    uint32_t *fill = malloc((BFS_NODES + 1) * 4), *adj = malloc(2 * BFS_EDGES * 4), *dist = malloc(BFS_NODES * 4);
    uint32_t *queue = malloc(BFS_NODES * 4);
    uint64_t acc = 0, rep;
    size_t i, s;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x4246};
        for (i = 0; i < BFS_EDGES; i++) {
            eu[i] = (uint32_t)rng_below(&r, BFS_NODES);
            ev[i] = (uint32_t)rng_below(&r, BFS_NODES);
        }
        memset(start, 0, (BFS_NODES + 1) * 4);
        for (i = 0; i < BFS_EDGES; i++) { start[eu[i] + 1]++; start[ev[i] + 1]++; }
        for (i = 0; i < BFS_NODES; i++) start[i + 1] += start[i];
        memcpy(fill, start, (BFS_NODES + 1) * 4);
        for (i = 0; i < BFS_EDGES; i++) { adj[fill[eu[i]]++] = ev[i]; adj[fill[ev[i]]++] = eu[i]; }
        for (s = 0; s < 8; s++) {
            size_t src = (s * 7919 + (size_t)rep) % BFS_NODES, head = 0, tail = 0;
            uint64_t sum = 0;
            memset(dist, 0xff, BFS_NODES * 4);
            dist[src] = 0;
            queue[tail++] = (uint32_t)src;
            while (head < tail) {
                uint32_t u = queue[head++], k;
                for (k = start[u]; k < start[u + 1]; k++) {
                    uint32_t v = adj[k];
                    if (dist[v] == UINT32_MAX) { dist[v] = dist[u] + 1; queue[tail++] = v; }
                }
            }
            for (i = 0; i < BFS_NODES; i++)
                if (dist[i] != UINT32_MAX) sum += dist[i];
            acc = fold(acc, sum + ((uint64_t)tail << 32));
        }
    }
    free(eu); free(ev); free(start); free(fill); free(adj); free(dist); free(queue);
    *out = acc;
    return 0;
}

static const int LINES[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}};
typedef struct { uint64_t total, x_wins, o_wins, draws; } games_t;

static int won(const uint8_t *b, uint8_t p) {
    int l;
    for (l = 0; l < 8; l++)
        if (b[LINES[l][0]] == p && b[LINES[l][1]] == p && b[LINES[l][2]] == p) return 1;
    return 0;
}

static int negamax(uint8_t *b, uint8_t player, unsigned moves, games_t *g) {
    int best = -2, i, v;
    for (i = 0; i < 9; i++) {
        if (b[i] != 0) continue;
        b[i] = player;
        if (won(b, player)) {
            g->total++;
            if (player == 1) g->x_wins++; else g->o_wins++;
            v = 1;
        } else if (moves + 1 == 9) {
            g->total++;
            g->draws++;
            v = 0;
        } else {
            v = -negamax(b, (uint8_t)(3 - player), moves + 1, g);
        }
        b[i] = 0;
        if (v > best) best = v;
    }
    return best;
}

int k_tictactoe(uint64_t reps, uint64_t *out) {
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        volatile uint8_t seed = 0;
        uint8_t b[9];
        games_t g = {0, 0, 0, 0};
        int v, i;
        for (i = 0; i < 9; i++) b[i] = seed;
        v = negamax(b, 1, 0, &g);
        if (g.total != 255168 || g.x_wins != 131184 || g.o_wins != 77904 || g.draws != 46080 || v != 0) {
            fprintf(stderr, "tictactoe: wrong game counts\n");
            return 1;
        }
        acc = fold(acc, g.total ^ (g.x_wins << 20));
    }
    *out = acc;
    return 0;
}

static uint64_t queens_from(unsigned n, uint32_t cols, uint32_t d1, uint32_t d2) {
    uint32_t all = (1u << n) - 1, free_ = all & ~(cols | d1 | d2);
    uint64_t count = 0;
    if (cols == all) return 1;
    while (free_ != 0) {
        uint32_t bit = free_ & (0u - free_);
        free_ ^= bit;
        count += queens_from(n, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
    }
    return count;
}

int k_nqueens(uint64_t reps, uint64_t *out) {
    static const uint64_t KNOWN[3] = {724, 2680, 14200};
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        volatile unsigned base = 10;
        unsigned n = base + (unsigned)(rep % 3);
        uint64_t c = queens_from(n, 0, 0, 0);
        if (c != KNOWN[rep % 3]) { fprintf(stderr, "nqueens: %llu solutions for n=%u\n", (unsigned long long)c, n); return 1; }
        acc = fold(acc, c);
    }
    *out = acc;
    return 0;
}
