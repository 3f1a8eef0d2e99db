"""`nested` documents across nodes: two `scry serve --cluster` processes on a private etcd and a
separate single-node server with the same index (4 shards, nested mapping, random documents;
the seed is printed). The nested query (hits, scores, totals), nested sorting and the nested /
reverse_nested aggregations (their partials encoded between nodes and reduced on the
coordinator) and inner_hits (computed in the data nodes' fetch phase) must equal the single
node's."""
import json
import os
import random
import shutil
import tempfile

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, free_port, wait_until
from test_nested import MAPPING, nested_q, random_docs


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    seed = random.randrange(1 << 30)
    print("seed", seed)
    docs = random_docs(random.Random(seed), 200)
    tmp = tempfile.mkdtemp(prefix="scry-nested-cluster-")
    etcd = Etcd(tmp).start()
    nodes = [Server(os.path.join(tmp, name), [
        "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "nc",
        "--transport-port", str(free_port()), "--lease-ttl", TTL]).start()
        for name in ("n1", "n2")]
    single = Server(os.path.join(tmp, "single")).start()
    wait_until("2 nodes", lambda: nodes[0].request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
    body = {"settings": {"number_of_shards": 4, "number_of_replicas": 0}, "mappings": MAPPING}
    for s in (nodes[0], single):
        st, _, r = s.request("PUT", "/nd", body)
        assert st == 200, r
    for s in nodes:
        wait_until("routing on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health/nd?wait_for_status=green&timeout=1s")[0] == 200)
    lines = []
    for i, d in enumerate(docs):
        lines.append(json.dumps({"index": {"_index": "nd", "_id": str(i)}}))
        lines.append(json.dumps(d))
    for s in (nodes[1], single):
        st, _, r = s.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                             headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r
    yield nodes, single
    for s in nodes + [single]:
        if s.alive():
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    shutil.rmtree(tmp, ignore_errors=True)


QUERIES = [
    {"query": nested_q("comments", {"bool": {"must": [
        {"term": {"comments.author": "alice"}}, {"match": {"comments.text": "good"}}]}}),
     "size": 15},
    {"query": nested_q("comments", {"range": {"comments.stars": {"gte": 4}}},
                       score_mode="sum"), "size": 10, "from": 5},
    {"query": {"match_all": {}}, "size": 12, "sort": [
        {"comments.stars": {"order": "desc", "mode": "max", "nested": {"path": "comments"}}},
        {"n": "asc"}]},
    {"size": 0, "aggs": {"c": {"nested": {"path": "comments"}, "aggs": {
        "a": {"terms": {"field": "comments.author"}, "aggs": {
            "s": {"avg": {"field": "comments.stars"}},
            "r": {"reverse_nested": {}, "aggs": {"t": {"terms": {"field": "title"}}}}}}}}}},
    {"query": {"term": {"title": "t4"}}, "size": 0, "aggs": {
        "t": {"terms": {"field": "title"}, "aggs": {"c": {"nested": {"path": "comments"}}}}}},
    {"query": {"match_all": {}}, "size": 0},
]


def essence(r):
    assert "error" not in r, r
    hits = [(h["_id"], None if h.get("_score") is None else round(h["_score"], 5),
             h.get("sort")) for h in r["hits"]["hits"]]
    return {"total": r["hits"].get("total"), "hits": hits, "aggs": r.get("aggregations")}


def test_cluster_equals_single_node(env):
    nodes, single = env
    for q in QUERIES:
        st, _, want = single.request("POST", "/nd/_search", q)
        assert st == 200, want
        for n in nodes:
            st, _, got = n.request("POST", "/nd/_search", q)
            assert st == 200, got
            assert essence(got) == essence(want), q
    for n in nodes:
        st, _, r = n.request("POST", "/nd/_count")
        assert st == 200 and r["count"] == 200, r


def test_inner_hits_equal_single_node(env):
    """inner_hits are computed by the data node holding each hit (its fetch phase) and equal
    the single node's: children, offsets, scores, _source."""
    nodes, single = env
    for q in ({"query": nested_q("comments", {"match_all": {}}, inner_hits={}), "size": 20},
              {"query": nested_q("comments", {"match": {"comments.text": "good"}},
                                 inner_hits={"name": "g", "size": 2, "from": 1}), "size": 10}):
        st, _, want = single.request("POST", "/nd/_search", q)
        assert st == 200, want
        assert any(h["inner_hits"][k]["hits"]["hits"] for h in want["hits"]["hits"]
                   for k in h["inner_hits"]), want
        for n in nodes:
            st, _, got = n.request("POST", "/nd/_search", q)
            assert st == 200, got
            assert got["hits"] == want["hits"], q


def test_dynamic_field_inside_nested_object(env):
    """A new field under a nested object reaches the cluster's mapping as part of the nested
    field (the mapping update names the type), on every node."""
    nodes, _ = env
    st, _, r = nodes[1].request("PUT", "/nd/_doc/dyn?refresh=true",
                                {"title": "t9", "comments": [{"author": "zed", "mood": "calm"}]})
    assert st in (200, 201), r
    for n in nodes:
        wait_until("mapping on " + n.url, lambda n=n: "mood" in json.dumps(
            n.request("GET", "/nd/_mapping")[2]))
        st, _, m = n.request("GET", "/nd/_mapping")
        assert m["nd"]["mappings"]["properties"]["comments"]["type"] == "nested", m
        st, _, r = n.request("POST", "/nd/_search", {"query": nested_q(
            "comments", {"match": {"comments.mood": "calm"}})})
        assert st == 200 and [h["_id"] for h in r["hits"]["hits"]] == ["dyn"], r
