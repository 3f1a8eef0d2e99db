/* Time zones for date aggregations: a zone id ("Z", "+05:30", "UTC", or an IANA region such as
 * "America/New_York" read from the system's compiled zone database, /usr/share/zoneinfo) as
 * the UTC offsets it uses and the instants they change (daylight saving). */
#ifndef SC_MAPPING_TZ_H
#define SC_MAPPING_TZ_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"

/* A zone's offsets: base_offset_ms before the first transition, then offset_s[i] from
 * at_ms[i] on (ascending). n_trans 0 = a fixed offset. Arrays in the caller's arena. */
typedef struct sc_tz_rules {
    int64_t base_offset_ms;
    int64_t *at_ms;
    int32_t *offset_s;
    size_t n_trans;
} sc_tz_rules;

/* Loads zone `id`: fixed offsets through sc_date_parse_tz; region names from the TZif file
 * (version 2+ 64-bit data when present). SC_ENOTFOUND for an unknown zone or a malformed id,
 * SC_ECORRUPT for a malformed zone file, SC_ENOMEM / SC_ELIMIT from the arena. Thread-safe. */
sc_status sc_tz_load(const char *id, sc_arena *a, sc_tz_rules *out) SC_MUST_USE;

#endif
