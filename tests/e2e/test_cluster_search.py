"""Search across nodes (issue 13): three `scry serve --cluster` processes on a private etcd and,
as the reference, a separate single-node server with the same index. An index of 6 shards and 0
replicas is bulk-loaded through one node (writes go to each shard's primary over the transport);
searches and aggregations from every node must equal the single node's (ids, scores, sort
values, totals, aggregations), with the batched query phase (one request per data node) and
with `search.batched_query_phase: false` (one per shard). Single-document index/get/delete are
routed to the primary. Last, one node is SIGKILLed: searches answer with its shards in
`_shards.failures` and partial results, or 503 with allow_partial_search_results=false."""
import json
import re
import signal
import time

import pytest

from test_cluster import bulk_lines, bulk_on, create_on, running_cluster, wait_green

N_DOCS = 300
MAPPING = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                          "n": {"type": "long"}, "price": {"type": "double"},
                          "day": {"type": "date"}}}
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]


def doc(i):
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + i % 5)]
    return {"title": " ".join(words), "tag": "t%d" % (i % 7), "n": i,
            "price": round((i % 13) * 1.25, 2), "day": "2024-01-%02dT00:00:00Z" % (1 + i % 28)}


@pytest.fixture(scope="module")
def env():
    # n1 logs at debug level: its coordinator says how many query requests it sent
    with running_cluster("scry-csearch-", "cs", single=True,
                         args=lambda n: ["--log-level", "debug"] if n == "n1" else []) as run:
        nodes, single = run.nodes, run.single
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 0},
                "mappings": MAPPING}
        create_on((nodes["n1"], single), "docs", body)
        wait_green(nodes.values(), "docs")  # every node has the master's routing table
        bulk_on((nodes["n2"], single), bulk_lines("docs", N_DOCS, doc))
        yield nodes, single


QUERIES = [
    {"query": {"match": {"title": "fox"}}, "size": 10},
    {"query": {"match": {"title": "quick brown dog"}}, "size": 7, "from": 3},
    {"query": {"bool": {"must": [{"match": {"title": "river"}}],
                        "filter": [{"range": {"n": {"gte": 50, "lt": 250}}}]}}, "size": 20},
    {"query": {"match_all": {}}, "sort": [{"n": "desc"}], "size": 15, "from": 10},
    {"query": {"match_all": {}}, "sort": [{"tag": "asc"}, {"n": "asc"}], "size": 12,
     "search_after": ["t3", 100]},
    {"query": {"match": {"title": "stone"}}, "sort": [{"price": "desc"}, "_score", {"n": "asc"}],
     "size": 9},
    {"size": 0, "aggs": {"tags": {"terms": {"field": "tag", "size": 10},
                                  "aggs": {"avg_price": {"avg": {"field": "price"}}}},
                         "sum_n": {"sum": {"field": "n"}},
                         "days": {"date_histogram": {"field": "day",
                                                     "calendar_interval": "week"}},
                         "prices": {"histogram": {"field": "price", "interval": 5}},
                         "stats": {"stats": {"field": "price"}}}},
    {"query": {"match": {"title": "lazy"}}, "size": 5,
     "aggs": {"tags": {"terms": {"field": "tag"}}},
     "post_filter": {"term": {"tag": "t2"}}},
    {"query": {"match": {"title": "lazy"}}, "size": 0,
     "aggs": {"tags": {"terms": {"field": "tag"}}, "mx": {"max": {"field": "n"}}},
     "post_filter": {"term": {"tag": "t2"}}},
    {"size": 0, "query": {"range": {"n": {"gte": 20}}},  # sampler partials cross nodes
     "aggs": {"s": {"sampler": {"shard_size": 10}, "aggs": {"tags": {"terms": {"field": "tag"}}}},
              "g": {"terms": {"field": "tag"}, "aggs": {"s": {
                  "sampler": {"shard_size": 3}, "aggs": {"mx": {"max": {"field": "n"}}}}}}}},
    {"size": 0, "query": {"range": {"n": {"gte": 5}}},  # diversified_sampler partials (kind 48)
     "aggs": {"s": {"diversified_sampler": {"field": "tag", "shard_size": 20,
                                            "max_docs_per_value": 2},
                    "aggs": {"tags": {"terms": {"field": "tag"}}, "mx": {"max": {"field": "n"}}}}}},
    {"query": {"match_all": {}}, "size": 3, "track_total_hits": 100},
    {"query": {"term": {"tag": "t5"}}, "size": 4, "_source": False,
     "docvalue_fields": ["n", "tag"]},
    # min_score and indices_boost: applied by the data nodes (node query extension tag 9)
    {"query": {"match": {"title": "quick brown dog"}}, "min_score": 0.7, "size": 40,
     "track_total_hits": True},
    {"query": {"match": {"title": "lazy river"}}, "min_score": 0.45, "size": 5,
     "aggs": {"tags": {"terms": {"field": "tag"}}}, "post_filter": {"term": {"tag": "t2"}}},
    {"query": {"match": {"title": "fox"}}, "indices_boost": [{"do*": 3}], "size": 10},
    {"query": {"match": {"title": "stone"}}, "indices_boost": {"docs": 0.5}, "min_score": 0.39,
     "size": 10},
    # runtime_mappings: the data nodes compile them with their mappings (extension tag 11)
    {"size": 0, "query": {"range": {"n": {"gte": 10}}},
     "runtime_mappings": {"n2": {"type": "long", "script": "emit(doc['n'].value * 2)"},
                          "half": {"type": "double", "script": "emit(doc['price'].value / 2)"},
                          "t": {"type": "keyword", "script": {"source": "emit(doc['tag'].value)"}}},
     "aggs": {"s": {"sum": {"field": "n2"}}, "h": {"histogram": {"field": "n2", "interval": 100},
                                                  "aggs": {"a": {"avg": {"field": "half"}}}},
              "t": {"terms": {"field": "t"}, "aggs": {"mx": {"max": {"field": "n2"}}}}}},
]


def essence(r):
    """What must be equal between the cluster and the single node."""
    assert "error" not in r, r
    hits = [(h["_id"], None if h.get("_score") is None else round(h["_score"], 5),
             h.get("sort"), h.get("_source"), h.get("fields")) for h in r["hits"]["hits"]]
    sh = r["_shards"]
    return {"total": r["hits"].get("total"), "max_score": r["hits"].get("max_score"),
            "hits": hits, "aggs": r.get("aggregations"),
            "shards": (sh["total"], sh["successful"], sh["failed"])}


def search(node, q, path="/docs/_search"):
    st, _, r = node.request("POST", path, q)
    assert st == 200, r
    return r


def set_batched(node, on):
    st, _, r = node.request("PUT", "/_cluster/settings",
                            {"transient": {"search.batched_query_phase": on}})
    assert st == 200, r
    time.sleep(2.5)  # the nodes read the setting at most a second after it changes


@pytest.mark.parametrize("batched", [True, False])
def test_search_equals_single_node(env, batched):
    nodes, single = env
    set_batched(nodes["n1"], batched)
    for q in QUERIES:
        want = essence(search(single, q))
        for name, s in nodes.items():
            got = essence(search(s, q))
            assert got == want, "%s (batched=%s) query %s" % (name, batched, json.dumps(q))
            if name == "n1":
                # 6 shards on 3 nodes: 3 requests (2 remote) batched, else 6 (4 remote)
                line = [l for l in s.read_log().splitlines() if "query requests" in l][-1]
                assert ("6 shards in 3 query requests (batched per node), 2 remote" if batched
                        else "6 shards in 6 query requests (one per shard), 4 remote") in line
    st, _, c = nodes["n3"].request("GET", "/docs/_count?q=title:fox")
    assert st == 200 and c["count"] == single.request("GET", "/docs/_count?q=title:fox")[2]["count"]
    set_batched(nodes["n1"], True)


TIE_QUERIES = [
    {"query": {"constant_score": {"filter": {"term": {"k": "same"}}}}, "size": 50},
    {"query": {"constant_score": {"filter": {"term": {"k": "same"}}}}, "size": 40, "from": 95},
    {"query": {"match_all": {}}, "size": 240},
    {"query": {"match": {"t": "same words"}}, "size": 60, "from": 30},
    {"query": {"bool": {"filter": [{"term": {"g": 1}}]}}, "size": 30, "from": 10},
]


@pytest.mark.parametrize("batched", [True, False])
def test_score_ties_in_single_node_order(env, batched):
    """Hits of equal score come in the single node's order from every coordinator (Elasticsearch's
    rule: the shard's position in the request's shard list, then the doc within the shard):
    identical documents in two segments per shard, pages of constant_score and match_all (every
    hit ties) and of match (ties within each shard), batched and one request per shard."""
    nodes, single = env
    if batched:  # the first run loads the index
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 0},
                "mappings": {"properties": {"k": {"type": "keyword"}, "t": {"type": "text"},
                                            "g": {"type": "integer"}}}}
        create_on((nodes["n1"], single), "ties", body)
        wait_green(nodes.values(), "ties")
        lines = bulk_lines("ties", 240, lambda i: {"k": "same", "t": "same words", "g": i % 3})
        half = lines.count("\n") // 4 * 2  # two bulks: two segments per shard
        first = "\n".join(lines.split("\n")[:half]) + "\n"
        rest = "\n".join(lines.split("\n")[half:])
        bulk_on((nodes["n3"], single), first)
        bulk_on((nodes["n3"], single), rest)
    if not batched:  # the other tests leave it on
        set_batched(nodes["n1"], False)
    try:
        for q in TIE_QUERIES:
            want = [h["_id"] for h in search(single, q, "/ties/_search")["hits"]["hits"]]
            assert len(want) == q["size"], (q, len(want))
            for name, s in nodes.items():
                got = [h["_id"] for h in search(s, q, "/ties/_search")["hits"]["hits"]]
                assert got == want, "%s (batched=%s) %s: %s != %s" % (
                    name, batched, json.dumps(q), got, want)
    finally:
        if not batched:
            set_batched(nodes["n1"], True)


def test_runtime_mappings_across_nodes(env):
    """A runtime field's values come from every data node's shards (the sum is known), and a
    script the coordinator cannot compile is a 400 before any node runs it."""
    nodes, single = env
    rm = {"n2": {"type": "long", "script": "emit(doc['n'].value * 2)"}}
    q = {"size": 0, "runtime_mappings": rm, "aggs": {"s": {"sum": {"field": "n2"}}}}
    for s in [single] + list(nodes.values()):
        st, _, r = s.request("POST", "/docs/_search", q)
        assert st == 200, r
        assert r["aggregations"]["s"]["value"] == 2 * sum(range(N_DOCS)), (s.url, r)
    bad = {"size": 0, "aggs": {"s": {"sum": {"field": "x"}}},
           "runtime_mappings": {"x": {"type": "long", "script": "emit(doc['nope'].value)"}}}
    st, _, r = nodes["n2"].request("POST", "/docs/_search", bad)
    assert st == 400, r


def test_min_score_and_indices_boost(env):
    """The QUERIES with min_score and indices_boost compare something: min_score drops some
    hits (from totals and aggregations too) and the boost changes the scores; _count too."""
    nodes, single = env
    q = {"query": {"match": {"title": "quick brown dog"}}, "size": 0, "track_total_hits": True}
    every = search(single, q)["hits"]["total"]["value"]
    some = search(single, dict(q, min_score=0.7))["hits"]["total"]["value"]
    assert 0 < some < every, (some, every)
    for s in nodes.values():
        assert search(s, dict(q, min_score=0.7))["hits"]["total"]["value"] == some
        st, _, c = s.request("POST", "/docs/_count", {"query": q["query"], "min_score": 0.7})
        assert st == 200 and c["count"] == some, c
    fox = {"query": {"match": {"title": "fox"}}, "size": 3}
    plain = search(single, fox)["hits"]["max_score"]
    for s in nodes.values():
        boosted = search(s, dict(fox, indices_boost=[{"do*": 3}]))["hits"]["max_score"]
        assert abs(boosted - 3 * plain) < 1e-4, (boosted, plain)


def test_documents_route_to_primary(env):
    nodes, single = env
    for i in range(20):
        st, _, r = nodes["n%d" % (1 + i % 3)].request("PUT", "/docs/_doc/x%d?refresh=true" % i,
                                                        {"title": "extra fox", "n": 1000 + i})
        assert st in (200, 201), r
    for i in range(20):
        st, _, r = nodes["n%d" % (1 + (i + 1) % 3)].request("GET", "/docs/_doc/x%d" % i)
        assert st == 200 and r["found"] and r["_source"]["n"] == 1000 + i, r
    st, _, r = nodes["n2"].request("POST", "/docs/_doc?refresh=true", {"title": "auto id"})
    assert st == 201, r
    st, _, g = nodes["n3"].request("GET", "/docs/_doc/" + r["_id"])
    assert st == 200 and g["found"], g
    for i in range(20):
        st, _, r = nodes["n3"].request("DELETE", "/docs/_doc/x%d?refresh=true" % i)
        assert st == 200 and r["result"] == "deleted", r
    st, _, r = nodes["n2"].request("DELETE", "/docs/_doc/%s?refresh=true" % g["_id"])
    assert st == 200, r
    total = search(nodes["n1"], {"size": 0, "track_total_hits": True})["hits"]["total"]["value"]
    assert total == N_DOCS


def test_killed_node_gives_partial_results(env):
    nodes, single = env
    victim = nodes.pop("n3")
    st, _, shards = nodes["n1"].request("GET", "/_cat/shards/docs?format=json")
    assert st == 200
    lost = sorted(int(s["shard"]) for s in shards if s["node"] == "n3")
    assert lost, shards
    victim.stop(sig=signal.SIGKILL)
    full = search(single, {"size": 0, "track_total_hits": True})["hits"]["total"]["value"]
    for s in nodes.values():
        r = search(s, {"query": {"match_all": {}}, "size": 5, "track_total_hits": True})
        sh = r["_shards"]
        assert (sh["total"], sh["successful"], sh["failed"]) == (6, 6 - len(lost), len(lost)), r
        assert sorted(f["shard"] for f in sh["failures"]) == lost, sh
        assert all(f["index"] == "docs" and f["reason"]["type"] for f in sh["failures"]), sh
        assert 0 < r["hits"]["total"]["value"] < full
        st, _, e = s.request("POST", "/docs/_search?allow_partial_search_results=false",
                             {"query": {"match_all": {}}})
        assert st == 503, e
    # once the lease is gone, the routing has no primary for those shards: still failures
    time.sleep(3)
    r = search(nodes["n2"], {"size": 0})
    assert r["_shards"]["failed"] == len(lost), r
    # writes to the lost shards wait for a primary up to their timeout, then fail (503), the
    # others succeed
    codes = {}
    for i in range(30):
        st, _, w = nodes["n1"].request("PUT", "/docs/_doc/k%d?timeout=100ms" % i, {"n": i})
        codes.setdefault(st, []).append(w)
    assert set(codes) == {201, 503}, codes
    assert all(w["error"]["type"] == "unavailable_shards_exception" and
               w["error"]["reason"].endswith("primary shard is not active Timeout: [100ms]")
               for w in codes[503]), codes
    # the same for a bulk's items, each on its own (through n2, which forwards some to n1)
    body = "".join('{"index":{"_index":"docs","_id":"b%d"}}\n{"n":%d}\n' % (i, i)
                   for i in range(30))
    st, _, r = nodes["n2"].request("POST", "/_bulk?timeout=100ms", body,
                                   {"Content-Type": "application/x-ndjson"})
    assert st == 200 and r["errors"], r
    items = [it["index"] for it in r["items"]]
    assert {it["status"] for it in items} == {201, 503}, items
    for it in items:
        if it["status"] == 503:
            m = re.match(r"^\[docs\]\[(\d)\] primary shard is not active Timeout: \[100ms\]$",
                         it["error"]["reason"])
            assert it["error"]["type"] == "unavailable_shards_exception" and m, it
            assert int(m.group(1)) in lost, (it, lost)
