/* HTTP basic authentication against a users file.
 *
 * Users file: one `name:hash` per line, `#` comments and blank lines ignored; the hash is a
 * crypt(3) SHA-512 string (`$6$salt$...` or `$6$rounds=N$salt$...`) as printed by
 * `scry passwd NAME`. Names may not contain ':'.
 *
 * Checking a password runs the SHA-512 rounds (~5000 by default, about a millisecond), so a
 * successful check is cached for SC_HTTP_AUTH_CACHE_S seconds under an HMAC-SHA256 of
 * (user, password) keyed with a per-process random key; the cache never holds a password. */
#ifndef SC_HTTP_AUTH_H
#define SC_HTTP_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

#define SC_HTTP_AUTH_CACHE_S 60

typedef struct sc_http_auth sc_http_auth;

/* Reads the users file. SC_EIO when it cannot be read, SC_EINVAL (with a message naming the
 * line on stderr through the log) when a line is malformed or there are no users. */
sc_status sc_http_auth_load(const char *path, sc_http_auth **out) SC_MUST_USE;
/* NULL is a no-op. */
void sc_http_auth_free(sc_http_auth *a);

/* True when `user` exists and `password` matches its hash. Thread-safe. */
bool sc_http_auth_check(sc_http_auth *a, const char *user, const char *password);

/* A new SHA-512 crypt hash of `password` with a random salt, written to out (NUL-terminated).
 * SC_EIO when no random salt could be made; SC_EINVAL when out is too small (128 bytes
 * suffice). */
sc_status sc_http_auth_hash(const char *password, char *out, size_t cap) SC_MUST_USE;

#endif
