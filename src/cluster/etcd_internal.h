/* Private to the etcd client files (etcd.c, etcd_lease.c, etcd_watch.c). */
#ifndef SC_CLUSTER_ETCD_INTERNAL_H
#define SC_CLUSTER_ETCD_INTERNAL_H

#include "cluster/etcd.h"

/* A growable response body (NUL-terminated when non-empty). */
typedef struct sc__etcd_buf {
    char *data;
    size_t len, cap;
} sc__etcd_buf;

/* curl_global_init, once per process. */
void sc__etcd_curl_init(void);
/* POSTs body to path on the current endpoint, failing over to the next ones on transport
 * errors and 503; maps the answer through sc_etcd_decode_error. resp->data is the caller's. */
sc_status sc__etcd_post(sc_etcd *e, const char *path, const char *body, sc__etcd_buf *resp,
                        sc_etcd_error *err) SC_MUST_USE;
/* Moves the client to the next endpoint. */
void sc__etcd_rotate(sc_etcd *e);
size_t sc__etcd_n_endpoints(const sc_etcd *e);
int64_t sc__etcd_timeout_ms(const sc_etcd *e);
/* Sets the per-request timeout (before the client is shared). */
void sc__etcd_set_timeout_ms(sc_etcd *e, int64_t ms);

#endif
