/* The n-gram tokenizers (Lucene 8.7 NGramTokenizer and EdgeNGramTokenizer, Elasticsearch
 * `ngram` / `edge_ngram`): grams of min_gram..max_gram code points that lie inside a run of
 * token characters (token_chars; all characters when empty), ordered by start then length;
 * the edge variant only starts grams at the beginning of a run. The n-gram token filters are
 * in stream.c. */
#include <string.h>
#include <unicode/uchar.h>

#include "text/internal.h"

/* Elasticsearch token_chars classes, on Java's Character properties (ICU has the same data). */
static bool is_token_char(uint32_t cp, uint32_t classes)
{
    if (classes == 0)
        return true;
    UChar32 c = (UChar32)cp;
    if ((classes & SC__TC_LETTER) && u_isalpha(c))
        return true;
    if ((classes & SC__TC_DIGIT) && u_isdigit(c))
        return true;
    if ((classes & SC__TC_WHITESPACE) && u_isWhitespace(c))
        return true;
    int8_t t = u_charType(c);
    if ((classes & SC__TC_PUNCTUATION) &&
        (t == U_CONNECTOR_PUNCTUATION || t == U_DASH_PUNCTUATION || t == U_START_PUNCTUATION ||
         t == U_END_PUNCTUATION || t == U_INITIAL_PUNCTUATION || t == U_FINAL_PUNCTUATION ||
         t == U_OTHER_PUNCTUATION))
        return true;
    if ((classes & SC__TC_SYMBOL) && (t == U_MATH_SYMBOL || t == U_CURRENCY_SYMBOL ||
                                      t == U_MODIFIER_SYMBOL || t == U_OTHER_SYMBOL))
        return true;
    return false;
}

/* Emits the grams of one run of token characters, cps[0..n) with byte offsets off[0..n]. */
static sc_status run_grams(bool edge, const sc__tokenizer_opts *o, const size_t *off,
                           const bool *bad, size_t n, sc__raw_sink sink, void *ctx)
{
    size_t last_start = edge ? 1 : n;
    for (size_t i = 0; i < last_start && i < n; i++) {
        bool valid = true;
        for (size_t g = 1; g <= o->max_gram && i + g <= n; g++) {
            valid = valid && !bad[i + g - 1];
            if (g < o->min_gram)
                continue;
            SC_TRY(sink(ctx, off[i], off[i + g], valid, SC_TOKEN_WORD));
        }
    }
    return SC_OK;
}

sc_status sc__tokenize_ngram(sc__tokenizer_kind kind, const sc__tokenizer_opts *o, sc_slice text,
                             sc__raw_sink sink, void *ctx)
{
    bool edge = kind == SC__TOK_EDGE_NGRAM;
    /* Offsets and invalid-byte flags of the current run, in a stack window that grows on the
     * heap for runs longer than it. */
    enum {
        STACK_CPS = 512
    };
    size_t stack_off[STACK_CPS + 1];
    bool stack_bad[STACK_CPS];
    size_t *off = stack_off;
    bool *bad = stack_bad;
    size_t cap = STACK_CPS, n = 0;
    sc_status st = SC_OK;
    size_t p = 0;
    const uint8_t *s = text.ptr;
    while (p <= text.len && st == SC_OK) {
        bool tok = false, is_bad = false;
        size_t q = p;
        if (p < text.len) {
            uint32_t cp = sc__utf8_next(s, text.len, &q);
            is_bad = cp == 0xFFFD &&
                     !(q - p == 3 && s[p] == 0xEF && s[p + 1] == 0xBF && s[p + 2] == 0xBD);
            tok = is_token_char(cp, o->token_chars);
        }
        if (tok) {
            if (n == cap) {
                size_t ncap = cap * 2;
                size_t *noff = sc_alloc_malloc(&sc__text_pool, (ncap + 1) * sizeof(*noff));
                bool *nbad = sc_alloc_malloc(&sc__text_pool, ncap * sizeof(*nbad));
                if (!noff || !nbad) {
                    sc_alloc_free(&sc__text_pool, noff);
                    sc_alloc_free(&sc__text_pool, nbad);
                    st = SC_ENOMEM;
                    break;
                }
                memcpy(noff, off, n * sizeof(*off));
                memcpy(nbad, bad, n * sizeof(*bad));
                if (off != stack_off) {
                    sc_alloc_free(&sc__text_pool, off);
                    sc_alloc_free(&sc__text_pool, bad);
                }
                off = noff;
                bad = nbad;
                cap = ncap;
            }
            off[n] = p;
            bad[n] = is_bad;
            n++;
        } else if (n > 0) {
            off[n] = p;
            st = run_grams(edge, o, off, bad, n, sink, ctx);
            n = 0;
        }
        if (p == text.len)
            break;
        p = q;
    }
    if (off != stack_off) {
        sc_alloc_free(&sc__text_pool, off);
        sc_alloc_free(&sc__text_pool, bad);
    }
    return st;
}
