/* The analyzer registry's shared parts: the settings readers (registry_opts.c: option getters
 * with Elasticsearch's error messages, stop word lists, string lists, settings paths) and the
 * token filter resolution (registry_filter.c), used by registry.c. */
#ifndef SC_TEXT_REGISTRY_INTERNAL_H
#define SC_TEXT_REGISTRY_INTERNAL_H

#include <jansson.h>

#include "text/internal.h"
#include "text/stopwords.h"

/* The longest settings path kept for error messages (with its NUL). */
#define PATH_BYTES 256

void sc__reg_path_cat(char *dst, const char *a, const char *b);
/* analysis.<section>.<name>: *def its definition (NULL when there is none), defpath
 * (PATH_BYTES) its settings path, *type the definition's type or, without one, the name (a
 * built-in). Fails when the definition's type is not a string. */
sc_status sc__reg_lookup(const json_t *analysis, const char *section, const char *name,
                         char *defpath, const json_t **def, const char **type,
                         sc_analysis_error *err) SC_MUST_USE;
sc_status sc__reg_fail(sc_analysis_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
sc_status sc__reg_parse_stopwords(const json_t *v, const char *path, bool ignore_case,
                                  sc__stopset **out, sc_analysis_error *err);
sc_status sc__reg_get_max_len(const json_t *def, const char *path, uint32_t *out,
                              sc_analysis_error *err);
sc_status sc__reg_get_uint(const json_t *def, const char *key, const char *path, uint32_t lo,
                           uint32_t hi, uint32_t *out, sc_analysis_error *err);
sc_status sc__reg_get_bool(const json_t *def, const char *key, const char *path, bool *out,
                           sc_analysis_error *err);
sc_status sc__reg_ngram_opts(const json_t *def, const char *path, bool edge, uint32_t *min,
                             uint32_t *max, sc_analysis_error *err);
sc_status sc__reg_token_chars(const json_t *def, const char *path, uint32_t *out,
                              sc_analysis_error *err);
char *sc__reg_dup_str(const char *s);
sc_status sc__reg_string_list(const json_t *v, const char *path, const char ***out, size_t *n,
                              sc_analysis_error *err);

/* word_delimiter_graph options (Elasticsearch's names and defaults) into f. */
sc_status sc__reg_word_delimiter(const json_t *def, const char *path, sc__filter *f,
                                 sc_analysis_error *err) SC_MUST_USE;

/* Lucene's default elision articles of FrenchAnalyzer (elision filter, french analyzer). */
#define SC__REG_N_FRENCH_ARTICLES 13
extern const char *const sc__reg_french_articles[SC__REG_N_FRENCH_ARTICLES];
/* The Lucene light stemmer of a language analyzer's type ("german", ...); 0 when it has none. */
uint32_t sc__reg_light_language(const char *type);
/* A Snowball stemmer filter for libstemmer's language name. */
sc_status sc__reg_snowball_filter(const char *lang, sc__filter *f) SC_MUST_USE;
/* Resolves a filter name: built-in or analysis.filter.<name>; path names it in errors. */
sc_status sc__reg_resolve_filter(const json_t *analysis, const char *name, const char *path,
                                 sc__filter *f, sc_analysis_error *err) SC_MUST_USE;

#endif
