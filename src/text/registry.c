/* The analyzers of one index: the built-ins plus custom analyzers built from Elasticsearch
 * `analysis` settings (analyzer / tokenizer / filter sections). Errors name the offending key
 * as a dotted path under "analysis". */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"
#include "text/registry_internal.h"
#include "text/stopwords.h"

/* The first N_CORE are sc_analyzer_builtin's; the others are language analyzers (below). */
static const char *const builtin_names[] = {
    "standard",   "simple",   "whitespace", "keyword",   "stop",      "english",
    "armenian",   "basque",   "danish",     "finnish",   "hungarian", "lithuanian",
    "norwegian",  "romanian", "russian",    "swedish",   "german",    "french",
    "spanish",    "italian",  "portuguese", "dutch",     "arabic",    "hindi",
    "indonesian", "persian",  "greek",      "bulgarian", "czech",     "latvian"};

/* DutchAnalyzer's default stemmer overrides. */
static const char *const dutch_overrides[] = {"fiets => fiets", "bromfiets => bromfiets",
                                              "ei => eier", "kind => kinder"};

/* Lucene's default elision articles of ItalianAnalyzer (any case); FrenchAnalyzer's are
 * sc__reg_french_articles. */
static const char *const italian_articles[] = {
    "c",    "l",    "all",  "dall", "dell", "nell", "sull", "coll", "pell", "gl", "agl",
    "dagl", "degl", "negl", "sugl", "un",   "m",    "t",    "s",    "v",    "d"};

/* The analyzers Lucene 8.7 builds with the filters of langnorm.c, in Lucene's order: the
 * letters are filters (l lowercase, d decimal_digit, s stop, k keyword_marker when
 * stem_exclusion is given, A/P/I/H arabic/persian/indic/hindi normalization, G greek lowercase,
 * a/h/i/g/b/c/v the arabic, hindi, indonesian, greek, bulgarian, czech, latvian stemmers). NULL
 * when type is not one of them. */
static const char *script_chain(const char *type)
{
    static const char *const t[][2] = {
        {"arabic", "ldsAka"}, {"hindi", "ldkIHsh"},  {"indonesian", "lski"}, {"persian", "ldAPs"},
        {"greek", "Gsg"},     {"bulgarian", "lskb"}, {"czech", "lskc"},      {"latvian", "lskv"}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(type, t[i][0]) == 0)
            return t[i][1];
    return NULL;
}

#define N_CORE 6
#define N_BUILTIN (sizeof(builtin_names) / sizeof(builtin_names[0]))

/* The built-in analyzers, their search_as_you_type variants and the "lowercase" normalizer:
 * immutable and the same for every index, so one set is shared by every registry, built by
 * the first and freed with the last (a set per index cost ~180 KiB, most of a node's memory
 * with thousands of small indices: docs/benchmarks.md, Idle shards). */
typedef struct builtin_set {
    size_t refs; /* registries using it (builtins_mu) */
    sc_analyzer *builtin[N_BUILTIN];
    sc_analyzer *lowercase_normalizer;
    sc_analyzer *sayt[6 * N_BUILTIN];
    size_t n_sayt;
} builtin_set;

static pthread_mutex_t builtins_mu = PTHREAD_MUTEX_INITIALIZER;
static builtin_set *builtins; /* the shared set while a registry lives (builtins_mu) */

struct sc_analyzer_registry {
    const builtin_set *shared; /* the built-ins (a reference to `builtins`) */
    sc_analyzer **custom;
    size_t n_custom;
    sc_analyzer **normalizers;
    size_t n_normalizers;
    const sc_analyzer *dflt;
    sc_analyzer **sayt; /* search_as_you_type variants of the custom analyzers (sayt.c) */
    size_t n_sayt;
};

/* Variants "<name>#2gram".."#4gram" and "#prefix2".."#prefix4" of a, into sayt[*n..*n+6). */
static sc_status add_sayt(sc_analyzer **sayt, size_t *n_sayt, const sc_analyzer *a)
{
    for (uint32_t n = 2; n <= 4; n++)
        for (int p = 0; p < 2; p++) {
            SC_TRY(sc__sayt_new(a, p, n, &sayt[*n_sayt]));
            (*n_sayt)++;
        }
    return SC_OK;
}

#define MAX_FILTERS 32

static sc_status resolve_tokenizer(const json_t *analysis, const char *name, const char *path,
                                   sc__tokenizer_kind *kind, sc__tokenizer_opts *topts, bool *lower,
                                   sc_analysis_error *err)
{
    uint32_t *max_len = &topts->max_len;
    const json_t *def;
    const char *type;
    char defpath[PATH_BYTES];
    SC_TRY(sc__reg_lookup(analysis, "tokenizer", name, defpath, &def, &type, err));
    if (def)
        SC_TRY(sc__reg_get_max_len(def, defpath, max_len, err));
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
    } else if (strcmp(type, "ngram") == 0 || strcmp(type, "nGram") == 0 ||
               strcmp(type, "edge_ngram") == 0 || strcmp(type, "edgeNGram") == 0) {
        bool edge = type[0] == 'e';
        *kind = edge ? SC__TOK_EDGE_NGRAM : SC__TOK_NGRAM;
        const char *p = def ? defpath : path;
        SC_TRY(sc__reg_ngram_opts(def, p, edge, &topts->min_gram, &topts->max_gram, err));
        SC_TRY(sc__reg_token_chars(def, p, &topts->token_chars, err));
    } else
        return sc__reg_fail(err, "%s: unknown or unsupported tokenizer [%s]", def ? defpath : path,
                            type);
    return SC_OK;
}

/* Reads a synonyms file: one rule per line. Returns the lines (pointers into *buf). */
static sc_status read_rules_file(const char *config_dir, const char *rel, const char *path,
                                 char **buf, const char ***lines, size_t *n, sc_analysis_error *err)
{
    *buf = NULL;
    *lines = NULL;
    *n = 0;
    if (!config_dir)
        return sc__reg_fail(err, "%s.synonyms_path: files are not available here", path);
    if (rel[0] == '/' || strstr(rel, "..") != NULL)
        return sc__reg_fail(err,
                            "%s.synonyms_path: must be a relative path inside the config folder "
                            "[%s]",
                            path, rel);
    char full[4096];
    snprintf(full, sizeof(full), "%s/%s", config_dir, rel);
    FILE *fp = fopen(full, "rb");
    if (!fp)
        return sc__reg_fail(err, "%s.synonyms_path: cannot read [%s]", path, rel);
    size_t cap = 4096, len = 0;
    char *b = sc_alloc_malloc(&sc__text_pool, cap);
    while (b) {
        if (len + 1 >= cap) {
            if (cap > (64u << 20)) {
                sc_alloc_free(&sc__text_pool, b);
                fclose(fp);
                return sc__reg_fail(err, "%s.synonyms_path: file larger than 64 MiB", path);
            }
            char *nb = sc_alloc_realloc(&sc__text_pool, b, cap * 2);
            if (!nb) {
                sc_alloc_free(&sc__text_pool, b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + len, 1, cap - len - 1, fp);
        if (got == 0)
            break;
        len += got;
    }
    fclose(fp);
    if (!b)
        return SC_ENOMEM;
    b[len] = '\0';
    size_t nl = 1;
    for (size_t i = 0; i < len; i++)
        nl += b[i] == '\n';
    const char **ls = sc_alloc_calloc(&sc__text_pool, nl, sizeof(char *));
    if (!ls) {
        sc_alloc_free(&sc__text_pool, b);
        return SC_ENOMEM;
    }
    size_t k = 0;
    char *p = b;
    while (p && *p) {
        char *e = strchr(p, '\n');
        if (e)
            *e = '\0';
        ls[k++] = p;
        p = e ? e + 1 : NULL;
    }
    *buf = b;
    *lines = ls;
    *n = k;
    return SC_OK;
}

/* Parses the rules of synonym filter `name` (analysis.filter.<name>) with an analyzer made of
 * the tokenizer and the filters before it, as Elasticsearch analyzes synonym rules. */
static sc_status build_synonyms(const json_t *analysis, const char *config_dir, const char *name,
                                const char *path, sc__tokenizer_kind kind,
                                const sc__tokenizer_opts *topts, sc__filter *fs, size_t n,
                                sc_analysis_error *err)
{
    const json_t *defs = analysis ? json_object_get(analysis, "filter") : NULL;
    const json_t *def = defs ? json_object_get(defs, name) : NULL;
    char defpath[PATH_BYTES];
    sc__reg_path_cat(defpath, "analysis.filter.", name);
    if (!def)
        return sc__reg_fail(err, "%s: synonym filter requires either `synonyms` or `synonyms_path`",
                            path);
    bool expand = true, lenient = false, updateable = false;
    SC_TRY(sc__reg_get_bool(def, "expand", defpath, &expand, err));
    SC_TRY(sc__reg_get_bool(def, "lenient", defpath, &lenient, err));
    SC_TRY(sc__reg_get_bool(def, "updateable", defpath, &updateable, err));
    (void)updateable; /* rules are re-read by _reload_search_analyzers either way */
    const json_t *format = json_object_get(def, "format");
    if (format && !(json_is_string(format) && strcmp(json_string_value(format), "solr") == 0))
        return sc__reg_fail(err, "%s.format: only the solr format is supported", defpath);
    const json_t *syns = json_object_get(def, "synonyms");
    const json_t *spath = json_object_get(def, "synonyms_path");
    const char **rules = NULL;
    size_t nr = 0;
    char *filebuf = NULL;
    char sp[PATH_BYTES];
    if (syns) {
        sc__reg_path_cat(sp, defpath, ".synonyms");
        SC_TRY(sc__reg_string_list(syns, sp, &rules, &nr, err));
    } else if (json_is_string(spath)) {
        sc__reg_path_cat(sp, defpath, ".synonyms_path");
        SC_TRY(read_rules_file(config_dir, json_string_value(spath), defpath, &filebuf, &rules, &nr,
                               err));
    } else {
        return sc__reg_fail(err, "%s: synonym filter requires either `synonyms` or `synonyms_path`",
                            defpath);
    }
    sc_analyzer an;
    sc__analyzer_view(&an, kind, topts, fs, n);
    char msg[sizeof(err->message)];
    msg[0] = '\0';
    sc_status st =
        sc__synmap_new(rules, nr, expand, lenient, &an, sp, &fs[n].syn, msg, sizeof(msg));
    sc_alloc_free(&sc__text_pool, rules);
    sc_alloc_free(&sc__text_pool, filebuf);
    if (st == SC_EINVAL)
        return sc__reg_fail(err, "%s", msg);
    return st;
}

/* Resolves a char filter name from analysis.char_filter.<name>. */
static sc_status resolve_charfilter(const json_t *analysis, const char *name, const char *path,
                                    sc__charfilter **out, sc_analysis_error *err)
{
    *out = NULL;
    const json_t *def;
    const char *type;
    char defpath[PATH_BYTES];
    SC_TRY(sc__reg_lookup(analysis, "char_filter", name, defpath, &def, &type, err));
    if (def)
        path = defpath;
    char msg[sizeof(err->message)];
    msg[0] = '\0';
    sc_status st;
    if (strcmp(type, "mapping") == 0) {
        if (def && json_object_get(def, "mappings_path"))
            return sc__reg_fail(err, "%s.mappings_path: not supported (use mappings)", path);
        char mp[PATH_BYTES];
        sc__reg_path_cat(mp, path, ".mappings");
        const json_t *m = def ? json_object_get(def, "mappings") : NULL;
        if (!m)
            return sc__reg_fail(err, "%s: mapping requires either `mappings` or `mappings_path`",
                                path);
        const char **rules;
        size_t n;
        SC_TRY(sc__reg_string_list(m, mp, &rules, &n, err));
        st = sc__charfilter_mapping(rules, n, mp, out, msg, sizeof(msg));
        sc_alloc_free(&sc__text_pool, rules);
    } else if (strcmp(type, "pattern_replace") == 0) {
        const json_t *pat = def ? json_object_get(def, "pattern") : NULL;
        const json_t *rep = def ? json_object_get(def, "replacement") : NULL;
        const json_t *flags = def ? json_object_get(def, "flags") : NULL;
        if (!json_is_string(pat))
            return sc__reg_fail(err, "%s.pattern: expected a regular expression", path);
        if (rep && !json_is_string(rep))
            return sc__reg_fail(err, "%s.replacement: expected a string", path);
        if (flags && !(json_is_string(flags) && json_string_length(flags) == 0))
            return sc__reg_fail(err, "%s.flags: regex flags are not supported", path);
        st = sc__charfilter_pattern(json_string_value(pat), rep ? json_string_value(rep) : "", path,
                                    out, msg, sizeof(msg));
    } else if (strcmp(type, "html_strip") == 0) {
        const char **tags = NULL;
        size_t n = 0;
        char ep[PATH_BYTES];
        sc__reg_path_cat(ep, path, ".escaped_tags");
        SC_TRY(sc__reg_string_list(def ? json_object_get(def, "escaped_tags") : NULL, ep, &tags, &n,
                                   err));
        st = sc__charfilter_html(tags, n, out);
        sc_alloc_free(&sc__text_pool, tags);
    } else {
        return sc__reg_fail(err,
                            "%s: unknown or unsupported char filter [%s] (mapping, "
                            "pattern_replace and html_strip are supported)",
                            path, type);
    }
    if (st == SC_EINVAL)
        return sc__reg_fail(err, "%s", msg);
    return st;
}

static sc_status build_custom(const json_t *analysis, const char *config_dir, const char *name,
                              const json_t *def, const char *path, sc_analyzer **out,
                              sc_analysis_error *err)
{
    const json_t *tok = json_object_get(def, "tokenizer");
    if (!json_is_string(tok))
        return sc__reg_fail(err, "%s.tokenizer: expected a tokenizer name", path);
    char tp[PATH_BYTES];
    sc__reg_path_cat(tp, path, ".tokenizer");
    sc__tokenizer_kind kind = SC__TOK_STANDARD;
    sc__tokenizer_opts topts = {0, 0, 0, 0};
    bool lower = false;
    SC_TRY(resolve_tokenizer(analysis, json_string_value(tok), tp, &kind, &topts, &lower, err));
    const json_t *cfv = json_object_get(def, "char_filter");
    size_t ncf = json_is_array(cfv) ? json_array_size(cfv) : cfv ? 1 : 0;
    if (cfv && !json_is_array(cfv) && !json_is_string(cfv))
        return sc__reg_fail(err, "%s.char_filter: expected an array of char filter names", path);
    if (ncf > MAX_FILTERS)
        return sc__reg_fail(err, "%s.char_filter: more than %d char filters", path, MAX_FILTERS);
    sc__charfilter *cfs[MAX_FILTERS];
    size_t n_cf = 0;
    sc__filter fs[MAX_FILTERS + 1];
    memset(fs, 0, sizeof(fs));
    size_t n = 0;
    sc_status st = SC_OK;
    for (size_t i = 0; i < ncf && st == SC_OK; i++) {
        const json_t *v = json_is_array(cfv) ? json_array_get(cfv, i) : cfv;
        char fp[PATH_BYTES], idx[32];
        snprintf(idx, sizeof(idx), ".char_filter[%zu]", i);
        sc__reg_path_cat(fp, path, idx);
        if (!json_is_string(v)) {
            st = sc__reg_fail(err, "%s: expected a char filter name", fp);
            break;
        }
        st = resolve_charfilter(analysis, json_string_value(v), fp, &cfs[n_cf], err);
        if (st == SC_OK)
            n_cf++;
    }
    if (lower)
        fs[n++].kind = SC__F_LOWERCASE;
    const json_t *filters = json_object_get(def, "filter");
    size_t nf = json_is_array(filters) ? json_array_size(filters) : filters ? 1 : 0;
    if (st == SC_OK && filters && !json_is_array(filters) && !json_is_string(filters))
        st = sc__reg_fail(err, "%s.filter: expected an array of filter names", path);
    if (st == SC_OK && nf > MAX_FILTERS)
        st = sc__reg_fail(err, "%s.filter: more than %d filters", path, MAX_FILTERS);
    for (size_t i = 0; i < nf && st == SC_OK; i++) {
        const json_t *fv = json_is_array(filters) ? json_array_get(filters, i) : filters;
        char fp[PATH_BYTES];
        char idx[32];
        snprintf(idx, sizeof(idx), ".filter[%zu]", i);
        sc__reg_path_cat(fp, path, idx);
        if (!json_is_string(fv)) {
            st = sc__reg_fail(err, "%s: expected a filter name", fp);
            break;
        }
        st = sc__reg_resolve_filter(analysis, json_string_value(fv), fp, &fs[n], err);
        if (st == SC_OK && fs[n].kind == SC__F_SYNONYM)
            st = build_synonyms(analysis, config_dir, json_string_value(fv), fp, kind, &topts, fs,
                                n, err);
        n++; /* fs[n] may hold resources even on failure: freed below */
    }
    if (st != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__filter_fini(&fs[i]);
        for (size_t i = 0; i < n_cf; i++)
            sc__charfilter_free(cfs[i]);
        return st;
    }
    return sc__analyzer_new_ex(name, kind, &topts, fs, n, cfs, n_cf, out);
}

/* Builds a script_chain analyzer; takes stop and keep (either may be NULL) even on failure. */
static sc_status script_analyzer(const char *name, const char *chain, sc__stopset *stop,
                                 sc__stopset *keep, sc_status st, sc_analyzer **out)
{
    sc__filter fs[8];
    memset(fs, 0, sizeof fs);
    size_t n = 0;
    for (const char *c = chain; *c; c++) {
        sc__filter *f = &fs[n];
        switch (*c) {
        case 'l': f->kind = SC__F_LOWERCASE; break;
        case 'd': f->kind = SC__F_LANG_NORM, f->a = SC__N_DECIMAL_DIGIT; break;
        case 's': f->kind = SC__F_STOP, f->stop = stop, stop = NULL; break;
        case 'k': f->kind = SC__F_KEYWORD_MARKER, f->stop = keep, keep = NULL; break;
        case 'A': f->kind = SC__F_LANG_NORM, f->a = SC__N_ARABIC; break;
        case 'P': f->kind = SC__F_LANG_NORM, f->a = SC__N_PERSIAN; break;
        case 'I': f->kind = SC__F_LANG_NORM, f->a = SC__N_INDIC; break;
        case 'H': f->kind = SC__F_LANG_NORM, f->a = SC__N_HINDI; break;
        case 'a': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_ARABIC; break;
        case 'h': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_HINDI; break;
        case 'i': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_INDONESIAN; break;
        case 'G': f->kind = SC__F_LANG_NORM, f->a = SC__N_GREEK_LOWER; break;
        case 'g': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_GREEK; break;
        case 'b': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_BULGARIAN; break;
        case 'c': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_CZECH; break;
        case 'v': f->kind = SC__F_LIGHT_STEM, f->a = SC__LS_LATVIAN; break;
        default: break;
        }
        /* no stop words (_none_) / no stem exclusion: the filter is left out */
        if ((*c == 's' || *c == 'k') && !f->stop)
            continue;
        n++;
    }
    sc__charfilter *cf = NULL;
    if (st == SC_OK && strchr(chain, 'P')) {
        /* PersianAnalyzer reads through PersianCharFilter: zero-width non-joiner -> space */
        static const char *const zwnj[] = {"\\u200C => \\u0020"};
        char msg[64];
        st = sc__charfilter_mapping(zwnj, 1, "persian", &cf, msg, sizeof(msg));
    }
    sc__stopset_free(stop);
    sc__stopset_free(keep);
    if (st != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__filter_fini(&fs[i]);
        return st;
    }
    sc__tokenizer_opts o = {0, 0, 0, 0};
    return sc__analyzer_new_ex(name, SC__TOK_STANDARD, &o, fs, n, cf ? &cf : NULL, cf ? 1 : 0, out);
}

/* Elasticsearch's language analyzers that are, as in Lucene 8.7, the standard tokenizer,
 * lowercase, the language's stop words (`stopwords`), keyword_marker (`stem_exclusion`) and
 * the language's Snowball stemmer (libstemmer). *out NULL (SC_OK) when type is not one. */
static sc_status language_analyzer(const char *name, const char *type, const json_t *def,
                                   const char *path, sc_analyzer **out, sc_analysis_error *err)
{
    *out = NULL;
    bool known = false;
    for (size_t i = N_CORE; i < N_BUILTIN; i++)
        known |= strcmp(type, builtin_names[i]) == 0;
    if (!known)
        return SC_OK;
    const sc__stoplist *list = NULL;
    for (size_t i = 0; i < sc__n_stoplists; i++)
        if (strcmp(sc__stoplists[i].name, type) == 0)
            list = &sc__stoplists[i];
    if (!list)
        return sc__reg_fail(err, "%s: no stop word list for [%s]", path, type);
    char sp[PATH_BYTES];
    sc__filter fs[6];
    memset(fs, 0, sizeof fs);
    size_t n = 0;
    uint32_t light = sc__reg_light_language(type);
    if (light == SC__LS_FRENCH || light == SC__LS_ITALIAN) {
        /* ElisionFilter before LowerCaseFilter, as Lucene's French and Italian analyzers */
        bool fr = light == SC__LS_FRENCH;
        fs[n].kind = SC__F_ELISION;
        SC_TRY(sc__stopset_new(fr ? sc__reg_french_articles : italian_articles,
                               fr ? SC__REG_N_FRENCH_ARTICLES
                                  : sizeof(italian_articles) / sizeof(italian_articles[0]),
                               true, &fs[n].stop));
        n++;
    }
    fs[n++].kind = SC__F_LOWERCASE;
    const json_t *sw = def ? json_object_get(def, "stopwords") : NULL;
    sc__stopset *stop = NULL, *keep = NULL;
    sc__reg_path_cat(sp, path, ".stopwords");
    sc_status sst = sw ? sc__reg_parse_stopwords(sw, sp, false, &stop, err)
                       : sc__stopset_new(list->words, list->n, false, &stop);
    if (sst != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__filter_fini(&fs[i]);
        return sst;
    }
    if (stop) {
        fs[n].kind = SC__F_STOP;
        fs[n++].stop = stop;
    }
    const char **words = NULL;
    size_t nw = 0;
    sc__reg_path_cat(sp, path, ".stem_exclusion");
    sc_status st = sc__reg_string_list(def ? json_object_get(def, "stem_exclusion") : NULL, sp,
                                       &words, &nw, err);
    if (st == SC_OK && nw)
        st = sc__stopset_new(words, nw, false, &keep);
    sc_alloc_free(&sc__text_pool, words);
    const char *chain = script_chain(type);
    if (chain)
        return script_analyzer(name, chain, stop, keep, st, out);
    if (keep) {
        fs[n].kind = SC__F_KEYWORD_MARKER;
        fs[n++].stop = keep;
    }
    if (st == SC_OK && light == SC__LS_GERMAN)
        fs[n++].kind = SC__F_GERMAN_NORM;
    if (st == SC_OK && strcmp(type, "dutch") == 0) {
        /* DutchAnalyzer: StemmerOverrideFilter with its four entries before Snowball */
        char msg[8];
        fs[n].kind = SC__F_STEM_OVERRIDE;
        st = sc__stem_override_init(&fs[n++], dutch_overrides,
                                    sizeof(dutch_overrides) / sizeof(dutch_overrides[0]), path, msg,
                                    sizeof(msg));
    }
    if (st == SC_OK && light) {
        fs[n].kind = SC__F_LIGHT_STEM;
        fs[n++].a = light;
    } else if (st == SC_OK) {
        st = sc__reg_snowball_filter(type, &fs[n++]);
    }
    if (st != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__filter_fini(&fs[i]);
        return st;
    }
    return sc__analyzer_new(name, SC__TOK_STANDARD, 0, fs, n, out);
}

static sc_status build_analyzer(const json_t *analysis, const char *config_dir, const char *name,
                                const json_t *def, sc_analyzer **out, sc_analysis_error *err)
{
    char path[PATH_BYTES];
    sc__reg_path_cat(path, "analysis.analyzer.", name);
    if (!json_is_object(def))
        return sc__reg_fail(err, "%s: expected an object", path);
    const json_t *t = json_object_get(def, "type");
    if (t && !json_is_string(t))
        return sc__reg_fail(err, "%s.type: expected a string", path);
    const char *type = t ? json_string_value(t) : "custom";
    if (strcmp(type, "custom") == 0)
        return build_custom(analysis, config_dir, name, def, path, out, err);
    sc__filter fs[4];
    memset(fs, 0, sizeof(fs));
    char sp[PATH_BYTES];
    sc__reg_path_cat(sp, path, ".stopwords");
    const json_t *sw = json_object_get(def, "stopwords");
    if (json_object_get(def, "stopwords_path"))
        return sc__reg_fail(err, "%s.stopwords_path: not supported", path);
    SC_TRY(language_analyzer(name, type, def, path, out, err));
    if (*out)
        return SC_OK;
    if (strcmp(type, "standard") == 0) {
        uint32_t max_len = 0;
        SC_TRY(sc__reg_get_max_len(def, path, &max_len, err));
        size_t n = 0;
        fs[n++].kind = SC__F_LOWERCASE;
        if (sw) {
            sc__stopset *s;
            SC_TRY(sc__reg_parse_stopwords(sw, sp, false, &s, err));
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
            return sc__reg_fail(err, "%s.stem_exclusion: not supported", path);
        sc__stopset *s;
        SC_TRY(sc__reg_parse_stopwords(sw, sp, false, &s, err));
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
    return sc__reg_fail(err, "%s.type: unknown or unsupported analyzer type [%s]", path, type);
}

/* analysis.normalizer.<name>: keyword tokenizer + per-character filters. */
static sc_status build_normalizer(const json_t *analysis, const char *name, const json_t *def,
                                  sc_analyzer **out, sc_analysis_error *err)
{
    char path[PATH_BYTES];
    sc__reg_path_cat(path, "analysis.normalizer.", name);
    if (!json_is_object(def))
        return sc__reg_fail(err, "%s: expected an object", path);
    const json_t *t = json_object_get(def, "type");
    if (t && !(json_is_string(t) && strcmp(json_string_value(t), "custom") == 0))
        return sc__reg_fail(err, "%s.type: only custom normalizers are supported", path);
    const json_t *cf = json_object_get(def, "char_filter");
    if (cf && !(json_is_array(cf) && json_array_size(cf) == 0))
        return sc__reg_fail(err, "%s.char_filter: char filters are not supported", path);
    const json_t *filters = json_object_get(def, "filter");
    if (filters && !json_is_array(filters))
        return sc__reg_fail(err, "%s.filter: expected an array of filter names", path);
    size_t nf = filters ? json_array_size(filters) : 0;
    if (nf > MAX_FILTERS)
        return sc__reg_fail(err, "%s.filter: more than %d filters", path, MAX_FILTERS);
    sc__filter fs[MAX_FILTERS];
    size_t n = 0;
    sc_status st = SC_OK;
    for (size_t i = 0; i < nf && st == SC_OK; i++) {
        const json_t *fv = json_array_get(filters, i);
        char fp[PATH_BYTES], idx[32];
        snprintf(idx, sizeof(idx), ".filter[%zu]", i);
        sc__reg_path_cat(fp, path, idx);
        if (!json_is_string(fv)) {
            st = sc__reg_fail(err, "%s: expected a filter name", fp);
            break;
        }
        st = sc__reg_resolve_filter(analysis, json_string_value(fv), fp, &fs[n], err);
        if (st != SC_OK)
            break;
        n++;
        if (fs[n - 1].kind != SC__F_LOWERCASE && fs[n - 1].kind != SC__F_ASCIIFOLD)
            st = sc__reg_fail(err, "%s: filter [%s] cannot be used in a normalizer", fp,
                              json_string_value(fv));
    }
    if (st != SC_OK) {
        for (size_t i = 0; i < n; i++)
            sc__filter_fini(&fs[i]);
        return st;
    }
    return sc__analyzer_new(name, SC__TOK_KEYWORD, 0, fs, n, out);
}

static void builtin_set_free(builtin_set *b)
{
    if (!b)
        return;
    sc_analyzer_free(b->lowercase_normalizer);
    for (size_t i = 0; i < b->n_sayt; i++)
        sc_analyzer_free(b->sayt[i]);
    for (size_t i = 0; i < N_BUILTIN; i++)
        sc_analyzer_free(b->builtin[i]);
    sc_alloc_free(&sc__text_pool, b);
}

/* A reference to the shared built-in set, building it when no registry holds it. */
static sc_status builtin_set_ref(const builtin_set **out, sc_analysis_error *err)
{
    pthread_mutex_lock(&builtins_mu);
    sc_status st = SC_OK;
    if (!builtins) {
        builtin_set *b = sc_alloc_calloc(&sc__text_pool, 1, sizeof *b);
        st = b ? SC_OK : SC_ENOMEM;
        for (size_t i = 0; i < N_BUILTIN && st == SC_OK; i++)
            st = i < N_CORE ? sc_analyzer_builtin(builtin_names[i], &b->builtin[i])
                            : language_analyzer(builtin_names[i], builtin_names[i], NULL,
                                                builtin_names[i], &b->builtin[i], err);
        if (st == SC_OK) {
            sc__filter lower;
            memset(&lower, 0, sizeof(lower));
            lower.kind = SC__F_LOWERCASE;
            st = sc__analyzer_new("lowercase", SC__TOK_KEYWORD, 0, &lower, 1,
                                  &b->lowercase_normalizer);
        }
        for (size_t i = 0; st == SC_OK && i < N_BUILTIN; i++)
            st = add_sayt(b->sayt, &b->n_sayt, b->builtin[i]);
        if (st == SC_OK)
            builtins = b;
        else
            builtin_set_free(b);
    }
    if (st == SC_OK) {
        builtins->refs++;
        *out = builtins;
    }
    pthread_mutex_unlock(&builtins_mu);
    return st;
}

static void builtin_set_unref(const builtin_set *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&builtins_mu);
    if (--builtins->refs == 0) {
        builtin_set_free(builtins);
        builtins = NULL;
    }
    pthread_mutex_unlock(&builtins_mu);
}

void sc_analyzer_registry_free(sc_analyzer_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_normalizers; i++)
        sc_analyzer_free(r->normalizers[i]);
    sc_alloc_free(&sc__text_pool, r->normalizers);
    for (size_t i = 0; i < r->n_sayt; i++)
        sc_analyzer_free(r->sayt[i]); /* before the analyzers they borrow */
    sc_alloc_free(&sc__text_pool, r->sayt);
    for (size_t i = 0; i < r->n_custom; i++)
        sc_analyzer_free(r->custom[i]);
    sc_alloc_free(&sc__text_pool, r->custom);
    builtin_set_unref(r->shared);
    sc_alloc_free(&sc__text_pool, r);
}

sc_status sc_analyzer_registry_new(const json_t *analysis, sc_analyzer_registry **out,
                                   sc_analysis_error *err)
{
    return sc_analyzer_registry_new_dir(analysis, NULL, out, err);
}

sc_status sc_analyzer_registry_new_dir(const json_t *analysis, const char *config_dir,
                                       sc_analyzer_registry **out, sc_analysis_error *err)
{
    *out = NULL;
    if (err)
        err->message[0] = '\0';
    if (analysis && !json_is_object(analysis))
        return sc__reg_fail(err, "analysis: expected an object");
    sc_analyzer_registry *r = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*r));
    if (!r)
        return SC_ENOMEM;
    sc_status st = builtin_set_ref(&r->shared, err);
    const json_t *defs = analysis ? json_object_get(analysis, "analyzer") : NULL;
    if (st == SC_OK && defs && !json_is_object(defs))
        st = sc__reg_fail(err, "analysis.analyzer: expected an object");
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
            st = build_analyzer(analysis, config_dir, name, def, &r->custom[r->n_custom], err);
            if (st == SC_OK)
                r->n_custom++;
        }
    }
    const json_t *ndefs = analysis ? json_object_get(analysis, "normalizer") : NULL;
    if (st == SC_OK && ndefs && !json_is_object(ndefs))
        st = sc__reg_fail(err, "analysis.normalizer: expected an object");
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
    if (st == SC_OK && r->n_custom) {
        r->sayt = sc_alloc_calloc(&sc__text_pool, 6 * r->n_custom, sizeof(sc_analyzer *));
        if (!r->sayt)
            st = SC_ENOMEM;
        for (size_t i = 0; st == SC_OK && i < r->n_custom; i++)
            st = add_sayt(r->sayt, &r->n_sayt, r->custom[i]);
    }
    if (st != SC_OK) {
        sc_analyzer_registry_free(r);
        return st;
    }
    r->dflt = sc_analyzer_registry_get(r, sc_slice_cstr("default"));
    if (!r->dflt)
        r->dflt = r->shared->builtin[0];
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
            return r->shared->builtin[i];
    if (memchr(name.ptr, '#', name.len)) {
        for (size_t i = 0; i < r->n_sayt; i++)
            if (sc_slice_eq_cstr(name, sc_analyzer_name(r->sayt[i])))
                return r->sayt[i];
        for (size_t i = 0; i < r->shared->n_sayt; i++)
            if (sc_slice_eq_cstr(name, sc_analyzer_name(r->shared->sayt[i])))
                return r->shared->sayt[i];
    }
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
        return r->shared->lowercase_normalizer;
    return NULL;
}
