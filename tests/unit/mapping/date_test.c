/* Tests for src/mapping/date.c: named formats, custom patterns, alternatives, epoch formats,
 * date math with rounding, time zones, formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mapping/date.h"

static int64_t parse(const char *fmt, const char *text, sc_status *st_out)
{
    sc_date_format *f;
    assert_int_equal(sc_date_format_new(sc_slice_cstr(fmt), &f), SC_OK);
    int64_t ms = -1;
    *st_out = sc_date_parse(f, sc_slice_cstr(text), &ms);
    sc_date_format_free(f);
    return ms;
}

static void expect(const char *fmt, const char *text, int64_t want)
{
    sc_status st;
    int64_t ms = parse(fmt, text, &st);
    if (st != SC_OK || ms != want)
        fail_msg("format [%s] text [%s]: status %d ms %lld want %lld", fmt, text, st,
                 (long long)ms, (long long)want);
}

static void reject(const char *fmt, const char *text)
{
    sc_status st;
    (void)parse(fmt, text, &st);
    if (st != SC_EPARSE)
        fail_msg("format [%s] accepted [%s]", fmt, text);
}

static void test_iso(void **state)
{
    (void)state;
    const char *d = SC_DATE_DEFAULT_FORMAT;
    expect(d, "1970-01-01", 0);
    expect(d, "2015-01-01", 1420070400000LL);
    expect(d, "2015-01-01T12:10:30Z", 1420114230000LL);
    expect(d, "2015-01-01T12:10:30.123Z", 1420114230123LL);
    expect(d, "2015-01-01T12:10:30.123456789Z", 1420114230123LL);
    expect(d, "2015-01-01T12:10:30+01:00", 1420110630000LL);
    expect(d, "2015-01-01T12:10:30-0130", 1420119630000LL);
    expect(d, "2015-01-01T12:10", 1420114200000LL);
    expect(d, "2015-01", 1420070400000LL);
    expect(d, "2015", 1420070400000LL);
    expect(d, "1420070400001", 1420070400001LL);
    expect(d, "-1000", -1000);
    expect(d, "2016-02-29", 1456704000000LL);
    expect(d, "1969-12-31T23:59:59.999Z", -1);
    reject(d, "2015-02-29");
    reject(d, "2015-13-01");
    reject(d, "2015-01-01T25:00:00Z");
    reject(d, "2015-1-1");
    reject(d, "abc");
    reject(d, "");
    reject(d, "2015-01-01T");
    reject("strict_date_optional_time", "1420070400001");
}

static void test_patterns(void **state)
{
    (void)state;
    expect("yyyy-MM-dd HH:mm:ss", "2015-01-01 12:10:30", 1420114230000LL);
    reject("yyyy-MM-dd HH:mm:ss", "2015-01-01T12:10:30");
    expect("dd/MM/yyyy", "31/12/2015", 1451520000000LL);
    expect("yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis", "2015/01/01", 1420070400000LL);
    expect("yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis", "2015/01/01 00:00:01",
           1420070401000LL);
    expect("yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis", "5", 5);
    expect("epoch_second", "1420070400", 1420070400000LL);
    expect("epoch_second", "1420070400.5", 1420070400500LL);
    expect("epoch_millis", "1420070400000.9", 1420070400000LL);
    expect("dd MMM yyyy", "05 Feb 2015", 1423094400000LL);
    expect("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2015-01-01T12:10:30.001Z", 1420114230001LL);
    expect("date_time", "2015-01-01T12:10:30.001+01:00", 1420110630001LL);
    expect("basic_date", "20150101", 1420070400000LL);
    expect("date", "2015-01-01", 1420070400000LL);
    expect("hh:mm a yyyy-MM-dd", "01:30 PM 2015-01-01", 1420119000000LL);
    /* Apache access-log timestamps */
    expect("dd/MMM/yyyy:HH:mm:ss Z", "10/Oct/2000:13:55:36 -0700", 971211336000LL);
    expect("yyyy-MM-dd'T'HH:mm:ssXXX", "2015-01-01T12:10:30+01:00", 1420110630000LL);
    expect("EEE, dd MMM yyyy HH:mm:ss Z", "Thu, 01 Jan 2015 12:10:30 +0000", 1420114230000LL);
    sc_date_format *f;
    assert_int_equal(sc_date_format_new(sc_slice_cstr("no_such_format"), &f), SC_EINVAL);
    assert_int_equal(sc_date_format_new(sc_slice_cstr(""), &f), SC_EINVAL);
    assert_int_equal(sc_date_format_new(sc_slice_cstr("yyyy||"), &f), SC_EINVAL);
    assert_int_equal(sc_date_format_new(sc_slice_cstr("yyyy-qq"), &f), SC_EINVAL);
}

static int64_t math(const char *expr, int64_t now, bool up, int64_t tz)
{
    sc_date_format *f;
    assert_int_equal(sc_date_format_new(sc_slice_cstr(SC_DATE_DEFAULT_FORMAT), &f), SC_OK);
    int64_t ms = 0;
    sc_status st = sc_date_math_parse(f, sc_slice_cstr(expr), now, up, tz, &ms);
    sc_date_format_free(f);
    if (st != SC_OK)
        fail_msg("date math [%s] failed: %d", expr, st);
    return ms;
}

static void test_math(void **state)
{
    (void)state;
    const int64_t now = 1420114230123LL; /* 2015-01-01T12:10:30.123Z, a Thursday */
    const int64_t day = 86400000LL;
    assert_int_equal(math("now", now, false, 0), now);
    assert_int_equal(math("now-1d", now, false, 0), now - day);
    assert_int_equal(math("now+1h", now, false, 0), now + 3600000);
    assert_int_equal(math("now/d", now, false, 0), 1420070400000LL);
    assert_int_equal(math("now/d", now, true, 0), 1420070400000LL + day - 1);
    assert_int_equal(math("now-1d/d", now, false, 0), 1420070400000LL - day);
    assert_int_equal(math("now/M", now, false, 0), 1420070400000LL);
    assert_int_equal(math("now/y", now, true, 0), 1451606400000LL - 1);
    assert_int_equal(math("now/w", now, false, 0), 1420070400000LL - 3 * day); /* Monday */
    assert_int_equal(math("2015-01-31||+1M", now, false, 0), 1425081600000LL); /* Feb 28 */
    assert_int_equal(math("2015-01-01||/M", now, true, 0), 1422748800000LL - 1);
    /* round-up parsing of a bare date (lte "2015-01-01" covers the whole day) */
    assert_int_equal(math("2015-01-01", now, true, 0), 1420070400000LL + day - 1);
    assert_int_equal(math("2015-01-01", now, false, 0), 1420070400000LL);
    /* time zones move day boundaries */
    assert_int_equal(math("now/d", now, false, 3600000), 1420070400000LL - 3600000);
    assert_int_equal(math("2015-01-01", now, false, 3600000), 1420070400000LL - 3600000);
    sc_date_format *f;
    assert_int_equal(sc_date_format_new(sc_slice_cstr(SC_DATE_DEFAULT_FORMAT), &f), SC_OK);
    int64_t ms;
    assert_int_equal(sc_date_math_parse(f, sc_slice_cstr("now-1x"), now, false, 0, &ms),
                     SC_EPARSE);
    assert_int_equal(sc_date_math_parse(f, sc_slice_cstr("now/"), now, false, 0, &ms), SC_EPARSE);
    assert_int_equal(sc_date_math_parse(f, sc_slice_cstr("now-99999999999999d"), now, false, 0, &ms),
                     SC_EPARSE);
    sc_date_format_free(f);
    int64_t tz;
    assert_int_equal(sc_date_parse_tz(sc_slice_cstr("+01:00"), &tz), SC_OK);
    assert_int_equal(tz, 3600000);
    assert_int_equal(sc_date_parse_tz(sc_slice_cstr("-0530"), &tz), SC_OK);
    assert_int_equal(tz, -19800000);
    assert_int_equal(sc_date_parse_tz(sc_slice_cstr("UTC"), &tz), SC_OK);
    assert_int_equal(tz, 0);
    assert_int_equal(sc_date_parse_tz(sc_slice_cstr("Europe/Paris"), &tz), SC_EUNSUPPORTED);
}

static void test_format(void **state)
{
    (void)state;
    char buf[64];
    sc_date_format_iso(1420114230123LL, buf);
    assert_string_equal(buf, "2015-01-01T12:10:30.123Z");
    sc_date_format_iso(-1, buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    sc_date_format *f;
    assert_int_equal(sc_date_format_new(sc_slice_cstr("yyyy-MM-dd HH:mm:ss||epoch_millis"), &f),
                     SC_OK);
    sc_date_format_print(f, 1420114230123LL, buf, sizeof(buf));
    assert_string_equal(buf, "2015-01-01 12:10:30");
    sc_date_format_free(f);
    assert_int_equal(sc_date_format_new(sc_slice_cstr("epoch_millis"), &f), SC_OK);
    sc_date_format_print(f, 1420114230123LL, buf, sizeof(buf));
    assert_string_equal(buf, "1420114230123");
    sc_date_format_free(f);
    /* civil conversions agree over a long span */
    for (int64_t z = -800000; z < 800000; z += 37) {
        int64_t y;
        unsigned m, d;
        sc_date_civil_from_days(z, &y, &m, &d);
        assert_int_equal(sc_date_days_from_civil(y, m, d), z);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iso),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_math),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
