/* The ingest processor kinds (see ingest.h): each an init (reads its config) and a run (changes
 * one document). Grok and dissect patterns are compiled in ingest_grok.c. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"
#include "base/slice.h"
#include "base/vec.h"
#include "mapping/date.h"

/* The field's value, or NULL with err set (missing) unless ignore_missing (then *skip). */
static json_t *need(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err, bool *skip)
{
    *skip = false;
    json_t *v = sc__ingest_get(doc, p->field);
    if (!v || json_is_null(v)) {
        if (p->ignore_missing)
            *skip = true;
        else if (!v)
            sc__ingest_missing(err, p->field);
        else
            sc__ingest_fail(err, "illegal_argument_exception",
                            "field [%.200s] is null, cannot process it.", p->field);
    }
    return v && !json_is_null(v) ? v : NULL;
}

static const char *type_name(const json_t *v)
{
    return json_is_integer(v)   ? "java.lang.Integer"
           : json_is_real(v)    ? "java.lang.Double"
           : json_is_boolean(v) ? "java.lang.Boolean"
           : json_is_array(v)   ? "java.util.ArrayList"
           : json_is_object(v)  ? "java.util.HashMap"
                                : "java.lang.String";
}

static sc_status need_string(const sc__proc *p, const json_t *v, sc_ingest_error *err)
{
    if (json_is_string(v))
        return SC_OK;
    sc__ingest_fail(err, "illegal_argument_exception",
                    "field [%.200s] of type [%s] cannot be cast to [java.lang.String]", p->field,
                    type_name(v));
    return SC_EINVAL;
}

/* The processor's field as a string in *out; *out NULL (and SC_OK) when it is missing or null and
 * ignore_missing is set. Any other problem is an error in err. */
static sc_status need_str(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err,
                          const char **out)
{
    bool skip;
    *out = NULL;
    json_t *v = need(p, doc, err, &skip);
    if (!v)
        return skip ? SC_OK : SC_EINVAL;
    if (need_string(p, v, err) != SC_OK)
        return SC_EINVAL;
    *out = json_string_value(v);
    return SC_OK;
}

static const char *target(const sc__proc *p)
{
    return p->target_field ? p->target_field : p->field;
}

/* ---- set, remove, rename, append ---- */

static sc_status set_init(sc__proc *p, sc_ingest_error *err)
{
    if (!json_object_get(p->cfg, "value") && !sc__ingest_str(p, "copy_from")) {
        sc__ingest_fail(err, "parse_exception", "[value] required property is missing");
        return SC_EINVAL;
    }
    return SC_OK;
}

/* The value to store: a copy of copy_from's value, a rendered template or a copy of value. */
static json_t *value_of(const sc__proc *p, sc_ingest_doc *doc)
{
    const char *from = sc__ingest_str(p, "copy_from");
    if (from) {
        json_t *v = sc__ingest_get(doc, from);
        return v ? json_deep_copy(v) : NULL;
    }
    const json_t *v = json_object_get(p->cfg, "value");
    if (json_is_string(v))
        return sc__ingest_render(doc, json_string_value(v));
    if (json_is_array(v)) {
        json_t *arr = json_array();
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x)
            json_array_append_new(arr, json_is_string(x)
                                           ? sc__ingest_render(doc, json_string_value(x))
                                           : json_deep_copy(x));
        return arr;
    }
    return json_deep_copy(v);
}

static sc_status set_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    if (json_is_false(json_object_get(p->cfg, "override")) && sc__ingest_get(doc, p->field) &&
        !json_is_null(sc__ingest_get(doc, p->field)))
        return SC_OK;
    json_t *v = value_of(p, doc);
    if (!v) {
        sc__ingest_missing(err, sc__ingest_str(p, "copy_from"));
        return SC_EINVAL;
    }
    if (json_is_true(json_object_get(p->cfg, "ignore_empty_value")) &&
        (json_is_null(v) || (json_is_string(v) && !json_string_length(v)))) {
        json_decref(v);
        return SC_OK;
    }
    if (!sc__ingest_set(doc, p->field, v)) {
        sc__ingest_fail(err, "illegal_argument_exception", "cannot set [%.200s]", p->field);
        return SC_EINVAL;
    }
    return SC_OK;
}

static sc_status remove_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const json_t *f = json_object_get(p->cfg, "field");
    size_t n = json_is_array(f) ? json_array_size(f) : 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = json_string_value(json_is_array(f) ? json_array_get(f, i) : f);
        if (!name)
            continue;
        if (!sc__ingest_remove(doc, name) && !p->ignore_missing) {
            sc__ingest_missing(err, name);
            return SC_EINVAL;
        }
    }
    return SC_OK;
}

static sc_status remove_init(sc__proc *p, sc_ingest_error *err)
{
    const json_t *f = json_object_get(p->cfg, "field");
    if (!json_is_string(f) && !json_is_array(f)) {
        sc__ingest_fail(err, "parse_exception", "[field] required property is missing");
        return SC_EINVAL;
    }
    return SC_OK;
}

static sc_status need_target(sc__proc *p, sc_ingest_error *err)
{
    if (p->target_field)
        return SC_OK;
    sc__ingest_fail(err, "parse_exception", "[target_field] required property is missing");
    return SC_EINVAL;
}

static sc_status rename_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    bool skip;
    json_t *v = need(p, doc, err, &skip);
    if (!v)
        return skip ? SC_OK : SC_EINVAL;
    if (sc__ingest_get(doc, p->target_field)) {
        sc__ingest_fail(err, "illegal_argument_exception", "field [%.200s] already exists",
                        p->target_field);
        return SC_EINVAL;
    }
    json_incref(v);
    (void)sc__ingest_remove(doc, p->field);
    if (!sc__ingest_set(doc, p->target_field, v)) {
        sc__ingest_fail(err, "illegal_argument_exception", "cannot set [%.200s]", p->target_field);
        return SC_EINVAL;
    }
    return SC_OK;
}

static sc_status append_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    json_t *add = value_of(p, doc);
    if (!add)
        add = json_null();
    json_t *cur = sc__ingest_get(doc, p->field);
    json_t *arr = json_is_array(cur) ? json_incref(cur) : json_array();
    if (cur && !json_is_array(cur) && !json_is_null(cur))
        json_array_append(arr, cur);
    bool dups = !json_is_false(json_object_get(p->cfg, "allow_duplicates"));
    size_t n = json_is_array(add) ? json_array_size(add) : 1;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_is_array(add) ? json_array_get(add, i) : add;
        bool seen = false;
        for (size_t k = 0; !dups && k < json_array_size(arr); k++)
            seen |= json_equal(json_array_get(arr, k), x);
        if (!seen)
            json_array_append(arr, x);
    }
    json_decref(add);
    if (!sc__ingest_set(doc, p->field, arr)) {
        sc__ingest_fail(err, "illegal_argument_exception", "cannot set [%.200s]", p->field);
        return SC_EINVAL;
    }
    return SC_OK;
}

/* ---- string processors ---- */

typedef void (*str_fn)(char *s);

static void do_lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static void do_upper(char *s)
{
    for (; *s; s++)
        *s = (char)toupper((unsigned char)*s);
}

static void do_trim(char *s)
{
    size_t len = strlen(s), a = 0;
    while (a < len && isspace((unsigned char)s[a]))
        a++;
    while (len > a && isspace((unsigned char)s[len - 1]))
        len--;
    memmove(s, s + a, len - a);
    s[len - a] = '\0';
}

/* Applies fn to a string value or to every string of an array (new reference or NULL). */
static json_t *map_strings(const sc__proc *p, const json_t *v, str_fn fn, sc_ingest_error *err)
{
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x) {
            json_t *m = map_strings(p, x, fn, err);
            if (!m) {
                json_decref(out);
                return NULL;
            }
            json_array_append_new(out, m);
        }
        return out;
    }
    if (need_string(p, v, err) != SC_OK)
        return NULL;
    char *s = strndup(json_string_value(v), json_string_length(v));
    if (!s)
        return NULL;
    fn(s);
    json_t *out = json_string(s);
    free(s);
    return out;
}

static sc_status str_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err, str_fn fn)
{
    bool skip;
    json_t *v = need(p, doc, err, &skip);
    if (!v)
        return skip ? SC_OK : SC_EINVAL;
    json_t *out = map_strings(p, v, fn, err);
    if (!out)
        return SC_EINVAL;
    return sc__ingest_set(doc, target(p), out) ? SC_OK : SC_EINVAL;
}

static sc_status lower_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    return str_run(p, doc, err, do_lower);
}

static sc_status upper_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    return str_run(p, doc, err, do_upper);
}

static sc_status trim_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    return str_run(p, doc, err, do_trim);
}

/* ---- split, gsub (POSIX regular expressions), join ---- */

static sc_status regex_init(sc__proc *p, const char *key, sc_ingest_error *err)
{
    const char *re = sc__ingest_str(p, key);
    if (!re) {
        sc__ingest_fail(err, "parse_exception", "[%s] required property is missing", key);
        return SC_EINVAL;
    }
    char buf[SC_INGEST_MAX_PATTERN];
    size_t used = 0;
    int groups = 0;
    regex_t *rx = malloc(sizeof *rx);
    if (!rx)
        return SC_ENOMEM;
    if (!sc__ingest_regex_translate(re, buf, sizeof buf, &used, &groups) ||
        !sc__ingest_regex_cheap(buf) || regcomp(rx, buf, REG_EXTENDED) != 0) {
        free(rx);
        sc__ingest_fail(err, "parse_exception", "[%s] invalid regular expression [%.200s]", key,
                        re);
        return SC_EINVAL;
    }
    p->state = rx;
    return SC_OK;
}

static void regex_fini(sc__proc *p)
{
    if (p->state) {
        regfree(p->state);
        free(p->state);
    }
}

static sc_status split_init(sc__proc *p, sc_ingest_error *err)
{
    return regex_init(p, "separator", err);
}

static sc_status gsub_init(sc__proc *p, sc_ingest_error *err)
{
    if (!json_is_string(json_object_get(p->cfg, "replacement"))) {
        sc__ingest_fail(err, "parse_exception", "[replacement] required property is missing");
        return SC_EINVAL;
    }
    return regex_init(p, "pattern", err);
}

static sc_status split_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const char *str;
    sc_status st = need_str(p, doc, err, &str);
    if (st != SC_OK || !str)
        return st;
    const char *s = str;
    json_t *out = json_array();
    regmatch_t m;
    while (*s && regexec(p->state, s, 1, &m, 0) == 0 && m.rm_eo > 0) {
        json_array_append_new(out, json_stringn(s, (size_t)m.rm_so));
        s += m.rm_eo;
    }
    json_array_append_new(out, json_string(s));
    if (!json_is_true(json_object_get(p->cfg, "preserve_trailing")))
        while (json_array_size(out) > 1 &&
               !json_string_length(json_array_get(out, json_array_size(out) - 1)))
            json_array_remove(out, json_array_size(out) - 1);
    return sc__ingest_set(doc, target(p), out) ? SC_OK : SC_EINVAL;
}

static sc_status gsub_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const char *str;
    sc_status st = need_str(p, doc, err, &str);
    if (st != SC_OK || !str)
        return st;
    const char *rep = sc__ingest_str(p, "replacement");
    const char *s = str;
    sc_buf out = {0};
    regmatch_t m;
    int flags = 0;
    while (*s && regexec(p->state, s, 1, &m, flags) == 0) {
        (void)sc_vec_append(&out, (const unsigned char *)s, (size_t)m.rm_so);
        (void)sc_vec_append(&out, (const unsigned char *)rep, strlen(rep));
        if (m.rm_eo == m.rm_so) { /* empty match: copy one byte to progress */
            if (!s[m.rm_eo])
                break;
            (void)sc_vec_append(&out, (const unsigned char *)s + m.rm_eo, 1);
            s += m.rm_eo + 1;
        } else {
            s += m.rm_eo;
        }
        flags = REG_NOTBOL;
    }
    (void)sc_vec_append(&out, (const unsigned char *)s, strlen(s));
    json_t *r = json_stringn((const char *)out.ptr, out.len);
    sc_vec_free(&out);
    if (!r) {
        sc__ingest_fail(err, "illegal_argument_exception", "gsub produced invalid UTF-8");
        return SC_EINVAL;
    }
    return sc__ingest_set(doc, target(p), r) ? SC_OK : SC_EINVAL;
}

static sc_status join_init(sc__proc *p, sc_ingest_error *err)
{
    if (sc__ingest_str(p, "separator"))
        return SC_OK;
    sc__ingest_fail(err, "parse_exception", "[separator] required property is missing");
    return SC_EINVAL;
}

static sc_status join_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    bool skip;
    json_t *v = need(p, doc, err, &skip);
    if (!v)
        return skip ? SC_OK : SC_EINVAL;
    if (!json_is_array(v)) {
        sc__ingest_fail(err, "illegal_argument_exception",
                        "field [%.200s] of type [%s] cannot be cast to [java.util.List]", p->field,
                        type_name(v));
        return SC_EINVAL;
    }
    const char *sep = sc__ingest_str(p, "separator");
    sc_buf out = {0};
    size_t i;
    json_t *x;
    json_array_foreach (v, i, x) {
        char buf[64];
        const char *t =
            json_is_string(x) ? json_string_value(x)
            : json_is_integer(x)
                ? (snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(x)), buf)
            : json_is_real(x) ? (snprintf(buf, sizeof buf, "%g", json_real_value(x)), buf)
                              : "";
        if (i)
            (void)sc_vec_append(&out, (const unsigned char *)sep, strlen(sep));
        (void)sc_vec_append(&out, (const unsigned char *)t, strlen(t));
    }
    json_t *r = json_stringn((const char *)out.ptr, out.len);
    sc_vec_free(&out);
    return r && sc__ingest_set(doc, target(p), r) ? SC_OK : SC_EINVAL;
}

/* ---- convert ---- */

static const char *const convert_types[] = {"integer", "long", "float", "double", "string",
                                            "boolean", "auto", "ip",    NULL};

static sc_status convert_init(sc__proc *p, sc_ingest_error *err)
{
    const char *t = sc__ingest_str(p, "type");
    for (const char *const *k = convert_types; t && *k; k++)
        if (!strcmp(t, *k))
            return SC_OK;
    sc__ingest_fail(err, "parse_exception",
                    "[type] type [%.64s] not supported, cannot convert "
                    "field.",
                    t ? t : "");
    return SC_EINVAL;
}

/* One value converted to type t (new reference) or NULL. */
static json_t *convert_one(const json_t *v, const char *t)
{
    char buf[64];
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (!strcmp(t, "string") || !strcmp(t, "ip")) {
        return s ? json_string(s)
                 : json_string(json_is_integer(v) ? (snprintf(buf, sizeof buf, "%lld",
                                                              (long long)json_integer_value(v)),
                                                     buf)
                               : json_is_real(v)
                                   ? (snprintf(buf, sizeof buf, "%g", json_real_value(v)), buf)
                               : json_is_true(v) ? "true"
                                                 : "false");
    }
    if (!strcmp(t, "boolean")) {
        if (json_is_boolean(v))
            return json_incref((json_t *)v);
        if (s && !strcasecmp(s, "true"))
            return json_true();
        if (s && !strcasecmp(s, "false"))
            return json_false();
        return NULL;
    }
    if (json_is_number(v) && strcmp(t, "auto")) {
        double d = json_number_value(v);
        bool integral = !strcmp(t, "integer") || !strcmp(t, "long");
        if (integral && !(d >= -9.2e18 && d <= 9.2e18))
            return NULL; /* out of the long range */
        return integral ? json_integer((json_int_t)d) : json_real(d);
    }
    if (!s)
        return json_is_boolean(v) && !strcmp(t, "auto") ? json_incref((json_t *)v) : NULL;
    char *end;
    if (!strcmp(t, "integer") || !strcmp(t, "long") || !strcmp(t, "auto")) {
        long long x = strtoll(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
        if (end != s && !*end)
            return json_integer(x);
        if (strcmp(t, "auto"))
            return NULL;
    }
    double d = strtod(s, &end);
    if (end != s && !*end && isfinite(d))
        return json_real(d);
    if (!strcmp(t, "auto")) {
        if (!strcasecmp(s, "true") || !strcasecmp(s, "false"))
            return json_boolean(!strcasecmp(s, "true"));
        return json_string(s);
    }
    return NULL;
}

static sc_status convert_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    bool skip;
    json_t *v = need(p, doc, err, &skip);
    if (!v)
        return skip ? SC_OK : SC_EINVAL;
    const char *t = sc__ingest_str(p, "type");
    json_t *out;
    if (json_is_array(v)) {
        out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach (v, i, x) {
            json_t *c = convert_one(x, t);
            if (!c) {
                json_decref(out);
                out = NULL;
                v = x;
                break;
            }
            json_array_append_new(out, c);
        }
    } else {
        out = convert_one(v, t);
    }
    if (!out) {
        char buf[64];
        const char *shown = json_is_string(v) ? json_string_value(v) : type_name(v);
        (void)buf;
        sc__ingest_fail(err, "illegal_argument_exception", "unable to convert [%.200s] to %s",
                        shown, t);
        return SC_EINVAL;
    }
    return sc__ingest_set(doc, target(p), out) ? SC_OK : SC_EINVAL;
}

/* ---- date ---- */

static sc_status date_init(sc__proc *p, sc_ingest_error *err)
{
    const json_t *f = json_object_get(p->cfg, "formats");
    if (!json_is_array(f) || !json_array_size(f)) {
        sc__ingest_fail(err, "parse_exception", "[formats] required property is missing");
        return SC_EINVAL;
    }
    size_t i;
    json_t *x;
    json_array_foreach (f, i, x) {
        const char *s = json_string_value(x);
        if (!s) {
            sc__ingest_fail(err, "parse_exception", "[formats] must be strings");
            return SC_EINVAL;
        }
        if (!strcmp(s, "ISO8601") || !strcmp(s, "UNIX") || !strcmp(s, "UNIX_MS") ||
            !strcmp(s, "TAI64N"))
            continue;
        sc_date_format *df;
        if (sc_date_format_new(sc_slice_cstr(s), &df) != SC_OK) {
            sc__ingest_fail(err, "parse_exception", "invalid date format [%.100s]", s);
            return SC_EINVAL;
        }
        sc_date_format_free(df);
    }
    return SC_OK;
}

/* Parses text with one of the formats into epoch milliseconds. */
static bool date_parse_any(const json_t *formats, const char *text, int64_t *ms)
{
    size_t i;
    json_t *x;
    json_array_foreach (formats, i, x) {
        const char *f = json_string_value(x);
        char *end;
        if (!strcmp(f, "UNIX") || !strcmp(f, "UNIX_MS")) {
            double d = strtod(text, &end);
            double v = !strcmp(f, "UNIX") ? d * 1000.0 : d;
            if (end != text && !*end && isfinite(v) && v >= -9.2e18 && v <= 9.2e18) {
                *ms = (int64_t)v;
                return true;
            }
            continue;
        }
        sc_date_format *df;
        const char *spec = !strcmp(f, "ISO8601") ? "strict_date_optional_time" : f;
        if (sc_date_format_new(sc_slice_cstr(spec), &df) != SC_OK)
            continue;
        bool ok = sc_date_parse(df, sc_slice_cstr(text), ms) == SC_OK;
        sc_date_format_free(df);
        if (ok)
            return true;
    }
    return false;
}

static sc_status date_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    bool skip;
    json_t *v = need(p, doc, err, &skip);
    if (!v)
        return skip ? SC_OK : SC_EINVAL;
    char buf[64];
    const char *text =
        json_is_string(v) ? json_string_value(v)
        : json_is_integer(v)
            ? (snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v)), buf)
            : NULL;
    int64_t ms;
    if (!text || !date_parse_any(json_object_get(p->cfg, "formats"), text, &ms)) {
        sc__ingest_fail(err, "illegal_argument_exception", "unable to parse date [%.200s]",
                        text ? text : type_name(v));
        return SC_EINVAL;
    }
    /* A time without a zone is read as UTC (the processor's timezone option is not applied). */
    const char *outf = sc__ingest_str(p, "output_format");
    char out[128];
    sc_date_format *df = NULL;
    if (outf && sc_date_format_new(sc_slice_cstr(outf), &df) == SC_OK) {
        sc_date_format_print(df, ms, out, sizeof out);
        sc_date_format_free(df);
    } else {
        size_t n = sc_date_format_iso(ms, out);
        out[n] = '\0';
    }
    const char *tf = p->target_field ? p->target_field : "@timestamp";
    return sc__ingest_set(doc, tf, json_string(out)) ? SC_OK : SC_EINVAL;
}

/* ---- grok, dissect, drop, fail ---- */

static sc_status grok_init(sc__proc *p, sc_ingest_error *err)
{
    return sc__grok_compile(json_object_get(p->cfg, "patterns"),
                            json_object_get(p->cfg, "pattern_definitions"), (sc__grok **)&p->state,
                            err);
}

static void grok_fini(sc__proc *p)
{
    sc__grok_free(p->state);
}

static sc_status grok_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const char *str;
    sc_status st = need_str(p, doc, err, &str);
    if (st != SC_OK || !str)
        return st;
    char *text = strdup(str);
    bool ok = text && sc__grok_match(p->state, text, doc);
    if (!ok)
        sc__ingest_fail(err, "illegal_argument_exception",
                        "Provided Grok expressions do not match field value: [%.200s]",
                        text ? text : "");
    free(text);
    return ok ? SC_OK : SC_EINVAL;
}

static sc_status dissect_init(sc__proc *p, sc_ingest_error *err)
{
    const char *pat = sc__ingest_str(p, "pattern");
    if (!pat) {
        sc__ingest_fail(err, "parse_exception", "[pattern] required property is missing");
        return SC_EINVAL;
    }
    const char *sep = sc__ingest_str(p, "append_separator");
    return sc__dissect_compile(pat, sep ? sep : "", (sc__dissect **)&p->state, err);
}

static void dissect_fini(sc__proc *p)
{
    sc__dissect_free(p->state);
}

static sc_status dissect_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const char *str;
    sc_status st = need_str(p, doc, err, &str);
    if (st != SC_OK || !str)
        return st;
    char *text = strdup(str);
    bool ok = text && sc__dissect_match(p->state, text, doc);
    if (!ok)
        sc__ingest_fail(err, "dissect_exception",
                        "Unable to find match for dissect pattern: %.150s against source: %.150s",
                        sc__ingest_str(p, "pattern"), text ? text : "");
    free(text);
    return ok ? SC_OK : SC_EINVAL;
}

static sc_status drop_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    (void)p;
    (void)err;
    doc->dropped = true;
    return SC_OK;
}

static sc_status fail_init(sc__proc *p, sc_ingest_error *err)
{
    if (sc__ingest_str(p, "message"))
        return SC_OK;
    sc__ingest_fail(err, "parse_exception", "[message] required property is missing");
    return SC_EINVAL;
}

static sc_status fail_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    json_t *r = sc__ingest_render(doc, sc__ingest_str(p, "message"));
    const char *text = json_string_value(r);
    sc__ingest_fail(err, "fail_processor_exception", "%s",
                    text && *text ? text : "the fail processor ran (with an empty message)");
    json_decref(r);
    return SC_EINVAL;
}

static const sc__proc_kind kinds[] = {
    {"set", set_init, set_run, NULL, true},
    {"remove", remove_init, remove_run, NULL, false},
    {"rename", need_target, rename_run, NULL, true},
    {"append", set_init, append_run, NULL, true},
    {"lowercase", NULL, lower_run, NULL, true},
    {"uppercase", NULL, upper_run, NULL, true},
    {"trim", NULL, trim_run, NULL, true},
    {"split", split_init, split_run, regex_fini, true},
    {"gsub", gsub_init, gsub_run, regex_fini, true},
    {"join", join_init, join_run, NULL, true},
    {"convert", convert_init, convert_run, NULL, true},
    {"date", date_init, date_run, NULL, true},
    {"grok", grok_init, grok_run, grok_fini, true},
    {"dissect", dissect_init, dissect_run, dissect_fini, true},
    {"drop", NULL, drop_run, NULL, false},
    {"fail", fail_init, fail_run, NULL, false},
};

const sc__proc_kind *sc__ingest_kind(const char *name)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].name, name))
            return &kinds[i];
    if (!strcmp(name, "json"))
        return &sc__ingest_kind_json;
    if (!strcmp(name, "kv"))
        return &sc__ingest_kind_kv;
    if (!strcmp(name, "pipeline"))
        return &sc__ingest_kind_pipeline;
    if (!strcmp(name, "foreach"))
        return &sc__ingest_kind_foreach;
    if (!strcmp(name, "user_agent"))
        return &sc__ingest_kind_user_agent;
    return NULL;
}
