/* scry's side of the highlighter oracle: reads cases.tsv (see HighlightOracle.java), runs
 * sc_highlight_field with Lucene's setup (standard analyzer, plain sentence passages:
 * fragment_size 0, number_of_fragments = the case's max passages, <em> tags) and prints one
 * line per case, snippets joined with " ## ". With a second argument it writes there, per case,
 * the ICU sentence boundaries scry uses, in UTF-16 offsets, for the Java side to use too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include "search/highlight.h"

#define S(x) sc_slice_cstr(x)

static sc_query *clause(sc_arena *a, char *s)
{
    char *c = strchr(s, ':');
    *c = '\0';
    const char *k = s, *arg = c + 1;
    sc_slice f = S("body");
    if (!strcmp(k, "term"))
        return sc_query_term(a, f, S(arg));
    if (!strcmp(k, "prefix"))
        return sc_query_prefix(a, f, S(arg));
    if (!strcmp(k, "wildcard"))
        return sc_query_wildcard(a, f, S(arg));
    if (!strcmp(k, "fuzzy"))
        return sc_query_fuzzy(a, f, S(arg), 1, 0, 50, true);
    /* phrase: space-separated words at positions 0, 1, ... */
    sc_slice w[16];
    uint32_t pos[16];
    size_t n = 0;
    for (char *t = strtok(c + 1, " "); t && n < 16; t = strtok(NULL, " ")) {
        w[n] = S(t);
        pos[n] = (uint32_t)n;
        n++;
    }
    return sc_query_phrase(a, f, w, pos, n, 0);
}

static sc_query *parse(sc_arena *a, char *spec)
{
    if (!strstr(spec, " | "))
        return clause(a, spec);
    sc_query *b = sc_query_bool(a);
    for (char *p = spec;;) {
        char *bar = strstr(p, " | ");
        if (bar)
            *bar = '\0';
        if (sc_query_bool_add(a, b, SC_OCCUR_SHOULD, clause(a, p)) != SC_OK)
            exit(2);
        if (!bar)
            break;
        p = bar + 3;
    }
    return b;
}

/* Prints the ICU sentence boundaries of text as UTF-16 offsets. */
static void print_breaks(FILE *f, const char *text, size_t len)
{
    UErrorCode err = U_ZERO_ERROR;
    UText *ut = utext_openUTF8(NULL, text, (int64_t)len, &err);
    UBreakIterator *bi = ubrk_open(UBRK_SENTENCE, "", NULL, 0, &err);
    ubrk_setUText(bi, ut, &err);
    if (U_FAILURE(err))
        exit(2);
    size_t byte = 0, u16 = 0;
    for (int32_t b = ubrk_first(bi); b != UBRK_DONE; b = ubrk_next(bi)) {
        for (; byte < (size_t)b; byte++)
            if (((unsigned char)text[byte] & 0xC0) != 0x80)
                u16 += (unsigned char)text[byte] >= 0xF0 ? 2 : 1;
        fprintf(f, "%s%zu", b ? " " : "", u16);
    }
    fputc('\n', f);
    ubrk_close(bi);
    utext_close(ut);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    FILE *in = fopen(argv[1], "r");
    sc_analyzer *an;
    FILE *breaks = argc > 2 ? fopen(argv[2], "w") : NULL;
    sc_hl_scratch *scratch;
    if (sc_hl_scratch_new(&scratch) != SC_OK)
        return 2;
    if (!in || sc_analyzer_builtin("standard", &an) != SC_OK || (argc > 2 && !breaks))
        return 2;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, in)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2)
            return 2;
        *t1 = *t2 = '\0';
        if (breaks)
            print_breaks(breaks, line, strlen(line));
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_hl_options o;
        sc_hl_options_init(&o);
        o.fragment_size = 0;
        o.number_of_fragments = (uint32_t)atoi(t2 + 1);
        sc_hl_query *hq;
        sc_slice text = S(line), *fr;
        size_t n;
        if (sc_hl_query_build(parse(&a, t1 + 1), S("body"), true, &a, &hq) != SC_OK ||
            sc_highlight_field(hq, an, &o, &text, 1, scratch, &a, &fr, &n) != SC_OK)
            return 1;
        for (size_t i = 0; i < n; i++)
            printf("%s%.*s", i ? " ## " : "", (int)fr[i].len, (const char *)fr[i].ptr);
        putchar('\n');
        sc_arena_fini(&a);
    }
    free(line);
    fclose(in);
    if (breaks)
        fclose(breaks);
    sc_analyzer_free(an);
    sc_hl_scratch_free(scratch);
    return 0;
}
