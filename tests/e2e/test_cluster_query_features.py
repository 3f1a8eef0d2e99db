"""Query-phase features of a search across nodes (issues 13/14/16): kNN (kNN-only, several
clauses, and hybrid with a query: the coordinator's global kNN phase over the data nodes),
reciprocal rank fusion (`rank.rrf`, the rrf retriever), rescore, collapse (with inner_hits),
terminate_after (search and _count) and profile, each compared with a single node holding the
same documents in the same 6 shards: ids, scores, totals, collapse groups, and the profile's
shape per shard (its id names the data node that ran the shard). Three `scry serve --cluster`
nodes on a private etcd (one cluster for the module), batched and unbatched query phases."""
import json
import os
import random
import time

import pytest

from test_cluster import bulk_lines, bulk_on, create_on, running_cluster, wait_green

N_DOCS = 240
DIMS = 4
SEED = int(os.environ.get("SCRY_TEST_SEED", "1613"))
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]
MAPPING = {"properties": {
    "title": {"type": "text"}, "tag": {"type": "keyword"}, "n": {"type": "long"},
    "grp": {"type": "integer"},
    # num_candidates below exceed a shard's docs: every shard's kNN answer is exact
    "v": {"type": "dense_vector", "dims": DIMS, "similarity": "l2_norm",
          "index_options": {"type": "hnsw", "m": 16, "ef_construction": 100}},
    # the same vectors quantized: rescore_vector.oversample 10 rescores every doc of a shard
    "v8": {"type": "dense_vector", "dims": DIMS, "similarity": "l2_norm",
           "index_options": {"type": "int8_hnsw"}}}}


def vectors():
    print("vector seed", SEED)
    rnd = random.Random(SEED)
    return [[round(rnd.uniform(-1, 1), 3) for _ in range(DIMS)] for _ in range(N_DOCS)]


def doc(i, vecs):
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + i % 5)]
    return {"title": " ".join(words), "tag": "t%d" % (i % 9), "n": i, "grp": i % 11,
            "v": vecs[i], "v8": vecs[i]}



@pytest.fixture(scope="module")
def env():
    with running_cluster("scry-cqf-", "cqf", single=True) as run:
        nodes, single = run.nodes, run.single
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 0},
                "mappings": MAPPING}
        create_on((nodes["n1"], single), "docs", body)
        wait_green(nodes.values(), "docs")
        vecs = vectors()
        bulk_on((nodes["n2"], single), bulk_lines("docs", N_DOCS, lambda i: doc(i, vecs)))
        yield nodes, single, vecs


def search(node, q):
    st, _, r = node.request("POST", "/docs/_search", q)
    assert st == 200, (q, r)
    return r


def essence(r):
    hits = [(h["_id"], None if h.get("_score") is None else round(h["_score"], 4),
             h.get("fields"), h.get("inner_hits")) for h in r["hits"]["hits"]]
    sh = r["_shards"]
    return {"total": r["hits"].get("total"), "hits": hits, "aggs": r.get("aggregations"),
            "max_score": None if r["hits"].get("max_score") is None
            else round(r["hits"]["max_score"], 4),
            "shards": (sh["total"], sh["successful"], sh["failed"]),
            "terminated_early": r.get("terminated_early")}


def set_batched(node, on):
    st, _, r = node.request("PUT", "/_cluster/settings",
                            {"transient": {"search.batched_query_phase": on}})
    assert st == 200, r
    time.sleep(2.5)  # the nodes read the setting at most a second after it changes


def l2_top(vecs, q, k):
    d = sorted(range(len(vecs)), key=lambda i: (sum((a - b) ** 2 for a, b in zip(vecs[i], q)), i))
    return [str(i) for i in d[:k]]


def queries(vecs):
    q1, q2 = vecs[17], [0.1, -0.2, 0.3, 0.05]
    knn1 = {"field": "v", "query_vector": q1, "k": 7, "num_candidates": 100}
    knn2 = {"field": "v", "query_vector": q2, "k": 5, "num_candidates": 100}
    rescore = {"window_size": 20, "query": {"rescore_query": {"match": {"title": "river"}},
                                            "query_weight": 0.7, "rescore_query_weight": 1.5}}
    return [
        {"knn": knn1, "size": 10},
        {"knn": dict(knn1, filter={"range": {"n": {"gte": 100}}}), "size": 4, "from": 2},
        {"knn": [knn1, knn2], "size": 12},
        {"query": {"match": {"title": "fox"}}, "knn": knn2, "size": 10},
        {"query": {"match": {"title": "quick dog"}}, "knn": [knn1, knn2], "size": 15},
        {"retriever": {"knn": knn2}, "size": 5},
        {"knn": dict(knn1, field="v8", rescore_vector={"oversample": 10}), "size": 10},
        {"query": {"knn": dict(knn2, field="v8", rescore_vector={"oversample": 10})},
         "size": 5},
        {"retriever": {"knn": dict(knn1, field="v8", rescore_vector={"oversample": 10})},
         "size": 7},
        {"query": {"match": {"title": "quick brown"}}, "rescore": rescore, "size": 10},
        {"query": {"match": {"title": "lazy"}}, "size": 8, "from": 2,
         "rescore": [rescore, {"window_size": 5, "query": {
             "rescore_query": {"term": {"tag": "t3"}}, "score_mode": "max"}}]},
        {"query": {"match": {"title": "fox river"}}, "collapse": {"field": "tag"}, "size": 10},
        {"query": {"match_all": {}}, "collapse": {"field": "grp"}, "size": 6, "from": 3},
        {"query": {"match": {"title": "stone"}}, "size": 4,
         "collapse": {"field": "tag", "inner_hits": {"name": "best", "size": 2,
                                                     "sort": [{"n": "asc"}]}}},
        {"query": {"match": {"title": "fox"}}, "knn": knn2, "size": 10,
         "rank": {"rrf": {"rank_window_size": 20, "rank_constant": 10}}},
        {"retriever": {"rrf": {"retrievers": [
            {"standard": {"query": {"match": {"title": "lazy"}}}}, {"knn": knn1},
            {"standard": {"query": {"term": {"tag": "t3"}}}}], "rank_window_size": 30}},
         "size": 8, "from": 2},
        {"retriever": {"rrf": {"retrievers": [{"knn": knn2}, {"knn": knn1}]}}, "size": 6,
         "aggs": {"tags": {"terms": {"field": "tag"}}, "mx": {"max": {"field": "n"}}}},
        # each shard collects its first 3 (4) matches in index order
        {"query": {"match": {"title": "fox"}}, "terminate_after": 3, "size": 30,
         "sort": [{"n": "asc"}]},
        {"query": {"match_all": {}}, "terminate_after": 4, "size": 3,
         "aggs": {"tags": {"terms": {"field": "tag"}}, "mx": {"max": {"field": "n"}}}},
        {"query": {"match": {"title": "lazy"}}, "terminate_after": 1000, "size": 5},
    ]


@pytest.mark.parametrize("batched", [True, False])
def test_query_features_equal_single_node(env, batched):
    nodes, single, vecs = env
    set_batched(nodes["n1"], batched)
    for q in queries(vecs):
        want = essence(search(single, q))
        assert want["hits"], q
        for name, s in nodes.items():
            got = essence(search(s, q))
            assert got == want, "%s (batched=%s) query %s" % (name, batched, json.dumps(q))
        if "terminate_after" in q:
            assert want["terminated_early"] is (q["terminate_after"] < 40), want
    count_q = {"query": {"match": {"title": "fox"}}, "terminate_after": 2}
    st, _, want = single.request("POST", "/docs/_count", count_q)
    assert st == 200 and want["terminated_early"] is True and want["count"] == 12, want
    for name, s in nodes.items():
        st, _, got = s.request("POST", "/docs/_count", count_q)
        assert st == 200 and (got["count"], got["terminated_early"]) == (12, True), (name, got)
    set_batched(nodes["n1"], True)


def test_knn_is_the_exact_answer(env):
    """num_candidates above a shard's docs: the cluster's kNN answer is the exact top k."""
    nodes, _, vecs = env
    q = vecs[42]
    r = search(nodes["n3"], {"knn": {"field": "v", "query_vector": q, "k": 9,
                                     "num_candidates": 100}, "size": 9, "_source": False})
    assert [h["_id"] for h in r["hits"]["hits"]] == l2_top(vecs, q, 9)
    assert r["hits"]["total"] == {"value": 9, "relation": "eq"}


def test_rescore_vector_across_nodes(env):
    """rescore_vector on an int8_hnsw field reaches the data nodes: oversample 10 over k 9
    rescores every doc of a shard, so the answer is the exact top k; a bad one is a 400."""
    nodes, _, vecs = env
    q = vecs[42]
    knn = {"field": "v8", "query_vector": q, "k": 9, "num_candidates": 9,
           "rescore_vector": {"oversample": 10}}
    for name, s in nodes.items():
        r = search(s, {"knn": knn, "size": 9, "_source": False})
        assert [h["_id"] for h in r["hits"]["hits"]] == l2_top(vecs, q, 9), name
        st, _, b = s.request("POST", "/docs/_search",
                             {"knn": dict(knn, rescore_vector={"oversample": 0.5})})
        assert st == 400 and b["error"]["type"] == "illegal_argument_exception", (name, b)


def test_profile_per_shard(env):
    nodes, single, _ = env
    body = {"query": {"bool": {"must": [{"match": {"title": "fox"}}],
                               "filter": [{"range": {"n": {"gte": 10}}}]}},
            "size": 5, "profile": True}
    want = search(single, body)["profile"]["shards"]
    st, _, cat = nodes["n1"].request("GET", "/_cat/shards/docs?format=json")
    assert st == 200
    st, _, ns = nodes["n1"].request("GET", "/_cat/nodes?format=json&h=name,id")
    assert st == 200
    node_of = {s["shard"]: s["node"] for s in cat}
    id_of = {r["name"]: r["id"] for r in ns}

    def shape(q):
        # the plan and its call counts (deterministic on the same docs); times vary
        counts = {k: v for k, v in q["breakdown"].items() if k.endswith("_count")}
        return (q["type"], q["description"], counts,
                [shape(c) for c in q.get("children", [])])

    for name, s in nodes.items():
        got = search(s, body)["profile"]["shards"]
        assert len(got) == len(want) == 6, got
        for g, w in zip(got, want):
            assert (g["index"], g["shard_id"]) == (w["index"], w["shard_id"])
            nid = g["node_id"]  # the data node that ran the shard (cat ids may be short)
            assert nid.startswith(id_of[node_of[str(g["shard_id"])]]), (g, id_of, node_of)
            assert g["id"] == "[%s][docs][%d]" % (nid, g["shard_id"]), g
            gs, ws = g["searches"][0], w["searches"][0]
            assert [shape(x) for x in gs["query"]] == [shape(x) for x in ws["query"]], name
            assert [c["name"] for c in gs["collector"]] == [c["name"] for c in ws["collector"]]
            assert gs["collector"] and gs["query"], g
