/* The default stop word lists of Elasticsearch's `_<language>_` names and language analyzers:
 * generated at build time from Debian's Lucene 8.7 analyzers jar (scripts/gen_stopwords.py,
 * CMakeLists.txt), so they are Lucene's lists exactly. Words are UTF-8, NUL-terminated. */
#ifndef SC_TEXT_STOPWORDS_H
#define SC_TEXT_STOPWORDS_H

#include <stddef.h>

typedef struct sc__stoplist {
    const char *name; /* "russian", "german", ... (without the underscores) */
    const char *const *words;
    size_t n;
} sc__stoplist;

extern const sc__stoplist sc__stoplists[];
extern const size_t sc__n_stoplists;

#endif
