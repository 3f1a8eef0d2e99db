/* The can_match pre-filter over a shard's segments (can_match.h): a walk of the query tree's
 * required clauses down to numeric ranges, each checked against the BKD tree's min/max per
 * segment. */
#include "search/can_match.h"

#include "index/bkd.h"
#include "index/segment.h"

/* Whether any [lo[i], hi[i]] may hold a value of the field in some segment. */
static bool range_can_match(const sc_searcher *s, const sc_query *q)
{
    for (size_t g = 0; g < s->n_segs; g++) {
        const sc_segment *seg = s->segs[g].seg;
        const sc_field_info *f = sc_segment_field(seg, q->u.range.field);
        if (!f)
            continue; /* no value in this segment */
        if (f->kind != SC_FIELD_NUMERIC || !(f->flags & SC_FIELD_POINTS))
            return true; /* doc values only (or an error the query will report): not known */
        sc_bkd t;
        /* a segment may hold the field's values without points (a fresh in-memory segment
         * reads them from doc values): not known */
        if (sc_segment_points(seg, f, &t) != SC_OK)
            return true;
        if (sc_bkd_n_points(&t) == 0)
            continue;
        for (size_t i = 0; i < q->u.range.n; i++)
            if (q->u.range.lo[i] <= q->u.range.hi[i] && q->u.range.lo[i] <= sc_bkd_max(&t) &&
                q->u.range.hi[i] >= sc_bkd_min(&t))
                return true;
    }
    return false;
}

static bool bool_can_match(const sc_searcher *s, const sc_query *q)
{
    size_t n_should = 0, n_required = 0, should_ok = 0;
    for (size_t i = 0; i < q->u.bool_.n_clauses; i++) {
        const sc_query_clause *c = &q->u.bool_.clauses[i];
        if (c->occur == SC_OCCUR_MUST || c->occur == SC_OCCUR_FILTER) {
            n_required++;
            if (!sc_query_can_match(s, c->query))
                return false;
        } else if (c->occur == SC_OCCUR_SHOULD) {
            n_should++;
            should_ok += sc_query_can_match(s, c->query);
        }
    }
    int64_t msm = q->u.bool_.minimum_should_match;
    if (msm < 0)
        msm = n_required ? 0 : n_should ? 1 : 0;
    return (int64_t)should_ok >= msm;
}

sc_status sc_searcher_numeric_bounds(const sc_searcher *s, sc_slice field, int64_t *min,
                                     int64_t *max)
{
    bool any = false;
    for (size_t g = 0; g < s->n_segs; g++) {
        const sc_segment *seg = s->segs[g].seg;
        const sc_field_info *f = sc_segment_field(seg, field);
        if (!f)
            continue;
        if (f->kind != SC_FIELD_NUMERIC || !(f->flags & SC_FIELD_POINTS))
            return SC_EUNSUPPORTED;
        sc_bkd t;
        if (sc_segment_points(seg, f, &t) != SC_OK)
            return SC_EUNSUPPORTED; /* values without points (see above): not known */
        if (sc_bkd_n_points(&t) == 0)
            continue;
        if (!any || sc_bkd_min(&t) < *min)
            *min = sc_bkd_min(&t);
        if (!any || sc_bkd_max(&t) > *max)
            *max = sc_bkd_max(&t);
        any = true;
    }
    return any ? SC_OK : SC_ENOTFOUND;
}

bool sc_query_can_match(const sc_searcher *s, const sc_query *q)
{
    if (!q)
        return true;
    switch (q->kind) {
    case SC_QUERY_MATCH_NONE: return false;
    case SC_QUERY_RANGE: return range_can_match(s, q);
    case SC_QUERY_BOOL: return bool_can_match(s, q);
    case SC_QUERY_CONSTANT_SCORE: return sc_query_can_match(s, q->u.constant_score.inner);
    case SC_QUERY_NESTED: return sc_query_can_match(s, q->u.nested.inner);
    default: return true;
    }
}
