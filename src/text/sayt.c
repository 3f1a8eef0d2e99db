/* search_as_you_type analyzers (internal.h): a base analyzer's tokens as shingles of n tokens
 * (Lucene ShingleFilter, min = max = n, no unigrams, " " between tokens), or as the edge
 * n-grams (1..20 code points) of the shingles of 1..n tokens starting at each token (the
 * `_index_prefix` subfield). */
#include <stdio.h>
#include <string.h>

#include "text/internal.h"

#define MAX_GRAM 20

sc_status sc__sayt_new(const sc_analyzer *base, bool prefix, uint32_t n, sc_analyzer **out)
{
    *out = NULL;
    char name[256];
    snprintf(name, sizeof name, prefix ? "%s#prefix%u" : "%s#%ugram", base->name, n);
    sc_analyzer *a = sc_alloc_calloc(&sc__text_pool, 1, sizeof *a);
    size_t len = strlen(name);
    char *nm = sc_alloc_malloc(&sc__text_pool, len + 1);
    if (!a || !nm) {
        sc_alloc_free(&sc__text_pool, a);
        sc_alloc_free(&sc__text_pool, nm);
        return SC_ENOMEM;
    }
    memcpy(nm, name, len + 1);
    a->name = nm;
    a->sayt_base = base;
    a->sayt_n = n;
    a->sayt_prefix = prefix;
    a->max_token_len = base->max_token_len;
    a->tokenizer = base->tokenizer;
    *out = a;
    return SC_OK;
}

typedef struct btok {
    size_t off; /* term bytes in buf */
    uint32_t len, position, start, end;
} btok;

typedef struct coll {
    btok *v;
    size_t n, cap;
    uint8_t *buf;
    size_t blen, bcap;
} coll;

static sc_status keep(void *ctx, const sc_token *t)
{
    coll *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        btok *v = sc_alloc_realloc(&sc__text_pool, c->v, cap * sizeof *v);
        if (!v)
            return SC_ENOMEM;
        c->v = v;
        c->cap = cap;
    }
    if (c->blen + t->len > c->bcap) {
        size_t cap = 2 * (c->blen + t->len) + 64;
        uint8_t *b = sc_alloc_realloc(&sc__text_pool, c->buf, cap);
        if (!b)
            return SC_ENOMEM;
        c->buf = b;
        c->bcap = cap;
    }
    if (c->n && t->position == c->v[c->n - 1].position)
        return SC_OK; /* stacked tokens: the first one stands */
    memcpy(c->buf + c->blen, t->term, t->len);
    c->v[c->n++] = (btok){c->blen, t->len, t->position, t->start_offset, t->end_offset};
    c->blen += t->len;
    return SC_OK;
}

/* The shingle of tokens [i, i + k) into out (cap bytes); its length. */
static size_t shingle(const coll *c, size_t i, size_t k, uint8_t *out, size_t cap)
{
    size_t o = 0;
    for (size_t j = i; j < i + k; j++) {
        if (j > i && o < cap)
            out[o++] = ' ';
        size_t l = c->v[j].len < cap - o ? c->v[j].len : cap - o;
        memcpy(out + o, c->buf + c->v[j].off, l);
        o += l;
    }
    return o;
}

sc_status sc__sayt_analyze(const sc_analyzer *a, sc_slice text, sc_token_sink sink, void *ctx)
{
    coll c = {0};
    sc_status st = sc_analyzer_analyze(a->sayt_base, text, keep, &c);
    size_t cap = 0;
    for (size_t i = 0; i < c.n; i++)
        cap = c.v[i].len > cap ? c.v[i].len : cap;
    cap = (cap + 1) * a->sayt_n + 1;
    uint8_t *sh = st == SC_OK ? sc_alloc_malloc(&sc__text_pool, cap) : NULL;
    if (st == SC_OK && !sh)
        st = SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < c.n; i++) {
        if (!a->sayt_prefix) {
            if (i + a->sayt_n > c.n)
                break;
            size_t l = shingle(&c, i, a->sayt_n, sh, cap);
            sc_token t = {sh,
                          (uint32_t)l,
                          c.v[i].position,
                          c.v[i].start,
                          c.v[i + a->sayt_n - 1].end,
                          SC_TOKEN_SHINGLE,
                          1};
            st = sink(ctx, &t);
            continue;
        }
        /* edge n-grams of the longest shingle at i: they include those of the shorter ones */
        size_t k = c.n - i < a->sayt_n ? c.n - i : a->sayt_n;
        size_t l = shingle(&c, i, k, sh, cap), cps = 0;
        for (size_t b = 1; st == SC_OK && b <= l && cps < MAX_GRAM; b++) {
            if (b < l && (sh[b] & 0xC0) == 0x80)
                continue; /* inside a code point */
            cps++;
            sc_token t = {sh,           (uint32_t)b,        c.v[i].position,
                          c.v[i].start, c.v[i + k - 1].end, SC_TOKEN_SHINGLE, 1};
            st = sink(ctx, &t);
        }
    }
    sc_alloc_free(&sc__text_pool, sh);
    sc_alloc_free(&sc__text_pool, c.v);
    sc_alloc_free(&sc__text_pool, c.buf);
    return st;
}
