/* Private to the query-string parsers (query_parser.c: Lucene classic syntax,
 * query_parser_simple.c: simple_query_string; query_parser_terms.c: term analysis shared by
 * both). Not part of the search layer's API. */
#ifndef SC_SEARCH_QP_INTERNAL_H
#define SC_SEARCH_QP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "search/query_parser.h"

typedef enum tok_kind {
    T_AND,
    T_OR,
    T_NOT,
    T_PLUS,
    T_MINUS,
    T_BAREOPER,
    T_LPAREN,
    T_RPAREN,
    T_COLON,
    T_STAR,
    T_CARAT,
    T_QUOTED,
    T_TERM,
    T_FUZZY_SLOP,
    T_PREFIXTERM,
    T_WILDTERM,
    T_REGEXPTERM,
    T_RANGEIN_START,
    T_RANGEEX_START,
    T_NUMBER,
    T_RANGE_TO,     /* range state: "TO" */
    T_RANGEIN_END,  /* ] */
    T_RANGEEX_END,  /* } */
    T_RANGE_QUOTED, /* "..." */
    T_RANGE_GOOP,   /* any run without space, ] and } */
    T_EOF,
} tok_kind;

typedef struct tok {
    tok_kind kind;
    size_t off, len;
} tok;

typedef struct parser {
    sc_slice s;
    const sc_query_parser_options *o;
    sc_arena *a;
    SC_VEC(tok) toks;
    size_t i; /* next token */
    int depth;
    sc_status status;
    sc_query_parse_error *err;
} parser;

#define MAX_DEPTH 256

/* Records the first error (status, message, byte offset); later errors are ignored. */
void sc__qp_perr(parser *p, sc_status st, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes code point cp as UTF-8 into o (room for 4 bytes); returns its length. */
size_t sc__qp_put_utf8(uint32_t cp, char *o);

/* The analyzer of `field` (NULL = keyword: the text is the term). */
const sc_analyzer *sc__qp_analyzer_for(const parser *p, sc_slice field);

/* Code-point lowercase of an expanded term (prefix, wildcard, fuzzy, regexp) into the arena
 * when lowercase_expanded_terms and the field is analyzed; else the input. */
bool sc__qp_normalize(parser *p, sc_slice field, sc_slice in, sc_slice *out);

/* Lucene's QueryBuilder.createFieldQuery (no graph tokens): NULL when nothing remains. */
sc_query *sc__qp_field_query(parser *p, sc_slice field, sc_slice text, bool quoted, uint32_t slop);

#endif
