/* The terms aggregation's parameters (agg_internal.h): size, shard_size, min_doc_count,
 * order (by count, key or a metric sub-aggregation), show_term_doc_count_error and
 * include / exclude (regular expressions, value lists, hash partitions). */
#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"
#include "search/automaton.h"

/* order: {"_count"|"_key"|"_term"|"<sub>[.stat]": "asc"|"desc"} (or an array: its first). */
bool sc__agg_terms_order(sc__agg_pctx *c, const json_t *o, sc_agg_spec *s)
{
    if (json_is_array(o))
        o = json_array_get(o, 0);
    if (!json_is_object(o) || json_object_size(o) != 1)
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "[terms] failed to parse field "
                            "[order]");
    void *it = json_object_iter((json_t *)o);
    const char *key = json_object_iter_key(it);
    const json_t *dir = json_object_iter_value(it);
    const char *d = json_string_value(dir);
    if (!d || (strcmp(d, "asc") && strcmp(d, "desc")))
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "Unknown terms order direction [%s]", d ? d : "?");
    s->order.desc = !strcmp(d, "desc");
    if (!strcmp(key, "_count")) {
        s->order.kind = SC_AGG_ORDER_COUNT;
        return true;
    }
    if (!strcmp(key, "_key") || !strcmp(key, "_term")) {
        s->order.kind = SC_AGG_ORDER_KEY;
        return true;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", key);
    char *dot = strchr(name, '.');
    char *bracket = strchr(name, '[');
    if (bracket)
        return sc__agg_fail(c, 400, "aggregation_execution_exception",
                            "Invalid aggregation order path [%s]", key);
    const char *stat = NULL;
    if (dot) {
        *dot = '\0';
        stat = dot + 1;
    }
    for (size_t i = 0; i < s->n_subs; i++) {
        const sc_agg_spec *sub = s->subs[i];
        if (strcmp(sub->name, name))
            continue;
        bool multi = sub->kind == SC_AGG_STATS || sub->kind == SC_AGG_EXTENDED_STATS;
        bool single = (sub->kind >= SC_AGG_MIN && sub->kind <= SC_AGG_VALUE_COUNT) ||
                      sub->kind == SC_AGG_WEIGHTED_AVG || sub->kind == SC_AGG_CARDINALITY ||
                      sub->kind == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION;
        s->order.kind = SC_AGG_ORDER_METRIC;
        s->order.sub = (uint32_t)i;
        s->order.stat = SC_AGG_STAT_VALUE;
        if (single && !stat)
            return true;
        if (multi && stat) {
            static const struct {
                const char *n;
                sc_agg_stat s;
            } stats[] = {{"count", SC_AGG_STAT_COUNT},
                         {"min", SC_AGG_STAT_MIN},
                         {"max", SC_AGG_STAT_MAX},
                         {"avg", SC_AGG_STAT_AVG},
                         {"sum", SC_AGG_STAT_SUM}};
            for (size_t k = 0; k < 5; k++)
                if (!strcmp(stats[k].n, stat)) {
                    s->order.stat = stats[k].s;
                    return true;
                }
        }
        break;
    }
    return sc__agg_fail(c, 400, "aggregation_execution_exception",
                        "Invalid aggregation order path [%s]. The provided aggregation [%s] "
                        "either does not exist, or is a pipeline aggregation and cannot be used "
                        "to sort the buckets.",
                        key, name);
}

/* One include/exclude value list: terms as bytes (keyword/ip) or encoded numbers. */
static bool value_list(sc__agg_pctx *c, const json_t *arr, const sc_mapping_field *mf, bool bytes,
                       sc_slice **terms, int64_t **nums, size_t *n)
{
    size_t k = json_array_size(arr);
    *n = k;
    if (bytes)
        *terms = sc_arena_calloc(c->req->arena, k + 1, sizeof **terms);
    else
        *nums = sc_arena_calloc(c->req->arena, k + 1, sizeof **nums);
    if (bytes ? !*terms : !*nums)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < k; i++) {
        const json_t *v = json_array_get(arr, i);
        sc_mapping_value mv;
        if (mf) {
            if (!sc__agg_encode_value(c, mf, v, "include", &mv))
                return false;
        } else if (json_is_string(v)) {
            mv.kind = SC_FIELD_KEYWORD;
            mv.term = sc_slice_make(json_string_value(v), json_string_length(v));
        } else {
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "include/exclude values of an unmapped field must be strings");
        }
        if (bytes)
            (*terms)[i] = mv.term;
        else
            (*nums)[i] = mv.num;
    }
    return true;
}

/* include (regex, values, or {partition, num_partitions}) and exclude (regex or values). */
static bool include_exclude(sc__agg_pctx *c, const json_t *p, sc_agg_spec *s,
                            const sc_mapping_field *mf)
{
    const json_t *inc = json_object_get(p, "include"), *exc = json_object_get(p, "exclude");
    if (!inc && !exc)
        return true;
    sc_agg_term_filter *f = sc_arena_calloc(c->req->arena, 1, sizeof *f);
    if (!f)
        return sc__agg_oom_err(c);
    bool bytes = !sc_agg_vtype_numeric(s->vtype);
    const json_t *pair[2] = {inc, exc};
    for (int i = 0; i < 2; i++) {
        const json_t *v = pair[i];
        if (!v)
            continue;
        if (json_is_string(v)) {
            if (!bytes)
                return sc__agg_fail(c, 400, "aggregation_execution_exception",
                                    "Aggregation [%s] cannot support regular expression style "
                                    "include/exclude settings as they can only be applied to "
                                    "string fields. Use an array of values for include/exclude "
                                    "clauses",
                                    s->name);
            sc_dfa *d = sc_arena_calloc(c->req->arena, 1, sizeof *d);
            sc_automaton_error aerr;
            if (!d)
                return sc__agg_oom_err(c);
            sc_status st =
                sc_automaton_regexp(sc_slice_make(json_string_value(v), json_string_length(v)),
                                    SC_REGEXP_ALL, 10000, c->req->arena, d, &aerr);
            if (st != SC_OK)
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "invalid regular expression [%s] in [%s]: %s",
                                    json_string_value(v), s->name, aerr.msg);
            if (i == 0)
                f->include_re = d;
            else
                f->exclude_re = d;
        } else if (json_is_array(v)) {
            bool ok = i == 0 ? value_list(c, v, mf, bytes, (sc_slice **)&f->include,
                                          (int64_t **)&f->include_num,
                                          bytes ? &f->n_include : &f->n_include_num)
                             : value_list(c, v, mf, bytes, (sc_slice **)&f->exclude,
                                          (int64_t **)&f->exclude_num,
                                          bytes ? &f->n_exclude : &f->n_exclude_num);
            if (!ok)
                return false;
        } else if (i == 0 && json_is_object(v)) {
            const json_t *np = json_object_get(v, "num_partitions");
            const json_t *pt = json_object_get(v, "partition");
            if (!json_is_integer(np) || !json_is_integer(pt) || json_integer_value(np) < 1 ||
                json_integer_value(pt) < 0 || json_integer_value(pt) >= json_integer_value(np) ||
                json_integer_value(np) > INT32_MAX)
                return sc__agg_fail(c, 400, "x_content_parse_exception",
                                    "[include] partition needs integer [partition] < "
                                    "[num_partitions]");
            f->num_partitions = (uint32_t)json_integer_value(np);
            f->partition = (uint32_t)json_integer_value(pt);
        } else {
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[%s] must be a regular expression or an array of values",
                                i == 0 ? "include" : "exclude");
        }
    }
    if (f->num_partitions && exc)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Cannot specify any excludes when using a partition-based include");
    s->term_filter = f;
    return true;
}

bool sc__agg_parse_terms(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",
                                       "size",
                                       "shard_size",
                                       "min_doc_count",
                                       "shard_min_doc_count",
                                       "order",
                                       "missing",
                                       "format",
                                       "execution_hint",
                                       "collect_mode",
                                       "show_term_doc_count_error",
                                       "value_type",
                                       "script",
                                       "include",
                                       "exclude",
                                       NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    if (!sc__agg_field_common(c, type, p, s, &mf) || !include_exclude(c, p, s, mf))
        return false;
    uint64_t size = 10, shard_size = 0, mdc = 1;
    if (!sc__agg_get_uint(c, p, "size", &size, type) ||
        !sc__agg_get_uint(c, p, "shard_size", &shard_size, type) ||
        !sc__agg_get_uint(c, p, "min_doc_count", &mdc, type))
        return false;
    if (size == 0 || size > INT32_MAX)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[size] must be greater than 0. Found [%llu] in [%s]",
                            (unsigned long long)size, s->name);
    if (shard_size > INT32_MAX)
        shard_size = INT32_MAX;
    s->size = (uint32_t)size;
    s->shard_size = (uint32_t)shard_size;
    s->min_doc_count = mdc;
    if (!sc__agg_get_bool(c, p, "show_term_doc_count_error", &s->show_term_doc_count_error, type))
        return false;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_COUNT, .desc = true};
    const json_t *o = json_object_get(p, "order");
    return !o || sc__agg_terms_order(c, o, s);
}

bool sc__agg_parse_significant(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",
                                       "size",
                                       "shard_size",
                                       "min_doc_count",
                                       "shard_min_doc_count",
                                       "jlh",
                                       "include",
                                       "exclude",
                                       "execution_hint",
                                       "format",
                                       "mutual_information",
                                       "chi_square",
                                       "gnd",
                                       "percentage",
                                       "script_heuristic",
                                       "background_filter",
                                       NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    static const char *const later[] = {
        "mutual_information", "chi_square",        "gnd", "percentage",
        "script_heuristic",   "background_filter", NULL};
    for (const char *const *l = later; *l; l++)
        if (json_object_get(p, *l))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[%s] of significant_terms [%s] is not supported yet (jlh is)", *l,
                                s->name);
    const sc_mapping_field *mf;
    if (!sc__agg_field_common(c, type, p, s, &mf) || !include_exclude(c, p, s, mf))
        return false;
    if (s->vtype != SC_AGG_V_KEYWORD && s->vtype != SC_AGG_V_UNMAPPED)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "significant_terms [%s] needs a keyword field (numeric fields are "
                            "not supported yet)",
                            s->name);
    uint64_t size = 10, shard_size = 0, mdc = 3;
    if (!sc__agg_get_uint(c, p, "size", &size, type) ||
        !sc__agg_get_uint(c, p, "shard_size", &shard_size, type) ||
        !sc__agg_get_uint(c, p, "min_doc_count", &mdc, type))
        return false;
    if (size == 0 || size > INT32_MAX)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[size] must be greater than 0. Found [%llu] in [%s]",
                            (unsigned long long)size, s->name);
    s->size = (uint32_t)size;
    s->shard_size = shard_size > INT32_MAX ? INT32_MAX : (uint32_t)shard_size;
    s->min_doc_count = mdc;
    return true;
}

bool sc__agg_parse_rare(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",   "max_doc_count", "precision", "include",
                                       "exclude", "missing",       "format",    NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    if (!sc__agg_field_common(c, type, p, s, &mf) || !include_exclude(c, p, s, mf))
        return false;
    uint64_t max = 1;
    double precision = 0.001;
    if (!sc__agg_get_uint(c, p, "max_doc_count", &max, type) ||
        !sc__agg_get_double(c, p, "precision", &precision, type))
        return false;
    if (max == 0)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[max_doc_count] must be greater than 0. Found [0] in [%s]", s->name);
    if (max > 100)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[max_doc_count] must be smaller than or equal to [100]. Found [%llu] "
                            "in [%s]",
                            (unsigned long long)max, s->name);
    if (!(precision >= 0.00001))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[precision] must be greater than 0.00001");
    s->max_doc_count = max;
    s->min_doc_count = 1;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    return true;
}
