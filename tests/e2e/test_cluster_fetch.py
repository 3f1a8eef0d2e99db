"""Fetch-phase features of a search across nodes (issues 13/14): highlight, named queries
(matched_queries), version / seq_no_primary_term, explain (query_then_fetch and
dfs_query_then_fetch), track_scores with a sort, nested queries' inner_hits, through an alias
with a filter, and GET _explain/{id}. One 3-node cluster (6 shards, 0 replicas) and a single
node with the same documents; every hit from every node of the cluster must equal the single
node's (scores and explanation values rounded), with the batched query phase and with
`search.batched_query_phase: false`."""
import json
import time

import pytest

from test_cluster import bulk_lines, bulk_on, create_on, running_cluster, wait_green, wait_until

N_DOCS = 120
MAPPING = {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                          "tag": {"type": "keyword"}, "n": {"type": "long"},
                          "parts": {"type": "nested",
                                    "properties": {"name": {"type": "text"},
                                                   "qty": {"type": "long"}}}}}
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]


def doc(i):
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + i % 5)]
    body = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12))
    parts = [{"name": WORDS[(i + k) % len(WORDS)] + " part", "qty": k + i % 4}
             for k in range(i % 4)]
    return {"title": " ".join(words), "body": body + ". " + body, "tag": "t%d" % (i % 7),
            "n": i, "parts": parts}


@pytest.fixture(scope="module")
def env():
    # n1 logs at debug level: its coordinator says how many shards a search read
    with running_cluster("scry-cfetch-", "cf", single=True,
                         args=lambda n: ["--log-level", "debug"] if n == "n1" else []) as run:
        nodes, single = run.nodes, run.single
        # no periodic refresh: each shard's segments (and so the doc numbers that explanations
        # name, "weight(title:fox in 12)") come from the explicit refreshes alone, alike on both
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 0,
                             "refresh_interval": "-1"}, "mappings": MAPPING}
        alias = {"actions": [{"add": {"index": "fx", "alias": "fx_t1",
                                      "filter": {"term": {"tag": "t1"}}}}]}
        create_on((nodes["n1"], single), "fx", body)
        for s in (nodes["n1"], single):
            st, _, r = s.request("POST", "/_aliases", alias)
            assert st == 200, r
        wait_green(nodes.values(), "fx")
        bulk_on((nodes["n2"], single), bulk_lines("fx", N_DOCS, doc))
        # updates bump _version and _seq_no the same way on both
        for s in (nodes["n3"], single):
            for i in (3, 10, 11):
                st, _, r = s.request("POST", "/fx/_update/%d?refresh=true" % i,
                                     {"doc": {"n": 1000 + i}})
                assert st == 200, r
        for s in nodes.values():  # the alias reached every node
            wait_until("alias on " + s.url,
                       lambda s=s: s.request("GET", "/fx_t1/_count")[0] == 200)
        yield nodes, single


TITLE_FOX = {"match": {"title": "fox"}}
QUERIES = [
    # highlight: default, options, several fields, highlight_query, a pattern
    {"query": TITLE_FOX, "size": 10, "highlight": {"fields": {"title": {}}}},
    {"query": {"bool": {"should": [{"match": {"title": "lazy dog"}},
                                   {"match": {"body": "river"}}]}}, "size": 8,
     "highlight": {"pre_tags": ["<b>"], "post_tags": ["</b>"], "fragment_size": 30,
                   "number_of_fragments": 2, "fields": {"body": {}, "title": {}}}},
    {"query": {"match": {"title": "stone"}}, "size": 5, "_source": False,
     "highlight": {"fields": {"body": {"highlight_query": {"match": {"body": "quick"}}}}}},
    {"query": {"multi_match": {"query": "jumps", "fields": ["title", "body"]}}, "size": 6,
     "highlight": {"fields": [{"t*": {}}, {"body": {"order": "score"}}]}},
    # named queries
    {"query": {"bool": {"should": [{"match": {"title": {"query": "fox", "_name": "t_fox"}}},
                                   {"term": {"tag": {"value": "t3", "_name": "tag3"}}},
                                   {"range": {"n": {"lt": 20, "_name": "small"}}}]}},
     "size": 25},
    # version / seq_no_primary_term (updated docs included)
    {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 20, "version": True,
     "seq_no_primary_term": True},
    {"query": {"ids": {"values": ["3", "10", "11", "50"]}}, "version": True},
    # explain
    {"query": {"bool": {"must": [{"match": {"title": "quick fox"}}],
                        "filter": [{"range": {"n": {"gte": 10}}}]}}, "size": 6, "explain": True},
    {"query": {"match": {"body": "river stone"}}, "size": 4, "explain": True,
     "post_filter": {"term": {"tag": "t2"}}},
    # track_scores under a field sort
    {"query": TITLE_FOX, "sort": [{"n": "desc"}], "size": 7, "track_scores": True},
    {"query": {"match": {"title": "dog"}}, "sort": [{"tag": "asc"}, {"n": "asc"}], "size": 9,
     "from": 2, "track_scores": True},
    # nested inner_hits
    {"query": {"nested": {"path": "parts", "query": {"match": {"parts.name": "fox"}},
                          "inner_hits": {}}}, "size": 6},
    {"query": {"bool": {"must": [
        {"nested": {"path": "parts", "query": {"range": {"parts.qty": {"gte": 2}}},
                    "inner_hits": {"name": "big", "size": 1, "_source": False}}},
        {"match": {"title": {"query": "lazy", "_name": "lz"}}}]}},
     "size": 5, "version": True, "explain": True,
     "highlight": {"fields": {"title": {}}}},
]


def deep_query(levels):
    q = {"match": {"title": "fox"}}
    for _ in range(levels):
        q = {"bool": {"must": [q]}}
    return q


# a deep explanation (40 nested bools; the response writer nests JSON 128 levels at most)
QUERIES.append({"query": deep_query(40), "size": 3, "explain": True})


def rounded(x):
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def essence(r):
    assert "error" not in r, r
    sh = r["_shards"]
    assert sh["failed"] == 0, sh
    return rounded({"total": r["hits"].get("total"), "max_score": r["hits"].get("max_score"),
                    "hits": r["hits"]["hits"]})


def search(node, q, path="/fx/_search"):
    st, _, r = node.request("POST", path, q)
    assert st == 200, (q, r)
    return r


def set_batched(node, on):
    st, _, r = node.request("PUT", "/_cluster/settings",
                            {"transient": {"search.batched_query_phase": on}})
    assert st == 200, r
    time.sleep(2.5)  # the nodes read the setting at most a second after it changes


@pytest.mark.parametrize("batched", [True, False])
def test_fetch_features_equal_single_node(env, batched):
    nodes, single = env
    set_batched(nodes["n1"], batched)
    for q in QUERIES:
        want = essence(search(single, q))
        assert want["hits"], q  # every query has hits to compare
        for name, s in nodes.items():
            got = essence(search(s, q))
            assert got == want, "%s (batched=%s) query %s" % (name, batched, json.dumps(q))
    set_batched(nodes["n1"], True)


def test_spot_values(env):
    """The features are there for real (not equal because both lack them)."""
    nodes, _ = env
    r = search(nodes["n2"], QUERIES[0])
    assert all("<em>fox</em>" in h["highlight"]["title"][0] for h in r["hits"]["hits"]), r
    r = search(nodes["n3"], QUERIES[4])
    assert any(set(h["matched_queries"]) >= {"t_fox"} for h in r["hits"]["hits"]), r
    r = search(nodes["n1"], QUERIES[6])
    v = {h["_id"]: h["_version"] for h in r["hits"]["hits"]}
    assert v == {"3": 2, "10": 2, "11": 2, "50": 1}, r
    r = search(nodes["n1"], QUERIES[5])
    assert all(h["_seq_no"] >= 0 and h["_primary_term"] >= 1 for h in r["hits"]["hits"]), r
    r = search(nodes["n2"], QUERIES[7])
    for h in r["hits"]["hits"]:
        assert abs(h["_explanation"]["value"] - h["_score"]) < 1e-4, h
    r = search(nodes["n3"], QUERIES[9])
    assert r["hits"]["max_score"] is not None and all(
        h["_score"] is not None for h in r["hits"]["hits"]), r
    r = search(nodes["n1"], QUERIES[11])
    assert all(h["inner_hits"]["parts"]["hits"]["hits"] for h in r["hits"]["hits"]), r


def test_dfs_explain_equals_single_shard(env):
    """dfs_query_then_fetch: the cluster's explanations use the global statistics, so they
    equal a single node's dfs explanations (the same statistics summed over its shards)."""
    nodes, single = env
    q = {"query": {"match": {"body": "lazy river"}}, "size": 5, "explain": True}
    path = "/fx/_search?search_type=dfs_query_then_fetch"
    want = essence(search(single, q, path))
    for s in nodes.values():
        assert essence(search(s, q, path)) == want


def test_through_filtered_alias(env):
    nodes, single = env
    q = {"query": {"match": {"title": "fox"}}, "size": 10, "explain": True,
         "highlight": {"fields": {"title": {}}}, "version": True}
    want = essence(search(single, q, "/fx_t1/_search"))
    for s in nodes.values():
        assert essence(search(s, q, "/fx_t1/_search")) == want


def test_explain_api(env):
    nodes, single = env
    body = {"query": {"match": {"title": "quick fox"}}}
    for i in ("0", "7", "44"):
        st, _, want = single.request("POST", "/fx/_explain/" + i, body)
        for s in nodes.values():
            st2, _, got = s.request("POST", "/fx/_explain/" + i, body)
            assert (st2, rounded(got)) == (st, rounded(want)), (i, got, want)
    st, _, r = nodes["n2"].request("POST", "/fx/_explain/nope", body)
    assert st == 404 and r["matched"] is False, r


def test_explain_reads_the_docs_shard_only(env):
    """_explain goes to the shard of the doc's id (or ?routing) alone, also for ids holding a
    comma or a NUL byte (not a ?routing list)."""
    nodes, single = env
    body = {"query": {"match": {"title": "quick fox"}}}
    for i, path in (("a,b", "a%2Cb"), ("x\x00y", "x%00y"), ("r1", "r1?routing=k7")):
        for s in (nodes["n3"], single):
            sep = "&" if "?" in path else "?"
            st, _, r = s.request("PUT", "/fx/_doc/%s%srefresh=true" % (path, sep),
                                 {"title": "quick fox jumps", "n": 5000})
            assert st in (200, 201) and r["_id"] == i, r
        st, _, want = single.request("POST", "/fx/_explain/" + path, body)
        assert st == 200 and want["matched"] and want["_id"] == i, want
        for s in nodes.values():
            st2, _, got = s.request("POST", "/fx/_explain/" + path, body)
            assert (st2, rounded(got)) == (st, rounded(want)), (i, got, want)
        line = [l for l in nodes["n1"].read_log().splitlines() if "query requests" in l][-1]
        assert "] 1 shards in 1 query requests" in line, line
