/* Term dictionary: DFA intersection against filtering every term with the automaton, for
 * hand-built DFAs (prefix, fixed length, alphabet subset, "second byte is x", accept-all,
 * accept-nothing, exact term, suffixes with and without the suffix/tame hints) over random
 * vocabularies, including terms with shared prefixes and bytes 0x00/0xff.
 * Seeds are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "common.h"
#include "index/segment.h"
#include "index/terms.h"

#define MAXS 16

typedef struct tdfa {
    sc_dfa d;
    uint32_t next[MAXS * 256];
    uint8_t accept[MAXS];
} tdfa;

static void tdfa_init(tdfa *t, uint32_t n_states)
{
    memset(t, 0, sizeof(*t));
    t->d.n_states = n_states;
    t->d.start = 0;
    t->d.n_classes = 256;
    for (int i = 0; i < 256; i++)
        t->d.classmap[i] = (uint8_t)i;
    for (size_t i = 0; i < MAXS * 256; i++)
        t->next[i] = SC_DFA_DEAD;
    t->d.next = t->next;
    t->d.accept = t->accept;
}

static void edge(tdfa *t, uint32_t from, int byte, uint32_t to)
{
    t->next[from * 256 + (uint32_t)byte] = to;
}

static void all_edges(tdfa *t, uint32_t from, uint32_t to)
{
    for (int c = 0; c < 256; c++)
        edge(t, from, c, to);
}

static bool run(const sc_dfa *d, const uint8_t *s, size_t n)
{
    uint32_t st = d->start;
    for (size_t i = 0; i < n && st != SC_DFA_DEAD; i++)
        st = sc_dfa_step(d, st, s[i]);
    return sc_dfa_accepts(d, st);
}

typedef struct vterm {
    uint8_t b[8];
    size_t n;
} vterm;

static int cmp_vterm(const void *a, const void *b)
{
    const vterm *x = a, *y = b;
    return sc_slice_cmp(sc_slice_make(x->b, x->n), sc_slice_make(y->b, y->n));
}

static void check(const sc_segment *seg, const sc_field_info *f, const vterm *v, size_t n,
                  const tdfa *t, const char *what)
{
    sc_terms_iter it;
    memset(&it, 0, sizeof(it));
    assert_int_equal(sc_terms_iter_init(&it, seg, f), SC_OK);
    for (int rep = 0; rep < 2; rep++) { /* twice: restarting reuses the iterator */
        assert_int_equal(sc_terms_intersect_start(&it, &t->d), SC_OK);
        size_t j = 0;
        for (;;) {
            bool has;
            assert_int_equal(sc_terms_next_match(&it, &has), SC_OK);
            while (j < n && !run(&t->d, v[j].b, v[j].n))
                j++;
            if (!has) {
                if (j != n)
                    fprintf(stderr, "%s: missed term #%zu\n", what, j);
                assert_int_equal(j, n);
                break;
            }
            assert_true(j < n);
            assert_true(sc_slice_eq(sc_terms_term(&it), sc_slice_make(v[j].b, v[j].n)));
            assert_int_equal(sc_terms_info(&it)->ord, j);
            /* the statistics the walk decoded lazily equal an exact lookup's */
            sc_term_info ti;
            bool found;
            assert_int_equal(sc_terms_lookup(seg, f, sc_terms_term(&it), &ti, &found), SC_OK);
            assert_true(found);
            const sc_term_info *got = sc_terms_info(&it);
            assert_int_equal(got->doc_freq, ti.doc_freq);
            assert_int_equal(got->total_term_freq, ti.total_term_freq);
            assert_int_equal(got->postings_off, ti.postings_off);
            assert_int_equal(got->positions_off, ti.positions_off);
            j++;
        }
    }
    sc_terms_iter_fini(&it);
}

static void one_vocab(size_t n_terms, int alphabet)
{
    vterm *v = calloc(n_terms, sizeof(vterm));
    size_t n = 0;
    for (size_t i = 0; i < n_terms; i++) {
        vterm t;
        t.n = 1 + t_below(6);
        for (size_t k = 0; k < t.n; k++) {
            uint32_t r = t_below((uint32_t)alphabet + 2);
            t.b[k] = r == (uint32_t)alphabet       ? 0x00
                     : r == (uint32_t)alphabet + 1 ? 0xff
                                                   : (uint8_t)('a' + r);
        }
        v[n++] = t;
    }
    qsort(v, n, sizeof(vterm), cmp_vterm);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || cmp_vterm(&v[u - 1], &v[i]) != 0)
            v[u++] = v[i];
    n = u;
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_segment_builder *b;
    assert_int_equal(sc_segment_builder_new(&b), SC_OK);
    /* one doc per term, so every term exists */
    for (size_t i = 0; i < n; i++) {
        sc_index_token tok = {sc_slice_make(v[i].b, v[i].n), 0};
        sc_index_field f = {.name = sc_slice_cstr("k"),
                            .kind = SC_FIELD_KEYWORD,
                            .flags = SC_FIELD_INDEXED,
                            .tokens = &tok,
                            .n_tokens = 1};
        sc_index_doc d = {.id = sc_slice_cstr("x"), .fields = &f, .n_fields = 1};
        assert_int_equal(sc_segment_builder_add(b, &d, NULL), SC_OK);
    }
    assert_int_equal(sc_segment_builder_write(b, dir, "t", NULL), SC_OK);
    sc_segment_builder_free(b);
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, "t", &seg), SC_OK);
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr("k"));
    assert_non_null(f);
    assert_int_equal(f->n_terms, n);
    tdfa t;
    /* prefix of a random existing term (or random bytes) */
    for (int rep = 0; rep < 20; rep++) {
        const vterm *src = &v[t_below((uint32_t)n)];
        size_t plen = 1 + t_below((uint32_t)src->n);
        tdfa_init(&t, (uint32_t)plen + 1);
        for (size_t k = 0; k < plen; k++)
            edge(&t, (uint32_t)k, rep % 5 == 0 ? 'a' + (int)t_below(4) : src->b[k],
                 (uint32_t)k + 1);
        all_edges(&t, (uint32_t)plen, (uint32_t)plen);
        t.accept[plen] = 1;
        check(seg, f, v, n, &t, "prefix");
    }
    /* exactly length L */
    for (uint32_t L = 1; L <= 6; L++) {
        tdfa_init(&t, L + 1);
        for (uint32_t k = 0; k < L; k++)
            all_edges(&t, k, k + 1);
        t.accept[L] = 1;
        check(seg, f, v, n, &t, "length");
    }
    /* only 'a' and 'b' */
    tdfa_init(&t, 1);
    edge(&t, 0, 'a', 0);
    edge(&t, 0, 'b', 0);
    t.accept[0] = 1;
    check(seg, f, v, n, &t, "ab*");
    /* second byte is 'c', anything after */
    tdfa_init(&t, 3);
    all_edges(&t, 0, 1);
    edge(&t, 1, 'c', 2);
    all_edges(&t, 2, 2);
    t.accept[2] = 1;
    check(seg, f, v, n, &t, ".c.*");
    /* accept all, accept nothing, empty-string only */
    tdfa_init(&t, 1);
    all_edges(&t, 0, 0);
    t.accept[0] = 1;
    check(seg, f, v, n, &t, "all");
    tdfa_init(&t, 1);
    all_edges(&t, 0, 0);
    check(seg, f, v, n, &t, "none");
    tdfa_init(&t, 1);
    t.accept[0] = 1;
    check(seg, f, v, n, &t, "empty");
    /* one exact term: x0 x1 ... */
    const vterm *e = &v[t_below((uint32_t)n)];
    tdfa_init(&t, (uint32_t)e->n + 1);
    for (size_t k = 0; k < e->n; k++)
        edge(&t, (uint32_t)k, e->b[k], (uint32_t)k + 1);
    t.accept[e->n] = 1;
    check(seg, f, v, n, &t, "exact");
    /* bytes 0xff and 0x00 around the edges: "ends with 0xff" */
    tdfa_init(&t, 2);
    all_edges(&t, 0, 0);
    edge(&t, 0, 0xff, 1);
    all_edges(&t, 1, 0);
    edge(&t, 1, 0xff, 1);
    t.accept[1] = 1;
    check(seg, f, v, n, &t, ".*\\xff");
    /* the same with the suffix hint: every state tame, terms rejected on their last byte */
    static const uint8_t tame_all[MAXS] = {1, 1, 1, 1}, tame_tail[MAXS] = {0, 1, 1, 1};
    t.d.suffix = (const uint8_t *)"\xff";
    t.d.suffix_len = 1;
    t.d.tame = tame_all;
    check(seg, f, v, n, &t, ".*\\xff with hints");
    /* "a.*cb": a non-tame start (dead ranges still skipped by seeks), then tame states */
    tdfa_init(&t, 4);
    edge(&t, 0, 'a', 1);
    for (uint32_t s = 1; s <= 3; s++) {
        all_edges(&t, s, 1);
        edge(&t, s, 'c', 2);
    }
    edge(&t, 2, 'b', 3);
    t.accept[3] = 1;
    check(seg, f, v, n, &t, "a.*cb");
    t.d.suffix = (const uint8_t *)"cb";
    t.d.suffix_len = 2;
    t.d.tame = tame_tail;
    check(seg, f, v, n, &t, "a.*cb with hints");
    sc_segment_unref(seg);
    free(v);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_intersect(void **state)
{
    (void)state;
    t_seed("terms_intersect");
    one_vocab(1, 3);
    one_vocab(40, 2);
    one_vocab(3000, 4);
    one_vocab(5000, 26);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intersect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
