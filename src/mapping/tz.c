/* sc_tz_load (mapping/tz.h): fixed offsets, or a region's transitions from its TZif file
 * (RFC 8536): header, transition times, their type indices, the types' UTC offsets. The
 * footer's rule for instants after the last transition is not read: the zone database's
 * "fat" files list transitions through 2037. */
#include "mapping/tz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/slice.h"
#include "mapping/date.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* Parses one data block (time size ts: 4 or 8) at p (len bytes left). */
static sc_status parse_block(const uint8_t *p, size_t len, size_t ts, sc_arena *a, sc_tz_rules *out,
                             size_t *block_len)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return SC_ECORRUPT;
    uint32_t isut = be32(p + 20), isstd = be32(p + 24), leap = be32(p + 28);
    uint32_t timecnt = be32(p + 32), typecnt = be32(p + 36), charcnt = be32(p + 40);
    if (typecnt == 0 || typecnt > 256 || timecnt > 100000 || charcnt > 100000 || leap > 100000 ||
        isut > 256 || isstd > 256)
        return SC_ECORRUPT;
    size_t need = 44 + (size_t)timecnt * (ts + 1) + (size_t)typecnt * 6 + charcnt +
                  (size_t)leap * (ts + 4) + isstd + isut;
    if (need > len)
        return SC_ECORRUPT;
    const uint8_t *times = p + 44, *idx = times + (size_t)timecnt * ts;
    const uint8_t *types = idx + timecnt;
    out->at_ms = sc_arena_alloc(a, (timecnt ? timecnt : 1) * sizeof *out->at_ms);
    out->offset_s = sc_arena_alloc(a, (timecnt ? timecnt : 1) * sizeof *out->offset_s);
    if (!out->at_ms || !out->offset_s)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    /* before the first transition: the first standard-time type (RFC 8536 §3.2), else type 0 */
    out->base_offset_ms = (int64_t)(int32_t)be32(types) * 1000;
    for (uint32_t i = 0; i < typecnt; i++)
        if (!types[6 * i + 4]) {
            out->base_offset_ms = (int64_t)(int32_t)be32(types + 6 * i) * 1000;
            break;
        }
    for (uint32_t i = 0; i < timecnt; i++) {
        if (idx[i] >= typecnt)
            return SC_ECORRUPT;
        int64_t t = ts == 8 ? be64(times + 8 * i) : (int64_t)(int32_t)be32(times + 4 * i);
        if (t < -(INT64_C(1) << 40) || t > (INT64_C(1) << 40) ||
            (i && t * 1000 <= out->at_ms[i - 1]))
            return SC_ECORRUPT;
        out->at_ms[i] = t * 1000;
        out->offset_s[i] = (int32_t)be32(types + 6 * idx[i]);
    }
    out->n_trans = timecnt;
    *block_len = need;
    return SC_OK;
}

sc_status sc_tz_load(const char *id, sc_arena *a, sc_tz_rules *out)
{
    memset(out, 0, sizeof *out);
    int64_t fixed;
    sc_status st = sc_date_parse_tz(sc_slice_cstr(id), &fixed);
    if (st == SC_OK) {
        out->base_offset_ms = fixed;
        return SC_OK;
    }
    size_t n = strlen(id);
    if (n == 0 || n > 64 || id[0] == '/' || strstr(id, ".."))
        return SC_ENOTFOUND;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '+'))
            return SC_ENOTFOUND;
    }
    char path[128];
    snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", id);
    FILE *f = fopen(path, "rb");
    if (!f)
        return SC_ENOTFOUND;
    uint8_t *buf = malloc(1 << 20);
    size_t len = buf ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    if (!buf)
        return SC_ENOMEM;
    size_t v1_len = 0;
    st = parse_block(buf, len, 4, a, out, &v1_len);
    if (st == SC_OK && buf[4] >= '2' && v1_len < len) {
        size_t v2_len;
        st = parse_block(buf + v1_len, len - v1_len, 8, a, out, &v2_len);
    }
    free(buf);
    return st;
}
