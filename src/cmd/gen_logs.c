/* `scry gen logs`: http_logs-like web server records with the Rally mapping
 * (bench/workloads/logs.mapping.json): time-ordered @timestamp (epoch seconds, 1998-04-30 to
 * 1998-07-26 with a daily cycle), clientip heavy-tailed over ~2M addresses, request paths from
 * a site tree with Zipf-like popularity, status and size distributions like the World Cup logs. */
#include <stdlib.h>

#include "cmd/gen_internal.h"

static const char *const SECTIONS[] = {"english",  "french",  "images", "spanish", "german",
                                       "japanese", "italian", "news",   "history", "teams"};
static const char *const PAGES[] = {"index",    "home", "tickets", "venues", "results",
                                    "schedule", "news", "photos",  "team",   "player"};
static const char *const IMAGES[] = {"hm_bg.jpg",      "logo.gif", "space.gif", "nav_bg.gif",
                                     "hm_anime_e.gif", "dot.gif",  "arrow.gif", "ball.gif"};

static uint32_t mix32(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

int sc__gen_logs(const gen_opts *g, gen_out *o)
{
    gen_rng r;
    gen_rng_seed(&r, g->seed);
    const double t0 = 893894400.0;      /* 1998-04-30 00:00:00 UTC */
    const double span = 87.0 * 86400.0; /* to 1998-07-26 */
    const double days = 87.0, amp = 0.6;
    uint64_t n = g->docs ? g->docs : 1;
    for (uint64_t i = 0; i < g->docs && !o->failed; i++) {
        /* t(u) = u + amp*sin(2 pi days u)/(2 pi days) is increasing (|amp| < 1), so records stay
         * time-ordered while their density follows a daily cycle. */
        double u = (double)i / (double)n;
        double tu = u + amp * sin(6.283185307179586 * days * u) / (6.283185307179586 * days);
        uint64_t ts = (uint64_t)(t0 + span * tu);
        /* log-uniform rank over 2M addresses = Zipf with exponent 1 */
        uint64_t rank = (uint64_t)exp(gen_unit(&r) * log(2.0e6));
        uint32_t ip = mix32(rank * 0x9E3779B97F4A7C15ull + g->seed);
        unsigned a = 1 + (ip >> 24) % 223;
        char req[256];
        double kind = gen_unit(&r);
        const char *method = gen_unit(&r) < 0.995 ? "GET" : (gen_unit(&r) < 0.8 ? "HEAD" : "POST");
        const char *proto = gen_unit(&r) < 0.85 ? "HTTP/1.0" : "HTTP/1.1";
        uint64_t pr = (uint64_t)exp(gen_unit(&r) * log(3000.0));
        if (kind < 0.02) {
            snprintf(req, sizeof(req), "%s / %s", method, proto);
        } else if (kind < 0.7) {
            snprintf(req, sizeof(req), "%s /images/%s%s %s", method, pr < 8 ? "" : "p",
                     pr < 8 ? IMAGES[pr] : "", proto);
            if (pr >= 8)
                snprintf(req, sizeof(req), "%s /images/%llu_%s %s", method, (unsigned long long)pr,
                         IMAGES[pr % 8], proto);
        } else {
            snprintf(req, sizeof(req), "%s /%s/%s%s.html %s", method, SECTIONS[pr % 10],
                     PAGES[(pr / 10) % 10], pr < 100 ? "" : "_", proto);
            if (pr >= 100)
                snprintf(req, sizeof(req), "%s /%s/%s_%llu.html %s", method, SECTIONS[pr % 10],
                         PAGES[(pr / 10) % 10], (unsigned long long)pr, proto);
        }
        double s = gen_unit(&r);
        int status = s < 0.885    ? 200
                     : s < 0.985  ? 304
                     : s < 0.995  ? 404
                     : s < 0.999  ? 206
                     : s < 0.9999 ? 500
                                  : 400;
        uint64_t size = 0;
        if (status == 200 || status == 206)
            size = (uint64_t)gen_lognormal(&r, kind < 0.7 ? 2500 : 9000, 1.1);
        else if (status == 404 || status == 500 || status == 400)
            size = 300 + gen_below(&r, 100);
        gen_action(o, g);
        gen_printf(o, "{\"@timestamp\":%llu,\"clientip\":\"%u.%u.%u.%u\",\"request\":\"",
                   (unsigned long long)ts, a, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
        gen_put_escaped(o, req, strlen(req));
        gen_printf(o, "\",\"status\":%d,\"size\":%llu}\n", status, (unsigned long long)size);
    }
    return o->failed ? 1 : 0;
}
