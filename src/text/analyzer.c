/* Analyzers: a tokenizer followed by a chain of 1:1-or-drop filters, run over one value with
 * all scratch on the stack (plus one heap buffer per call for terms over 4 KiB). Built-in
 * analyzers are defined here; analysis settings are parsed in registry.c. */
#include <libstemmer.h>
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"

SC_ALLOC_POOL_DEFINE(sc__text_pool, "text.analyzers");

void sc__filter_fini(sc__filter *f)
{
    sc__stopset_free(f->stop);
    sc_alloc_free(&sc__text_pool, f->lang);
    sc_alloc_free(&sc__text_pool, f->sep);
    sc_alloc_free(&sc__text_pool, f->filler);
    sc__synmap_free(f->syn);
    for (size_t i = 0; i < 2 * f->n_ovr; i++)
        sc_alloc_free(&sc__text_pool, f->ovr[i]);
    sc_alloc_free(&sc__text_pool, f->ovr);
    f->ovr = NULL;
    f->n_ovr = 0;
    f->stop = NULL;
    f->lang = f->sep = f->filler = NULL;
    f->syn = NULL;
}

sc_status sc__analyzer_new_ex(const char *name, sc__tokenizer_kind tok,
                              const sc__tokenizer_opts *topts, sc__filter *filters,
                              size_t n_filters, sc__charfilter **cfs, size_t n_cfs,
                              sc_analyzer **out)
{
    *out = NULL;
    sc_analyzer *a = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*a));
    size_t name_len = strlen(name);
    char *nm = sc_alloc_malloc(&sc__text_pool, name_len + 1);
    if (nm)
        memcpy(nm, name, name_len + 1);
    sc__filter *fs = sc_alloc_calloc(&sc__text_pool, n_filters ? n_filters : 1, sizeof(*fs));
    sc__charfilter **cf = sc_alloc_calloc(&sc__text_pool, n_cfs ? n_cfs : 1, sizeof(*cf));
    if (!a || !nm || !fs || !cf) {
        sc_alloc_free(&sc__text_pool, a);
        sc_alloc_free(&sc__text_pool, nm);
        sc_alloc_free(&sc__text_pool, fs);
        sc_alloc_free(&sc__text_pool, cf);
        for (size_t i = 0; i < n_filters; i++)
            sc__filter_fini(&filters[i]);
        for (size_t i = 0; i < n_cfs; i++)
            sc__charfilter_free(cfs[i]);
        return SC_ENOMEM;
    }
    a->name = nm;
    a->tokenizer = tok;
    if (topts)
        a->topts = *topts;
    a->max_token_len = a->topts.max_len ? a->topts.max_len : SC__TEXT_MAX_TOKEN_LEN;
    if ((tok == SC__TOK_NGRAM || tok == SC__TOK_EDGE_NGRAM) &&
        a->max_token_len < 2 * a->topts.max_gram)
        a->max_token_len = 2 * a->topts.max_gram; /* sizes the term buffer: grams are that short */
    a->topts.max_len = a->max_token_len;
    if (n_filters)
        memcpy(fs, filters, n_filters * sizeof(*fs));
    if (n_cfs)
        memcpy(cf, cfs, n_cfs * sizeof(*cf));
    a->filters = fs;
    a->n_filters = n_filters;
    a->charfilters = cf;
    a->n_charfilters = n_cfs;
    a->lower_fused = n_filters > 0 && fs[0].kind == SC__F_LOWERCASE;
    a->stream = n_cfs > 0;
    for (size_t i = 0; i < n_filters; i++) {
        if (fs[i].kind >= SC__F_FIRST_STREAM || fs[i].kind == SC__F_KEYWORD_MARKER ||
            fs[i].kind == SC__F_STEM_OVERRIDE || fs[i].kind == SC__F_SNOWBALL)
            a->stream = true;
        if (fs[i].kind == SC__F_SNOWBALL)
            fs[i].slot = (uint8_t)a->n_stemmers++;
    }
    *out = a;
    return SC_OK;
}

sc_status sc__analyzer_new(const char *name, sc__tokenizer_kind tok, uint32_t max_token_len,
                           sc__filter *filters, size_t n_filters, sc_analyzer **out)
{
    sc__tokenizer_opts o = {max_token_len, 0, 0, 0};
    return sc__analyzer_new_ex(name, tok, &o, filters, n_filters, NULL, 0, out);
}

void sc_analyzer_free(sc_analyzer *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_filters; i++)
        sc__filter_fini(&a->filters[i]);
    for (size_t i = 0; i < a->n_charfilters; i++)
        sc__charfilter_free(a->charfilters[i]);
    sc_alloc_free(&sc__text_pool, a->charfilters);
    sc_alloc_free(&sc__text_pool, a->filters);
    sc_alloc_free(&sc__text_pool, a->name);
    sc_alloc_free(&sc__text_pool, a);
}

void sc__analyzer_view(sc_analyzer *a, sc__tokenizer_kind tok, const sc__tokenizer_opts *topts,
                       sc__filter *filters, size_t n_filters)
{
    memset(a, 0, sizeof(*a));
    a->name = (char *)"synonym_rules";
    a->tokenizer = tok;
    if (topts)
        a->topts = *topts;
    a->max_token_len = a->topts.max_len ? a->topts.max_len : SC__TEXT_MAX_TOKEN_LEN;
    if ((tok == SC__TOK_NGRAM || tok == SC__TOK_EDGE_NGRAM) &&
        a->max_token_len < 2 * a->topts.max_gram)
        a->max_token_len = 2 * a->topts.max_gram;
    a->topts.max_len = a->max_token_len;
    a->filters = filters;
    a->n_filters = n_filters;
    a->lower_fused = n_filters > 0 && filters[0].kind == SC__F_LOWERCASE;
    for (size_t i = 0; i < n_filters; i++) {
        if (filters[i].kind >= SC__F_FIRST_STREAM || filters[i].kind == SC__F_KEYWORD_MARKER ||
            filters[i].kind == SC__F_STEM_OVERRIDE || filters[i].kind == SC__F_SNOWBALL)
            a->stream = true;
        if (filters[i].kind == SC__F_SNOWBALL)
            filters[i].slot = (uint8_t)a->n_stemmers++;
    }
}

const char *sc_analyzer_name(const sc_analyzer *a)
{
    return a->name;
}

sc_status sc_analyzer_builtin(const char *name, sc_analyzer **out)
{
    *out = NULL;
    sc__filter f[4];
    memset(f, 0, sizeof(f));
    if (strcmp(name, "standard") == 0) {
        f[0].kind = SC__F_LOWERCASE;
        return sc__analyzer_new(name, SC__TOK_STANDARD, 0, f, 1, out);
    }
    if (strcmp(name, "simple") == 0) {
        f[0].kind = SC__F_LOWERCASE;
        return sc__analyzer_new(name, SC__TOK_LETTER, 0, f, 1, out);
    }
    if (strcmp(name, "whitespace") == 0)
        return sc__analyzer_new(name, SC__TOK_WHITESPACE, 0, f, 0, out);
    if (strcmp(name, "keyword") == 0)
        return sc__analyzer_new(name, SC__TOK_KEYWORD, 0, f, 0, out);
    if (strcmp(name, "stop") == 0) {
        f[0].kind = SC__F_LOWERCASE;
        f[1].kind = SC__F_STOP;
        SC_TRY(sc__stopset_english(&f[1].stop));
        return sc__analyzer_new(name, SC__TOK_LETTER, 0, f, 2, out);
    }
    if (strcmp(name, "english") == 0) {
        /* Lucene runs possessive removal before lowercasing; lowercasing first gives the same
         * terms (only 'S' lowercases to 's', nothing to a quote) and lets it fuse with the
         * token copy. */
        f[0].kind = SC__F_LOWERCASE;
        f[1].kind = SC__F_POSSESSIVE;
        f[2].kind = SC__F_STOP;
        f[3].kind = SC__F_PORTER;
        SC_TRY(sc__stopset_english(&f[2].stop));
        return sc__analyzer_new(name, SC__TOK_STANDARD, 0, f, 4, out);
    }
    return SC_ENOTFOUND;
}

/* ---- running -------------------------------------------------------------------------- */

#define STACK_TERM_BYTES 4096

typedef struct run {
    const sc_analyzer *a;
    sc_slice text;
    sc_token_sink sink;
    void *ctx;
    uint32_t position; /* next tokenizer position */
    sc__term term;
} run;

static size_t copy_replacing(uint8_t *dst, const uint8_t *src, size_t n, bool lower)
{
    size_t i = 0, o = 0;
    while (i < n) {
        size_t start = i;
        uint32_t cp = sc__utf8_next(src, n, &i);
        if (lower) {
            o += sc__lowercase(dst + o, src + start, cp == 0xFFFD ? 0 : i - start);
            if (cp == 0xFFFD)
                o += sc_utf8_put(dst + o, cp);
        } else {
            o += sc_utf8_put(dst + o, cp);
        }
    }
    return o;
}

static sc_status on_raw(void *vctx, size_t start, size_t end, bool valid, sc_token_type type)
{
    run *r = vctx;
    const sc_analyzer *a = r->a;
    uint32_t pos = r->position++;
    const uint8_t *src = r->text.ptr + start;
    size_t n = end - start;
    sc__term *t = &r->term;
    if (!valid) {
        t->len = copy_replacing(t->buf, src, n, a->lower_fused);
    } else if (a->lower_fused) {
        /* ASCII bytes inline; the first non-ASCII byte hands the rest to sc__lowercase. */
        size_t i = 0;
        for (; i < n && src[i] < 0x80; i++)
            t->buf[i] = (uint8_t)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
        t->len = i + (i < n ? sc__lowercase(t->buf + i, src + i, n - i) : 0);
    } else {
        memcpy(t->buf, src, n);
        t->len = n;
    }
    size_t first = a->lower_fused ? 1 : 0;
    if (!sc__filters_run(a->filters + first, a->n_filters - first, t))
        return SC_OK;
    sc_token tok = {t->buf, (uint32_t)t->len, pos, (uint32_t)start, (uint32_t)end, type, 1};
    return r->sink(r->ctx, &tok);
}

sc_status sc_analyzer_analyze(const sc_analyzer *a, sc_slice text, sc_token_sink sink, void *ctx)
{
    if (text.len > UINT32_MAX)
        return SC_ELIMIT;
    if (a->sayt_base)
        return sc__sayt_analyze(a, text, sink, ctx);
    if (a->stream)
        return sc__analyze_stream(a, text, sink, ctx);
    /* Terms from standard/letter/whitespace are at most 256 UTF-16 units (< 1 KiB of UTF-8);
     * only keyword terms can be longer. Invalid bytes expand up to 3x when replaced. */
    size_t need = 3 * text.len + 16;
    if (a->tokenizer != SC__TOK_KEYWORD && need > 4 * (size_t)a->max_token_len + 16)
        need = 4 * (size_t)a->max_token_len + 16;
    need = 2 * need + 16;
    uint8_t stack_buf[STACK_TERM_BYTES];
    uint16_t stack_u16[STACK_TERM_BYTES / 2];
    uint8_t *heap = NULL;
    run r = {a,
             text,
             sink,
             ctx,
             0,
             {stack_buf, 0, sizeof(stack_buf), stack_u16, sizeof(stack_u16) / sizeof(stack_u16[0]),
              NULL, NULL, false}};
    if (need > sizeof(stack_buf)) {
        heap = sc_alloc_malloc(&sc__text_pool, need + need / 2 * sizeof(uint16_t) + 16);
        if (!heap)
            return SC_ENOMEM;
        r.term.buf = heap;
        r.term.cap = need;
        r.term.u16 = (uint16_t *)(void *)(heap + ((need + 15) & ~(size_t)15));
        r.term.u16_cap = need / 2;
    }
    for (size_t i = 0; i < a->n_filters; i++) {
        if (a->filters[i].kind == SC__F_SNOWBALL_EN && !r.term.snowball) {
            /* libstemmer instances are not thread-safe: one per call */
            r.term.snowball = sb_stemmer_new("english", NULL);
            if (!r.term.snowball) {
                sc_alloc_free(&sc__text_pool, heap);
                return SC_ENOMEM;
            }
        }
    }
    sc_status st = a->tokenizer == SC__TOK_NGRAM || a->tokenizer == SC__TOK_EDGE_NGRAM
                       ? sc__tokenize_ngram(a->tokenizer, &a->topts, text, on_raw, &r)
                       : sc__tokenize(a->tokenizer, a->max_token_len, text, on_raw, &r);
    if (r.term.snowball)
        sb_stemmer_delete(r.term.snowball);
    sc_alloc_free(&sc__text_pool, heap);
    return st;
}

const char *sc_token_type_name(sc_token_type type)
{
    switch (type) {
    case SC_TOKEN_WORD: return "word";
    case SC_TOKEN_ALPHANUM: return "<ALPHANUM>";
    case SC_TOKEN_NUM: return "<NUM>";
    case SC_TOKEN_SOUTHEAST_ASIAN: return "<SOUTHEAST_ASIAN>";
    case SC_TOKEN_IDEOGRAPHIC: return "<IDEOGRAPHIC>";
    case SC_TOKEN_HIRAGANA: return "<HIRAGANA>";
    case SC_TOKEN_KATAKANA: return "<KATAKANA>";
    case SC_TOKEN_HANGUL: return "<HANGUL>";
    case SC_TOKEN_EMOJI: return "<EMOJI>";
    case SC_TOKEN_SHINGLE: return "shingle";
    case SC_TOKEN_SYNONYM: return "SYNONYM";
    }
    return "word";
}

sc_status sc_analyzer_char_filter(const sc_analyzer *a, sc_slice text, uint8_t **out,
                                  size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (a->n_charfilters == 0) {
        uint8_t *c = sc_alloc_malloc(&sc__text_pool, text.len + 1);
        if (!c)
            return SC_ENOMEM;
        memcpy(c, text.ptr, text.len);
        *out = c;
        *out_len = text.len;
        return SC_OK;
    }
    sc__filtered f;
    SC_TRY(sc__charfilters_run(a->charfilters, a->n_charfilters, text, &f));
    *out = f.text;
    *out_len = f.len;
    f.text = NULL;
    sc__filtered_fini(&f);
    return SC_OK;
}

void sc_analyzer_text_free(uint8_t *p)
{
    sc_alloc_free(&sc__text_pool, p);
}
