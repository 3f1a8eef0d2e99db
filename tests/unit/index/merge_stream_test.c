/* The streaming merge (merge_stream.c) against a segment built at once: random documents with
 * every field kind the merge streams (text with and without positions, keyword with and
 * without postings, multi-valued keywords and numbers, dates, doc-values-only numbers, geo
 * points, `_id` with doc values, stored sources up to several blocks), cut into segments with
 * random deletes (one input fully deleted, one without deletes), merged; a builder then writes
 * the same live docs in the same order. The two files must be byte for byte equal up to the
 * stored blocks (postings, positions, skip tables, term dictionaries, norms, doc values,
 * points, field table) and hold the same stored docs. With dense vectors (an hnsw and an
 * int8_hnsw field, on some docs) the graph of the merged segment is seeded from the largest
 * input without deletes, which a builder given the docs cannot do: there the streaming merge is
 * compared with the rebuilding one (merge.c) instead, byte for byte up to the stored blocks, and
 * the merged vectors with the docs'. The same merge under a tiny memory limit
 * (index.merge.memory) spills to temporary files and must write the very same file, leaving no
 * spill file behind. Seeds are printed. */
#include <dirent.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "base/file.h"
#include "index/internal.h"
#include "index/merge.h"
#include "index/merge_impl.h"
#include "index/stored.h"
#include "index/vecfield.h"
#include "common.h"

#define M_VOCAB 300
#define M_MAX_TOK 60
#define M_DIMS 12

typedef struct m_doc {
    char id[16];
    uint16_t body[M_MAX_TOK];
    uint32_t body_pos[M_MAX_TOK];
    uint32_t n_body;
    uint16_t title[4];
    uint32_t n_title;
    uint8_t tags[3];
    uint32_t n_tags;
    int cat; /* -1: none */
    int64_t nums[2];
    uint32_t n_nums;
    int64_t date, price, geo;
    bool has_price, has_geo, rare, has_vec;
    float vec[M_DIMS];
    char *source;
    size_t source_len;
} m_doc;

static char m_vocab[M_VOCAB][12];
static char m_tagv[50][8];

static void m_make(m_doc *docs, uint32_t n)
{
    for (int v = 0; v < M_VOCAB; v++)
        snprintf(m_vocab[v], sizeof(m_vocab[v]), v == 0 ? "the" : "w%d", v);
    for (int v = 0; v < 50; v++)
        snprintf(m_tagv[v], sizeof(m_tagv[v]), "t%02d", v);
    for (uint32_t d = 0; d < n; d++) {
        m_doc *x = &docs[d];
        memset(x, 0, sizeof(*x));
        snprintf(x->id, sizeof(x->id), "id%06u", (unsigned)t_below(1000000) * 8 + d % 8);
        x->n_body = t_below(M_MAX_TOK);
        uint32_t p = 0;
        for (uint32_t i = 0; i < x->n_body; i++) {
            /* "the" in most docs (a term with > 32 blocks), then a skewed vocabulary */
            uint32_t r = t_below(100);
            x->body[i] = r < 15 ? 0 : (uint16_t)(1 + t_below(1 + t_below(M_VOCAB - 1)));
            p += 1 + (t_below(10) == 0);
            x->body_pos[i] = p;
        }
        x->n_title = t_below(4);
        for (uint32_t i = 0; i < x->n_title; i++)
            x->title[i] = (uint16_t)t_below(40);
        x->n_tags = t_below(4);
        for (uint32_t i = 0; i < x->n_tags; i++) {
            x->tags[i] = (uint8_t)t_below(50);
            for (uint32_t j = 0; j < i; j++)
                if (x->tags[j] == x->tags[i])
                    x->tags[i] = (uint8_t)((x->tags[i] + 1) % 50), j = (uint32_t)-1;
        }
        x->cat = t_below(5) == 0 ? -1 : (int)t_below(7);
        x->n_nums = t_below(3);
        for (uint32_t i = 0; i < x->n_nums; i++)
            x->nums[i] = (int64_t)t_below(2000) - 1000;
        x->date = 1577836800000LL + (int64_t)t_below(100000) * 1000;
        x->has_price = t_below(3) != 0;
        x->price = (int64_t)t_below(50) * 25;
        x->has_geo = t_below(2) != 0;
        x->geo = (int64_t)(((uint64_t)(uint32_t)(int32_t)(t_below(1u << 30) - (1u << 29)) << 32) |
                           (uint32_t)(int32_t)(t_below(1u << 31) - (1u << 30)));
        x->rare = t_below(50) == 0;
        x->has_vec = t_below(4) != 0;
        for (uint32_t i = 0; i < M_DIMS; i++)
            x->vec[i] = (float)t_below(20001) / 1000.0f - 10.0f;
        size_t len = t_below(10) == 0 ? 3000 + t_below(6000) : 20 + t_below(200);
        x->source = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            x->source[i] = (char)('a' + t_below(4 + (uint32_t)(i % 20)));
        x->source_len = len;
    }
}

static const sc_vec_params m_vp_hnsw = {
    .dims = M_DIMS, .sim = SC_VEC_SIM_L2, .type = SC_VEC_INDEX_HNSW, .m = 4, .ef_construction = 20};
static const sc_vec_params m_vp_int8 = {
    .dims = M_DIMS, .sim = SC_VEC_SIM_DOT, .type = SC_VEC_INDEX_INT8_HNSW, .m = 6,
    .ef_construction = 12};

static sc_status m_add(sc_segment_builder *b, const m_doc *x, bool with_rare, bool vectors)
{
    sc_index_token body[M_MAX_TOK], title[4], tags[3], cat, idtok, rare;
    for (uint32_t i = 0; i < x->n_body; i++)
        body[i] = (sc_index_token){sc_slice_cstr(m_vocab[x->body[i]]), x->body_pos[i]};
    for (uint32_t i = 0; i < x->n_title; i++)
        title[i] = (sc_index_token){sc_slice_cstr(m_vocab[x->title[i]]), i};
    for (uint32_t i = 0; i < x->n_tags; i++)
        tags[i] = (sc_index_token){sc_slice_cstr(m_tagv[x->tags[i]]), i};
    cat = (sc_index_token){sc_slice_cstr(m_tagv[x->cat < 0 ? 0 : x->cat]), 0};
    idtok = (sc_index_token){sc_slice_cstr(x->id), 0};
    rare = (sc_index_token){sc_slice_cstr("r"), 0};
    sc_index_field f[13];
    size_t nf = 0;
    f[nf++] = (sc_index_field){.name = sc_slice_cstr("body"), .kind = SC_FIELD_TEXT,
        .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS | SC_FIELD_POSITIONS,
        .tokens = body, .n_tokens = x->n_body, .length = x->n_body};
    f[nf++] = (sc_index_field){.name = sc_slice_cstr("title"), .kind = SC_FIELD_TEXT,
        .flags = SC_FIELD_INDEXED | SC_FIELD_NORMS, .tokens = title, .n_tokens = x->n_title,
        .length = x->n_title};
    f[nf++] = (sc_index_field){.name = sc_slice_cstr("tag"), .kind = SC_FIELD_KEYWORD,
        .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, .tokens = tags, .n_tokens = x->n_tags};
    if (x->cat >= 0)
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("cat"), .kind = SC_FIELD_KEYWORD,
            .flags = SC_FIELD_DOCVALUES, .tokens = &cat, .n_tokens = 1};
    f[nf++] = (sc_index_field){.name = sc_slice_cstr("num"), .kind = SC_FIELD_NUMERIC,
        .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, .values = x->nums, .n_values = x->n_nums};
    f[nf++] = (sc_index_field){.name = sc_slice_cstr("date"), .kind = SC_FIELD_NUMERIC,
        .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, .values = &x->date, .n_values = 1};
    if (x->has_price)
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("price"), .kind = SC_FIELD_NUMERIC,
            .flags = SC_FIELD_DOCVALUES, .values = &x->price, .n_values = 1};
    if (x->has_geo)
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("loc"), .kind = SC_FIELD_NUMERIC,
            .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES | SC_FIELD_GEO, .values = &x->geo,
            .n_values = 1};
    if (with_rare && x->rare)
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("rare"), .kind = SC_FIELD_KEYWORD,
            .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, .tokens = &rare, .n_tokens = 1};
    if (vectors && x->has_vec) {
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("vec"), .kind = SC_FIELD_VECTOR,
            .vector = x->vec, .vparams = &m_vp_hnsw};
        f[nf++] = (sc_index_field){.name = sc_slice_cstr("vq"), .kind = SC_FIELD_VECTOR,
            .vector = x->vec, .vparams = &m_vp_int8};
    }
    f[nf++] = (sc_index_field){.name = sc_slice_cstr("_id"), .kind = SC_FIELD_KEYWORD,
        .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES, .tokens = &idtok, .n_tokens = 1};
    sc_index_doc in = {.id = sc_slice_cstr(x->id),
                       .source = sc_slice_make(x->source, x->source_len),
                       .fields = f,
                       .n_fields = nf};
    return sc_segment_builder_add(b, &in, NULL);
}

/* The start of the stored blocks: the first block's offset, else the stored index. */
static uint64_t stored_start(sc_slice f)
{
    const uint8_t *foot = f.ptr + f.len - SC__SEG_FOOTER_BYTES;
    uint64_t idx_off = sc__ld64(foot + 16);
    if (sc__ld32(f.ptr + idx_off) == 0)
        return idx_off;
    return sc__ld64(f.ptr + idx_off + 4 + 8);
}

static void compare_segments(const char *dir, const char *a, const char *b, uint32_t n_docs)
{
    char pa[512], pb[512];
    snprintf(pa, sizeof(pa), "%s/%s.seg", dir, a);
    snprintf(pb, sizeof(pb), "%s/%s.seg", dir, b);
    uint8_t *fa, *fb;
    size_t la, lb;
    assert_int_equal(sc_file_read_all(pa, &fa, &la), SC_OK);
    assert_int_equal(sc_file_read_all(pb, &fb, &lb), SC_OK);
    sc_slice sa = sc_slice_make(fa, la), sb = sc_slice_make(fb, lb);
    uint64_t ea = stored_start(sa), eb = stored_start(sb);
    assert_int_equal(ea, eb);
    for (uint64_t i = 0; i < ea; i++)
        if (fa[i] != fb[i]) {
            fprintf(stderr, "first difference at byte %llu of %llu\n", (unsigned long long)i,
                    (unsigned long long)ea);
            fail();
        }
    /* the field tables (their offsets all point before the stored blocks) */
    const uint8_t *ta = fa + la - SC__SEG_FOOTER_BYTES, *tb = fb + lb - SC__SEG_FOOTER_BYTES;
    assert_int_equal(sc__ld64(ta + 8), sc__ld64(tb + 8));
    assert_memory_equal(fa + sc__ld64(ta), fb + sc__ld64(tb), sc__ld64(ta + 8));
    free(fa);
    free(fb);
    sc_segment *ga, *gb;
    assert_int_equal(sc_segment_open(dir, a, &ga), SC_OK);
    assert_int_equal(sc_segment_open(dir, b, &gb), SC_OK);
    assert_int_equal(sc_segment_n_docs(ga), n_docs);
    assert_int_equal(sc_segment_n_docs(gb), n_docs);
    sc_stored_reader ra, rb;
    sc_stored_reader_init(&ra, ga);
    sc_stored_reader_init(&rb, gb);
    for (uint32_t d = 0; d < n_docs; d++) {
        sc_slice ia, sa2, ib, sb2;
        assert_int_equal(sc_stored_get(&ra, d, &ia, &sa2), SC_OK);
        assert_int_equal(sc_stored_get(&rb, d, &ib, &sb2), SC_OK);
        assert_true(sc_slice_eq(ia, ib));
        assert_true(sc_slice_eq(sa2, sb2));
    }
    sc_stored_reader_fini(&ra);
    sc_stored_reader_fini(&rb);
    sc_segment_unref(ga);
    sc_segment_unref(gb);
}

/* Whole files equal, byte for byte. */
static void same_file(const char *dir, const char *a, const char *b)
{
    char pa[512], pb[512];
    snprintf(pa, sizeof(pa), "%s/%s.seg", dir, a);
    snprintf(pb, sizeof(pb), "%s/%s.seg", dir, b);
    uint8_t *fa, *fb;
    size_t la, lb;
    assert_int_equal(sc_file_read_all(pa, &fa, &la), SC_OK);
    assert_int_equal(sc_file_read_all(pb, &fb, &lb), SC_OK);
    assert_int_equal(la, lb);
    assert_memory_equal(fa, fb, la);
    free(fa);
    free(fb);
}

/* No file of dir has "spill" in its name. */
static void no_spill_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, "spill")) {
            fprintf(stderr, "left behind: %s\n", e->d_name);
            fail();
        }
    closedir(d);
}

/* n_docs docs in n_seg segments; pct of docs deleted (segment 1 none, segment 2 all when
 * n_seg > 3); "rare" only in segment 1's docs. */
/* The merged segment's vectors of `field`: those of the kept docs with one, in doc order. */
static void check_vectors(const char *dir, const char *name, const char *field, const m_doc *docs,
                          const uint32_t *kept, uint32_t n_kept)
{
    sc_segment *seg;
    assert_int_equal(sc_segment_open(dir, name, &seg), SC_OK);
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr(field));
    assert_non_null(f);
    sc_vec_field vf;
    assert_int_equal(sc_segment_vectors(seg, f, &vf), SC_OK);
    assert_true(vf.has_graph);
    uint32_t o = 0;
    for (uint32_t d = 0; d < n_kept; d++) {
        if (!docs[kept[d]].has_vec)
            continue;
        assert_true(o < vf.n);
        assert_int_equal(vf.docs[o], d);
        assert_memory_equal(vf.vecs + (size_t)o * M_DIMS, docs[kept[d]].vec,
                            sizeof(float) * M_DIMS);
        o++;
    }
    assert_int_equal(o, vf.n);
    assert_int_equal(f->doc_count, vf.n);
    sc_segment_unref(seg);
}

static void stream_case(uint32_t n_docs, size_t n_seg, int pct, bool vectors)
{
    m_doc *docs = calloc(n_docs, sizeof(m_doc));
    m_make(docs, n_docs);
    char dir[64];
    t_tmpdir(dir, sizeof(dir));
    sc_merge_input in[8];
    sc_bitset live[8];
    uint32_t lo = 0;
    sc_segment_builder *once;
    assert_int_equal(sc_segment_builder_new(&once), SC_OK);
    uint32_t kept = 0;
    uint32_t *kept_docs = calloc(n_docs + 1, sizeof(uint32_t));
    for (size_t s = 0; s < n_seg; s++) {
        uint32_t hi = s + 1 == n_seg ? n_docs : lo + t_below(2 * n_docs / (uint32_t)n_seg);
        if (hi > n_docs)
            hi = n_docs;
        char name[8];
        snprintf(name, sizeof(name), "s%zu", s);
        sc_segment_builder *b;
        assert_int_equal(sc_segment_builder_new(&b), SC_OK);
        for (uint32_t d = lo; d < hi; d++)
            assert_int_equal(m_add(b, &docs[d], s == 1, vectors), SC_OK);
        assert_int_equal(sc_segment_builder_write(b, dir, name, NULL), SC_OK);
        sc_segment_builder_free(b);
        assert_int_equal(sc_segment_open(dir, name, &in[s].seg), SC_OK);
        assert_int_equal(sc_bitset_init(&live[s], hi - lo), SC_OK);
        for (uint32_t d = lo; d < hi; d++) {
            bool keep = s == 1 || (s != 2 && (int)t_below(100) >= pct);
            if (n_seg <= 3 && s == 2)
                keep = (int)t_below(100) >= pct;
            if (keep) {
                sc_bitset_set(&live[s], d - lo);
                assert_int_equal(m_add(once, &docs[d], s == 1, vectors), SC_OK);
                kept_docs[kept++] = d;
            }
        }
        in[s].live = s == 1 ? NULL : &live[s];
        lo = hi;
    }
    assert_true(sc__merge_can_stream(in, n_seg));
    assert_int_equal(sc_segment_builder_write(once, dir, "once", NULL), SC_OK);
    sc_segment_builder_free(once);
    sc_segment_write_info info;
    sc_merge_options dflt = {0};
    assert_int_equal(sc_segment_merge_opts(in, n_seg, dir, "m", &dflt, &info), SC_OK);
    assert_int_equal(info.n_docs, kept);
    assert_int_equal(dflt.spilled_bytes, 0);
    if (vectors) {
        sc_segment_write_info rinfo;
        assert_int_equal(sc__segment_merge_rebuild(in, n_seg, dir, "r", &rinfo), SC_OK);
        compare_segments(dir, "m", "r", kept);
        if (kept) {
            check_vectors(dir, "m", "vec", docs, kept_docs, kept);
            check_vectors(dir, "m", "vq", docs, kept_docs, kept);
        }
    } else {
        compare_segments(dir, "m", "once", kept);
    }
    /* a 1-byte limit: every spillable buffer spills at its smallest share */
    sc_merge_options tiny = {.memory_bytes = 1};
    sc_segment_write_info tinfo;
    assert_int_equal(sc_segment_merge_opts(in, n_seg, dir, "t", &tiny, &tinfo), SC_OK);
    if (n_docs >= 2000)
        assert_true(tiny.spilled_bytes > 0);
    assert_int_equal(tinfo.size_bytes, info.size_bytes);
    assert_int_equal(tinfo.checksum, info.checksum);
    same_file(dir, "m", "t");
    no_spill_files(dir);
    for (size_t s = 0; s < n_seg; s++) {
        sc_segment_unref(in[s].seg);
        sc_bitset_fini(&live[s]);
    }
    for (uint32_t d = 0; d < n_docs; d++)
        free(docs[d].source);
    free(docs);
    free(kept_docs);
    assert_int_equal(sc_dir_remove_all(dir), SC_OK);
}

static void test_stream_equals_built(void **state)
{
    (void)state;
    t_seed("merge_stream_equals_built");
    stream_case(9000, 4, 15, false);
    stream_case(2000, 3, 0, false);
    stream_case(700, 5, 60, false);
    stream_case(30, 2, 50, false);
}

static void test_stream_vectors(void **state)
{
    (void)state;
    t_seed("merge_stream_vectors");
    stream_case(3000, 4, 15, true);
    stream_case(1500, 3, 0, true);
    stream_case(400, 5, 60, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_equals_built),
        cmocka_unit_test(test_stream_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
