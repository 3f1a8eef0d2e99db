/* The shard-level fetch phase (shard_search.h): _id, _source and doc-value fields of a list of
 * docs of one snapshot, as typed values copied into the caller's arena. */
#include <string.h>

#include "index/docvalues.h"
#include "index/stored.h"
#include "mapping/mapping.h"
#include "shard/shard_search.h"

static sc_status copy_slice(sc_arena *a, sc_slice in, sc_slice *out)
{
    uint8_t *p = sc_arena_alloc(a, in.len ? in.len : 1);
    if (!p)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (in.len)
        memcpy(p, in.ptr, in.len);
    *out = sc_slice_make(p, in.len);
    return SC_OK;
}

/* The segment holding shard-global doc `doc`, or NULL. */
static const sc_shard_segment_view *find_segment(const sc_shard_snapshot *snap, uint32_t doc)
{
    size_t lo = 0, hi = snap->n_segments;
    while (lo < hi) { /* the last segment whose doc_base <= doc */
        size_t mid = lo + (hi - lo) / 2;
        if (snap->segments[mid].doc_base <= doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const sc_shard_segment_view *v = &snap->segments[lo - 1];
    return doc - v->doc_base < v->n_docs ? v : NULL;
}

static sc_shard_value_type value_type(const sc_shard_snapshot *snap, const char *name, bool num)
{
    const sc_mapping_field *mf =
        snap->mapping ? sc_mapping_find(snap->mapping, sc_slice_cstr(name)) : NULL;
    if (!num)
        return mf && mf->type == SC_MAPPING_IP ? SC_SHARD_VALUE_IP : SC_SHARD_VALUE_TERM;
    if (!mf)
        return SC_SHARD_VALUE_LONG;
    switch (mf->type) {
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT: return SC_SHARD_VALUE_DOUBLE;
    case SC_MAPPING_DATE:
    case SC_MAPPING_DATE_NANOS: return SC_SHARD_VALUE_DATE;
    case SC_MAPPING_BOOLEAN: return SC_SHARD_VALUE_BOOLEAN;
    default: return SC_SHARD_VALUE_LONG;
    }
}

/* Reads one field's doc values of one doc into *fv; *any false when the doc has none. */
static sc_status read_field(const sc_shard_fetch_args *args, const sc_segment *seg, uint32_t doc,
                            uint32_t f, sc_arena *arena, sc_shard_field_values *fv, bool *any)
{
    *any = false;
    const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr(args->fields[f]));
    if (!fi)
        return SC_OK;
    memset(fv, 0, sizeof *fv);
    fv->field = f;
    if (fi->kind == SC_FIELD_NUMERIC) {
        sc_dv_numeric dv;
        uint32_t n;
        if (sc_dv_numeric_open(seg, fi, &dv) != SC_OK || (n = sc_dv_numeric_count(&dv, doc)) == 0)
            return SC_OK;
        int64_t *vals = sc_arena_alloc(arena, n * sizeof *vals);
        if (!vals)
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        fv->n_values = sc_dv_numeric_get(&dv, doc, vals, n);
        fv->nums = vals;
        fv->numeric = true;
    } else if (fi->kind == SC_FIELD_KEYWORD) {
        sc_dv_sorted_set dv;
        uint32_t n;
        if (sc_dv_sorted_set_open(seg, fi, &dv) != SC_OK ||
            (n = sc_dv_sorted_set_count(&dv, doc)) == 0)
            return SC_OK;
        uint64_t *ords = sc_arena_alloc(arena, n * sizeof *ords);
        sc_slice *terms = sc_arena_alloc(arena, n * sizeof *terms);
        if (!ords || !terms)
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        fv->n_values = sc_dv_sorted_set_ords(&dv, doc, ords, n);
        for (size_t i = 0; i < fv->n_values; i++)
            SC_TRY(copy_slice(arena, sc_dv_sorted_set_term(&dv, ords[i]), &terms[i]));
        fv->terms = terms;
    } else {
        return SC_OK;
    }
    fv->type = value_type(args->snapshot, args->fields[f], fv->numeric);
    *any = fv->n_values > 0;
    return SC_OK;
}

static sc_status read_fields(const sc_shard_fetch_args *args, const sc_segment *seg, uint32_t doc,
                             sc_arena *arena, sc_shard_fetched *out)
{
    out->fields = sc_arena_alloc(arena, args->n_fields * sizeof *out->fields);
    if (!out->fields)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t f = 0; f < args->n_fields; f++) {
        bool any;
        SC_TRY(read_field(args, seg, doc, (uint32_t)f, arena, &out->fields[out->n_fields], &any));
        out->n_fields += any;
    }
    return SC_OK;
}

/* A doc's _version, _seq_no and _primary_term from their doc values (written with every doc). */
static void read_versions(const sc_segment *seg, uint32_t doc, sc_shard_fetched *out)
{
    static const char *const names[3] = {"_version", "_seq_no", "_primary_term"};
    int64_t *dst[3] = {&out->version, &out->seq_no, &out->primary_term};
    for (int i = 0; i < 3; i++) {
        const sc_field_info *fi = sc_segment_field(seg, sc_slice_cstr(names[i]));
        sc_dv_numeric dv;
        if (!fi || fi->kind != SC_FIELD_NUMERIC || sc_dv_numeric_open(seg, fi, &dv) != SC_OK ||
            !sc_dv_numeric_first(&dv, doc, dst[i]))
            return;
    }
    out->has_versions = true;
}

/* The highlight snippets of one doc from its _source. */
static sc_status highlight_doc(const sc_hl_spec *hl, sc_hl_scratch *scratch, sc_slice src,
                               sc_arena *arena, sc_shard_fetched *out)
{
    size_t n = hl->n_fields ? hl->n_fields : 1;
    out->highlights = sc_arena_alloc(arena, n * sizeof *out->highlights);
    sc_slice *paths = sc_arena_alloc(arena, n * sizeof *paths);
    sc_slice **vals = sc_arena_alloc(arena, n * sizeof *vals);
    size_t *nv = sc_arena_alloc(arena, n * sizeof *nv);
    if (!out->highlights || !paths || !vals || !nv)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t f = 0; f < hl->n_fields; f++)
        paths[f] = hl->fields[f].source_path;
    SC_TRY(sc_mapping_source_values(src, paths, hl->n_fields, arena, vals, nv));
    for (size_t f = 0; f < hl->n_fields; f++) {
        const sc_hl_field *hf = &hl->fields[f];
        sc_slice *frags;
        size_t nf;
        SC_TRY(sc_highlight_field(hf->query, hf->analyzer, &hf->opts, vals[f], nv[f], scratch,
                                  arena, &frags, &nf));
        if (nf)
            out->highlights[out->n_highlights++] =
                (sc_shard_highlight){.field = (uint32_t)f, .frags = frags, .n_frags = nf};
    }
    return SC_OK;
}

/* Per-segment readers, reused while consecutive docs stay in one segment. */
typedef struct fetch_cursor {
    sc_stored_reader reader;
    const sc_segment *reader_seg;
    /* Without _source a hit's _id comes from the `_id` field's sorted-set doc values (an O(1)
     * lookup in the mapped file); segments written before _id had them use stored fields. */
    const sc_segment *id_seg;
    sc_dv_sorted_set id_dv;
    bool id_dv_ok;
    sc_hl_scratch *hl; /* break iterators shared by the docs' highlighting */
} fetch_cursor;

static sc_status fetch_one(const sc_shard_fetch_args *args, fetch_cursor *c, uint32_t gdoc,
                           sc_arena *arena, sc_shard_fetched *out)
{
    memset(out, 0, sizeof *out);
    const sc_shard_segment_view *v = find_segment(args->snapshot, gdoc);
    if (!v)
        return SC_OK;
    uint32_t doc = gdoc - (uint32_t)v->doc_base;
    sc_slice id = {0}, src = {0};
    bool have_id = false;
    /* highlighting reads _source even when the hit does not return it */
    bool hl = args->highlight && args->highlight->n_fields;
    if (!args->source && !hl) {
        if (c->id_seg != v->seg) {
            const sc_field_info *fi = sc_segment_field(v->seg, sc_slice_cstr("_id"));
            c->id_dv_ok = fi && fi->kind == SC_FIELD_KEYWORD &&
                          sc_dv_sorted_set_open(v->seg, fi, &c->id_dv) == SC_OK;
            c->id_seg = v->seg;
        }
        uint64_t ord;
        if (c->id_dv_ok && sc_dv_sorted_set_ords(&c->id_dv, doc, &ord, 1) == 1) {
            id = sc_dv_sorted_set_term(&c->id_dv, ord);
            have_id = true;
        }
    }
    if (!have_id) {
        if (c->reader_seg != v->seg) {
            if (c->reader_seg)
                sc_stored_reader_fini(&c->reader);
            sc_stored_reader_init(&c->reader, v->seg);
            c->reader_seg = v->seg;
        }
        if (sc_stored_get(&c->reader, doc, &id, &src) != SC_OK)
            return SC_OK; /* unreadable: left not found */
    }
    SC_TRY(copy_slice(arena, id, &out->id));
    /* fragments may borrow the text: highlight from an arena copy, not the reader's buffer */
    sc_slice kept = {0};
    if (args->source || (hl && src.len))
        SC_TRY(copy_slice(arena, src, &kept));
    if (args->source)
        out->source = kept;
    out->found = true;
    if (args->versions)
        read_versions(v->seg, doc, out);
    if (hl && src.len)
        SC_TRY(highlight_doc(args->highlight, c->hl, kept, arena, out));
    return args->n_fields ? read_fields(args, v->seg, doc, arena, out) : SC_OK;
}

/* Marks, per doc, the named queries it matches: each named query runs once over the shard,
 * restricted to the fetched docs by their _id (sc_search_execute, at most n_docs hits). */
static sc_status named_matches(const sc_shard_fetch_args *args, sc_arena *arena,
                               sc_shard_fetched *out)
{
    size_t n = args->n_docs, n_ids = 0;
    sc_slice *ids = sc_arena_alloc(arena, (n ? n : 1) * sizeof *ids);
    sc_searcher_segment *segs =
        sc_arena_alloc(arena, (args->snapshot->n_segments + 1) * sizeof *segs);
    if (!ids || !segs)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (out[i].found)
            ids[n_ids++] = out[i].id;
    if (n_ids == 0)
        return SC_OK;
    sc_searcher s;
    sc_shard_searcher_init(args->snapshot, segs, &s);
    for (size_t k = 0; k < args->n_named; k++) {
        sc_query *b = sc_query_bool(arena), *only = sc_query_ids(arena, ids, n_ids);
        if (!b || !only || sc_query_bool_add(arena, b, SC_OCCUR_FILTER, only) != SC_OK ||
            sc_query_bool_add(arena, b, SC_OCCUR_FILTER, (sc_query *)args->named[k]) != SC_OK)
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        sc_search_options o;
        sc_search_options_init(&o);
        o.size = n_ids;
        o.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
        sc_search_result r;
        if (sc_search_execute(&s, b, &o, arena, &r) != SC_OK)
            continue; /* the query phase ran it already: an error here only drops the name */
        for (size_t h = 0; h < r.n_hits; h++)
            for (size_t i = 0; i < n; i++) {
                if (!out[i].found || args->docs[i] != r.hits[h].global_doc)
                    continue;
                if (!out[i].matched) {
                    out[i].matched = sc_arena_alloc(arena, args->n_named * sizeof(uint32_t));
                    if (!out[i].matched)
                        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
                }
                ((uint32_t *)out[i].matched)[out[i].n_matched++] = (uint32_t)k;
            }
    }
    return SC_OK;
}

/* Each found doc's explanation under args->explain (search/explain.h). */
static sc_status explain_docs(const sc_shard_fetch_args *args, sc_arena *arena,
                              sc_shard_fetched *out)
{
    sc_searcher_segment *segs =
        sc_arena_alloc(arena, (args->snapshot->n_segments + 1) * sizeof *segs);
    if (!segs)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    sc_searcher s;
    sc_shard_searcher_init(args->snapshot, segs, &s);
    sc_search_options o;
    sc_search_options_init(&o);
    o.dfs = args->dfs;
    for (size_t i = 0; i < args->n_docs; i++) {
        if (!out[i].found)
            continue;
        sc_search_result r;
        sc_explanation *x;
        sc_status st = sc_search_explain(&s, args->explain, &o, args->docs[i], arena, &r, &x);
        if (st == SC_ENOMEM || st == SC_ELIMIT)
            return st;
        out[i].explanation = st == SC_OK ? x : NULL; /* the query phase ran it already */
    }
    return SC_OK;
}

/* The fetch of a page of hits is mostly cache misses: per hit and keyword doc-value read (the
 * `_id` without _source, and each keyword docvalue_field) the doc's ordinal, the term's offsets
 * and the term's bytes, each a dependent load at a random place of the segment. Done hit by hit
 * they wait one after another; this walks a run of hits three times ahead of fetch_one, starting
 * the loads of every hit's ordinals, then of their terms' offsets, then of the terms, so that the
 * misses of different hits overlap. Cache hints only: fetch_one reads everything again. */
#define FETCH_AHEAD_DOCS 16
#define FETCH_AHEAD_STREAMS 4

static void fetch_ahead(const sc_shard_fetch_args *args, const uint32_t *gdocs, size_t m)
{
    bool hl = args->highlight && args->highlight->n_fields;
    const char *names[FETCH_AHEAD_STREAMS];
    size_t ns = 0;
    if (!args->source && !hl)
        names[ns++] = "_id";
    for (size_t f = 0; f < args->n_fields && ns < FETCH_AHEAD_STREAMS; f++)
        names[ns++] = args->fields[f];
    if (ns == 0 || m < 2)
        return;
    sc_dv_sorted_set dv[FETCH_AHEAD_DOCS][FETCH_AHEAD_STREAMS];
    bool ok[FETCH_AHEAD_DOCS][FETCH_AHEAD_STREAMS];
    uint32_t doc[FETCH_AHEAD_DOCS];
    uint64_t ord[FETCH_AHEAD_DOCS][FETCH_AHEAD_STREAMS];
    const sc_segment *prev = NULL;
    for (size_t j = 0; j < m; j++) {
        const sc_shard_segment_view *v = find_segment(args->snapshot, gdocs[j]);
        for (size_t s = 0; s < ns; s++)
            ok[j][s] = false;
        if (!v) {
            prev = NULL;
            continue;
        }
        doc[j] = gdocs[j] - (uint32_t)v->doc_base;
        for (size_t s = 0; s < ns; s++) {
            if (j > 0 && prev == v->seg) {
                dv[j][s] = dv[j - 1][s];
                ok[j][s] = ok[j - 1][s];
            } else {
                const sc_field_info *fi = sc_segment_field(v->seg, sc_slice_cstr(names[s]));
                ok[j][s] = fi && fi->kind == SC_FIELD_KEYWORD &&
                           sc_dv_sorted_set_open(v->seg, fi, &dv[j][s]) == SC_OK;
            }
            if (ok[j][s])
                sc_dv_sorted_set_prefetch_doc(&dv[j][s], doc[j]);
        }
        prev = v->seg;
    }
    for (size_t j = 0; j < m; j++)
        for (size_t s = 0; s < ns; s++)
            if (ok[j][s] && sc_dv_sorted_set_ords(&dv[j][s], doc[j], &ord[j][s], 1) == 1)
                sc_dv_sorted_set_prefetch_term(&dv[j][s], ord[j][s]);
            else
                ok[j][s] = false;
    for (size_t j = 0; j < m; j++)
        for (size_t s = 0; s < ns; s++)
            if (ok[j][s]) {
                sc_slice t = sc_dv_sorted_set_term(&dv[j][s], ord[j][s]);
                if (t.len)
                    __builtin_prefetch(t.ptr);
            }
}

sc_status sc_shard_fetch_run(const sc_shard_fetch_args *args, sc_arena *arena,
                             sc_shard_fetched *out)
{
    fetch_cursor c;
    memset(&c, 0, sizeof c);
    sc_status st = args->highlight ? sc_hl_scratch_new(&c.hl) : SC_OK;
    for (size_t i = 0; i < args->n_docs && st == SC_OK; i++) {
        if (i % FETCH_AHEAD_DOCS == 0) {
            size_t m = args->n_docs - i;
            fetch_ahead(args, args->docs + i, m < FETCH_AHEAD_DOCS ? m : FETCH_AHEAD_DOCS);
        }
        st = fetch_one(args, &c, args->docs[i], arena, &out[i]);
    }
    if (c.reader_seg)
        sc_stored_reader_fini(&c.reader);
    sc_hl_scratch_free(c.hl);
    if (st == SC_OK && args->n_named)
        st = named_matches(args, arena, out);
    if (st == SC_OK && args->explain)
        st = explain_docs(args, arena, out);
    if (st == SC_OK && args->n_inner)
        st = sc__shard_inner_hits(args, arena, out);
    return st;
}
