/* GET|POST /_analyze and /{index}/_analyze: runs an analyzer over `text` (a string or an array
 * of strings) and lists the tokens as Elasticsearch does (UTF-16 offsets, positions continuing
 * across array entries with the gap rules of AnalyzeAction). The analyzer is named
 * (`analyzer`, `normalizer`), taken from a mapped `field`, or built on the fly from
 * `tokenizer` / `filter` / `char_filter` (names or inline definitions) over the index's own
 * analysis settings; `explain` shows each stage's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/node.h"
#include "text/analyzer.h"

typedef struct tok_writer {
    sc_jsonw *w;
    sc_slice text;
    int64_t pos_base, last_pos;
    int64_t off_base;
    bool explain; /* adds bytes / positionLength / termFrequency as ES's explain does */
    /* byte offset -> UTF-16 offset, computed incrementally (offsets mostly increase) */
    size_t memo_byte, memo_u16;
} tok_writer;

static size_t u16_at(tok_writer *t, size_t byte)
{
    if (byte < t->memo_byte) {
        t->memo_byte = 0;
        t->memo_u16 = 0;
    }
    size_t u = t->memo_u16;
    for (size_t i = t->memo_byte; i < byte && i < t->text.len; i++) {
        uint8_t b = t->text.ptr[i];
        if ((b & 0xC0) != 0x80)
            u += b >= 0xF0 ? 2 : 1;
    }
    t->memo_byte = byte;
    t->memo_u16 = u;
    return u;
}

static sc_status write_tok(void *ctx, const sc_token *tok)
{
    tok_writer *t = ctx;
    sc_jsonw *w = t->w;
    int64_t pos = t->pos_base + tok->position;
    t->last_pos = pos;
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "token");
    sc_jsonw_strn(w, sc_slice_make(tok->term, tok->len));
    sc_jsonw_kv_int(w, "start_offset", t->off_base + (int64_t)u16_at(t, tok->start_offset));
    sc_jsonw_kv_int(w, "end_offset", t->off_base + (int64_t)u16_at(t, tok->end_offset));
    sc_jsonw_kv_str(w, "type", sc_token_type_name(tok->type));
    sc_jsonw_kv_int(w, "position", pos);
    uint32_t poslen = tok->position_length ? tok->position_length : 1;
    if (poslen > 1 && !t->explain) /* as Elasticsearch: only a token spanning positions */
        sc_jsonw_kv_int(w, "positionLength", poslen);
    if (t->explain) {
        char *bytes = malloc((size_t)tok->len * 3 + 3);
        if (bytes) {
            size_t o = 0;
            bytes[o++] = '[';
            for (uint32_t i = 0; i < tok->len; i++)
                o += (size_t)snprintf(bytes + o, 4, i ? " %02x" : "%02x", tok->term[i]);
            bytes[o++] = ']';
            bytes[o] = '\0';
            sc_jsonw_kv_str(w, "bytes", bytes);
            free(bytes);
        }
        sc_jsonw_kv_int(w, "positionLength", poslen);
        sc_jsonw_kv_int(w, "termFrequency", 1);
    }
    sc_jsonw_obj_end(w);
    return SC_OK;
}

/* Writes the tokens of every text through analyzer a (inside an open array). gap is the
 * position increment gap between array entries (100 for a text field, 0 otherwise). */
static sc_status write_tokens(sc_jsonw *w, const sc_analyzer *a, const json_t *texts, int64_t gap,
                              bool explain)
{
    tok_writer t = {w, {NULL, 0}, 0, -1, 0, explain, 0, 0};
    size_t n = json_is_array(texts) ? json_array_size(texts) : 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_is_array(texts) ? json_array_get(texts, i) : texts;
        t.text = sc_slice_make(json_string_value(v), json_string_length(v));
        t.memo_byte = t.memo_u16 = 0;
        if (i > 0)
            t.pos_base = t.last_pos + gap + 1;
        int64_t before = t.last_pos;
        t.last_pos = t.pos_base - 1;
        SC_TRY(sc_analyzer_analyze(a, t.text, write_tok, &t));
        if (t.last_pos < t.pos_base && i > 0)
            t.last_pos = before + gap; /* an entry without tokens still adds its gap */
        /* Lucene's offset gap is 1 */
        t.off_base += (int64_t)u16_at(&t, t.text.len) + 1;
    }
    return SC_OK;
}

/* Adds a request's tokenizer / filter / char_filter entry to the synthesized settings: a name
 * stays a name, an inline definition is added under a generated name. */
static bool add_component(json_t *analysis, const char *section, const json_t *v,
                          const char *gen_name, json_t **name_out, char *err, size_t err_size)
{
    if (json_is_string(v)) {
        *name_out = json_incref((json_t *)v);
        return true;
    }
    if (!json_is_object(v)) {
        snprintf(err, err_size, "[%s] must be a name or an object", section);
        return false;
    }
    json_t *sec = json_object_get(analysis, section);
    if (!sec) {
        sec = json_object();
        json_object_set_new(analysis, section, sec);
    }
    json_object_set_new(sec, gen_name, json_deep_copy(v));
    *name_out = json_string(gen_name);
    return true;
}

/* The registry of an ad-hoc chain: the index's analysis settings plus analyzer `_analyze_k`
 * for k = 0..n_filters (tokenizer, char filters and the first k filters; k = n is the whole
 * chain, the shorter ones feed `explain`). */
static sc_status adhoc_registry(const json_t *base, const json_t *body, const char *data_dir,
                                sc_analyzer_registry **out, size_t *n_filters, size_t *n_cf,
                                char *err, size_t err_size)
{
    json_t *analysis = base ? json_deep_copy(base) : json_object();
    json_t *an = json_object_get(analysis, "analyzer");
    if (!json_is_object(an)) {
        an = json_object();
        json_object_set_new(analysis, "analyzer", an);
    }
    const json_t *tokv = json_object_get(body, "tokenizer");
    const json_t *fv = json_object_get(body, "filter");
    const json_t *cfv = json_object_get(body, "char_filter");
    json_t *tok = NULL, *filters = json_array(), *cfs = json_array();
    bool ok = true;
    if (tokv)
        ok = add_component(analysis, "tokenizer", tokv, "_analyze_tokenizer", &tok, err, err_size);
    else
        tok = json_string("keyword"); /* filters alone run over the whole text */
    size_t nf = fv ? (json_is_array(fv) ? json_array_size(fv) : 1) : 0;
    for (size_t i = 0; ok && i < nf; i++) {
        char gen[32];
        snprintf(gen, sizeof gen, "_analyze_filter_%zu", i);
        json_t *name = NULL;
        ok = add_component(analysis, "filter", json_is_array(fv) ? json_array_get(fv, i) : fv, gen,
                           &name, err, err_size);
        if (ok)
            json_array_append_new(filters, name);
    }
    size_t ncf = cfv ? (json_is_array(cfv) ? json_array_size(cfv) : 1) : 0;
    for (size_t i = 0; ok && i < ncf; i++) {
        char gen[32];
        snprintf(gen, sizeof gen, "_analyze_char_filter_%zu", i);
        json_t *name = NULL;
        ok = add_component(analysis, "char_filter",
                           json_is_array(cfv) ? json_array_get(cfv, i) : cfv, gen, &name, err,
                           err_size);
        if (ok)
            json_array_append_new(cfs, name);
    }
    sc_status st = SC_EINVAL;
    if (ok) {
        for (size_t k = 0; k <= nf; k++) {
            json_t *def = json_object();
            json_object_set_new(def, "type", json_string("custom"));
            json_object_set(def, "tokenizer", tok);
            json_t *sub = json_array();
            for (size_t i = 0; i < k; i++)
                json_array_append(sub, json_array_get(filters, i));
            json_object_set_new(def, "filter", sub);
            json_object_set(def, "char_filter", cfs);
            char name[32];
            snprintf(name, sizeof name, "_analyze_%zu", k);
            json_object_set_new(an, name, def);
        }
        /* char filters alone, for explain: `_analyze_cf_j` has the first j + 1 */
        for (size_t j = 0; j < ncf; j++) {
            json_t *def = json_object();
            json_object_set_new(def, "tokenizer", json_string("keyword"));
            json_t *sub = json_array();
            for (size_t i = 0; i <= j; i++)
                json_array_append(sub, json_array_get(cfs, i));
            json_object_set_new(def, "char_filter", sub);
            char name[32];
            snprintf(name, sizeof name, "_analyze_cf_%zu", j);
            json_object_set_new(an, name, def);
        }
        sc_analysis_error aerr;
        st = sc_analyzer_registry_new_dir(analysis, data_dir, out, &aerr);
        if (st == SC_EINVAL)
            snprintf(err, err_size, "%s", aerr.message);
    }
    json_decref(tok);
    json_decref(filters);
    json_decref(cfs);
    json_decref(analysis);
    *n_filters = nf;
    *n_cf = ncf;
    return st;
}

static const char *component_name(const json_t *v, const char *fallback)
{
    if (json_is_string(v))
        return json_string_value(v);
    const json_t *t = json_object_get(v, "type");
    return json_is_string(t) ? json_string_value(t) : fallback;
}

static bool texts_ok(const json_t *texts)
{
    if (json_is_string(texts))
        return true;
    if (!json_is_array(texts) || json_array_size(texts) == 0)
        return false;
    size_t i;
    const json_t *v;
    json_array_foreach (texts, i, v)
        if (!json_is_string(v))
            return false;
    return true;
}

static void explain_adhoc(sc_rest_req *req, sc_rest_resp *resp, sc_analyzer_registry *r,
                          const json_t *body, const json_t *texts, size_t nf, size_t ncf)
{
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "detail");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "custom_analyzer", true);
    const json_t *cfv = json_object_get(body, "char_filter");
    const json_t *fv = json_object_get(body, "filter");
    sc_status st = SC_OK;
    if (ncf > 0) {
        sc_jsonw_key(&w, "charfilters");
        sc_jsonw_arr_begin(&w);
        for (size_t j = 0; j < ncf && st == SC_OK; j++) {
            char name[32];
            snprintf(name, sizeof name, "_analyze_cf_%zu", j);
            const sc_analyzer *a = sc_analyzer_registry_get(r, sc_slice_cstr(name));
            sc_jsonw_obj_begin(&w);
            sc_jsonw_kv_str(&w, "name",
                            component_name(json_is_array(cfv) ? json_array_get(cfv, j) : cfv,
                                           "_anonymous_charfilter"));
            sc_jsonw_key(&w, "filtered_text");
            sc_jsonw_arr_begin(&w);
            size_t n = json_is_array(texts) ? json_array_size(texts) : 1;
            for (size_t i = 0; i < n && st == SC_OK; i++) {
                const json_t *v = json_is_array(texts) ? json_array_get(texts, i) : texts;
                uint8_t *out;
                size_t len;
                st = sc_analyzer_char_filter(
                    a, sc_slice_make(json_string_value(v), json_string_length(v)), &out, &len);
                if (st == SC_OK) {
                    sc_jsonw_strn(&w, sc_slice_make(out, len));
                    sc_analyzer_text_free(out);
                }
            }
            sc_jsonw_arr_end(&w);
            sc_jsonw_obj_end(&w);
        }
        sc_jsonw_arr_end(&w);
    }
    const json_t *tokv = json_object_get(body, "tokenizer");
    sc_jsonw_key(&w, "tokenizer");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "name", tokv ? component_name(tokv, "_anonymous_tokenizer") : "keyword");
    sc_jsonw_key(&w, "tokens");
    sc_jsonw_arr_begin(&w);
    if (st == SC_OK)
        st = write_tokens(&w, sc_analyzer_registry_get(r, sc_slice_cstr("_analyze_0")), texts, 0,
                          true);
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "tokenfilters");
    sc_jsonw_arr_begin(&w);
    for (size_t k = 1; k <= nf && st == SC_OK; k++) {
        char name[32];
        snprintf(name, sizeof name, "_analyze_%zu", k);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "name",
                        component_name(json_is_array(fv) ? json_array_get(fv, k - 1) : fv,
                                       "_anonymous_tokenfilter"));
        sc_jsonw_key(&w, "tokens");
        sc_jsonw_arr_begin(&w);
        st = write_tokens(&w, sc_analyzer_registry_get(r, sc_slice_cstr(name)), texts, 0, true);
        sc_jsonw_arr_end(&w);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return;
    }
    sc_rest_json_end(req, resp, &w);
}

static void write_named(sc_rest_req *req, sc_rest_resp *resp, const sc_analyzer *a,
                        const json_t *texts, int64_t gap, bool explain)
{
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    if (explain) {
        sc_jsonw_key(&w, "detail");
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_bool(&w, "custom_analyzer", false);
        sc_jsonw_key(&w, "analyzer");
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "name", sc_analyzer_name(a));
    }
    sc_jsonw_key(&w, "tokens");
    sc_jsonw_arr_begin(&w);
    sc_status st = write_tokens(&w, a, texts, gap, explain);
    sc_jsonw_arr_end(&w);
    if (explain) {
        sc_jsonw_obj_end(&w);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_obj_end(&w);
    if (st != SC_OK) {
        sc_rest_error(req, resp, 500, "exception", sc_status_str(st), NULL, 0);
        return;
    }
    sc_rest_json_end(req, resp, &w);
}

void sc_api_analyze(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body = NULL;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    if (!body) {
        body = json_object();
        const char *p;
        if ((p = sc_rest_param_get(req, "text")))
            json_object_set_new(body, "text", json_string(p));
        if ((p = sc_rest_param_get(req, "analyzer")))
            json_object_set_new(body, "analyzer", json_string(p));
        if ((p = sc_rest_param_get(req, "field")))
            json_object_set_new(body, "field", json_string(p));
    }
    if (!json_is_object(body)) {
        sc_rest_error(req, resp, 400, "parse_exception", "request body must be an object", NULL, 0);
        json_decref(body);
        return;
    }
    static const char *const known[] = {"text",    "analyzer",    "tokenizer",
                                        "filter",  "char_filter", "field",
                                        "explain", "normalizer",  "attributes"};
    const char *key;
    json_t *val;
    json_object_foreach (body, key, val) {
        size_t i = 0;
        while (i < sizeof(known) / sizeof(known[0]) && strcmp(known[i], key) != 0)
            i++;
        if (i == sizeof(known) / sizeof(known[0])) {
            sc_rest_errorf(req, resp, 400, "x_content_parse_exception",
                           "[analyze_request] unknown field [%s]", key);
            json_decref(body);
            return;
        }
    }
    const json_t *texts = json_object_get(body, "text");
    if (!texts || !texts_ok(texts)) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: text is missing (a string or a non-empty array of "
                      "strings);",
                      NULL, 0);
        json_decref(body);
        return;
    }
    const json_t *ex = json_object_get(body, "explain");
    bool explain =
        json_is_true(ex) || (json_is_string(ex) && !strcmp(json_string_value(ex), "true"));
    const json_t *anv = json_object_get(body, "analyzer");
    const json_t *fieldv = json_object_get(body, "field");
    const json_t *normv = json_object_get(body, "normalizer");
    bool adhoc = json_object_get(body, "tokenizer") || json_object_get(body, "filter") ||
                 json_object_get(body, "char_filter");
    if ((anv && !json_is_string(anv)) || (fieldv && !json_is_string(fieldv)) ||
        (normv && !json_is_string(normv)) || (anv && (adhoc || normv)) || (normv && adhoc)) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "give one of: analyzer (a name), normalizer (a name), field, or "
                      "tokenizer/filter/char_filter",
                      NULL, 0);
        json_decref(body);
        return;
    }
    sc_index **list = NULL;
    size_t n_list = 0;
    sc_index *ix = NULL;
    if (req->index) {
        sc_cluster_error cerr;
        sc_status st = sc_node_resolve(req->node, req->index, &list, &n_list, &cerr);
        if (st == SC_ENOTFOUND || (st == SC_OK && n_list == 0)) {
            sc_rest_error_index_not_found(req, resp, req->index);
            if (st == SC_OK)
                sc_node_release(list, n_list);
            json_decref(body);
            return;
        }
        if (st != SC_OK) {
            sc__api_cluster_error(req, resp, &cerr);
            json_decref(body);
            return;
        }
        ix = list[0];
    } else if (fieldv) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "analysis by [field] needs an index: use /{index}/_analyze", NULL, 0);
        json_decref(body);
        return;
    }
    const char *data_dir = sc_node_config_get(req->node)->data_dir;
    sc_analyzer_registry *own = NULL;
    const sc_analyzer_registry *reg = ix ? ix->analysis : NULL;
    char err[512] = "";
    if (!reg) {
        sc_analysis_error aerr;
        if (sc_analyzer_registry_new(NULL, &own, &aerr) != SC_OK) {
            sc_rest_error(req, resp, 500, "exception", "cannot build the analyzers", NULL, 0);
            goto out;
        }
        reg = own;
    }
    if (adhoc) {
        size_t nf = 0, ncf = 0;
        sc_analyzer_registry *r = NULL;
        sc_status st = adhoc_registry(ix ? ix->analysis_json : NULL, body, data_dir, &r, &nf, &ncf,
                                      err, sizeof err);
        if (st != SC_OK) {
            sc_rest_error(req, resp, st == SC_EINVAL ? 400 : 500, "illegal_argument_exception",
                          st == SC_EINVAL ? err : sc_status_str(st), NULL, 0);
            goto out;
        }
        if (explain) {
            explain_adhoc(req, resp, r, body, texts, nf, ncf);
        } else {
            char name[32];
            snprintf(name, sizeof name, "_analyze_%zu", nf);
            write_named(req, resp, sc_analyzer_registry_get(r, sc_slice_cstr(name)), texts, 0,
                        false);
        }
        sc_analyzer_registry_free(r);
        goto out;
    }
    const sc_analyzer *a = NULL;
    int64_t gap = 0;
    if (anv) {
        a = sc_analyzer_registry_get(reg, sc_slice_cstr(json_string_value(anv)));
        if (!a) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "failed to find analyzer [%s]", json_string_value(anv));
            goto out;
        }
    } else if (normv) {
        a = sc_analyzer_registry_normalizer(reg, sc_slice_cstr(json_string_value(normv)));
        if (!a) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "failed to find normalizer under [%s]", json_string_value(normv));
            goto out;
        }
    } else if (fieldv) {
        sc_mapping *m = sc_index_mapping(ix);
        const sc_mapping_field *mf =
            m ? sc_mapping_find(m, sc_slice_cstr(json_string_value(fieldv))) : NULL;
        if (mf && mf->type == SC_MAPPING_TEXT) {
            a = mf->analyzer ? sc_analyzer_registry_get(reg, sc_slice_cstr(mf->analyzer))
                             : sc_analyzer_registry_default(reg);
            gap = 100; /* a text field's position_increment_gap */
        } else if (mf && mf->normalizer) {
            a = sc_analyzer_registry_normalizer(reg, sc_slice_cstr(mf->normalizer));
        } else if (mf) {
            a = sc_analyzer_registry_get(reg, sc_slice_cstr("keyword"));
        } else {
            a = sc_analyzer_registry_default(reg); /* ES: an unmapped field uses the default */
        }
        if (m)
            sc_mapping_unref(m);
    } else {
        a = sc_analyzer_registry_default(reg);
    }
    if (!a) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception", "no analyzer for the field",
                      NULL, 0);
        goto out;
    }
    write_named(req, resp, a, texts, gap, explain);
out:
    sc_analyzer_registry_free(own);
    if (list)
        sc_node_release(list, n_list);
    json_decref(body);
}

/* The analyzers of an index whose chain has an `updateable` filter (what a reload changes). */
static void write_updateable(sc_jsonw *w, const json_t *analysis)
{
    const json_t *an = json_object_get(analysis, "analyzer");
    const json_t *fdefs = json_object_get(analysis, "filter");
    const char *name;
    json_t *def;
    json_object_foreach ((json_t *)an, name, def) {
        const json_t *fs = json_object_get(def, "filter");
        size_t n = json_is_array(fs) ? json_array_size(fs) : fs ? 1 : 0;
        for (size_t i = 0; i < n; i++) {
            const json_t *f = json_is_array(fs) ? json_array_get(fs, i) : fs;
            const json_t *fd =
                json_is_string(f) ? json_object_get(fdefs, json_string_value(f)) : NULL;
            if (json_is_true(json_object_get(fd, "updateable"))) {
                sc_jsonw_str(w, name);
                break;
            }
        }
    }
}

void sc_api_reload_search_analyzers(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list = NULL;
    size_t n = 0;
    sc_cluster_error cerr;
    sc_status st = sc_node_resolve(req->node, req->index, &list, &n, &cerr);
    if (st == SC_ENOTFOUND) {
        sc_rest_error_index_not_found(req, resp, cerr.index);
        return;
    }
    if (st != SC_OK) {
        sc__api_cluster_error(req, resp, &cerr);
        return;
    }
    uint32_t shards = 0;
    for (size_t i = 0; i < n; i++) {
        if (sc_index_reload_analysis(list[i], &cerr) != SC_OK) {
            sc__api_cluster_error(req, resp, &cerr);
            sc_node_release(list, n);
            return;
        }
        shards += list[i]->settings.number_of_shards;
    }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", shards);
    sc_jsonw_kv_int(&w, "successful", shards);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "reload_details");
    sc_jsonw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        sc_jsonw_obj_begin(&w);
        sc_jsonw_kv_str(&w, "index", list[i]->name);
        sc_jsonw_key(&w, "reloaded_analyzers");
        sc_jsonw_arr_begin(&w);
        write_updateable(&w, list[i]->analysis_json);
        sc_jsonw_arr_end(&w);
        sc_jsonw_key(&w, "reloaded_node_ids");
        sc_jsonw_arr_begin(&w);
        sc_jsonw_str(&w, sc_node_id(req->node));
        sc_jsonw_arr_end(&w);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    sc_node_release(list, n);
    sc_rest_json_end(req, resp, &w);
}
