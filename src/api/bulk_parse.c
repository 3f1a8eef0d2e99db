/* The _bulk NDJSON parser (bulk_parse.h): line splitting and action/metadata lines. */
#include "api/bulk_parse.h"

#include <stdio.h>
#include <string.h>

#include "api/internal.h"

sc_slice sc_bulk_next_line(sc_slice *rest)
{
    const uint8_t *nl = rest->len ? memchr(rest->ptr, '\n', rest->len) : NULL;
    size_t len = nl ? (size_t)(nl - rest->ptr) : rest->len;
    sc_slice line = sc_slice_make(rest->ptr, len);
    size_t adv = nl ? len + 1 : len;
    rest->ptr += adv;
    rest->len -= adv;
    while (line.len && (line.ptr[line.len - 1] == '\r' || line.ptr[line.len - 1] == ' '))
        line.len--;
    return line;
}

bool sc_bulk_blank(sc_slice s)
{
    for (size_t i = 0; i < s.len; i++)
        if (s.ptr[i] != ' ' && s.ptr[i] != '\t' && s.ptr[i] != '\r')
            return false;
    return true;
}

static sc_slice arena_bytes(sc_arena *a, const char *s, size_t len, bool *oom)
{
    char *c = sc_arena_strndup(a, s, len);
    if (!c)
        *oom = true;
    return c ? sc_slice_make(c, len) : sc_slice_make(NULL, 0);
}

static void item_error(sc_bulk_action *out, const char *type, const char *reason)
{
    if (out->item_error_type)
        return;
    out->item_error_type = type;
    out->item_error_reason = reason;
}

/* Reads the metadata object's members into out. */
static sc_status read_meta(const json_t *meta, sc_arena *a, sc_bulk_action *out)
{
    bool oom = false;
    json_t *v;
    static const char *const byte_strings[] = {"_id", "routing", "_routing", NULL};
    char path[128];
    if (sc__api_json_find_nul(meta, byte_strings, path, sizeof path)) {
        if (strcmp(path, "_index") == 0)
            item_error(out, "invalid_index_name_exception",
                       "Invalid index name, must not contain a NUL byte");
        else
            item_error(out, "illegal_argument_exception",
                       "a string of the action/metadata line holds a NUL byte, which is not "
                       "allowed there");
    }
    if ((v = json_object_get(meta, "_index")) && json_is_string(v) && !out->item_error_type) {
        out->index = sc_arena_strndup(a, json_string_value(v), json_string_length(v));
        oom |= !out->index;
    }
    if ((v = json_object_get(meta, "_id"))) {
        char buf[32];
        if (json_is_string(v)) {
            out->id = arena_bytes(a, json_string_value(v), json_string_length(v), &oom);
        } else if (json_is_integer(v)) {
            int n = snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
            out->id = arena_bytes(a, buf, (size_t)n, &oom);
        }
    }
    if (((v = json_object_get(meta, "routing")) || (v = json_object_get(meta, "_routing"))) &&
        json_is_string(v))
        out->routing = arena_bytes(a, json_string_value(v), json_string_length(v), &oom);
    if ((v = json_object_get(meta, "pipeline")) && json_is_string(v) &&
        strlen(json_string_value(v)) == json_string_length(v)) {
        out->pipeline = sc_arena_strndup(a, json_string_value(v), json_string_length(v));
        oom |= !out->pipeline;
    }
    if ((v = json_object_get(meta, "if_seq_no")) && json_is_integer(v))
        out->if_seq_no = json_integer_value(v);
    if ((v = json_object_get(meta, "if_primary_term")) && json_is_integer(v))
        out->if_primary_term = json_integer_value(v);
    /* op_type inside an index action: "create" makes it a create (409 on an existing id). */
    if ((v = json_object_get(meta, "op_type")) && !json_is_null(v)) {
        const char *ot = json_is_string(v) ? json_string_value(v) : NULL;
        if (ot && strcmp(ot, "create") == 0 &&
            (out->op == SC_BULK_INDEX || out->op == SC_BULK_CREATE)) {
            out->op = SC_BULK_CREATE;
            out->op_name = "create";
        } else if (!(ot && strcmp(ot, "index") == 0 && out->op == SC_BULK_INDEX)) {
            item_error(out, "illegal_argument_exception",
                       "opType must be 'create' or 'index', found: [op_type]");
        }
    }
    return oom ? SC_ENOMEM : SC_OK;
}

sc_status sc_bulk_parse_action(sc_slice line, size_t lineno, sc_arena *a, sc_bulk_action *out,
                               char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    out->if_seq_no = -2;
    json_error_t jerr;
    json_t *root = sc__api_json_loadb(line, &jerr);
    if (!json_is_object(root) || json_object_size(root) == 0) {
        if (!root)
            snprintf(err, errcap, "[%zu:%d] Unexpected character in bulk action: %s", lineno,
                     jerr.column, jerr.text);
        else
            snprintf(err, errcap,
                     "Malformed action/metadata line [%zu], expected START_OBJECT with a single "
                     "action",
                     lineno);
        json_decref(root);
        return SC_EPARSE;
    }
    /* The action is the first key (jansson keeps insertion order); keys after it are ignored
     * with a warning, as Elasticsearch 8 does (log shippers send {"index":{..},"attempts":0}). */
    void *iter = json_object_iter(root);
    const char *op = json_object_iter_key(iter);
    json_t *meta = json_object_iter_value(iter);
    static const struct {
        const char *name;
        sc_bulk_op op;
    } ops[] = {{"index", SC_BULK_INDEX},
               {"create", SC_BULK_CREATE},
               {"update", SC_BULK_UPDATE},
               {"delete", SC_BULK_DELETE}};
    bool known = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strcmp(op, ops[i].name) == 0 && strlen(op) == json_object_iter_key_len(iter)) {
            out->op = ops[i].op;
            out->op_name = ops[i].name;
            known = true;
        }
    }
    if (!known) {
        snprintf(err, errcap,
                 "Malformed action/metadata line [%zu], expected one of [create, delete, index, "
                 "update] but found [%.64s]",
                 lineno, op);
        json_decref(root);
        return SC_EPARSE;
    }
    if (!json_is_object(meta)) {
        snprintf(err, errcap, "Malformed action/metadata line [%zu], expected START_OBJECT",
                 lineno);
        json_decref(root);
        return SC_EPARSE;
    }
    iter = json_object_iter_next(root, iter);
    if (iter) {
        const char *k = json_object_iter_key(iter);
        out->extra_key = sc_arena_strndup(a, k, strlen(k));
        if (!out->extra_key) {
            json_decref(root);
            return SC_ENOMEM;
        }
    }
    sc_status st = read_meta(meta, a, out);
    json_decref(root);
    return st;
}
