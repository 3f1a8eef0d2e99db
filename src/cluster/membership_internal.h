/* Private to the membership files: membership.c (lifecycle, session, election, metadata
 * publishing), membership_view.c (the watched view), membership_master.c (allocation and
 * routing writes), membership_os.c (OS numbers for _cat/nodes). */
#ifndef SC_CLUSTER_MEMBERSHIP_INTERNAL_H
#define SC_CLUSTER_MEMBERSHIP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "cluster/etcd.h"
#include "cluster/membership.h"

struct sc_membership {
    sc_node *node;
    char *endpoints;
    char cluster_name[128];
    char prefix[256]; /* "/scry/<cluster>/" */
    char http[64], transport[64];
    int64_t ttl_s;
    int64_t started_ms;
    sc_etcd *etcd; /* the cluster thread's connection */
    sc_etcd_watch *watch;
    pthread_t thread;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cv;
    bool stop, wake;
    bool halted; /* sc_membership_halt ran (owner's thread only) */
    /* session */
    int64_t lease;
    sc_etcd_keeper *keeper;
    _Atomic bool lost;    /* etcd says the lease is gone: register again */
    _Atomic bool suspect; /* not refreshed for a TTL: not master until refreshed */
    _Atomic bool is_master;
    int64_t my_term; /* create_revision of the master key while master */
    /* view (from the watch) */
    sc_member *members;
    size_t n_members;
    char master_id[SC_ALLOC_NODE_MAX];
    int64_t master_term;
    json_t *indices;      /* {name: metadata} */
    json_t *routing_json; /* {name: routing json} */
    json_t *routing_mod;  /* {name: mod_revision} */
    json_t *meta;         /* the "meta" document (meta_store.h), NULL when absent */
    int64_t meta_rev;     /* its mod_revision */
    json_t *settings;     /* the cluster settings document (cluster_settings.h), or NULL */
    int64_t revision;
    bool synced;
    bool dirty; /* the master should recompute the routing */
    /* index metadata waiting to be written: {name: meta string | null (delete)} */
    json_t *pending;
    json_t *inflight; /* the part of pending being written now, or NULL */
    json_t *written;  /* {name: etcd revision} of writes the view has not caught up with */
    uint64_t rng;
    /* change listeners (set before or while running; read by the watch thread) */
    struct {
        sc_membership_change_fn fn;
        void *ctx;
    } listeners[8];
    _Atomic size_t n_listeners;
    /* OS numbers */
    _Atomic int cpu_percent;
    uint64_t cpu_busy, cpu_total;
};

/* Keys. */
void sc__ms_key(const sc_membership *m, char *out, size_t cap, const char *kind, const char *name);

/* The watch callbacks (membership_view.c). */
void sc__ms_on_reset(void *ctx, const sc_etcd_kvs *all);
void sc__ms_on_events(void *ctx, const sc_etcd_event *ev, size_t n);

/* Parses the watched routing values (mu held). */
sc_status sc__ms_routing(sc_membership *m, sc_routing_table *t) SC_MUST_USE;

/* Master work (membership_master.c), on the cluster thread, with mu NOT held. */
void sc__ms_master_step(sc_membership *m);

/* OS numbers (membership_os.c). */
void sc__ms_sample_cpu(sc_membership *m);
/* Heap (RSS vs memory budget), RAM and load of this process/host; cpu_percent = -1. */
void sc__os_stats(sc_node *node, sc_member *mb);
/* This node's registration value (JSON text, malloc'd). */
char *sc__ms_node_value(sc_membership *m);

#endif
