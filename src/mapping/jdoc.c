/* The document JSON reader; see jdoc.h. Recursive descent with an explicit depth bound; every
 * read is checked against the end of the input. */
#include "mapping/jdoc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

typedef struct jp {
    const uint8_t *p, *start, *end;
    sc_arena *arena;
    char *msg;
    size_t cap;
    sc_status st;
} jp;

static void where(const jp *j, const uint8_t *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const uint8_t *q = j->start; q < at && q < j->end; q++) {
        if (*q == '\n') {
            (*line)++;
            *col = 1;
        } else if ((*q & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static sc__jd *fail(jp *j, const char *what)
{
    if (j->st == SC_OK) {
        int line, col;
        where(j, j->p, &line, &col);
        if (j->p < j->end && *j->p >= 0x20 && *j->p < 0x7f)
            snprintf(j->msg, j->cap, "%s ('%c') at line %d column %d", what, *j->p, line, col);
        else
            snprintf(j->msg, j->cap, "%s at line %d column %d", what, line, col);
        j->st = SC_EPARSE;
    }
    return NULL;
}

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static sc__jd *node(jp *j, sc__jd_type t)
{
    sc__jd *n = sc_arena_alloc(j->arena, sizeof(*n));
    if (!n) {
        j->st = SC_ELIMIT;
        return NULL;
    }
    memset(n, 0, sizeof(*n));
    n->type = t;
    return n;
}

static int hex4(const uint8_t *p, const uint8_t *end, uint32_t *out)
{
    if (end - p < 4)
        return 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = p[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

/* Parses a string at j->p (on the opening quote) into *out. */
static int string(jp *j, sc_slice *out)
{
    const uint8_t *s = ++j->p;
    bool escaped = false;
    while (j->p < j->end && *j->p != '"') {
        uint8_t c = *j->p;
        if (c == '\\') {
            escaped = true;
            j->p += 2;
            continue;
        }
        if (c < 0x20) {
            fail(j, "Illegal unquoted character in string");
            return 0;
        }
        int n = sc_utf8_valid_len(j->p, j->end);
        if (!n) {
            fail(j, "Invalid UTF-8 in string");
            return 0;
        }
        j->p += n;
    }
    if (j->p >= j->end) {
        j->p = j->end;
        fail(j, "Unexpected end-of-input in string");
        return 0;
    }
    const uint8_t *e = j->p++;
    if (!escaped) {
        *out = sc_slice_make(s, (size_t)(e - s));
        return 1;
    }
    uint8_t *o = sc_arena_alloc(j->arena, (size_t)(e - s) + 1);
    if (!o) {
        j->st = SC_ELIMIT;
        return 0;
    }
    size_t k = 0;
    for (const uint8_t *q = s; q < e;) {
        if (*q != '\\') {
            o[k++] = *q++;
            continue;
        }
        q++;
        uint8_t c = q < e ? *q++ : 0;
        switch (c) {
        case '"':
        case '\\':
        case '/': o[k++] = c; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!hex4(q, e, &cp)) {
                j->p = q;
                fail(j, "Invalid \\u escape");
                return 0;
            }
            q += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (e - q >= 6 && q[0] == '\\' && q[1] == 'u' && hex4(q + 2, e, &lo) &&
                    lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    q += 6;
                } else {
                    cp = 0xFFFD; /* lone surrogate */
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            /* \uXXXX is 6 input bytes and at most 3 output bytes (4 for a pair of 12) */
            k += sc_utf8_put(o + k, cp);
            break;
        }
        default:
            j->p = q - 1;
            fail(j, "Unrecognized character escape");
            return 0;
        }
    }
    *out = sc_slice_make(o, k);
    return 1;
}

static sc__jd *number(jp *j)
{
    const uint8_t *s = j->p;
    bool is_int = true;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || !(*j->p >= '0' && *j->p <= '9'))
        return fail(j, "Unexpected character");
    if (*j->p == '0') {
        j->p++;
    } else {
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p < j->end && *j->p == '.') {
        is_int = false;
        j->p++;
        if (j->p >= j->end || !(*j->p >= '0' && *j->p <= '9'))
            return fail(j, "Unexpected character in number");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        is_int = false;
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (j->p >= j->end || !(*j->p >= '0' && *j->p <= '9'))
            return fail(j, "Unexpected character in number");
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    size_t len = (size_t)(j->p - s);
    char buf[64];
    char *tmp = buf;
    if (len >= sizeof(buf)) {
        tmp = sc_arena_alloc(j->arena, len + 1);
        if (!tmp) {
            j->st = SC_ELIMIT;
            return NULL;
        }
    }
    memcpy(tmp, s, len);
    tmp[len] = 0;
    sc__jd *n = node(j, SC__JD_REAL);
    if (!n)
        return NULL;
    n->raw = sc_slice_make(s, len);
    if (is_int) {
        errno = 0;
        long long v = strtoll(tmp, NULL, 10);
        if (errno == 0) {
            n->type = SC__JD_INT;
            n->i = v;
            n->d = (double)v;
            return n;
        }
    }
    n->d = strtod(tmp, NULL);
    return n;
}

static int lit(jp *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) >= n && memcmp(j->p, word, n) == 0) {
        j->p += n;
        return 1;
    }
    return 0;
}

static sc__jd *value(jp *j, int depth)
{
    ws(j);
    if (j->p >= j->end)
        return fail(j, "Unexpected end-of-input");
    if (depth > SC__JDOC_MAX_DEPTH)
        return fail(j, "Document nested too deeply");
    const uint8_t *s = j->p;
    sc__jd *n = NULL;
    switch (*j->p) {
    case '{': {
        n = node(j, SC__JD_OBJECT);
        if (!n)
            return NULL;
        j->p++;
        ws(j);
        sc__jd **tail = &n->child;
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            break;
        }
        for (;;) {
            ws(j);
            if (j->p >= j->end || *j->p != '"')
                return fail(j, "Unexpected character (expected field name)");
            sc_slice key;
            if (!string(j, &key))
                return NULL;
            ws(j);
            if (j->p >= j->end || *j->p != ':')
                return fail(j, "Unexpected character (expected ':')");
            j->p++;
            sc__jd *m = value(j, depth + 1);
            if (!m)
                return NULL;
            m->key = key;
            *tail = m;
            tail = &m->next;
            n->n++;
            ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == '}') {
                j->p++;
                break;
            }
            return fail(j, "Unexpected character (expected ',' or '}')");
        }
        break;
    }
    case '[': {
        n = node(j, SC__JD_ARRAY);
        if (!n)
            return NULL;
        j->p++;
        ws(j);
        sc__jd **tail = &n->child;
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            break;
        }
        for (;;) {
            sc__jd *m = value(j, depth + 1);
            if (!m)
                return NULL;
            *tail = m;
            tail = &m->next;
            n->n++;
            ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == ']') {
                j->p++;
                break;
            }
            return fail(j, "Unexpected character (expected ',' or ']')");
        }
        break;
    }
    case '"': {
        sc_slice str;
        if (!string(j, &str))
            return NULL;
        n = node(j, SC__JD_STRING);
        if (!n)
            return NULL;
        n->str = str;
        break;
    }
    case 't':
        if (!lit(j, "true"))
            return fail(j, "Unrecognized token");
        n = node(j, SC__JD_TRUE);
        break;
    case 'f':
        if (!lit(j, "false"))
            return fail(j, "Unrecognized token");
        n = node(j, SC__JD_FALSE);
        break;
    case 'n':
        if (!lit(j, "null"))
            return fail(j, "Unrecognized token");
        n = node(j, SC__JD_NULL);
        break;
    default: n = number(j); break;
    }
    if (n)
        n->raw = sc_slice_make(s, (size_t)(j->p - s));
    return n;
}

sc_status sc__jdoc_parse(sc_slice text, sc_arena *arena, sc__jd **out, char *msg, size_t cap)
{
    jp j = {text.ptr, text.ptr, text.ptr + text.len, arena, msg, cap, SC_OK};
    if (cap)
        msg[0] = 0;
    *out = NULL;
    if (!text.ptr) {
        j.p = j.end = j.start = (const uint8_t *)"";
    }
    sc__jd *root = value(&j, 0);
    if (root) {
        ws(&j);
        if (j.p != j.end)
            fail(&j, "Unexpected character after the document");
    }
    if (j.st != SC_OK)
        return j.st;
    *out = root;
    return SC_OK;
}
