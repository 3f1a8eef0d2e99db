/* auto_date_histogram's parameters (agg_internal.h): `buckets` (the target, 10; a number or a
 * numeric string, as Rally sends it), `minimum_interval` (second .. year), `time_zone`,
 * `format`, `missing`. */
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"

bool sc__agg_parse_auto(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field", "buckets", "minimum_interval", "time_zone",
                                       "format", "missing", "script", NULL};
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
