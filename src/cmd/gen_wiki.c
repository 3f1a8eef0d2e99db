/* `scry gen wiki`: Wikipedia-like documents with the SearchBench schema. Body text is drawn
 * from an English unigram + bigram model derived from Debian-shipped text (bench/gen/vocab.txt.gz);
 * the luceneutil query terms and phrases (bench/gen/terms.txt) are controlled to their real
 * document frequencies: in each document a managed term is present with probability df (its
 * natural occurrences are kept, or one or more are inserted) and absent otherwise (its natural
 * occurrences are replaced). Articles have log-normal lengths and are cut into chunks of at
 * most 1,024 characters like luceneutil's wikimedium line docs; each chunk is one document. */
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

#include "base/vec.h"
#include "cmd/gen_internal.h"

/* natural text per chunk; controlled terms and phrases add ~150 characters, so bodies average
 * ~1 KB and rarely exceed the 1,024 of luceneutil's chunks */
#define MAX_CHUNK_CHARS 880
#define MAX_WORDS 2048
#define BIGRAM_FOLLOW 0.55 /* probability of following a bigram from the previous word */

typedef struct succ_list {
    uint32_t start, len; /* into succ_ids/succ_cum */
} succ_list;

typedef struct phrase {
    uint32_t first; /* into phrase_words */
    uint16_t len;
    uint16_t slop;
    double p;
    uint64_t next_doc;
} phrase;

typedef struct wiki {
    /* words: vocabulary first, then managed terms missing from it */
    char **word;
    uint32_t *word_len;
    size_t n_words, n_vocab, cap_words;
    /* alias table over the vocabulary's unigram counts */
    double *alias_p;
    uint32_t *alias_k;
    succ_list *succ;
    uint32_t *succ_ids;
    double *succ_cum;
    size_t n_succ;
    /* managed terms */
    int32_t *managed; /* per word: managed index or -1 */
    uint32_t *m_word;
    double *m_p, *m_extra;
    uint64_t *m_next, *m_present, *m_seen;
    size_t n_managed;
    phrase *ph;
    uint32_t *phrase_words;
    size_t n_phrases, n_phrase_words;
    /* facet tables */
    double *zipf_cdf[6];
    uint32_t *zipf_perm[6];
} wiki;

static const uint32_t ZIPF_SIZES[6] = {10, 100, 1000, 10000, 100000, 1000000};
static const char *const ZIPF_FIELDS[6] = {"cat_s",    "cat100_s",  "cat1k_s",
                                           "cat10k_s", "cat100k_s", "cat1m_s"};
static const char *const ZIPF_PREFIX[6] = {"cat-",    "cat100-",  "cat1k-",
                                           "cat10k-", "cat100k-", "cat1m-"};

static int add_word(wiki *w, const char *s, size_t n)
{
    if (w->n_words == w->cap_words) {
        size_t cap = w->cap_words ? w->cap_words * 2 : 65536;
        char **nw = realloc(w->word, cap * sizeof(*nw));
        if (!nw)
            return -1;
        w->word = nw;
        uint32_t *nl = realloc(w->word_len, cap * sizeof(*nl));
        if (!nl)
            return -1;
        w->word_len = nl;
        w->cap_words = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return -1;
    memcpy(c, s, n);
    c[n] = 0;
    w->word[w->n_words] = c;
    w->word_len[w->n_words] = (uint32_t)n;
    return (int)w->n_words++;
}

/* Word id by linear-probing hash lookup, built once over all words. */
typedef struct word_index {
    int32_t *slot;
    size_t mask;
} word_index;

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int32_t index_find(const word_index *ix, const wiki *w, const char *s, size_t n)
{
    for (size_t i = hash_str(s, n) & ix->mask;; i = (i + 1) & ix->mask) {
        int32_t id = ix->slot[i];
        if (id < 0)
            return -1;
        if (w->word_len[id] == n && memcmp(w->word[id], s, n) == 0)
            return id;
    }
}

static void index_add(word_index *ix, const wiki *w, int32_t id)
{
    size_t i = hash_str(w->word[id], w->word_len[id]) & ix->mask;
    while (ix->slot[i] >= 0)
        i = (i + 1) & ix->mask;
    ix->slot[i] = id;
}

static int build_alias(wiki *w, const double *cnt, size_t n)
{
    w->alias_p = malloc(n * sizeof(double));
    w->alias_k = malloc(n * sizeof(uint32_t));
    uint32_t *small = malloc(n * sizeof(uint32_t)), *large = malloc(n * sizeof(uint32_t));
    double *q = malloc(n * sizeof(double));
    if (!w->alias_p || !w->alias_k || !small || !large || !q)
        return -1;
    double tot = 0;
    for (size_t i = 0; i < n; i++)
        tot += cnt[i];
    size_t ns = 0, nl = 0;
    for (size_t i = 0; i < n; i++) {
        q[i] = cnt[i] * (double)n / tot;
        if (q[i] < 1.0)
            small[ns++] = (uint32_t)i;
        else
            large[nl++] = (uint32_t)i;
    }
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        w->alias_p[s] = q[s];
        w->alias_k[s] = l;
        q[l] -= 1.0 - q[s];
        if (q[l] < 1.0) {
            nl--;
            small[ns++] = l;
        }
    }
    while (nl) {
        uint32_t l = large[--nl];
        w->alias_p[l] = 1.0;
        w->alias_k[l] = l;
    }
    while (ns) {
        uint32_t s = small[--ns];
        w->alias_p[s] = 1.0;
        w->alias_k[s] = s;
    }
    free(small);
    free(large);
    free(q);
    return 0;
}

static uint32_t sample_unigram(const wiki *w, gen_rng *r)
{
    uint32_t i = (uint32_t)gen_below(r, w->n_vocab);
    return gen_unit(r) < w->alias_p[i] ? i : w->alias_k[i];
}

static uint32_t sample_next(const wiki *w, gen_rng *r, int64_t prev)
{
    if (prev >= 0 && (size_t)prev < w->n_vocab && w->succ[prev].len &&
        gen_unit(r) < BIGRAM_FOLLOW) {
        const succ_list *s = &w->succ[prev];
        double u = gen_unit(r) * w->succ_cum[s->start + s->len - 1];
        uint32_t lo = s->start, hi = s->start + s->len - 1;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (w->succ_cum[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        return w->succ_ids[lo];
    }
    return sample_unigram(w, r);
}

static int load_vocab(wiki *w, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/vocab.txt.gz", dir);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "scry gen wiki: cannot open %s (use --data DIR)\n", path);
        return -1;
    }
    char line[512];
    SC_VEC(double) cnt = {0};
    SC_VEC(uint32_t) ba = {0};
    SC_VEC(uint32_t) bb = {0};
    SC_VEC(double) bc = {0};
    int rc = 0;
    while (gzgets(f, line, sizeof(line))) {
        size_t n = strcspn(line, "\n");
        line[n] = 0;
        if (line[0] == 'W' && line[1] == ' ') {
            char *sp = strrchr(line + 2, ' ');
            if (!sp || add_word(w, line + 2, (size_t)(sp - line - 2)) < 0 ||
                sc_vec_push(&cnt, atof(sp + 1)) != SC_OK)
                rc = -1;
        } else if (line[0] == 'B' && line[1] == ' ') {
            unsigned a, b;
            double c;
            if (sscanf(line + 2, "%u %u %lf", &a, &b, &c) == 3 &&
                (sc_vec_push(&ba, a) != SC_OK || sc_vec_push(&bb, b) != SC_OK ||
                 sc_vec_push(&bc, c) != SC_OK))
                rc = -1;
        }
    }
    gzclose(f);
    w->n_vocab = w->n_words;
    if (rc == 0 && w->n_vocab == 0)
        rc = -1;
    if (rc == 0)
        rc = build_alias(w, cnt.ptr, cnt.len);
    w->succ = calloc(w->n_vocab, sizeof(succ_list));
    w->succ_ids = malloc((ba.len + 1) * sizeof(uint32_t));
    w->succ_cum = malloc((ba.len + 1) * sizeof(double));
    if (rc == 0 && (!w->succ || !w->succ_ids || !w->succ_cum))
        rc = -1;
    /* bigram lines come grouped by the first word */
    for (size_t i = 0; rc == 0 && i < ba.len; i++) {
        if (ba.ptr[i] >= w->n_vocab || bb.ptr[i] >= w->n_vocab)
            continue;
        succ_list *s = &w->succ[ba.ptr[i]];
        if (s->len == 0)
            s->start = (uint32_t)w->n_succ;
        if (s->start + s->len != w->n_succ)
            continue; /* not grouped: ignore */
        double prev = s->len ? w->succ_cum[w->n_succ - 1] : 0;
        w->succ_ids[w->n_succ] = bb.ptr[i];
        w->succ_cum[w->n_succ] = prev + bc.ptr[i];
        w->n_succ++;
        s->len++;
    }
    sc_vec_free(&cnt);
    sc_vec_free(&ba);
    sc_vec_free(&bb);
    sc_vec_free(&bc);
    return rc;
}

static int load_terms(wiki *w, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/terms.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "scry gen wiki: cannot open %s\n", path);
        return -1;
    }
    word_index ix;
    size_t cap = 1;
    while (cap < (w->n_words + 8192) * 2)
        cap <<= 1;
    ix.slot = malloc(cap * sizeof(int32_t));
    if (!ix.slot) {
        fclose(f);
        return -1;
    }
    memset(ix.slot, 0xff, cap * sizeof(int32_t));
    ix.mask = cap - 1;
    for (size_t i = 0; i < w->n_words; i++)
        index_add(&ix, w, (int32_t)i);
    char line[1024];
    SC_VEC(uint32_t) mw = {0};
    SC_VEC(double) mp = {0};
    SC_VEC(phrase) ph = {0};
    SC_VEC(uint32_t) pw = {0};
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        if (!tok || (strcmp(tok, "T") != 0 && strcmp(tok, "P") != 0))
            continue;
        bool is_phrase = tok[0] == 'P';
        char *df = strtok_r(NULL, " ", &save);
        char *slop = is_phrase ? strtok_r(NULL, " ", &save) : NULL;
        if (!df || (is_phrase && !slop))
            continue;
        phrase p = {(uint32_t)pw.len, 0, (uint16_t)(slop ? atoi(slop) : 0), atof(df) / 1e6, 0};
        for (char *t; (t = strtok_r(NULL, " ", &save));) {
            int32_t id = index_find(&ix, w, t, strlen(t));
            if (id < 0) {
                id = add_word(w, t, strlen(t));
                if (id < 0) {
                    rc = -1;
                    break;
                }
                if (w->n_words * 2 > cap) {
                    rc = -1; /* index full: cannot happen with the slack above */
                    break;
                }
                index_add(&ix, w, id);
            }
            if (!is_phrase) {
                if (sc_vec_push(&mw, (uint32_t)id) != SC_OK || sc_vec_push(&mp, p.p) != SC_OK)
                    rc = -1;
                break;
            }
            if (sc_vec_push(&pw, (uint32_t)id) != SC_OK)
                rc = -1;
            p.len++;
        }
        if (is_phrase && rc == 0 && p.len > 0 && sc_vec_push(&ph, p) != SC_OK)
            rc = -1;
    }
    fclose(f);
    free(ix.slot);
    w->managed = malloc(w->n_words * sizeof(int32_t));
    w->m_extra = malloc((mw.len + 1) * sizeof(double));
    w->m_next = calloc(mw.len + 1, sizeof(uint64_t));
    w->m_present = calloc(mw.len + 1, sizeof(uint64_t));
    w->m_seen = calloc(mw.len + 1, sizeof(uint64_t));
    if (rc != 0 || !w->managed || !w->m_extra || !w->m_next || !w->m_present || !w->m_seen)
        return -1;
    memset(w->managed, 0xff, w->n_words * sizeof(int32_t));
    for (size_t i = 0; i < mw.len; i++) {
        w->managed[mw.ptr[i]] = (int32_t)i;
        /* Extra occurrences when the term must be inserted: frequent terms repeat more. */
        w->m_extra[i] = mp.ptr[i] > 0.3 ? 0.5 : mp.ptr[i] > 0.03 ? 0.3 : 0.15;
    }
    w->m_word = mw.ptr;
    w->m_p = mp.ptr;
    w->n_managed = mw.len;
    w->ph = ph.ptr;
    w->n_phrases = ph.len;
    w->phrase_words = pw.ptr;
    w->n_phrase_words = pw.len;
    return 0;
}

static int build_zipf(wiki *w, gen_rng *r)
{
    for (int k = 0; k < 6; k++) {
        uint32_t n = ZIPF_SIZES[k];
        double *cdf = malloc(n * sizeof(double));
        uint32_t *perm = malloc(n * sizeof(uint32_t));
        if (!cdf || !perm)
            return -1;
        double tot = 0;
        for (uint32_t i = 0; i < n; i++) {
            tot += pow((double)(i + 1), -1.15);
            cdf[i] = tot;
        }
        for (uint32_t i = 0; i < n; i++) {
            cdf[i] /= tot;
            perm[i] = i;
        }
        cdf[n - 1] = 1.0;
        /* value names are a shuffle of the frequency ranks, so dictionary order is not
         * frequency order */
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = (uint32_t)gen_below(r, i + 1);
            uint32_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        w->zipf_cdf[k] = cdf;
        w->zipf_perm[k] = perm;
    }
    return 0;
}

static uint32_t sample_zipf(const wiki *w, int k, gen_rng *r)
{
    double u = gen_unit(r);
    const double *cdf = w->zipf_cdf[k];
    uint32_t lo = 0, hi = ZIPF_SIZES[k] - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid] >= u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return w->zipf_perm[k][lo];
}

static void wiki_free(wiki *w)
{
    for (size_t i = 0; i < w->n_words; i++)
        free(w->word[i]);
    free(w->word);
    free(w->word_len);
    free(w->alias_p);
    free(w->alias_k);
    free(w->succ);
    free(w->succ_ids);
    free(w->succ_cum);
    free(w->managed);
    free(w->m_word);
    free(w->m_p);
    free(w->m_extra);
    free(w->m_next);
    free(w->m_present);
    free(w->m_seen);
    free(w->ph);
    free(w->phrase_words);
    for (int k = 0; k < 6; k++) {
        free(w->zipf_cdf[k]);
        free(w->zipf_perm[k]);
    }
}

static void insert_at(uint32_t *words, size_t *n, size_t pos, uint32_t id)
{
    if (*n >= MAX_WORDS)
        return;
    memmove(words + pos + 1, words + pos, (*n - pos) * sizeof(*words));
    words[pos] = id;
    (*n)++;
}

/* Applies the managed-term and phrase frequencies to one document's words. A phrase chosen
 * for the document makes its words present; the remaining presence of each word is drawn with
 * the probability that keeps its total document frequency at the target (see
 * adjust_for_phrases). */
static void control_terms(wiki *w, gen_rng *r, uint64_t doc, uint32_t *words, size_t *n)
{
    uint64_t mark = doc + 1; /* 0 means never */
    for (size_t p = 0; p < w->n_phrases; p++) {
        phrase *ph = &w->ph[p];
        if (ph->next_doc != doc)
            continue;
        for (uint16_t j = 0; j < ph->len; j++) {
            int32_t m = w->managed[w->phrase_words[ph->first + j]];
            if (m >= 0)
                w->m_present[m] = w->m_seen[m] = mark;
        }
    }
    for (size_t m = 0; m < w->n_managed; m++) {
        if (w->m_next[m] == doc) {
            w->m_present[m] = mark;
            w->m_next[m] = doc + 1 + gen_geometric(r, w->m_p[m]);
            if (w->m_next[m] < doc)
                w->m_next[m] = UINT64_MAX;
        }
    }
    for (size_t i = 0; i < *n; i++) {
        int32_t m = w->managed[words[i]];
        for (int tries = 0; m >= 0 && w->m_present[m] != mark && tries < 16; tries++) {
            words[i] = sample_unigram(w, r);
            m = w->managed[words[i]];
        }
        if (m >= 0 && w->m_present[m] != mark) {
            memmove(words + i, words + i + 1, (*n - i - 1) * sizeof(*words));
            (*n)--;
            i--;
            continue;
        }
        if (m >= 0)
            w->m_seen[m] = mark;
    }
    for (size_t m = 0; m < w->n_managed; m++) {
        if (w->m_present[m] == mark && w->m_seen[m] != mark) {
            uint64_t k = 1 + gen_geometric(r, 1.0 - w->m_extra[m]);
            for (uint64_t j = 0; j < k && j < 8; j++)
                insert_at(words, n, gen_below(r, *n + 1), w->m_word[m]);
        }
    }
    for (size_t p = 0; p < w->n_phrases; p++) {
        phrase *ph = &w->ph[p];
        if (ph->next_doc != doc)
            continue;
        ph->next_doc = doc + 1 + gen_geometric(r, ph->p);
        size_t pos = gen_below(r, *n + 1);
        for (uint16_t j = 0; j < ph->len; j++) {
            if (j > 0 && ph->slop > 0 && gen_unit(r) < 0.5) {
                /* a gap word that cannot disturb a managed term's frequency */
                uint32_t gap = sample_unigram(w, r);
                for (int tries = 0; w->managed[gap] >= 0 && tries < 16; tries++)
                    gap = sample_unigram(w, r);
                if (w->managed[gap] < 0)
                    insert_at(words, n, pos++, gap);
            }
            insert_at(words, n, pos++, w->phrase_words[ph->first + j]);
        }
    }
}

/* Phrases make their words present with probability Q = 1 - prod(1 - q_phrase); the word's
 * own presence probability becomes (p - Q) / (1 - Q) so that 1 - (1 - p')(1 - Q) = p. Where
 * the phrases alone exceed p the word's frequency is Q (a few very common words). */
static void adjust_for_phrases(wiki *w)
{
    double *keep = malloc((w->n_managed + 1) * sizeof(double));
    if (!keep)
        return;
    for (size_t m = 0; m < w->n_managed; m++)
        keep[m] = 1.0;
    for (size_t p = 0; p < w->n_phrases; p++) {
        const phrase *ph = &w->ph[p];
        for (uint16_t j = 0; j < ph->len; j++) {
            int32_t m = w->managed[w->phrase_words[ph->first + j]];
            if (m >= 0)
                keep[m] *= 1.0 - ph->p;
        }
    }
    for (size_t m = 0; m < w->n_managed; m++) {
        double q = 1.0 - keep[m];
        double p = q >= w->m_p[m] ? 0.0 : (w->m_p[m] - q) / (1.0 - q);
        w->m_p[m] = p;
    }
    free(keep);
}

/* Writes the words as text with sentences: capitals, commas, full stops. */
static void put_body(const wiki *w, gen_rng *r, gen_out *o, const uint32_t *words, size_t n)
{
    size_t until_stop = 6 + gen_below(r, 20);
    bool cap = true;
    for (size_t i = 0; i < n; i++) {
        const char *s = w->word[words[i]];
        size_t len = w->word_len[words[i]];
        if (cap && s[0] >= 'a' && s[0] <= 'z') {
            char c = (char)(s[0] - 'a' + 'A');
            gen_put(o, &c, 1);
            gen_put_escaped(o, s + 1, len - 1);
        } else {
            gen_put_escaped(o, s, len);
        }
        cap = false;
        if (i + 1 == n) {
            gen_put(o, ".", 1);
        } else if (--until_stop == 0) {
            gen_put(o, ". ", 2);
            until_stop = 6 + gen_below(r, 20);
            cap = true;
        } else if (gen_below(r, 14) == 0) {
            gen_put(o, ", ", 2);
        } else {
            gen_put(o, " ", 1);
        }
    }
}

static void put_fields(const wiki *w, gen_rng *r, gen_out *o, uint64_t doc)
{
    for (int k = 0; k < 6; k++)
        gen_printf(o, ",\"%s\":\"%s%u\"", ZIPF_FIELDS[k], ZIPF_PREFIX[k], sample_zipf(w, k, r));
    gen_printf(o, ",\"catid_s\":\"catid-%u\"", (unsigned)gen_below(r, 500000));
    gen_printf(o, ",\"catu2m_s\":\"catu2m-%u\"", (unsigned)gen_below(r, 2000000));
    /* 2020-01-01T00:00:00Z plus up to five years and a day */
    time_t t = (time_t)1577836800 + (time_t)gen_below(r, 5ull * 365 * 86400 + 86400);
    struct tm tm;
    gmtime_r(&t, &tm);
    gen_printf(o, ",\"date_dt\":\"%04d-%02d-%02dT%02d:%02d:%02dZ\"", tm.tm_year + 1900,
               tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    gen_printf(o, ",\"price_i\":%u", (unsigned)gen_below(r, 100001));
    /* a 32-bit permutation of the ordinal: distinct values, not in input order */
    gen_printf(o, ",\"sort_i\":%u",
               (unsigned)((doc * 0x9E3779B1ull + 0x85EBCA77ull) & 0xFFFFFFFFu));
    uint32_t basis = (uint32_t)gen_below(r, 100000);
    static const char *const sel[] = {"sel99_s", "sel90_s", "sel50_s", "sel10_s",
                                      "sel1_s",  "sel01_s", "sel001_s"};
    static const uint32_t thr[] = {99000, 90000, 50000, 10000, 1000, 100, 10};
    for (int i = 0; i < 7; i++)
        gen_printf(o, ",\"%s\":\"%s\"", sel[i], basis < thr[i] ? "t" : "f");
}

int sc__gen_wiki(const gen_opts *g, gen_out *o)
{
    wiki w = {0};
    gen_rng r;
    gen_rng_seed(&r, g->seed);
    uint32_t *words = malloc((MAX_WORDS + 1) * sizeof(uint32_t));
    if (!words || load_vocab(&w, g->data_dir) != 0 || load_terms(&w, g->data_dir) != 0 ||
        build_zipf(&w, &r) != 0) {
        fprintf(stderr, "scry gen wiki: cannot load the vocabulary\n");
        free(words);
        wiki_free(&w);
        return 1;
    }
    adjust_for_phrases(&w);
    for (size_t m = 0; m < w.n_managed; m++)
        w.m_next[m] = w.m_p[m] > 0 ? gen_geometric(&r, w.m_p[m]) : UINT64_MAX;
    for (size_t p = 0; p < w.n_phrases; p++)
        w.ph[p].next_doc = gen_geometric(&r, w.ph[p].p);
    char title[256];
    size_t title_len = 0;
    double article_left = 0;
    for (uint64_t doc = 0; doc < g->docs && !o->failed; doc++) {
        if (article_left < 40) {
            /* a new article: median ~2.2 KB, long tail */
            article_left = gen_lognormal(&r, 2200, 1.0);
            if (article_left > 200000)
                article_left = 200000;
            title_len = 0;
            size_t nt = 1 + gen_below(&r, 4);
            for (size_t i = 0; i < nt; i++) {
                uint32_t id = 50 + (uint32_t)gen_below(&r, 20000);
                const char *s = w.word[id];
                size_t len = w.word_len[id];
                if (title_len + len + 2 >= sizeof(title))
                    break;
                if (title_len)
                    title[title_len++] = ' ';
                memcpy(title + title_len, s, len);
                if (title[title_len] >= 'a' && title[title_len] <= 'z')
                    title[title_len] = (char)(title[title_len] - 'a' + 'A');
                title_len += len;
            }
        }
        double limit = article_left < MAX_CHUNK_CHARS ? article_left : MAX_CHUNK_CHARS;
        size_t n = 0, chars = 0;
        int64_t prev = -1;
        while (n < MAX_WORDS / 2) {
            uint32_t id = sample_next(&w, &r, prev);
            if ((double)(chars + w.word_len[id] + 1) > limit && n > 0)
                break;
            words[n++] = id;
            chars += w.word_len[id] + 1;
            prev = id;
        }
        article_left -= (double)chars;
        control_terms(&w, &r, doc, words, &n);
        gen_action(o, g);
        gen_printf(o, "{\"id\":\"%llu\",\"title\":\"", (unsigned long long)doc);
        gen_put_escaped(o, title, title_len);
        gen_puts(o, "\",\"body\":\"");
        put_body(&w, &r, o, words, n);
        gen_puts(o, "\"");
        put_fields(&w, &r, o, doc);
        gen_puts(o, "}\n");
    }
    free(words);
    wiki_free(&w);
    return o->failed ? 1 : 0;
}
