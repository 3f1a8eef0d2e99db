/* The token-stream path of an analyzer: char filters (offsets mapped back to the original),
 * then the tokenizer, then filters of which some emit several tokens per input token (n-grams,
 * shingles, synonyms) or keep state across tokens (unique). Tokens flow as a push chain with
 * Lucene's position increments; each stage owns its buffers, so a downstream filter may change
 * a term in place. Analyzers made only of 1:1 filters never come here (analyzer.c keeps that
 * path lean for the built-ins); this one allocates its scratch per call. */
#include <libstemmer.h>
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"

typedef struct meta {
    uint32_t posinc;
    uint32_t start, end;
    sc_token_type type;
    uint32_t poslen; /* positions spanned (Lucene's positionLength); 0 is read as 1 */
} meta;

/* One token kept by a buffering stage (shingle window, synonym lookahead). */
typedef struct held {
    uint8_t *term;
    size_t len;
    meta m;
    int64_t pos;
    bool filler;
} held;

typedef struct stage {
    sc__term out;   /* tokens this stage emits */
    sc__term save;  /* the input token a multi-output stage expands */
    uint32_t carry; /* position increments of dropped tokens, added to the next one */
    /* unique: open-addressing set of seen terms */
    uint8_t **seen;
    size_t seen_cap, n_seen;
    /* shingle */
    held *win;
    size_t n_win, cap_win;
    int64_t in_pos, out_pos;
    sc__syn_state syn;
    /* word_delimiter_graph */
    sc__wd_parts wd;
    uint32_t wd_last_start;
    sc__wdl_state wdl; /* legacy word_delimiter */
} stage;

typedef struct srun {
    const sc_analyzer *a;
    const uint8_t *text; /* what the tokenizer reads (filtered when there are char filters) */
    const sc__filtered *filtered;
    sc_token_sink sink;
    void *ctx;
    int64_t pos;
    sc__term tok; /* stage-0 token from the tokenizer */
    stage *stages;
    struct sb_stemmer *stemmers[SC__MAX_STEMMERS];
    struct sb_stemmer *snowball_en;
} srun;

static sc_status push(srun *r, size_t i, sc__term *t, meta m);

sc_status sc__term_reserve(sc__term *t, size_t len)
{
    size_t need = 2 * len + 16;
    if (t->cap < need) {
        uint8_t *nb = sc_alloc_realloc(&sc__text_pool, t->buf, need);
        if (!nb)
            return SC_ENOMEM;
        t->buf = nb;
        t->cap = need;
    }
    if (t->u16_cap < len + 8) {
        uint16_t *nu = sc_alloc_realloc(&sc__text_pool, t->u16, (len + 8) * sizeof(uint16_t));
        if (!nu)
            return SC_ENOMEM;
        t->u16 = nu;
        t->u16_cap = len + 8;
    }
    return SC_OK;
}

static void term_free(sc__term *t)
{
    sc_alloc_free(&sc__text_pool, t->buf);
    sc_alloc_free(&sc__text_pool, t->u16);
    t->buf = NULL;
    t->u16 = NULL;
    t->cap = t->u16_cap = 0;
}

static sc_status term_set(srun *r, sc__term *t, const uint8_t *p, size_t n, bool keyword)
{
    SC_TRY(sc__term_reserve(t, n));
    if (n)
        memmove(t->buf, p, n);
    t->len = n;
    t->keyword = keyword;
    t->stemmers = r->stemmers;
    t->snowball = r->snowball_en;
    return SC_OK;
}

static sc_status emit_final(srun *r, const sc__term *t, meta m)
{
    r->pos += m.posinc;
    sc_token tok = {t->buf,  (uint32_t)t->len, (uint32_t)(r->pos < 0 ? 0 : r->pos),
                    m.start, m.end,           m.type,
                    m.poslen ? m.poslen : 1};
    return r->sink(r->ctx, &tok);
}

/* ---- unique ---------------------------------------------------------------------------------- */

static uint64_t hash_term(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 31);
}

static void seen_clear(stage *s)
{
    for (size_t i = 0; i < s->seen_cap; i++) {
        sc_alloc_free(&sc__text_pool, s->seen[i]);
        s->seen[i] = NULL;
    }
    s->n_seen = 0;
}

/* Adds the term to the set; *fresh says whether it was new. Entries are length-prefixed. */
static sc_status seen_add(stage *s, const uint8_t *p, size_t n, bool *fresh)
{
    if (2 * (s->n_seen + 1) > s->seen_cap) {
        size_t ncap = s->seen_cap ? 2 * s->seen_cap : 64;
        uint8_t **ns = sc_alloc_calloc(&sc__text_pool, ncap, sizeof(*ns));
        if (!ns)
            return SC_ENOMEM;
        for (size_t i = 0; i < s->seen_cap; i++) {
            uint8_t *e = s->seen[i];
            if (!e)
                continue;
            size_t len;
            memcpy(&len, e, sizeof(len));
            size_t h = hash_term(e + sizeof(len), len) & (ncap - 1);
            while (ns[h])
                h = (h + 1) & (ncap - 1);
            ns[h] = e;
        }
        sc_alloc_free(&sc__text_pool, s->seen);
        s->seen = ns;
        s->seen_cap = ncap;
    }
    size_t h = hash_term(p, n) & (s->seen_cap - 1);
    for (; s->seen[h]; h = (h + 1) & (s->seen_cap - 1)) {
        size_t len;
        memcpy(&len, s->seen[h], sizeof(len));
        if (len == n && memcmp(s->seen[h] + sizeof(len), p, n) == 0) {
            *fresh = false;
            return SC_OK;
        }
    }
    uint8_t *e = sc_alloc_malloc(&sc__text_pool, sizeof(size_t) + n + 1);
    if (!e)
        return SC_ENOMEM;
    memcpy(e, &n, sizeof(n));
    memcpy(e + sizeof(n), p, n);
    s->seen[h] = e;
    s->n_seen++;
    *fresh = true;
    return SC_OK;
}

/* ---- n-grams --------------------------------------------------------------------------------- */

/* Byte offsets of the code points of a valid UTF-8 term (n + 1 entries into *offs, grown). */
static size_t cp_offsets(const uint8_t *p, size_t len, size_t **offs, size_t *cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            n++;
    if (n + 1 > *cap) {
        size_t *no = sc_alloc_realloc(&sc__text_pool, *offs, (n + 1) * sizeof(size_t));
        if (!no)
            return SIZE_MAX;
        *offs = no;
        *cap = n + 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            (*offs)[k++] = i;
    (*offs)[k] = len;
    return n;
}

/* Lucene NGramTokenFilter / EdgeNGramTokenFilter: grams by start then length; the first output
 * carries the token's position increment, the rest 0; offsets and type stay the original's.
 * preserve_original keeps a term shorter than min (first) or longer than max (last). */
static sc_status ngram_filter(srun *r, size_t i, sc__term *t, meta m)
{
    const sc__filter *f = &r->a->filters[i];
    stage *s = &r->stages[i];
    SC_TRY(term_set(r, &s->save, t->buf, t->len, t->keyword));
    size_t stack_offs[64];
    size_t *offs = stack_offs, cap = 64;
    size_t *heap = NULL;
    size_t n = 0;
    for (size_t k = 0; k < s->save.len; k++)
        if ((s->save.buf[k] & 0xC0) != 0x80)
            n++;
    if (n + 1 > cap) {
        heap = NULL;
        size_t hc = 0;
        if (cp_offsets(s->save.buf, s->save.len, &heap, &hc) == SIZE_MAX)
            return SC_ENOMEM;
        offs = heap;
    } else {
        size_t k = 0;
        for (size_t b = 0; b < s->save.len; b++)
            if ((s->save.buf[b] & 0xC0) != 0x80)
                offs[k++] = b;
        offs[k] = s->save.len;
    }
    sc_status st = SC_OK;
    /* a token too short for any gram is dropped and its increment moves on (Lucene 8.7) */
    uint32_t posinc = m.posinc + s->carry;
    s->carry = 0;
    bool edge = f->kind == SC__F_EDGE_NGRAM;
    if (f->flag && n < f->a) {
        meta o = m;
        o.posinc = posinc;
        posinc = 0;
        st = term_set(r, &s->out, s->save.buf, s->save.len, s->save.keyword);
        if (st == SC_OK)
            st = push(r, i + 1, &s->out, o);
    }
    size_t last_start = edge ? (n > 0 ? 1 : 0) : n;
    for (size_t start = 0; start < last_start && st == SC_OK; start++) {
        for (size_t g = f->a; g <= f->b && start + g <= n && st == SC_OK; g++) {
            meta o = m;
            o.posinc = posinc;
            posinc = 0;
            st = term_set(r, &s->out, s->save.buf + offs[start], offs[start + g] - offs[start],
                          s->save.keyword);
            if (st == SC_OK)
                st = push(r, i + 1, &s->out, o);
        }
    }
    if (st == SC_OK && f->flag && n > f->b) {
        meta o = m;
        o.posinc = posinc;
        posinc = 0;
        st = term_set(r, &s->out, s->save.buf, s->save.len, s->save.keyword);
        if (st == SC_OK)
            st = push(r, i + 1, &s->out, o);
    }
    s->carry = posinc; /* nonzero only when nothing was emitted */
    sc_alloc_free(&sc__text_pool, heap);
    return st;
}

/* ---- shingles -------------------------------------------------------------------------------- */

static sc_status hold(stage *s, const uint8_t *p, size_t n, meta m, int64_t pos, bool filler)
{
    if (s->n_win == s->cap_win) {
        size_t nc = s->cap_win ? 2 * s->cap_win : 8;
        held *nw = sc_alloc_realloc(&sc__text_pool, s->win, nc * sizeof(*nw));
        if (!nw)
            return SC_ENOMEM;
        s->win = nw;
        s->cap_win = nc;
    }
    uint8_t *c = sc_alloc_malloc(&sc__text_pool, n ? n : 1);
    if (!c)
        return SC_ENOMEM;
    memcpy(c, p, n);
    s->win[s->n_win++] = (held){c, n, m, pos, filler};
    return SC_OK;
}

/* Emits the unigram and shingles that start at the window's first entry, then drops it. */
static sc_status shingle_emit_first(srun *r, size_t i)
{
    const sc__filter *f = &r->a->filters[i];
    stage *s = &r->stages[i];
    held *h = &s->win[0];
    bool first = true;
    sc_status st = SC_OK;
    if (f->flag && !h->filler) {
        meta o = h->m;
        o.posinc = (uint32_t)(h->pos - s->out_pos);
        s->out_pos = h->pos;
        first = false;
        st = term_set(r, &s->out, h->term, h->len, false);
        if (st == SC_OK)
            st = push(r, i + 1, &s->out, o);
    }
    size_t sep_len = strlen(f->sep);
    for (size_t size = f->a; size <= f->b && size <= s->n_win && st == SC_OK; size++) {
        size_t total = 0;
        for (size_t k = 0; k < size; k++)
            total += s->win[k].len + (k ? sep_len : 0);
        st = sc__term_reserve(&s->out, total);
        if (st != SC_OK)
            break;
        size_t o = 0;
        for (size_t k = 0; k < size; k++) {
            if (k) {
                memcpy(s->out.buf + o, f->sep, sep_len);
                o += sep_len;
            }
            memcpy(s->out.buf + o, s->win[k].term, s->win[k].len);
            o += s->win[k].len;
        }
        s->out.len = o;
        s->out.keyword = false;
        s->out.stemmers = r->stemmers;
        s->out.snowball = r->snowball_en;
        /* Lucene's position length: the shingle's size, counted from min_shingle_size when
         * unigrams are not output (checked in the chain oracle) */
        uint32_t poslen = (uint32_t)(f->flag ? size : size - f->a + 1);
        meta m = {0, h->m.start, s->win[size - 1].m.end, SC_TOKEN_SHINGLE, poslen};
        if (first) {
            m.posinc = (uint32_t)(h->pos - s->out_pos);
            s->out_pos = h->pos;
            first = false;
        }
        st = push(r, i + 1, &s->out, m);
    }
    sc_alloc_free(&sc__text_pool, h->term);
    if (s->n_win > 1)
        memmove(s->win, s->win + 1, (s->n_win - 1) * sizeof(*s->win));
    s->n_win--;
    return st;
}

/* Lucene ShingleFilter: a window of the last max_shingle_size positions; a position hole
 * (a removed stop word) becomes filler tokens (at most max_shingle_size - 1, and the positions
 * after the hole close up accordingly, as Lucene's do). */
static sc_status shingle_filter(srun *r, size_t i, sc__term *t, meta m)
{
    const sc__filter *f = &r->a->filters[i];
    stage *s = &r->stages[i];
    /* Lucene inserts at most max_shingle_size - 1 fillers for a hole, however wide */
    uint32_t fillers = (m.posinc < f->b ? m.posinc : f->b);
    for (uint32_t k = 1; k < fillers; k++) {
        s->in_pos++;
        meta fm = {1, m.start, m.start, SC_TOKEN_WORD, 1};
        SC_TRY(hold(s, (const uint8_t *)f->filler, strlen(f->filler), fm, s->in_pos, true));
    }
    s->in_pos += m.posinc ? 1 : 0;
    SC_TRY(hold(s, t->buf, t->len, m, s->in_pos, false));
    while (s->n_win >= f->b)
        SC_TRY(shingle_emit_first(r, i));
    return SC_OK;
}

/* ---- synonyms ------------------------------------------------------------------------------ */

typedef struct syn_ctx {
    srun *r;
    size_t i;
} syn_ctx;

static sc_status syn_emit(void *vctx, const uint8_t *term, size_t len, uint32_t posinc,
                          uint32_t start, uint32_t end, sc_token_type type, uint32_t poslen)
{
    syn_ctx *c = vctx;
    stage *s = &c->r->stages[c->i];
    SC_TRY(term_set(c->r, &s->out, term, len, false));
    meta m = {posinc, start, end, type, poslen};
    return push(c->r, c->i + 1, &s->out, m);
}

/* ---- word_delimiter_graph -------------------------------------------------------------------- */

/* Lucene WordDelimiterGraphFilter.incrementToken: the parts of wdelim.c with their position
 * increments (carry is Lucene's accumPosInc) and offsets (never going backwards). */
static sc_status wdelim_filter(srun *r, size_t i, sc__term *t, meta m)
{
    const sc__filter *f = &r->a->filters[i];
    stage *s = &r->stages[i];
    if (f->flag) { /* the legacy word_delimiter */
        SC_TRY(term_set(r, &s->save, t->buf, t->len, t->keyword));
        SC_TRY(sc__wdelim_legacy(f, s->save.buf, s->save.len, m.start, m.end, m.posinc, t->keyword,
                                 &s->wdl, &s->wd));
        for (size_t k = 0; k < s->wd.n; k++) {
            const sc__wd_part *p = &s->wd.p[k];
            meta o = {p->posinc, p->so, p->eo, m.type, 1};
            SC_TRY(p->cat ? term_set(r, &s->out, p->cat, p->cat_len, s->save.keyword)
                          : term_set(r, &s->out, s->save.buf + p->start_b, p->end_b - p->start_b,
                                     s->save.keyword));
            SC_TRY(push(r, i + 1, &s->out, o));
        }
        return SC_OK;
    }
    if ((f->a & SC__WD_IGNORE_KEYWORDS) && t->keyword)
        return push(r, i + 1, t, m);
    uint32_t accum = s->carry + m.posinc;
    SC_TRY(term_set(r, &s->save, t->buf, t->len, t->keyword));
    bool whole, delims;
    SC_TRY(sc__wdelim_split(f, s->save.buf, s->save.len, &s->wd, &whole, &delims));
    if (s->wd.n == 0) {
        if (!whole) { /* only delimiters: dropped, its increment goes to the next token */
            s->carry = accum;
            return SC_OK;
        }
        (void)delims;
        s->carry = 0;
        m.posinc = accum;
        return push(r, i + 1, &s->save, m);
    }
    s->carry = 0;
    bool adjust = (f->a & SC__WD_ADJUST_OFFSETS) && m.end - m.start == s->save.len;
    uint32_t word_pos = 0;
    for (size_t k = 0; k < s->wd.n; k++) {
        const sc__wd_part *p = &s->wd.p[k];
        uint32_t so = adjust ? m.start + p->start_b : m.start;
        uint32_t eo = adjust ? m.start + p->end_b : m.end;
        if (so < s->wd_last_start)
            so = s->wd_last_start;
        if (eo < s->wd_last_start)
            eo = s->wd_last_start;
        s->wd_last_start = so;
        meta o = {accum + p->start_pos - word_pos, so, eo, m.type, p->end_pos - p->start_pos};
        accum = 0;
        word_pos = p->start_pos;
        SC_TRY(p->cat ? term_set(r, &s->out, p->cat, p->cat_len, s->save.keyword)
                      : term_set(r, &s->out, s->save.buf + p->start_b, p->end_b - p->start_b,
                                 s->save.keyword));
        SC_TRY(push(r, i + 1, &s->out, o));
    }
    return SC_OK;
}

/* ---- the chain --------------------------------------------------------------------------- */

/* Runs token t through filters i.. of the chain. */
static sc_status push(srun *r, size_t i, sc__term *t, meta m)
{
    const sc_analyzer *a = r->a;
    for (; i < a->n_filters; i++) {
        const sc__filter *f = &a->filters[i];
        stage *s = &r->stages[i];
        switch (f->kind) {
        case SC__F_STOP:
        case SC__F_LENGTH:
            /* FilteringTokenFilter: a removed token's increment moves to the next one */
            if (!sc__filter_apply(f, t)) {
                s->carry += m.posinc;
                return SC_OK;
            }
            m.posinc += s->carry;
            s->carry = 0;
            continue;
        case SC__F_UNIQUE: {
            if (f->flag && m.posinc > 0)
                seen_clear(s); /* only_on_same_position */
            bool fresh;
            SC_TRY(seen_add(s, t->buf, t->len, &fresh));
            if (!fresh)
                return SC_OK;
            continue;
        }
        case SC__F_NGRAM:
        case SC__F_EDGE_NGRAM: return ngram_filter(r, i, t, m);
        case SC__F_SHINGLE: return shingle_filter(r, i, t, m);
        case SC__F_WORD_DELIM: return wdelim_filter(r, i, t, m);
        case SC__F_STEM_OVERRIDE:
            SC_TRY(sc__term_reserve(t, t->len > f->b ? t->len : f->b));
            sc__stem_override(f, t);
            continue;
        case SC__F_SYNONYM: {
            syn_ctx c = {r, i};
            return sc__syn_push(f, &s->syn, t->buf, t->len, m.posinc, m.start, m.end, m.type,
                                syn_emit, &c);
        }
        case SC__F_PORTER:
        case SC__F_MINIMAL_EN:
        case SC__F_SNOWBALL_EN:
        case SC__F_SNOWBALL:
        case SC__F_TRUNCATE:
        case SC__F_LIGHT_STEM:
            if (t->keyword)
                continue; /* keyword_marker: stemmers and truncate leave the term alone */
            SC_TRY(sc__term_reserve(t, t->len));
            (void)sc__filter_apply(f, t);
            continue;
        default:
            /* the in-place filters need room for a term twice as long */
            SC_TRY(sc__term_reserve(t, t->len));
            (void)sc__filter_apply(f, t);
            continue;
        }
    }
    return emit_final(r, t, m);
}

/* End of input: buffering stages hand on what they hold, in chain order. */
static sc_status flush(srun *r)
{
    for (size_t i = 0; i < r->a->n_filters; i++) {
        if (r->a->filters[i].kind == SC__F_SHINGLE) {
            while (r->stages[i].n_win > 0)
                SC_TRY(shingle_emit_first(r, i));
        }
        if (r->a->filters[i].kind == SC__F_SYNONYM) {
            syn_ctx c = {r, i};
            SC_TRY(sc__syn_flush(&r->a->filters[i], &r->stages[i].syn, syn_emit, &c));
        }
    }
    return SC_OK;
}

static size_t copy_replacing(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp = sc__utf8_next(src, n, &i);
        o += sc_utf8_put(dst + o, cp);
    }
    return o;
}

static sc_status on_raw(void *vctx, size_t start, size_t end, bool valid, sc_token_type type)
{
    srun *r = vctx;
    sc__term *t = &r->tok;
    SC_TRY(sc__term_reserve(t, 3 * (end - start)));
    if (valid) {
        if (end > start)
            memcpy(t->buf, r->text + start, end - start);
        t->len = end - start;
    } else {
        t->len = copy_replacing(t->buf, r->text + start, end - start);
    }
    t->keyword = false;
    t->stemmers = r->stemmers;
    t->snowball = r->snowball_en;
    meta m = {1, (uint32_t)start, (uint32_t)end, type, 1};
    if (r->filtered) {
        m.start = sc__filtered_correct(r->filtered, start);
        m.end = sc__filtered_correct(r->filtered, end);
    }
    return push(r, 0, t, m);
}

static sc_status make_stemmers(srun *r)
{
    const sc_analyzer *a = r->a;
    for (size_t i = 0; i < a->n_filters; i++) {
        const sc__filter *f = &a->filters[i];
        if (f->kind == SC__F_SNOWBALL && f->slot < SC__MAX_STEMMERS && !r->stemmers[f->slot]) {
            r->stemmers[f->slot] = sb_stemmer_new(f->lang, NULL);
            if (!r->stemmers[f->slot])
                return SC_ENOMEM;
        }
        if (f->kind == SC__F_SNOWBALL_EN && !r->snowball_en) {
            r->snowball_en = sb_stemmer_new("english", NULL);
            if (!r->snowball_en)
                return SC_ENOMEM;
        }
    }
    return SC_OK;
}

sc_status sc__analyze_stream(const sc_analyzer *a, sc_slice text, sc_token_sink sink, void *ctx)
{
    srun r;
    memset(&r, 0, sizeof(r));
    r.a = a;
    r.sink = sink;
    r.ctx = ctx;
    r.pos = -1;
    r.text = text.ptr;
    sc__filtered filtered;
    memset(&filtered, 0, sizeof(filtered));
    sc_status st = SC_OK;
    r.stages = sc_alloc_calloc(&sc__text_pool, a->n_filters + 1, sizeof(stage));
    if (!r.stages)
        return SC_ENOMEM;
    st = make_stemmers(&r);
    sc_slice in = text;
    if (st == SC_OK && a->n_charfilters > 0) {
        st = sc__charfilters_run(a->charfilters, a->n_charfilters, text, &filtered);
        if (st == SC_OK) {
            r.filtered = &filtered;
            r.text = filtered.text;
            in = (sc_slice){filtered.text, filtered.len};
        }
    }
    if (st == SC_OK)
        st = a->tokenizer == SC__TOK_NGRAM || a->tokenizer == SC__TOK_EDGE_NGRAM
                 ? sc__tokenize_ngram(a->tokenizer, &a->topts, in, on_raw, &r)
                 : sc__tokenize(a->tokenizer, a->max_token_len, in, on_raw, &r);
    if (st == SC_OK)
        st = flush(&r);
    for (size_t i = 0; i < a->n_filters; i++) {
        stage *s = &r.stages[i];
        term_free(&s->out);
        term_free(&s->save);
        seen_clear(s);
        sc_alloc_free(&sc__text_pool, s->seen);
        for (size_t k = 0; k < s->n_win; k++)
            sc_alloc_free(&sc__text_pool, s->win[k].term);
        sc_alloc_free(&sc__text_pool, s->win);
        sc__syn_state_fini(&s->syn);
        sc__wd_parts_fini(&s->wd);
    }
    sc_alloc_free(&sc__text_pool, r.stages);
    term_free(&r.tok);
    for (size_t i = 0; i < SC__MAX_STEMMERS; i++)
        if (r.stemmers[i])
            sb_stemmer_delete(r.stemmers[i]);
    if (r.snowball_en)
        sb_stemmer_delete(r.snowball_en);
    sc__filtered_fini(&filtered);
    return st;
}
