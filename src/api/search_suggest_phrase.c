/* The phrase suggester's simple form (search_suggest.c hands it `phrase` entries): the text
 * analyzed with the field's search analyzer (or `analyzer`) into words; per word, candidates
 * from the field's term dictionary (cluster/suggest.h, the direct generators' options) plus
 * the word itself; every phrase with at most max_errors words replaced is scored with a noisy
 * channel (the word itself: real_word_error_likelihood; a candidate: (1 - that) times its
 * string similarity) and a stupid-backoff language model over doc frequencies: a bigram
 * "w1 w2" indexed in the field (a shingle field) gives df(w1 w2) / df(w1), else 0.4 times the
 * unigram (df(w) + 1) / (docs + 1). Phrases scoring above confidence times the input's score
 * come back best first with `highlighted` marking the replaced words. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "api/search_internal.h"
#include "cluster/suggest.h"
#include "search/automaton.h"
#include "shard/shard_search.h"

#define FAIL(...) (sc_rest_errorf(req, resp, 400, "illegal_argument_exception", __VA_ARGS__), false)
#define MAX_WORDS 32
#define MAX_CANDS 16
#define MAX_OPTIONS 1000

typedef struct phrase_opts {
    const char *field, *analyzer, *pre, *post, *text;
    int64_t size, gram_size;
    double max_errors, confidence, rwel, discount;
    sc__suggest_gen gen;
} phrase_opts;

static bool num(const json_t *o, const char *k, double lo, double hi, double *out)
{
    const json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi)
        return false;
    *out = json_number_value(v);
    return true;
}

static bool generator(sc_rest_req *req, sc_rest_resp *resp, const json_t *g, const char *field,
                      sc__suggest_gen *o)
{
    static const char *const keys[] = {"field",
                                       "suggest_mode",
                                       "max_edits",
                                       "prefix_length",
                                       "min_word_length",
                                       "min_doc_freq",
                                       "size",
                                       "accuracy",
                                       "max_inspections",
                                       "max_term_freq",
                                       "string_distance",
                                       "pre_filter",
                                       "post_filter",
                                       NULL};
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)g, k, v) {
        const char *const *x = keys;
        while (*x && strcmp(*x, k))
            x++;
        if (!*x)
            return FAIL("[direct_generator] unknown field [%s]", k);
        if (!strcmp(k, "pre_filter") || !strcmp(k, "post_filter"))
            return FAIL("[direct_generator] [%s] is not supported", k);
    }
    const json_t *f = json_object_get(g, "field");
    if (!json_is_string(f) || strcmp(json_string_value(f), field))
        return FAIL("[direct_generator] needs [field] (the phrase suggester's field [%s])", field);
    return sc__suggest_gen_parse(req, resp, "[direct_generator]", g, MAX_CANDS, o);
}

static bool options(sc_rest_req *req, sc_rest_resp *resp, const json_t *e,
                    const json_t *global_text, phrase_opts *o)
{
    const json_t *p = json_object_get(e, "phrase");
    if (!json_is_object(p))
        return FAIL("[phrase] suggester must be an object");
    static const char *const keys[] = {"field",
                                       "analyzer",
                                       "size",
                                       "gram_size",
                                       "max_errors",
                                       "confidence",
                                       "separator",
                                       "real_word_error_likelihood",
                                       "direct_generator",
                                       "highlight",
                                       "smoothing",
                                       "shard_size",
                                       "token_limit",
                                       "force_unigrams",
                                       NULL};
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)p, k, v) {
        const char *const *x = keys;
        while (*x && strcmp(*x, k))
            x++;
        if (!*x)
            return FAIL("[phrase] suggester: unknown field [%s]%s", k,
                        !strcmp(k, "collate") ? " (collate is not supported)" : "");
    }
    *o = (phrase_opts){.size = 5,
                       .gram_size = 2,
                       .max_errors = 1,
                       .confidence = 1,
                       .rwel = 0.95,
                       .discount = 0.4,
                       .pre = "",
                       .post = "",
                       .gen = sc__suggest_gen_defaults()};
    const json_t *f = json_object_get(p, "field"), *an = json_object_get(p, "analyzer");
    if (!json_is_string(f))
        return FAIL("[phrase] suggester requires a [field]");
    o->field = json_string_value(f);
    if (an && !json_is_string(an))
        return FAIL("[phrase] suggester: [analyzer] must be a string");
    o->analyzer = an ? json_string_value(an) : NULL;
    if (!sc__suggest_int(p, "size", 1, MAX_OPTIONS, &o->size) ||
        !sc__suggest_int(p, "gram_size", 1, 2, &o->gram_size) ||
        !num(p, "max_errors", 0, 1000, &o->max_errors) ||
        !num(p, "confidence", 0, 1e9, &o->confidence) ||
        !num(p, "real_word_error_likelihood", 1e-9, 1, &o->rwel) ||
        !sc__suggest_int(p, "shard_size", 1, 100000, &(int64_t){0}) ||
        !sc__suggest_int(p, "token_limit", 1, 100000, &(int64_t){0}))
        return FAIL("[phrase] suggester: size (1..%d), gram_size (1 or 2: bigrams at most), "
                    "max_errors, confidence and real_word_error_likelihood must be in range",
                    MAX_OPTIONS);
    const json_t *sep = json_object_get(p, "separator");
    if (sep && !(json_is_string(sep) && !strcmp(json_string_value(sep), " ")))
        return FAIL("[phrase] suggester: only the separator \" \" is supported");
    const json_t *sm = json_object_get(p, "smoothing");
    if (sm) {
        const json_t *sb = json_is_object(sm) ? json_object_get(sm, "stupid_backoff") : NULL;
        if (!sb || json_object_size(sm) != 1 || !json_is_object(sb))
            return FAIL("[phrase] suggester: only [stupid_backoff] smoothing is supported");
        if (!num(sb, "discount", 0, 1, &o->discount))
            return FAIL("[stupid_backoff] [discount] must be a number from 0 to 1");
    }
    const json_t *hl = json_object_get(p, "highlight");
    if (hl) {
        const json_t *pre = json_object_get(hl, "pre_tag"), *post = json_object_get(hl, "post_tag");
        if (!json_is_object(hl) || !json_is_string(pre) || !json_is_string(post))
            return FAIL("[phrase] suggester: [highlight] needs [pre_tag] and [post_tag]");
        o->pre = json_string_value(pre);
        o->post = json_string_value(post);
    }
    const json_t *dg = json_object_get(p, "direct_generator");
    if (dg) {
        if (!json_is_array(dg) || json_array_size(dg) != 1 ||
            !json_is_object(json_array_get(dg, 0)))
            return FAIL("[phrase] suggester: [direct_generator] must be an array of one "
                        "generator (several are not supported)");
        if (!generator(req, resp, json_array_get(dg, 0), o->field, &o->gen))
            return false;
    }
    const json_t *t = json_object_get(e, "text");
    if (!t)
        t = global_text;
    if (!json_is_string(t))
        return FAIL("[phrase] suggester: the required text option is missing");
    o->text = json_string_value(t);
    return true;
}

bool sc__suggest_phrase_check(sc_rest_req *req, sc_rest_resp *resp, const json_t *e,
                              const json_t *global_text)
{
    phrase_opts o;
    return options(req, resp, e, global_text, &o);
}

typedef struct word {
    sc_slice term;
    uint32_t start, end;           /* byte offsets in the text */
    sc_slice cand[MAX_CANDS + 1];  /* cand[0] is the word itself */
    double channel[MAX_CANDS + 1]; /* log10 */
    uint64_t df[MAX_CANDS + 1];
    size_t n_cand;
} word;

typedef struct words {
    sc_arena *a;
    word *v;
    size_t n;
    int64_t last_pos;
    bool over;
} words;

static sc_status collect(void *ctx, const sc_token *t)
{
    words *w = ctx;
    /* one word per position (the first token): stacked shingles and synonyms are left out */
    if ((int64_t)t->position == w->last_pos || memchr(t->term, ' ', t->len))
        return SC_OK;
    w->last_pos = t->position;
    if (w->n == MAX_WORDS) {
        w->over = true;
        return SC_OK;
    }
    uint8_t *c = sc_arena_alloc(w->a, t->len ? t->len : 1);
    if (!c)
        return SC_ENOMEM;
    memcpy(c, t->term, t->len);
    word *x = &w->v[w->n++];
    memset(x, 0, sizeof *x);
    x->term = sc_slice_make(c, t->len);
    x->start = t->start_offset;
    x->end = t->end_offset;
    return SC_OK;
}

/* The doc frequency of a term of the field over the target shards. */
static sc_status df_of(const sc_suggest_term_request *base, sc_slice term, sc_arena *a,
                       uint64_t *df)
{
    sc_suggest_term_request r = *base;
    r.max_edits = 1;
    r.prefix_length = (uint32_t)sc_automaton_cp_len(term); /* only the term's own family */
    r.accuracy = 1;
    sc_suggest_candidate *c;
    size_t n;
    return sc_suggest_run(&r, term, a, &c, &n, df);
}

static uint64_t live_docs(sc_index **list, size_t n)
{
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t sh = 0; list[i]->shards && sh < list[i]->settings.number_of_shards; sh++) {
            if (!list[i]->shards[sh])
                continue;
            const sc_shard_snapshot *snap = sc_shard_searcher_acquire(list[i]->shards[sh]);
            d += snap->n_docs;
            sc_shard_searcher_release(snap);
        }
    return d;
}

typedef struct lm {
    const sc_suggest_term_request *sr;
    sc_arena *a;
    double docs, discount;
    bool bigrams;
} lm;

/* log10 P(w | prev) under stupid backoff (prev NULL: unigram). */
static sc_status lm_score(lm *m, const word *prev, size_t pc, const word *w, size_t wc, double *out)
{
    double uni = log10(((double)w->df[wc] + 1) / (m->docs + 1));
    if (!prev || !m->bigrams || prev->df[pc] == 0) {
        *out = prev ? log10(m->discount) + uni : uni;
        return SC_OK;
    }
    sc_slice a = prev->cand[pc], b = w->cand[wc];
    uint8_t *bi = sc_arena_alloc(m->a, a.len + 1 + b.len);
    if (!bi)
        return SC_ENOMEM;
    memcpy(bi, a.ptr, a.len);
    bi[a.len] = ' ';
    memcpy(bi + a.len + 1, b.ptr, b.len);
    uint64_t df = 0;
    SC_TRY(df_of(m->sr, sc_slice_make(bi, a.len + 1 + b.len), m->a, &df));
    *out = df ? log10((double)df / (double)prev->df[pc]) : log10(m->discount) + uni;
    return SC_OK;
}

typedef struct option {
    size_t *choice; /* per word */
    double score;   /* log10 */
} option;

typedef struct search {
    word *w;
    size_t n;
    size_t max_err;
    lm *m;
    size_t *cur;
    option *opts;
    size_t n_opts, cap;
    sc_arena *a;
    sc_status st;
} search;

static void record(search *s)
{
    double sc = 0, l;
    for (size_t i = 0; i < s->n && s->st == SC_OK; i++) {
        s->st =
            lm_score(s->m, i ? &s->w[i - 1] : NULL, i ? s->cur[i - 1] : 0, &s->w[i], s->cur[i], &l);
        sc += l + s->w[i].channel[s->cur[i]];
    }
    if (s->st != SC_OK)
        return;
    if (s->n_opts == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        option *v = sc_arena_alloc(s->a, cap * sizeof *v);
        if (!v) {
            s->st = SC_ENOMEM;
            return;
        }
        if (s->n_opts)
            memcpy(v, s->opts, s->n_opts * sizeof *v);
        s->opts = v;
        s->cap = cap;
    }
    size_t *c = sc_arena_alloc(s->a, s->n * sizeof *c);
    if (!c) {
        s->st = SC_ENOMEM;
        return;
    }
    memcpy(c, s->cur, s->n * sizeof *c);
    s->opts[s->n_opts++] = (option){c, sc};
}

/* Every phrase with at most errs_left more words replaced from word i on. */
static void enumerate(search *s, size_t i, size_t errs_left)
{
    if (s->st != SC_OK || s->n_opts >= 100000)
        return;
    if (i == s->n) {
        record(s);
        return;
    }
    s->cur[i] = 0;
    enumerate(s, i + 1, errs_left);
    for (size_t c = 1; errs_left && c < s->w[i].n_cand; c++) {
        s->cur[i] = c;
        enumerate(s, i + 1, errs_left - 1);
    }
    s->cur[i] = 0;
}

static int by_score(const void *x, const void *y)
{
    const option *a = x, *b = y;
    return a->score > b->score ? -1 : a->score < b->score ? 1 : 0;
}

/* UTF-16 units of s[0, n). */
static int64_t u16(const char *s, size_t n)
{
    int64_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            u += (unsigned char)s[i] >= 0xF0 ? 2 : 1;
    return u;
}

static json_t *phrase_text(const word *w, size_t n, const size_t *choice, const char *pre,
                           const char *post, bool marks)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += w[i].cand[choice[i]].len + 1 + strlen(pre) + strlen(post);
    char *b = malloc(len), *p = b;
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ' ';
        bool mark = marks && choice[i] != 0;
        if (mark)
            p = stpcpy(p, pre);
        memcpy(p, w[i].cand[choice[i]].ptr, w[i].cand[choice[i]].len);
        p += w[i].cand[choice[i]].len;
        if (mark)
            p = stpcpy(p, post);
    }
    json_t *s = json_stringn(b, (size_t)(p - b));
    free(b);
    return s;
}

bool sc__suggest_phrase_run(sc_rest_req *req, sc_rest_resp *resp, const char *name, const json_t *e,
                            const json_t *global_text, sc_index **list, size_t n,
                            const sc_analyzer *an, json_t *out)
{
    phrase_opts o;
    if (!options(req, resp, e, global_text, &o))
        return false;
    if (o.analyzer &&
        !(an = sc_analyzer_registry_get(list[0]->analysis, sc_slice_cstr(o.analyzer))))
        return FAIL("[phrase] suggester: unknown analyzer [%s]", o.analyzer);
    words ws = {.a = req->arena, .last_pos = -1};
    ws.v = sc_arena_alloc(req->arena, MAX_WORDS * sizeof *ws.v);
    sc_status st = ws.v ? SC_OK : SC_ENOMEM;
    if (st == SC_OK && an)
        st = sc_analyzer_analyze(an, sc_slice_cstr(o.text), collect, &ws);
    if (st == SC_OK && ws.over)
        return FAIL("[phrase] suggester: the text has more than %d words", MAX_WORDS);
    sc_suggest_term_request sr = {.indices = list,
                                  .n_indices = n,
                                  .field = sc_slice_cstr(o.field),
                                  .max_edits = (uint32_t)o.gen.max_edits,
                                  .prefix_length = (uint32_t)o.gen.prefix_length,
                                  .accuracy = (float)o.gen.accuracy,
                                  .min_doc_freq = (uint64_t)o.gen.min_doc_freq};
    for (size_t i = 0; st == SC_OK && i < ws.n; i++) {
        word *w = &ws.v[i];
        w->cand[0] = w->term;
        w->channel[0] = log10(o.rwel);
        w->n_cand = 1;
        sc_suggest_candidate *c = NULL;
        size_t nc = 0;
        uint64_t tf = 0;
        if ((int64_t)sc_automaton_cp_len(w->term) >= o.gen.min_word_length)
            st = sc_suggest_run(&sr, w->term, req->arena, &c, &nc, &tf);
        else
            st = df_of(&sr, w->term, req->arena, &tf);
        w->df[0] = tf;
        /* best candidates first: similarity, then frequency */
        for (size_t a = 0; st == SC_OK && a < nc; a++)
            for (size_t b = a + 1; b < nc; b++)
                if (c[b].score > c[a].score ||
                    (c[b].score == c[a].score && c[b].freq > c[a].freq)) {
                    sc_suggest_candidate t = c[a];
                    c[a] = c[b];
                    c[b] = t;
                }
        for (size_t k = 0; st == SC_OK && k < nc && w->n_cand <= (size_t)o.gen.size; k++) {
            if (!sc__suggest_gen_keep(&o.gen, tf, c[k].freq))
                continue;
            w->cand[w->n_cand] = c[k].term;
            w->channel[w->n_cand] = log10(c[k].score); /* its string similarity */
            w->df[w->n_cand++] = c[k].freq;
        }
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, st == SC_ELIMIT ? 429 : 500,
                      st == SC_ELIMIT ? "circuit_breaking_exception" : "exception",
                      "phrase suggest failed", NULL, 0);
        return false;
    }
    lm m = {.sr = &sr,
            .a = req->arena,
            .docs = (double)live_docs(list, n),
            .discount = o.discount,
            .bigrams = o.gram_size >= 2};
    size_t max_err =
        o.max_errors >= 1 ? (size_t)o.max_errors : (size_t)ceil(o.max_errors * (double)ws.n);
    search s = {.w = ws.v, .n = ws.n, .max_err = max_err, .m = &m, .a = req->arena};
    s.cur = sc_arena_calloc(req->arena, ws.n + 1, sizeof *s.cur);
    if (!s.cur)
        s.st = SC_ENOMEM;
    if (ws.n)
        enumerate(&s, 0, max_err);
    if (s.st != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", "phrase suggest failed", NULL, 0);
        return false;
    }
    /* the input phrase (all words kept) is the first recorded */
    double input = s.n_opts ? s.opts[0].score : 0;
    double cutoff = o.confidence > 0 ? input + log10(o.confidence) : -INFINITY;
    qsort(s.opts, s.n_opts, sizeof *s.opts, by_score);
    json_t *opts = json_array(), *en = json_object(), *arr = json_array();
    size_t kept = 0;
    for (size_t i = 0; i < s.n_opts && kept < (size_t)o.size; i++) {
        bool changed = false;
        for (size_t j = 0; j < ws.n; j++)
            changed |= s.opts[i].choice[j] != 0;
        if (!changed || !(s.opts[i].score > cutoff))
            continue;
        json_t *op = json_object();
        json_object_set_new(op, "text", phrase_text(ws.v, ws.n, s.opts[i].choice, "", "", false));
        if (*o.pre || *o.post)
            json_object_set_new(op, "highlighted",
                                phrase_text(ws.v, ws.n, s.opts[i].choice, o.pre, o.post, true));
        json_object_set_new(op, "score", json_real(pow(10, s.opts[i].score)));
        json_array_append_new(opts, op);
        kept++;
    }
    json_object_set_new(en, "text", json_string(o.text));
    json_object_set_new(en, "offset", json_integer(0));
    json_object_set_new(en, "length", json_integer(u16(o.text, strlen(o.text))));
    json_object_set_new(en, "options", opts);
    json_array_append_new(arr, en);
    json_object_set_new(out, name, arr);
    return true;
}
