/* `scry serve`: configuration (flags and a scry.yml-style file), the node, the HTTP server,
 * signal handling and graceful shutdown.
 *
 * Config file: one `key: value` per line, `#` comments, keys as in Elasticsearch's
 * elasticsearch.yml where one exists:
 *   path.data: ./data            http.port: 9200          network.host: 127.0.0.1
 *   node.name: node-1            cluster.name: scry       http.max_content_length: 100mb
 *   threads: 2 (HTTP workers)    search.threads: 2        memory.limit: 1gb
 *   http.timeout: 60s            log.level: info          slowlog.threshold: 1s
 *   index.translog.durability: request|async
 *   indices.memory.shard_inactive_time: 5m (a shard without writes this long commits and frees
 *     its indexing buffer; 0 or -1: never)
 *   indices.memory.index_buffer_size: 64mb (per shard: its buffer becomes a segment past it)
 *   path.repo: DIR (fs snapshot repositories must lie under it; --path-repo)
 *   test.recovery_delay: 0 (tests only: delay each shard's translog replay at start)
 *   test.snapshot_delay: 0 (tests only: a snapshot waits this long before each file it copies)
 *   test.search_delay: 0 (tests only: each shard query waits this long, cancellable, first)
 *   xpack.security.authc.users_file: users     (or users.file; basic authentication)
 *   xpack.security.http.ssl.certificate: cert.pem  (or tls.cert; HTTPS)
 *   xpack.security.http.ssl.key: key.pem           (or tls.key)
 *   http.max_open_connections: 10000   http.compression: false   http.transport: epoll|mhd
 *   http.busy_poll_us: 50 (after a request, an idle worker polls this long before sleeping)
 *   cluster.etcd: http://127.0.0.1:2379[,...]   (--cluster etcd=...; docs/cluster.md)
 *   transport.port: 9300         cluster.lease_ttl: 3s
 *   xpack.security.transport.ssl.enabled: true  (TLS between nodes; docs/cluster.md)
 *   xpack.security.transport.ssl.certificate / .key / .certificate_authorities: PEM files
 *   xpack.security.transport.ssl.verification_mode: full|certificate|none
 * Flags override the file. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "cluster/log.h"
#include "cmd/serve_cluster.h"
#include "cluster/node.h"
#include "cluster/test_partition.h"
#include "cluster/transport.h"
#include "cmd/serve.h"
#include "http/auth.h"
#include "http/server.h"

typedef struct serve_opts {
    char *data;
    char *path_repo;
    char *bind;
    char *node_name;
    char *cluster_name;
    long port;
    long threads;
    long search_threads;
    size_t max_content;
    size_t memory;
    long timeout_s;
    long slowlog_ms;
    int durability_async;
    long test_recovery_delay_ms;
    long test_snapshot_delay_ms;
    long test_search_delay_ms;
    long test_fetch_delay_ms;
    long shard_inactive_ms; /* indices.memory.shard_inactive_time; 0 default, < 0 never */
    size_t index_buffer;    /* indices.memory.index_buffer_size (per shard); 0 default */
    char *users_file;
    char *test_partition_file;
    char *tls_cert;
    char *tls_key;
    long max_open_conns;
    long busy_poll_us; /* -1: the default */
    int compression;
    char *http_transport;
    char *cluster_etcd; /* etcd endpoints; NULL = single node */
    long transport_port;
    long lease_ttl_s;
    int tp_ssl; /* xpack.security.transport.ssl.enabled: -1 unset (on with a certificate) */
    char *tp_cert, *tp_key, *tp_ca;
    sc_transport_verify tp_verify;
} serve_opts;

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return false;
    while (*end == ' ')
        end++;
    double mult = 1;
    if (!strcasecmp(end, "kb") || !strcasecmp(end, "k"))
        mult = 1024;
    else if (!strcasecmp(end, "mb") || !strcasecmp(end, "m"))
        mult = 1024.0 * 1024;
    else if (!strcasecmp(end, "gb") || !strcasecmp(end, "g"))
        mult = 1024.0 * 1024 * 1024;
    else if (*end && strcasecmp(end, "b") != 0)
        return false;
    *out = (size_t)(v * mult);
    return true;
}

static bool parse_ms(const char *s, long *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return false;
    if (!strcmp(end, "ms"))
        *out = (long)v;
    else if (!strcmp(end, "s") || !*end)
        *out = (long)(v * 1000);
    else if (!strcmp(end, "m"))
        *out = (long)(v * 60000);
    else
        return false;
    return true;
}

static bool parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *out = v;
    return true;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = strdup(v);
}

/* Applies one key/value (from the file or a flag); false on an unknown key or bad value. */
static bool apply(serve_opts *o, const char *key, const char *val)
{
    long ms;
    if (!strcmp(key, "path.data") || !strcmp(key, "data"))
        set_str(&o->data, val);
    else if (!strcmp(key, "path.repo"))
        set_str(&o->path_repo, val);
    else if (!strcmp(key, "http.port") || !strcmp(key, "port"))
        return parse_long(val, &o->port) && o->port >= 0 && o->port < 65536;
    else if (!strcmp(key, "network.host") || !strcmp(key, "http.host") || !strcmp(key, "bind"))
        set_str(&o->bind, val);
    else if (!strcmp(key, "node.name"))
        set_str(&o->node_name, val);
    else if (!strcmp(key, "cluster.name"))
        set_str(&o->cluster_name, val);
    else if (!strcmp(key, "threads") || !strcmp(key, "http.threads"))
        return parse_long(val, &o->threads) && o->threads >= 0;
    else if (!strcmp(key, "search.threads"))
        return parse_long(val, &o->search_threads) && o->search_threads >= 0;
    else if (!strcmp(key, "http.max_content_length"))
        return parse_size(val, &o->max_content);
    else if (!strcmp(key, "memory.limit") || !strcmp(key, "memory"))
        return parse_size(val, &o->memory);
    else if (!strcmp(key, "http.timeout")) {
        if (!parse_ms(val, &ms))
            return false;
        o->timeout_s = ms / 1000 > 0 ? ms / 1000 : 1;
    } else if (!strcmp(key, "slowlog.threshold")) {
        if (!parse_ms(val, &ms))
            return false;
        o->slowlog_ms = ms;
    } else if (!strcmp(key, "log.level")) {
        int l = sc_log_level_parse(val);
        if (l < 0)
            return false;
        sc_log_set_level((sc_log_level)l);
    } else if (!strcmp(key, "index.translog.durability")) {
        if (!strcmp(val, "async"))
            o->durability_async = 1;
        else if (!strcmp(val, "request"))
            o->durability_async = 0;
        else
            return false;
    } else if (!strcmp(key, "indices.memory.index_buffer_size")) {
        /* a byte size; Elasticsearch's percentage of the heap has no meaning here */
        if (!parse_size(val, &o->index_buffer) || o->index_buffer < 1024)
            return false;
    } else if (!strcmp(key, "indices.memory.shard_inactive_time")) {
        if (!parse_ms(val, &ms))
            return false;
        o->shard_inactive_ms = ms > 0 ? ms : -1;
    } else if (!strcmp(key, "test.snapshot_delay")) {
        if (!parse_ms(val, &ms) || ms < 0 || ms > 600000)
            return false;
        o->test_snapshot_delay_ms = ms;
    } else if (!strcmp(key, "test.search_delay")) {
        if (!parse_ms(val, &ms) || ms < 0 || ms > 600000)
            return false;
        o->test_search_delay_ms = ms;
    } else if (!strcmp(key, "test.partition_file")) {
        set_str(&o->test_partition_file, val);
    } else if (!strcmp(key, "test.fetch_delay")) {
        if (!parse_ms(val, &ms) || ms < 0 || ms > 600000)
            return false;
        o->test_fetch_delay_ms = ms;
    } else if (!strcmp(key, "test.recovery_delay")) {
        if (!parse_ms(val, &ms) || ms < 0 || ms > 3600000)
            return false;
        o->test_recovery_delay_ms = ms;
    } else if (!strcmp(key, "xpack.security.authc.users_file") || !strcmp(key, "users.file"))
        set_str(&o->users_file, val);
    else if (!strcmp(key, "xpack.security.http.ssl.certificate") || !strcmp(key, "tls.cert"))
        set_str(&o->tls_cert, val);
    else if (!strcmp(key, "xpack.security.http.ssl.key") || !strcmp(key, "tls.key"))
        set_str(&o->tls_key, val);
    else if (!strcmp(key, "http.max_open_connections"))
        return parse_long(val, &o->max_open_conns) && o->max_open_conns > 0;
    else if (!strcmp(key, "http.busy_poll_us"))
        return parse_long(val, &o->busy_poll_us) && o->busy_poll_us >= 0 &&
               o->busy_poll_us <= 100000;
    else if (!strcmp(key, "http.compression")) {
        if (strcmp(val, "true") && strcmp(val, "false"))
            return false;
        o->compression = !strcmp(val, "true");
    } else if (!strcmp(key, "http.transport")) {
        if (strcmp(val, "epoll") && strcmp(val, "mhd"))
            return false;
        set_str(&o->http_transport, val);
    } else if (!strcmp(key, "cluster.etcd")) {
        /* "etcd=URL[,URL...]" as --cluster takes it, or the bare URL list */
        set_str(&o->cluster_etcd, strncmp(val, "etcd=", 5) ? val : val + 5);
        return o->cluster_etcd && *o->cluster_etcd;
    } else if (!strcmp(key, "xpack.security.transport.ssl.enabled")) {
        if (strcmp(val, "true") && strcmp(val, "false"))
            return false;
        o->tp_ssl = !strcmp(val, "true");
    } else if (!strcmp(key, "xpack.security.transport.ssl.certificate"))
        set_str(&o->tp_cert, val);
    else if (!strcmp(key, "xpack.security.transport.ssl.key"))
        set_str(&o->tp_key, val);
    else if (!strcmp(key, "xpack.security.transport.ssl.certificate_authorities"))
        set_str(&o->tp_ca, val);
    else if (!strcmp(key, "xpack.security.transport.ssl.verification_mode")) {
        if (!strcmp(val, "full"))
            o->tp_verify = SC_TRANSPORT_VERIFY_FULL;
        else if (!strcmp(val, "certificate"))
            o->tp_verify = SC_TRANSPORT_VERIFY_CERTIFICATE;
        else if (!strcmp(val, "none"))
            o->tp_verify = SC_TRANSPORT_VERIFY_NONE;
        else
            return false;
    } else if (!strcmp(key, "transport.port"))
        return parse_long(val, &o->transport_port) && o->transport_port >= 0 &&
               o->transport_port < 65536;
    else if (!strcmp(key, "cluster.lease_ttl")) {
        if (!parse_ms(val, &ms) || ms < 1000)
            return false;
        o->lease_ttl_s = ms / 1000;
    } else
        return false;
    return true;
}

static bool load_config(serve_opts *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "scry serve: cannot open config [%s]: %s\n", path, strerror(errno));
        return false;
    }
    char line[4096];
    int lineno = 0;
    bool ok = true;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        char *hash = strchr(p, '#');
        if (hash)
            *hash = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strlen(p);
        while (n && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
            p[--n] = '\0';
        if (!*p)
            continue;
        char *colon = strchr(p, ':');
        if (!colon) {
            fprintf(stderr, "scry serve: %s:%d: expected 'key: value'\n", path, lineno);
            ok = false;
            continue;
        }
        *colon = '\0';
        char *key = p, *val = colon + 1;
        size_t kl = strlen(key);
        while (kl && (key[kl - 1] == ' ' || key[kl - 1] == '\t'))
            key[--kl] = '\0';
        while (*val == ' ' || *val == '\t')
            val++;
        size_t vl = strlen(val);
        if (vl >= 2 &&
            ((val[0] == '"' && val[vl - 1] == '"') || (val[0] == '\'' && val[vl - 1] == '\''))) {
            val[vl - 1] = '\0';
            val++;
        }
        if (!apply(o, key, val)) {
            fprintf(stderr, "scry serve: %s:%d: bad setting [%s: %s]\n", path, lineno, key, val);
            ok = false;
        }
    }
    fclose(f);
    return ok;
}

static void serve_usage(FILE *f)
{
    fprintf(f, "usage: scry serve [options]\n"
               "  --data DIR          data folder (default ./data)\n"
               "  --path-repo DIR     folder under which fs snapshot repositories may live\n"
               "  --port N            HTTP port (default 9200; 0 = any free port)\n"
               "  --bind ADDR         listen address (default 127.0.0.1)\n"
               "  --threads N         HTTP worker threads (default: cores)\n"
               "  --search-threads N  shard search workers (default: cores)\n"
               "  --memory SIZE       memory budget for circuit breakers (default 1gb)\n"
               "  --config FILE       scry.yml-style `key: value` settings (see docs)\n"
               "  --log-level LEVEL   debug|info|warn|error (default info)\n"
               "  --slowlog DURATION  log requests slower than this (e.g. 500ms)\n"
               "  --port-file FILE    write the bound port to FILE once listening\n"
               "  --users FILE        require HTTP basic auth; lines name:$6$... (scry passwd)\n"
               "  --tls-cert FILE     serve HTTPS with this PEM certificate (needs --tls-key)\n"
               "  --tls-key FILE      PEM private key of --tls-cert (unencrypted)\n"
               "  --cluster etcd=URL[,URL...]  join a cluster whose metadata is in etcd\n"
               "  --node-name NAME    node name (default: host name)\n"
               "  --cluster-name NAME cluster name (default scry; the etcd key prefix)\n"
               "  --transport-port N  node-to-node port (default: first free of 9300-9399)\n"
               "  --transport-tls-cert FILE, --transport-tls-key FILE, --transport-tls-ca FILE\n"
               "                      TLS between nodes: this node's PEM certificate and key,\n"
               "                      the CA peers' certificates must chain to (mutual TLS)\n"
               "  --transport-tls-verify full|certificate|none  (default full)\n"
               "  --lease-ttl DURATION  etcd lease of the node (default 3s)\n"
               "  --test-recovery-delay DURATION\n"
               "                      tests only: each shard recovered at start waits this\n"
               "                      long before its translog replay (observe INITIALIZING)\n"
               "  --test-snapshot-delay DURATION\n"
               "                      tests only: a snapshot waits this long before each file\n"
               "                      it copies (kill a node during a snapshot)\n"
               "  --test-search-delay DURATION\n"
               "                      tests only: each shard query waits this long first\n"
               "                      (cancellable; a slow search for cancellation tests)\n"
               "  --test-fetch-delay DURATION\n"
               "                      tests only: a coordinator waits this long between a\n"
               "                      search's query and fetch phases (kill a node between)\n"
               "  --test-partition-file FILE\n"
               "                      tests only: while FILE exists, this node's etcd client\n"
               "                      and transport refuse all traffic (a network partition)\n"
               "  -E KEY=VALUE        any setting of the config file (e.g. -E "
               "http.compression=true)\n"
               "  -E indices.memory.shard_inactive_time=DURATION\n"
               "                      a shard without writes this long commits and frees its\n"
               "                      indexing buffer (default 5m; 0 never)\n"
               "  -E indices.memory.index_buffer_size=BYTES\n"
               "                      a shard's indexing buffer becomes a segment past this\n"
               "                      size (per shard; default 64mb)\n");
}

static void opts_free(serve_opts *o)
{
    free(o->data);
    free(o->path_repo);
    free(o->bind);
    free(o->node_name);
    free(o->cluster_name);
    free(o->users_file);
    free(o->tls_cert);
    free(o->tls_key);
    free(o->http_transport);
    free(o->cluster_etcd);
    free(o->test_partition_file);
    free(o->tp_cert);
    free(o->tp_key);
    free(o->tp_ca);
}

int sc_cmd_serve(int argc, char **argv)
{
    sc_alloc_tune_server_heap();
    serve_opts o = {.port = 9200,
                    .transport_port = 9300,
                    .tp_ssl = -1,
                    .max_content = 100u << 20,
                    .timeout_s = 60,
                    .slowlog_ms = 1000,
                    .busy_poll_us = -1};
    set_str(&o.data, "./data");
    set_str(&o.bind, "127.0.0.1");
    const char *port_file = NULL;
    /* The config file first, so flags override it. */
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--config") && !load_config(&o, argv[i + 1])) {
            opts_free(&o);
            return 2;
        }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            serve_usage(stdout);
            opts_free(&o);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "scry serve: missing value for %s\n", a);
            serve_usage(stderr);
            opts_free(&o);
            return 2;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (!strcmp(a, "--config"))
            continue;
        else if (!strcmp(a, "--data"))
            ok = apply(&o, "path.data", v);
        else if (!strcmp(a, "--path-repo"))
            ok = apply(&o, "path.repo", v);
        else if (!strcmp(a, "--port"))
            ok = apply(&o, "http.port", v);
        else if (!strcmp(a, "--bind"))
            ok = apply(&o, "network.host", v);
        else if (!strcmp(a, "--threads"))
            ok = apply(&o, "threads", v);
        else if (!strcmp(a, "--search-threads"))
            ok = apply(&o, "search.threads", v);
        else if (!strcmp(a, "--memory"))
            ok = apply(&o, "memory.limit", v);
        else if (!strcmp(a, "--log-level"))
            ok = apply(&o, "log.level", v);
        else if (!strcmp(a, "--slowlog"))
            ok = apply(&o, "slowlog.threshold", v);
        else if (!strcmp(a, "--max-content-length"))
            ok = apply(&o, "http.max_content_length", v);
        else if (!strcmp(a, "--timeout"))
            ok = apply(&o, "http.timeout", v);
        else if (!strcmp(a, "--users"))
            ok = apply(&o, "users.file", v);
        else if (!strcmp(a, "--tls-cert"))
            ok = apply(&o, "tls.cert", v);
        else if (!strcmp(a, "--tls-key"))
            ok = apply(&o, "tls.key", v);
        else if (!strcmp(a, "--test-recovery-delay"))
            ok = apply(&o, "test.recovery_delay", v);
        else if (!strcmp(a, "--test-snapshot-delay"))
            ok = apply(&o, "test.snapshot_delay", v);
        else if (!strcmp(a, "--test-search-delay"))
            ok = apply(&o, "test.search_delay", v);
        else if (!strcmp(a, "--test-fetch-delay"))
            ok = apply(&o, "test.fetch_delay", v);
        else if (!strcmp(a, "--test-partition-file"))
            ok = apply(&o, "test.partition_file", v);
        else if (!strcmp(a, "--cluster"))
            ok = apply(&o, "cluster.etcd", v);
        else if (!strcmp(a, "--node-name"))
            ok = apply(&o, "node.name", v);
        else if (!strcmp(a, "--cluster-name"))
            ok = apply(&o, "cluster.name", v);
        else if (!strcmp(a, "--transport-port"))
            ok = apply(&o, "transport.port", v);
        else if (!strcmp(a, "--transport-tls-cert"))
            ok = apply(&o, "xpack.security.transport.ssl.certificate", v);
        else if (!strcmp(a, "--transport-tls-key"))
            ok = apply(&o, "xpack.security.transport.ssl.key", v);
        else if (!strcmp(a, "--transport-tls-ca"))
            ok = apply(&o, "xpack.security.transport.ssl.certificate_authorities", v);
        else if (!strcmp(a, "--transport-tls-verify"))
            ok = apply(&o, "xpack.security.transport.ssl.verification_mode", v);
        else if (!strcmp(a, "--lease-ttl"))
            ok = apply(&o, "cluster.lease_ttl", v);
        else if (!strcmp(a, "--port-file"))
            port_file = v;
        else if (!strcmp(a, "-E")) {
            char key[128];
            const char *eq = strchr(v, '=');
            ok = eq && (size_t)(eq - v) < sizeof key;
            if (ok) {
                snprintf(key, sizeof key, "%.*s", (int)(eq - v), v);
                ok = apply(&o, key, eq + 1);
            }
        } else {
            fprintf(stderr, "scry serve: unknown option %s\n", a);
            serve_usage(stderr);
            opts_free(&o);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "scry serve: bad value for %s: %s\n", a, v);
            opts_free(&o);
            return 2;
        }
    }

    if (!o.tls_cert != !o.tls_key) {
        fprintf(stderr, "scry serve: --tls-cert and --tls-key go together\n");
        opts_free(&o);
        return 2;
    }
    const char *tls_files[2] = {o.tls_cert, o.tls_key};
    for (int k = 0; k < 2; k++)
        if (tls_files[k] && access(tls_files[k], R_OK) != 0) {
            fprintf(stderr, "scry serve: cannot read TLS %s [%s]: %s\n", k ? "key" : "certificate",
                    tls_files[k], strerror(errno));
            opts_free(&o);
            return 2;
        }
    bool tp_tls = o.tp_ssl == 1 || (o.tp_ssl == -1 && o.tp_cert);
    if (tp_tls &&
        (!o.tp_cert || !o.tp_key || (!o.tp_ca && o.tp_verify != SC_TRANSPORT_VERIFY_NONE))) {
        fprintf(stderr, "scry serve: transport TLS needs --transport-tls-cert, --transport-tls-key "
                        "and (unless verification_mode is none) --transport-tls-ca\n");
        opts_free(&o);
        return 2;
    }
    sc_transport_tls_config tp_tls_cfg = {.cert_file = o.tp_cert,
                                          .key_file = o.tp_key,
                                          .ca_file = o.tp_ca,
                                          .verification_mode = o.tp_verify};
    sc_http_auth *auth = NULL;
    if (o.users_file && sc_http_auth_load(o.users_file, &auth) != SC_OK) {
        fprintf(stderr, "scry serve: cannot use users file [%s] (see the log above)\n",
                o.users_file);
        opts_free(&o);
        return 2;
    }

    sc_test_partition_set(o.test_partition_file);
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM / SIGINT are blocked here, before any thread exists, so every thread inherits
     * the mask and the main thread alone takes them with sigwait below (a handler plus pause()
     * misses a signal the kernel delivers to another thread: the server then never stops). */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_set, NULL);

    sc_node_config nc = {.data_dir = o.data,
                         .node_name = o.node_name,
                         .cluster_name = o.cluster_name,
                         .allocated_copies_only = o.cluster_etcd != NULL,
                         .memory_limit_bytes = o.memory,
                         .search_threads = (unsigned)o.search_threads,
                         .durability_async = o.durability_async,
                         .shard_inactive_ms = o.shard_inactive_ms,
                         .index_buffer_bytes = o.index_buffer,
                         .test_recovery_delay_ms = (uint32_t)o.test_recovery_delay_ms,
                         .path_repo = o.path_repo,
                         .test_snapshot_delay_ms = (uint32_t)o.test_snapshot_delay_ms,
                         .test_search_delay_ms = (uint32_t)o.test_search_delay_ms,
                         .test_fetch_delay_ms = (uint32_t)o.test_fetch_delay_ms};
    sc_node *node;
    if (sc_node_open(&nc, &node) != SC_OK) {
        sc_http_auth_free(auth);
        opts_free(&o);
        return 1;
    }
    sc_http_config hc;
    sc_http_config_default(&hc);
    hc.bind = o.bind;
    hc.port = (uint16_t)o.port;
    hc.threads = (unsigned)o.threads;
    hc.max_content_length = o.max_content;
    hc.timeout_s = (unsigned)o.timeout_s;
    hc.slowlog_ms = (uint64_t)o.slowlog_ms;
    hc.auth = auth;
    hc.tls_cert_file = o.tls_cert;
    hc.tls_key_file = o.tls_key;
    if (o.max_open_conns > 0)
        hc.max_open_connections = (size_t)o.max_open_conns;
    hc.compression = o.compression != 0;
    if (o.busy_poll_us >= 0)
        hc.busy_poll_us = (unsigned)o.busy_poll_us;
    if (o.http_transport)
        hc.transport = o.http_transport;
    hc.request_budget_bytes = sc_node_config_get(node)->memory_limit_bytes * 60 / 100;
    sc_http_server *srv;
    sc_status hs = sc_http_start(&hc, node, &srv);
    if (hs != SC_OK) {
        sc_node_close(node);
        sc_http_auth_free(auth);
        opts_free(&o);
        return hs == SC_EINVAL ? 2 : 1;
    }
    if (port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%u\n", (unsigned)sc_http_port(srv));
            fclose(f);
            rename(tmp, port_file);
        }
    }
    sc_serve_cluster *cluster = NULL;
    sc_serve_cluster_config cc = {.endpoints = o.cluster_etcd,
                                  .bind = o.bind,
                                  .http_port = sc_http_port(srv),
                                  .transport_port = o.transport_port,
                                  .lease_ttl_s = o.lease_ttl_s,
                                  .tls = tp_tls ? &tp_tls_cfg : NULL};
    if (o.cluster_etcd && sc_serve_cluster_start(&cc, node, &cluster) != SC_OK) {
        sc_http_stop(srv);
        sc_node_close(node);
        sc_http_auth_free(auth);
        opts_free(&o);
        return 2;
    }
    /* The indices recover in the background (cluster/recovery.c): the port answers at once,
     * health is red and their shards INITIALIZING until their translogs are replayed. */
    sc_log(SC_LOG_INFO, "node", "started; pid %d", (int)getpid());
    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0)
        ;
    sc_log(SC_LOG_INFO, "node", "stopping: no new connections, finishing in-flight requests");
    sc_http_stop(srv);
    /* After HTTP (no request reads the view any more); revoking the lease hands the master role
     * over at once instead of after the lease TTL. */
    sc_serve_cluster_stop(cluster);
    sc_log(SC_LOG_INFO, "node", "flushing shards");
    sc_node_close(node);
    sc_http_auth_free(auth);
    sc_log(SC_LOG_INFO, "node", "stopped");
    opts_free(&o);
    return 0;
}

int sc_cmd_passwd(int argc, char **argv)
{
    if (argc != 3 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
        fprintf(argc == 3 ? stdout : stderr,
                "usage: scry passwd NAME < password\n"
                "  reads a password (first line of stdin) and prints a users-file line\n"
                "  NAME:$6$salt$hash (crypt SHA-512) for `scry serve --users FILE`\n");
        return argc == 3 ? 0 : 2;
    }
    const char *name = argv[2];
    if (!*name || strchr(name, ':') || strpbrk(name, " \t\r\n#")) {
        fprintf(stderr, "scry passwd: a name may not be empty or contain ':', '#' or spaces\n");
        return 2;
    }
    char pw[1024];
    if (!fgets(pw, sizeof pw, stdin)) {
        fprintf(stderr, "scry passwd: no password on stdin\n");
        return 2;
    }
    size_t n = strlen(pw);
    while (n && (pw[n - 1] == '\n' || pw[n - 1] == '\r'))
        pw[--n] = '\0';
    if (!n) {
        fprintf(stderr, "scry passwd: empty password\n");
        return 2;
    }
    char hash[256];
    sc_status st = sc_http_auth_hash(pw, hash, sizeof hash);
    explicit_bzero(pw, sizeof pw);
    if (st != SC_OK) {
        fprintf(stderr, "scry passwd: cannot hash: %s\n", sc_status_str(st));
        return 1;
    }
    printf("%s:%s\n", name, hash);
    return 0;
}
