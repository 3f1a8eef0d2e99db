/* The analyzer registry's token filters: a filter name (built-in or `analysis.filter.<name>`)
 * resolved into its sc__filter, with the stemmer languages and the normalization filters by
 * their Elasticsearch names. Used by registry.c for custom analyzers and normalizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"
#include "text/registry_internal.h"
#include "text/stopwords.h"

/* Lucene's default elision articles of FrenchAnalyzer (any case). */
const char *const sc__reg_french_articles[SC__REG_N_FRENCH_ARTICLES] = {
    "l", "m", "t", "qu", "n", "s", "j", "d", "c", "jusqu", "quoiqu", "lorsqu", "puisqu"};

/* The language analyzers Lucene builds with its own light stemmers (the others use Snowball). */
uint32_t sc__reg_light_language(const char *type)
{
    static const struct {
        const char *name;
        uint32_t ls;
    } t[] = {{"german", SC__LS_GERMAN},
             {"french", SC__LS_FRENCH},
             {"spanish", SC__LS_SPANISH},
             {"italian", SC__LS_ITALIAN},
             {"portuguese", SC__LS_PORTUGUESE}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(type, t[i].name) == 0)
            return t[i].ls;
    return 0;
}
/* The normalization filters of langnorm.c by their Elasticsearch names; 0 when not one. */
static uint32_t lang_norm(const char *type)
{
    static const struct {
        const char *name;
        uint32_t n;
    } t[] = {{"arabic_normalization", SC__N_ARABIC},   {"persian_normalization", SC__N_PERSIAN},
             {"indic_normalization", SC__N_INDIC},     {"hindi_normalization", SC__N_HINDI},
             {"serbian_normalization", SC__N_SERBIAN}, {"decimal_digit", SC__N_DECIMAL_DIGIT}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(type, t[i].name) == 0)
            return t[i].n;
    return 0;
}

sc_status sc__reg_snowball_filter(const char *lang, sc__filter *f)
{
    f->kind = SC__F_SNOWBALL;
    f->lang = sc__reg_dup_str(lang);
    return f->lang ? SC_OK : SC_ENOMEM;
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
    else if (strcmp(lang, "arabic") == 0 || strcmp(lang, "hindi") == 0 ||
             strcmp(lang, "indonesian") == 0 || strcmp(lang, "greek") == 0 ||
             strcmp(lang, "bulgarian") == 0 || strcmp(lang, "czech") == 0 ||
             strcmp(lang, "latvian") == 0) {
        f->kind = SC__F_LIGHT_STEM;
        f->a = lang[0] == 'a'   ? SC__LS_ARABIC
               : lang[0] == 'h' ? SC__LS_HINDI
               : lang[0] == 'g' ? SC__LS_GREEK
               : lang[0] == 'b' ? SC__LS_BULGARIAN
               : lang[0] == 'c' ? SC__LS_CZECH
               : lang[0] == 'l' ? SC__LS_LATVIAN
                                : SC__LS_INDONESIAN;
    } else if (strncmp(lang, "light_", 6) == 0 && sc__reg_light_language(lang + 6) != 0) {
        f->kind = SC__F_LIGHT_STEM;
        f->a = sc__reg_light_language(lang + 6);
    } else {
        /* the languages Elasticsearch stems with a Snowball stemmer, which libstemmer has */
        static const char *const snowball_langs[][2] = {
            {"armenian", "armenian"},   {"basque", "basque"},         {"catalan", "catalan"},
            {"danish", "danish"},       {"dutch", "dutch"},           {"finnish", "finnish"},
            {"french", "french"},       {"german2", "german"},        {"hungarian", "hungarian"},
            {"irish", "irish"},         {"italian", "italian"},       {"lithuanian", "lithuanian"},
            {"norwegian", "norwegian"}, {"portuguese", "portuguese"}, {"romanian", "romanian"},
            {"russian", "russian"},     {"spanish", "spanish"},       {"swedish", "swedish"},
            {"turkish", "turkish"},     {"serbian", "serbian"},
        };
        for (size_t i = 0; i < sizeof(snowball_langs) / sizeof(snowball_langs[0]); i++)
            if (strcmp(lang, snowball_langs[i][0]) == 0)
                return sc__reg_snowball_filter(snowball_langs[i][1], f);
        return sc__reg_fail(err, "%s: unsupported stemmer language [%s]", path, lang);
    }
    return SC_OK;
}

sc_status sc__reg_resolve_filter(const json_t *analysis, const char *name, const char *path,
                                 sc__filter *f, sc_analysis_error *err)
{
    const json_t *def;
    const char *type;
    char defpath[PATH_BYTES];
    memset(f, 0, sizeof(*f));
    SC_TRY(sc__reg_lookup(analysis, "filter", name, defpath, &def, &type, err));
    if (def)
        path = defpath;
    if (strcmp(type, "lowercase") == 0) {
        const json_t *lang = def ? json_object_get(def, "language") : NULL;
        f->kind = SC__F_LOWERCASE;
        if (lang && json_is_string(lang) && strcmp(json_string_value(lang), "greek") == 0) {
            f->kind = SC__F_LANG_NORM; /* GreekLowerCaseFilter */
            f->a = SC__N_GREEK_LOWER;
        } else if (lang) {
            return sc__reg_fail(err, "%s.language: only greek lowercasing is supported", path);
        }
    } else if (strcmp(type, "asciifolding") == 0) {
        const json_t *po = def ? json_object_get(def, "preserve_original") : NULL;
        if (po && !json_is_false(po))
            return sc__reg_fail(err, "%s.preserve_original: not supported", path);
        f->kind = SC__F_ASCIIFOLD;
    } else if (strcmp(type, "stop") == 0) {
        bool ic = false;
        const json_t *v = def ? json_object_get(def, "ignore_case") : NULL;
        if (v && !json_is_boolean(v))
            return sc__reg_fail(err, "%s.ignore_case: expected a boolean", path);
        ic = v && json_is_true(v);
        if (def && json_object_get(def, "stopwords_path"))
            return sc__reg_fail(err, "%s.stopwords_path: not supported", path);
        char sp[PATH_BYTES];
        sc__reg_path_cat(sp, path, ".stopwords");
        f->kind = SC__F_STOP;
        SC_TRY(sc__reg_parse_stopwords(def ? json_object_get(def, "stopwords") : NULL, sp, ic,
                                       &f->stop, err));
        if (!f->stop) { /* _none_: a stop filter that removes nothing */
            SC_TRY(sc__stopset_new(NULL, 0, false, &f->stop));
        }
    } else if (strcmp(type, "snowball") == 0) {
        const json_t *l = def ? json_object_get(def, "language") : NULL;
        if (l && !json_is_string(l))
            return sc__reg_fail(err, "%s.language: expected a string", path);
        const char *lang = l ? json_string_value(l) : "English";
        static const char *const langs[][2] = {
            {"Armenian", "armenian"},     {"Basque", "basque"},       {"Catalan", "catalan"},
            {"Danish", "danish"},         {"Dutch", "dutch"},         {"Finnish", "finnish"},
            {"French", "french"},         {"German", "german"},       {"German2", "german"},
            {"Hungarian", "hungarian"},   {"Irish", "irish"},         {"Italian", "italian"},
            {"Lithuanian", "lithuanian"}, {"Norwegian", "norwegian"}, {"Porter", "porter"},
            {"Portuguese", "portuguese"}, {"Romanian", "romanian"},   {"Russian", "russian"},
            {"Spanish", "spanish"},       {"Swedish", "swedish"},     {"Turkish", "turkish"},
        };
        if (strcmp(lang, "English") == 0) {
            f->kind = SC__F_SNOWBALL_EN;
        } else {
            size_t i = 0, nl = sizeof(langs) / sizeof(langs[0]);
            while (i < nl && strcmp(langs[i][0], lang) != 0)
                i++;
            if (i == nl)
                return sc__reg_fail(err, "%s.language: unsupported Snowball language [%s]", path,
                                    lang);
            SC_TRY(sc__reg_snowball_filter(langs[i][1], f));
        }
    } else if (strcmp(type, "porter_stem") == 0) {
        f->kind = SC__F_PORTER;
    } else if (strcmp(type, "stemmer") == 0) {
        const json_t *l = def ? json_object_get(def, "language") : NULL;
        if (!l && def)
            l = json_object_get(def, "name");
        if (l && !json_is_string(l))
            return sc__reg_fail(err, "%s.language: expected a string", path);
        char lp[PATH_BYTES];
        sc__reg_path_cat(lp, path, ".language");
        SC_TRY(stemmer_filter(l ? json_string_value(l) : "english", lp, f, err));
    } else if (strcmp(type, "synonym") == 0 || strcmp(type, "synonym_graph") == 0) {
        /* the rules are parsed by build_synonyms, which knows the chain before this filter */
        f->kind = SC__F_SYNONYM;
        f->flag = strcmp(type, "synonym") == 0;
    } else if (strcmp(type, "length") == 0) {
        f->kind = SC__F_LENGTH;
        f->a = 0;
        f->b = INT32_MAX;
        SC_TRY(sc__reg_get_uint(def, "min", path, 0, INT32_MAX, &f->a, err));
        SC_TRY(sc__reg_get_uint(def, "max", path, 0, INT32_MAX, &f->b, err));
        if (f->a > f->b)
            return sc__reg_fail(err, "%s: min must not be greater than max", path);
    } else if (strcmp(type, "trim") == 0) {
        f->kind = SC__F_TRIM;
    } else if (strcmp(type, "truncate") == 0) {
        f->kind = SC__F_TRUNCATE;
        f->a = 10;
        SC_TRY(sc__reg_get_uint(def, "length", path, 1, INT32_MAX, &f->a, err));
    } else if (strcmp(type, "unique") == 0) {
        f->kind = SC__F_UNIQUE;
        SC_TRY(sc__reg_get_bool(def, "only_on_same_position", path, &f->flag, err));
    } else if (strcmp(type, "keyword_marker") == 0) {
        f->kind = SC__F_KEYWORD_MARKER;
        if (def &&
            (json_object_get(def, "keywords_path") || json_object_get(def, "keywords_pattern")))
            return sc__reg_fail(err, "%s: keywords_path and keywords_pattern are not supported",
                                path);
        bool ic = false;
        SC_TRY(sc__reg_get_bool(def, "ignore_case", path, &ic, err));
        const char **words;
        size_t nw;
        char kp[PATH_BYTES];
        sc__reg_path_cat(kp, path, ".keywords");
        SC_TRY(sc__reg_string_list(def ? json_object_get(def, "keywords") : NULL, kp, &words, &nw,
                                   err));
        sc_status st = sc__stopset_new(words, nw, ic, &f->stop);
        sc_alloc_free(&sc__text_pool, words);
        SC_TRY(st);
    } else if (strcmp(type, "ngram") == 0 || strcmp(type, "nGram") == 0 ||
               strcmp(type, "edge_ngram") == 0 || strcmp(type, "edgeNGram") == 0) {
        bool edge = type[0] == 'e';
        f->kind = edge ? SC__F_EDGE_NGRAM : SC__F_NGRAM;
        SC_TRY(sc__reg_ngram_opts(def, path, edge, &f->a, &f->b, err));
        SC_TRY(sc__reg_get_bool(def, "preserve_original", path, &f->flag, err));
        const json_t *side = def ? json_object_get(def, "side") : NULL;
        if (side && !(json_is_string(side) && strcmp(json_string_value(side), "front") == 0))
            return sc__reg_fail(err, "%s.side: only front is supported", path);
    } else if (strcmp(type, "stemmer_override") == 0) {
        f->kind = SC__F_STEM_OVERRIDE;
        if (def && json_object_get(def, "rules_path"))
            return sc__reg_fail(err, "%s.rules_path: not supported (use rules)", path);
        const json_t *rv = def ? json_object_get(def, "rules") : NULL;
        if (!rv)
            return sc__reg_fail(err, "%s: stemmer_override requires `rules`", path);
        const char **rules;
        size_t nr;
        char rp[PATH_BYTES];
        sc__reg_path_cat(rp, path, ".rules");
        SC_TRY(sc__reg_string_list(rv, rp, &rules, &nr, err));
        char msg[sizeof(err->message)];
        msg[0] = '\0';
        sc_status st = sc__stem_override_init(f, rules, nr, rp, msg, sizeof(msg));
        sc_alloc_free(&sc__text_pool, rules);
        if (st == SC_EINVAL)
            return sc__reg_fail(err, "%s", msg);
        SC_TRY(st);
    } else if (strcmp(type, "german_normalization") == 0) {
        f->kind = SC__F_GERMAN_NORM;
    } else if ((f->a = lang_norm(type)) != 0) {
        f->kind = SC__F_LANG_NORM;
    } else if (strcmp(type, "arabic_stem") == 0) {
        f->kind = SC__F_LIGHT_STEM;
        f->a = SC__LS_ARABIC;
    } else if (strcmp(type, "elision") == 0) {
        f->kind = SC__F_ELISION;
        if (def && json_object_get(def, "articles_path"))
            return sc__reg_fail(err, "%s.articles_path: not supported (use articles)", path);
        bool ic = false;
        SC_TRY(sc__reg_get_bool(def, "articles_case", path, &ic, err));
        const char **words;
        size_t nw;
        char ap[PATH_BYTES];
        sc__reg_path_cat(ap, path, ".articles");
        const json_t *arts = def ? json_object_get(def, "articles") : NULL;
        SC_TRY(sc__reg_string_list(arts, ap, &words, &nw, err));
        /* no articles: FrenchAnalyzer's, matched in any case */
        sc_status st = arts ? sc__stopset_new(words, nw, ic, &f->stop)
                            : sc__stopset_new(sc__reg_french_articles, SC__REG_N_FRENCH_ARTICLES,
                                              true, &f->stop);
        sc_alloc_free(&sc__text_pool, words);
        SC_TRY(st);
    } else if (strcmp(type, "word_delimiter_graph") == 0 || strcmp(type, "word_delimiter") == 0) {
        SC_TRY(sc__reg_word_delimiter(def, path, f, err));
        f->flag = strcmp(type, "word_delimiter") == 0;
    } else if (strcmp(type, "shingle") == 0) {
        f->kind = SC__F_SHINGLE;
        f->a = 2;
        f->b = 2;
        f->flag = true;
        SC_TRY(sc__reg_get_uint(def, "max_shingle_size", path, 2, 64, &f->b, err));
        SC_TRY(sc__reg_get_uint(def, "min_shingle_size", path, 2, 64, &f->a, err));
        if (f->a > f->b)
            return sc__reg_fail(
                err, "%s: min_shingle_size must not be greater than max_shingle_size", path);
        SC_TRY(sc__reg_get_bool(def, "output_unigrams", path, &f->flag, err));
        bool if_none = false;
        SC_TRY(sc__reg_get_bool(def, "output_unigrams_if_no_shingles", path, &if_none, err));
        if (if_none)
            return sc__reg_fail(err, "%s.output_unigrams_if_no_shingles: not supported", path);
        const json_t *sep = def ? json_object_get(def, "token_separator") : NULL;
        const json_t *fil = def ? json_object_get(def, "filler_token") : NULL;
        if ((sep && !json_is_string(sep)) || (fil && !json_is_string(fil)))
            return sc__reg_fail(err, "%s: token_separator and filler_token must be strings", path);
        f->sep = sc__reg_dup_str(sep ? json_string_value(sep) : " ");
        f->filler = sc__reg_dup_str(fil ? json_string_value(fil) : "_");
        if (!f->sep || !f->filler)
            return SC_ENOMEM;
    } else {
        return sc__reg_fail(err, "%s: unknown or unsupported filter [%s]", path, type);
    }
    return SC_OK;
}
