/* libFuzzer target: the query DSL parser and the request router with arbitrary bodies.
 * Input: first byte picks the target (DSL directly, or POST /fz/_search|_count|_msearch|_mget,
 * or a GET of an arbitrary path made from the first line); the rest is the body. A node with
 * one small index (text, keyword, long, geo_point and ip fields) lives in a temporary folder
 * (and rank_feature / rank_features, an int8_hnsw dense_vector) for the whole run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/dsl.h"
#include "api/rest.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "http/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static sc_node *node;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char tmpl[] = "/tmp/scry-fuzz-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        abort();
    sc_log_set_level(SC_LOG_ERROR);
    sc_node_config cfg = {.data_dir = dir, .search_threads = 1};
    if (sc_node_open(&cfg, &node) != SC_OK)
        abort();
    json_error_t jerr;
    json_t *m = json_loads("{\"properties\":{\"t\":{\"type\":\"text\"},\"k\":{\"type\":\"keyword\"}"
                           ",\"n\":{\"type\":\"long\"},\"g\":{\"type\":\"geo_point\"}"
                           ",\"ip\":{\"type\":\"ip\"},\"rf\":{\"type\":\"rank_feature\"}"
                           ",\"rs\":{\"type\":\"rank_features\"}"
                           ",\"v\":{\"type\":\"dense_vector\",\"dims\":3,\"similarity\":"
                           "\"l2_norm\",\"index_options\":{\"type\":\"int8_hnsw\","
                           "\"rescore_vector\":{\"oversample\":2}}}"
                           ",\"c\":{\"type\":\"nested\",\"properties\":{\"t\":{\"type\":"
                           "\"text\"},\"k\":{\"type\":\"keyword\"},\"n\":{\"type\":\"long\"}}}}}",
                           0, &jerr);
    sc_cluster_error err;
    if (sc_node_create_index(node, "fz", NULL, m, &err) != SC_OK)
        abort();
    json_decref(m);
    return 0;
}

static void route(const char *method, const char *path, const uint8_t *body, size_t len)
{
    sc_arena arena;
    sc_arena_init(&arena, 64u << 20);
    sc_rest_req *req = sc_arena_calloc(&arena, 1, sizeof *req);
    if (!req)
        abort();
    req->arena = &arena;
    req->node = node;
    req->client_fd = -1;
    req->method = sc_router_method(method);
    req->method_str = method;
    req->path = path;
    req->body = sc_slice_make(body, len);
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    sc_router_dispatch(req, &resp);
    if (resp.status < 200 || resp.status > 599)
        abort();
    sc_rest_resp_fini(&resp);
    sc_arena_fini(&arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0] % 6;
    data++;
    size--;
    switch (sel) {
    case 0: {
        json_error_t jerr;
        json_t *q = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
        if (q) {
            sc_arena a;
            sc_arena_init(&a, 64u << 20);
            sc_query *tree;
            sc_dsl_error err;
            if (sc_dsl_parse(NULL, &a, q, &tree, &err) == SC_OK) {
                char buf[256];
                sc_query_to_string(tree, buf, sizeof buf);
            }
            sc_arena_fini(&a);
            json_decref(q);
        }
        break;
    }
    case 1:
        route("POST", "/fz/_search", data, size);
        break;
    case 2:
        route("POST", "/fz/_count", data, size);
        break;
    case 3:
        route("POST", "/fz/_msearch", data, size);
        break;
    case 4:
        route("POST", "/fz/_mget", data, size);
        break;
    default: {
        /* A GET of a fuzzed path (first line, NUL-free). */
        char path[256];
        size_t n = 0;
        path[n++] = '/';
        for (size_t i = 0; i < size && n < sizeof path - 1 && data[i] != '\n'; i++)
            if (data[i])
                path[n++] = (char)data[i];
        path[n] = '\0';
        /* Only read-only endpoints: never let the fuzzer create or delete indices. */
        route("GET", path, NULL, 0);
        break;
    }
    }
    return 0;
}
