/* auto_date_histogram's parameters (agg_internal.h): `buckets` (the target, 10; a number or a
 * numeric string, as Rally sends it), `minimum_interval` (second .. year), `time_zone`,
 * `format`, `missing`; and ip_range's: `ranges` of `from` / `to` addresses or a CIDR `mask`,
 * `key`, `keyed`. */
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"

bool sc__agg_parse_auto(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",  "buckets", "minimum_interval", "time_zone",
                                       "format", "missing", "script",           NULL};
    const sc_mapping_field *mf;
    if (!sc__agg_known_keys(c, type, p, keys) || !sc__agg_field_common(c, type, p, s, &mf))
        return false;
    if (s->vtype != SC_AGG_V_UNMAPPED)
        s->vtype = SC_AGG_V_DATE;
    uint64_t buckets = 10;
    if (!sc__agg_get_uint(c, p, "buckets", &buckets, type))
        return false;
    if (buckets == 0 || buckets > 100000)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[buckets] must be between 1 and 100000 in [%s]", s->name);
    s->size = (uint32_t)buckets;
    s->min_doc_count = 0;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    const json_t *mi = json_object_get(p, "minimum_interval");
    if (mi) {
        static const struct {
            const char *n;
            uint32_t rung;
        } mins[] = {{"second", 0}, {"minute", 4}, {"hour", 8},
                    {"day", 11},   {"month", 13}, {"year", 15}};
        const char *t = json_string_value(mi);
        bool found = false;
        for (size_t i = 0; t && i < 6 && !found; i++)
            if (!strcmp(mins[i].n, t)) {
                s->min_rung = mins[i].rung;
                found = true;
            }
        if (!found)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "minimum_interval must be one of [second, minute, hour, day, "
                                "month, year], got [%s]",
                                t ? t : "?");
    }
    const json_t *tz = json_object_get(p, "time_zone");
    if (tz) {
        /* the rounding parser reads time_zone next to an interval */
        json_t *copy = json_pack("{s:s,s:O}", "fixed_interval", "1s", "time_zone", tz);
        bool ok = copy && sc__agg_date_rounding(c, copy, s);
        json_decref(copy);
        if (!ok)
            return copy ? false : sc__agg_oom_err(c);
    }
    return true;
}

/* One ip_range bound: the address (16 bytes) or, with `next`, the one after it (a mask's end;
 * an empty slice when the mask ends at the last address). */
static bool ip_bound(sc__agg_pctx *c, const sc_mapping_field *mf, const json_t *v, sc_slice *out)
{
    if (!json_is_string(v))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "ip_range bounds must be strings");
    if (!mf) {
        *out = sc_slice_make(json_string_value(v), json_string_length(v));
        return true;
    }
    sc_mapping_value mv;
    if (!sc__agg_encode_value(c, mf, v, "ip_range", &mv))
        return false;
    *out = mv.term;
    return true;
}

bool sc__agg_parse_ip_range(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field", "ranges", "keyed", "missing", "script", NULL};
    const sc_mapping_field *mf;
    if (!sc__agg_known_keys(c, type, p, keys) || !sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_bool(c, p, "keyed", &s->keyed, type))
        return false;
    if (s->vtype != SC_AGG_V_IP && s->vtype != SC_AGG_V_UNMAPPED)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Field [%s] of type [%s] is not supported for aggregation [ip_range]",
                            s->field, mf ? sc_mapping_type_name(mf->type) : "unmapped");
    s->vtype = SC_AGG_V_IP;
    const json_t *rs = json_object_get(p, "ranges");
    size_t n = json_array_size(rs);
    if (!json_is_array(rs) || !n)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "No [ranges] specified for the [%s] aggregation", s->name);
    s->ranges = sc_arena_calloc(c->req->arena, n, sizeof *s->ranges);
    if (!s->ranges)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(rs, i);
        sc_agg_range_spec *g = &s->ranges[i];
        const json_t *from = json_object_get(r, "from"), *to = json_object_get(r, "to");
        const json_t *mask = json_object_get(r, "mask"), *key = json_object_get(r, "key");
        if (!json_is_object(r))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[ranges] entries must be objects");
        if (json_is_string(key))
            g->key =
                sc_arena_strndup(c->req->arena, json_string_value(key), json_string_length(key));
        if (mask) {
            uint8_t *b = sc_arena_alloc(c->req->arena, 32);
            if (!b)
                return sc__agg_oom_err(c);
            if (!json_is_string(mask) ||
                sc_mapping_ip_cidr(sc_slice_make(json_string_value(mask), json_string_length(mask)),
                                   b, b + 16) != SC_OK)
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "invalid CIDR mask in [%s]", s->name);
            g->mask =
                sc_arena_strndup(c->req->arena, json_string_value(mask), json_string_length(mask));
            g->from_ip = sc_slice_make(b, 16);
            /* [first, last + 1): the address after the block, none past the end */
            int k = 15;
            while (k >= 0 && b[16 + k] == 0xff)
                b[16 + k--] = 0;
            if (k >= 0) {
                b[16 + k]++;
                g->to_ip = sc_slice_make(b + 16, 16);
            }
            continue;
        }
        if (from && !json_is_null(from) && !ip_bound(c, mf, from, &g->from_ip))
            return false;
        if (to && !json_is_null(to) && !ip_bound(c, mf, to, &g->to_ip))
            return false;
    }
    s->n_ranges = n;
    return true;
}

bool sc__agg_parse_weighted_avg(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"value", "weight", "format", "value_type", NULL};
    const json_t *v = json_object_get(p, "value"), *w = json_object_get(p, "weight");
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    if (!json_is_object(v) || !json_is_object(w))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[value] and [weight] of weighted_avg [%s] must be objects", s->name);
    const sc_mapping_field *mf;
    s->kind = SC_AGG_AVG; /* the field checks of a numeric metric */
    bool ok = sc__agg_field_common(c, "weighted_avg", v, s, &mf);
    s->kind = SC_AGG_WEIGHTED_AVG;
    if (!ok)
        return false;
    sc_agg_spec ws = {.kind = SC_AGG_AVG, .name = s->name};
    if (!sc__agg_field_common(c, "weighted_avg", w, &ws, &mf))
        return false;
    s->weight_field = ws.field;
    s->weight_vtype = ws.vtype;
    s->has_weight_missing = ws.has_missing;
    s->weight_missing = ws.missing_double;
    return true;
}
