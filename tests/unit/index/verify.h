/* Verification of a whole segment against the random corpus model (see common.h); included
 * by test files after cmocka.h. */
#ifndef SC_TESTS_INDEX_VERIFY_H
#define SC_TESTS_INDEX_VERIFY_H

#include "common.h"
#include "index/bkd.h"
#include "index/docvalues.h"
#include "index/postings.h"
#include "index/segment.h"
#include "index/stored.h"
#include "index/terms.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_postings(const sc_segment *seg, const sc_field_info *f, const t_corpus *c,
                           uint16_t v, const t_post *m, sc_postings *p, const uint8_t *norms)
{
    sc_term_info ti;
    bool found;
    assert_int_equal(sc_terms_lookup(seg, f, sc_slice_cstr(c->vocab[v]), &ti, &found), SC_OK);
    if (m->n == 0) {
        assert_false(found);
        return;
    }
    assert_true(found);
    assert_int_equal(ti.doc_freq, m->n);
    uint64_t ttf = 0;
    for (uint32_t i = 0; i < m->n; i++)
        ttf += m->freqs[i];
    assert_int_equal(ti.total_term_freq, ttf);
    assert_int_equal(sc_postings_reset(p, seg, f, &ti, SC_POSTINGS_FREQS | SC_POSTINGS_POSITIONS),
                     SC_OK);
    /* impacts dominate every doc */
    sc_postings_impact tim = sc_postings_term_impact(p);
    for (uint32_t i = 0; i < m->n; i++) {
        assert_true(tim.max_freq >= m->freqs[i]);
        assert_true(tim.min_norm <= norms[m->docs[i]]);
    }
    int64_t mi = -1; /* model index of the current doc; -1 unpositioned */
    uint32_t n_docs = c->n_docs;
    sc_bitset bs;
    assert_int_equal(sc_bitset_init(&bs, n_docs + 64), SC_OK);
    uint32_t bdocs[300], bfreqs[300], pos[T_MAX_TOK];
    for (int steps = 0; steps < 400; steps++) {
        uint32_t cur = mi < 0 ? 0 : m->docs[mi];
        int op = (int)t_below(9);
        if (mi >= (int64_t)m->n)
            break;
        switch (op) {
        case 0: {
            uint32_t d = sc_postings_next(p);
            mi++;
            assert_int_equal(d, mi < m->n ? m->docs[mi] : SC_POSTINGS_END);
            break;
        }
        case 1: {
            uint32_t far = t_below(8) == 0 ? n_docs : t_below(4) == 0 ? 2000 : 40;
            uint32_t target = (mi < 0 ? 0 : cur + 1) + t_below(far);
            uint32_t d = sc_postings_advance(p, target);
            int64_t j = mi + 1;
            while (j < m->n && m->docs[j] < target)
                j++;
            mi = j;
            assert_int_equal(d, mi < m->n ? m->docs[mi] : SC_POSTINGS_END);
            break;
        }
        case 2: {
            size_t max = 1 + t_below(299);
            size_t n = sc_postings_next_batch(p, bdocs, t_below(2) ? bfreqs : NULL, max);
            size_t expect = (size_t)(m->n - (mi + 1));
            if (expect > max)
                expect = max;
            assert_int_equal(n, expect);
            for (size_t k = 0; k < n; k++)
                assert_int_equal(bdocs[k], m->docs[mi + 1 + k]);
            mi += (int64_t)n;
            if (n < max) {
                mi = m->n;
                assert_int_equal(p->doc, SC_POSTINGS_END);
            } else {
                assert_int_equal(p->doc, m->docs[mi]);
            }
            break;
        }
        case 3: {
            uint32_t base = mi < 0 ? 0 : (cur & ~63u);
            uint32_t upto = cur + t_below(t_below(3) == 0 ? n_docs : 300);
            if (upto > n_docs + 1)
                upto = n_docs + 1;
            sc_bitset_clear_all(&bs);
            sc_postings_into_bitset(p, upto, &bs, base);
            int64_t j = mi < 0 ? 0 : mi;
            size_t count = 0;
            for (; j < m->n && m->docs[j] < upto; j++) {
                assert_true(sc_bitset_test(&bs, m->docs[j] - base));
                count++;
            }
            assert_int_equal(sc_bitset_count(&bs), count);
            mi = j;
            if (mi < m->n)
                assert_int_equal(p->doc, m->docs[mi]);
            break;
        }
        case 4:
            if (mi >= 0 && mi < m->n) {
                uint32_t end = sc_postings_run_end(p);
                assert_true(end >= cur + 1);
                assert_true(mi + (end - cur) - 1 < m->n);
                assert_int_equal(m->docs[mi + (end - cur) - 1], end - 1);
            }
            break;
        case 5:
            if (mi >= 0 && mi < m->n)
                assert_int_equal(sc_postings_freq(p), m->freqs[mi]);
            break;
        case 6:
            if (mi >= 0 && mi < m->n) {
                size_t n = sc_postings_positions(p, pos, T_MAX_TOK);
                assert_int_equal(n, m->freqs[mi]);
                for (size_t k = 0; k < n; k++)
                    assert_int_equal(pos[k], m->pos[m->pos_start[mi] + k]);
            }
            break;
        case 7: {
            uint32_t target = cur + t_below(500);
            uint32_t up = sc_postings_advance_shallow(p, target);
            int64_t j = mi < 0 ? 0 : mi;
            while (j < m->n && m->docs[j] < target)
                j++;
            if (j >= m->n) {
                assert_int_equal(up, SC_POSTINGS_END);
            } else {
                assert_true(up >= m->docs[j]);
                sc_postings_impact im = sc_postings_shallow_impact(p);
                for (int64_t k = j; k < m->n && m->docs[k] <= up; k++) {
                    assert_true(im.max_freq >= m->freqs[k]);
                    assert_true(im.min_norm <= norms[m->docs[k]]);
                }
                /* window bound (second skip level for whole groups) */
                uint32_t upto = target + t_below(n_docs);
                sc_postings_impact wim = sc_postings_max_impact_upto(p, upto);
                for (int64_t k = j; k < m->n && m->docs[k] <= upto; k++) {
                    assert_true(wim.max_freq >= m->freqs[k]);
                    assert_true(wim.min_norm <= norms[m->docs[k]]);
                }
                /* competitive impacts: the exact pareto frontier of the block's (freq, norm) */
                sc_postings_impact imps[SC_POSTINGS_BLOCK];
                size_t ni = sc_postings_shallow_impacts(p, imps, SC_POSTINGS_BLOCK);
                uint32_t b0 = (uint32_t)(j / SC_POSTINGS_BLOCK * SC_POSTINGS_BLOCK);
                uint32_t b1 = b0 + SC_POSTINGS_BLOCK < m->n ? b0 + SC_POSTINGS_BLOCK : m->n;
                assert_int_equal(m->docs[b1 - 1], up);
                if (f->kind == SC_FIELD_TEXT) {
                    assert_true(ni > 0);
                    for (size_t a = 1; a < ni; a++) {
                        assert_true(imps[a].max_freq > imps[a - 1].max_freq);
                        assert_true(imps[a].min_norm > imps[a - 1].min_norm);
                    }
                    for (uint32_t k = b0; k < b1; k++) { /* every doc is dominated */
                        bool dom = false;
                        for (size_t a = 0; a < ni && !dom; a++)
                            dom = imps[a].max_freq >= m->freqs[k] &&
                                  imps[a].min_norm <= norms[m->docs[k]];
                        assert_true(dom);
                    }
                    for (size_t a = 0; a < ni; a++) { /* every pair is some doc's */
                        bool seen = false;
                        for (uint32_t k = b0; k < b1 && !seen; k++)
                            seen = imps[a].max_freq == m->freqs[k] &&
                                   imps[a].min_norm == norms[m->docs[k]];
                        assert_true(seen);
                    }
                } else {
                    assert_int_equal(ni, 0);
                }
            }
            break;
        }
        default: break;
        }
        assert_int_equal(sc_postings_status(p), SC_OK);
    }
    sc_bitset_fini(&bs);
}

static void verify_segment(const sc_segment *seg, const t_corpus *c)
{
    assert_int_equal(sc_segment_n_docs(seg), c->n_docs);
    if (c->n_docs == 0)
        return;
    assert_int_equal(sc_segment_n_fields(seg), 4);
    const sc_field_info *body = sc_segment_field(seg, sc_slice_cstr("body"));
    const sc_field_info *tag = sc_segment_field(seg, sc_slice_cstr("tag"));
    const sc_field_info *num = sc_segment_field(seg, sc_slice_cstr("num"));
    assert_non_null(body);
    assert_non_null(tag);
    assert_non_null(num);
    assert_null(sc_segment_field(seg, sc_slice_cstr("nope")));
    /* stats */
    uint64_t tokens = 0, with_tags = 0, tag_pairs = 0;
    for (uint32_t d = 0; d < c->n_docs; d++) {
        tokens += c->docs[d].n_body;
        uint32_t distinct = 0;
        for (uint32_t i = 0; i < c->docs[d].n_tags; i++) {
            int dup = 0;
            for (uint32_t j = 0; j < i; j++)
                dup |= c->docs[d].tags[j] == c->docs[d].tags[i];
            distinct += !dup;
        }
        tag_pairs += distinct;
        with_tags += distinct > 0;
    }
    assert_int_equal(body->doc_count, c->n_docs);
    assert_int_equal(body->sum_total_term_freq, tokens);
    assert_int_equal(tag->doc_count, with_tags);
    assert_int_equal(tag->sum_doc_freq, tag_pairs);
    /* norms */
    const uint8_t *norms = sc_segment_norms(seg, body);
    assert_non_null(norms);
    for (uint32_t d = 0; d < c->n_docs; d++)
        assert_int_equal(norms[d], sc_norm_encode(c->docs[d].n_body));
    assert_null(sc_segment_norms(seg, tag));
    /* term iteration in sorted order with the model's stats */
    char *sorted[T_VOCAB];
    size_t ns = 0;
    t_post *posts = calloc(T_VOCAB, sizeof(t_post));
    for (int v = 0; v < T_VOCAB; v++) {
        t_post_body(c, (uint16_t)v, &posts[v]);
        if (posts[v].n)
            sorted[ns++] = (char *)c->vocab[v];
    }
    qsort(sorted, ns, sizeof(char *), cmp_str);
    assert_int_equal(body->n_terms, ns);
    sc_terms_iter it;
    memset(&it, 0, sizeof(it));
    assert_int_equal(sc_terms_iter_init(&it, seg, body), SC_OK);
    for (size_t i = 0;; i++) {
        bool has;
        assert_int_equal(sc_terms_next(&it, &has), SC_OK);
        if (!has) {
            assert_int_equal(i, ns);
            break;
        }
        assert_true(sc_slice_eq_cstr(sc_terms_term(&it), sorted[i]));
        assert_int_equal(sc_terms_info(&it)->ord, i);
    }
    /* seeks: every term, and random probes for ceil */
    for (int k = 0; k < 500; k++) {
        char probe[8];
        int len = 1 + (int)t_below(6);
        for (int i = 0; i < len; i++)
            probe[i] = (char)('a' + t_below(5));
        probe[len] = 0;
        bool has, exact;
        assert_int_equal(sc_terms_seek_ceil(&it, sc_slice_cstr(probe), &has, &exact), SC_OK);
        size_t j = 0;
        while (j < ns && strcmp(sorted[j], probe) < 0)
            j++;
        assert_int_equal(has, j < ns);
        if (has) {
            assert_true(sc_slice_eq_cstr(sc_terms_term(&it), sorted[j]));
            assert_int_equal(exact, strcmp(sorted[j], probe) == 0);
            /* next continues in order */
            bool h2;
            assert_int_equal(sc_terms_next(&it, &h2), SC_OK);
            assert_int_equal(h2, j + 1 < ns);
            if (h2)
                assert_true(sc_slice_eq_cstr(sc_terms_term(&it), sorted[j + 1]));
        }
        bool found;
        sc_term_info ti;
        assert_int_equal(sc_terms_lookup(seg, body, sc_slice_cstr(probe), &ti, &found), SC_OK);
        assert_int_equal(found, j < ns && strcmp(sorted[j], probe) == 0);
    }
    sc_terms_iter_fini(&it);
    /* postings of every body term with one reused cursor */
    sc_postings p;
    sc_postings_init(&p);
    for (int v = 0; v < T_VOCAB; v++)
        check_postings(seg, body, c, (uint16_t)v, &posts[v], &p, norms);
    for (int v = 0; v < T_VOCAB; v++)
        t_post_free(&posts[v]);
    free(posts);
    /* keyword postings: every tag */
    for (int t = 0; t < 16; t++) {
        sc_term_info ti;
        bool found;
        assert_int_equal(sc_terms_lookup(seg, tag, sc_slice_cstr(c->tagv[t]), &ti, &found), SC_OK);
        uint32_t expect_n = 0;
        if (found) {
            assert_int_equal(sc_postings_reset(&p, seg, tag, &ti, 0), SC_OK);
        }
        for (uint32_t d = 0; d < c->n_docs; d++) {
            int has = 0;
            for (uint32_t i = 0; i < c->docs[d].n_tags; i++)
                has |= c->docs[d].tags[i] == t;
            if (has) {
                assert_true(found);
                assert_int_equal(sc_postings_next(&p), d);
                assert_int_equal(sc_postings_freq(&p), 1);
                expect_n++;
            }
        }
        if (found) {
            assert_int_equal(sc_postings_next(&p), SC_POSTINGS_END);
            assert_int_equal(ti.doc_freq, expect_n);
        }
    }
    /* doc values */
    sc_dv_numeric dvn;
    sc_dv_sorted_set dvs;
    assert_int_equal(sc_dv_numeric_open(seg, num, &dvn), SC_OK);
    assert_int_equal(sc_dv_sorted_set_open(seg, tag, &dvs), SC_OK);
    assert_int_equal(sc_dv_numeric_open(seg, body, &dvn) == SC_ENOTFOUND, 1);
    assert_int_equal(sc_dv_numeric_open(seg, num, &dvn), SC_OK);
    for (uint32_t d = 0; d < c->n_docs; d++) {
        const t_doc *doc = &c->docs[d];
        int64_t vals[8], expect[3];
        memcpy(expect, doc->nums, sizeof(expect));
        for (uint32_t i = 1; i < doc->n_nums; i++)
            for (uint32_t j = i; j > 0 && expect[j - 1] > expect[j]; j--) {
                int64_t t = expect[j];
                expect[j] = expect[j - 1];
                expect[j - 1] = t;
            }
        assert_int_equal(sc_dv_numeric_count(&dvn, d), doc->n_nums);
        size_t n = sc_dv_numeric_get(&dvn, d, vals, 8);
        assert_int_equal(n, doc->n_nums);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(vals[i], expect[i]);
        uint64_t ords[8];
        size_t no = sc_dv_sorted_set_ords(&dvs, d, ords, 8);
        char prev[8] = "";
        size_t distinct = 0;
        for (size_t i = 0; i < no; i++) {
            sc_slice term = sc_dv_sorted_set_term(&dvs, ords[i]);
            char buf[8] = {0};
            memcpy(buf, term.ptr, term.len < 7 ? term.len : 7);
            assert_true(i == 0 || strcmp(prev, buf) < 0);
            strcpy(prev, buf);
            int has = 0;
            for (uint32_t j = 0; j < doc->n_tags; j++)
                has |= strcmp(c->tagv[doc->tags[j]], buf) == 0;
            assert_true(has);
            uint64_t o;
            assert_true(sc_dv_sorted_set_lookup(&dvs, term, &o));
            assert_int_equal(o, ords[i]);
        }
        for (uint32_t i = 0; i < doc->n_tags; i++) {
            int dup = 0;
            for (uint32_t j = 0; j < i; j++)
                dup |= doc->tags[j] == doc->tags[i];
            distinct += !dup;
        }
        assert_int_equal(no, distinct);
    }
    /* points: random ranges against the model */
    sc_bkd bkd;
    uint64_t n_points = 0;
    for (uint32_t d = 0; d < c->n_docs; d++)
        n_points += c->docs[d].n_nums;
    if (n_points == 0) {
        assert_int_equal(sc_segment_points(seg, num, &bkd), SC_ENOTFOUND);
    } else {
        assert_int_equal(sc_segment_points(seg, num, &bkd), SC_OK);
        assert_true(num->flags & SC_FIELD_POINTS);
        assert_int_equal(sc_bkd_n_points(&bkd), n_points);
        sc_bitset pb;
        assert_int_equal(sc_bitset_init(&pb, c->n_docs), SC_OK);
        for (int k = 0; k < 50; k++) {
            int64_t lo = (int64_t)t_below(8000) - 4000, hi = lo + (int64_t)t_below(3000);
            if (k == 0)
                lo = INT64_MIN, hi = INT64_MAX;
            sc_bitset_clear_all(&pb);
            assert_int_equal(sc_bkd_intersect(&bkd, lo, hi, &pb, 0, NULL), SC_OK);
            for (uint32_t d = 0; d < c->n_docs; d++) {
                bool in = false;
                for (uint32_t i = 0; i < c->docs[d].n_nums; i++)
                    in |= c->docs[d].nums[i] >= lo && c->docs[d].nums[i] <= hi;
                assert_int_equal(sc_bitset_test(&pb, d), in);
            }
        }
        sc_bitset_fini(&pb);
    }
    /* stored, in order and at random */
    sc_stored_reader sr;
    sc_stored_reader_init(&sr, seg);
    for (uint32_t k = 0; k < 2 * c->n_docs; k++) {
        uint32_t d = k < c->n_docs ? k : t_below(c->n_docs);
        sc_slice id, src;
        assert_int_equal(sc_stored_get(&sr, d, &id, &src), SC_OK);
        assert_true(sc_slice_eq_cstr(id, c->docs[d].id));
        assert_true(sc_slice_eq(src, sc_slice_make(c->docs[d].source, c->docs[d].source_len)));
    }
    sc_slice id, src;
    assert_int_equal(sc_stored_get(&sr, c->n_docs, &id, &src), SC_EINVAL);
    sc_stored_reader_fini(&sr);
}

#endif
