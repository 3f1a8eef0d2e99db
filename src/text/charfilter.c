/* Char filters: rewrite a value before the tokenizer sees it, recording offset corrections so
 * that token offsets still point into the original text. Work happens in UTF-16, as in Lucene,
 * so that the corrections (and so the offsets the tokens report) are exactly Lucene's:
 *   mapping          MappingCharFilter: at each position the longest matching key is replaced
 *   pattern_replace  PatternReplaceCharFilter: every regex match replaced (ICU regex, `$n`)
 * A correction table is Lucene's BaseCharFilter table: (output offset, cumulative diff) pairs;
 * an output offset maps to itself plus the diff of the last entry at or before it. */
#include <stdio.h>
#include <string.h>
#include <unicode/uregex.h>
#include <unicode/ustring.h>

#include "text/internal.h"

typedef enum {
    CF_MAPPING,
    CF_PATTERN,
    CF_HTML
} cf_kind;

typedef struct mrule {
    UChar *key, *val;
    int32_t key_len, val_len;
} mrule;

struct sc__charfilter {
    cf_kind kind;
    mrule *rules; /* mapping: sorted by first unit, then longer keys first */
    size_t n_rules;
    URegularExpression *re; /* pattern: the compiled pattern (cloned per call) */
    UChar *repl;
    int32_t repl_len;
    sc__html_opts html; /* html_strip */
};

typedef struct sc__corr {
    int32_t *off, *diff;
    size_t n, cap;
} corr;

void sc__charfilter_free(sc__charfilter *cf)
{
    if (!cf)
        return;
    for (size_t i = 0; i < cf->n_rules; i++) {
        sc_alloc_free(&sc__text_pool, cf->rules[i].key);
        sc_alloc_free(&sc__text_pool, cf->rules[i].val);
    }
    sc_alloc_free(&sc__text_pool, cf->rules);
    if (cf->re)
        uregex_close(cf->re);
    sc_alloc_free(&sc__text_pool, cf->repl);
    sc__html_opts_fini(&cf->html);
    sc_alloc_free(&sc__text_pool, cf);
}

/* UTF-8 -> freshly allocated UTF-16 (invalid bytes become U+FFFD). */
static UChar *to_u16(const uint8_t *s, size_t n, int32_t *out_len)
{
    UChar *u = sc_alloc_malloc(&sc__text_pool, (2 * n + 1) * sizeof(UChar));
    if (!u)
        return NULL;
    int32_t k = 0;
    size_t i = 0;
    while (i < n) {
        uint32_t cp = sc__utf8_next(s, n, &i);
        if (cp >= 0x10000) {
            u[k++] = (UChar)(0xD7C0 + (cp >> 10));
            u[k++] = (UChar)(0xDC00 | (cp & 0x3FF));
        } else {
            u[k++] = (UChar)cp;
        }
    }
    *out_len = k;
    return u;
}

/* Elasticsearch's mapping rule escapes: \\ \n \t \r \b \f \' \" \uXXXX. Writes UTF-8 to dst. */
static bool unescape(const char *s, size_t n, char *dst, size_t *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            dst[o++] = s[i];
            continue;
        }
        if (++i >= n)
            return false;
        switch (s[i]) {
        case '\\': dst[o++] = '\\'; break;
        case 'n': dst[o++] = '\n'; break;
        case 't': dst[o++] = '\t'; break;
        case 'r': dst[o++] = '\r'; break;
        case 'b': dst[o++] = '\b'; break;
        case 'f': dst[o++] = '\f'; break;
        case '\'': dst[o++] = '\''; break;
        case '"': dst[o++] = '"'; break;
        case 'u': {
            if (i + 4 >= n)
                return false;
            unsigned v = 0;
            for (int k = 1; k <= 4; k++) {
                char c = s[i + (size_t)k];
                v <<= 4;
                if (c >= '0' && c <= '9')
                    v |= (unsigned)(c - '0');
                else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                    v |= (unsigned)((c | 0x20) - 'a' + 10);
                else
                    return false;
            }
            o += sc_utf8_put((uint8_t *)dst + o, v >= 0xD800 && v <= 0xDFFF ? 0xFFFD : v);
            i += 4;
            break;
        }
        default: return false;
        }
    }
    *out = o;
    return true;
}

static int rule_cmp(const void *pa, const void *pb)
{
    const mrule *a = pa, *b = pb;
    if (a->key[0] != b->key[0])
        return a->key[0] < b->key[0] ? -1 : 1;
    return a->key_len > b->key_len ? -1 : a->key_len < b->key_len ? 1 : 0;
}

sc_status sc__charfilter_mapping(const char *const *rules, size_t n, const char *path,
                                 sc__charfilter **out, char *err, size_t err_size)
{
    *out = NULL;
    sc__charfilter *cf = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*cf));
    if (!cf)
        return SC_ENOMEM;
    cf->kind = CF_MAPPING;
    cf->rules = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(mrule));
    if (!cf->rules) {
        sc__charfilter_free(cf);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const char *rule = rules[i];
        const char *arrow = strstr(rule, "=>");
        if (!arrow) {
            snprintf(err, err_size, "%s[%zu]: invalid mapping rule [%s]: expected key => value",
                     path, i, rule);
            sc__charfilter_free(cf);
            return SC_EINVAL;
        }
        const char *ks = rule, *ke = arrow, *vs = arrow + 2, *ve = rule + strlen(rule);
        while (ks < ke && (*ks == ' ' || *ks == '\t'))
            ks++;
        while (ke > ks && (ke[-1] == ' ' || ke[-1] == '\t'))
            ke--;
        while (vs < ve && (*vs == ' ' || *vs == '\t'))
            vs++;
        while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        char *kb = sc_alloc_malloc(&sc__text_pool, (size_t)(ke - ks) * 3 + 8);
        char *vb = sc_alloc_malloc(&sc__text_pool, (size_t)(ve - vs) * 3 + 8);
        size_t kl = 0, vl = 0;
        bool ok = kb && vb && unescape(ks, (size_t)(ke - ks), kb, &kl) &&
                  unescape(vs, (size_t)(ve - vs), vb, &vl);
        if (ok && kl > 0) {
            mrule *m = &cf->rules[cf->n_rules];
            m->key = to_u16((const uint8_t *)kb, kl, &m->key_len);
            m->val = to_u16((const uint8_t *)vb, vl, &m->val_len);
            if (m->key && m->val) {
                cf->n_rules++;
            } else {
                sc_alloc_free(&sc__text_pool, m->key);
                sc_alloc_free(&sc__text_pool, m->val);
                m->key = m->val = NULL;
                sc_alloc_free(&sc__text_pool, kb);
                sc_alloc_free(&sc__text_pool, vb);
                sc__charfilter_free(cf);
                return SC_ENOMEM;
            }
        }
        sc_alloc_free(&sc__text_pool, kb);
        sc_alloc_free(&sc__text_pool, vb);
        if (!ok || kl == 0) {
            snprintf(err, err_size, "%s[%zu]: invalid mapping rule [%s]", path, i, rule);
            sc__charfilter_free(cf);
            return kb && vb ? SC_EINVAL : SC_ENOMEM;
        }
    }
    /* Duplicate keys: Lucene's NormalizeCharMap builder keeps the last one. */
    for (size_t i = 0; i < cf->n_rules; i++)
        for (size_t j = i + 1; j < cf->n_rules; j++)
            if (cf->rules[i].key_len == cf->rules[j].key_len &&
                memcmp(cf->rules[i].key, cf->rules[j].key,
                       (size_t)cf->rules[i].key_len * sizeof(UChar)) == 0) {
                snprintf(err, err_size, "%s: duplicate mapping key", path);
                sc__charfilter_free(cf);
                return SC_EINVAL;
            }
    qsort(cf->rules, cf->n_rules, sizeof(mrule), rule_cmp);
    *out = cf;
    return SC_OK;
}

sc_status sc__charfilter_html(const char *const *escaped, size_t n, sc__charfilter **out)
{
    *out = NULL;
    sc__charfilter *cf = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*cf));
    if (!cf)
        return SC_ENOMEM;
    cf->kind = CF_HTML;
    sc_status st = sc__html_opts_init(&cf->html, escaped, n);
    if (st != SC_OK) {
        sc__charfilter_free(cf);
        return st;
    }
    *out = cf;
    return SC_OK;
}

sc_status sc__charfilter_pattern(const char *pattern, const char *replacement, const char *path,
                                 sc__charfilter **out, char *err, size_t err_size)
{
    *out = NULL;
    sc__charfilter *cf = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*cf));
    if (!cf)
        return SC_ENOMEM;
    cf->kind = CF_PATTERN;
    UErrorCode ec = U_ZERO_ERROR;
    UParseError pe;
    int32_t plen = 0;
    UChar *up = to_u16((const uint8_t *)pattern, strlen(pattern), &plen);
    if (!up) {
        sc__charfilter_free(cf);
        return SC_ENOMEM;
    }
    cf->re = uregex_open(up, plen, 0, &pe, &ec);
    sc_alloc_free(&sc__text_pool, up);
    if (U_FAILURE(ec)) {
        snprintf(err, err_size, "%s.pattern: invalid regular expression [%s]: %s at offset %d",
                 path, pattern, u_errorName(ec), pe.offset);
        sc__charfilter_free(cf);
        return SC_EINVAL;
    }
    cf->repl = to_u16((const uint8_t *)replacement, strlen(replacement), &cf->repl_len);
    if (!cf->repl) {
        sc__charfilter_free(cf);
        return SC_ENOMEM;
    }
    *out = cf;
    return SC_OK;
}

/* ---- running ----------------------------------------------------------------------------- */

typedef sc__ubuf ubuf;

bool sc__ubuf_put(sc__ubuf *b, const uint16_t *s, int32_t n)
{
    if (n <= 0)
        return true;
    if (b->len + n > b->cap) {
        int32_t nc = b->cap ? b->cap : 64;
        while (nc < b->len + n)
            nc *= 2;
        UChar *np = sc_alloc_realloc(&sc__text_pool, b->p, (size_t)nc * sizeof(UChar));
        if (!np)
            return false;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, (size_t)n * sizeof(UChar));
    b->len += n;
    return true;
}

static int32_t corr_last(const corr *c)
{
    return c->n ? c->diff[c->n - 1] : 0;
}

bool sc__corr_add(corr *c, int32_t off, int32_t cumulative)
{
    if (c->n > 0 && c->off[c->n - 1] == off) {
        c->diff[c->n - 1] = cumulative;
        return true;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 16;
        int32_t *no = sc_alloc_realloc(&sc__text_pool, c->off, nc * sizeof(int32_t));
        if (!no)
            return false;
        c->off = no;
        int32_t *nd = sc_alloc_realloc(&sc__text_pool, c->diff, nc * sizeof(int32_t));
        if (!nd)
            return false;
        c->diff = nd;
        c->cap = nc;
    }
    c->off[c->n] = off;
    c->diff[c->n] = cumulative;
    c->n++;
    return true;
}

static int32_t corr_apply(const corr *c, int32_t off)
{
    /* the last entry with c->off <= off */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->off[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? off : off + c->diff[lo - 1];
}

static sc_status run_mapping(const sc__charfilter *cf, const UChar *in, int32_t n, ubuf *out,
                             corr *c)
{
    int32_t i = 0;
    while (i < n) {
        /* rules for in[i] are contiguous and longest first */
        size_t lo = 0, hi = cf->n_rules;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cf->rules[mid].key[0] < in[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        const mrule *hit = NULL;
        for (size_t k = lo; k < cf->n_rules && cf->rules[k].key[0] == in[i]; k++) {
            const mrule *m = &cf->rules[k];
            if (m->key_len <= n - i &&
                memcmp(m->key, in + i, (size_t)m->key_len * sizeof(UChar)) == 0) {
                hit = m;
                break;
            }
        }
        if (!hit) {
            if (!sc__ubuf_put(out, in + i, 1))
                return SC_ENOMEM;
            i++;
            continue;
        }
        i += hit->key_len;
        int32_t diff = hit->key_len - hit->val_len;
        if (diff != 0) {
            int32_t prev = corr_last(c);
            if (diff > 0) {
                if (!sc__corr_add(c, i - diff - prev, prev + diff))
                    return SC_ENOMEM;
            } else {
                int32_t out_start = i - prev;
                for (int32_t x = 0; x < -diff; x++)
                    if (!sc__corr_add(c, out_start + x, prev - x - 1))
                        return SC_ENOMEM;
            }
        }
        if (!sc__ubuf_put(out, hit->val, hit->val_len))
            return SC_ENOMEM;
    }
    return SC_OK;
}

/* Appends the replacement for the current match: `$n` is group n (Java's rule: as many digits
 * as still name a group), `\x` is x. */
static bool expand_repl(const sc__charfilter *cf, URegularExpression *re, const UChar *in,
                        ubuf *out)
{
    UErrorCode ec = U_ZERO_ERROR;
    int32_t groups = uregex_groupCount(re, &ec);
    const UChar *r = cf->repl;
    for (int32_t i = 0; i < cf->repl_len; i++) {
        if (r[i] == '\\' && i + 1 < cf->repl_len) {
            if (!sc__ubuf_put(out, &r[++i], 1))
                return false;
            continue;
        }
        if (r[i] == '$' && i + 1 < cf->repl_len && r[i + 1] >= '0' && r[i + 1] <= '9') {
            int32_t g = r[++i] - '0';
            while (i + 1 < cf->repl_len && r[i + 1] >= '0' && r[i + 1] <= '9' &&
                   g * 10 + (r[i + 1] - '0') <= groups)
                g = g * 10 + (r[++i] - '0');
            if (g > groups)
                continue;
            int32_t gs = uregex_start(re, g, &ec), ge = uregex_end(re, g, &ec);
            if (U_SUCCESS(ec) && gs >= 0 && !sc__ubuf_put(out, in + gs, ge - gs))
                return false;
            continue;
        }
        if (!sc__ubuf_put(out, &r[i], 1))
            return false;
    }
    return true;
}

/* Lucene PatternReplaceCharFilter.processPattern: a shorter replacement records the shrink
 * after its end; a longer one maps each extra char back one step. */
static sc_status run_pattern(const sc__charfilter *cf, const UChar *in, int32_t n, ubuf *out,
                             corr *c)
{
    UErrorCode ec = U_ZERO_ERROR;
    URegularExpression *re = uregex_clone(cf->re, &ec);
    if (U_FAILURE(ec))
        return SC_ENOMEM;
    uregex_setText(re, in, n, &ec);
    int32_t cumulative = 0, last_end = 0;
    while (U_SUCCESS(ec) && uregex_findNext(re, &ec)) {
        int32_t ms = uregex_start(re, 0, &ec), me = uregex_end(re, 0, &ec);
        if (U_FAILURE(ec))
            break;
        if (!sc__ubuf_put(out, in + last_end, ms - last_end))
            goto nomem;
        last_end = me;
        int32_t before = out->len;
        if (!expand_repl(cf, re, in, out))
            goto nomem;
        int32_t rsize = out->len - before, gsize = me - ms;
        if (rsize < gsize) {
            cumulative += gsize - rsize;
            if (!sc__corr_add(c, before + rsize, cumulative))
                goto nomem;
        } else {
            for (int32_t i = gsize; i < rsize; i++)
                if (!sc__corr_add(c, before + i, --cumulative))
                    goto nomem;
        }
    }
    if (!sc__ubuf_put(out, in + last_end, n - last_end))
        goto nomem;
    uregex_close(re);
    /* a pattern that fails at run time (stack or time limit) leaves the text unchanged */
    return SC_OK;
nomem:
    uregex_close(re);
    return SC_ENOMEM;
}

sc_status sc__charfilters_run(sc__charfilter *const *cfs, size_t n, sc_slice text, sc__filtered *f)
{
    memset(f, 0, sizeof(*f));
    if (text.len > INT32_MAX / 4)
        return SC_ELIMIT;
    /* original UTF-16 offset -> original byte offset */
    int32_t ulen = 0;
    UChar *cur = to_u16(text.ptr, text.len, &ulen);
    f->u16_to_byte = sc_alloc_malloc(&sc__text_pool, ((size_t)ulen + 1) * sizeof(uint32_t));
    f->corr = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(corr));
    if (!cur || !f->u16_to_byte || !f->corr) {
        sc_alloc_free(&sc__text_pool, cur);
        sc__filtered_fini(f);
        return SC_ENOMEM;
    }
    f->n_corr = n;
    f->n_u16 = (size_t)ulen;
    {
        size_t i = 0, k = 0;
        while (i < text.len) {
            size_t b = i;
            uint32_t cp = sc__utf8_next(text.ptr, text.len, &i);
            f->u16_to_byte[k++] = (uint32_t)b;
            if (cp >= 0x10000)
                f->u16_to_byte[k++] = (uint32_t)b + 2;
        }
        f->u16_to_byte[k] = (uint32_t)text.len;
    }
    sc_status st = SC_OK;
    for (size_t i = 0; i < n && st == SC_OK; i++) {
        ubuf out = {0};
        st = cfs[i]->kind == CF_MAPPING ? run_mapping(cfs[i], cur, ulen, &out, &f->corr[i])
             : cfs[i]->kind == CF_HTML ? sc__html_strip(&cfs[i]->html, cur, ulen, &out, &f->corr[i])
                                       : run_pattern(cfs[i], cur, ulen, &out, &f->corr[i]);
        sc_alloc_free(&sc__text_pool, cur);
        cur = out.p;
        ulen = out.len;
        if (st == SC_OK && !cur) {
            cur = sc_alloc_malloc(&sc__text_pool, sizeof(UChar));
            if (!cur)
                st = SC_ENOMEM;
        }
    }
    if (st == SC_OK) {
        f->text = sc_alloc_malloc(&sc__text_pool, (size_t)ulen * 3 + 1);
        f->byte_to_u16 = sc_alloc_malloc(&sc__text_pool, ((size_t)ulen * 3 + 1) * sizeof(uint32_t));
        if (!f->text || !f->byte_to_u16)
            st = SC_ENOMEM;
    }
    if (st == SC_OK) {
        size_t o = 0;
        for (int32_t i = 0; i < ulen;) {
            uint32_t cp = cur[i];
            int32_t w = 1;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < ulen && cur[i + 1] >= 0xDC00 &&
                cur[i + 1] <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (cur[i + 1] - 0xDC00u);
                w = 2;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            size_t bl = sc_utf8_put(f->text + o, cp);
            for (size_t b = 0; b < bl; b++)
                f->byte_to_u16[o + b] = (uint32_t)i;
            o += bl;
            i += w;
        }
        f->byte_to_u16[o] = (uint32_t)ulen;
        f->len = o;
    }
    sc_alloc_free(&sc__text_pool, cur);
    if (st != SC_OK)
        sc__filtered_fini(f);
    return st;
}

void sc__filtered_fini(sc__filtered *f)
{
    for (size_t i = 0; f->corr && i < f->n_corr; i++) {
        sc_alloc_free(&sc__text_pool, f->corr[i].off);
        sc_alloc_free(&sc__text_pool, f->corr[i].diff);
    }
    sc_alloc_free(&sc__text_pool, f->corr);
    sc_alloc_free(&sc__text_pool, f->text);
    sc_alloc_free(&sc__text_pool, f->byte_to_u16);
    sc_alloc_free(&sc__text_pool, f->u16_to_byte);
    memset(f, 0, sizeof(*f));
}

uint32_t sc__filtered_correct(const sc__filtered *f, size_t filtered_byte)
{
    int32_t off = (int32_t)f->byte_to_u16[filtered_byte > f->len ? f->len : filtered_byte];
    for (size_t i = f->n_corr; i-- > 0;)
        off = corr_apply(&f->corr[i], off);
    if (off < 0)
        off = 0;
    if ((size_t)off > f->n_u16)
        off = (int32_t)f->n_u16;
    return f->u16_to_byte[off];
}
