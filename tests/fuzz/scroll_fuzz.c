/* libFuzzer target for scroll and point-in-time ids: arbitrary bytes used as a scroll id (in the
 * path, in a scroll body, in a clear-scroll body) or as a point-in-time id (in a search body, in
 * a close body), dispatched through the router against a node holding one index with documents
 * and one open scroll and point in time. Byte 0 picks the way in; the rest is the id. Unknown
 * ids must give a 4xx, never a crash, a hang or another context. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/rest.h"
#include "cluster/log.h"
#include "cluster/node.h"
#include "http/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static sc_node *node;

static int call(const char *method, const char *path, const char *query, const char *body,
                size_t body_len)
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
    if (query)
        sc_router_parse_query(req, query, strlen(query));
    req->body = sc_slice_make(body, body_len);
    sc_rest_resp resp;
    sc_rest_resp_init(&resp);
    sc_router_dispatch(req, &resp);
    int status = resp.status;
    if (status < 200 || status > 599)
        abort();
    sc_rest_resp_fini(&resp);
    sc_arena_fini(&arena);
    return status;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char tmpl[] = "/tmp/scry-scroll-fuzz-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        abort();
    sc_log_set_level(SC_LOG_ERROR);
    sc_node_config cfg = {.data_dir = dir, .search_threads = 1};
    if (sc_node_open(&cfg, &node) != SC_OK)
        abort();
    const char *bulk = "{\"index\":{\"_index\":\"fz\",\"_id\":\"1\"}}\n{\"t\":\"a b\"}\n"
                       "{\"index\":{\"_index\":\"fz\",\"_id\":\"2\"}}\n{\"t\":\"b c\"}\n"
                       "{\"index\":{\"_index\":\"fz\",\"_id\":\"3\"}}\n{\"t\":\"c d\"}\n";
    if (call("POST", "/_bulk", "refresh=true", bulk, strlen(bulk)) != 200)
        abort();
    const char *q = "{\"size\":1,\"query\":{\"match_all\":{}}}";
    if (call("POST", "/fz/_search", "scroll=10m", q, strlen(q)) != 200)
        abort();
    if (call("POST", "/fz/_pit", "keep_alive=10m", NULL, 0) != 200)
        abort();
    return 0;
}

/* Serializes v (owned; NULL gives NULL), keeping NUL bytes of strings as \u0000. */
static char *dump(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 2048)
        return 0;
    uint8_t sel = data[0] % 6;
    data++;
    size--;
    json_t *id = json_stringn((const char *)data, size); /* NULL when not UTF-8 */
    char *body = NULL;
    switch (sel) {
    case 0: { /* GET /_search/scroll/<id> with the id percent-encoded */
        char *path = malloc(3 * size + 32);
        if (!path)
            abort();
        size_t o = (size_t)sprintf(path, "/_search/scroll/");
        for (size_t i = 0; i < size; i++)
            o += (size_t)sprintf(path + o, "%%%02X", data[i]);
        (void)call("GET", path, NULL, NULL, 0);
        free(path);
        break;
    }
    case 1: body = dump(json_pack("{s:O?,s:s}", "scroll_id", id, "scroll", "1m")); break;
    case 2: body = dump(json_pack("{s:{s:O?,s:s}}", "pit", "id", id, "keep_alive", "1m")); break;
    case 3: body = dump(json_pack("{s:[O?]}", "scroll_id", id)); break;
    case 4: body = dump(json_pack("{s:O?}", "id", id)); break;
    default: /* the bytes as the whole scroll body */
        (void)call("POST", "/_search/scroll", NULL, (const char *)data, size);
        break;
    }
    if (body) {
        static const char *const method[] = {"", "POST", "POST", "DELETE", "DELETE"};
        static const char *const path[] = {"", "/_search/scroll", "/_search", "/_search/scroll",
                                           "/_pit"};
        (void)call(method[sel], path[sel], NULL, body, strlen(body));
        free(body);
    }
    json_decref(id);
    return 0;
}
