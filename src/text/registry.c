/* The analyzers of one index: the built-ins plus custom analyzers built from Elasticsearch
 * `analysis` settings (analyzer / tokenizer / filter sections). Errors name the offending key
 * as a dotted path under "analysis". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"

static const char *const builtin_names[] = {"standard", "simple", "whitespace",
                                            "keyword",  "stop",   "english"};
#define N_BUILTIN (sizeof(builtin_names) / sizeof(builtin_names[0]))

struct sc_analyzer_registry {
    sc_analyzer *builtin[N_BUILTIN];
    sc_analyzer **custom;
    size_t n_custom;
    sc_analyzer *lowercase_normalizer;
    sc_analyzer **normalizers;
    size_t n_normalizers;
    const sc_analyzer *dflt;
};

#define MAX_FILTERS 32
#define PATH_BYTES 256

/* dst = a + b, truncated to PATH_BYTES - 1 bytes (a settings path for error messages). */
static void path_cat(char *dst, const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > PATH_BYTES - 1)
        n = PATH_BYTES - 1;
    if (m > PATH_BYTES - 1 - n)
        m = PATH_BYTES - 1 - n;
    memmove(dst, a, n);
    memcpy(dst + n, b, m);
    dst[n + m] = '\0';
}

static sc_status fail(sc_analysis_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static sc_status fail(sc_analysis_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return SC_EINVAL;
}

/* Parses a stopwords value into *out (NULL for "_none_"). */
static sc_status parse_stopwords(const json_t *v, const char *path, bool ignore_case,
                                 sc__stopset **out, sc_analysis_error *err)
{
    *out = NULL;
    if (!v || (json_is_string(v) && strcmp(json_string_value(v), "_english_") == 0)) {
        if (ignore_case) {
            static const char *const en[] = {
                "a",    "an",   "and",  "are",  "as",   "at",    "be",   "but",   "by",
                "for",  "if",   "in",   "into", "is",   "it",    "no",   "not",   "of",
                "on",   "or",   "such", "that", "the",  "their", "then", "there", "these",
                "they", "this", "to",   "was",  "will", "with",
            };
            return sc__stopset_new(en, sizeof(en) / sizeof(en[0]), true, out);
        }
        return sc__stopset_english(out);
    }
    if (json_is_string(v) && strcmp(json_string_value(v), "_none_") == 0)
        return SC_OK;
    if (json_is_string(v))
        return fail(err, "%s: unsupported stop word list [%s] (only _english_ and _none_)", path,
                    json_string_value(v));
    if (!json_is_array(v))
        return fail(err, "%s: expected a string or an array of strings", path);
    size_t n = json_array_size(v);
    const char **words = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(char *));
    if (!words)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *w = json_array_get(v, i);
        if (!json_is_string(w)) {
            sc_alloc_free(&sc__text_pool, words);
            return fail(err, "%s[%zu]: expected a string", path, i);
        }
        words[i] = json_string_value(w);
    }
    sc_status st = sc__stopset_new(words, n, ignore_case, out);
    sc_alloc_free(&sc__text_pool, words);
    return st;
}

static sc_status get_max_len(const json_t *def, const char *path, uint32_t *out,
                             sc_analysis_error *err)
{
    const json_t *v = json_object_get(def, "max_token_length");
    if (!v)
        return SC_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1048576)
        return fail(err, "%s.max_token_length: expected an integer in [1, 1048576]", path);
    *out = (uint32_t)json_integer_value(v);
    return SC_OK;
}

/* Resolves a tokenizer name: built-in or analysis.tokenizer.<name>. lower is set for the
 * "lowercase" tokenizer (letter + lowercase). */
static sc_status resolve_tokenizer(const json_t *analysis, const char *name, const char *path,
                                   sc__tokenizer_kind *kind, uint32_t *max_len, bool *lower,
                                   sc_analysis_error *err)
{
    const json_t *defs = analysis ? json_object_get(analysis, "tokenizer") : NULL;
    const json_t *def = defs ? json_object_get(defs, name) : NULL;
    const char *type = name;
    char defpath[PATH_BYTES];
    path_cat(defpath, "analysis.tokenizer.", name);
    if (def) {
        const json_t *t = json_object_get(def, "type");
        if (!json_is_string(t))
            return fail(err, "%s.type: expected a string", defpath);
        type = json_string_value(t);
        SC_TRY(get_max_len(def, defpath, max_len, err));
    }
    *lower = false;
    if (strcmp(type, "standard") == 0)
        *kind = SC__TOK_STANDARD;
    else if (strcmp(type, "whitespace") == 0)
        *kind = SC__TOK_WHITESPACE;
    else if (strcmp(type, "keyword") == 0)
        *kind = SC__TOK_KEYWORD;
    else if (strcmp(type, "letter") == 0)
        *kind = SC__TOK_LETTER;
    else if (strcmp(type, "lowercase") == 0) {
        *kind = SC__TOK_LETTER;
        *lower = true;
    } else
        return fail(err, "%s: unknown or unsupported tokenizer [%s]", def ? defpath : path, type);
    return SC_OK;
}

static sc_status stemmer_filter(const char *lang, const char *path, sc__filter *f,
                                sc_analysis_error *err)
{
    /* Elasticsearch: english/porter -> PorterStemFilter; light_english is KStem, which we do
     * not have: it maps to Porter (documented divergence). */
    if (strcmp(lang, "english") == 0 || strcmp(lang, "porter") == 0 ||
        strcmp(lang, "light_english") == 0)
        f->kind = SC__F_PORTER;
    else if (strcmp(lang, "minimal_english") == 0)
        f->kind = SC__F_MINIMAL_EN;
    else if (strcmp(lang, "possessive_english") == 0)
        f->kind = SC__F_POSSESSIVE;
    else if (strcmp(lang, "porter2") == 0)
        f->kind = SC__F_SNOWBALL_EN;
    else
        return fail(err, "%s: unsupported stemmer language [%s]", path, lang);
    return SC_OK;
}

/* Resolves a filter name: built-in or analysis.filter.<name>. */
static sc_status resolve_filter(const json_t *analysis, const char *name, const char *path,
                                sc__filter *f, sc_analysis_error *err)
{
    const json_t *defs = analysis ? json_object_get(analysis, "filter") : NULL;
    const json_t *def = defs ? json_object_get(defs, name) : NULL;
    char defpath[PATH_BYTES];
    path_cat(defpath, "analysis.filter.", name);
    const char *type = name;
    memset(f, 0, sizeof(*f));
    if (def) {
        const json_t *t = json_object_get(def, "type");
        if (!json_is_string(t))
            return fail(err, "%s.type: expected a string", defpath);
        type = json_string_value(t);
        path = defpath;
    }
    if (strcmp(type, "lowercase") == 0) {
        const json_t *lang = def ? json_object_get(def, "language") : NULL;
        if (lang)
            return fail(err, "%s.language: language-specific lowercasing is not supported", path);
        f->kind = SC__F_LOWERCASE;
    } else if (strcmp(type, "asciifolding") == 0) {
        const json_t *po = def ? json_object_get(def, "preserve_original") : NULL;
        if (po && !json_is_false(po))
            return fail(err, "%s.preserve_original: not supported", path);
        f->kind = SC__F_ASCIIFOLD;
    } else if (strcmp(type, "stop") == 0) {
        bool ic = false;
        const json_t *v = def ? json_object_get(def, "ignore_case") : NULL;
        if (v && !json_is_boolean(v))
            return fail(err, "%s.ignore_case: expected a boolean", path);
        ic = v && json_is_true(v);
        if (def && json_object_get(def, "stopwords_path"))
            return fail(err, "%s.stopwords_path: not supported", path);
        char sp[PATH_BYTES];
        path_cat(sp, path, ".stopwords");
        f->kind = SC__F_STOP;
        SC_TRY(
            parse_stopwords(def ? json_object_get(def, "stopwords") : NULL, sp, ic, &f->stop, err));
        if (!f->stop) { /* _none_: a stop filter that removes nothing */
            SC_TRY(sc__stopset_new(NULL, 0, false, &f->stop));
        }
    } else if (strcmp(type, "snowball") == 0) {
        const json_t *l = def ? json_object_get(def, "language") : NULL;
        if (l && !(json_is_string(l) && strcmp(json_string_value(l), "English") == 0))
            return fail(err, "%s.language: only English is supported", path);
        f->kind = SC__F_SNOWBALL_EN;
    } else if (strcmp(type, "porter_stem") == 0) {
        f->kind = SC__F_PORTER;
    } else if (strcmp(type, "stemmer") == 0) {
        const json_t *l = def ? json_object_get(def, "language") : NULL;
        if (!l && def)
            l = json_object_get(def, "name");
        if (l && !json_is_string(l))
            return fail(err, "%s.language: expected a string", path);
        char lp[PATH_BYTES];
        path_cat(lp, path, ".language");
        SC_TRY(stemmer_filter(l ? json_string_value(l) : "english", lp, f, err));
    } else {
        return fail(err, "%s: unknown or unsupported filter [%s]", path, type);
    }
    return SC_OK;
}

static sc_status build_custom(const json_t *analysis, const char *name, const json_t *def,
                              const char *path, sc_analyzer **out, sc_analysis_error *err)
{
    const json_t *cf = json_object_get(def, "char_filter");
    if (cf && !(json_is_array(cf) && json_array_size(cf) == 0))
        return fail(err, "%s.char_filter: char filters are not supported", path);
    const json_t *tok = json_object_get(def, "tokenizer");
    if (!json_is_string(tok))
        return fail(err, "%s.tokenizer: expected a tokenizer name", path);
    char tp[PATH_BYTES];
    path_cat(tp, path, ".tokenizer");
    sc__tokenizer_kind kind = SC__TOK_STANDARD;
    uint32_t max_len = 0;
    bool lower = false;
    SC_TRY(resolve_tokenizer(analysis, json_string_value(tok), tp, &kind, &max_len, &lower, err));
    sc__filter fs[MAX_FILTERS + 1];
    size_t n = 0;
    if (lower)
        fs[n++] = (sc__filter){SC__F_LOWERCASE, NULL};
    const json_t *filters = json_object_get(def, "filter");
    size_t nf = json_is_array(filters) ? json_array_size(filters) : filters ? 1 : 0;
    if (filters && !json_is_array(filters) && !json_is_string(filters))
        return fail(err, "%s.filter: expected an array of filter names", path);
    if (nf > MAX_FILTERS)
        return fail(err, "%s.filter: more than %d filters", path, MAX_FILTERS);
    sc_status st = SC_OK;
    for (size_t i = 0; i < nf && st == SC_OK; i++) {
        const json_t *fv = json_is_array(filters) ? json_array_get(filters, i) : filters;
        char fp[PATH_BYTES];
        char idx[32];
        snprintf(idx, sizeof(idx), ".filter[%zu]", i);
        path_cat(fp, path, idx);
        if (!json_is_string(fv)) {
            st = fail(err, "%s: expected a filter name", fp);
            break;
        }
        st = resolve_filter(analysis, json_string_value(fv), fp, &fs[n], err);
        if (st == SC_OK)
            n++;
    }
    if (st != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__stopset_free(fs[i].stop);
        return st;
    }
    return sc__analyzer_new(name, kind, max_len, fs, n, out);
}

static sc_status build_analyzer(const json_t *analysis, const char *name, const json_t *def,
                                sc_analyzer **out, sc_analysis_error *err)
{
    char path[PATH_BYTES];
    path_cat(path, "analysis.analyzer.", name);
    if (!json_is_object(def))
        return fail(err, "%s: expected an object", path);
    const json_t *t = json_object_get(def, "type");
    if (t && !json_is_string(t))
        return fail(err, "%s.type: expected a string", path);
    const char *type = t ? json_string_value(t) : "custom";
    if (strcmp(type, "custom") == 0)
        return build_custom(analysis, name, def, path, out, err);
    sc__filter fs[4];
    memset(fs, 0, sizeof(fs));
    char sp[PATH_BYTES];
    path_cat(sp, path, ".stopwords");
    const json_t *sw = json_object_get(def, "stopwords");
    if (json_object_get(def, "stopwords_path"))
        return fail(err, "%s.stopwords_path: not supported", path);
    if (strcmp(type, "standard") == 0) {
        uint32_t max_len = 0;
        SC_TRY(get_max_len(def, path, &max_len, err));
        size_t n = 0;
        fs[n++].kind = SC__F_LOWERCASE;
        if (sw) {
            sc__stopset *s;
            SC_TRY(parse_stopwords(sw, sp, false, &s, err));
            if (s) {
                fs[n].kind = SC__F_STOP;
                fs[n++].stop = s;
            }
        }
        return sc__analyzer_new(name, SC__TOK_STANDARD, max_len, fs, n, out);
    }
    if (strcmp(type, "stop") == 0 || strcmp(type, "english") == 0) {
        bool en = type[0] == 'e';
        if (en && json_object_get(def, "stem_exclusion"))
            return fail(err, "%s.stem_exclusion: not supported", path);
        sc__stopset *s;
        SC_TRY(parse_stopwords(sw, sp, false, &s, err));
        size_t n = 0;
        fs[n++].kind = SC__F_LOWERCASE; /* before possessive: see sc_analyzer_builtin */
        if (en)
            fs[n++].kind = SC__F_POSSESSIVE;
        if (s) {
            fs[n].kind = SC__F_STOP;
            fs[n++].stop = s;
        }
        if (en)
            fs[n++].kind = SC__F_PORTER;
        return sc__analyzer_new(name, en ? SC__TOK_STANDARD : SC__TOK_LETTER, 0, fs, n, out);
    }
    if (strcmp(type, "simple") == 0 || strcmp(type, "whitespace") == 0 ||
        strcmp(type, "keyword") == 0) {
        fs[0].kind = SC__F_LOWERCASE;
        sc__tokenizer_kind k = type[0] == 's'   ? SC__TOK_LETTER
                               : type[0] == 'w' ? SC__TOK_WHITESPACE
                                                : SC__TOK_KEYWORD;
        return sc__analyzer_new(name, k, 0, fs, type[0] == 's' ? 1 : 0, out);
    }
    return fail(err, "%s.type: unknown or unsupported analyzer type [%s]", path, type);
}

/* analysis.normalizer.<name>: keyword tokenizer + per-character filters. */
static sc_status build_normalizer(const json_t *analysis, const char *name, const json_t *def,
                                  sc_analyzer **out, sc_analysis_error *err)
{
    char path[PATH_BYTES];
    path_cat(path, "analysis.normalizer.", name);
    if (!json_is_object(def))
        return fail(err, "%s: expected an object", path);
    const json_t *t = json_object_get(def, "type");
    if (t && !(json_is_string(t) && strcmp(json_string_value(t), "custom") == 0))
        return fail(err, "%s.type: only custom normalizers are supported", path);
    const json_t *cf = json_object_get(def, "char_filter");
    if (cf && !(json_is_array(cf) && json_array_size(cf) == 0))
        return fail(err, "%s.char_filter: char filters are not supported", path);
    const json_t *filters = json_object_get(def, "filter");
    if (filters && !json_is_array(filters))
        return fail(err, "%s.filter: expected an array of filter names", path);
    size_t nf = filters ? json_array_size(filters) : 0;
    if (nf > MAX_FILTERS)
        return fail(err, "%s.filter: more than %d filters", path, MAX_FILTERS);
    sc__filter fs[MAX_FILTERS];
    size_t n = 0;
    sc_status st = SC_OK;
    for (size_t i = 0; i < nf && st == SC_OK; i++) {
        const json_t *fv = json_array_get(filters, i);
        char fp[PATH_BYTES], idx[32];
        snprintf(idx, sizeof(idx), ".filter[%zu]", i);
        path_cat(fp, path, idx);
        if (!json_is_string(fv)) {
            st = fail(err, "%s: expected a filter name", fp);
            break;
        }
        st = resolve_filter(analysis, json_string_value(fv), fp, &fs[n], err);
        if (st != SC_OK)
            break;
        n++;
        if (fs[n - 1].kind != SC__F_LOWERCASE && fs[n - 1].kind != SC__F_ASCIIFOLD)
            st = fail(err, "%s: filter [%s] cannot be used in a normalizer", fp,
                      json_string_value(fv));
    }
    if (st != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__stopset_free(fs[i].stop);
        return st;
    }
    return sc__analyzer_new(name, SC__TOK_KEYWORD, 0, fs, n, out);
}

void sc_analyzer_registry_free(sc_analyzer_registry *r)
{
    if (!r)
        return;
    sc_analyzer_free(r->lowercase_normalizer);
    for (size_t i = 0; i < r->n_normalizers; i++)
        sc_analyzer_free(r->normalizers[i]);
    sc_alloc_free(&sc__text_pool, r->normalizers);
    for (size_t i = 0; i < N_BUILTIN; i++)
        sc_analyzer_free(r->builtin[i]);
    for (size_t i = 0; i < r->n_custom; i++)
        sc_analyzer_free(r->custom[i]);
    sc_alloc_free(&sc__text_pool, r->custom);
    sc_alloc_free(&sc__text_pool, r);
}

sc_status sc_analyzer_registry_new(const json_t *analysis, sc_analyzer_registry **out,
                                   sc_analysis_error *err)
{
    *out = NULL;
    if (err)
        err->message[0] = '\0';
    if (analysis && !json_is_object(analysis))
        return fail(err, "analysis: expected an object");
    sc_analyzer_registry *r = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*r));
    if (!r)
        return SC_ENOMEM;
    sc_status st = SC_OK;
    for (size_t i = 0; i < N_BUILTIN && st == SC_OK; i++)
        st = sc_analyzer_builtin(builtin_names[i], &r->builtin[i]);
    const json_t *defs = analysis ? json_object_get(analysis, "analyzer") : NULL;
    if (st == SC_OK && defs && !json_is_object(defs))
        st = fail(err, "analysis.analyzer: expected an object");
    if (st == SC_OK && defs) {
        r->custom =
            sc_alloc_calloc(&sc__text_pool, json_object_size(defs) + 1, sizeof(sc_analyzer *));
        if (!r->custom)
            st = SC_ENOMEM;
        const char *name;
        json_t *def;
        json_object_foreach ((json_t *)defs, name, def) {
            if (st != SC_OK)
                break;
            st = build_analyzer(analysis, name, def, &r->custom[r->n_custom], err);
            if (st == SC_OK)
                r->n_custom++;
        }
    }
    if (st == SC_OK) {
        sc__filter lower = {SC__F_LOWERCASE, NULL};
        st = sc__analyzer_new("lowercase", SC__TOK_KEYWORD, 0, &lower, 1, &r->lowercase_normalizer);
    }
    const json_t *ndefs = analysis ? json_object_get(analysis, "normalizer") : NULL;
    if (st == SC_OK && ndefs && !json_is_object(ndefs))
        st = fail(err, "analysis.normalizer: expected an object");
    if (st == SC_OK && ndefs) {
        r->normalizers =
            sc_alloc_calloc(&sc__text_pool, json_object_size(ndefs) + 1, sizeof(sc_analyzer *));
        if (!r->normalizers)
            st = SC_ENOMEM;
        const char *name;
        json_t *def;
        json_object_foreach ((json_t *)ndefs, name, def) {
            if (st != SC_OK)
                break;
            st = build_normalizer(analysis, name, def, &r->normalizers[r->n_normalizers], err);
            if (st == SC_OK)
                r->n_normalizers++;
        }
    }
    if (st != SC_OK) {
        sc_analyzer_registry_free(r);
        return st;
    }
    r->dflt = sc_analyzer_registry_get(r, sc_slice_cstr("default"));
    if (!r->dflt)
        r->dflt = r->builtin[0];
    *out = r;
    return SC_OK;
}

const sc_analyzer *sc_analyzer_registry_get(const sc_analyzer_registry *r, sc_slice name)
{
    for (size_t i = 0; i < r->n_custom; i++)
        if (sc_slice_eq_cstr(name, sc_analyzer_name(r->custom[i])))
            return r->custom[i];
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (sc_slice_eq_cstr(name, builtin_names[i]))
            return r->builtin[i];
    return NULL;
}

const sc_analyzer *sc_analyzer_registry_default(const sc_analyzer_registry *r)
{
    return r->dflt;
}

const sc_analyzer *sc_analyzer_registry_normalizer(const sc_analyzer_registry *r, sc_slice name)
{
    for (size_t i = 0; i < r->n_normalizers; i++)
        if (sc_slice_eq_cstr(name, sc_analyzer_name(r->normalizers[i])))
            return r->normalizers[i];
    if (sc_slice_eq_cstr(name, "lowercase"))
        return r->lowercase_normalizer;
    return NULL;
}
