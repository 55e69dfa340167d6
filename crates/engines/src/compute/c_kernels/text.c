/* racehorse compute: regex (Kernighan-Pike matcher), parse (recursive descent), align
 * (edit distance). */
#include "common.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGEX_LINES 20000
#define REGEX_LINE_LEN 60

static const char *PATTERNS[] = {"ab.*cd", "^fa.*c", "b.c.d", "a*bc*de", "hg.*fe.*a$", "e.e.e"};

static int match_here(const char *re, const uint8_t *t, size_t n);

static int match_star(int c, const char *re, const uint8_t *t, size_t n) {
    size_t i = 0;
    for (;;) {
        if (match_here(re, t + i, n - i)) return 1;
        if (i < n && (t[i] == c || c == '.')) i++;
        else return 0;
    }
}

static int match_here(const char *re, const uint8_t *t, size_t n) {
    if (re[0] == '\0') return 1;
    if (re[1] == '*') return match_star(re[0], re + 2, t, n);
    if (re[0] == '$' && re[1] == '\0') return n == 0;
    if (n > 0 && (re[0] == '.' || re[0] == t[0])) return match_here(re + 1, t + 1, n - 1);
    return 0;
}

static int re_match(const char *re, const uint8_t *t, size_t n) {
    size_t i;
    if (re[0] == '^') return match_here(re + 1, t, n);
    for (i = 0; i <= n; i++)
        if (match_here(re, t + i, n - i)) return 1;
    return 0;
}

int k_regex(uint64_t reps, uint64_t *out) {
    uint8_t *text = malloc(REGEX_LINES * REGEX_LINE_LEN);
    uint64_t acc = 0, rep;
    size_t i, p, l;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x5245};
        uint64_t matches = 0;
        for (i = 0; i < REGEX_LINES * REGEX_LINE_LEN; i++) text[i] = (uint8_t)('a' + rng_below(&r, 8));
        for (p = 0; p < sizeof PATTERNS / sizeof PATTERNS[0]; p++) {
            uint64_t m = 0;
            for (l = 0; l < REGEX_LINES; l++) m += (uint64_t)re_match(PATTERNS[p], text + l * REGEX_LINE_LEN, REGEX_LINE_LEN);
            matches = matches * 1000003u + m;
        }
        acc = fold(acc, matches);
    }
    free(text);
    *out = acc;
    return 0;
}

/* The generator: expr := term (+|- term)*, term := factor (* factor)*, factor := n | (expr). */
typedef struct { rng_t r; char *out; size_t len; } gen_t;

static void put(gen_t *g, const char *s) { size_t n = strlen(s); memcpy(g->out + g->len, s, n); g->len += n; }

static uint32_t gen_expr(gen_t *g, unsigned depth);

static uint32_t gen_factor(gen_t *g, unsigned depth) {
    if (depth == 0 || rng_below(&g->r, 3) != 0) {
        uint32_t n = (uint32_t)rng_below(&g->r, 10000);
        char buf[16];
        snprintf(buf, sizeof buf, "%u", n);
        put(g, buf);
        return n;
    } else {
        uint32_t v;
        put(g, "(");
        v = gen_expr(g, depth - 1);
        put(g, ")");
        return v;
    }
}

static uint32_t gen_term(gen_t *g, unsigned depth) {
    uint32_t v = gen_factor(g, depth);
    uint64_t k, n = rng_below(&g->r, 3);
    for (k = 0; k < n; k++) { put(g, " * "); v *= gen_factor(g, depth); }
    return v;
}

static uint32_t gen_expr(gen_t *g, unsigned depth) {
    uint32_t v = gen_term(g, depth);
    uint64_t k, n = rng_below(&g->r, 3);
    for (k = 0; k < n; k++) {
        int plus = rng_below(&g->r, 2) == 0;
        uint32_t t;
        put(g, plus ? " + " : " - ");
        t = gen_term(g, depth);
        v = plus ? v + t : v - t;
    }
    return v;
}

typedef struct { const char *s; size_t pos; } parser_t;

static char peek(parser_t *p) { while (p->s[p->pos] == ' ') p->pos++; return p->s[p->pos]; }
static uint32_t p_expr(parser_t *p);

static uint32_t p_factor(parser_t *p) {
    uint32_t v = 0;
    if (peek(p) == '(') {
        p->pos++;
        v = p_expr(p);
        if (peek(p) == ')') p->pos++;
        return v;
    }
    while (p->s[p->pos] >= '0' && p->s[p->pos] <= '9') { v = v * 10 + (uint32_t)(p->s[p->pos] - '0'); p->pos++; }
    return v;
}

static uint32_t p_term(parser_t *p) {
    uint32_t v = p_factor(p);
    while (peek(p) == '*') { p->pos++; v *= p_factor(p); }
    return v;
}

static uint32_t p_expr(parser_t *p) {
    uint32_t v = p_term(p);
    for (;;) {
        char c = peek(p);
        if (c == '+') { p->pos++; v += p_term(p); }
        else if (c == '-') { p->pos++; v -= p_term(p); }
        else return v;
    }
}

#define PARSE_EXPRS 20000

int k_parse(uint64_t reps, uint64_t *out) {
    size_t cap = 64u << 20;
    char *text = malloc(cap);
    uint32_t *want = malloc(PARSE_EXPRS * sizeof *want);
    uint64_t acc = 0, rep;
    size_t i;
    for (rep = 0; rep < reps; rep++) {
        gen_t g;
        parser_t p;
        uint64_t sum = 0;
        g.r.s = rep ^ 0x5041; g.out = text; g.len = 0;
        for (i = 0; i < PARSE_EXPRS; i++) {
            want[i] = gen_expr(&g, 6);
            put(&g, ";");
            if (g.len + (1u << 20) > cap) { fprintf(stderr, "parse: text too long\n"); return 1; }
        }
        text[g.len] = '\0';
        p.s = text; p.pos = 0;
        for (i = 0; i < PARSE_EXPRS; i++) {
            uint32_t v = p_expr(&p);
            if (peek(&p) != ';' || v != want[i]) { fprintf(stderr, "parse: expression %zu is wrong\n", i); return 1; }
            p.pos++;
            sum += v;
        }
        acc = fold(acc, sum ^ (uint64_t)g.len);
    }
    free(text); free(want);
    *out = acc;
    return 0;
}

#define ALIGN_LEN 2000

static uint32_t edit_distance(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint32_t *prev, uint32_t *cur) {
    size_t i, j;
    for (j = 0; j <= nb; j++) prev[j] = (uint32_t)j;
    for (i = 0; i < na; i++) {
        uint32_t *t;
        cur[0] = (uint32_t)i + 1;
        for (j = 0; j < nb; j++) {
            uint32_t sub = prev[j] + (a[i] != b[j]), del = prev[j + 1] + 1, ins = cur[j] + 1;
            uint32_t m = sub < del ? sub : del;
            cur[j + 1] = m < ins ? m : ins;
        }
        t = prev; prev = cur; cur = t;
    }
    return prev[nb];
}

int k_align(uint64_t reps, uint64_t *out) {
    static const uint8_t ACGT[4] = {'A', 'C', 'G', 'T'};
    uint8_t a[ALIGN_LEN], b[2 * ALIGN_LEN + 8];
    uint32_t prev[2 * ALIGN_LEN + 8], cur[2 * ALIGN_LEN + 8];
    uint64_t acc = 0, rep;
    for (rep = 0; rep < reps; rep++) {
        rng_t r = {rep ^ 0x414C};
        size_t i, nb = 0;
        uint32_t d;
        for (i = 0; i < ALIGN_LEN; i++) a[i] = ACGT[rng_below(&r, 4)];
        for (i = 0; i < ALIGN_LEN; i++) {
            switch (rng_below(&r, 30)) {
            case 0: b[nb++] = ACGT[rng_below(&r, 4)]; break;
            case 1: break;
            case 2: b[nb++] = a[i]; b[nb++] = ACGT[rng_below(&r, 4)]; break;
            default: b[nb++] = a[i];
            }
        }
        d = edit_distance(a, ALIGN_LEN, b, nb, prev, cur);
        acc = fold(acc, d);
    }
    *out = acc;
    return 0;
}
