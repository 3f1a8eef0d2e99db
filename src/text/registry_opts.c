/* Settings readers of the analyzer registry (registry_internal.h): typed option getters with
 * Elasticsearch's error messages, stop word lists, string lists and settings paths. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/registry_internal.h"

/* dst = a + b, truncated to PATH_BYTES - 1 bytes (a settings path for error messages). */
void sc__reg_path_cat(char *dst, const char *a, const char *b)
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

sc_status sc__reg_lookup(const json_t *analysis, const char *section, const char *name,
                         char *defpath, const json_t **def, const char **type,
                         sc_analysis_error *err)
{
    const json_t *defs = analysis ? json_object_get(analysis, section) : NULL;
    *def = defs ? json_object_get(defs, name) : NULL;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "analysis.%s.", section);
    sc__reg_path_cat(defpath, prefix, name);
    *type = name;
    if (!*def)
        return SC_OK;
    const json_t *t = json_object_get(*def, "type");
    if (!json_is_string(t))
        return sc__reg_fail(err, "%s.type: expected a string", defpath);
    *type = json_string_value(t);
    return SC_OK;
}

sc_status sc__reg_fail(sc_analysis_error *err, const char *fmt, ...)
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
sc_status sc__reg_parse_stopwords(const json_t *v, const char *path, bool ignore_case,
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
    if (json_is_string(v)) {
        const char *name = json_string_value(v);
        size_t len = strlen(name);
        for (size_t i = 0; len > 2 && name[0] == '_' && name[len - 1] == '_' && i < sc__n_stoplists;
             i++)
            if (strlen(sc__stoplists[i].name) == len - 2 &&
                !memcmp(sc__stoplists[i].name, name + 1, len - 2))
                return sc__stopset_new(sc__stoplists[i].words, sc__stoplists[i].n, ignore_case,
                                       out);
        return sc__reg_fail(err, "%s: unknown stop word list [%s]", path, name);
    }
    if (!json_is_array(v))
        return sc__reg_fail(err, "%s: expected a string or an array of strings", path);
    size_t n = json_array_size(v);
    const char **words = sc_alloc_calloc(&sc__text_pool, n ? n : 1, sizeof(char *));
    if (!words)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *w = json_array_get(v, i);
        if (!json_is_string(w)) {
            sc_alloc_free(&sc__text_pool, words);
            return sc__reg_fail(err, "%s[%zu]: expected a string", path, i);
        }
        words[i] = json_string_value(w);
    }
    sc_status st = sc__stopset_new(words, n, ignore_case, out);
    sc_alloc_free(&sc__text_pool, words);
    return st;
}

sc_status sc__reg_get_max_len(const json_t *def, const char *path, uint32_t *out,
                              sc_analysis_error *err)
{
    const json_t *v = json_object_get(def, "max_token_length");
    if (!v)
        return SC_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1048576)
        return sc__reg_fail(err, "%s.max_token_length: expected an integer in [1, 1048576]", path);
    *out = (uint32_t)json_integer_value(v);
    return SC_OK;
}

/* Resolves a tokenizer name: built-in or analysis.tokenizer.<name>. lower is set for the
 * "lowercase" tokenizer (letter + lowercase). */
/* Reads an optional integer setting in [lo, hi] into *out (left alone when absent). Accepts a
 * numeric string as Elasticsearch does. */
sc_status sc__reg_get_uint(const json_t *def, const char *key, const char *path, uint32_t lo,
                           uint32_t hi, uint32_t *out, sc_analysis_error *err)
{
    const json_t *v = def ? json_object_get(def, key) : NULL;
    if (!v)
        return SC_OK;
    long long x;
    if (json_is_integer(v)) {
        x = json_integer_value(v);
    } else if (json_is_string(v)) {
        char *end;
        x = strtoll(json_string_value(v), &end, 10);
        if (*json_string_value(v) == '\0' || *end)
            return sc__reg_fail(err, "%s.%s: expected an integer", path, key);
    } else {
        return sc__reg_fail(err, "%s.%s: expected an integer", path, key);
    }
    if (x < (long long)lo || x > (long long)hi)
        return sc__reg_fail(err, "%s.%s: must be in [%u, %u], got %lld", path, key, lo, hi, x);
    *out = (uint32_t)x;
    return SC_OK;
}

sc_status sc__reg_get_bool(const json_t *def, const char *key, const char *path, bool *out,
                           sc_analysis_error *err)
{
    const json_t *v = def ? json_object_get(def, key) : NULL;
    if (!v)
        return SC_OK;
    if (json_is_boolean(v))
        *out = json_is_true(v);
    else if (json_is_string(v) && strcmp(json_string_value(v), "true") == 0)
        *out = true;
    else if (json_is_string(v) && strcmp(json_string_value(v), "false") == 0)
        *out = false;
    else
        return sc__reg_fail(err, "%s.%s: expected a boolean", path, key);
    return SC_OK;
}

/* Largest n-gram size we accept, and the widest min..max spread (Elasticsearch limits the
 * spread with index.max_ngram_diff, default 1; we allow up to this many so that the output of
 * one token stays bounded). */
#define MAX_GRAM 1024
#define MAX_NGRAM_DIFF 64

sc_status sc__reg_ngram_opts(const json_t *def, const char *path, bool edge, uint32_t *min,
                             uint32_t *max, sc_analysis_error *err)
{
    *min = 1;
    *max = 2;
    SC_TRY(sc__reg_get_uint(def, "min_gram", path, 1, MAX_GRAM, min, err));
    SC_TRY(sc__reg_get_uint(def, "max_gram", path, 1, MAX_GRAM, max, err));
    if (*min > *max)
        return sc__reg_fail(err, "%s: min_gram (%u) must not be greater than max_gram (%u)", path,
                            *min, *max);
    if (!edge && *max - *min > MAX_NGRAM_DIFF)
        return sc__reg_fail(err,
                            "%s: the difference between max_gram and min_gram must be at most %d",
                            path, MAX_NGRAM_DIFF);
    return SC_OK;
}

sc_status sc__reg_token_chars(const json_t *def, const char *path, uint32_t *out,
                              sc_analysis_error *err)
{
    *out = 0;
    const json_t *v = def ? json_object_get(def, "token_chars") : NULL;
    if (!v)
        return SC_OK;
    if (!json_is_array(v))
        return sc__reg_fail(err, "%s.token_chars: expected an array", path);
    size_t i;
    const json_t *c;
    json_array_foreach (v, i, c) {
        const char *n = json_is_string(c) ? json_string_value(c) : "";
        if (strcmp(n, "letter") == 0)
            *out |= SC__TC_LETTER;
        else if (strcmp(n, "digit") == 0)
            *out |= SC__TC_DIGIT;
        else if (strcmp(n, "whitespace") == 0)
            *out |= SC__TC_WHITESPACE;
        else if (strcmp(n, "punctuation") == 0)
            *out |= SC__TC_PUNCTUATION;
        else if (strcmp(n, "symbol") == 0)
            *out |= SC__TC_SYMBOL;
        else
            return sc__reg_fail(err,
                                "%s.token_chars[%zu]: unknown token class [%s] (letter, digit, "
                                "whitespace, punctuation, symbol; custom is not supported)",
                                path, i, n);
    }
    return SC_OK;
}

char *sc__reg_dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = sc_alloc_malloc(&sc__text_pool, n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

/* An array of strings (or one string) into a fresh array of borrowed pointers. */
sc_status sc__reg_string_list(const json_t *v, const char *path, const char ***out, size_t *n,
                              sc_analysis_error *err)
{
    *out = NULL;
    *n = 0;
    if (!v)
        return SC_OK;
    if (json_is_string(v)) {
        *out = sc_alloc_calloc(&sc__text_pool, 1, sizeof(char *));
        if (!*out)
            return SC_ENOMEM;
        (*out)[0] = json_string_value(v);
        *n = 1;
        return SC_OK;
    }
    if (!json_is_array(v))
        return sc__reg_fail(err, "%s: expected an array of strings", path);
    size_t len = json_array_size(v);
    *out = sc_alloc_calloc(&sc__text_pool, len ? len : 1, sizeof(char *));
    if (!*out)
        return SC_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        const json_t *w = json_array_get(v, i);
        if (!json_is_string(w)) {
            sc_alloc_free(&sc__text_pool, *out);
            *out = NULL;
            return sc__reg_fail(err, "%s[%zu]: expected a string", path, i);
        }
        (*out)[i] = json_string_value(w);
    }
    *n = len;
    return SC_OK;
}

sc_status sc__reg_word_delimiter(const json_t *def, const char *path, sc__filter *f,
                                 sc_analysis_error *err)
{
    static const struct {
        const char *key;
        uint32_t bit;
        bool dflt;
    } opts[] = {
        {"generate_word_parts", SC__WD_WORD_PARTS, true},
        {"generate_number_parts", SC__WD_NUMBER_PARTS, true},
        {"catenate_words", SC__WD_CATENATE_WORDS, false},
        {"catenate_numbers", SC__WD_CATENATE_NUMBERS, false},
        {"catenate_all", SC__WD_CATENATE_ALL, false},
        {"preserve_original", SC__WD_PRESERVE, false},
        {"split_on_case_change", SC__WD_SPLIT_CASE, true},
        {"split_on_numerics", SC__WD_SPLIT_NUMERICS, true},
        {"stem_english_possessive", SC__WD_POSSESSIVE, true},
        {"adjust_offsets", SC__WD_ADJUST_OFFSETS, true},
        {"ignore_keywords", SC__WD_IGNORE_KEYWORDS, false},
    };
    f->kind = SC__F_WORD_DELIM;
    f->a = 0;
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        bool v = opts[i].dflt;
        SC_TRY(sc__reg_get_bool(def, opts[i].key, path, &v, err));
        if (v)
            f->a |= opts[i].bit;
    }
    if (def && (json_object_get(def, "type_table") || json_object_get(def, "type_table_path")))
        return sc__reg_fail(err, "%s.type_table: custom character type tables are not supported",
                            path);
    if (def && json_object_get(def, "protected_words_path"))
        return sc__reg_fail(err, "%s.protected_words_path: not supported (use protected_words)",
                            path);
    const char **words = NULL;
    size_t nw = 0;
    char pp[PATH_BYTES];
    sc__reg_path_cat(pp, path, ".protected_words");
    SC_TRY(sc__reg_string_list(def ? json_object_get(def, "protected_words") : NULL, pp, &words,
                               &nw, err));
    sc_status st = nw ? sc__stopset_new(words, nw, false, &f->stop) : SC_OK;
    sc_alloc_free(&sc__text_pool, words);
    return st;
}
