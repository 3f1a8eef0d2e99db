/* The user_agent ingest processor: parses a User-Agent header into name, version, os and
 * device with a small built-in table of POSIX regular expressions (below, documented in
 * docs/api.md), not the ua-parser regexes.yaml Elasticsearch ships: the common browsers,
 * operating systems and tools are recognised, anything else is "Other". The table is
 * compiled once per processor; the first entry that matches wins. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ingest_internal.h"

/* One rule: a pattern, the name it gives, and the capture group holding the version (0 =
 * none). For os rules `fix` maps the version (Windows NT numbers to release names). */
typedef struct ua_rule {
    const char *re;
    const char *name;
    int version_group;
} ua_rule;

/* Agents: order matters (Edge and Opera announce Chrome too, Chrome announces Safari). */
static const ua_rule agents[] = {
    {"(Googlebot|bingbot|Baiduspider|YandexBot|DuckDuckBot|Slurp)/?([0-9][0-9.]*)?", NULL, 2},
    {"Edg(e|A|iOS)?/([0-9][0-9.]*)", "Edge", 2},
    {"OPR/([0-9][0-9.]*)", "Opera", 1},
    {"SamsungBrowser/([0-9][0-9.]*)", "Samsung Internet", 1},
    {"(Firefox|FxiOS)/([0-9][0-9.]*)", "Firefox", 2},
    {"CriOS/([0-9][0-9.]*)", "Chrome Mobile iOS", 1},
    {"Android.*Chrome/([0-9][0-9.]*) Mobile", "Chrome Mobile", 1},
    {"Chrome/([0-9][0-9.]*)", "Chrome", 1},
    {"Version/([0-9][0-9.]*).*Mobile.*Safari/", "Mobile Safari", 1},
    {"Version/([0-9][0-9.]*).*Safari/", "Safari", 1},
    {"MSIE ([0-9][0-9.]*)", "IE", 1},
    {"Trident/7\\.0.*rv:([0-9][0-9.]*)", "IE", 1},
    {"^curl/([0-9][0-9.]*)", "curl", 1},
    {"^Wget/([0-9][0-9.]*)", "Wget", 1},
    {"^python-requests/([0-9][0-9.]*)", "Python Requests", 1},
    {"^Go-http-client/([0-9][0-9.]*)", "Go-http-client", 1},
    {"^Apache-HttpClient/([0-9][0-9.]*)", "Apache-HttpClient", 1},
    {"^okhttp/([0-9][0-9.]*)", "okhttp", 1},
    {"^PostmanRuntime/([0-9][0-9.]*)", "PostmanRuntime", 1},
    {"^Elastic-Heartbeat/([0-9][0-9.]*)", "Elastic-Heartbeat", 1},
};

static const ua_rule oses[] = {
    {"Windows NT ([0-9]+\\.[0-9]+)", "Windows", 1},
    {"Windows Phone ([0-9][0-9.]*)", "Windows Phone", 1},
    {"(iPhone|CPU) OS ([0-9]+[0-9_]*)", "iOS", 2},
    {"iPad.*OS ([0-9]+[0-9_]*)", "iOS", 1},
    {"Mac OS X ([0-9]+[0-9_.]*)", "Mac OS X", 1},
    {"Android ([0-9][0-9.]*)", "Android", 1},
    {"CrOS [a-z0-9_]+ ([0-9][0-9.]*)", "Chrome OS", 1},
    {"Ubuntu", "Ubuntu", 0},
    {"Fedora", "Fedora", 0},
    {"FreeBSD", "FreeBSD", 0},
    {"Linux", "Linux", 0},
};

static const ua_rule devices[] = {
    {"(Googlebot|bingbot|Baiduspider|YandexBot|DuckDuckBot|Slurp|[Bb]ot/|[Ss]pider|[Cc]rawler)",
     "Spider", 0},
    {"iPhone", "iPhone", 0},
    {"iPad", "iPad", 0},
    {"Macintosh", "Mac", 0},
    {"Android.*; (SM-[A-Z0-9]+)", "Samsung", 1},
    {"Android.*; (Pixel [0-9a-zA-Z ]+)[;)]", "Google", 1},
    {"Android.*Mobile", "Generic Smartphone", 0},
    {"Android", "Generic Tablet", 0},
};

#define N_AGENTS (sizeof agents / sizeof agents[0])
#define N_OSES (sizeof oses / sizeof oses[0])
#define N_DEVICES (sizeof devices / sizeof devices[0])

typedef struct ua_state {
    regex_t agent[N_AGENTS], os[N_OSES], device[N_DEVICES];
    bool compiled;
    unsigned props; /* P_* bits */
} ua_state;

enum {
    P_NAME = 1,
    P_VERSION = 2,
    P_OS = 4,
    P_DEVICE = 8,
    P_ORIGINAL = 16
};

static void ua_fini(sc__proc *p)
{
    ua_state *s = p->state;
    if (!s)
        return;
    if (s->compiled) {
        for (size_t i = 0; i < N_AGENTS; i++)
            regfree(&s->agent[i]);
        for (size_t i = 0; i < N_OSES; i++)
            regfree(&s->os[i]);
        for (size_t i = 0; i < N_DEVICES; i++)
            regfree(&s->device[i]);
    }
    free(s);
    p->state = NULL;
}

static bool compile_all(regex_t *out, const ua_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (regcomp(&out[i], rules[i].re, REG_EXTENDED) != 0) {
            for (size_t k = 0; k < i; k++)
                regfree(&out[k]);
            return false;
        }
    return true;
}

static sc_status ua_init(sc__proc *p, sc_ingest_error *err)
{
    ua_state *s = calloc(1, sizeof *s);
    if (!s)
        return SC_ENOMEM;
    p->state = s;
    s->props = P_NAME | P_VERSION | P_OS | P_DEVICE | P_ORIGINAL;
    const json_t *props = json_object_get(p->cfg, "properties");
    if (props) {
        if (!json_is_array(props)) {
            sc__ingest_fail(err, "parse_exception", "[properties] must be a list");
            return SC_EINVAL;
        }
        s->props = 0;
        size_t i;
        const json_t *v;
        json_array_foreach (props, i, v) {
            const char *n = json_string_value(v);
            unsigned bit = !n                       ? 0
                           : !strcmp(n, "name")     ? P_NAME
                           : !strcmp(n, "version")  ? P_VERSION
                           : !strcmp(n, "os")       ? P_OS
                           : !strcmp(n, "device")   ? P_DEVICE
                           : !strcmp(n, "original") ? P_ORIGINAL
                                                    : 0;
            if (!bit) {
                sc__ingest_fail(err, "parse_exception",
                                "[properties] illegal property value [%.64s]. valid values are "
                                "[NAME, OS, DEVICE, ORIGINAL, VERSION]",
                                n ? n : "?");
                return SC_EINVAL;
            }
            s->props |= bit;
        }
    }
    if (!compile_all(s->agent, agents, N_AGENTS))
        return SC_ENOMEM;
    if (!compile_all(s->os, oses, N_OSES)) {
        for (size_t i = 0; i < N_AGENTS; i++)
            regfree(&s->agent[i]);
        return SC_ENOMEM;
    }
    if (!compile_all(s->device, devices, N_DEVICES)) {
        for (size_t i = 0; i < N_AGENTS; i++)
            regfree(&s->agent[i]);
        for (size_t i = 0; i < N_OSES; i++)
            regfree(&s->os[i]);
        return SC_ENOMEM;
    }
    s->compiled = true;
    return SC_OK;
}

/* The first rule matching text: its index, with the group `g` (its version) in out ("" when
 * none; '_' turned into '.'); -1 when none matches. */
static int first_match(const regex_t *res, const ua_rule *rules, size_t n, const char *text,
                       char *out, size_t cap, int *g1, regmatch_t *m)
{
    for (size_t i = 0; i < n; i++) {
        if (regexec(&res[i], text, 4, m, 0) != 0)
            continue;
        out[0] = '\0';
        int g = rules[i].version_group;
        if (g && m[g].rm_so >= 0) {
            size_t len = (size_t)(m[g].rm_eo - m[g].rm_so);
            snprintf(out, cap, "%.*s", (int)len, text + m[g].rm_so);
            for (char *c = out; *c; c++)
                if (*c == '_')
                    *c = '.';
            size_t l = strlen(out);
            while (l && out[l - 1] == '.')
                out[--l] = '\0';
        }
        *g1 = (int)i;
        return (int)i;
    }
    return -1;
}

static const char *windows_release(const char *nt)
{
    static const char *const map[][2] = {{"10.0", "10"}, {"6.3", "8.1"},   {"6.2", "8"},
                                         {"6.1", "7"},   {"6.0", "Vista"}, {"5.2", "XP"},
                                         {"5.1", "XP"},  {"5.0", "2000"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], nt))
            return map[i][1];
    return nt;
}

static json_t *parse(const ua_state *s, const char *text)
{
    json_t *out = json_object();
    char ver[64];
    regmatch_t m[4];
    int idx;
    int a = first_match(s->agent, agents, N_AGENTS, text, ver, sizeof ver, &idx, m);
    if (s->props & P_NAME) {
        const char *name = "Other";
        char bot[32];
        if (a == 0) { /* the bot rule names itself */
            snprintf(bot, sizeof bot, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), text + m[1].rm_so);
            name = bot;
        } else if (a > 0) {
            name = agents[a].name;
        }
        json_object_set_new(out, "name", json_string(name));
    }
    if ((s->props & P_VERSION) && a >= 0 && ver[0])
        json_object_set_new(out, "version", json_string(ver));
    if (s->props & P_OS) {
        int o = first_match(s->os, oses, N_OSES, text, ver, sizeof ver, &idx, m);
        if (o >= 0) {
            const char *v = o == 0 ? windows_release(ver) : ver;
            json_t *os = json_pack("{s:s}", "name", oses[o].name);
            if (*v) {
                char full[128];
                snprintf(full, sizeof full, "%s %s", oses[o].name, v);
                json_object_set_new(os, "version", json_string(v));
                json_object_set_new(os, "full", json_string(full));
            }
            json_object_set_new(out, "os", os);
        }
    }
    if (s->props & P_DEVICE) {
        int d = first_match(s->device, devices, N_DEVICES, text, ver, sizeof ver, &idx, m);
        char name[96];
        if (d >= 0 && devices[d].version_group && ver[0])
            snprintf(name, sizeof name, "%s %s", devices[d].name, ver);
        else
            snprintf(name, sizeof name, "%s", d >= 0 ? devices[d].name : "Other");
        json_object_set_new(out, "device", json_pack("{s:s}", "name", name));
    }
    if (s->props & P_ORIGINAL)
        json_object_set_new(out, "original", json_string(text));
    return out;
}

static sc_status ua_run(const sc__proc *p, sc_ingest_doc *doc, sc_ingest_error *err)
{
    const json_t *v = sc__ingest_get(doc, p->field);
    if (!v || json_is_null(v)) {
        if (p->ignore_missing)
            return SC_OK;
        sc__ingest_missing(err, p->field);
        return SC_EINVAL;
    }
    if (!json_is_string(v)) {
        sc__ingest_fail(err, "illegal_argument_exception",
                        "field [%.200s] of type [%s] cannot be cast to [java.lang.String]",
                        p->field, json_is_number(v) ? "java.lang.Number" : "java.lang.Object");
        return SC_EINVAL;
    }
    /* Header values are short; a longer one is cut for matching (the original is kept). */
    char text[2048];
    snprintf(text, sizeof text, "%s", json_string_value(v));
    json_t *ua = parse(p->state, text);
    if (ua && (((ua_state *)p->state)->props & P_ORIGINAL))
        json_object_set(ua, "original", (json_t *)v);
    if (!ua || !sc__ingest_set(doc, p->target_field ? p->target_field : "user_agent", ua)) {
        sc__ingest_fail(err, "illegal_argument_exception", "cannot set the [%s] field",
                        p->target_field ? p->target_field : "user_agent");
        return SC_EINVAL;
    }
    return SC_OK;
}

const sc__proc_kind sc__ingest_kind_user_agent = {"user_agent", ua_init, ua_run, ua_fini, true};
