/* A deterministic byte automaton, the contract between the search layer (which compiles
 * prefix, wildcard, regexp and fuzzy queries into one) and the term dictionary (which
 * intersects it with its terms without visiting every term). Bytes map to equivalence
 * classes to keep the table small. */
#ifndef SC_INDEX_DFA_H
#define SC_INDEX_DFA_H

#include <stdbool.h>
#include <stdint.h>

#define SC_DFA_DEAD UINT32_MAX

typedef struct sc_dfa {
    uint32_t n_states;
    uint32_t start;
    uint32_t n_classes;
    uint8_t classmap[256]; /* byte -> class */
    const uint32_t *next;  /* [state * n_classes + class] -> state or SC_DFA_DEAD */
    const uint8_t *accept; /* [state] != 0 when accepting */
    /* Optional hints for the term dictionary (zero/NULL when unknown): every accepted string
     * ends with suffix[0..suffix_len); tame[state] != 0 when no valid UTF-8 continuation from
     * the state reaches SC_DFA_DEAD, so once a term's prefix reaches a tame state the walk may
     * reject it on the suffix alone without losing a chance to skip a dead range. */
    const uint8_t *suffix;
    uint32_t suffix_len;
    const uint8_t *tame;
} sc_dfa;

static inline uint32_t sc_dfa_step(const sc_dfa *d, uint32_t state, uint8_t byte)
{
    return d->next[(uint64_t)state * d->n_classes + d->classmap[byte]];
}

static inline bool sc_dfa_accepts(const sc_dfa *d, uint32_t state)
{
    return state != SC_DFA_DEAD && d->accept[state];
}

#endif
