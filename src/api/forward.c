/* Forwarding document requests to the node holding the shard's primary (forward.h): locating
 * the primary in the placement snapshot, the message codec, and the round trip. */
#include "api/forward.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cluster/membership.h"
#include "cluster/ops.h"

#define LOCATE_WAIT_MS 10000
#define FORWARD_TIMEOUT_MS 60000

bool sc__api_locate(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix, sc_slice routing,
                    sc_slice id, sc_shard_location *loc)
{
    memset(loc, 0, sizeof *loc);
    sc_placement *p = sc_node_placement(req->node);
    if (!p || req->forwarded) {
        loc->assigned = loc->local = true;
        return true;
    }
    uint32_t shard = sc_index_route(ix, routing.len ? routing : id);
    uint64_t until = sc_clock_now_ns() + (uint64_t)LOCATE_WAIT_MS * 1000000u;
    for (;;) {
        sc_placement_snapshot *s = sc_placement_acquire(p);
        sc_placement_primary(s, ix->name, shard, loc);
        int64_t rev = sc_placement_revision(s);
        sc_placement_release(s);
        if (loc->assigned)
            return true;
        /* only a new index is waited for: a known shard without a live primary fails now */
        if (loc->known || sc_clock_now_ns() >= until)
            break;
        /* a new index: its routing comes from the master in a moment */
        (void)!sc_placement_wait(p, rev + 1, 200);
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    sc_rest_errorf(req, resp, 503, "unavailable_shards_exception",
                   "[%s][%u] primary shard is not active", ix->name, shard);
    return false;
}

sc_index *sc__api_wait_index(sc_rest_req *req, const char *name)
{
    uint64_t until = sc_clock_now_ns() + (uint64_t)LOCATE_WAIT_MS * 1000000u;
    for (;;) {
        sc_index *ix = sc_node_index(req->node, name);
        if (ix || !req->forwarded || !sc_node_placement(req->node) || sc_clock_now_ns() >= until)
            return ix;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The uuid of etcd's metadata of `name` ("" when absent); false when etcd cannot be read. */
static bool meta_uuid(sc_rest_req *req, const char *name, char *uuid, size_t cap)
{
    uuid[0] = 0;
    sc_placement *p = sc_node_placement(req->node);
    char key[300];
    snprintf(key, sizeof key, "indices/%s", name);
    json_t *doc = NULL;
    if (!p || sc_membership_doc_get(sc_placement_membership(p), key, &doc) != SC_OK) {
        json_decref(doc);
        return p == NULL;
    }
    const char *u = json_string_value(json_object_get(doc, "uuid"));
    snprintf(uuid, cap, "%s", u ? u : "");
    json_decref(doc);
    return true;
}

int sc__api_meta_known(sc_rest_req *req, const char *name)
{
    char uuid[64];
    if (!meta_uuid(req, name, uuid, sizeof uuid))
        return -1;
    return uuid[0] != 0;
}

bool sc__api_wait_meta(sc_rest_req *req, const char *name, const char *uuid)
{
    uint64_t until = sc_clock_now_ns() + (uint64_t)LOCATE_WAIT_MS * 1000000u;
    for (;;) {
        char got[64];
        if (!sc_node_placement(req->node) ||
            (meta_uuid(req, name, got, sizeof got) && !strcmp(got, uuid)))
            return true;
        if (sc_clock_now_ns() >= until)
            return false;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

sc_index *sc__api_wait_local_index(sc_rest_req *req, const char *name)
{
    uint64_t until = sc_clock_now_ns() + (uint64_t)LOCATE_WAIT_MS * 1000000u;
    for (;;) {
        sc_index *ix = sc_node_index(req->node, name);
        if (ix || sc_clock_now_ns() >= until)
            return ix;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

static sc_status encode_req(sc_rest_req *req, const char *method, const char *path, sc_slice body,
                            sc_wire_buf *b)
{
    sc_wire_put_str(b, method ? method : req->method_str);
    sc_wire_put_str(b, path ? path : req->path);
    sc_wire_put_uvar(b, req->n_params);
    for (size_t i = 0; i < req->n_params; i++) {
        sc_wire_put_str(b, req->params[i].key);
        sc_wire_put_str(b, req->params[i].value);
    }
    sc_wire_put_str(b, req->content_type);
    sc_wire_put_bytes(b, body.ptr, body.len);
    return b->st;
}

sc_status sc_api_fwd_req_decode(const uint8_t *p, size_t n, sc_arena *a, sc_api_fwd_req *out)
{
    memset(out, 0, sizeof *out);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    out->method = sc_wire_get_bytes(&r);
    out->path = sc_wire_get_bytes(&r);
    out->n_params = (size_t)sc_wire_get_uvar_max(&r, SC_REST_MAX_PARAMS);
    out->keys = sc_arena_calloc(a, out->n_params + 1, sizeof *out->keys);
    out->values = sc_arena_calloc(a, out->n_params + 1, sizeof *out->values);
    if (!out->keys || !out->values)
        return SC_ENOMEM;
    for (size_t i = 0; i < out->n_params; i++) {
        out->keys[i] = sc_wire_get_bytes(&r);
        out->values[i] = sc_wire_get_bytes(&r);
    }
    out->content_type = sc_wire_get_bytes(&r);
    out->body = sc_wire_get_bytes(&r);
    return sc_wire_reader_finish(&r);
}

sc_status sc_api_fwd_resp_encode(const sc_rest_resp *resp, sc_wire_buf *out)
{
    bool json = !resp->content_type || strstr(resp->content_type, "json") != NULL;
    sc_wire_put_uvar(out, (uint64_t)resp->status);
    sc_wire_put_bool(out, json);
    sc_wire_put_bytes(out, resp->body.ptr, resp->body.len);
    return out->st;
}

/* One round trip; *status, *json_out and the body (borrowing *raw, which the caller frees). */
static sc_status round_trip(sc_rest_req *req, const sc_shard_location *loc, const char *method,
                            const char *path, sc_slice body, int *status, bool *json,
                            sc_slice *resp_body, uint8_t **raw)
{
    sc_placement *p = sc_node_placement(req->node);
    if (!p)
        return SC_EINVAL;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_status st = encode_req(req, method, path, body, &b);
    size_t len = 0;
    *raw = NULL;
    if (st == SC_OK)
        st = sc_transport_request(sc_placement_transport(p), loc->host, loc->port,
                                  SC_MSG_REST_FORWARD, sc_slice_make(b.ptr, b.len),
                                  FORWARD_TIMEOUT_MS, raw, &len, NULL);
    sc_wire_buf_fini(&b);
    if (st != SC_OK)
        return st;
    sc_wire_reader r;
    sc_wire_reader_init(&r, *raw, len);
    *status = (int)sc_wire_get_uvar_max(&r, 599);
    *json = sc_wire_get_bool(&r);
    *resp_body = sc_wire_get_bytes(&r);
    return sc_wire_reader_finish(&r);
}

void sc__api_forward(sc_rest_req *req, sc_rest_resp *resp, const sc_shard_location *loc,
                     const char *method, const char *path, sc_slice body)
{
    int status = 0;
    bool json = true;
    sc_slice rb;
    uint8_t *raw = NULL;
    sc_status st = round_trip(req, loc, method, path, body, &status, &json, &rb, &raw);
    if (st != SC_OK) {
        free(raw);
        sc_rest_errorf(req, resp, 502, "node_not_connected_exception",
                       "[%s][%s:%u] cannot forward the request to the primary: %s", loc->node_id,
                       loc->host, loc->port, sc_status_str(st));
        return;
    }
    resp->status = status;
    resp->content_type = json ? NULL : "text/plain; charset=UTF-8";
    sc_vec_clear(&resp->body);
    if (sc_vec_append(&resp->body, rb.ptr, rb.len) != SC_OK) {
        free(raw);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    free(raw);
}

sc_status sc__api_forward_json(sc_rest_req *req, const sc_shard_location *loc, const char *method,
                               const char *path, sc_slice body, int *status, json_t **out)
{
    bool json = true;
    sc_slice rb;
    uint8_t *raw = NULL;
    *out = NULL;
    sc_status st = round_trip(req, loc, method, path, body, status, &json, &rb, &raw);
    if (st == SC_OK && json)
        *out = json_loadb((const char *)rb.ptr, rb.len, 0, NULL);
    free(raw);
    return st;
}

/* ---- retrying writes across a primary hand-over or a promotion ---- */

bool sc__api_write_retryable(const char *type, const char *reason)
{
    if (!type)
        return false;
    if (!strcmp(type, "shard_not_primary_exception") ||
        !strcmp(type, "node_not_connected_exception") ||
        !strcmp(type, "replication_failed_exception"))
        return true;
    /* wait_for_active_shards already waited its timeout; the other unavailable_shards
     * answers mean "no primary here or anywhere yet" */
    return !strcmp(type, "unavailable_shards_exception") &&
           !(reason && strstr(reason, "Not enough active copies"));
}

bool sc__api_resp_retryable(const sc_rest_resp *resp, bool maybe_applied)
{
    if (resp->status != 502 && resp->status != 503)
        return false;
    json_t *j = json_loadb((const char *)resp->body.ptr, resp->body.len, 0, NULL);
    json_t *e = json_object_get(j, "error");
    const char *type = json_string_value(json_object_get(e, "type"));
    bool r = sc__api_write_retryable(type, json_string_value(json_object_get(e, "reason"))) &&
             (maybe_applied || strcmp(type, "replication_failed_exception") != 0);
    json_decref(j);
    return r;
}

uint64_t sc__api_write_deadline(const sc_rest_req *req, uint64_t t0_ns)
{
    const char *t = sc_rest_param_get(req, "timeout");
    int64_t ms = 60000;
    if (!t || !sc_time_parse_ms(t, &ms) || ms < 0)
        ms = 60000;
    return t0_ns + (uint64_t)ms * 1000000u;
}

bool sc__api_retry_wait(sc_rest_req *req, int64_t rev, uint64_t deadline_ns)
{
    sc_placement *p = sc_node_placement(req->node);
    uint64_t now = sc_clock_now_ns();
    if (!p || req->forwarded || now >= deadline_ns)
        return false;
    /* a new routing (the new primary, or the master's view of a dead node) usually ends the
     * wait; without one, try again every 500 ms (a node may answer again) */
    uint64_t left_ms = (deadline_ns - now) / 1000000 + 1;
    (void)!sc_placement_wait(p, rev + 1, left_ms < 500 ? (int64_t)left_ms : 500);
    struct timespec ts = {0, 20 * 1000000}; /* no tight loop on a routing that keeps changing */
    nanosleep(&ts, NULL);
    return sc_clock_now_ns() < deadline_ns;
}

int64_t sc__api_routing_rev(sc_rest_req *req)
{
    sc_placement *p = sc_node_placement(req->node);
    if (!p)
        return 0;
    sc_placement_snapshot *s = sc_placement_acquire(p);
    int64_t rev = sc_placement_revision(s);
    sc_placement_release(s);
    return rev;
}

void sc__api_timeout_reason(const sc_rest_req *req, const char *index, uint32_t shard, char *out,
                            size_t cap)
{
    const char *t = sc_rest_param_get(req, "timeout");
    snprintf(out, cap, "[%s][%u] primary shard is not active Timeout: [%.32s]", index, shard,
             t ? t : "1m");
}
