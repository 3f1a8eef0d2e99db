/* Basic-auth users file, crypt_r SHA-512 verification and a short cache of successful checks. */
#include "http/auth.h"

#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/log.h"

#define CACHE_SLOTS 64
#define MAC_LEN 32

typedef struct auth_user {
    char *name;
    char *hash;
} auth_user;

typedef struct cache_slot {
    uint8_t mac[MAC_LEN];
    uint64_t expires_ns; /* 0 = empty */
} cache_slot;

struct sc_http_auth {
    auth_user *users;
    size_t n_users;
    uint8_t key[32]; /* HMAC key of the cache, random per process */
    char dummy[128]; /* hash of a random password, checked for unknown users so that they
                        take as long as known ones */
    pthread_mutex_t mu;
    cache_slot cache[CACHE_SLOTS];
    unsigned next_slot;
};

/* Constant-time equality of two strings: the time depends on the lengths only. */
static bool ct_streq(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t n = la < lb ? la : lb;
    volatile unsigned char d = (unsigned char)(la != lb);
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static bool ct_memeq(const uint8_t *a, const uint8_t *b, size_t n)
{
    volatile uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

void sc_http_auth_free(sc_http_auth *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_users; i++) {
        free(a->users[i].name);
        explicit_bzero(a->users[i].hash, strlen(a->users[i].hash));
        free(a->users[i].hash);
    }
    free(a->users);
    pthread_mutex_destroy(&a->mu);
    explicit_bzero(a, sizeof *a);
    free(a);
}

static sc_status add_user(sc_http_auth *a, const char *name, const char *hash)
{
    auth_user *u = realloc(a->users, (a->n_users + 1) * sizeof *u);
    if (!u)
        return SC_ENOMEM;
    a->users = u;
    u[a->n_users].name = strdup(name);
    u[a->n_users].hash = strdup(hash);
    if (!u[a->n_users].name || !u[a->n_users].hash) {
        free(u[a->n_users].name);
        free(u[a->n_users].hash);
        return SC_ENOMEM;
    }
    a->n_users++;
    return SC_OK;
}

sc_status sc_http_auth_load(const char *path, sc_http_auth **out)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        sc_log(SC_LOG_ERROR, "auth", "cannot open users file [%s]: %s", path, strerror(errno));
        return SC_EIO;
    }
    sc_http_auth *a = calloc(1, sizeof *a);
    if (!a) {
        fclose(f);
        return SC_ENOMEM;
    }
    pthread_mutex_init(&a->mu, NULL);
    sc_status st = SC_OK;
    if (gnutls_rnd(GNUTLS_RND_KEY, a->key, sizeof a->key) != 0) {
        sc_log(SC_LOG_ERROR, "auth", "no random bytes for the credentials cache key");
        st = SC_EIO;
    }
    uint8_t rnd[16];
    char rnd_pw[33];
    if (st == SC_OK && gnutls_rnd(GNUTLS_RND_NONCE, rnd, sizeof rnd) == 0) {
        for (size_t i = 0; i < sizeof rnd; i++)
            snprintf(rnd_pw + 2 * i, 3, "%02x", rnd[i]);
        st = sc_http_auth_hash(rnd_pw, a->dummy, sizeof a->dummy);
    } else if (st == SC_OK) {
        st = SC_EIO;
    }
    char line[1024];
    int lineno = 0;
    while (st == SC_OK && fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                     line[n - 1] == '\t'))
            line[--n] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char *colon = strchr(p, ':');
        if (!colon || colon == p || strncmp(colon + 1, "$6$", 3) != 0 ||
            strchr(colon + 1, ':')) {
            sc_log(SC_LOG_ERROR, "auth",
                   "users file [%s] line %d: expected name:$6$salt$hash (see `scry passwd`)",
                   path, lineno);
            st = SC_EINVAL;
            break;
        }
        *colon = '\0';
        st = add_user(a, p, colon + 1);
    }
    explicit_bzero(line, sizeof line);
    fclose(f);
    if (st == SC_OK && a->n_users == 0) {
        sc_log(SC_LOG_ERROR, "auth", "users file [%s] has no users", path);
        st = SC_EINVAL;
    }
    if (st != SC_OK) {
        sc_http_auth_free(a);
        return st;
    }
    sc_log(SC_LOG_INFO, "auth", "basic authentication on: %zu users from [%s]", a->n_users, path);
    *out = a;
    return SC_OK;
}

/* HMAC-SHA256(key, user NUL password): the cache key of a credential pair. */
static bool cred_mac(const sc_http_auth *a, const char *user, const char *password,
                     uint8_t mac[MAC_LEN])
{
    gnutls_hmac_hd_t h;
    if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, a->key, sizeof a->key) != 0)
        return false;
    gnutls_hmac(h, user, strlen(user) + 1);
    gnutls_hmac(h, password, strlen(password));
    gnutls_hmac_deinit(h, mac);
    return true;
}

bool sc_http_auth_check(sc_http_auth *a, const char *user, const char *password)
{
    uint8_t mac[MAC_LEN];
    bool have_mac = cred_mac(a, user, password, mac);
    uint64_t now = sc_clock_now_ns();
    if (have_mac) {
        bool hit = false;
        pthread_mutex_lock(&a->mu);
        for (unsigned i = 0; i < CACHE_SLOTS; i++)
            if (a->cache[i].expires_ns > now && ct_memeq(a->cache[i].mac, mac, MAC_LEN))
                hit = true;
        pthread_mutex_unlock(&a->mu);
        if (hit)
            return true;
    }
    const char *hash = NULL;
    for (size_t i = 0; i < a->n_users; i++)
        if (!strcmp(a->users[i].name, user))
            hash = a->users[i].hash;
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return false;
    const char *got = crypt_r(password, hash ? hash : a->dummy, cd);
    bool ok = got && got[0] != '*' && ct_streq(got, hash ? hash : a->dummy) && hash;
    explicit_bzero(cd, sizeof *cd);
    free(cd);
    if (ok && have_mac) {
        pthread_mutex_lock(&a->mu);
        cache_slot *s = &a->cache[a->next_slot++ % CACHE_SLOTS];
        memcpy(s->mac, mac, MAC_LEN);
        s->expires_ns = now + (uint64_t)SC_HTTP_AUTH_CACHE_S * 1000000000ull;
        pthread_mutex_unlock(&a->mu);
    }
    explicit_bzero(mac, sizeof mac);
    return ok;
}

sc_status sc_http_auth_hash(const char *password, char *out, size_t cap)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$6$", 0, NULL, 0, salt, (int)sizeof salt))
        return SC_EIO;
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return SC_ENOMEM;
    const char *h = crypt_r(password, salt, cd);
    sc_status st = SC_OK;
    if (!h || h[0] == '*')
        st = SC_EIO;
    else if (strlen(h) + 1 > cap)
        st = SC_EINVAL;
    else
        memcpy(out, h, strlen(h) + 1);
    explicit_bzero(cd, sizeof *cd);
    free(cd);
    return st;
}
