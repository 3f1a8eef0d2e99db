/* Shared by the wire-format unit tests of cluster/: writing an encoding as a fuzz seed, and
 * checking that truncated or extended encodings are refused. Include after <cmocka.h>. */
#ifndef SC_TEST_WIRE_CHECK_H
#define SC_TEST_WIRE_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/status.h"

/* With the environment variable `env` naming a folder, the encoding is written there as the
 * fuzz seed `name`: a selector byte (which decoder the fuzz target runs) and the body. */
static inline void wire_write_seed(const char *env, const char *name, uint8_t selector,
                                   const uint8_t *p, size_t n)
{
    const char *dir = getenv(env);
    if (!dir)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fputc(selector, f);
    fwrite(p, 1, n, f);
    fclose(f);
}

typedef sc_status (*wire_decode_fn)(const uint8_t *p, size_t n, sc_arena *a, void *out);

/* Every prefix of p[0..n) at least `from` bytes long is refused as SC_ECORRUPT, as is the whole
 * encoding with a trailing byte. Each attempt decodes from its own exact-size copy, so a read
 * past the end shows under ASan. */
static inline void wire_check_truncations_from(const uint8_t *p, size_t n, size_t from,
                                               wire_decode_fn dec, void *out)
{
    for (size_t cut = from; cut <= n; cut++) {
        size_t len = cut == n ? n + 1 : cut;
        uint8_t *q = malloc(len ? len : 1);
        memcpy(q, p, cut);
        if (cut == n)
            q[n] = 0;
        sc_arena a;
        sc_arena_init(&a, 1 << 20);
        assert_int_equal(dec(q, len, &a, out), SC_ECORRUPT);
        sc_arena_fini(&a);
        free(q);
    }
}

static inline void wire_check_truncations(const uint8_t *p, size_t n, wire_decode_fn dec, void *out)
{
    wire_check_truncations_from(p, n, 0, dec, out);
}

#endif
