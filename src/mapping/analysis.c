/* The analysis hook of documents bound to src/text analyzers; see analysis.h. */
#include "mapping/analysis.h"

#include <string.h>
#include <stdbool.h>

#include "mapping/internal.h"

typedef struct sink_ctx {
    sc_arena *arena;
    sc_index_token *toks;
    size_t n, cap;
    sc_status st;
} sink_ctx;

static sc_status sink(void *ctx, const sc_token *tok)
{
    sink_ctx *c = ctx;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 32;
        sc_index_token *nt = sc_arena_alloc(c->arena, ncap * sizeof(*nt));
        if (!nt)
            return SC_ELIMIT;
        if (c->n)
            memcpy(nt, c->toks, c->n * sizeof(*nt));
        c->toks = nt;
        c->cap = ncap;
    }
    uint8_t *t = sc_arena_alloc(c->arena, tok->len ? tok->len : 1);
    if (!t)
        return SC_ELIMIT;
    memcpy(t, tok->term, tok->len);
    c->toks[c->n].term = sc_slice_make(t, tok->len);
    c->toks[c->n].position = tok->position;
    c->n++;
    return SC_OK;
}

static sc_status analyze(void *ctx, const char *analyzer, sc_slice text, sc_arena *arena,
                         sc_index_token **tokens, size_t *n_tokens)
{
    const sc_analyzer_registry *reg = ctx;
    const sc_analyzer *a = analyzer ? sc_analyzer_registry_get(reg, sc_slice_cstr(analyzer))
                                    : sc_analyzer_registry_default(reg);
    if (!a && analyzer && strcmp(analyzer, "default") == 0)
        a = sc_analyzer_registry_default(reg);
    if (!a)
        return SC_EINVAL;
    sink_ctx c = {.arena = arena};
    SC_TRY(sc_analyzer_analyze(a, text, sink, &c));
    *tokens = c.toks;
    *n_tokens = c.n;
    return SC_OK;
}

typedef struct one_token {
    sc_arena *arena;
    sc_slice out;
    bool seen;
} one_token;

static sc_status keep_token(void *ctx, const sc_token *t)
{
    one_token *o = ctx;
    if (o->seen)
        return SC_OK;
    char *copy = sc_arena_alloc(o->arena, t->len ? t->len : 1);
    if (!copy)
        return SC_ELIMIT;
    if (t->len)
        memcpy(copy, t->term, t->len);
    o->out = sc_slice_make(copy, t->len);
    o->seen = true;
    return SC_OK;
}

sc_status sc_mapping_normalize_with(const sc_analyzer_registry *reg, const char *normalizer,
                                    sc_slice text, sc_arena *arena, sc_slice *out)
{
    if (!normalizer) {
        *out = text;
        return SC_OK;
    }
    const sc_analyzer *a = sc_analyzer_registry_normalizer(reg, sc_slice_cstr(normalizer));
    if (!a)
        return SC_EINVAL;
    one_token o = {.arena = arena};
    SC_TRY(sc_analyzer_analyze(a, text, keep_token, &o));
    *out = o.seen ? o.out : sc_slice_make("", 0);
    return SC_OK;
}

static sc_status normalize(void *ctx, const char *normalizer, sc_slice text, sc_arena *arena,
                           sc_slice *out)
{
    return sc_mapping_normalize_with(ctx, normalizer, text, arena, out);
}

void sc_mapping_analysis_init(sc_mapping_analysis *a, const sc_analyzer_registry *reg)
{
    a->ctx = (void *)reg;
    a->analyze = analyze;
    a->normalize = normalize;
}

static int known(const sc_analyzer_registry *reg, const char *name)
{
    return !name || strcmp(name, "default") == 0 ||
           sc_analyzer_registry_get(reg, sc_slice_cstr(name)) != NULL;
}

sc_status sc_mapping_check_analysis(const sc_mapping *m, const sc_analyzer_registry *reg,
                                    sc_mapping_error *err)
{
    for (size_t i = 0; i < sc_mapping_n_fields(m); i++) {
        const sc_mapping_field *f = sc_mapping_field_at(m, (uint32_t)i);
        const char *names[3] = {f->analyzer, f->search_analyzer, f->search_quote_analyzer};
        for (int k = 0; k < 3; k++) {
            if (!known(reg, names[k])) {
                sc__mapping_err(err, "mapper_parsing_exception",
                                "analyzer [%s] has not been configured in mappings", names[k]);
                return SC_EINVAL;
            }
        }
        if (f->normalizer && strcmp(f->normalizer, "lowercase") != 0) {
            sc__mapping_err(err, "mapper_parsing_exception",
                            "normalizer [%s] not found for field [%s]", f->normalizer, f->path);
            return SC_EINVAL;
        }
    }
    return SC_OK;
}
