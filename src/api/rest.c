/* REST request/response helpers: parameters, JSON bodies, Elasticsearch error envelopes,
 * filter_path. */
#include "api/rest.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/json.h"

const char sc_rest_true[] = "true";

void sc_rest_resp_init(sc_rest_resp *resp)
{
    memset(resp, 0, sizeof *resp);
    resp->status = 200;
    resp->content_type = "application/json";
}

void sc_rest_resp_fini(sc_rest_resp *resp)
{
    sc_vec_free(&resp->body);
}

const char *sc_rest_method_name(sc_rest_method m)
{
    static const char *names[] = {"GET", "PUT", "POST", "DELETE", "HEAD", "OTHER"};
    return (unsigned)m <= SC_REST_OTHER ? names[m] : "OTHER";
}

const char *sc_rest_param_get(const sc_rest_req *req, const char *key)
{
    /* called a dozen times per search, mostly for absent keys: the first byte rejects most
     * parameters without a call to strcmp */
    for (size_t i = 0; i < req->n_params; i++)
        if (req->params[i].key[0] == key[0] && strcmp(req->params[i].key, key) == 0)
            return req->params[i].value;
    return NULL;
}

bool sc_rest_param_bool(const sc_rest_req *req, const char *key, bool dflt)
{
    const char *v = sc_rest_param_get(req, key);
    if (!v)
        return dflt;
    if (v[0] == '\0' || strcmp(v, "true") == 0)
        return true;
    if (strcmp(v, "false") == 0)
        return false;
    return dflt;
}

int64_t sc_rest_param_int(const sc_rest_req *req, const char *key, int64_t dflt, bool *ok)
{
    const char *v = sc_rest_param_get(req, key);
    if (!v)
        return dflt;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end) {
        if (ok)
            *ok = false;
        return dflt;
    }
    return x;
}

void sc_rest_json_begin(sc_rest_req *req, sc_rest_resp *resp, int status, sc_jsonw *w)
{
    sc_vec_clear(&resp->body);
    resp->status = status;
    resp->content_type = "application/json";
    resp->no_filter = false;
    sc_jsonw_init(w, &resp->body, req->pretty);
}

void sc_rest_json_end(sc_rest_req *req, sc_rest_resp *resp, sc_jsonw *w)
{
    if (sc_jsonw_finish(w) != SC_OK)
        sc_rest_error(req, resp, 500, "exception", "failed to write the response", NULL, 0);
}

static void error_obj(sc_jsonw *w, const char *type, const char *reason, const sc_rest_kv *extra,
                      size_t n_extra)
{
    sc_jsonw_kv_str(w, "type", type);
    sc_jsonw_kv_str(w, "reason", reason);
    for (size_t i = 0; i < n_extra; i++) {
        if (extra[i].value == sc_rest_true) {
            sc_jsonw_kv_bool(w, extra[i].key, true);
        } else {
            sc_jsonw_kv_str(w, extra[i].key, extra[i].value);
        }
    }
}

void sc_rest_error(sc_rest_req *req, sc_rest_resp *resp, int status, const char *type,
                   const char *reason, const sc_rest_kv *extra, size_t n_extra)
{
    sc_jsonw w;
    sc_vec_clear(&resp->body);
    resp->status = status;
    resp->content_type = "application/json";
    resp->no_filter = false;
    sc_jsonw_init(&w, &resp->body, req ? req->pretty : false);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "error");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "root_cause");
    sc_jsonw_arr_begin(&w);
    sc_jsonw_obj_begin(&w);
    error_obj(&w, type, reason, extra, n_extra);
    sc_jsonw_obj_end(&w);
    sc_jsonw_arr_end(&w);
    error_obj(&w, type, reason, extra, n_extra);
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_int(&w, "status", status);
    sc_jsonw_obj_end(&w);
    if (sc_jsonw_finish(&w) != SC_OK) {
        static const char fallback[] = "{\"error\":{\"root_cause\":[],\"type\":\"exception\","
                                       "\"reason\":\"out of memory\"},\"status\":500}";
        sc_vec_free(&resp->body);
        if (sc_vec_append(&resp->body, (const unsigned char *)fallback, sizeof fallback - 1) ==
            SC_OK)
            resp->status = 500;
    }
}

void sc_rest_errorf(sc_rest_req *req, sc_rest_resp *resp, int status, const char *type,
                    const char *fmt, ...)
{
    char reason[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    sc_rest_error(req, resp, status, type, reason, NULL, 0);
}

void sc_rest_error_index_not_found(sc_rest_req *req, sc_rest_resp *resp, const char *name)
{
    char reason[1024];
    snprintf(reason, sizeof reason, "no such index [%s]", name);
    sc_rest_kv kv[] = {{"resource.type", "index_or_alias"},
                       {"resource.id", name},
                       {"index_uuid", "_na_"},
                       {"index", name}};
    sc_rest_error(req, resp, 404, "index_not_found_exception", reason, kv, 4);
}

void sc_rest_ack(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_bool(&w, "acknowledged", true);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

char *sc__api_fmt(sc_rest_req *req, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = sc_arena_alloc(req->arena, (size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- JSON in ---- */

json_t *sc__api_json_loadb(sc_slice s, json_error_t *err)
{
    return json_loadb((const char *)s.ptr, s.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, err);
}

static bool find_nul(const json_t *v, const char *const *skip, char *path, size_t cap, size_t at)
{
    if (json_is_string(v))
        return strlen(json_string_value(v)) != json_string_length(v);
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach ((json_t *)v, i, x) {
            int n = snprintf(path + at, cap - at, "%s%zu", at ? "." : "", i);
            size_t next = n > 0 && (size_t)n < cap - at ? at + (size_t)n : at;
            if (find_nul(x, skip, path, cap, next))
                return true;
            path[at] = '\0';
        }
        return false;
    }
    if (json_is_object(v)) {
        const char *k;
        size_t klen;
        json_t *x;
        json_object_keylen_foreach ((json_t *)v, k, klen, x) {
            if (strlen(k) != klen) {
                snprintf(path + at, cap - at, "%s%s", at ? "." : "", k);
                return true;
            }
            bool skipped = false;
            for (const char *const *sk = skip; sk && *sk; sk++)
                skipped |= strcmp(*sk, k) == 0;
            if (skipped)
                continue;
            int n = snprintf(path + at, cap - at, "%s%s", at ? "." : "", k);
            size_t next = n > 0 && (size_t)n < cap - at ? at + (size_t)n : at;
            if (find_nul(x, skip, path, cap, next))
                return true;
            path[at] = '\0';
        }
    }
    return false;
}

bool sc__api_json_find_nul(const json_t *v, const char *const *skip, char *path, size_t cap)
{
    if (!cap)
        return false;
    path[0] = '\0';
    return find_nul(v, skip, path, cap, 0);
}

void sc__api_error_nul(sc_rest_req *req, sc_rest_resp *resp, const char *path)
{
    sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                   "[%s] holds a NUL byte (\\u0000), which is not allowed here",
                   path[0] ? path : "value");
}

const char *sc__api_printable(sc_rest_req *req, sc_slice s)
{
    size_t n_nul = 0;
    for (size_t i = 0; i < s.len; i++)
        n_nul += s.ptr[i] == 0;
    char *out = sc_arena_alloc(req->arena, s.len + 5 * n_nul + 1);
    if (!out)
        return "";
    size_t o = 0;
    for (size_t i = 0; i < s.len; i++) {
        if (s.ptr[i] == 0) {
            memcpy(out + o, "\\u0000", 6);
            o += 6;
        } else {
            out[o++] = (char)s.ptr[i];
        }
    }
    out[o] = '\0';
    return out;
}

bool sc__api_body_json(sc_rest_req *req, sc_rest_resp *resp, bool required, json_t **out)
{
    if (!sc__api_body_json_doc(req, resp, required, out))
        return false;
    /* A string or key can hold NUL only through a \u0000 escape (JSON text has no raw NUL):
     * without one in the body, the walk over the parsed value is skipped. */
    char path[256];
    if (*out && memmem(req->body.ptr, req->body.len, "\\u0000", 6) &&
        sc__api_json_find_nul(*out, NULL, path, sizeof path)) {
        json_decref(*out);
        *out = NULL;
        sc__api_error_nul(req, resp, path);
        return false;
    }
    return true;
}

bool sc__api_body_json_doc(sc_rest_req *req, sc_rest_resp *resp, bool required, json_t **out)
{
    *out = NULL;
    size_t i = 0;
    while (i < req->body.len && (req->body.ptr[i] == ' ' || req->body.ptr[i] == '\n' ||
                                 req->body.ptr[i] == '\r' || req->body.ptr[i] == '\t'))
        i++;
    if (i == req->body.len) {
        if (!required)
            return true;
        sc_rest_error(req, resp, 400, "parse_exception", "request body is required", NULL, 0);
        return false;
    }
    /* Duplicate keys are refused, as Elasticsearch's strict duplicate detection does. */
    sc_json_limits lim = {
        .max_bytes = req->body.len + 1, .max_depth = 512, .reject_duplicates = true};
    sc_json_error err;
    json_t *v = NULL;
    sc_status st = sc_json_parse(req->body, &lim, &v, &err);
    if (st != SC_OK) {
        char reason[512];
        if (st == SC_ENOMEM) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large while parsing the body", NULL, 0);
            return false;
        }
        const char *dup = strstr(err.message, "duplicate object key near '\"");
        if (dup) {
            const char *k = dup + strlen("duplicate object key near '\"");
            size_t kl = strcspn(k, "\"");
            snprintf(reason, sizeof reason, "[%d:%d] Duplicate field '%.*s'", err.line, err.column,
                     (int)kl, k);
        } else {
            snprintf(reason, sizeof reason, "[%d:%d] failed to parse JSON: %s", err.line,
                     err.column, err.message);
        }
        sc_rest_error(req, resp, 400, "x_content_parse_exception", reason, NULL, 0);
        return false;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        sc_rest_error(req, resp, 400, "parse_exception", "request body must be a JSON object", NULL,
                      0);
        return false;
    }
    *out = v;
    return true;
}

void sc__api_json_write(sc_jsonw *w, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        sc_jsonw_obj_begin(w);
        json_object_foreach ((json_t *)v, k, x) {
            sc_jsonw_key(w, k);
            sc__api_json_write(w, x);
        }
        sc_jsonw_obj_end(w);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        sc_jsonw_arr_begin(w);
        json_array_foreach ((json_t *)v, i, x)
            sc__api_json_write(w, x);
        sc_jsonw_arr_end(w);
        break;
    }
    case JSON_STRING:
        sc_jsonw_strn(w, sc_slice_make(json_string_value(v), json_string_length(v)));
        break;
    case JSON_INTEGER: sc_jsonw_int(w, json_integer_value(v)); break;
    case JSON_REAL: sc_jsonw_double(w, json_real_value(v)); break;
    case JSON_TRUE: sc_jsonw_bool(w, true); break;
    case JSON_FALSE: sc_jsonw_bool(w, false); break;
    default: sc_jsonw_null(w); break;
    }
}

sc_status sc__api_json_encode(sc_buf *buf, const json_t *v)
{
    sc_jsonw w;
    sc_jsonw_init(&w, buf, false);
    sc__api_json_write(&w, v);
    return sc_jsonw_finish(&w);
}

/* ---- filter_path ---- */

typedef struct fp_pattern {
    char *segs[32];
    int n;
} fp_pattern;

static json_t *fp_filter(json_t *v, fp_pattern *pats, int *pos, int n);

/* The states of the patterns (pats[i] at segment pos[i], all with segments left) after the
 * member key k, into npats/npos (room for 2 * n); returns their count. "**" matches zero
 * levels (the next segment is tried on k) or one more; a trailing "**" also matches k itself
 * when trailing_globstar (inclusions: the member's whole value is kept). */
static int fp_step(const fp_pattern *pats, const int *pos, int n, const char *k,
                   bool trailing_globstar, fp_pattern *npats, int *npos)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const char *seg = pats[i].segs[pos[i]];
        if (strcmp(seg, "**") == 0) {
            npats[m] = pats[i];
            npos[m++] = pos[i];
            if (pos[i] + 1 < pats[i].n && fnmatch(pats[i].segs[pos[i] + 1], k, 0) == 0) {
                npats[m] = pats[i];
                npos[m++] = pos[i] + 2;
            } else if (trailing_globstar && pos[i] + 1 == pats[i].n) {
                npats[m] = pats[i];
                npos[m++] = pos[i] + 1;
            }
        } else if (fnmatch(seg, k, 0) == 0) {
            npats[m] = pats[i];
            npos[m++] = pos[i] + 1;
        }
    }
    return m;
}

static json_t *fp_object(json_t *v, fp_pattern *pats, int *pos, int n)
{
    json_t *out = json_object();
    const char *k;
    json_t *x;
    int *npos = malloc(sizeof(int) * (size_t)n * 2);
    fp_pattern *npats = malloc(sizeof(fp_pattern) * (size_t)n * 2);
    if (!out || !npos || !npats) {
        free(npos);
        free(npats);
        json_decref(out);
        return NULL;
    }
    json_object_foreach (v, k, x) {
        int m = fp_step(pats, pos, n, k, true, npats, npos);
        if (m == 0)
            continue;
        json_t *r = fp_filter(x, npats, npos, m);
        if (r)
            json_object_set_new(out, k, r);
    }
    free(npos);
    free(npats);
    if (json_object_size(out) == 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static json_t *fp_filter(json_t *v, fp_pattern *pats, int *pos, int n)
{
    for (int i = 0; i < n; i++)
        if (pos[i] >= pats[i].n)
            return json_incref(v);
    if (json_is_object(v))
        return fp_object(v, pats, pos, n);
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x) {
            json_t *r = fp_filter(x, pats, pos, n);
            if (r)
                json_array_append_new(out, r);
        }
        if (json_array_size(out) == 0) {
            json_decref(out);
            return NULL;
        }
        return out;
    }
    return NULL;
}

/* Exclusions ("-path"): removes every member a pattern matches completely, in place. */
static void fp_exclude(json_t *v, fp_pattern *pats, int *pos, int n)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x)
            fp_exclude(x, pats, pos, n);
        return;
    }
    if (!json_is_object(v) || n == 0)
        return;
    int *npos = malloc(sizeof(int) * (size_t)n * 2);
    fp_pattern *npats = malloc(sizeof(fp_pattern) * (size_t)n * 2);
    if (!npos || !npats) {
        free(npos);
        free(npats);
        return;
    }
    const char *k;
    json_t *x;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, x)
    {
        int m = fp_step(pats, pos, n, k, false, npats, npos);
        bool drop = false; /* a pattern matched the member completely */
        for (int i = 0; i < m; i++)
            if (npos[i] == npats[i].n)
                drop = true;
        if (drop) {
            json_object_del(v, k);
            continue;
        }
        /* keep only patterns with segments left */
        int live = 0;
        for (int i = 0; i < m; i++)
            if (npos[i] < npats[i].n) {
                npats[live] = npats[i];
                npos[live++] = npos[i];
            }
        if (live)
            fp_exclude(x, npats, npos, live);
    }
    free(npos);
    free(npats);
}

sc_status sc_rest_filter_path(sc_buf *body, const char *filter_path, bool pretty)
{
    json_error_t err;
    json_t *v = json_loadb((const char *)body->ptr, body->len, JSON_DECODE_ANY, &err);
    if (!v)
        return SC_OK;
    char *copy = strdup(filter_path);
    if (!copy) {
        json_decref(v);
        return SC_ENOMEM;
    }
    /* Inclusions keep only what they match; exclusions ("-a.b") are removed first. */
    fp_pattern pats[32], xpats[32];
    int pos[32], xpos[32];
    int n = 0, nx = 0;
    char *save = NULL;
    for (char *p = strtok_r(copy, ",", &save); p && n < 32 && nx < 32;
         p = strtok_r(NULL, ",", &save)) {
        bool ex = p[0] == '-';
        fp_pattern *fp = ex ? &xpats[nx] : &pats[n];
        fp->n = 0;
        char *save2 = NULL;
        for (char *s = strtok_r(ex ? p + 1 : p, ".", &save2); s && fp->n < 32;
             s = strtok_r(NULL, ".", &save2))
            fp->segs[fp->n++] = s;
        if (fp->n > 0 && ex)
            xpos[nx++] = 0;
        else if (fp->n > 0)
            pos[n++] = 0;
    }
    if (nx)
        fp_exclude(v, xpats, xpos, nx);
    json_t *r = n ? fp_filter(v, pats, pos, n) : json_incref(v);
    free(copy);
    json_decref(v);
    sc_vec_clear(body);
    sc_jsonw w;
    sc_jsonw_init(&w, body, pretty);
    if (r)
        sc__api_json_write(&w, r);
    else {
        sc_jsonw_obj_begin(&w);
        sc_jsonw_obj_end(&w);
    }
    json_decref(r);
    return sc_jsonw_finish(&w);
}

/* ---- human ---- */

static void human_size(char *out, size_t cap, double v, const char *const *units, const double *div,
                       int n_units)
{
    int u = 0;
    while (u + 1 < n_units && v >= div[u + 1])
        u++;
    double x = v / div[u];
    if (u == 0 || x >= 100 || x == (double)(int64_t)x)
        snprintf(out, cap, "%lld%s", (long long)(x + (u ? 0.05 : 0)), units[u]);
    else
        snprintf(out, cap, "%.1f%s", x, units[u]);
}

/* Rebuilds objects so a "<name>" member with the readable value precedes each
 * "<name>_in_bytes" / "<name>_in_millis" member, as Elasticsearch's ?human does. */
static json_t *humanize(json_t *v)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x)
            json_array_set_new(v, i, humanize(json_incref(x)));
        return v;
    }
    if (!json_is_object(v))
        return v;
    json_t *out = json_object();
    if (!out)
        return v;
    const char *k;
    json_t *x;
    json_object_foreach (v, k, x) {
        size_t kl = strlen(k);
        bool bytes = kl > 9 && strcmp(k + kl - 9, "_in_bytes") == 0;
        bool millis = kl > 10 && strcmp(k + kl - 10, "_in_millis") == 0;
        if ((bytes || millis) && json_is_integer(x)) {
            char name[256], text[64];
            snprintf(name, sizeof name, "%.*s", (int)(kl - (bytes ? 9 : 10)), k);
            double val = (double)json_integer_value(x);
            if (bytes) {
                static const char *const u[] = {"b", "kb", "mb", "gb", "tb", "pb"};
                static const double d[] = {1.0,          1024.0,          1048576.0,
                                           1073741824.0, 1099511627776.0, 1125899906842624.0};
                human_size(text, sizeof text, val, u, d, 6);
            } else {
                static const char *const u[] = {"ms", "s", "m", "h", "d"};
                static const double d[] = {1.0, 1000.0, 60000.0, 3600000.0, 86400000.0};
                human_size(text, sizeof text, val, u, d, 5);
            }
            if (!json_object_get(v, name))
                json_object_set_new(out, name, json_string(text));
        }
        json_object_set_new(out, k, humanize(json_incref(x)));
    }
    json_decref(v);
    return out;
}

sc_status sc_rest_humanize(sc_buf *body, bool pretty)
{
    json_error_t err;
    json_t *v = json_loadb((const char *)body->ptr, body->len, 0, &err);
    if (!v)
        return SC_OK;
    v = humanize(v);
    sc_vec_clear(body);
    sc_jsonw w;
    sc_jsonw_init(&w, body, pretty);
    sc__api_json_write(&w, v);
    json_decref(v);
    return sc_jsonw_finish(&w);
}
