/* Query DSL, geo queries: geo_bounding_box and geo_distance on geo_point fields (see dsl.h,
 * dsl_internal.h; execution in search/geo.h). Points are accepted in every form Elasticsearch
 * documents take: {"lat": .., "lon": ..}, [lon, lat], "lat,lon", WKT "POINT (lon lat)" and
 * GeoJSON {"type": "Point", "coordinates": [lon, lat]};
 * boxes as top_left/bottom_right, top_right/bottom_left, top/left/bottom/right or WKT
 * "BBOX (minLon, maxLon, maxLat, minLat)"; distances as meters or with a unit ("12km"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/dsl_internal.h"

/* ---- points ----------------------------------------------------------------------------- */

static bool coord(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return isfinite(*out);
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        *out = strtod(s, &end);
        return end != s && *end == 0 && isfinite(*out);
    }
    return false;
}

/* "lat,lon" or "POINT (lon lat)" (case-insensitive, spaces allowed). */
static bool point_text(const char *s, double *lat, double *lon)
{
    char tail;
    while (*s == ' ')
        s++;
    if (strncasecmp(s, "POINT", 5) == 0)
        return sscanf(s + 5, " ( %lf %lf )%c", lon, lat, &tail) == 2 && isfinite(*lat) &&
               isfinite(*lon);
    if (!strchr(s, ','))
        return false; /* a geohash */
    return sscanf(s, " %lf , %lf %c", lat, lon, &tail) == 2 && isfinite(*lat) && isfinite(*lon);
}

/* A point in any accepted form; `what` names it in errors. */
static sc_status parse_point(P *p, const char *qname, const char *what, const json_t *v,
                             double *lat, double *lon)
{
    bool ok = false;
    *lat = *lon = 0;
    const json_t *coords = json_is_object(v) ? json_object_get(v, "coordinates") : NULL;
    if (coords) { /* GeoJSON {"type": "Point", "coordinates": [lon, lat]} */
        const json_t *t = json_object_get(v, "type");
        size_t n = json_array_size(coords);
        ok = json_object_size(v) == 2 && json_is_string(t) &&
             strcasecmp(json_string_value(t), "point") == 0 && (n == 2 || n == 3) &&
             json_is_number(json_array_get(coords, 0)) &&
             json_is_number(json_array_get(coords, 1)) && coord(json_array_get(coords, 0), lon) &&
             coord(json_array_get(coords, 1), lat);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach ((json_t *)v, k, x) {
            if (strcmp(k, "lat") != 0 && strcmp(k, "lon") != 0)
                return sc__dsl_fail(p, "parsing_exception",
                                    "[%s] failed to parse [%s]: field must be either [lat] or "
                                    "[lon], found [%s]",
                                    qname, what, k);
        }
        ok = coord(json_object_get(v, "lat"), lat) && coord(json_object_get(v, "lon"), lon);
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        ok = (n == 2 || n == 3) && json_is_number(json_array_get(v, 0)) &&
             json_is_number(json_array_get(v, 1)) && coord(json_array_get(v, 0), lon) &&
             coord(json_array_get(v, 1), lat) && (n == 2 || json_is_number(json_array_get(v, 2)));
    } else if (json_is_string(v)) {
        if (!point_text(json_string_value(v), lat, lon))
            return sc__dsl_fail(p, "parsing_exception",
                                "[%s] failed to parse [%s] from [%s]: expected \"lat,lon\" or "
                                "\"POINT (lon lat)\" (geohashes are not supported)",
                                qname, what, json_string_value(v));
        return SC_OK;
    }
    if (!ok)
        return sc__dsl_fail(p, "parsing_exception",
                            "[%s] failed to parse [%s]: expected {\"lat\": .., \"lon\": ..}, "
                            "[lon, lat], \"lat,lon\", \"POINT (lon lat)\" or a GeoJSON Point",
                            qname, what);
    return SC_OK;
}

/* validation_method: strict (default) rejects out-of-range coordinates; coerce and
 * ignore_malformed wrap them into range as Elasticsearch's GeoUtils.normalizePoint. */
typedef struct geo_opts {
    bool lenient;
    bool ignore_unmapped;
} geo_opts;

static sc_status read_opts(P *p, const char *qname, const json_t *body, geo_opts *o)
{
    o->lenient = false;
    o->ignore_unmapped = false;
    const json_t *v = json_object_get(body, "validation_method");
    if (v) {
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        if (!strcasecmp(s, "coerce") || !strcasecmp(s, "ignore_malformed"))
            o->lenient = true;
        else if (strcasecmp(s, "strict") != 0)
            return sc__dsl_fail(p, "parsing_exception",
                                "[%s] unknown [validation_method], expected one of [STRICT, "
                                "COERCE, IGNORE_MALFORMED]",
                                qname);
    }
    v = json_object_get(body, "ignore_unmapped");
    if (v && !json_is_boolean(v))
        return sc__dsl_fail(p, "parsing_exception", "[%s] [ignore_unmapped] must be a boolean",
                            qname);
    o->ignore_unmapped = json_is_true(v);
    return SC_OK;
}

static double wrap(double x, double half)
{
    if (x >= -half && x <= half)
        return x;
    double m = fmod(x + half, 2 * half);
    if (m < 0)
        m += 2 * half;
    return m - half;
}

static void normalize(double *lat, double *lon)
{
    double la = wrap(*lat, 180.0);
    if (la > 90.0) {
        la = 180.0 - la;
        *lon += 180.0;
    } else if (la < -90.0) {
        la = -180.0 - la;
        *lon += 180.0;
    }
    *lat = la;
    *lon = wrap(*lon, 180.0);
}

static sc_status check_point(P *p, const char *qname, const geo_opts *o, double *lat, double *lon)
{
    if (o->lenient) {
        normalize(lat, lon);
        return SC_OK;
    }
    if (*lat < -90.0 || *lat > 90.0)
        return sc__dsl_fail(p, "query_shard_exception", "illegal latitude value [%g] for [%s]",
                            *lat, qname);
    if (*lon < -180.0 || *lon > 180.0)
        return sc__dsl_fail(p, "query_shard_exception", "illegal longitude value [%g] for [%s]",
                            *lon, qname);
    return SC_OK;
}

/* The single field key of a geo query body (besides the query's own keys). */
static sc_status geo_field(P *p, const char *qname, const json_t *body, const char *const *own_keys,
                           sc_slice *field, json_t **value)
{
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[%s] query malformed", qname);
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach ((json_t *)body, k, v) {
        bool own = false;
        for (const char *const *o = own_keys; *o; o++)
            own = own || strcmp(k, *o) == 0;
        if (own)
            continue;
        if (n++ > 0)
            return sc__dsl_fail(p, "parsing_exception",
                                "[%s] query doesn't support multiple fields, found [%.*s] and "
                                "[%s]",
                                qname, (int)field->len, (const char *)field->ptr, k);
        *field = sc_slice_cstr(k);
        *value = v;
    }
    if (n == 0)
        return sc__dsl_fail(p, "parsing_exception", "[%s] requires a geo_point field", qname);
    return SC_OK;
}

/* The field must be a geo_point; an unmapped one matches nothing with ignore_unmapped, else
 * fails as Elasticsearch does. *none: answer match_none. */
static sc_status check_field(P *p, const char *qname, sc_slice field, const geo_opts *o, bool *none)
{
    *none = false;
    if (!p->env || !p->env->field_kind)
        return SC_OK;
    sc_dsl_field_kind k = p->env->field_kind(p->env->ctx, field);
    if (k == SC_DSL_FIELD_GEO)
        return SC_OK;
    if (k == SC_DSL_FIELD_UNMAPPED && o->ignore_unmapped) {
        *none = true;
        return SC_OK;
    }
    if (k == SC_DSL_FIELD_UNMAPPED)
        return sc__dsl_fail(p, "query_shard_exception", "failed to find geo field [%.*s]",
                            (int)field.len, (const char *)field.ptr);
    return sc__dsl_fail(p, "query_shard_exception",
                        "field [%.*s] is not a geo_point field: [%s] needs one", (int)field.len,
                        (const char *)field.ptr, qname);
}

/* ---- geo_bounding_box ------------------------------------------------------------------- */

/* WKT "BBOX (minLon, maxLon, maxLat, minLat)". */
static bool bbox_wkt(const char *s, double *left, double *right, double *top, double *bottom)
{
    char tail;
    while (*s == ' ')
        s++;
    if (strncasecmp(s, "BBOX", 4) != 0)
        return false;
    return sscanf(s + 4, " ( %lf , %lf , %lf , %lf )%c", left, right, top, bottom, &tail) == 4 &&
           isfinite(*left) && isfinite(*right) && isfinite(*top) && isfinite(*bottom);
}

typedef struct box_in {
    double v[4]; /* top, bottom, left, right */
    bool set[4];
} box_in;

enum {
    TOP,
    BOTTOM,
    LEFT,
    RIGHT
};

static sc_status box_side(P *p, box_in *b, int side, double v)
{
    static const char *const names[] = {"top", "bottom", "left", "right"};
    if (b->set[side])
        return sc__dsl_fail(p, "parsing_exception",
                            "[geo_bounding_box] [%s] is given more than once", names[side]);
    b->v[side] = v;
    b->set[side] = true;
    return SC_OK;
}

static sc_status box_corner(P *p, box_in *b, const char *name, const json_t *v, int lat_side,
                            int lon_side)
{
    double lat, lon;
    SC_TRY(parse_point(p, "geo_bounding_box", name, v, &lat, &lon));
    SC_TRY(box_side(p, b, lat_side, lat));
    return box_side(p, b, lon_side, lon);
}

static sc_status parse_box(P *p, const json_t *spec, box_in *b)
{
    memset(b, 0, sizeof *b);
    if (!json_is_object(spec))
        return sc__dsl_fail(p, "parsing_exception",
                            "[geo_bounding_box] expected an object of corners or a [wkt] box");
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)spec, k, v) {
        double x;
        if (!strcmp(k, "top_left") || !strcmp(k, "topLeft")) {
            SC_TRY(box_corner(p, b, k, v, TOP, LEFT));
        } else if (!strcmp(k, "bottom_right") || !strcmp(k, "bottomRight")) {
            SC_TRY(box_corner(p, b, k, v, BOTTOM, RIGHT));
        } else if (!strcmp(k, "top_right") || !strcmp(k, "topRight")) {
            SC_TRY(box_corner(p, b, k, v, TOP, RIGHT));
        } else if (!strcmp(k, "bottom_left") || !strcmp(k, "bottomLeft")) {
            SC_TRY(box_corner(p, b, k, v, BOTTOM, LEFT));
        } else if (!strcmp(k, "top") || !strcmp(k, "bottom") || !strcmp(k, "left") ||
                   !strcmp(k, "right")) {
            int side = k[0] == 't' ? TOP : k[0] == 'b' ? BOTTOM : k[0] == 'l' ? LEFT : RIGHT;
            if (!coord(v, &x))
                return sc__dsl_fail(p, "parsing_exception",
                                    "[geo_bounding_box] [%s] must be a number", k);
            SC_TRY(box_side(p, b, side, x));
        } else if (!strcmp(k, "wkt")) {
            double l, r, t, bo;
            if (!json_is_string(v) || !bbox_wkt(json_string_value(v), &l, &r, &t, &bo))
                return sc__dsl_fail(p, "parsing_exception",
                                    "[geo_bounding_box] [wkt] must be \"BBOX (minLon, maxLon, "
                                    "maxLat, minLat)\"");
            SC_TRY(box_side(p, b, TOP, t));
            SC_TRY(box_side(p, b, BOTTOM, bo));
            SC_TRY(box_side(p, b, LEFT, l));
            SC_TRY(box_side(p, b, RIGHT, r));
        } else {
            return sc__dsl_fail(p, "parsing_exception",
                                "[geo_bounding_box] unexpected field [%s] in the box", k);
        }
    }
    for (int i = 0; i < 4; i++)
        if (!b->set[i])
            return sc__dsl_fail(p, "parsing_exception",
                                "[geo_bounding_box] the box needs top, bottom, left and right "
                                "(top_left + bottom_right, top_right + bottom_left, or wkt)");
    return SC_OK;
}

sc_status sc__dsl_q_geo_bounding_box(P *p, const json_t *body, sc_query **out)
{
    static const char *const own[] = {
        "validation_method", "ignore_unmapped", "type", "boost", "_name", NULL};
    sc_slice field = {0};
    json_t *spec = NULL;
    geo_opts o;
    SC_TRY(geo_field(p, "geo_bounding_box", body, own, &field, &spec));
    SC_TRY(read_opts(p, "geo_bounding_box", body, &o));
    box_in b;
    SC_TRY(parse_box(p, spec, &b));
    double top = b.v[TOP], bottom = b.v[BOTTOM], left = b.v[LEFT], right = b.v[RIGHT];
    SC_TRY(check_point(p, "geo_bounding_box", &o, &top, &left));
    SC_TRY(check_point(p, "geo_bounding_box", &o, &bottom, &right));
    if (top < bottom)
        return sc__dsl_fail(p, "query_shard_exception", "top is below bottom corner: %g vs. %g",
                            top, bottom);
    bool none;
    SC_TRY(check_field(p, "geo_bounding_box", field, &o, &none));
    if (none) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    sc_geo_shape s = {
        .kind = SC_GEO_BOX, .top = top, .bottom = bottom, .left = left, .right = right};
    *out = NEW(p, sc_query_geo(p->a, field, &s));
    return sc__dsl_apply_boost(p, "geo_bounding_box", body, *out);
}

/* ---- geo_distance ----------------------------------------------------------------------- */

/* Elasticsearch's DistanceUnit names and their length in meters. */
static const struct {
    const char *name;
    double meters;
} units[] = {
    {"in", 0.0254},
    {"inch", 0.0254},
    {"yd", 0.9144},
    {"yards", 0.9144},
    {"ft", 0.3048},
    {"feet", 0.3048},
    {"km", 1000.0},
    {"kilometers", 1000.0},
    {"NM", 1852.0},
    {"nmi", 1852.0},
    {"nauticalmiles", 1852.0},
    {"mm", 0.001},
    {"millimeters", 0.001},
    {"cm", 0.01},
    {"centimeters", 0.01},
    {"mi", 1609.344},
    {"miles", 1609.344},
    {"m", 1.0},
    {"meters", 1.0},
};

/* A distance: a number of meters, or a string "<number>[ ]<unit>" (no unit: meters). */
static bool parse_distance(const json_t *v, double *meters)
{
    if (json_is_number(v)) {
        *meters = json_number_value(v);
        return isfinite(*meters);
    }
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    char *end;
    double x = strtod(s, &end);
    if (end == s || !isfinite(x))
        return false;
    while (*end == ' ')
        end++;
    size_t len = strlen(end);
    while (len && end[len - 1] == ' ')
        len--;
    if (len == 0) {
        *meters = x;
        return true;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == len && memcmp(units[i].name, end, len) == 0) {
            *meters = x * units[i].meters;
            return isfinite(*meters);
        }
    return false;
}

sc_status sc__dsl_q_geo_distance(P *p, const json_t *body, sc_query **out)
{
    static const char *const own[] = {
        "distance", "distance_type", "validation_method", "ignore_unmapped", "boost", "_name",
        NULL};
    sc_slice field = {0};
    json_t *pt = NULL;
    geo_opts o;
    SC_TRY(geo_field(p, "geo_distance", body, own, &field, &pt));
    SC_TRY(read_opts(p, "geo_distance", body, &o));
    const json_t *dv = json_object_get(body, "distance");
    if (!dv)
        return sc__dsl_fail(p, "parsing_exception", "[geo_distance] requires [distance]");
    double meters;
    if (!parse_distance(dv, &meters)) {
        char shown[64] = "";
        if (json_is_string(dv))
            snprintf(shown, sizeof shown, "%s", json_string_value(dv));
        return sc__dsl_fail(p, "parsing_exception",
                            "[geo_distance] failed to parse [distance] [%s]: expected a number "
                            "with an optional unit (in, yd, ft, km, NM, mm, cm, mi, m)",
                            shown);
    }
    if (!(meters > 0))
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[geo_distance] distance must be greater than zero");
    const json_t *dt = json_object_get(body, "distance_type");
    if (dt && (!json_is_string(dt) || (strcasecmp(json_string_value(dt), "arc") != 0 &&
                                       strcasecmp(json_string_value(dt), "plane") != 0)))
        return sc__dsl_fail(p, "parsing_exception",
                            "[geo_distance] unknown [distance_type], expected [arc] or [plane]");
    double lat, lon;
    SC_TRY(parse_point(p, "geo_distance", "point", pt, &lat, &lon));
    SC_TRY(check_point(p, "geo_distance", &o, &lat, &lon));
    bool none;
    SC_TRY(check_field(p, "geo_distance", field, &o, &none));
    if (none) {
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    sc_geo_shape s = {.kind = SC_GEO_DISTANCE, .lat = lat, .lon = lon, .radius_m = meters};
    *out = NEW(p, sc_query_geo(p->a, field, &s));
    return sc__dsl_apply_boost(p, "geo_distance", body, *out);
}
