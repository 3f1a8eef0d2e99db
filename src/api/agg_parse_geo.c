/* geo_bounds and geo_centroid parameters (agg_internal.h): `field` (a geo_point field; an
 * unmapped one gives the empty result, another type a 400 as Elasticsearch), geo_bounds'
 * `wrap_longitude` (true). `missing` and scripts are refused. */
#include <string.h>

#include "api/agg_internal.h"

bool sc__agg_parse_geo(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const bounds_keys[] = {"field", "wrap_longitude", NULL};
    static const char *const centroid_keys[] = {"field", NULL};
    bool bounds = s->kind == SC_AGG_GEO_BOUNDS;
    if (!sc__agg_known_keys(c, type, p, bounds ? bounds_keys : centroid_keys))
        return false;
    const json_t *f = json_object_get(p, "field");
    if (!json_is_string(f))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Required one of fields [field, script], but none were specified.");
    s->field = sc_arena_strndup(c->req->arena, json_string_value(f), json_string_length(f));
    if (!s->field)
        return sc__agg_oom_err(c);
    s->wrap_longitude = true;
    if (bounds && !sc__agg_get_bool(c, p, "wrap_longitude", &s->wrap_longitude, type))
        return false;
    const sc_mapping_field *mf = c->m ? sc_mapping_find(c->m, sc_slice_cstr(s->field)) : NULL;
    if (!mf) {
        s->vtype = SC_AGG_V_UNMAPPED;
        return true;
    }
    if (mf->type != SC_MAPPING_GEO_POINT) {
        c->err->shard_level = true;
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Field [%s] of type [%s] is not supported for aggregation [%s]",
                            s->field, sc_mapping_type_name(mf->type), type);
    }
    s->vtype = SC_AGG_V_GEO_POINT;
    return true;
}
