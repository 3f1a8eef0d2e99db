/* Dates as Elasticsearch's `date` field understands them: a format specification (named formats
 * such as strict_date_optional_time, epoch_millis, epoch_second, or Java-style patterns such as
 * `yyyy-MM-dd HH:mm:ss`, with `||` alternatives) compiled once, parsing text into epoch
 * milliseconds (UTC), formatting back, and date math (`now-1d/d`, `2020-01-01||+1M/d`) for range
 * queries. Pure functions of their inputs: no clock is read here (callers pass `now`). */
#ifndef SC_MAPPING_DATE_H
#define SC_MAPPING_DATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"

/* Elasticsearch's default for a `date` field without `format`. */
#define SC_DATE_DEFAULT_FORMAT "strict_date_optional_time||epoch_millis"

typedef struct sc_date_format sc_date_format;

/* Compiles a format specification ("strict_date_optional_time||epoch_millis", "yyyy/MM/dd",
 * "dd/MM/yyyy HH:mm:ss||epoch_second"). Supported named formats: strict_date_optional_time,
 * date_optional_time, strict_date_optional_time_nanos, epoch_millis, epoch_second, date /
 * strict_date (yyyy-MM-dd), date_time / strict_date_time, date_time_no_millis,
 * date_hour_minute_second, date_hour_minute, basic_date (yyyyMMdd), year_month_day, year_month,
 * year. Pattern letters: y/u year, M month (MMM/MMMM names), d day, H hour, h hour with a AM/PM,
 * m minute, s second, S fraction, Z/X/x zone offsets, E day names (ignored), 'quoted literals';
 * any other character is a literal. On success *out is owned (free with sc_date_format_free).
 * SC_EINVAL for an unknown named format or an empty specification; SC_ENOMEM. */
sc_status sc_date_format_new(sc_slice spec, sc_date_format **out) SC_MUST_USE;

void sc_date_format_free(sc_date_format *f);

/* The specification text the format was compiled from (NUL-terminated, owned by f). */
const char *sc_date_format_spec(const sc_date_format *f);

/* Parses text with the first alternative that accepts the whole text; the result is UTC epoch
 * milliseconds (fractions below a millisecond are truncated toward negative infinity). Text
 * without a zone is taken as UTC. SC_EPARSE when no alternative accepts it or the value is out
 * of range. Thread-safe (f is immutable). */
sc_status sc_date_parse(const sc_date_format *f, sc_slice text, int64_t *out_ms) SC_MUST_USE;

/* As sc_date_parse with nanosecond precision (date_nanos): UTC epoch nanoseconds. SC_EPARSE
 * also when the instant is outside what int64 nanoseconds can hold (1677..2262). */
sc_status sc_date_parse_nanos(const sc_date_format *f, sc_slice text, int64_t *out_ns)
    SC_MUST_USE;

/* Parses a date-math expression: "now" or a date (parsed with f), optionally followed by
 * operations `+N<unit>`, `-N<unit>`, `/<unit>` (units y M w d h H m s); a date anchor is
 * separated from its operations by "||" ("2020-01-01||+1M/d"). Rounding goes down to the start
 * of the unit, or when round_up is true to the last millisecond of the unit (as Elasticsearch
 * does for `lte` and `gt`). now_ms is the caller's "now". tz_offset_ms shifts the calendar used
 * for rounding and for dates written without a zone (0 = UTC). SC_EPARSE on bad syntax. */
sc_status sc_date_math_parse(const sc_date_format *f, sc_slice expr, int64_t now_ms, bool round_up,
                             int64_t tz_offset_ms, int64_t *out_ms) SC_MUST_USE;

/* Parses a time_zone parameter: "Z", "UTC", "GMT", "+01:00", "-0530", "+01" into a fixed
 * offset in milliseconds. Named region zones (Europe/Paris) are not supported: SC_EUNSUPPORTED.
 * SC_EPARSE for malformed text. */
sc_status sc_date_parse_tz(sc_slice tz, int64_t *out_offset_ms) SC_MUST_USE;

/* Formats ms as strict_date_optional_time in UTC ("2020-01-31T10:00:00.000Z") into buf (at
 * least 40 bytes); returns the length written (buf is NUL-terminated). */
size_t sc_date_format_iso(int64_t ms, char *buf);

/* Formats ms with the first alternative of f (epoch formats give the number; patterns render
 * their fields; named ISO formats render as sc_date_format_iso). Returns the length written into
 * buf (cap bytes, NUL-terminated; output is truncated to fit). */
size_t sc_date_format_print(const sc_date_format *f, int64_t ms, char *buf, size_t cap);

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1..12, day 1..31). */
int64_t sc_date_days_from_civil(int64_t y, unsigned m, unsigned d);

/* Inverse of sc_date_days_from_civil. */
void sc_date_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif
