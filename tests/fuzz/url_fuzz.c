/* libFuzzer target for URL decoding (src/http/router.c) and routing (src/shard/routing.c).
 * Input: byte 0 picks the method (GET or HEAD: nothing is written), then the raw path up to the
 * first '?', then the raw query string. The query is decoded (a NUL-holding parameter must be
 * refused, never stored cut), the `routing` value is routed to a shard of a 3-shard index (in
 * range), and the request is dispatched through the router against a node with one index "fz"
 * holding one document, so path segments, {id} captures with NUL bytes and parameters reach the
 * real handlers. Every response must be a well-formed status. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/rest.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "cluster/scroll.h"
#include "http/router.h"
#include "shard/routing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static sc_node *node;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char tmpl[] = "/tmp/scry-url-fuzz-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        abort();
    sc_log_set_level(SC_LOG_ERROR);
    sc_node_config cfg = {.data_dir = dir, .search_threads = 1};
    if (sc_node_open(&cfg, &node) != SC_OK)
        abort();
    json_error_t jerr;
    json_t *settings = json_loads("{\"number_of_shards\":3}", 0, &jerr);
    sc_cluster_error err;
    if (sc_node_create_index(node, "fz", settings, NULL, &err) != SC_OK)
        abort();
    json_decref(settings);
    sc_index *ix = sc_node_index(node, "fz");
    sc_doc_write w = {.op = SC_DOC_INDEX,
                      .id = sc_slice_make("a\0b", 3),
                      .source = sc_slice_cstr("{\"t\":\"x\"}"),
                      .if_seq_no = -2};
    sc_doc_result r;
    sc_arena a;
    sc_arena_init(&a, 0);
    if (!ix || sc_index_write(ix, &w, 1, &r, &a) != SC_OK)
        abort();
    sc_arena_fini(&a);
    sc_index_refresh(ix);
    sc_index_unref(ix);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    const char *method = data[0] & 1 ? "HEAD" : "GET";
    data++;
    size--;
    const uint8_t *q = memchr(data, '?', size);
    size_t path_len = q ? (size_t)(q - data) : size;
    sc_arena arena;
    sc_arena_init(&arena, 64u << 20);
    sc_rest_req *req = sc_arena_calloc(&arena, 1, sizeof *req);
    char *path = sc_arena_alloc(&arena, path_len + 2);
    if (!req || !path)
        abort();
    /* The server hands over a NUL-terminated path starting with '/'. */
    path[0] = '/';
    memcpy(path + 1, data, path_len);
    path[path_len + 1] = '\0';
    req->arena = &arena;
    req->node = node;
    req->client_fd = -1;
    req->method = sc_router_method(method);
    req->method_str = method;
    req->path = path;
    if (q)
        sc_router_parse_query(req, (const char *)q + 1, size - path_len - 1);
    for (size_t i = 0; i < req->n_params; i++)
        if (!req->params[i].key || !req->params[i].value)
            abort();
    const char *routing = sc_rest_param_get(req, "routing");
    if (routing && sc_routing_shard(sc_slice_cstr(routing), 3, 384) >= 3)
        abort();
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    /* _cluster/health of a missing index waits up to 30 s for it by design, and GET _flush
     * fsyncs a commit: neither is a finding, both would slow the search to a crawl. */
    if (memmem(path, path_len + 1, "health", 6) || memmem(path, path_len + 1, "flush", 5)) {
        sc_rest_resp_fini(&resp);
        sc_arena_fini(&arena);
        return 0;
    }
    sc_router_dispatch(req, &resp);
    if (resp.status < 200 || resp.status > 599)
        abort();
    if (req->reject && resp.status != 400)
        abort();
    sc_rest_resp_fini(&resp);
    sc_arena_fini(&arena);
    /* GET _search?scroll=.. opens contexts that would pile up over the run */
    (void)sc_scroll_clear(node, NULL);
    return 0;
}
