/* Merging a mapping update (PUT _mapping) into an existing mapping: additions are accepted,
 * changes to parameters Elasticsearch treats as fixed are conflicts; see mapping.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/internal.h"

static int str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static sc_status conflict(sc_mapping_error *err, const char *path, const char *param,
                          const char *from, const char *to)
{
    sc__mapping_err(err, "illegal_argument_exception",
                    "Mapper for [%s] conflicts with existing mapper:\n\tCannot update parameter "
                    "[%s] from [%s] to [%s]",
                    path, param, from, to);
    return SC_ECONFLICT;
}

static const char *b2s(bool b)
{
    return b ? "true" : "false";
}

static sc_status merge_field(sc_mapping_field *cur, sc_mapping_field *upd, sc_mapping_error *err);

/* Merges the children of upd into cur (both objects, or both leaves for multi-fields). Takes
 * the children out of upd. */
static sc_status merge_children(sc_mapping_field *cur, sc_mapping_field *upd,
                                sc_mapping_error *err)
{
    for (size_t i = 0; i < upd->n_children; i++) {
        sc_mapping_field *c = upd->children[i];
        upd->children[i] = NULL;
        sc_mapping_field *ex = sc__mapping_child(cur, c->name, strlen(c->name));
        sc_status st;
        if (!ex) {
            st = sc__mapping_adopt(cur, c);
        } else {
            st = merge_field(ex, c, err);
            sc__mapping_field_free(c);
        }
        if (st != SC_OK) {
            for (size_t j = i + 1; j < upd->n_children; j++) {
                sc__mapping_field_free(upd->children[j]);
                upd->children[j] = NULL;
            }
            upd->n_children = 0;
            return st;
        }
    }
    upd->n_children = 0;
    return SC_OK;
}

static sc_status merge_field(sc_mapping_field *cur, sc_mapping_field *upd, sc_mapping_error *err)
{
    if (cur->type != upd->type) {
        if (cur->type == SC_MAPPING_OBJECT || upd->type == SC_MAPPING_OBJECT)
            sc__mapping_err(err, "illegal_argument_exception",
                            "can't merge a non object mapping [%s] with an object mapping",
                            cur->path);
        else
            sc__mapping_err(err, "illegal_argument_exception",
                            "mapper [%s] cannot be changed from type [%s] to [%s]", cur->path,
                            sc_mapping_type_name(cur->type), sc_mapping_type_name(upd->type));
        return SC_ECONFLICT;
    }
    if (cur->type == SC_MAPPING_OBJECT) {
        if (cur->nested != upd->nested) {
            sc__mapping_err(err, "illegal_argument_exception",
                            "can't merge a non-nested mapping [%s] with a nested mapping",
                            cur->path);
            return SC_ECONFLICT;
        }
        if (cur->enabled != upd->enabled)
            return conflict(err, cur->path, "enabled", b2s(cur->enabled), b2s(upd->enabled));
        if (upd->dynamic != SC_MAPPING_DYNAMIC_INHERIT)
            cur->dynamic = upd->dynamic;
        return merge_children(cur, upd, err);
    }
    if (cur->type == SC_MAPPING_DENSE_VECTOR)
        return sc__mapping_vector_merge(cur, upd, err);
    /* Fixed parameters. */
    if (!str_eq(cur->analyzer, upd->analyzer))
        return conflict(err, cur->path, "analyzer", cur->analyzer ? cur->analyzer : "default",
                        upd->analyzer ? upd->analyzer : "default");
    if (!str_eq(cur->normalizer, upd->normalizer))
        return conflict(err, cur->path, "normalizer", cur->normalizer ? cur->normalizer : "null",
                        upd->normalizer ? upd->normalizer : "null");
    if (!str_eq(cur->format, upd->format))
        return conflict(err, cur->path, "format", cur->format ? cur->format : SC_DATE_DEFAULT_FORMAT,
                        upd->format ? upd->format : SC_DATE_DEFAULT_FORMAT);
    if (cur->positive_score_impact != upd->positive_score_impact)
        return conflict(err, cur->path, "positive_score_impact", b2s(cur->positive_score_impact),
                        b2s(upd->positive_score_impact));
    if (cur->index != upd->index)
        return conflict(err, cur->path, "index", b2s(cur->index), b2s(upd->index));
    if (cur->doc_values != upd->doc_values)
        return conflict(err, cur->path, "doc_values", b2s(cur->doc_values), b2s(upd->doc_values));
    if (cur->store != upd->store)
        return conflict(err, cur->path, "store", b2s(cur->store), b2s(upd->store));
    if (cur->norms != upd->norms && upd->norms) /* norms may only be switched off */
        return conflict(err, cur->path, "norms", b2s(cur->norms), b2s(upd->norms));
    if (cur->scaling_factor != upd->scaling_factor) {
        char a[32], b[32];
        snprintf(a, sizeof(a), "%g", cur->scaling_factor);
        snprintf(b, sizeof(b), "%g", upd->scaling_factor);
        return conflict(err, cur->path, "scaling_factor", a, b);
    }
    if (cur->preserve_separators != upd->preserve_separators ||
        cur->preserve_position_increments != upd->preserve_position_increments)
        return conflict(err, cur->path, "preserve_separators", "old", "new");
    if (cur->position_increment_gap != upd->position_increment_gap)
        return conflict(err, cur->path, "position_increment_gap", "old", "new");
    if ((cur->null_value || upd->null_value) &&
        !(cur->null_value && upd->null_value && json_equal(cur->null_value, upd->null_value)))
        return conflict(err, cur->path, "null_value", "old", "new");
    /* Updatable parameters take the new values. */
    cur->norms = upd->norms;
    cur->ignore_above = upd->ignore_above;
    cur->max_input_length = upd->max_input_length;
    cur->coerce = upd->coerce;
    cur->ignore_malformed = upd->ignore_malformed;
    char *t = cur->search_analyzer;
    cur->search_analyzer = upd->search_analyzer;
    upd->search_analyzer = t;
    t = cur->search_quote_analyzer;
    cur->search_quote_analyzer = upd->search_quote_analyzer;
    upd->search_quote_analyzer = t;
    char **ct = cur->copy_to;
    size_t nct = cur->n_copy_to;
    cur->copy_to = upd->copy_to;
    cur->n_copy_to = upd->n_copy_to;
    upd->copy_to = ct;
    upd->n_copy_to = nct;
    json_t *mt = cur->meta;
    cur->meta = upd->meta;
    upd->meta = mt;
    return merge_children(cur, upd, err);
}

sc_status sc_mapping_merge(const sc_mapping *base, const json_t *update, sc_mapping **out,
                           sc_mapping_error *err)
{
    *out = NULL;
    sc_mapping *u;
    SC_TRY(sc_mapping_new(update, &u, err));
    sc_mapping *m = sc__mapping_clone(base);
    if (!m) {
        sc_mapping_unref(u);
        return SC_ENOMEM;
    }
    if (u->set_date_detection) {
        m->date_detection = u->date_detection;
        m->set_date_detection = true;
    }
    if (u->set_numeric_detection) {
        m->numeric_detection = u->numeric_detection;
        m->set_numeric_detection = true;
    }
    if (u->root_extra) {
        if (!m->root_extra)
            m->root_extra = json_object();
        if (m->root_extra)
            json_object_update(m->root_extra, u->root_extra);
    }
    sc_status st = merge_field(m->root, u->root, err);
    sc_mapping_unref(u);
    if (st == SC_OK)
        st = sc__mapping_reindex(m);
    if (st != SC_OK) {
        sc_mapping_unref(m);
        return st;
    }
    *out = m;
    return SC_OK;
}
