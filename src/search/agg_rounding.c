/* Date rounding for date_histogram (search/agg.h): calendar units (minute .. year, weeks from
 * Monday) and fixed intervals, on the local time line of a time zone (fixed offset or a table
 * of DST transitions), then mapped back to UTC, with an `offset` shifting every boundary. */
#include "search/agg.h"

#define MS_MIN INT64_C(60000)
#define MS_HOUR INT64_C(3600000)
#define MS_DAY INT64_C(86400000)

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Days since 1970-01-01 of y-m-d (proleptic Gregorian; m 1..12). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

int64_t sc_agg_tz_offset(const sc_agg_tz *tz, int64_t t)
{
    if (!tz->n_trans || t < tz->at_ms[0])
        return tz->base_offset_ms;
    size_t lo = 0, hi = tz->n_trans; /* last transition <= t */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->at_ms[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return (int64_t)tz->offset_s[lo] * 1000;
}

/* The UTC instant of local time `local`: the later offset's reading when the local time is
 * ambiguous (a fall-back hour), the instant the gap ends when it does not exist. */
static int64_t local_to_utc(const sc_agg_tz *tz, int64_t local)
{
    if (!tz->n_trans)
        return local - tz->base_offset_ms;
    int64_t o1 = sc_agg_tz_offset(tz, local - sc_agg_tz_offset(tz, local));
    int64_t u = local - o1;
    if (u + sc_agg_tz_offset(tz, u) == local)
        return u;
    /* not a reading of u: either the earlier offset's reading works (an overlap), or the
     * local time falls in a gap and the bucket starts where the gap ends (the transition) */
    int64_t o0 = sc_agg_tz_offset(tz, local - o1 - 2 * MS_HOUR);
    int64_t u0 = local - o0;
    if (u0 + sc_agg_tz_offset(tz, u0) == local)
        return u0;
    int64_t hi = u > u0 ? u : u0;
    size_t lo_i = 0, hi_i = tz->n_trans;
    while (hi_i - lo_i > 1) {
        size_t mid = lo_i + (hi_i - lo_i) / 2;
        if (tz->at_ms[mid] <= hi)
            lo_i = mid;
        else
            hi_i = mid;
    }
    return tz->at_ms[lo_i];
}

/* Rounds local time down to the unit. */
static int64_t round_local(const sc_agg_rounding *r, int64_t local)
{
    int64_t days, y, m, d;
    switch (r->unit) {
    case SC_AGG_CAL_NONE:
        return r->fixed_ms > 0 ? floor_div(local, r->fixed_ms) * r->fixed_ms : local;
    case SC_AGG_CAL_MINUTE: return floor_div(local, MS_MIN) * MS_MIN;
    case SC_AGG_CAL_HOUR: return floor_div(local, MS_HOUR) * MS_HOUR;
    case SC_AGG_CAL_DAY: return floor_div(local, MS_DAY) * MS_DAY;
    case SC_AGG_CAL_WEEK:
        days = floor_div(local, MS_DAY);
        /* 1970-01-01 was a Thursday: Monday-based day of week = (days + 3) mod 7 */
        return (days - (((days + 3) % 7) + 7) % 7) * MS_DAY;
    default: break;
    }
    civil_from_days(floor_div(local, MS_DAY), &y, &m, &d);
    if (r->unit == SC_AGG_CAL_QUARTER)
        m = (m - 1) / 3 * 3 + 1;
    else if (r->unit == SC_AGG_CAL_YEAR) {
        m = 1;
        if (r->years > 1)
            y = floor_div(y, r->years) * r->years;
    }
    return days_from_civil(y, m, 1) * MS_DAY;
}

/* The local start of the bucket after the one starting at local time `start`. */
static int64_t next_local(const sc_agg_rounding *r, int64_t start)
{
    int64_t y, m, d;
    switch (r->unit) {
    case SC_AGG_CAL_NONE: return start + (r->fixed_ms > 0 ? r->fixed_ms : 1);
    case SC_AGG_CAL_MINUTE: return start + MS_MIN;
    case SC_AGG_CAL_HOUR: return start + MS_HOUR;
    case SC_AGG_CAL_DAY: return start + MS_DAY;
    case SC_AGG_CAL_WEEK: return start + 7 * MS_DAY;
    default: break;
    }
    civil_from_days(floor_div(start, MS_DAY), &y, &m, &d);
    m += r->unit == SC_AGG_CAL_MONTH     ? 1
         : r->unit == SC_AGG_CAL_QUARTER ? 3
                                         : 12 * (int64_t)(r->years > 1 ? r->years : 1);
    while (m > 12) {
        m -= 12;
        y++;
    }
    return days_from_civil(y, m, 1) * MS_DAY;
}

/* Instants are clamped to +-2^60 ms (36 million years) so that no step overflows. */
static int64_t clamp(int64_t t)
{
    const int64_t lim = INT64_C(1) << 60;
    return t > lim ? lim : t < -lim ? -lim : t;
}

int64_t sc_agg_round(const sc_agg_rounding *r, int64_t t)
{
    int64_t x = clamp(t) - clamp(r->offset_ms);
    int64_t ox = sc_agg_tz_offset(&r->tz, x);
    int64_t start = round_local(r, x + ox);
    /* the reading with x's own offset first: in a repeated hour each reading is a bucket */
    int64_t u = start - ox;
    if (u <= x && u + sc_agg_tz_offset(&r->tz, u) == start)
        return u + r->offset_ms;
    return local_to_utc(&r->tz, start) + clamp(r->offset_ms);
}

/* The length of units that never change with the offset (up to an hour). */
static int64_t short_unit_ms(const sc_agg_rounding *r)
{
    if (r->unit == SC_AGG_CAL_MINUTE)
        return MS_MIN;
    if (r->unit == SC_AGG_CAL_HOUR)
        return MS_HOUR;
    if (r->unit == SC_AGG_CAL_NONE && r->fixed_ms > 0 && r->fixed_ms <= MS_HOUR &&
        MS_HOUR % r->fixed_ms == 0)
        return r->fixed_ms;
    return 0;
}

int64_t sc_agg_round_next(const sc_agg_rounding *r, int64_t key)
{
    int64_t len = short_unit_ms(r);
    key = clamp(key);
    if (len)
        return sc_agg_round(r, key + len);
    int64_t x = key - clamp(r->offset_ms);
    int64_t local = x + clamp(sc_agg_tz_offset(&r->tz, x));
    int64_t next = local_to_utc(&r->tz, next_local(r, round_local(r, local)));
    if (next <= x) /* a repeated local time: step on */
        next = local_to_utc(&r->tz, next_local(r, next_local(r, round_local(r, local))));
    return next + clamp(r->offset_ms);
}

void sc_agg_auto_rung(uint32_t i, const sc_agg_tz *tz, sc_agg_rounding *out, const char **label)
{
    static const struct {
        sc_agg_cal_unit unit;
        int64_t fixed_ms;
        uint32_t years;
        const char *label;
    } ladder[SC_AGG_AUTO_LADDER] = {
        {SC_AGG_CAL_NONE, 1000, 0, "1s"},
        {SC_AGG_CAL_NONE, 5000, 0, "5s"},
        {SC_AGG_CAL_NONE, 10000, 0, "10s"},
        {SC_AGG_CAL_NONE, 30000, 0, "30s"},
        {SC_AGG_CAL_MINUTE, 0, 0, "1m"},
        {SC_AGG_CAL_NONE, 5 * MS_MIN, 0, "5m"},
        {SC_AGG_CAL_NONE, 10 * MS_MIN, 0, "10m"},
        {SC_AGG_CAL_NONE, 30 * MS_MIN, 0, "30m"},
        {SC_AGG_CAL_HOUR, 0, 0, "1h"},
        {SC_AGG_CAL_NONE, 3 * MS_HOUR, 0, "3h"},
        {SC_AGG_CAL_NONE, 12 * MS_HOUR, 0, "12h"},
        {SC_AGG_CAL_DAY, 0, 0, "1d"},
        {SC_AGG_CAL_NONE, 7 * MS_DAY, 0, "7d"},
        {SC_AGG_CAL_MONTH, 0, 0, "1M"},
        {SC_AGG_CAL_QUARTER, 0, 0, "3M"},
        {SC_AGG_CAL_YEAR, 0, 1, "1y"},
        {SC_AGG_CAL_YEAR, 0, 5, "5y"},
        {SC_AGG_CAL_YEAR, 0, 10, "10y"},
        {SC_AGG_CAL_YEAR, 0, 20, "20y"},
        {SC_AGG_CAL_YEAR, 0, 50, "50y"},
        {SC_AGG_CAL_YEAR, 0, 100, "100y"},
    };
    if (i >= SC_AGG_AUTO_LADDER)
        i = SC_AGG_AUTO_LADDER - 1;
    *out = (sc_agg_rounding){.unit = ladder[i].unit,
                             .fixed_ms = ladder[i].fixed_ms,
                             .years = ladder[i].years,
                             .tz = *tz};
    if (label)
        *label = ladder[i].label;
}
