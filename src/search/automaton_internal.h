/* Private to the pattern compiler (automaton.c: NFA construction, regexp AST -> NFA, public
 * entry points; automaton_det.c: determinization and DFA algebra; automaton_regexp.c: the
 * RegExp parser; automaton_wildcard.c: direct wildcard and prefix DFAs; automaton_hints.c:
 * the term dictionary hints of regexp DFAs). Not part of the search
 * layer's API. */
#ifndef SC_SEARCH_AUTOMATON_INTERNAL_H
#define SC_SEARCH_AUTOMATON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"
#include "search/automaton.h"

#define NFA_STATE_LIMIT (1u << 20)
#define NEST_LIMIT 1000
/* Bound on subset-construction work (NFA states and edges visited): a pattern whose DFA stays
 * under max_states but whose sets are huge must still fail fast. 2^23 steps is ~0.2 s in a debug
 * build. */
#define DET_WORK_LIMIT (1u << 23)
#define MAX_CP 0x10FFFFu

/* ---- NFA (automaton.c) ------------------------------------------------------------------ */

typedef struct edge {
    uint32_t from, to;
    uint16_t lo, hi; /* byte range; lo == 256 marks an epsilon edge */
} edge;

#define EPS 256

typedef struct nfa {
    uint32_t n_states;
    SC_VEC(edge) edges;
    sc_status status; /* sticky */
    sc_automaton_error *err;
    uint32_t max_states; /* DFA limit for determinizations inside the build */
} nfa;

typedef struct frag {
    uint32_t start, end;
} frag;

/* Writes the message into err (may be NULL) with the byte offset. */
void sc__am_set_err(sc_automaton_error *err, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A new NFA state (SC_ELIMIT past NFA_STATE_LIMIT, sticky in n->status). */
uint32_t sc__am_new_state(nfa *n);
/* Edge for bytes [lo, hi] from -> to. */
void sc__am_add_edge(nfa *n, uint32_t from, uint32_t to, unsigned lo, unsigned hi);
void sc__am_add_eps(nfa *n, uint32_t from, uint32_t to);
/* Any sequence of valid UTF-8 code points. */
frag sc__am_frag_any_string(nfa *n);
/* Decodes one code point at *i (an invalid byte reads as itself), advancing *i. */
uint32_t sc__am_utf8_decode(sc_slice s, size_t *i);

/* The wildcard through the NFA and subset construction (automaton_wildcard.c builds short
 * patterns directly and falls back to this one for long ones). */
sc_status sc__am_wildcard_nfa(sc_slice pattern, uint32_t max_states, sc_arena *a, sc_dfa *out,
                              sc_automaton_error *err);

/* Adds the term dictionary hints (index/dfa.h: tame states, a required suffix) to a small
 * DFA that has none, in `a` (automaton_hints.c). Leaves d unchanged when it is too big, has
 * no tame state or no suffix, or memory runs out. */
void sc__am_hints(sc_dfa *d, sc_arena *a);

/* ---- scratch DFA (automaton_det.c) ------------------------------------------------------ */

typedef struct ddfa {
    uint32_t n_states, n_classes, start;
    uint8_t classmap[256];
    uint32_t *next;  /* heap, n_states * n_classes */
    uint8_t *accept; /* heap */
} ddfa;

void sc__am_ddfa_fini(ddfa *d);
/* Subset construction of n from start to accept; SC_ELIMIT past max_states (err names it). */
sc_status sc__am_determinize(const nfa *n, uint32_t start, uint32_t accept, uint32_t max_states,
                             sc_automaton_error *err, ddfa *out);
/* Makes d total over bytes and flips acceptance (complement over byte strings). */
sc_status sc__am_ddfa_flip_total(ddfa *d);
/* The product automaton of a and b (intersection). */
sc_status sc__am_ddfa_intersect(const ddfa *a, const ddfa *b, uint32_t max_states,
                                sc_automaton_error *err, ddfa *out);
/* Copies d into n as a fragment. */
frag sc__am_embed(nfa *n, const ddfa *d);
/* Determinizes fragment f of sub. */
sc_status sc__am_sub_determinize(nfa *sub, frag f, uint32_t max_states, sc_automaton_error *err,
                                 ddfa *out);
/* The DFA of every valid UTF-8 string. */
sc_status sc__am_any_utf8(uint32_t max_states, sc_automaton_error *err, ddfa *out);

/* ---- RegExp AST (automaton_regexp.c) ---------------------------------------------------- */

typedef enum sc__am_rkind {
    R_UNION,
    R_CONCAT,
    R_INTERSECT,
    R_OPT,
    R_REPEAT, /* min, max (max UINT32_MAX = unbounded) */
    R_COMPLEMENT,
    R_CLASS, /* ranges in class_off..class_off+n_ranges of the range pool */
    R_EMPTY, /* the empty language (#) */
    R_ANYSTRING,
    R_STRING, /* bytes [str_off, str_off + str_len) of the pattern, or the empty string */
    R_INTERVAL,
} sc__am_rkind;

typedef struct sc__am_rnode {
    sc__am_rkind kind;
    uint32_t a, b;     /* children, or class offset/count, or string offset/len */
    uint32_t min, max; /* repeat; interval min/max */
    uint32_t digits;   /* interval */
} sc__am_rnode;

typedef struct sc__am_rparser {
    sc_slice s;
    size_t pos;
    uint32_t flags;
    int depth;
    SC_VEC(sc__am_rnode) nodes;
    SC_VEC(uint32_t) ranges; /* pairs lo, hi */
    SC_VEC(uint8_t) strbuf;  /* literal strings (UTF-8) */
    sc_status status;
    sc_automaton_error *err;
} sc__am_rparser;

/* Parses p->s (flags p->flags) into p->nodes; returns the root node. Errors in p->status
 * (SC_EPARSE with p->err's offset, SC_ELIMIT, SC_EUNSUPPORTED, SC_ENOMEM). */
uint32_t sc__am_regexp_parse(sc__am_rparser *p);

#endif
