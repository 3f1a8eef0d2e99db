/* The clustered parts of `scry serve --cluster` (issue 13): the etcd membership, the transport
 * on --transport-port, the placement that follows the routing table, the data-node search
 * handlers and the forwarding of REST requests to the node holding a shard's primary. */
#ifndef SC_CMD_SERVE_CLUSTER_H
#define SC_CMD_SERVE_CLUSTER_H

#include <stdint.h>

#include "base/status.h"
#include "cluster/node.h"
#include "cluster/transport.h"

typedef struct sc_serve_cluster sc_serve_cluster;

typedef struct sc_serve_cluster_config {
    const char *endpoints; /* etcd */
    const char *bind;      /* the transport listens here (as HTTP) */
    unsigned http_port;
    long transport_port; /* 0 = an ephemeral port */
    long lease_ttl_s;
    const sc_transport_tls_config *tls; /* TLS between nodes; NULL = plaintext */
} sc_serve_cluster_config;

/* Opens the transport, joins the membership and starts the placement. *out: stop with
 * sc_serve_cluster_stop. Prints the reason to stderr on failure. */
sc_status sc_serve_cluster_start(const sc_serve_cluster_config *cfg, sc_node *node,
                                 sc_serve_cluster **out) SC_MUST_USE;
/* Stops the transport (in-flight handlers answer), leaves the membership, stops the placement,
 * frees. Call after the HTTP server stopped and before closing the node. NULL is a no-op. */
void sc_serve_cluster_stop(sc_serve_cluster *c);

#endif
