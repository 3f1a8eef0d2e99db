/* Term handling shared by the query-string parsers (search/qp_internal.h): UTF-8 output,
 * lowercasing of expanded terms, analysis of field text into term/phrase/bool queries. */
#include <string.h>
#include <unicode/uchar.h>

#include "base/utf8.h"
#include "base/vec.h"
#include "search/qp_internal.h"

size_t sc__qp_put_utf8(uint32_t cp, char *o)
{
    return sc_utf8_put((uint8_t *)o, cp);
}

const sc_analyzer *sc__qp_analyzer_for(const parser *p, sc_slice field)
{
    if (p->o->analyzer_for)
        return p->o->analyzer_for(p->o->ctx, field);
    return p->o->analyzer;
}

/* Code-point lowercase (Lucene's LowerCaseFilter / Character.toLowerCase) into the arena. */
bool sc__qp_normalize(parser *p, sc_slice field, sc_slice in, sc_slice *out)
{
    if (!p->o->lowercase_expanded_terms || !sc__qp_analyzer_for(p, field)) {
        *out = in;
        return true;
    }
    char *o = sc_arena_alloc(p->a, in.len * 2 + 4);
    if (!o) {
        p->status = SC_ENOMEM;
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < in.len;) {
        uint8_t c = in.ptr[i];
        size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (c >= 0x80 && c < 0xC0)
            l = 1;
        if (i + l > in.len)
            l = 1;
        uint32_t cp = l == 1 ? c : l == 2 ? c & 0x1F : l == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < l; k++)
            cp = (cp << 6) | (in.ptr[i + k] & 0x3F);
        if (l == 1 && c >= 0x80) {
            o[n++] = (char)c; /* invalid byte: keep */
        } else {
            n += sc__qp_put_utf8((uint32_t)u_tolower((UChar32)cp), o + n);
        }
        i += l;
    }
    *out = sc_slice_make(o, n);
    return true;
}

/* ---- analysis --------------------------------------------------------------------------- */

typedef struct tokens {
    sc_arena *a;
    SC_VEC(sc_slice) terms;
    SC_VEC(uint32_t) pos;
} tokens;

static sc_status collect(void *ctx, const sc_token *t)
{
    tokens *tk = ctx;
    char *c = sc_arena_strndup(tk->a, (const char *)t->term, t->len);
    if (!c)
        return SC_ENOMEM;
    SC_TRY(sc_vec_push(&tk->terms, sc_slice_make(c, t->len)));
    return sc_vec_push(&tk->pos, t->position);
}

/* Lucene's QueryBuilder.createFieldQuery (no graph tokens): NULL when nothing remains. */
sc_query *sc__qp_field_query(parser *p, sc_slice field, sc_slice text, bool quoted, uint32_t slop)
{
    const sc_analyzer *an = sc__qp_analyzer_for(p, field);
    if (!an) {
        sc_query *q = sc_query_term(p->a, field, text);
        if (!q)
            p->status = SC_ENOMEM;
        return q;
    }
    tokens tk;
    memset(&tk, 0, sizeof tk);
    tk.a = p->a;
    sc_status st = sc_analyzer_analyze(an, text, collect, &tk);
    sc_query *q = NULL;
    size_t n = tk.terms.len;
    if (st != SC_OK) {
        sc__qp_perr(p, st, 0, "analysis of [%.*s] failed: %s", (int)(text.len > 60 ? 60 : text.len),
                    (const char *)text.ptr, sc_status_str(st));
    } else if (n == 1) {
        q = sc_query_term(p->a, field, tk.terms.ptr[0]);
        if (!q)
            p->status = SC_ENOMEM;
    } else if (n > 1) {
        bool distinct = true;
        for (size_t i = 1; i < n; i++)
            if (tk.pos.ptr[i] == tk.pos.ptr[i - 1])
                distinct = false;
        if (quoted && distinct) {
            uint32_t first = tk.pos.ptr[0];
            for (size_t i = 0; i < n; i++)
                tk.pos.ptr[i] -= first;
            q = sc_query_phrase(p->a, field, tk.terms.ptr, tk.pos.ptr, n, slop);
            if (!q)
                p->status = SC_ENOMEM;
        } else if (quoted) {
            sc__qp_perr(
                p, SC_EUNSUPPORTED, 0,
                "phrases with several terms at one position (multi-phrase) are not supported");
        } else {
            /* One clause per position (default operator); stacked terms become a SHOULD
             * group (Lucene would build a SynonymQuery). */
            q = sc_query_bool(p->a);
            bool all_same = true;
            for (size_t i = 1; i < n; i++)
                if (tk.pos.ptr[i] != tk.pos.ptr[0])
                    all_same = false;
            sc_query_occur occ = all_same ? SC_OCCUR_SHOULD : p->o->default_operator;
            for (size_t i = 0; q && i < n && p->status == SC_OK;) {
                size_t j = i + 1;
                while (j < n && tk.pos.ptr[j] == tk.pos.ptr[i])
                    j++;
                sc_query *c;
                if (j - i == 1 || all_same) {
                    c = sc_query_term(p->a, field, tk.terms.ptr[i]);
                    j = all_same ? i + 1 : j;
                } else {
                    c = sc_query_bool(p->a);
                    for (size_t k = i; c && k < j; k++) {
                        sc_query *t = sc_query_term(p->a, field, tk.terms.ptr[k]);
                        if (!t || sc_query_bool_add(p->a, c, SC_OCCUR_SHOULD, t) != SC_OK)
                            c = NULL;
                    }
                }
                sc_status s2 = c ? sc_query_bool_add(p->a, q, occ, c) : SC_ENOMEM;
                if (s2 != SC_OK)
                    sc__qp_perr(p, s2, 0, "too many clauses (max %u)", SC_QUERY_MAX_CLAUSE_COUNT);
                i = j;
            }
            if (!q)
                p->status = SC_ENOMEM;
        }
    }
    sc_vec_free(&tk.terms);
    sc_vec_free(&tk.pos);
    return p->status == SC_OK ? q : NULL;
}
