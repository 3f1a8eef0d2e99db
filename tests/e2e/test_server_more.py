"""More server behaviour: hit ids without _source (read from the _id doc values), before and
after merges."""
from conftest import bulk_body


def _ids_of(server, index, body):
    st, h, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return [(x["_id"], x.get("_source")) for x in b["hits"]["hits"]]


def test_ids_without_source_match_stored(server, fresh_index):
    st, h, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"n": {"type": "long"}, "t": {"type": "text"}}}})
    assert st == 200, b
    docs = [{"n": i, "t": "word%d common" % (i % 7)} for i in range(300)]
    # Three refreshes -> several segments per shard; ids are strings of varied length.
    for part in range(3):
        lines = []
        for i in range(part * 100, part * 100 + 100):
            lines.append('{"index":{"_id":"id-%s"}}' % ("x" * (i % 13) + str(i)))
            lines.append('{"n":%d,"t":"%s"}' % (i, docs[i]["t"]))
        st, h, b = server.request("POST", "/%s/_bulk?refresh=true" % fresh_index,
                                  "\n".join(lines) + "\n")
        assert st == 200 and not b["errors"], b
    # Overwrite and delete some, so ids of deleted docs must not leak.
    st, h, b = server.request("POST", "/%s/_bulk?refresh=true" % fresh_index,
                              '{"index":{"_id":"id-0"}}\n{"n":0,"t":"common"}\n'
                              '{"delete":{"_id":"id-x1"}}\n')
    assert st == 200 and not b["errors"], b
    q = {"query": {"match": {"t": "common"}}, "size": 400, "sort": [{"n": "asc"}]}

    def check():
        with_src = _ids_of(server, fresh_index, q)
        without = _ids_of(server, fresh_index, dict(q, _source=False,
                                                    docvalue_fields=["n"]))
        assert [i for i, _ in with_src] == [i for i, _ in without]
        assert all(s is None for _, s in without)
        assert len(with_src) == 299
        for i, s in with_src:
            assert i == "id-" + "x" * (s["n"] % 13) + str(s["n"])
    check()
    st, h, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % fresh_index)
    assert st == 200, b
    server.request("POST", "/%s/_refresh" % fresh_index)
    check()


# ---- _close / _open ----

def _closed_error(b, index):
    assert b["status"] == 400, b
    assert b["error"]["type"] == "index_closed_exception", b
    assert b["error"]["reason"] == "closed"
    assert b["error"]["index"] == index
    assert b["error"]["root_cause"][0]["type"] == "index_closed_exception"


def test_close_open(server, fresh_index):
    st, h, b = server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, {"a": "x"})
    assert st == 201, b
    st, h, b = server.request("POST", "/%s/_close" % fresh_index)
    assert st == 200, b
    assert b == {"acknowledged": True, "shards_acknowledged": True,
                 "indices": {fresh_index: {"closed": True}}}
    # Reads and writes are refused.
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {})
    assert st == 400
    _closed_error(b, fresh_index)
    st, h, b = server.request("GET", "/%s/_count" % fresh_index)
    _closed_error(b, fresh_index)
    st, h, b = server.request("GET", "/%s/_doc/1" % fresh_index)
    assert st == 400
    _closed_error(b, fresh_index)
    st, h, b = server.request("PUT", "/%s/_doc/2" % fresh_index, {"a": "y"})
    assert st == 400
    _closed_error(b, fresh_index)
    st, h, b = server.request("POST", "/_bulk", '{"index":{"_index":"%s","_id":"3"}}\n{"a":1}\n'
                              % fresh_index)
    assert st == 200 and b["errors"], b
    assert b["items"][0]["index"]["status"] == 400
    assert b["items"][0]["index"]["error"]["type"] == "index_closed_exception"
    st, h, b = server.request("POST", "/%s/_refresh" % fresh_index)
    _closed_error(b, fresh_index)
    # Wildcards skip it; metadata endpoints still see it.
    st, h, b = server.request("POST", "/%s*/_search" % fresh_index[:-1], {})
    assert st == 200 and b["_shards"]["total"] == 0, b
    st, h, b = server.request("GET", "/" + fresh_index)
    assert st == 200 and fresh_index in b
    st, h, b = server.request("GET", "/_cat/indices/%s?format=json" % fresh_index)
    assert st == 200 and b[0]["status"] == "close" and b[0]["docs.count"] is None, b
    st, h, text = server.request("GET", "/_cat/indices/%s" % fresh_index, raw=True)
    assert b" close " in text, text
    # Closing twice is fine; opening brings the document back.
    assert server.request("POST", "/%s/_close" % fresh_index)[0] == 200
    st, h, b = server.request("POST", "/%s/_open" % fresh_index)
    assert st == 200 and b == {"acknowledged": True, "shards_acknowledged": True}, b
    st, h, b = server.request("GET", "/%s/_doc/1" % fresh_index)
    assert st == 200 and b["_source"] == {"a": "x"}
    st, h, b = server.request("GET", "/_cat/indices/%s?format=json" % fresh_index)
    assert b[0]["status"] == "open" and b[0]["docs.count"] == "1", b
    st, h, b = server.request("POST", "/missing-index-xyz/_close")
    assert st == 404 and b["error"]["type"] == "index_not_found_exception"


def test_closed_state_survives_restart(tmp_path):
    from conftest import Server
    s = Server(str(tmp_path / "data")).start()
    try:
        assert s.request("PUT", "/c1/_doc/1?refresh=true", {"a": 1})[0] == 201
        assert s.request("PUT", "/o1/_doc/1?refresh=true", {"a": 1})[0] == 201
        assert s.request("POST", "/c1/_close")[0] == 200
        assert s.stop() == 0
        s.start()
        st, h, b = s.request("GET", "/c1/_search")
        _closed_error(b, "c1")
        st, h, b = s.request("GET", "/o1/_search")
        assert st == 200 and b["hits"]["total"]["value"] == 1
        assert s.request("POST", "/c1/_open")[0] == 200
        assert s.stop() == 0
        s.start()
        st, h, b = s.request("GET", "/c1/_search")
        assert st == 200 and b["hits"]["total"]["value"] == 1, b
    finally:
        s.stop()


# ---- _cluster/health ----

def test_health_wait_for_status(server, fresh_index):
    assert server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 1}})[0] == 200
    st, h, b = server.request("GET", "/_cluster/health/%s?wait_for_status=yellow&timeout=5s"
                              % fresh_index)
    assert st == 200 and b["status"] == "yellow" and b["timed_out"] is False, b
    assert b["active_primary_shards"] == 2 and b["unassigned_shards"] == 2
    # One node never assigns replicas: green times out with 408, as in Elasticsearch.
    st, h, b = server.request("GET", "/_cluster/health/%s?wait_for_status=green&timeout=200ms"
                              % fresh_index)
    assert st == 408 and b["timed_out"] is True and b["status"] == "yellow", b
    # Dropping the replicas makes it green.
    st, h, b = server.request("PUT", "/%s/_settings" % fresh_index,
                              {"index": {"number_of_replicas": 0}})
    assert st == 200, b
    st, h, b = server.request("GET", "/_cluster/health/%s?wait_for_status=green&timeout=2s"
                              % fresh_index)
    assert st == 200 and b["status"] == "green" and b["timed_out"] is False, b
    # A missing index is red and times out.
    st, h, b = server.request("GET", "/_cluster/health/nope-%s?timeout=100ms" % fresh_index)
    assert st == 408 and b["status"] == "red" and b["timed_out"] is True, b
    st, h, b = server.request("GET", "/_cluster/health?wait_for_status=purple")
    assert st == 400 and b["error"]["type"] == "illegal_argument_exception"
    st, h, b = server.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=xyz")
    assert st == 400


# ---- common parameters: pretty, filter_path, human, error_trace ----

def _common_endpoints(index):
    return [
        ("GET", "/", None),
        ("GET", "/_cluster/health", None),
        ("GET", "/_cat/indices?format=json", None),
        ("GET", "/_stats", None),
        ("GET", "/%s/_stats" % index, None),
        ("GET", "/_nodes/stats", None),
        ("GET", "/%s" % index, None),
        ("GET", "/%s/_mapping" % index, None),
        ("GET", "/%s/_settings" % index, None),
        ("GET", "/%s/_segments" % index, None),
        ("POST", "/%s/_refresh" % index, None),
        ("GET", "/%s/_doc/1" % index, None),
        ("POST", "/%s/_search" % index, {"query": {"match_all": {}}}),
        ("POST", "/%s/_count" % index, {"query": {"match_all": {}}}),
        ("POST", "/%s/_mget" % index, {"ids": ["1"]}),
        ("PUT", "/%s/_doc/2" % index, {"a": "two"}),
        ("POST", "/_bulk", '{"index":{"_index":"%s","_id":"3"}}\n{"a":"three"}\n' % index),
        ("POST", "/%s/_msearch" % index, '{}\n{"query":{"match_all":{}}}\n'),
        ("GET", "/_tasks", None),
        ("GET", "/%s/_doc/missing-doc" % index, None),
        ("GET", "/no-such-index-here/_search", None),
    ]


def test_common_parameters_everywhere(server, fresh_index):
    import json
    assert server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, {"a": "one"})[0] == 201
    for method, path, body in _common_endpoints(fresh_index):
        sep = "&" if "?" in path else "?"
        st0, _, plain = server.request(method, path, body, raw=True)
        st, _, pretty = server.request(method, path + sep + "pretty&human&error_trace=true",
                                       body, raw=True)
        assert st // 100 == st0 // 100, (path, st, pretty[:300])
        assert pretty.endswith(b"\n") and b"\n  " in pretty, (path, pretty[:200])
        json.loads(pretty)
        # filter_path keeps only the named member (here the status of errors, or one key).
        top = json.loads(plain)
        key = "status" if isinstance(top, dict) and "error" in top else (
            next(iter(top)) if isinstance(top, dict) and top else None)
        if key is None:
            continue
        st, _, b = server.request(method, path + sep + "filter_path=" + key, body)
        assert st // 100 == st0 // 100 and list(b) == [key], (path, b)
        # ...and an exclusion drops it.
        st, _, b = server.request(method, path + sep + "filter_path=-" + key, body)
        assert key not in b, (path, b)


def test_human_adds_readable_sizes_and_times(server, fresh_index):
    assert server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, {"a": "one"})[0] == 201
    st, h, b = server.request("GET", "/%s/_stats?human" % fresh_index)
    assert st == 200
    store = b["_all"]["primaries"]["store"]
    assert store["size_in_bytes"] > 0
    assert store["size"].endswith(("b", "kb", "mb")), store
    assert list(store).index("size") < list(store).index("size_in_bytes")
    search = b["_all"]["primaries"]["search"]
    assert "query_time" in search and search["query_time"].endswith(("ms", "s", "m")), search
    st, h, b = server.request("GET", "/%s/_stats?human=false" % fresh_index)
    assert "size" not in b["_all"]["primaries"]["store"]


def test_filter_path_exclusion_nested(server, fresh_index):
    assert server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, {"a": "one"})[0] == 201
    st, h, b = server.request("GET", "/%s/_search?filter_path=-hits.hits._source,-_shards"
                              % fresh_index)
    assert st == 200 and "_shards" not in b
    assert b["hits"]["hits"][0]["_id"] == "1" and "_source" not in b["hits"]["hits"][0]
    st, h, b = server.request("GET", "/%s/_search?filter_path=hits.hits._id,-hits.hits._id"
                              % fresh_index)
    assert b == {}


# ---- routing: the same shard numbers as Elasticsearch 8 ----

# Shard of each id in a 5-shard index, from Elasticsearch's algorithm (murmur3 of the UTF-16LE
# id, floorMod by routing_num_shards, divided by routing_num_shards / 5); the hashes are checked
# against Lucene's StringHelper.murmurhash3_x86_32 in tests/unit/shard/routing_test.c.
ES_SHARD_5_OF_640 = {"1": 4, "2": 3, "hello": 4, "doc-42": 0, "abcdefghijklmnop": 4}
ES_SHARD_5_OF_5 = {"1": 3, "2": 2, "hello": 1, "doc-42": 1, "abcdefghijklmnop": 3}


def _shard_of(server, index, doc_id, n_shards=5):
    found = []
    for s in range(n_shards):
        st, h, b = server.request("GET", "/%s/_search?preference=_shards:%d" % (index, s),
                                  {"query": {"ids": {"values": [doc_id]}}})
        assert st == 200 and b["_shards"]["total"] == 1, b
        if b["hits"]["hits"]:
            found.append(s)
    assert len(found) == 1, found
    return found[0]


def _index_ids(server, index, ids, routing=None):
    lines = []
    for i in ids:
        meta = {"_id": i}
        if routing:
            meta["routing"] = routing
        lines.append('{"index":%s}' % __import__("json").dumps(meta))
        lines.append('{"v":1}')
    st, h, b = server.request("POST", "/%s/_bulk?refresh=true" % index, "\n".join(lines) + "\n")
    assert st == 200 and not b["errors"], b


def test_routing_matches_elasticsearch_default(server, fresh_index):
    assert server.request("PUT", "/" + fresh_index,
                          {"settings": {"number_of_shards": 5}})[0] == 200
    _index_ids(server, fresh_index, ES_SHARD_5_OF_640)
    for i, shard in ES_SHARD_5_OF_640.items():
        assert _shard_of(server, fresh_index, i) == shard, i
    # ?routing searches only the shard the value routes to.
    st, h, b = server.request("GET", "/%s/_search?routing=doc-42" % fresh_index)
    assert b["_shards"]["total"] == 1 and [x["_id"] for x in b["hits"]["hits"]] == ["doc-42"]
    st, h, b = server.request("GET", "/%s/_count?routing=1,2" % fresh_index)
    assert b["_shards"]["total"] == 2 and b["count"] == 4, b  # shards 4 and 3
    # A custom routing value places the document by that value.
    _index_ids(server, fresh_index, ["custom-a"], routing="doc-42")
    assert _shard_of(server, fresh_index, "custom-a") == 0
    st, h, b = server.request("GET", "/%s/_doc/custom-a?routing=doc-42" % fresh_index)
    assert st == 200 and b["found"]
    st, h, b = server.request("GET", "/%s/_search?preference=_shards:x" % fresh_index)
    assert st == 400


def test_scroll_and_pit_keep_the_first_pages_routing(server, fresh_index):
    # Later scroll pages (and searches of a point in time) search the shards the first
    # request's ?routing / ?preference chose, not every shard of the index.
    assert server.request("PUT", "/" + fresh_index,
                          {"settings": {"number_of_shards": 5}})[0] == 200
    _index_ids(server, fresh_index, ["r%d" % i for i in range(20)], routing="doc-42")
    _index_ids(server, fresh_index, ["o%d" % i for i in range(40)])
    st, h, b = server.request("GET", "/%s/_count?routing=doc-42" % fresh_index)
    routed = b["count"]  # the 20 routed docs plus the others that hash to shard 0
    assert st == 200 and 20 <= routed < 60, b
    st, h, b = server.request("POST", "/%s/_search?scroll=1m&size=3&routing=doc-42" % fresh_index,
                              {"sort": ["_doc"]})
    assert st == 200 and b["_shards"]["total"] == 1 and b["hits"]["total"]["value"] == routed, b
    seen = [x["_id"] for x in b["hits"]["hits"]]
    sid = b["_scroll_id"]
    while True:
        st, h, b = server.request("POST", "/_search/scroll", {"scroll_id": sid, "scroll": "1m"})
        assert st == 200 and b["_shards"]["total"] == 1, b
        assert b["hits"]["total"]["value"] == routed, b
        if not b["hits"]["hits"]:
            break
        seen += [x["_id"] for x in b["hits"]["hits"]]
    assert len(seen) == routed == len(set(seen))
    assert {"r%d" % i for i in range(20)} <= set(seen)
    server.request("DELETE", "/_search/scroll", {"scroll_id": sid})
    st, h, b = server.request("POST", "/%s/_pit?keep_alive=1m&preference=_shards:1,2" % fresh_index)
    assert st == 200, b
    pit = b["id"]
    st, h, b = server.request("POST", "/_search", {"pit": {"id": pit}, "size": 0})
    assert st == 200 and b["_shards"]["total"] == 2, b
    st, h, b = server.request("GET", "/%s/_count?preference=_shards:1,2" % fresh_index)
    assert b["count"] == server.request("POST", "/_search", {"pit": {"id": pit}, "size": 0}
                                        )[2]["hits"]["total"]["value"]
    server.request("DELETE", "/_pit", {"id": pit})


def test_routing_explicit_number_of_routing_shards(server, fresh_index):
    st, h, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 5, "number_of_routing_shards": 5}})
    assert st == 200, b
    _index_ids(server, fresh_index, ES_SHARD_5_OF_5)
    for i, shard in ES_SHARD_5_OF_5.items():
        assert _shard_of(server, fresh_index, i) == shard, i
    st, h, b = server.request("PUT", "/bad-" + fresh_index, {
        "settings": {"number_of_shards": 5, "number_of_routing_shards": 7}})
    assert st == 400 and b["error"]["type"] == "illegal_argument_exception"


def test_routing_of_older_indices_is_kept(tmp_path):
    """Metadata written before routing_num_shards was stored keeps floorMod(hash, shards)."""
    import glob
    import json
    from conftest import Server
    s = Server(str(tmp_path / "data")).start()
    try:
        assert s.request("PUT", "/old", {"settings": {"number_of_shards": 5}})[0] == 200
        assert s.stop() == 0
        (meta_path,) = glob.glob(str(tmp_path / "data" / "indices" / "*" / "meta.json"))
        meta = json.load(open(meta_path))
        assert meta["routing_num_shards"] == 640
        del meta["routing_num_shards"]
        open(meta_path, "w").write(json.dumps(meta))
        s.start()
        _index_ids(s, "old", ES_SHARD_5_OF_5)
        for i, shard in ES_SHARD_5_OF_5.items():
            assert _shard_of(s, "old", i) == shard, i
        assert s.stop() == 0
        s.start()
        for i, shard in ES_SHARD_5_OF_5.items():
            assert _shard_of(s, "old", i) == shard, i
    finally:
        s.stop()


# ---- fields: text fields read from _source ----

def test_fields_on_text_fields(server, fresh_index):
    st, h, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "title": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
        "tags": {"type": "text"},
        "user": {"properties": {"name": {"type": "text"}}},
        "n": {"type": "long"}}}})
    assert st == 200, b
    doc = {"title": "Hello World", "tags": ["a b", "c"], "user": {"name": "Ann"}, "n": 5}
    assert server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, doc)[0] == 201
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {
        "_source": False, "fields": ["title", "tags", "user.name", "n", "title.raw", "none"]})
    assert st == 200, b
    hit = b["hits"]["hits"][0]
    assert "_source" not in hit
    assert hit["fields"] == {"title": ["Hello World"], "tags": ["a b", "c"],
                             "user.name": ["Ann"], "n": [5], "title.raw": ["Hello World"]}
    # With _source requested both are present; docvalue_fields does not read text fields.
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {
        "fields": [{"field": "title"}], "docvalue_fields": ["n"]})
    hit = b["hits"]["hits"][0]
    assert hit["_source"] == doc and hit["fields"] == {"title": ["Hello World"], "n": [5]}
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {
        "_source": False, "docvalue_fields": ["title"]})
    assert "fields" not in b["hits"]["hits"][0]
