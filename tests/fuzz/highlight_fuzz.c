/* libFuzzer target for the highlighter (src/search/highlight*.c): arbitrary text (invalid UTF-8
 * included, several values split on 0x1E) highlighted for a query made from the input (term,
 * prefix, wildcard, regexp, fuzzy, a two-word phrase, or all of them in a bool) with fuzzed
 * options (fragment_size, number_of_fragments, no_match_size, boundary scanner, order,
 * max_analyzed_offset). Checks that with tags \x01 / \x02 and no encoder every snippet is
 * non-empty and, without \x01 and \x02 bytes, a piece of the values joined with U+2029
 * (without theirs).
 * Input: byte 0 options, byte 1 query kind, byte 2 fragment_size, then the query text up to the
 * first '\n', then the field text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/highlight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sc_analyzer *standard;

static sc_query *make_query(sc_arena *a, uint8_t kind, sc_slice q)
{
    sc_slice f = sc_slice_cstr("f");
    const uint8_t *sp = memchr(q.ptr, ' ', q.len);
    sc_slice w[2] = {q, q};
    uint32_t pos[2] = {0, 1};
    if (sp) {
        w[0] = sc_slice_make(q.ptr, (size_t)(sp - q.ptr));
        w[1] = sc_slice_make(sp + 1, q.len - w[0].len - 1);
    }
    switch (kind % 7) {
    case 0: return sc_query_term(a, f, q);
    case 1: return sc_query_prefix(a, f, q);
    case 2: return sc_query_wildcard(a, f, q);
    case 3: return sc_query_regexp(a, f, q, 0xFFFF);
    case 4: return sc_query_fuzzy(a, f, q, kind % 3, kind / 7 % 3, 50, kind & 0x80);
    case 5: return sc_query_phrase(a, f, w, pos, 2, kind / 7 % 3);
    default: {
        sc_query *b = sc_query_bool(a);
        for (uint8_t k = 0; b && k < 6; k++) {
            sc_query *c = make_query(a, k, q);
            if (!c || sc_query_bool_add(a, b, k == 2 ? SC_OCCUR_MUST_NOT : SC_OCCUR_SHOULD, c))
                return NULL;
        }
        return b;
    }
    }
}

/* True when the snippet without its \x01 \x02 tags occurs in text. */
static bool piece_of(sc_slice frag, sc_slice text)
{
    uint8_t *plain = malloc(frag.len + 1);
    size_t n = 0;
    for (size_t i = 0; i < frag.len; i++)
        if (frag.ptr[i] != 1 && frag.ptr[i] != 2)
            plain[n++] = frag.ptr[i];
    bool ok = n == 0 || memmem(text.ptr, text.len, plain, n) != NULL;
    free(plain);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!standard && sc_analyzer_builtin("standard", &standard) != SC_OK)
        abort();
    if (size < 4)
        return 0;
    uint8_t opt = data[0], kind = data[1], fsize = data[2];
    const uint8_t *rest = data + 3, *nl = memchr(rest, '\n', size - 3);
    if (!nl)
        return 0;
    sc_slice q = sc_slice_make(rest, (size_t)(nl - rest));
    sc_slice text = sc_slice_make(nl + 1, size - 3 - q.len - 1);
    sc_slice vals[8];
    size_t nv = 0;
    for (size_t s = 0; nv < 8;) {
        const uint8_t *rs = memchr(text.ptr + s, 0x1E, text.len - s);
        size_t e = rs ? (size_t)(rs - text.ptr) : text.len;
        vals[nv++] = sc_slice_make(text.ptr + s, e - s);
        if (!rs)
            break;
        s = e + 1;
    }
    sc_arena a;
    sc_arena_init(&a, 64u << 20);
    sc_hl_options o;
    sc_hl_options_init(&o);
    o.pre_tag = sc_slice_cstr("\x01");
    o.post_tag = sc_slice_cstr("\x02");
    o.fragment_size = fsize;
    o.number_of_fragments = opt & 7;
    o.no_match_size = opt & 8 ? fsize : 0;
    o.boundary = (sc_hl_boundary)((opt >> 4) % 3);
    o.order_score = opt & 0x40;
    o.max_analyzed_offset = opt & 0x80 ? fsize : -1;
    sc_query *query = make_query(&a, kind, q);
    sc_hl_query *hq;
    sc_slice *fr;
    size_t n;
    if (query && sc_hl_query_build(query, sc_slice_cstr("f"), kind & 1, &a, &hq) == SC_OK &&
        sc_highlight_field(hq, standard, &o, vals, nv, NULL, &a, &fr, &n) == SC_OK) {
        /* the joined content, as the highlighter builds it */
        size_t len = 0;
        for (size_t i = 0; i < nv; i++)
            len += vals[i].len + 3;
        uint8_t *joined = malloc(len + 1);
        size_t off = 0;
        for (size_t i = 0; i < nv; i++) {
            if (i) {
                memcpy(joined + off, "\xE2\x80\xA9", 3);
                off += 3;
            }
            for (size_t b = 0; b < vals[i].len; b++) /* the text's own \x01 \x02 go too */
                if (vals[i].ptr[b] != 1 && vals[i].ptr[b] != 2)
                    joined[off++] = vals[i].ptr[b];
        }
        for (size_t i = 0; i < n; i++)
            if (fr[i].len == 0 || !piece_of(fr[i], sc_slice_make(joined, off)))
                abort();
        free(joined);
    }
    sc_arena_fini(&a);
    return 0;
}
