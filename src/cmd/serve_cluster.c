/* `scry serve --cluster` (serve_cluster.h): wires the transport, membership, placement, the
 * data-node search handlers (api/remote.h) and the REST forwarding handler, which runs a
 * forwarded request through this node's router (the http layer, hence here in cmd). */
#include "cmd/serve_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/forward.h"
#include "api/remote.h"
#include "cluster/membership.h"
#include "cluster/meta_store.h"
#include "cluster/placement.h"
#include "cluster/snapshot.h"
#include "cluster/stats_remote.h"
#include "cluster/transport.h"
#include "http/router.h"

struct sc_serve_cluster {
    sc_node *node;
    sc_transport *t;
    sc_membership *m;
    sc_placement *p;
    sc_api_remote *remote;
};

/* SC_MSG_REST_FORWARD: the request as if it had arrived over HTTP here, marked forwarded. */
static sc_status h_rest(void *ctx, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_serve_cluster *c = ctx;
    sc_arena arena;
    sc_arena_init(&arena, sc_node_config_get(c->node)->memory_limit_bytes * 60 / 100);
    sc_api_fwd_req f;
    sc_status st = sc_api_fwd_req_decode(body.ptr, body.len, &arena, &f);
    sc_rest_req *req = st == SC_OK ? sc_arena_calloc(&arena, 1, sizeof *req) : NULL;
    char *method = req ? sc_arena_strndup(&arena, (const char *)f.method.ptr, f.method.len) : NULL;
    char *path = req ? sc_arena_strndup(&arena, (const char *)f.path.ptr, f.path.len) : NULL;
    char *ctype =
        req && f.content_type.len
            ? sc_arena_strndup(&arena, (const char *)f.content_type.ptr, f.content_type.len)
            : NULL;
    if (st == SC_OK && (!req || !method || !path))
        st = SC_ENOMEM;
    if (st != SC_OK) {
        snprintf(errmsg, cap, "bad forwarded request: %s", sc_status_str(st));
        sc_arena_fini(&arena);
        return st;
    }
    req->arena = &arena;
    req->node = c->node;
    req->method = sc_router_method(method);
    req->method_str = method;
    req->path = path;
    req->body = f.body;
    req->content_type = ctype;
    req->client_fd = -1;
    req->forwarded = true;
    for (size_t i = 0; i < f.n_params; i++)
        sc_router_add_param(req, (const char *)f.keys[i].ptr, f.keys[i].len,
                            (const char *)f.values[i].ptr, f.values[i].len);
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    sc_router_dispatch(req, &resp);
    st = sc_api_fwd_resp_encode(&resp, out);
    sc_rest_resp_fini(&resp);
    sc_arena_fini(&arena);
    return st;
}

/* The default transport port is a range, as Elasticsearch's "9300-9399": several nodes on one
 * machine take the next free port (the address each one listens on is registered in etcd). */
#define DEFAULT_TRANSPORT_PORT 9300
#define DEFAULT_TRANSPORT_PORT_LAST 9399

static sc_status open_transport(const sc_serve_cluster_config *cfg, sc_serve_cluster *c)
{
    long last = cfg->transport_port == DEFAULT_TRANSPORT_PORT ? DEFAULT_TRANSPORT_PORT_LAST
                                                              : cfg->transport_port;
    sc_status st = SC_EIO;
    for (long port = cfg->transport_port; port <= last && st == SC_EIO; port++) {
        /* 16 handler threads: a forwarded write waits for its replicas' answers (handled on
         * their nodes' pools) and a peer recovery holds a thread for its duration */
        sc_transport_config tc = {
            .bind_host = cfg->bind, .port = (uint16_t)port, .n_workers = 16, .tls = cfg->tls};
        st = sc_transport_open(&tc, &c->t);
        if (st == SC_EINVAL) /* the TLS files (logged): no other port would do better */
            break;
    }
    if (st == SC_EINVAL) {
        fprintf(stderr, "scry serve: cannot use the transport TLS files (see the log above)\n");
        return st;
    }
    if (st != SC_OK) {
        fprintf(stderr, "scry serve: cannot listen on transport port %s:%ld: %s\n", cfg->bind,
                cfg->transport_port, sc_status_str(st));
        return st;
    }
    st = sc_transport_register(c->t, SC_MSG_REST_FORWARD, h_rest, c);
    if (st == SC_OK)
        st = sc_api_remote_start(c->node, c->t, &c->remote);
    if (st == SC_OK)
        st = sc_snapshot_remote_start(c->node, c->t);
    if (st == SC_OK)
        st = sc_stats_remote_start(c->node, c->t);
    return st;
}

sc_status sc_serve_cluster_start(const sc_serve_cluster_config *cfg, sc_node *node,
                                 sc_serve_cluster **out)
{
    sc_serve_cluster *c = calloc(1, sizeof *c);
    if (!c)
        return SC_ENOMEM;
    c->node = node;
    sc_status st = open_transport(cfg, c);
    char http[160], transport[160];
    snprintf(http, sizeof http, "%s:%u", cfg->bind, cfg->http_port);
    snprintf(transport, sizeof transport, "%s:%u", cfg->bind,
             c->t ? (unsigned)sc_transport_port(c->t) : 0u);
    sc_membership_config mc = {.endpoints = cfg->endpoints,
                               .cluster_name = sc_node_cluster_name(node),
                               .http_address = http,
                               .transport_address = transport,
                               .lease_ttl_s = cfg->lease_ttl_s};
    if (st == SC_OK && (st = sc_membership_start(&mc, node, &c->m)) != SC_OK)
        fprintf(stderr, "scry serve: cannot use --cluster [%s]: %s\n", cfg->endpoints,
                sc_status_str(st));
    if (st == SC_OK) /* templates, pipelines... of a single-node past (failure: a warning) */
        (void)sc_meta_publish_local(node);
    if (st == SC_OK)
        st = sc_placement_start(node, c->m, c->t, &c->p);
    if (st != SC_OK) {
        sc_serve_cluster_stop(c);
        return st;
    }
    *out = c;
    return SC_OK;
}

void sc_serve_cluster_stop(sc_serve_cluster *c)
{
    if (!c)
        return;
    /* The recovery thread sends on the transport: it stops first. Then no new inbound work,
     * in-flight handlers answer; then no more view callbacks. */
    sc_placement_halt_recovery(c->p);
    sc_transport_close(c->t);
    sc_membership_halt(c->m);
    sc_placement_stop(c->p); /* its thread reads the membership: freed after */
    sc_membership_stop(c->m);
    sc_api_remote_stop(c->remote);
    free(c);
}
