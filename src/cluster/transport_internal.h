/* Private to transport.c (client side, lifecycle) and transport_server.c (listener, I/O thread,
 * handler dispatch): the transport object and the socket helpers both sides use. */
#ifndef SC_CLUSTER_TRANSPORT_INTERNAL_H
#define SC_CLUSTER_TRANSPORT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/threadpool.h"
#include "cluster/transport.h"
#include "cluster/transport_tls.h"

typedef struct sc__tp_handler {
    uint16_t type;
    sc_transport_handler_fn fn;
    void *ctx;
    bool on_io_thread; /* sc_transport_register_inline */
} sc__tp_handler;

typedef struct sc__tp_cli_conn {
    sc__tp_link link;
    struct sc__tp_cli_conn *next;
} sc__tp_cli_conn;

typedef struct sc__tp_peer {
    char host[256];
    uint16_t port;
    sc__tp_cli_conn *idle;
    uint32_t n_open;           /* idle + borrowed */
    uint64_t backoff_until_ns; /* no connect attempt before (monotonic) */
    uint32_t backoff_ms;       /* the next back-off length; 0 after a success */
    pthread_cond_t cv;         /* a connection came back or closed */
    struct sc__tp_peer *next;
} sc__tp_peer;

struct sc_transport {
    sc_transport_config cfg;
    sc__tp_tls *tls; /* NULL: plaintext */
    int listen_fd;   /* -1 without a server */
    uint16_t port;
    int wake[2]; /* the I/O thread's wake-up pipe */
    pthread_t io;
    bool io_started;
    atomic_bool stopping;
    sc_threadpool *pool;
    pthread_mutex_t mu; /* handlers, peers */
    sc__tp_handler *handlers;
    size_t n_handlers;
    sc__tp_peer *peers;
    atomic_uint_fast64_t next_id;
    atomic_uint_fast64_t n_connects, n_sent, n_handled, n_bad_frames, n_tls_refused, n_tls_failed;
};

/* Server: binds, listens and starts the I/O thread and the worker pool (transport_server.c). */
sc_status sc__transport_server_start(sc_transport *t);
/* Stops the I/O thread, drains the workers (their responses are written), closes inbound
 * connections and the listener. */
void sc__transport_server_stop(sc_transport *t);

/* Writes all of (a, an) then (b, bn) to the link before deadline_ns (0 = blocking).
 * SC_ETIMEOUT, SC_EIO. */
sc_status sc__tp_send_all(sc__tp_link *l, const void *a, size_t an, const void *b, size_t bn,
                          uint64_t deadline_ns);
/* Sets TCP_NODELAY and close-on-exec. */
void sc__tp_tune_socket(int fd);

#endif
