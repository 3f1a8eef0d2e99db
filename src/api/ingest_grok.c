/* Grok and dissect patterns for the ingest processors (see ingest_internal.h). Grok expands
 * %{NAME[:field[:type]]} references (built-in patterns below, or the processor's
 * pattern_definitions) into one POSIX extended regular expression (glibc regcomp, with its \b
 * \w \s extensions), translating the Oniguruma constructs grok patterns use (\d, (?:...), lazy
 * quantifiers). POSIX matching is leftmost-longest, so a lazy %{DATA} takes the longest text
 * that still lets the whole pattern match. Dissect splits text on the literal delimiters
 * between %{key} fields. Expanded patterns are bounded by SC_INGEST_MAX_PATTERN bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"

/* The built-in grok patterns, written for POSIX extended syntax. */
static const struct {
    const char *name, *re;
} builtin[] = {
    {"USERNAME", "[a-zA-Z0-9._-]+"},
    {"USER", "%{USERNAME}"},
    {"EMAILLOCALPART", "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*"},
    {"EMAILADDRESS", "%{EMAILLOCALPART}@%{HOSTNAME}"},
    {"INT", "[+-]?[0-9]+"},
    {"BASE10NUM", "[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)"},
    {"NUMBER", "%{BASE10NUM}"},
    {"BASE16NUM", "[+-]?(0[xX])?[0-9A-Fa-f]+"},
    {"POSINT", "[1-9][0-9]*"},
    {"NONNEGINT", "[0-9]+"},
    {"WORD", "\\b\\w+\\b"},
    {"NOTSPACE", "[^[:space:]]+"},
    {"SPACE", "[[:space:]]*"},
    {"DATA", ".*"},
    {"GREEDYDATA", ".*"},
    {"QUOTEDSTRING", "\"([^\"\\\\]|\\\\.)*\"|'([^'\\\\]|\\\\.)*'"},
    {"QS", "%{QUOTEDSTRING}"},
    {"UUID", "[A-Fa-f0-9]{8}-([A-Fa-f0-9]{4}-){3}[A-Fa-f0-9]{12}"},
    {"IPV4", "((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}"
             "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"},
    {"IPV6", "([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|([0-9A-Fa-f]{1,4}:){1,7}:|"
             "([0-9A-Fa-f]{1,4}:){1,6}(:[0-9A-Fa-f]{1,4}){1,6}|:(:[0-9A-Fa-f]{1,4}){1,7}|::"},
    {"IP", "%{IPV6}|%{IPV4}"},
    {"HOSTNAME", "\\b[0-9A-Za-z][0-9A-Za-z-]{0,62}(\\.[0-9A-Za-z][0-9A-Za-z-]{0,62})*\\.?\\b"},
    {"IPORHOST", "%{IP}|%{HOSTNAME}"},
    {"HOSTPORT", "%{IPORHOST}:%{POSINT}"},
    {"MAC", "([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}"},
    {"PATH", "(/[^[:space:]]*)+"},
    {"URIPROTO", "[A-Za-z]([A-Za-z0-9+.-]+)"},
    {"URIHOST", "%{IPORHOST}(:%{POSINT})?"},
    {"URIPATH", "(/[A-Za-z0-9$.+!*'(){},~:;=@#%&_-]*)+"},
    {"URIPARAM", "\\?[^[:space:]]*"},
    {"URIPATHPARAM", "%{URIPATH}(%{URIPARAM})?"},
    {"URI", "%{URIPROTO}://([A-Za-z0-9._-]+(:[^@]*)?@)?(%{URIHOST})?(%{URIPATHPARAM})?"},
    {"MONTH", "\\b(Jan(uary)?|Feb(ruary)?|Mar(ch)?|Apr(il)?|May|June?|July?|Aug(ust)?|"
              "Sep(tember)?|Oct(ober)?|Nov(ember)?|Dec(ember)?)\\b"},
    {"MONTHNUM", "(0?[1-9]|1[0-2])"},
    {"MONTHDAY", "(0[1-9]|[12][0-9]|3[01]|[1-9])"},
    {"DAY", "(Mon(day)?|Tue(sday)?|Wed(nesday)?|Thu(rsday)?|Fri(day)?|Sat(urday)?|Sun(day)?)"},
    {"YEAR", "([0-9][0-9]){1,2}"},
    {"HOUR", "(2[0123]|[01]?[0-9])"},
    {"MINUTE", "([0-5][0-9])"},
    {"SECOND", "((5[0-9]|[0-5]?[0-9])|60)([:.,][0-9]+)?"},
    {"TIME", "%{HOUR}:%{MINUTE}(:%{SECOND})?"},
    {"ISO8601_TIMEZONE", "(Z|[+-]%{HOUR}(:?%{MINUTE}))"},
    {"TIMESTAMP_ISO8601",
     "%{YEAR}-%{MONTHNUM}-%{MONTHDAY}[T ]%{HOUR}:?%{MINUTE}(:?%{SECOND})?%{ISO8601_TIMEZONE}?"},
    {"DATE_US", "%{MONTHNUM}[/-]%{MONTHDAY}[/-]%{YEAR}"},
    {"DATE_EU", "%{MONTHDAY}[./-]%{MONTHNUM}[./-]%{YEAR}"},
    {"DATE", "%{DATE_US}|%{DATE_EU}"},
    {"HTTPDATE", "%{MONTHDAY}/%{MONTH}/%{YEAR}:%{TIME} %{INT}"},
    {"SYSLOGTIMESTAMP", "%{MONTH} +%{MONTHDAY} %{TIME}"},
    {"LOGLEVEL", "([Aa]lert|ALERT|[Tt]race|TRACE|[Dd]ebug|DEBUG|[Nn]otice|NOTICE|[Ii]nfo|INFO|"
                 "[Ww]arn(ing)?|WARN(ING)?|[Ee]rr(or)?|ERR(OR)?|[Cc]rit(ical)?|CRIT(ICAL)?|"
                 "[Ff]atal|FATAL|[Ss]evere|SEVERE|EMERG(ENCY)?|[Ee]merg(ency)?)"},
    {"HTTPDUSER", "%{EMAILADDRESS}|%{USER}"},
    {"COMMONAPACHELOG", "%{IPORHOST:clientip} %{HTTPDUSER:ident} %{USER:auth} "
                        "\\[%{HTTPDATE:timestamp}\\] \"(%{WORD:verb} %{NOTSPACE:request}"
                        "( HTTP/%{NUMBER:httpversion})?|%{DATA:rawrequest})\" "
                        "%{NUMBER:response} (%{NUMBER:bytes}|-)"},
    {"COMBINEDAPACHELOG", "%{COMMONAPACHELOG} %{QS:referrer} %{QS:agent}"},
};

#define MAX_CAPTURES 256

typedef struct capture {
    int group;
    char field[128];
    char type[16];
} capture;

typedef struct one_grok {
    regex_t rx;
    capture caps[MAX_CAPTURES];
    int n_caps, n_groups;
} one_grok;

struct sc__grok {
    one_grok *res;
    size_t n;
};

/* ---- regex translation ---- */

static bool put(char *out, size_t cap, size_t *used, const char *s, size_t n)
{
    if (*used + n + 1 > cap)
        return false;
    memcpy(out + *used, s, n);
    *used += n;
    out[*used] = '\0';
    return true;
}

static const char *bracket_escape(char c)
{
    switch (c) {
    case 'd': return "0-9";
    case 's': return "[:space:]";
    case 'w': return "[:alnum:]_";
    default: return NULL;
    }
}

/* Copies a bracket expression starting at re[i] == '['; returns the index after it or 0. */
static size_t copy_bracket(const char *re, size_t i, char *out, size_t cap, size_t *used)
{
    size_t j = i + 1;
    if (!put(out, cap, used, "[", 1))
        return 0;
    if (re[j] == '^')
        j += put(out, cap, used, "^", 1) ? 1 : 0;
    if (re[j] == ']')
        j += put(out, cap, used, "]", 1) ? 1 : 0;
    for (; re[j] && re[j] != ']'; j++) {
        if (re[j] == '\\' && re[j + 1]) {
            const char *e = bracket_escape(re[j + 1]);
            if (!put(out, cap, used, e ? e : &re[j + 1], e ? strlen(e) : 1))
                return 0;
            j++;
        } else if (re[j] == '[' && re[j + 1] == ':') {
            const char *end = strstr(re + j, ":]");
            if (!end)
                return 0;
            if (!put(out, cap, used, re + j, (size_t)(end + 2 - (re + j))))
                return 0;
            j = (size_t)(end + 1 - re);
        } else if (!put(out, cap, used, &re[j], 1)) {
            return 0;
        }
    }
    if (re[j] != ']' || !put(out, cap, used, "]", 1))
        return 0;
    return j + 1;
}

bool sc__ingest_regex_translate(const char *re, char *out, size_t cap, size_t *used, int *n_groups)
{
    for (size_t i = 0; re[i];) {
        char c = re[i];
        if (c == '\\' && re[i + 1]) {
            char e = re[i + 1];
            const char *t = e == 'd'   ? "[0-9]"
                            : e == 'D' ? "[^0-9]"
                            : e == 's' ? "[[:space:]]"
                            : e == 'S' ? "[^[:space:]]"
                            : e == 'h' ? "[[:blank:]]"
                                       : NULL;
            if (!(t ? put(out, cap, used, t, strlen(t)) : put(out, cap, used, re + i, 2)))
                return false;
            i += 2;
        } else if (c == '[') {
            i = copy_bracket(re, i, out, cap, used);
            if (!i)
                return false;
        } else if (c == '(') {
            if (re[i + 1] == '?') {
                if (re[i + 2] == ':' || re[i + 2] == '>')
                    i += 3;
                else if (re[i + 2] == '<' && re[i + 3] != '=' && re[i + 3] != '!') {
                    const char *gt = strchr(re + i, '>');
                    if (!gt)
                        return false;
                    i = (size_t)(gt + 1 - re);
                } else {
                    return false; /* lookaround and inline flags have no POSIX form */
                }
            } else {
                i++;
            }
            (*n_groups)++;
            if (!put(out, cap, used, "(", 1))
                return false;
        } else if ((c == '*' || c == '+' || c == '?' || c == '}') &&
                   (re[i + 1] == '?' || re[i + 1] == '+')) {
            if (!put(out, cap, used, &c, 1))
                return false;
            i += 2; /* lazy or possessive: POSIX has one kind of quantifier */
        } else {
            if (!put(out, cap, used, &c, 1))
                return false;
            i++;
        }
    }
    return true;
}

/* glibc's regcomp copies the tree of an atom once per repetition ("a{100}" is 100 copies,
 * "a+" two), so nested or stacked repetitions cost memory exponentially. This walks a POSIX
 * pattern estimating that size: each atom 1, a quantified atom times its repetitions, a group
 * the sum of its atoms. */
#define MAX_REGEX_COST 20000.0
#define MAX_DEPTH 64

static double repeat_factor(const char *re, size_t *i)
{
    char c = re[*i];
    if (c == '*' || c == '?')
        return 1.0;
    if (c == '+')
        return 2.0;
    /* {m}, {m,}, {m,n} */
    char *end;
    double m = strtod(re + *i + 1, &end), n = m;
    if (*end == ',')
        n = end[1] == '}' ? m + 1 : strtod(end + 1, &end);
    const char *close = strchr(re + *i, '}');
    if (close)
        *i = (size_t)(close - re);
    return (n > m ? n : m) + 1.0;
}

bool sc__ingest_regex_cheap(const char *re)
{
    double total[MAX_DEPTH], last[MAX_DEPTH];
    int d = 0;
    /* The previous token was a quantifier: stacked quantifiers ("a+*", "a{2}+") make glibc's
     * compile time explode, so they are refused. */
    bool quantified = false;
    total[0] = last[0] = 0;
    for (size_t i = 0; re[i]; i++) {
        char c = re[i];
        bool quantifier = c == '*' || c == '+' || c == '?' || c == '{';
        if (quantifier && quantified)
            return false;
        quantified = quantifier;
        if (c == '(') {
            if (++d == MAX_DEPTH)
                return false;
            total[d] = last[d] = 0;
        } else if (c == ')') {
            if (d == 0)
                return false;
            double g = total[d] + last[d] + 1;
            d--;
            total[d] += last[d];
            last[d] = g;
        } else if (c == '|') {
            total[d] += last[d];
            last[d] = 0;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            last[d] *= repeat_factor(re, &i);
        } else {
            total[d] += last[d];
            last[d] = 1;
            if (c == '\\' && re[i + 1])
                i++;
            else if (c == '[') {
                size_t j = i + 1;
                if (re[j] == '^')
                    j++;
                if (re[j] == ']')
                    j++;
                while (re[j] && re[j] != ']') {
                    if (re[j] == '[' && re[j + 1] == ':') {
                        const char *e = strstr(re + j, ":]");
                        j = e ? (size_t)(e - re) + 2 : j + 1;
                    } else {
                        j++;
                    }
                }
                i = re[j] ? j : j - 1;
            }
        }
        if (total[d] + last[d] > MAX_REGEX_COST)
            return false;
    }
    return total[0] + last[0] <= MAX_REGEX_COST;
}

/* ---- grok ---- */

static const char *lookup(const json_t *defs, const char *name)
{
    const char *d = json_string_value(json_object_get(defs, name));
    if (d)
        return d;
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (!strcmp(builtin[i].name, name))
            return builtin[i].re;
    return NULL;
}

typedef struct expander {
    const json_t *defs;
    char *out;
    size_t cap, used;
    one_grok *g;
    sc_ingest_error *err;
} expander;

static sc_status expand(expander *x, const char *pat, int depth);

/* Expands one %{NAME[:field[:type]]} (body without the braces). */
static sc_status expand_ref(expander *x, const char *body, int depth)
{
    char name[128] = "", field[128] = "", type[16] = "";
    const char *c1 = strchr(body, ':');
    snprintf(name, sizeof name, "%.*s", (int)(c1 ? (size_t)(c1 - body) : strlen(body)), body);
    if (c1) {
        const char *c2 = strchr(c1 + 1, ':');
        snprintf(field, sizeof field, "%.*s", (int)(c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)),
                 c1 + 1);
        if (c2)
            snprintf(type, sizeof type, "%s", c2 + 1);
    }
    const char *def = lookup(x->defs, name);
    if (!def) {
        sc__ingest_fail(x->err, "illegal_argument_exception",
                        "Unable to find pattern [%.100s] in Grok's pattern dictionary", name);
        return SC_EINVAL;
    }
    x->g->n_groups++;
    if (field[0]) {
        if (x->g->n_caps == MAX_CAPTURES) {
            sc__ingest_fail(x->err, "illegal_argument_exception", "too many grok captures");
            return SC_EINVAL;
        }
        capture *cp = &x->g->caps[x->g->n_caps++];
        cp->group = x->g->n_groups;
        snprintf(cp->field, sizeof cp->field, "%s", field);
        snprintf(cp->type, sizeof cp->type, "%s", type);
    }
    if (!put(x->out, x->cap, &x->used, "(", 1))
        goto too_big;
    sc_status st = expand(x, def, depth + 1);
    if (st != SC_OK)
        return st;
    if (!put(x->out, x->cap, &x->used, ")", 1))
        goto too_big;
    return SC_OK;
too_big:
    sc__ingest_fail(x->err, "illegal_argument_exception", "grok pattern expands past %d bytes",
                    SC_INGEST_MAX_PATTERN);
    return SC_EINVAL;
}

static sc_status expand(expander *x, const char *pat, int depth)
{
    if (depth > 16) {
        sc__ingest_fail(x->err, "illegal_argument_exception",
                        "grok pattern references nest too deep (a cycle?)");
        return SC_EINVAL;
    }
    char lit[SC_INGEST_MAX_PATTERN];
    while (*pat) {
        const char *ref = strstr(pat, "%{");
        size_t n = ref ? (size_t)(ref - pat) : strlen(pat);
        if (n >= sizeof lit)
            n = sizeof lit - 1;
        memcpy(lit, pat, n);
        lit[n] = '\0';
        if (!sc__ingest_regex_translate(lit, x->out, x->cap, &x->used, &x->g->n_groups)) {
            sc__ingest_fail(x->err, "illegal_argument_exception",
                            "unsupported or too long regular expression in grok pattern");
            return SC_EINVAL;
        }
        if (!ref)
            break;
        const char *close = strchr(ref, '}');
        if (!close || close - ref - 2 >= 255) {
            sc__ingest_fail(x->err, "illegal_argument_exception", "unterminated %%{ in pattern");
            return SC_EINVAL;
        }
        char body[256];
        snprintf(body, sizeof body, "%.*s", (int)(close - ref - 2), ref + 2);
        sc_status st = expand_ref(x, body, depth);
        if (st != SC_OK)
            return st;
        pat = close + 1;
    }
    return SC_OK;
}

sc_status sc__grok_compile(const json_t *patterns, const json_t *definitions, sc__grok **out,
                           sc_ingest_error *err)
{
    *out = NULL;
    if (!json_is_array(patterns) || !json_array_size(patterns)) {
        sc__ingest_fail(err, "parse_exception", "[patterns] List of patterns must not be empty");
        return SC_EINVAL;
    }
    sc__grok *g = calloc(1, sizeof *g);
    if (g)
        g->res = calloc(json_array_size(patterns), sizeof *g->res);
    if (!g || !g->res) {
        free(g);
        return SC_ENOMEM;
    }
    char *buf = malloc(SC_INGEST_MAX_PATTERN);
    sc_status st = buf ? SC_OK : SC_ENOMEM;
    for (size_t i = 0; st == SC_OK && i < json_array_size(patterns); i++) {
        const char *pat = json_string_value(json_array_get(patterns, i));
        one_grok *o = &g->res[i];
        expander x = {
            .defs = definitions, .out = buf, .cap = SC_INGEST_MAX_PATTERN, .g = o, .err = err};
        buf[0] = '\0';
        st = pat ? expand(&x, pat, 0) : SC_EINVAL;
        if (!pat)
            sc__ingest_fail(err, "parse_exception", "[patterns] must be strings");
        if (st == SC_OK && !sc__ingest_regex_cheap(buf)) {
            sc__ingest_fail(err, "illegal_argument_exception",
                            "grok pattern [%.200s] repeats too much (nested or stacked "
                            "quantifiers)",
                            pat);
            st = SC_EINVAL;
        }
        if (st == SC_OK && regcomp(&o->rx, buf, REG_EXTENDED) != 0) {
            sc__ingest_fail(err, "illegal_argument_exception",
                            "invalid regular expression in grok pattern [%.200s]", pat);
            st = SC_EINVAL;
        }
        if (st == SC_OK)
            g->n++;
    }
    free(buf);
    if (st != SC_OK) {
        sc__grok_free(g);
        return st;
    }
    *out = g;
    return SC_OK;
}

void sc__grok_free(sc__grok *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        regfree(&g->res[i].rx);
    free(g->res);
    free(g);
}

static json_t *typed(const char *s, size_t n, const char *type)
{
    char buf[64];
    if ((!strcmp(type, "int") || !strcmp(type, "long")) && n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *end;
        long long v = strtoll(buf, &end, 10);
        if (end != buf && !*end)
            return json_integer(v);
    } else if ((!strcmp(type, "float") || !strcmp(type, "double")) && n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *end;
        double v = strtod(buf, &end);
        if (end != buf && !*end)
            return json_real(v);
    }
    return json_stringn(s, n);
}

bool sc__grok_match(const sc__grok *g, const char *text, sc_ingest_doc *doc)
{
    regmatch_t *m = malloc((MAX_CAPTURES * 8 + 1) * sizeof *m);
    if (!m)
        return false;
    bool ok = false;
    for (size_t i = 0; i < g->n && !ok; i++) {
        const one_grok *o = &g->res[i];
        size_t nm = (size_t)o->n_groups + 1;
        if (nm > MAX_CAPTURES * 8 + 1)
            nm = MAX_CAPTURES * 8 + 1;
        if (regexec(&o->rx, text, nm, m, 0) != 0)
            continue;
        ok = true;
        for (int c = 0; c < o->n_caps; c++) {
            const regmatch_t *r = &m[o->caps[c].group];
            if ((size_t)o->caps[c].group >= nm || r->rm_so < 0)
                continue;
            json_t *v = typed(text + r->rm_so, (size_t)(r->rm_eo - r->rm_so), o->caps[c].type);
            (void)sc__ingest_set(doc, o->caps[c].field, v);
        }
    }
    free(m);
    return ok;
}

/* ---- dissect ---- */

#define MAX_KEYS 64

typedef struct dkey {
    char name[128];
    char mod;    /* 0, '+', '?', '*', '&' */
    bool pad;    /* -> : skip repeated delimiters */
    char *delim; /* the literal after the key ("" for the last) */
} dkey;

struct sc__dissect {
    char *prefix;
    dkey keys[MAX_KEYS];
    size_t n;
    char *append_sep;
};

void sc__dissect_free(sc__dissect *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        free(d->keys[i].delim);
    free(d->prefix);
    free(d->append_sep);
    free(d);
}

sc_status sc__dissect_compile(const char *pattern, const char *append_separator, sc__dissect **out,
                              sc_ingest_error *err)
{
    *out = NULL;
    sc__dissect *d = calloc(1, sizeof *d);
    if (!d)
        return SC_ENOMEM;
    d->append_sep = strdup(append_separator);
    const char *s = pattern, *open = strstr(s, "%{");
    d->prefix = strndup(s, open ? (size_t)(open - s) : strlen(s));
    bool bad = !open || strlen(pattern) > SC_INGEST_MAX_PATTERN;
    while (!bad && open) {
        const char *close = strchr(open, '}');
        if (!close || d->n == MAX_KEYS) {
            bad = true;
            break;
        }
        dkey *k = &d->keys[d->n++];
        const char *b = open + 2;
        size_t len = (size_t)(close - b);
        if (len && strchr("+?*&", *b)) {
            k->mod = *b++;
            len--;
        }
        if (len >= 2 && !strncmp(b + len - 2, "->", 2)) {
            k->pad = true;
            len -= 2;
        }
        const char *slash = memchr(b, '/', len);
        if (slash)
            len = (size_t)(slash - b);
        snprintf(k->name, sizeof k->name, "%.*s", (int)(len < 127 ? len : 127), b);
        if (!k->name[0] && k->mod)
            bad = true;
        open = strstr(close + 1, "%{");
        k->delim = strndup(close + 1, open ? (size_t)(open - close - 1) : strlen(close + 1));
        if (open && !k->delim[0])
            bad = true; /* two keys with nothing between them cannot be split */
    }
    if (bad || !d->prefix || !d->append_sep) {
        sc__dissect_free(d);
        sc__ingest_fail(err, "dissect_exception", "Unable to parse pattern: %.200s", pattern);
        return SC_EINVAL;
    }
    *out = d;
    return SC_OK;
}

/* Adds value to an append key's text (joined with the separator). */
static void append_value(sc_ingest_doc *doc, const sc__dissect *d, const char *name, const char *v,
                         size_t n)
{
    json_t *cur = sc__ingest_get(doc, name);
    char *joined = NULL;
    if (json_is_string(cur)) {
        size_t cl = json_string_length(cur), sl = strlen(d->append_sep);
        joined = malloc(cl + sl + n + 1);
        if (!joined)
            return;
        memcpy(joined, json_string_value(cur), cl);
        memcpy(joined + cl, d->append_sep, sl);
        memcpy(joined + cl + sl, v, n);
        joined[cl + sl + n] = '\0';
        (void)sc__ingest_set(doc, name, json_string(joined));
        free(joined);
        return;
    }
    (void)sc__ingest_set(doc, name, json_stringn(v, n));
}

bool sc__dissect_match(const sc__dissect *d, const char *text, sc_ingest_doc *doc)
{
    size_t pl = strlen(d->prefix);
    if (strncmp(text, d->prefix, pl) != 0)
        return false;
    const char *pos = text + pl;
    const char *vals[MAX_KEYS];
    size_t lens[MAX_KEYS];
    for (size_t i = 0; i < d->n; i++) {
        const dkey *k = &d->keys[i];
        size_t dl = strlen(k->delim);
        const char *end = dl ? strstr(pos, k->delim) : pos + strlen(pos);
        if (!end)
            return false;
        vals[i] = pos;
        lens[i] = (size_t)(end - pos);
        pos = end + dl;
        while (k->pad && dl && !strncmp(pos, k->delim, dl))
            pos += dl;
    }
    if (*pos)
        return false;
    for (size_t i = 0; i < d->n; i++) {
        const dkey *k = &d->keys[i];
        if (!k->name[0] || k->mod == '?' || k->mod == '&')
            continue;
        if (k->mod == '+') {
            append_value(doc, d, k->name, vals[i], lens[i]);
        } else if (k->mod == '*') {
            for (size_t j = 0; j < d->n; j++)
                if (d->keys[j].mod == '&' && !strcmp(d->keys[j].name, k->name)) {
                    char name[256];
                    snprintf(name, sizeof name, "%.*s", (int)lens[i], vals[i]);
                    if (name[0])
                        (void)sc__ingest_set(doc, name, json_stringn(vals[j], lens[j]));
                }
        } else {
            (void)sc__ingest_set(doc, k->name, json_stringn(vals[i], lens[i]));
        }
    }
    return true;
}
