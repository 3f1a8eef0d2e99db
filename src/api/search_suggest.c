/* _search `suggest` with the term suggester: each suggestion's text analyzed with the field's
 * search analyzer, each token's candidates found over the target shards
 * (cluster/suggest.h), filtered by suggest_mode, sorted and cut to size, written in
 * Elasticsearch's shape ({"name": [{"text", "offset", "length", "options": [{"text", "score",
 * "freq"}]}]}); and the completion suggester over completion fields (prefix, fuzzy,
 * skip_duplicates; cluster/suggest.h); `phrase` entries go to search_suggest_phrase.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "api/search_internal.h"
#include "cluster/suggest.h"
#include "search/automaton.h"

#define FAIL(...) (sc_rest_errorf(req, resp, 400, "illegal_argument_exception", __VA_ARGS__), false)

typedef struct term_opts {
    const char *field, *analyzer;
    sc__suggest_gen gen;
    bool by_freq; /* sort: frequency */
} term_opts;

bool sc__suggest_int(const json_t *o, const char *k, int64_t lo, int64_t hi, int64_t *out)
{
    const json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return false;
    *out = json_integer_value(v);
    return true;
}

sc__suggest_gen sc__suggest_gen_defaults(void)
{
    return (sc__suggest_gen){
        .size = 5, .max_edits = 2, .prefix_length = 1, .min_word_length = 4, .accuracy = 0.5};
}

bool sc__suggest_gen_parse(sc_rest_req *req, sc_rest_resp *resp, const char *what, const json_t *o,
                           int64_t max_size, sc__suggest_gen *g)
{
    const json_t *acc = json_object_get(o, "accuracy");
    if (!sc__suggest_int(o, "size", 1, max_size, &g->size) ||
        !sc__suggest_int(o, "max_edits", 1, 2, &g->max_edits) ||
        !sc__suggest_int(o, "prefix_length", 0, 1000, &g->prefix_length) ||
        !sc__suggest_int(o, "min_word_length", 1, 1000, &g->min_word_length) ||
        !sc__suggest_int(o, "min_doc_freq", 0, INT64_MAX, &g->min_doc_freq) ||
        (acc && (!json_is_number(acc) || json_number_value(acc) < 0 || json_number_value(acc) > 1)))
        return FAIL("%s: size (1..%" PRId64 "), max_edits (1 or 2), prefix_length, "
                    "min_word_length, min_doc_freq and accuracy (0..1) must be in range",
                    what, max_size);
    if (acc)
        g->accuracy = json_number_value(acc);
    const json_t *m = json_object_get(o, "suggest_mode"),
                 *sd = json_object_get(o, "string_distance");
    const char *ms = json_is_string(m) ? json_string_value(m) : m ? "" : "missing";
    g->mode = !strcmp(ms, "missing")   ? 0
              : !strcmp(ms, "popular") ? 1
              : !strcmp(ms, "always")  ? 2
                                       : -1;
    if (g->mode < 0)
        return FAIL("%s: unknown suggest_mode [%s]", what, ms);
    if (sd && !(json_is_string(sd) && !strcmp(json_string_value(sd), "internal")))
        return FAIL("%s: only string_distance [internal] is supported", what);
    return true;
}

static bool term_options(sc_rest_req *req, sc_rest_resp *resp, const json_t *t, term_opts *o)
{
    static const char *const keys[] = {"field",
                                       "analyzer",
                                       "size",
                                       "max_edits",
                                       "prefix_length",
                                       "min_word_length",
                                       "min_doc_freq",
                                       "accuracy",
                                       "suggest_mode",
                                       "sort",
                                       "shard_size",
                                       "max_inspections",
                                       "max_term_freq",
                                       "string_distance",
                                       "lowercase_terms",
                                       NULL};
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)t, k, v) {
        const char *const *x = keys;
        while (*x && strcmp(*x, k))
            x++;
        if (!*x)
            return FAIL("[term] suggester: unknown field [%s]", k);
    }
    *o = (term_opts){.gen = sc__suggest_gen_defaults()};
    const json_t *f = json_object_get(t, "field"), *an = json_object_get(t, "analyzer");
    if (!json_is_string(f))
        return FAIL("[term] suggester requires a [field]");
    o->field = json_string_value(f);
    o->analyzer = json_is_string(an) ? json_string_value(an) : NULL;
    if (!sc__suggest_gen_parse(req, resp, "[term] suggester", t, 10000, &o->gen))
        return false;
    const json_t *s = json_object_get(t, "sort");
    const char *ss = json_is_string(s) ? json_string_value(s) : s ? "" : "score";
    if (strcmp(ss, "score") && strcmp(ss, "frequency"))
        return FAIL("[term] suggester: unknown sort [%s]", ss);
    o->by_freq = !strcmp(ss, "frequency");
    return true;
}

typedef struct compl_opts {
    const char *field, *prefix;
    int64_t size;
    bool skip_duplicates, fuzzy;
    int64_t fuzziness; /* -1 AUTO */
    int64_t prefix_length, min_length;
    bool transpositions;
} compl_opts;

static bool completion_options(sc_rest_req *req, sc_rest_resp *resp, const char *name,
                               const json_t *e, compl_opts *o)
{
    *o = (compl_opts){
        .size = 5, .fuzziness = -1, .prefix_length = 1, .min_length = 3, .transpositions = true};
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)e, k, v) {
        if (!strcmp(k, "regex"))
            return FAIL("[suggest] [%s]: [regex] completion suggestions are not supported", name);
        if (strcmp(k, "prefix") != 0 && strcmp(k, "text") != 0 && strcmp(k, "completion") != 0)
            return FAIL("[suggest] [%s]: unknown field [%s] (only one suggester per entry)", name,
                        k);
    }
    const json_t *p = json_object_get(e, "prefix");
    if (!p)
        p = json_object_get(e, "text");
    if (!json_is_string(p))
        return FAIL("[suggest] [%s]: [completion] needs a string [prefix]", name);
    o->prefix = json_string_value(p);
    const json_t *c = json_object_get(e, "completion");
    if (!json_is_object(c))
        return FAIL("[suggest] [%s]: [completion] must be an object", name);
    json_object_foreach ((json_t *)c, k, v) {
        if (!strcmp(k, "field") || !strcmp(k, "size") || !strcmp(k, "skip_duplicates") ||
            !strcmp(k, "fuzzy") || !strcmp(k, "analyzer") || !strcmp(k, "shard_size"))
            continue;
        if (!strcmp(k, "contexts") || !strcmp(k, "regex"))
            return FAIL("[completion] suggester: [%s] is not supported", k);
        return FAIL("[completion] suggester: unknown field [%s]", k);
    }
    const json_t *f = json_object_get(c, "field");
    if (!json_is_string(f))
        return FAIL("[completion] suggester requires a [field]");
    o->field = json_string_value(f);
    if (!sc__suggest_int(c, "size", 1, 10000, &o->size))
        return FAIL("[completion] suggester: [size] must be an integer from 1 to 10000");
    const json_t *sd = json_object_get(c, "skip_duplicates");
    if (sd && !json_is_boolean(sd))
        return FAIL("[completion] suggester: [skip_duplicates] must be a boolean");
    o->skip_duplicates = json_is_true(sd);
    const json_t *fz = json_object_get(c, "fuzzy");
    if (!fz)
        return true;
    o->fuzzy = true;
    if (json_is_boolean(fz)) {
        o->fuzzy = json_is_true(fz);
        return true;
    }
    if (!json_is_object(fz))
        return FAIL("[completion] suggester: [fuzzy] must be an object or a boolean");
    json_object_foreach ((json_t *)fz, k, v) {
        if (!strcmp(k, "fuzziness")) {
            const char *fs = json_is_string(v) ? json_string_value(v) : NULL;
            if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 2)
                o->fuzziness = json_integer_value(v);
            else if (fs && !strcmp(fs, "AUTO"))
                o->fuzziness = -1;
            else if (fs && (!strcmp(fs, "0") || !strcmp(fs, "1") || !strcmp(fs, "2")))
                o->fuzziness = fs[0] - '0';
            else
                return FAIL("[completion] suggester: [fuzziness] must be 0, 1, 2 or AUTO");
        } else if (!strcmp(k, "prefix_length") || !strcmp(k, "min_length")) {
            if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000)
                return FAIL("[completion] suggester: [%s] must be a non-negative integer", k);
            *(k[0] == 'p' ? &o->prefix_length : &o->min_length) = json_integer_value(v);
        } else if (!strcmp(k, "transpositions") || !strcmp(k, "unicode_aware")) {
            if (!json_is_boolean(v))
                return FAIL("[completion] suggester: [%s] must be a boolean", k);
            if (k[0] == 't')
                o->transpositions = json_is_true(v);
        } else {
            return FAIL("[completion] suggester: unknown fuzzy option [%s]", k);
        }
    }
    return true;
}

bool sc__search_parse_suggest(sc_rest_req *req, sc_rest_resp *resp, const json_t *v,
                              search_parse *sp)
{
    if (!json_is_object(v))
        return FAIL("[suggest] must be an object");
    const char *k;
    json_t *e;
    json_object_foreach ((json_t *)v, k, e) {
        if (!strcmp(k, "text"))
            continue;
        if (!json_is_object(e))
            return FAIL("[suggest] [%s] must be an object", k);
        if (json_object_get(e, "completion")) {
            compl_opts co;
            if (!completion_options(req, resp, k, e, &co))
                return false;
            continue;
        }
        if (json_object_get(e, "phrase")) {
            const char *kk;
            json_t *x;
            json_object_foreach (e, kk, x)
                if (strcmp(kk, "text") && strcmp(kk, "phrase"))
                    return FAIL("[suggest] [%s]: unknown field [%s] (only one suggester per "
                                "entry)",
                                k, kk);
            if (!sc__suggest_phrase_check(req, resp, e, json_object_get(v, "text")))
                return false;
            continue;
        }
        const json_t *t = json_object_get(e, "term");
        const char *kk;
        json_t *x;
        json_object_foreach (e, kk, x)
            if (strcmp(kk, "text") && strcmp(kk, "term"))
                return FAIL("[suggest] [%s]: suggester [%s] is not supported yet (only [term], "
                            "[phrase] and [completion])",
                            k, kk);
        term_opts o;
        if (!json_is_object(t) || !term_options(req, resp, t, &o))
            return t ? false : FAIL("[suggest] [%s] needs a [term] suggester", k);
        const json_t *text = json_object_get(e, "text");
        if (!text)
            text = json_object_get(v, "text");
        if (!json_is_string(text))
            return FAIL("[suggest] [%s]: the required text option is missing", k);
    }
    sp->suggest = v;
    return true;
}

typedef struct tok {
    sc_slice term; /* arena copy */
    uint32_t start, end;
} tok;

typedef struct toks {
    sc_arena *a;
    tok *v;
    size_t n, cap;
    bool fail;
} toks;

static sc_status collect(void *ctx, const sc_token *t)
{
    toks *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        tok *v = sc_arena_alloc(c->a, cap * sizeof *v);
        if (!v)
            return SC_ENOMEM;
        if (c->n)
            memcpy(v, c->v, c->n * sizeof *v);
        c->v = v;
        c->cap = cap;
    }
    uint8_t *copy = sc_arena_alloc(c->a, t->len ? t->len : 1);
    if (!copy)
        return SC_ENOMEM;
    memcpy(copy, t->term, t->len);
    c->v[c->n++] = (tok){sc_slice_make(copy, t->len), t->start_offset, t->end_offset};
    return SC_OK;
}

/* UTF-16 units in s[0, n) (Elasticsearch's offsets and lengths). */
static int64_t u16(const char *s, size_t n)
{
    int64_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            u += (unsigned char)s[i] >= 0xF0 ? 2 : 1;
    return u;
}

static const sc_analyzer *analyzer_of(sc_index *ix, const term_opts *o)
{
    const sc_analyzer_registry *r = ix->analysis;
    if (o->analyzer)
        return sc_analyzer_registry_get(r, sc_slice_cstr(o->analyzer));
    sc_mapping *m = sc_index_mapping(ix);
    const sc_mapping_field *f = m ? sc_mapping_find(m, sc_slice_cstr(o->field)) : NULL;
    const sc_analyzer *an = NULL;
    if (f && f->type == SC_MAPPING_TEXT)
        an = sc_analyzer_registry_get(r, sc_slice_cstr(sc_mapping_search_analyzer(f, false)));
    else if (f && f->type == SC_MAPPING_KEYWORD)
        an = f->normalizer ? sc_analyzer_registry_normalizer(r, sc_slice_cstr(f->normalizer))
                           : sc_analyzer_registry_get(r, sc_slice_cstr("keyword"));
    sc_mapping_unref(m);
    return an ? an : sc_analyzer_registry_default(r);
}

static sc_status collect_index_tok(void *ctx, const sc_token *t)
{
    toks *c = ctx;
    return collect(c, t) == SC_OK ? (c->v[c->n - 1].start = t->position, SC_OK) : SC_ENOMEM;
}

/* One completion suggestion: [{"text", "offset", "length", "options": [...]}]. */
static bool run_completion(sc_rest_req *req, sc_rest_resp *resp, const char *name, const json_t *e,
                           sc_index **list, size_t n, json_t *out)
{
    compl_opts o;
    if (!completion_options(req, resp, name, e, &o))
        return false;
    /* the field must be a completion field in every target index */
    const sc_analyzer *an = NULL;
    sc_mapping *m = NULL;
    const sc_mapping_field *f = NULL;
    for (size_t i = 0; i < n; i++) {
        sc_mapping *mi = sc_index_mapping(list[i]);
        const sc_mapping_field *fi = mi ? sc_mapping_find(mi, sc_slice_cstr(o.field)) : NULL;
        if (!fi || fi->type != SC_MAPPING_COMPLETION) {
            bool mapped = fi != NULL;
            sc_mapping_unref(mi);
            sc_mapping_unref(m);
            return mapped ? FAIL("Field [%s] is not a completion suggest field", o.field)
                          : FAIL("no mapping found for field [%s]", o.field);
        }
        if (!m) {
            m = mi;
            f = fi;
            const char *a = json_object_get(json_object_get(e, "completion"), "analyzer")
                                ? json_string_value(
                                      json_object_get(json_object_get(e, "completion"), "analyzer"))
                            : f->search_analyzer ? f->search_analyzer
                            : f->analyzer        ? f->analyzer
                                                 : "simple";
            an = a ? sc_analyzer_registry_get(list[i]->analysis, sc_slice_cstr(a)) : NULL;
            if (!an) {
                sc_mapping_unref(m);
                return FAIL("[completion] suggester: unknown analyzer [%s]", a ? a : "");
            }
        } else {
            sc_mapping_unref(mi);
        }
    }
    toks ts = {.a = req->arena};
    sc_status st = sc_analyzer_analyze(an, sc_slice_cstr(o.prefix), collect_index_tok, &ts);
    sc_index_token *it = sc_arena_alloc(req->arena, (ts.n + 1) * sizeof *it);
    if (!it)
        st = SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < ts.n; i++)
        it[i] = (sc_index_token){ts.v[i].term, ts.v[i].start};
    sc_slice key = {0};
    if (st == SC_OK)
        st = sc_mapping_completion_key(f, it, ts.n, req->arena, &key);
    sc_mapping_unref(m);
    size_t plen = sc_automaton_cp_len(key);
    uint32_t edits = o.fuzziness >= 0 ? (uint32_t)o.fuzziness : plen <= 2 ? 0 : plen <= 5 ? 1 : 2;
    sc_completion_fuzzy fz = {edits, (uint32_t)o.prefix_length, o.transpositions};
    bool fuzzy = o.fuzzy && edits > 0 && (int64_t)plen >= o.min_length;
    sc_suggest_completion_option *opt = NULL;
    size_t nopt = 0;
    if (st == SC_OK && ts.n)
        st = sc_suggest_completion_run(list, n, sc_slice_cstr(o.field), key, fuzzy ? &fz : NULL,
                                       o.skip_duplicates, (size_t)o.size, req->arena, &opt, &nopt);
    if (st != SC_OK) {
        sc_rest_error(req, resp, st == SC_ELIMIT ? 429 : 500,
                      st == SC_ELIMIT ? "circuit_breaking_exception" : "exception",
                      "completion suggest failed", NULL, 0);
        return false;
    }
    json_t *opts = json_array(), *en = json_object(), *arr = json_array();
    for (size_t i = 0; i < nopt; i++) {
        json_t *op = json_object();
        json_object_set_new(op, "text",
                            json_stringn((const char *)opt[i].o.text.ptr, opt[i].o.text.len));
        json_object_set_new(op, "_index", json_string(opt[i].index->name));
        json_object_set_new(op, "_id", json_stringn((const char *)opt[i].id.ptr, opt[i].id.len));
        json_object_set_new(op, "_score", json_real((double)opt[i].o.weight));
        json_t *src = opt[i].source.len
                          ? json_loadb((const char *)opt[i].source.ptr, opt[i].source.len, 0, NULL)
                          : NULL;
        if (src)
            json_object_set_new(op, "_source", src);
        json_array_append_new(opts, op);
    }
    json_object_set_new(en, "text", json_string(o.prefix));
    json_object_set_new(en, "offset", json_integer(0));
    json_object_set_new(en, "length", json_integer(u16(o.prefix, strlen(o.prefix))));
    json_object_set_new(en, "options", opts);
    json_array_append_new(arr, en);
    json_object_set_new(out, name, arr);
    return true;
}

static int by_score(const void *x, const void *y)
{
    const sc_suggest_candidate *a = x, *b = y;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->freq != b->freq)
        return a->freq > b->freq ? -1 : 1;
    return sc_slice_cmp(a->term, b->term);
}

static int by_freq(const void *x, const void *y)
{
    const sc_suggest_candidate *a = x, *b = y;
    if (a->freq != b->freq)
        return a->freq > b->freq ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return sc_slice_cmp(a->term, b->term);
}

/* One token's entry: {"text", "offset", "length", "options"}. */
static sc_status entry(sc_rest_req *req, const sc_suggest_term_request *sr, const term_opts *o,
                       const char *text, const tok *t, json_t *arr)
{
    sc_suggest_candidate *c = NULL;
    size_t n = 0;
    uint64_t tf = 0;
    if ((int64_t)sc_automaton_cp_len(t->term) >= o->gen.min_word_length)
        SC_TRY(sc_suggest_run(sr, t->term, req->arena, &c, &n, &tf));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (sc__suggest_gen_keep(&o->gen, tf, c[i].freq))
            c[k++] = c[i];
    if (k > 1) /* c is NULL when the word was too short to look up */
        qsort(c, k, sizeof *c, o->by_freq ? by_freq : by_score);
    json_t *opts = json_array(), *e = json_object();
    for (size_t i = 0; i < k && (int64_t)i < o->gen.size; i++) {
        json_t *op = json_object();
        json_object_set_new(op, "text", json_stringn((const char *)c[i].term.ptr, c[i].term.len));
        json_object_set_new(op, "score", json_real(c[i].score));
        json_object_set_new(op, "freq", json_integer((json_int_t)c[i].freq));
        json_array_append_new(opts, op);
    }
    json_object_set_new(e, "text", json_stringn((const char *)t->term.ptr, t->term.len));
    json_object_set_new(e, "offset", json_integer(u16(text, t->start)));
    json_object_set_new(e, "length", json_integer(u16(text + t->start, t->end - t->start)));
    json_object_set_new(e, "options", opts);
    json_array_append_new(arr, e);
    return SC_OK;
}

bool sc__search_run_suggest(sc_rest_req *req, sc_rest_resp *resp, search_parse *sp, sc_index **list,
                            size_t n)
{
    if (!sp->suggest || n == 0)
        return true;
    json_t *out = json_object();
    const char *k;
    json_t *e;
    json_object_foreach ((json_t *)sp->suggest, k, e) {
        if (!strcmp(k, "text"))
            continue;
        if (json_object_get(e, "completion")) {
            if (!run_completion(req, resp, k, e, list, n, out)) {
                json_decref(out);
                return false;
            }
            continue;
        }
        if (json_object_get(e, "phrase")) {
            const json_t *pf = json_object_get(json_object_get(e, "phrase"), "field");
            term_opts po = {.field = json_string_value(pf)};
            if (!sc__suggest_phrase_run(req, resp, k, e, json_object_get(sp->suggest, "text"), list,
                                        n, analyzer_of(list[0], &po), out)) {
                json_decref(out);
                return false;
            }
            continue;
        }
        term_opts o;
        if (!term_options(req, resp, json_object_get(e, "term"), &o)) {
            json_decref(out);
            return false;
        }
        const json_t *tv = json_object_get(e, "text");
        const char *text = json_string_value(tv ? tv : json_object_get(sp->suggest, "text"));
        toks ts = {.a = req->arena};
        const sc_analyzer *an = analyzer_of(list[0], &o);
        sc_suggest_term_request sr = {.indices = list,
                                      .n_indices = n,
                                      .field = sc_slice_cstr(o.field),
                                      .max_edits = (uint32_t)o.gen.max_edits,
                                      .prefix_length = (uint32_t)o.gen.prefix_length,
                                      .accuracy = (float)o.gen.accuracy,
                                      .min_doc_freq = (uint64_t)o.gen.min_doc_freq};
        json_t *arr = json_array();
        sc_status st = an ? sc_analyzer_analyze(an, sc_slice_cstr(text), collect, &ts) : SC_OK;
        for (size_t i = 0; st == SC_OK && i < ts.n; i++)
            st = entry(req, &sr, &o, text, &ts.v[i], arr);
        json_object_set_new(out, k, arr);
        if (st != SC_OK) {
            json_decref(out);
            sc_rest_error(req, resp, 500, "exception", "suggest failed", NULL, 0);
            return false;
        }
    }
    sp->suggest_out = out;
    return true;
}
