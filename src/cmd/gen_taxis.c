/* `scry gen taxis`: nyc_taxis-like trips with the Rally mapping
 * (bench/workloads/taxis.mapping.json): pickup times through 2015 with a daily cycle, log-normal
 * distances, fares and tips correlated with distance, passenger counts, payment types and locations
 * around Manhattan and the airports. Documents are time-ordered by day, like the monthly source
 * files. */
#include <stdlib.h>
#include <time.h>

#include "cmd/gen_internal.h"

/* Relative trips per hour of day (NYC TLC 2015 shape: night trough, evening peak). */
static const double HOURLY[24] = {3.1, 2.3, 1.7, 1.2, 0.9, 0.8, 1.6, 3.0, 3.9, 4.0, 3.9, 4.1,
                                  4.4, 4.4, 4.6, 4.5, 4.1, 4.8, 5.8, 6.2, 5.8, 5.6, 5.3, 4.4};

static double pick(gen_rng *r, const double *w, int n)
{
    double tot = 0;
    for (int i = 0; i < n; i++)
        tot += w[i];
    double u = gen_unit(r) * tot;
    for (int i = 0; i < n; i++) {
        if (u < w[i])
            return i;
        u -= w[i];
    }
    return n - 1;
}

static void put_time(gen_out *o, const char *key, time_t t)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    gen_printf(o, "\"%s\":\"%04d-%02d-%02d %02d:%02d:%02d\"", key, tm.tm_year + 1900, tm.tm_mon + 1,
               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int sc__gen_taxis(const gen_opts *g, gen_out *o)
{
    gen_rng r;
    gen_rng_seed(&r, g->seed);
    const time_t year0 = 1420070400; /* 2015-01-01 00:00:00 */
    static const double pax_w[6] = {70, 14, 4, 2, 6, 4};
    static const double pay_w[4] = {62, 37, 0.7, 0.3};
    static const double rate_w[6] = {97.3, 2.0, 0.2, 0.1, 0.35, 0.05};
    for (uint64_t i = 0; i < g->docs && !o->failed; i++) {
        int day = (int)((double)i * 365.0 / (double)(g->docs ? g->docs : 1));
        int hour = (int)pick(&r, HOURLY, 24);
        time_t pickup = year0 + (time_t)day * 86400 + hour * 3600 + (time_t)gen_below(&r, 3600);
        bool green = gen_unit(&r) < 0.12;
        int rate = 1 + (int)pick(&r, rate_w, 6);
        double dist = rate == 2 ? gen_lognormal(&r, 17.5, 0.12) : gen_lognormal(&r, 1.7, 0.75);
        if (gen_unit(&r) < 0.01)
            dist = 0;
        if (dist > 60)
            dist = 60;
        double mph = gen_lognormal(&r, (hour >= 7 && hour <= 19) ? 10.0 : 15.0, 0.35);
        double minutes = 1.5 + dist / mph * 60.0;
        time_t dropoff = pickup + (time_t)(minutes * 60);
        double fare = rate == 2 ? 52.0 : floor((2.5 + dist * 2.5 + minutes * 0.12) * 2) / 2;
        double extra = hour >= 20 || hour < 6 ? 0.5 : (hour >= 16 && hour < 20 ? 1.0 : 0.0);
        int pay = 1 + (int)pick(&r, pay_w, 4);
        double tip = pay == 1 ? floor(fare * (0.12 + 0.13 * gen_unit(&r)) * 100) / 100 : 0;
        double tolls = gen_unit(&r) < (dist > 8 ? 0.4 : 0.02) ? 5.54 : 0;
        double total = fare + extra + 0.5 + 0.3 + tip + tolls;
        /* pickup: midtown, downtown, Brooklyn/Queens, airports */
        double lon, lat, u = gen_unit(&r);
        if (rate == 2 || u < 0.04) {
            lon = -73.7822;
            lat = 40.6441;
        } else if (u < 0.08) {
            lon = -73.8740;
            lat = 40.7743;
        } else if (green || u < 0.15) {
            lon = -73.93;
            lat = 40.72;
        } else {
            lon = -73.982;
            lat = 40.755;
        }
        lon += gen_normal(&r) * 0.012;
        lat += gen_normal(&r) * 0.018;
        double ang = gen_unit(&r) * 6.283185307179586;
        double dlon = lon + cos(ang) * dist * 0.0191 * 0.7,
               dlat = lat + sin(ang) * dist * 0.0145 * 0.7;
        int pax = 1 + (int)pick(&r, pax_w, 6);
        int vendor = 1 + (int)gen_below(&r, 2);
        gen_action(o, g);
        gen_printf(o, "{\"total_amount\":%.2f,\"improvement_surcharge\":0.3,", total);
        gen_printf(o, "\"pickup_location\":[%.6f,%.6f],", lon, lat);
        put_time(o, "pickup_datetime", pickup);
        gen_printf(o, ",\"trip_type\":\"%d\",", green && gen_unit(&r) < 0.03 ? 2 : 1);
        put_time(o, "dropoff_datetime", dropoff);
        gen_printf(o, ",\"rate_code_id\":\"%d\",\"tolls_amount\":%.2f,", rate, tolls);
        gen_printf(o, "\"dropoff_location\":[%.6f,%.6f],\"passenger_count\":%d,", dlon, dlat, pax);
        gen_printf(o, "\"fare_amount\":%.2f,\"extra\":%.2f,\"trip_distance\":%.2f,", fare, extra,
                   dist);
        gen_printf(o, "\"tip_amount\":%.2f,\"store_and_fwd_flag\":\"%s\",", tip,
                   gen_unit(&r) < 0.01 ? "Y" : "N");
        gen_printf(o, "\"payment_type\":\"%d\",\"mta_tax\":0.5,\"vendor_id\":\"%d\",", pay, vendor);
        gen_printf(o, "\"vendor_name\":\"%s\",\"cab_color\":\"%s\"}\n",
                   vendor == 1 ? "Creative Mobile Technologies" : "VeriFone Inc",
                   green ? "green" : "yellow");
    }
    return o->failed ? 1 : 0;
}
