/* libFuzzer target for src/mapping/date.c: the input is "<format>\n<text>" (no newline: the
 * default format). Compiles the format, parses the text, runs date math both rounding ways
 * with and without a zone, parses it as a time zone, and formats results; checks that ISO output
 * parses back to the same instant for years 0..9999 and that round-up never goes below
 * round-down. Any crash, sanitizer report or broken invariant aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/date.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    sc_slice spec = nl ? sc_slice_make(data, (size_t)(nl - data))
                       : sc_slice_cstr(SC_DATE_DEFAULT_FORMAT);
    sc_slice text = nl ? sc_slice_make(nl + 1, size - (size_t)(nl - data) - 1)
                       : sc_slice_make(data, size);
    sc_date_format *f = NULL;
    if (sc_date_format_new(spec, &f) != SC_OK)
        return 0;
    int64_t ms;
    char buf[128];
    if (sc_date_parse(f, text, &ms) == SC_OK) {
        sc_date_format_print(f, ms, buf, sizeof(buf));
        size_t n = sc_date_format_iso(ms, buf);
        if (n == 0 || n >= 40)
            abort();
        int64_t y0 = sc_date_days_from_civil(0, 1, 1) * 86400000LL;
        int64_t y9999 = sc_date_days_from_civil(10000, 1, 1) * 86400000LL;
        if (ms >= y0 && ms < y9999) {
            sc_date_format *iso;
            if (sc_date_format_new(sc_slice_cstr("strict_date_optional_time"), &iso) != SC_OK)
                abort();
            int64_t back;
            if (sc_date_parse(iso, sc_slice_make(buf, n), &back) != SC_OK || back != ms)
                abort();
            sc_date_format_free(iso);
        }
    }
    int64_t lo, hi;
    for (int tz = 0; tz < 2; tz++) {
        int64_t off = tz ? 3600000 * 5 + 1800000 : 0;
        sc_status a = sc_date_math_parse(f, text, 1420114230123LL, false, off, &lo);
        sc_status b = sc_date_math_parse(f, text, 1420114230123LL, true, off, &hi);
        if ((a == SC_OK) != (b == SC_OK))
            abort();
        if (a == SC_OK && hi < lo)
            abort();
    }
    int64_t off;
    (void)sc_date_parse_tz(text, &off);
    sc_date_format_free(f);
    return 0;
}
