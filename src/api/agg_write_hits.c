/* The response body of top_hits ({"hits": {total, max_score, hits: [{_index, _id, _score,
 * _source, sort}]}}, `from` applied here after the final reduce) and top_metrics ({"top":
 * [{sort, metrics}]}), as Elasticsearch writes them. */
#include <math.h>

#include "api/agg_internal.h"
#include "api/search_internal.h"

static const sc_sort_spec score_sort = {.kind = SC_SORT_BY_SCORE, .desc = true};

static void write_sort_value(sc_jsonw *w, const sc_sort_spec *f, const sc_sort_key *k)
{
    if (k->missing) {
        sc_jsonw_null(w);
        return;
    }
    switch (f->kind) {
    case SC_SORT_BY_SCORE: sc_jsonw_float(w, (float)k->d); return;
    case SC_SORT_BY_DOC: sc_jsonw_int(w, k->i); return;
    case SC_SORT_BY_KEYWORD: sc_jsonw_strn(w, k->s); return;
    case SC_SORT_BY_NUMERIC:
        if (f->mode == SC_SORT_MODE_AVG || f->mode == SC_SORT_MODE_SUM)
            sc_jsonw_double(w, k->d);
        else if (f->is_double)
            sc_jsonw_double(w, sc_agg_sortable_to_double(k->i));
        else
            sc_jsonw_int(w, k->i);
        return;
    }
}

static void write_sort(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_hit *h)
{
    const sc_sort_spec *specs = s->n_hit_sort ? s->hit_sort : &score_sort;
    sc_jsonw_key(w, "sort");
    sc_jsonw_arr_begin(w);
    for (uint32_t j = 0; j < h->n_values; j++)
        write_sort_value(w, &specs[j], &h->values[j]);
    sc_jsonw_arr_end(w);
}

static void write_top_hits(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    const sc__agg_render *rd = s->user;
    bool scored = s->n_hit_sort == 0;
    float max_score = -INFINITY;
    for (size_t i = s->from; scored && i < r->n_hits; i++)
        if (r->hits[i].score > max_score)
            max_score = r->hits[i].score;
    sc_jsonw_key(w, "hits");
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "total");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "value", (int64_t)r->count);
    sc_jsonw_kv_str(w, "relation", "eq");
    sc_jsonw_obj_end(w);
    sc_jsonw_key(w, "max_score");
    if (scored && isfinite(max_score))
        sc_jsonw_float(w, max_score);
    else
        sc_jsonw_null(w);
    sc_jsonw_key(w, "hits");
    sc_jsonw_arr_begin(w);
    for (size_t i = s->from; i < r->n_hits && i < (size_t)s->from + s->size; i++) {
        const sc_agg_hit *h = &r->hits[i];
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "_index");
        sc_jsonw_strn(w, h->index);
        sc_jsonw_key(w, "_id");
        sc_jsonw_strn(w, h->id);
        sc_jsonw_key(w, "_score");
        if (isnan(h->score))
            sc_jsonw_null(w);
        else
            sc_jsonw_float(w, h->score);
        if (s->hit_source && h->source.len) {
            sc_jsonw_key(w, "_source");
            sc__search_write_source(w, h->source, rd ? rd->source_filter : NULL);
        }
        if (s->n_hit_sort)
            write_sort(w, s, h);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
    sc_jsonw_obj_end(w);
}

static void write_top_metrics(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    sc_jsonw_key(w, "top");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_hits && i < s->size; i++) {
        const sc_agg_hit *h = &r->hits[i];
        sc_jsonw_obj_begin(w);
        write_sort(w, s, h);
        sc_jsonw_key(w, "metrics");
        sc_jsonw_obj_begin(w);
        for (uint32_t j = 0; j < h->n_metrics && j < s->n_metrics; j++) {
            const sc_agg_spec *m = s->metrics[j];
            double v = h->metrics[j];
            sc_jsonw_key(w, m->field);
            if (isnan(v))
                sc_jsonw_null(w);
            else if (m->vtype != SC_AGG_V_DOUBLE && !(m->scaling_factor > 0) && fabs(v) < 9e15)
                sc_jsonw_int(w, (int64_t)v);
            else
                sc_jsonw_double(w, v);
        }
        sc_jsonw_obj_end(w);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

void sc__agg_write_hits(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    if (s->kind == SC_AGG_TOP_HITS)
        write_top_hits(w, s, r);
    else
        write_top_metrics(w, s, r);
}
