/* Elasticsearch's simple_query_string: Lucene's SimpleQueryParser (search/query_parser.h). */
#include <string.h>

#include "search/qp_internal.h"

/* ---- simple_query_string (Lucene's SimpleQueryParser) ----------------------------------- */

typedef struct sstate {
    const uint8_t *data;
    size_t index, length;
    sc_query *top;
    int cur_op;  /* -1 none, else sc_query_occur */
    int prev_op; /* -1 none */
    int not_count;
} sstate;

static bool s_ws(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool s_token_finished(const sstate *st)
{
    uint8_t c = st->data[st->index];
    return c == '"' || c == '|' || c == '+' || c == '(' || c == ')' || s_ws(c);
}

/* The per-field queries of one piece of text, ORed over the fields (SimpleQueryParser's
 * newDefaultQuery/newPhraseQuery/newPrefixQuery/newFuzzyQuery). kind: 0 term(s), 1 phrase,
 * 2 prefix, 3 fuzzy. */
static sc_query *s_fields_query(parser *p, sc_slice text, int kind, uint32_t n)
{
    const sc_query_parser_options *o = p->o;
    size_t nf = o->n_fields ? o->n_fields : 1;
    sc_query *bq = NULL, *single = NULL;
    size_t n_added = 0;
    for (size_t i = 0; i < nf && p->status == SC_OK; i++) {
        sc_slice field = o->n_fields ? o->fields[i] : o->default_field;
        sc_query *q = NULL;
        sc_slice norm;
        if (kind == 0) {
            q = sc__qp_field_query(p, field, text, false, 0);
        } else if (kind == 1) {
            q = sc__qp_field_query(p, field, text, true, n);
        } else if (sc__qp_normalize(p, field, text, &norm)) {
            q = kind == 2 ? sc_query_prefix(p->a, field, norm)
                          : sc_query_fuzzy(p->a, field, norm, n, o->fuzzy_prefix_length,
                                           o->fuzzy_max_expansions, o->fuzzy_transpositions);
            if (!q)
                p->status = SC_ENOMEM;
        }
        if (!q)
            continue;
        if (o->n_fields && o->field_boosts)
            q->boost *= o->field_boosts[i];
        if (!single) {
            single = q;
        } else {
            if (!bq) {
                if (!(bq = sc_query_bool(p->a)) ||
                    sc_query_bool_add(p->a, bq, SC_OCCUR_SHOULD, single) != SC_OK) {
                    p->status = SC_ENOMEM;
                    return NULL;
                }
            }
            if (sc_query_bool_add(p->a, bq, SC_OCCUR_SHOULD, q) != SC_OK)
                p->status = SC_ENOMEM;
        }
        n_added++;
    }
    return bq ? bq : single;
}

static void s_add(parser *p, sc_query *bq, sc_query_occur occ, sc_query *q)
{
    sc_status st = sc_query_bool_add(p->a, bq, occ, q);
    if (st == SC_ELIMIT)
        sc__qp_perr(p, st, 0, "too many clauses: maxClauseCount is set to %u",
                    SC_QUERY_MAX_CLAUSE_COUNT);
    else if (st != SC_OK)
        p->status = st;
}

static void s_build_tree(parser *p, sstate *st, sc_query *branch)
{
    if (!branch || p->status != SC_OK)
        return;
    if (st->not_count % 2 == 1) {
        sc_query *nq = sc_query_bool(p->a), *all = sc_query_match_all(p->a);
        if (!nq || !all) {
            p->status = SC_ENOMEM;
            return;
        }
        s_add(p, nq, SC_OCCUR_MUST_NOT, branch);
        s_add(p, nq, SC_OCCUR_SHOULD, all);
        branch = nq;
    }
    if (!st->top) {
        st->top = branch;
    } else {
        if (st->cur_op < 0)
            st->cur_op = (int)p->o->default_operator;
        if (st->prev_op != st->cur_op) {
            sc_query *bq = sc_query_bool(p->a);
            if (!bq) {
                p->status = SC_ENOMEM;
                return;
            }
            s_add(p, bq, (sc_query_occur)st->cur_op, st->top);
            st->top = bq;
        }
        /* addClause copies the bool before adding: the tree is only ever extended here */
        s_add(p, st->top, (sc_query_occur)st->cur_op, branch);
        st->prev_op = st->cur_op;
    }
    st->cur_op = -1;
}

static uint32_t s_fuzziness(sstate *st)
{
    /* at '~': read until the token ends */
    size_t start = st->index + 1;
    st->index++;
    while (st->index < st->length && !s_token_finished(st))
        st->index++;
    size_t len = st->index - start;
    if (len == 0)
        return 2;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = st->data[start + i];
        if (i == 0 && (c == '-' || c == '+') && len > 1)
            continue;
        if (c < '0' || c > '9' || v > INT32_MAX)
            return 0; /* NumberFormatException is swallowed: 0 */
        v = v * 10 + (c - '0');
    }
    if (st->data[start] == '-')
        v = 0;
    return v > INT32_MAX ? 0 : (uint32_t)v;
}

static void s_parse(parser *p, sstate *st, int depth);

static void s_token(parser *p, sstate *st)
{
    char *buf = sc_arena_alloc(p->a, st->length - st->index + 1);
    if (!buf) {
        p->status = SC_ENOMEM;
        return;
    }
    size_t copied = 0;
    bool fuzzy = false;
    while (st->index < st->length) {
        uint8_t c = st->data[st->index];
        if (c == '\\') {
            if (++st->index < st->length)
                buf[copied++] = (char)st->data[st->index++];
            continue;
        }
        if (s_token_finished(st))
            break;
        if (copied > 0 && c == '~') {
            fuzzy = true;
            break;
        }
        buf[copied++] = (char)c;
        st->index++;
    }
    if (copied == 0)
        return;
    sc_query *branch;
    if (fuzzy) {
        uint32_t f = s_fuzziness(st);
        if (f > 2)
            f = 2;
        branch = s_fields_query(p, sc_slice_make(buf, copied), f == 0 ? 0 : 3, f);
    } else if (buf[copied - 1] == '*') {
        branch = s_fields_query(p, sc_slice_make(buf, copied - 1), 2, 0);
    } else {
        branch = s_fields_query(p, sc_slice_make(buf, copied), 0, 0);
    }
    s_build_tree(p, st, branch);
}

static void s_phrase(parser *p, sstate *st)
{
    st->index++;
    size_t start = st->index, copied = 0;
    bool escaped = false, has_slop = false;
    char *buf = sc_arena_alloc(p->a, st->length - st->index + 1);
    if (!buf) {
        p->status = SC_ENOMEM;
        return;
    }
    while (st->index < st->length) {
        uint8_t c = st->data[st->index];
        if (!escaped) {
            if (c == '\\') {
                escaped = true;
                st->index++;
                continue;
            }
            if (c == '"') {
                if (st->length > st->index + 1 && st->data[st->index + 1] == '~') {
                    st->index++;
                    if (st->length > st->index + 1)
                        has_slop = true;
                }
                break;
            }
        }
        escaped = false;
        buf[copied++] = (char)st->data[st->index++];
    }
    if (st->index == st->length) {
        st->index = start; /* never closed: read it as ordinary text */
        return;
    }
    uint32_t slop = 0;
    if (has_slop)
        slop = s_fuzziness(st);
    sc_query *branch = s_fields_query(p, sc_slice_make(buf, copied), 1, slop);
    s_build_tree(p, st, branch);
    st->index++;
}

static void s_subquery(parser *p, sstate *st, int depth)
{
    st->index++;
    size_t start = st->index;
    int precedence = 1;
    bool escaped = false;
    while (st->index < st->length) {
        uint8_t c = st->data[st->index];
        if (!escaped) {
            if (c == '\\') {
                escaped = true;
                st->index++;
                continue;
            }
            if (c == '(')
                precedence++;
            else if (c == ')' && --precedence == 0)
                break;
        }
        escaped = false;
        st->index++;
    }
    if (st->index == st->length) {
        st->index = start; /* unclosed: the '(' is whitespace */
    } else if (st->index == start) {
        st->cur_op = -1;
        st->index++;
    } else {
        if (depth > MAX_DEPTH) {
            sc__qp_perr(p, SC_ELIMIT, start, "query nested deeper than %d levels", MAX_DEPTH);
            return;
        }
        sstate sub = {st->data, start, st->index, NULL, -1, -1, 0};
        s_parse(p, &sub, depth + 1);
        s_build_tree(p, st, sub.top);
        st->index++;
    }
}

static void s_parse(parser *p, sstate *st, int depth)
{
    while (st->index < st->length && p->status == SC_OK) {
        uint8_t c = st->data[st->index];
        if (c == '(') {
            s_subquery(p, st, depth);
        } else if (c == ')') {
            st->index++;
        } else if (c == '"') {
            s_phrase(p, st);
        } else if (c == '+') {
            if (st->cur_op < 0 && st->top)
                st->cur_op = SC_OCCUR_MUST;
            st->index++;
        } else if (c == '|') {
            if (st->cur_op < 0 && st->top)
                st->cur_op = SC_OCCUR_SHOULD;
            st->index++;
        } else if (c == '-') {
            st->not_count++;
            st->index++;
            continue;
        } else if (s_ws(c)) {
            st->index++;
        } else {
            s_token(p, st);
        }
        st->not_count = 0;
    }
}

sc_status sc_simple_query_string_parse(sc_slice text, const sc_query_parser_options *o, sc_arena *a,
                                       sc_query **out, sc_query_parse_error *err)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.o = o;
    p.a = a;
    p.err = err;
    *out = NULL;
    sstate st = {text.ptr, 0, text.len, NULL, -1, -1, 0};
    s_parse(&p, &st, 0);
    if (p.status == SC_OK && !st.top && !(st.top = sc_query_match_none(a)))
        p.status = SC_ENOMEM;
    if (p.status == SC_OK)
        *out = st.top;
    return p.status;
}
