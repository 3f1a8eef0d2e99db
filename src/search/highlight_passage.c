/* The highlighter's passage half (highlight_internal.h): cuts one doc's content into passages
 * around its matches with ICU break iterators (Elasticsearch's bounded sentence scanner: whole
 * sentences merged up to fragment_size, longer ones re-cut at word boundaries), scores them as
 * Lucene's PassageScorer (BM25 with k1 1.2, b 0.75, pivot 87 over passages of the one doc; UTF-16
 * lengths, as Java counts), keeps the best number_of_fragments and formats them as
 * Elasticsearch's CustomPassageFormatter (tags, encoder, trimmed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include "search/highlight_internal.h"

#define SEP_LEN 3 /* U+2029 between values */

static sc_status oom(sc_arena *a)
{
    return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

/* ---- boundaries ---- */

typedef enum bkind {
    B_ICU,
    B_LIST,
    B_CHARS,
    B_VALUES
} bkind;

/* One boundary source over the content: preceding(x) = last boundary < x (or -1), following(x)
 * = first boundary > x (or -1), as java.text.BreakIterator. */
typedef struct breaker {
    bkind kind;
    UBreakIterator *bi;
    const sc__hl_doc *d;
    sc_slice chars;
    const int32_t *list; /* B_LIST: every boundary, ascending (0 and the length included) */
    size_t n_list;
} breaker;

/* Index of the first entry of b->list greater than x. */
static size_t list_upper(const breaker *b, int32_t x)
{
    size_t lo = 0, hi = b->n_list;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->list[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool is_bchar(const breaker *b, uint8_t c)
{
    return memchr(b->chars.ptr, c, b->chars.len) != NULL;
}

static bool value_break(const sc__hl_doc *d, int32_t i)
{
    if (i == 0 || (size_t)i == d->text.len)
        return true;
    for (size_t v = 0; v + 1 < d->n_values; v++)
        if ((int32_t)d->value_ends[v] + SEP_LEN == i)
            return true;
    return false;
}

static bool is_break(const breaker *b, int32_t i)
{
    if (b->kind == B_VALUES)
        return value_break(b->d, i);
    return i == 0 || (size_t)i == b->d->text.len || is_bchar(b, b->d->text.ptr[i - 1]);
}

static int32_t b_preceding(const breaker *b, int32_t x)
{
    if (b->kind == B_ICU)
        return ubrk_preceding(b->bi, x);
    if (b->kind == B_LIST) {
        size_t i = list_upper(b, x - 1);
        return i > 0 ? b->list[i - 1] : -1;
    }
    for (int32_t i = x - 1; i >= 0; i--)
        if (is_break(b, i))
            return i;
    return -1;
}

static int32_t b_following(const breaker *b, int32_t x)
{
    if (b->kind == B_ICU)
        return ubrk_following(b->bi, x);
    if (b->kind == B_LIST) {
        size_t i = list_upper(b, x);
        return i < b->n_list ? b->list[i] : -1;
    }
    for (int32_t i = x + 1; (size_t)i <= b->d->text.len; i++)
        if (is_break(b, i))
            return i;
    return -1;
}

/* True when offset x follows a value separator: sentences never merge across values. */
static bool after_value(const sc__hl_doc *d, int32_t x)
{
    return d->n_values > 1 && x >= SEP_LEN &&
           memcmp(d->text.ptr + x - SEP_LEN, "\xE2\x80\xA9", SEP_LEN) == 0;
}

/* Elasticsearch's BoundedBreakIteratorScanner semantics, written for our loop: main units
 * (sentences) are merged while the window stays within max_len; a unit longer than max_len
 * is re-cut around the match with the inner (word) boundaries. Calls come with increasing
 * offsets. max_len <= 0: the main boundaries as they are. */
typedef struct bounded {
    breaker *main, *inner;
    int32_t max_len;
    int32_t win_start, win_end, in_start, in_end;
} bounded;

static int32_t bd_preceding(bounded *s, int32_t off)
{
    if (s->max_len <= 0 || !s->inner) {
        s->in_start = b_preceding(s->main, off);
        s->in_end = b_following(s->main, off - 1);
        return s->in_start;
    }
    if (off > s->win_start && off < s->win_end) {
        s->in_start = s->in_end;
        s->in_end = s->win_end;
    } else {
        s->win_start = s->in_start = b_preceding(s->main, off);
        s->win_end = s->in_end = b_following(s->main, off - 1);
        while (s->in_end - s->in_start < s->max_len && !after_value(s->main->d, s->in_end)) {
            int32_t e = b_following(s->main, s->in_end);
            if (e < 0 || e - s->in_start > s->max_len)
                break;
            s->win_end = s->in_end = e;
        }
    }
    if (s->in_end - s->in_start > s->max_len) {
        if (off - s->max_len > s->in_start) {
            int32_t p = b_preceding(s->inner, off - s->max_len);
            if (p > s->in_start)
                s->in_start = p;
        }
        int32_t rem = s->max_len - (off - s->in_start);
        if (rem < 0)
            rem = 0;
        if (off + rem < s->win_end) {
            int32_t f = b_following(s->inner, off + rem);
            s->in_end = f < 0 || f > s->win_end ? s->win_end : f;
        }
    }
    return s->in_start;
}

/* ---- passages ---- */

typedef struct psg {
    int32_t start, end;
    float score;
    uint32_t first, n; /* matches d->m[first .. first + n) */
} psg;

typedef struct u16cur {
    const uint8_t *p;
    size_t byte, u16;
} u16cur;

/* UTF-16 units of text[0, off) (4-byte sequences count 2), continuing from the cursor. */
static size_t u16_at(u16cur *c, size_t off)
{
    if (off < c->byte)
        c->byte = c->u16 = 0;
    for (; c->byte < off; c->byte++) {
        uint8_t x = c->p[c->byte];
        if ((x & 0xC0) != 0x80)
            c->u16 += x >= 0xF0 ? 2 : 1;
    }
    return c->u16;
}

/* Lucene's PassageScorer, in its float/double steps. */
static float lucene_weight(int content_len, int freq_in_doc)
{
    float num_docs = 1 + (float)content_len / 87.0f;
    return (1.2f + 1) * (float)log(1 + ((double)num_docs + 0.5) / ((double)freq_in_doc + 0.5));
}

static float lucene_tf(int freq, int passage_len)
{
    float norm = 1.2f * ((1 - 0.75f) + 0.75f * ((float)passage_len / 87.0f));
    return (float)freq / ((float)freq + norm);
}

static float lucene_norm(int start)
{
    return 1 + 1 / (float)log(87.0f + (float)start);
}

static float score_passage(const sc__hl_doc *d, const psg *p, u16cur *cur, int content_u16,
                           uint32_t *seen, uint32_t *cnt)
{
    /* distinct terms in first-seen order with their counts in the passage */
    size_t nd = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t t = d->m[p->first + i].term, k = 0;
        while (k < nd && seen[k] != t)
            k++;
        if (k == nd) {
            seen[nd] = t;
            cnt[nd++] = 0;
        }
        cnt[k]++;
    }
    int start_u16 = (int)u16_at(cur, (size_t)p->start);
    int len_u16 = (int)u16_at(cur, (size_t)p->end) - start_u16;
    float s = 0;
    for (size_t k = 0; k < nd; k++)
        s += lucene_tf((int)cnt[k], len_u16) *
             lucene_weight(content_u16, (int)d->term_freq[seen[k]]);
    return s * lucene_norm(start_u16);
}

/* The best `max` passages kept in q[0..*nq): a candidate that ties the worst replaces it when
 * it starts later, as Lucene's queue (score, then start) does. */
static void offer(psg *q, size_t *nq, size_t max, const psg *p)
{
    if (*nq < max) {
        q[(*nq)++] = *p;
        return;
    }
    size_t w = 0;
    for (size_t i = 1; i < *nq; i++)
        if (q[i].score < q[w].score || (q[i].score == q[w].score && q[i].start < q[w].start))
            w = i;
    if (p->score < q[w].score || (p->score == q[w].score && p->start < q[w].start))
        return;
    q[w] = *p;
}

static int cmp_start(const void *x, const void *y)
{
    const psg *a = x, *b = y;
    return (a->start > b->start) - (a->start < b->start);
}

static int cmp_score(const void *x, const void *y)
{
    const psg *a = x, *b = y;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* Passages around the matches (Elasticsearch's loop: a match past the current passage opens a
 * new one from the boundary before it to the boundary after its start). */
static sc_status build(const sc__hl_doc *d, bounded *bd, size_t max, sc_arena *a, psg *q,
                       size_t *nq)
{
    int32_t clen = (int32_t)d->text.len;
    u16cur cur = {.p = d->text.ptr};
    int content_u16 = (int)u16_at(&cur, d->text.len);
    uint32_t *seen = sc_arena_alloc(a, (d->n_m ? d->n_m : 1) * 2 * sizeof *seen);
    if (!seen)
        return oom(a);
    psg p = {.start = -1, .end = -1};
    for (uint32_t i = 0; i < d->n_m; i++) {
        int32_t s = (int32_t)d->m[i].start;
        if (s >= p.end) {
            if (p.start >= 0) {
                p.score = score_passage(d, &p, &cur, content_u16, seen, seen + d->n_m);
                offer(q, nq, max, &p);
            }
            if (s >= clen)
                break;
            int32_t ps = bd_preceding(bd, s + 1);
            int32_t pe = bd->in_end;
            p = (psg){.start = ps < 0 ? 0 : ps, .end = pe < 0 || pe > clen ? clen : pe, .first = i};
        }
        p.n++;
    }
    if (p.start >= 0) {
        p.score = score_passage(d, &p, &cur, content_u16, seen, seen + d->n_m);
        offer(q, nq, max, &p);
    }
    return SC_OK;
}

/* ---- formatting ---- */

typedef struct sbuf {
    uint8_t *p;
    size_t len, cap;
    sc_arena *a;
    bool fail;
} sbuf;

static void put(sbuf *b, const void *s, size_t n)
{
    if (b->fail || n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + n;
        uint8_t *np = sc_arena_alloc(b->a, cap);
        if (!np) {
            b->fail = true;
            return;
        }
        if (b->len)
            memcpy(np, b->p, b->len);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Appends text[from, to), escaped as Lucene's SimpleHTMLEncoder when html. */
static void put_text(sbuf *b, sc_slice text, size_t from, size_t to, bool html)
{
    if (!html) {
        put(b, text.ptr + from, to - from);
        return;
    }
    size_t run = from;
    for (size_t i = from; i < to; i++) {
        const char *e = NULL;
        switch (text.ptr[i]) {
        case '"': e = "&quot;"; break;
        case '&': e = "&amp;"; break;
        case '<': e = "&lt;"; break;
        case '>': e = "&gt;"; break;
        case '\'': e = "&#x27;"; break;
        case '/': e = "&#x2F;"; break;
        default: continue;
        }
        put(b, text.ptr + run, i - run);
        put(b, e, strlen(e));
        run = i + 1;
    }
    put(b, text.ptr + run, to - run);
}

/* One snippet: the passage's text with its matches tagged (overlapping matches merged), a
 * trailing value separator dropped, trimmed of Java-trim whitespace (<= U+0020). */
static sc_status format_one(const sc__hl_doc *d, const psg *p, const sc_hl_options *o, sc_arena *a,
                            sc_slice *out)
{
    sbuf b = {.a = a};
    size_t pos = (size_t)p->start, pend = (size_t)p->end;
    for (uint32_t i = 0; i < p->n; i++) {
        size_t s = d->m[p->first + i].start, e = d->m[p->first + i].end;
        if (s < pos)
            s = pos;
        put_text(&b, d->text, pos, s, o->encoder_html);
        while (i + 1 < p->n && d->m[p->first + i + 1].start < e)
            e = d->m[p->first + ++i].end;
        if (e > pend)
            e = pend;
        if (e < s)
            e = s;
        put(&b, o->pre_tag.ptr, o->pre_tag.len);
        put_text(&b, d->text, s, e, o->encoder_html);
        put(&b, o->post_tag.ptr, o->post_tag.len);
        pos = e;
    }
    if (pend > pos)
        put_text(&b, d->text, pos, pend, o->encoder_html);
    if (b.fail)
        return oom(a);
    size_t lo = 0, hi = b.len;
    if (hi >= SEP_LEN && memcmp(b.p + hi - SEP_LEN, "\xE2\x80\xA9", SEP_LEN) == 0)
        hi -= SEP_LEN;
    while (lo < hi && b.p[lo] <= 0x20)
        lo++;
    while (hi > lo && b.p[hi - 1] <= 0x20)
        hi--;
    *out = sc_slice_make(b.p ? b.p + lo : (const uint8_t *)"", hi - lo);
    return SC_OK;
}

/* Without a match: the first value's start up to the word boundary after no_match_size. */
static bool no_match_passage(const sc__hl_doc *d, const sc_hl_options *o, breaker *word, psg *p)
{
    if (o->no_match_size == 0 || d->text.len == 0)
        return false;
    size_t pos = 0, end = d->n_values ? d->value_ends[0] : d->text.len;
    for (size_t v = 0; pos == end && v + 1 < d->n_values; v++) { /* skip empty values */
        pos = d->value_ends[v] + SEP_LEN;
        end = d->value_ends[v + 1];
    }
    if (pos >= end)
        return false;
    if ((size_t)o->no_match_size + pos < end) {
        int32_t f = b_following(word, (int32_t)(o->no_match_size + pos));
        end = f < 0 ? d->text.len : (size_t)f;
    }
    *p = (psg){.start = (int32_t)pos, .end = (int32_t)end, .score = NAN};
    return true;
}

struct sc_hl_scratch {
    UBreakIterator *sentence, *word; /* opened on first use, re-pointed per doc */
    UText *ut;
};

sc_status sc_hl_scratch_new(sc_hl_scratch **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? SC_OK : SC_ENOMEM;
}

void sc_hl_scratch_free(sc_hl_scratch *s)
{
    if (!s)
        return;
    if (s->sentence)
        ubrk_close(s->sentence);
    if (s->word)
        ubrk_close(s->word);
    if (s->ut)
        utext_close(s->ut);
    free(s);
}

/* Points the scratch's iterator of `type` at the doc's text (opened on first use). */
static sc_status icu_breaker(sc_hl_scratch *sc, UBreakIteratorType type, const sc__hl_doc *d,
                             breaker *b)
{
    UErrorCode err = U_ZERO_ERROR;
    UBreakIterator **bi = type == UBRK_SENTENCE ? &sc->sentence : &sc->word;
    if (!*bi)
        *bi = ubrk_open(type, "", NULL, 0, &err);
    if (U_SUCCESS(err))
        ubrk_setUText(*bi, sc->ut, &err);
    if (U_FAILURE(err))
        return SC_ENOMEM;
    b->kind = B_ICU;
    b->d = d;
    b->bi = *bi;
    return SC_OK;
}

/* Sentences: every boundary listed in one forward pass (then preceding / following are binary
 * searches: the passage loop asks around every match, and ICU's backward scan costs more than
 * its forward one). */
static sc_status sentence_list(sc_hl_scratch *sc, const sc__hl_doc *d, sc_arena *a, breaker *b)
{
    int32_t *ascii;
    size_t n_ascii;
    if (sc__hl_ascii_sentences(d->text, a, &ascii, &n_ascii)) {
        *b = (breaker){.kind = B_LIST, .d = d, .list = ascii, .n_list = n_ascii};
        return SC_OK;
    }
    breaker icu;
    SC_TRY(icu_breaker(sc, UBRK_SENTENCE, d, &icu));
    size_t n = 0, cap = 16;
    int32_t *list = sc_arena_alloc(a, cap * sizeof *list);
    for (int32_t x = ubrk_first(icu.bi); list && x != UBRK_DONE; x = ubrk_next(icu.bi)) {
        if (n == cap) {
            int32_t *nl = sc_arena_alloc(a, cap * 2 * sizeof *nl);
            if (nl)
                memcpy(nl, list, n * sizeof *nl);
            list = nl;
            cap *= 2;
            if (!list)
                break;
        }
        list[n++] = x;
    }
    if (!list)
        return oom(a);
    *b = (breaker){.kind = B_LIST, .d = d, .list = list, .n_list = n};
    return SC_OK;
}

static sc_status select_and_format(const sc__hl_doc *d, const sc_hl_options *o, breaker *word,
                                   bounded *bd, size_t max, sc_arena *a, sc_slice **frags,
                                   size_t *n_frags)
{
    psg *q = sc_arena_alloc(a, (max ? max : 1) * sizeof *q);
    if (!q)
        return oom(a);
    size_t nq = 0;
    SC_TRY(build(d, bd, max, a, q, &nq));
    if (nq == 0 && no_match_passage(d, o, word, &q[0]))
        nq = 1;
    qsort(q, nq, sizeof *q, cmp_start);
    if (o->order_score && nq > 1)
        qsort(q, nq, sizeof *q, cmp_score);
    sc_slice *f = sc_arena_alloc(a, (nq ? nq : 1) * sizeof *f);
    if (!f)
        return oom(a);
    size_t nf = 0;
    for (size_t i = 0; i < nq; i++) {
        SC_TRY(format_one(d, &q[i], o, a, &f[nf]));
        nf += f[nf].len > 0;
    }
    *frags = f;
    *n_frags = nf;
    return SC_OK;
}

sc_status sc__hl_snippets(const sc__hl_doc *d, const sc_hl_options *o, sc_hl_scratch *scratch,
                          sc_arena *a, sc_slice **frags, size_t *n_frags)
{
    *frags = NULL;
    *n_frags = 0;
    if (d->text.len == 0 || d->text.len > INT32_MAX / 2 || (d->n_m == 0 && o->no_match_size == 0))
        return SC_OK;
    sc_hl_scratch *own = NULL;
    if (!scratch) {
        SC_TRY(sc_hl_scratch_new(&own));
        scratch = own;
    }
    UErrorCode err = U_ZERO_ERROR;
    scratch->ut =
        utext_openUTF8(scratch->ut, (const char *)d->text.ptr, (int64_t)d->text.len, &err);
    if (U_FAILURE(err)) {
        sc_hl_scratch_free(own);
        return SC_ENOMEM;
    }
    breaker main = {.d = d, .chars = o->boundary_chars}, word = {.d = d};
    sc_status st = icu_breaker(scratch, UBRK_WORD, d, &word);
    bounded bd = {.main = &main, .win_start = -1, .win_end = -1, .in_start = -1};
    size_t max = o->number_of_fragments;
    if (st == SC_OK && o->number_of_fragments == 0) {
        main.kind = B_VALUES; /* each value whole, one snippet per value */
        max = d->n_values;
    } else if (st == SC_OK && o->boundary == SC_HL_BOUNDARY_WORD) {
        main = word;
    } else if (st == SC_OK && o->boundary == SC_HL_BOUNDARY_CHARS) {
        main.kind = B_CHARS;
        bd.inner = &word;
        bd.max_len = (int32_t)o->fragment_size;
    } else if (st == SC_OK) {
        st = sentence_list(scratch, d, a, &main);
        bd.inner = &word;
        bd.max_len = (int32_t)o->fragment_size;
    }
    if (st == SC_OK)
        st = select_and_format(d, o, &word, &bd, max, a, frags, n_frags);
    sc_hl_scratch_free(own);
    return st;
}
