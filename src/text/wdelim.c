/* word_delimiter_graph and word_delimiter: Lucene 8.7 WordDelimiterGraphFilter's splitting of one
 * term into word and number parts and their concatenations, with graph positions (stream.c emits
 * them). A term is split at characters that are neither letters nor digits, at lower->upper case
 * changes and at letter<->digit changes; "'s" is dropped from the end of parts. Character classes
 * are Lucene's default table (Java's isLowerCase/isUpperCase/isDigit below U+0100, the general
 * category above), taken per code point. */
#include <string.h>
#include <unicode/uchar.h>

#include "text/internal.h"

enum {
    LOWER = 1,
    UPPER = 2,
    DIGIT = 4,
    DELIM = 8,
    ALPHA = LOWER | UPPER
};

static int char_type(uint32_t c)
{
    if (c < 256) {
        if (u_hasBinaryProperty((UChar32)c, UCHAR_LOWERCASE))
            return LOWER;
        if (u_hasBinaryProperty((UChar32)c, UCHAR_UPPERCASE))
            return UPPER;
        if (u_charType((UChar32)c) == U_DECIMAL_DIGIT_NUMBER)
            return DIGIT;
        return DELIM;
    }
    if (c >= 0x10000)
        return ALPHA | DIGIT; /* Java sees two surrogates, which never split */
    switch (u_charType((UChar32)c)) {
    case U_UPPERCASE_LETTER: return UPPER;
    case U_LOWERCASE_LETTER: return LOWER;
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK: return ALPHA;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER: return DIGIT;
    case U_SURROGATE: return ALPHA | DIGIT;
    default: return DELIM;
    }
}

/* The iterator over subwords (Lucene WordDelimiterIterator), over code points. */
typedef struct iter {
    const uint32_t *cp;
    const int *ty;
    int32_t len, start_b, end_b; /* bounds without leading/trailing delimiters */
    int32_t cur, end;            /* current subword [cur, end); end -1 = done */
    bool split_case, split_num, possessive, final_possessive, skip_possessive;
} iter;

static bool is_alpha(int t)
{
    return (t & ALPHA) != 0;
}

static bool is_digit(int t)
{
    return (t & DIGIT) != 0;
}

static bool is_break(const iter *it, int last, int t)
{
    if ((t & last) != 0)
        return false;
    if (!it->split_case && is_alpha(last) && is_alpha(t))
        return false;
    if ((last & UPPER) && is_alpha(t))
        return false;
    if (!it->split_num && ((is_alpha(last) && is_digit(t)) || (is_digit(last) && is_alpha(t))))
        return false;
    return true;
}

static bool ends_possessive(const iter *it, int32_t pos)
{
    return it->possessive && pos > 2 && it->cp[pos - 2] == '\'' &&
           (it->cp[pos - 1] == 's' || it->cp[pos - 1] == 'S') && is_alpha(it->ty[pos - 3]) &&
           (pos == it->end_b || (it->ty[pos] & DELIM));
}

static int32_t iter_next(iter *it)
{
    it->cur = it->end;
    if (it->cur < 0)
        return -1;
    if (it->skip_possessive) {
        it->cur += 2;
        it->skip_possessive = false;
    }
    int last = 0;
    while (it->cur < it->end_b && ((last = it->ty[it->cur]) & DELIM))
        it->cur++;
    if (it->cur >= it->end_b)
        return it->end = -1;
    for (it->end = it->cur + 1; it->end < it->end_b; it->end++) {
        int t = it->ty[it->end];
        if (is_break(it, last, t))
            break;
        last = t;
    }
    if (it->end < it->end_b - 1 && ends_possessive(it, it->end + 2))
        it->skip_possessive = true;
    return it->end;
}

static int iter_type(const iter *it)
{
    if (it->end < 0)
        return 0;
    int t = it->ty[it->cur];
    return t == LOWER || t == UPPER ? ALPHA : t;
}

static void iter_init(iter *it, int32_t len)
{
    it->len = len;
    it->start_b = 0;
    it->end_b = len;
    it->cur = it->end = 0;
    it->skip_possessive = it->final_possessive = false;
    while (it->start_b < len && (it->ty[it->start_b] & DELIM))
        it->start_b++;
    while (it->end_b > it->start_b && (it->ty[it->end_b - 1] & DELIM))
        it->end_b--;
    if (ends_possessive(it, it->end_b))
        it->final_possessive = true;
    it->cur = it->start_b;
}

static bool iter_single(const iter *it)
{
    return it->cur == it->start_b && it->end == (it->final_possessive ? it->end_b - 2 : it->end_b);
}

/* A concatenation being built. */
typedef struct concat {
    uint8_t *buf;
    size_t len, cap;
    int32_t start_part, end_part;
    uint32_t start_pos;
    int type, n_sub;
} concat;

typedef struct wctx {
    const sc__filter *f;
    const uint8_t *term;
    const uint32_t *boff; /* code point index -> byte offset (len + 1 entries) */
    iter it;
    sc__wd_parts *out;
    uint32_t word_pos;
    int last_concat_count;
    bool nomem;
} wctx;

static bool has(const wctx *w, uint32_t flag)
{
    return (w->f->a & flag) != 0;
}

static void buffer(wctx *w, uint8_t *cat, size_t cat_len, uint32_t sp, uint32_t ep, int32_t s,
                   int32_t e)
{
    sc__wd_parts *ps = w->out;
    if (ps->n == ps->cap) {
        size_t nc = ps->cap ? 2 * ps->cap : 16;
        sc__wd_part *np = sc_alloc_realloc(&sc__text_pool, ps->p, nc * sizeof(*np));
        if (!np) {
            sc_alloc_free(&sc__text_pool, cat);
            w->nomem = true;
            return;
        }
        ps->p = np;
        ps->cap = nc;
    }
    ps->p[ps->n++] = (sc__wd_part){sp, ep, w->boff[s], w->boff[e], cat, cat_len, 0, 0, 0};
}

static void concat_add(wctx *w, concat *c)
{
    if (c->len == 0) {
        c->type = iter_type(&w->it);
        c->start_part = w->it.cur;
        c->start_pos = w->word_pos;
    }
    size_t a = w->boff[w->it.cur], b = w->boff[w->it.end];
    if (c->len + (b - a) > c->cap) {
        size_t nc = 2 * (c->len + (b - a)) + 16;
        uint8_t *nb = sc_alloc_realloc(&sc__text_pool, c->buf, nc);
        if (!nb) {
            w->nomem = true;
            return;
        }
        c->buf = nb;
        c->cap = nc;
    }
    memcpy(c->buf + c->len, w->term + a, b - a);
    c->len += b - a;
    c->n_sub++;
    c->end_part = w->it.end;
}

static void concat_write(wctx *w, concat *c)
{
    uint8_t *t = sc_alloc_malloc(&sc__text_pool, c->len ? c->len : 1);
    if (!t) {
        w->nomem = true;
        return;
    }
    memcpy(t, c->buf, c->len);
    buffer(w, t, c->len, c->start_pos, w->word_pos, c->start_part, c->end_part);
}

static void concat_clear(concat *c)
{
    c->len = 0;
    c->start_part = c->end_part = 0;
    c->type = c->n_sub = 0;
}

static bool should_generate(const wctx *w, int t)
{
    return (has(w, SC__WD_WORD_PARTS) && is_alpha(t)) ||
           (has(w, SC__WD_NUMBER_PARTS) && is_digit(t));
}

static bool should_concat(const wctx *w, int t)
{
    return (has(w, SC__WD_CATENATE_WORDS) && is_alpha(t)) ||
           (has(w, SC__WD_CATENATE_NUMBERS) && is_digit(t));
}

static void flush_concat(wctx *w, concat *c)
{
    if (w->word_pos == c->start_pos)
        w->word_pos++;
    w->last_concat_count = c->n_sub;
    if (c->n_sub != 1 || !should_generate(w, c->type))
        concat_write(w, c);
    concat_clear(c);
}

/* Stable sort by where the part starts in the term, then longest first (Lucene 8.7's
 * PositionSorter compares the term slices, not the graph positions). */
static void sort_parts(sc__wd_parts *ps)
{
    for (size_t i = 1; i < ps->n; i++) {
        sc__wd_part x = ps->p[i];
        size_t j = i;
        while (j > 0 && (ps->p[j - 1].start_b > x.start_b ||
                         (ps->p[j - 1].start_b == x.start_b && ps->p[j - 1].end_b < x.end_b))) {
            ps->p[j] = ps->p[j - 1];
            j--;
        }
        ps->p[j] = x;
    }
}

static void buffer_word_parts(wctx *w, int32_t n_cp)
{
    iter *it = &w->it;
    concat c = {0}, all = {0};
    w->word_pos = 0;
    w->last_concat_count = 0;
    if (has(w, SC__WD_PRESERVE)) {
        /* the original goes first; its end position is known at the end */
        buffer(w, NULL, 0, 0, 1, 0, n_cp);
    }
    if (iter_single(it)) {
        buffer(w, NULL, 0, 0, 1, it->cur, it->end);
        w->word_pos++;
        iter_next(it);
    } else {
        while (it->end >= 0 && !w->nomem) {
            int t = iter_type(it);
            if (c.len > 0 && (c.type & t) == 0)
                flush_concat(w, &c);
            if (should_concat(w, t))
                concat_add(w, &c);
            if (has(w, SC__WD_CATENATE_ALL))
                concat_add(w, &all);
            if (should_generate(w, t)) {
                buffer(w, NULL, 0, w->word_pos, w->word_pos + 1, it->cur, it->end);
                w->word_pos++;
            }
            iter_next(it);
        }
        if (c.len > 0)
            flush_concat(w, &c);
        if (all.len > 0) {
            if (all.n_sub > w->last_concat_count) {
                if (w->word_pos == all.start_pos)
                    w->word_pos++;
                concat_write(w, &all);
            }
            concat_clear(&all);
        }
    }
    if (has(w, SC__WD_PRESERVE) && w->out->n > 0)
        w->out->p[0].end_pos = w->word_pos > 1 ? w->word_pos : 1;
    sc_alloc_free(&sc__text_pool, c.buf);
    sc_alloc_free(&sc__text_pool, all.buf);
    sort_parts(w->out);
}

void sc__wd_parts_clear(sc__wd_parts *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        sc_alloc_free(&sc__text_pool, ps->p[i].cat);
    ps->n = 0;
}

void sc__wd_parts_fini(sc__wd_parts *ps)
{
    sc__wd_parts_clear(ps);
    sc_alloc_free(&sc__text_pool, ps->p);
    memset(ps, 0, sizeof(*ps));
}

sc_status sc__wdelim_split(const sc__filter *f, const uint8_t *term, size_t len, sc__wd_parts *out,
                           bool *whole, bool *delims)
{
    sc__wd_parts_clear(out);
    *whole = *delims = false;
    uint32_t stack_cp[64], stack_off[65];
    int stack_ty[64];
    uint32_t *cp = stack_cp, *boff = stack_off;
    int *ty = stack_ty;
    void *heap = NULL;
    if (len > 64) {
        heap = sc_alloc_malloc(&sc__text_pool, len * (2 * sizeof(uint32_t) + sizeof(int)) + 8);
        if (!heap)
            return SC_ENOMEM;
        cp = heap;
        boff = cp + len;
        ty = (int *)(boff + len + 1);
    }
    int32_t n = 0;
    size_t i = 0;
    while (i < len) {
        boff[n] = (uint32_t)i;
        cp[n] = sc__utf8_next(term, len, &i);
        ty[n] = char_type(cp[n]);
        n++;
    }
    boff[n] = (uint32_t)len;
    wctx w = {f, term, boff, {0}, out, 0, 0, false};
    w.it.cp = cp;
    w.it.ty = ty;
    w.it.split_case = has(&w, SC__WD_SPLIT_CASE);
    w.it.split_num = has(&w, SC__WD_SPLIT_NUMERICS);
    w.it.possessive = has(&w, SC__WD_POSSESSIVE);
    iter_init(&w.it, n);
    iter_next(&w.it);
    if ((w.it.cur == 0 && w.it.end == n) || (f->stop && sc__stopset_has(f->stop, term, len))) {
        *whole = true;
    } else if (w.it.end < 0) {
        *whole = *delims = has(&w, SC__WD_PRESERVE);
    } else {
        buffer_word_parts(&w, n);
    }
    sc_alloc_free(&sc__text_pool, heap);
    if (w.nomem) {
        sc__wd_parts_clear(out);
        return SC_ENOMEM;
    }
    return SC_OK;
}

/* ---- the legacy word_delimiter ------------------------------------------------------------ */

/* Lucene WordDelimiterFilter's state for one input token. */
typedef struct legacy {
    wctx w;
    const sc__filter *f;
    sc__wdl_state *st;
    uint32_t start, end; /* the token's offsets */
    bool illegal;        /* offsets do not span the term: parts take the token's */
    bool has_output, following_original;
    int last_concat_count;
    sc__wd_parts buf; /* buffered tokens, sorted by (start offset, posinc desc) when drained */
} legacy;

static bool lhas(const legacy *l, uint32_t flag)
{
    return (l->f->a & flag) != 0;
}

static uint32_t position(legacy *l, bool inject)
{
    uint32_t pi = l->st->accum;
    if (l->has_output) {
        l->st->accum = 0;
        return inject ? 0 : (pi > 1 ? pi : 1);
    }
    l->has_output = true;
    if (!l->following_original) {
        l->following_original = true;
        return 0;
    }
    l->st->accum = 0;
    return pi > 1 ? pi : 1;
}

static void lpush(legacy *l, sc__wd_parts *to, uint8_t *cat, size_t cat_len, int32_t s, int32_t e,
                  uint32_t so, uint32_t eo, uint32_t pi)
{
    sc__wd_parts *ps = to;
    if (ps->n == ps->cap) {
        size_t nc = ps->cap ? 2 * ps->cap : 16;
        sc__wd_part *np = sc_alloc_realloc(&sc__text_pool, ps->p, nc * sizeof(*np));
        if (!np) {
            sc_alloc_free(&sc__text_pool, cat);
            l->w.nomem = true;
            return;
        }
        ps->p = np;
        ps->cap = nc;
    }
    ps->p[ps->n++] = (sc__wd_part){0, 0, l->w.boff[s], l->w.boff[e], cat, cat_len, so, eo, pi};
}

/* generatePart: the current subword, buffered or (single word) emitted. */
static void gen_part(legacy *l, sc__wd_parts *to, bool single)
{
    iter *it = &l->w.it;
    uint32_t so = l->start + l->w.boff[it->cur], eo = l->start + l->w.boff[it->end];
    if (l->illegal) {
        if (single && so <= l->end)
            eo = l->end;
        else {
            so = l->start;
            eo = l->end;
        }
    }
    lpush(l, to, NULL, 0, it->cur, it->end, so, eo, position(l, false));
}

/* concat.write() into the buffer; clears c. */
static void concat_emit(legacy *l, concat *c)
{
    uint8_t *t = sc_alloc_malloc(&sc__text_pool, c->len ? c->len : 1);
    if (!t) {
        l->w.nomem = true;
        return;
    }
    memcpy(t, c->buf, c->len);
    uint32_t so = l->illegal ? l->start : l->start + l->w.boff[c->start_part];
    uint32_t eo = l->illegal ? l->end : l->start + l->w.boff[c->end_part];
    lpush(l, &l->buf, t, c->len, c->start_part, c->end_part, so, eo, position(l, true));
    l->st->accum = 0;
    concat_clear(c);
}

/* flushConcatenation: true when it wrote the concatenation. */
static bool lflush(legacy *l, concat *c)
{
    l->last_concat_count = c->n_sub;
    if (c->n_sub != 1 || !should_generate(&l->w, c->type)) {
        concat_emit(l, c);
        return true;
    }
    concat_clear(c);
    return false;
}

static void sort_legacy(sc__wd_parts *ps)
{
    for (size_t i = 1; i < ps->n; i++) {
        sc__wd_part x = ps->p[i];
        size_t j = i;
        while (j > 0 && (ps->p[j - 1].so > x.so ||
                         (ps->p[j - 1].so == x.so && ps->p[j - 1].posinc < x.posinc))) {
            ps->p[j] = ps->p[j - 1];
            j--;
        }
        ps->p[j] = x;
    }
}

/* Moves the sorted buffer to out, applying the "first token never at increment 0" rule. */
static void drain(legacy *l, sc__wd_parts *out)
{
    sort_legacy(&l->buf);
    for (size_t i = 0; i < l->buf.n && !l->w.nomem; i++) {
        sc__wd_part p = l->buf.p[i];
        if (!l->st->started && p.posinc == 0)
            p.posinc = 1;
        l->st->started = true;
        l->buf.p[i].cat = NULL; /* ownership moves to out */
        lpush(l, out, p.cat, p.cat_len, 0, 0, p.so, p.eo, p.posinc);
        if (!l->w.nomem) {
            out->p[out->n - 1].start_b = p.start_b;
            out->p[out->n - 1].end_b = p.end_b;
        }
    }
    l->buf.n = 0;
}

static void legacy_run(legacy *l, sc__wd_parts *out)
{
    iter *it = &l->w.it;
    wctx *w = &l->w;
    concat c = {0}, all = {0};
    while (!w->nomem) {
        if (it->end < 0) {
            if (c.len > 0 && lflush(l, &c))
                continue;
            if (all.len > 0) {
                if (all.n_sub > l->last_concat_count) {
                    concat_emit(l, &all);
                    continue;
                }
                concat_clear(&all);
            }
            drain(l, out);
            break;
        }
        if (iter_single(it)) {
            gen_part(l, out, true);
            l->st->started = true;
            iter_next(it);
            continue;
        }
        int t = iter_type(it);
        if (c.len > 0 && (c.type & t) == 0) {
            bool wrote = lflush(l, &c);
            l->has_output = false;
            if (wrote)
                continue;
        }
        if (should_concat(w, t)) {
            bool empty = c.len == 0;
            concat_add(w, &c);
            if (empty)
                c.type = t;
        }
        if (lhas(l, SC__WD_CATENATE_ALL))
            concat_add(w, &all);
        if (should_generate(w, t))
            gen_part(l, &l->buf, false);
        iter_next(it);
    }
    sc_alloc_free(&sc__text_pool, c.buf);
    sc_alloc_free(&sc__text_pool, all.buf);
}

sc_status sc__wdelim_legacy(const sc__filter *f, const uint8_t *term, size_t len, uint32_t start,
                            uint32_t end, uint32_t posinc, bool keyword, sc__wdl_state *st,
                            sc__wd_parts *out)
{
    sc__wd_parts_clear(out);
    if ((f->a & SC__WD_IGNORE_KEYWORDS) && keyword) {
        legacy l0;
        memset(&l0, 0, sizeof(l0));
        uint32_t z = 0;
        l0.w.boff = &z;
        lpush(&l0, out, NULL, 0, 0, 0, start, end, posinc);
        out->p[0].end_b = (uint32_t)len;
        return l0.w.nomem ? SC_ENOMEM : SC_OK;
    }
    uint32_t stack_cp[64], stack_off[65];
    int stack_ty[64];
    uint32_t *cp = stack_cp, *boff = stack_off;
    int *ty = stack_ty;
    void *heap = NULL;
    if (len > 64) {
        heap = sc_alloc_malloc(&sc__text_pool, len * (2 * sizeof(uint32_t) + sizeof(int)) + 8);
        if (!heap)
            return SC_ENOMEM;
        cp = heap;
        boff = cp + len;
        ty = (int *)(boff + len + 1);
    }
    int32_t n = 0;
    size_t i = 0;
    while (i < len) {
        boff[n] = (uint32_t)i;
        cp[n] = sc__utf8_next(term, len, &i);
        ty[n] = char_type(cp[n]);
        n++;
    }
    boff[n] = (uint32_t)len;
    legacy l;
    memset(&l, 0, sizeof(l));
    l.w = (wctx){f, term, boff, {0}, out, 0, 0, false};
    l.w.it.cp = cp;
    l.w.it.ty = ty;
    l.w.it.split_case = (f->a & SC__WD_SPLIT_CASE) != 0;
    l.w.it.split_num = (f->a & SC__WD_SPLIT_NUMERICS) != 0;
    l.w.it.possessive = (f->a & SC__WD_POSSESSIVE) != 0;
    l.f = f;
    l.st = st;
    l.start = start;
    l.end = end;
    st->accum += posinc;
    iter_init(&l.w.it, n);
    iter_next(&l.w.it);
    if ((l.w.it.cur == 0 && l.w.it.end == n) || (f->stop && sc__stopset_has(f->stop, term, len))) {
        lpush(&l, out, NULL, 0, 0, n, start, end, st->accum);
        st->accum = 0;
        st->started = true;
    } else if (l.w.it.end < 0 && !lhas(&l, SC__WD_PRESERVE)) {
        if (posinc == 1 && st->started)
            st->accum--;
    } else {
        l.illegal = end - start != len;
        l.has_output = false;
        l.following_original = !lhas(&l, SC__WD_PRESERVE);
        if (lhas(&l, SC__WD_PRESERVE)) {
            lpush(&l, out, NULL, 0, 0, n, start, end, st->accum);
            st->accum = 0;
            st->started = true;
        }
        legacy_run(&l, out);
    }
    sc__wd_parts_fini(&l.buf);
    sc_alloc_free(&sc__text_pool, heap);
    if (l.w.nomem) {
        sc__wd_parts_clear(out);
        return SC_ENOMEM;
    }
    return SC_OK;
}
