"""Scroll, point in time and _terms_enum in a cluster (issue 13): etcd + three `scry serve
--cluster` nodes and, as the reference, a single node with the same 6-shard index (1 replica in
the cluster). A scroll through every node's coordinator returns exactly the single node's
documents (and, sorted, in its order), pages continue through another node, the official Python
client's helpers.scan works, point in time + search_after pages equal the single node's order and
do not see later writes, clearing a scroll frees the contexts on every node (their
`open_contexts` stat), malformed and gone ids are 400 / 404, _terms_enum equals the single
node's. Last, a node holding scroll contexts is SIGKILLed: the next pages report its shards in
`_shards.failures` and keep returning the other shards' documents, while a scroll opened then
opens those shards on their replicas."""
import signal

import pytest

from test_cluster import bulk_lines, bulk_on, create_on, running_cluster, wait_green, wait_until

N_DOCS = 300
MAPPING = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                          "n": {"type": "long"}}}
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]


def doc(i):
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + i % 5)]
    return {"title": " ".join(words), "tag": "t%02d" % (i % 23), "n": i}


@pytest.fixture(scope="module")
def env():
    with running_cluster("scry-cscroll-", "csc", single=True) as run:
        nodes, single = run.nodes, run.single
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 1},
                "mappings": MAPPING}
        create_on((nodes["n1"], single), "docs", body)
        wait_green(nodes.values(), "docs")
        bulk_on((nodes["n2"], single), bulk_lines("docs", N_DOCS, doc))
        yield nodes, single


def ok(node, method, path, body=None):
    st, _, r = node.request(method, path, body)
    assert st == 200, (path, r)
    return r


def scroll_all(first, rest, body, size):
    """Every page of a scroll opened on `first`, continued on the `rest` nodes in turn."""
    r = ok(first, "POST", "/docs/_search?scroll=1m", dict(body, size=size))
    sid, ids, pages = r["_scroll_id"], [], 0
    while r["hits"]["hits"]:
        assert r["_shards"]["failed"] == 0, r["_shards"]
        assert len(r["hits"]["hits"]) <= size
        ids += [h["_id"] for h in r["hits"]["hits"]]
        node = rest[pages % len(rest)]
        pages += 1
        r = ok(node, "POST", "/_search/scroll", {"scroll": "1m", "scroll_id": sid})
        sid = r["_scroll_id"]
    ok(first, "DELETE", "/_search/scroll", {"scroll_id": sid})
    return ids


def open_contexts(node):
    r = ok(node, "GET", "/_nodes/stats")
    return sum(n["indices"]["search"]["open_contexts"] for n in r["nodes"].values())


QUERIES = [
    {"query": {"match_all": {}}},
    {"query": {"match": {"title": "fox river"}}},
    {"query": {"range": {"n": {"gte": 40, "lt": 260}}}, "sort": [{"n": "desc"}]},
    {"query": {"match_all": {}}, "sort": [{"tag": "asc"}, {"n": "asc"}]},
]


@pytest.mark.parametrize("qi", range(len(QUERIES)))
def test_scroll_equals_single_node(env, qi):
    nodes, single = env
    q = QUERIES[qi]
    want = scroll_all(single, [single], q, 1000)
    assert len(want) == len(set(want)) and want
    for name, s in nodes.items():
        got = scroll_all(s, [s], q, 37)
        assert len(got) == len(set(got)), (name, "duplicates")
        if "sort" in q:
            assert got == want, name  # a sorted scroll keeps the single node's order
        else:
            assert sorted(got, key=int) == sorted(want, key=int), name
    # the pages of one scroll through every node in turn (forwarded to its coordinator)
    got = scroll_all(nodes["n1"], [nodes["n2"], nodes["n3"], nodes["n1"]], q, 29)
    assert sorted(got, key=int) == sorted(want, key=int)


def test_scroll_first_page_totals_and_aggs(env):
    nodes, single = env
    body = {"size": 10, "aggs": {"tags": {"terms": {"field": "tag", "size": 5}}}}
    want = ok(single, "POST", "/docs/_search?scroll=1m", body)
    got = ok(nodes["n3"], "POST", "/docs/_search?scroll=1m", body)
    assert got["hits"]["total"] == want["hits"]["total"] == {"value": N_DOCS, "relation": "eq"}
    assert got["aggregations"] == want["aggregations"]
    assert got["_shards"]["total"] == 6 and got["_shards"]["successful"] == 6
    for r, s in ((want, single), (got, nodes["n3"])):
        ok(s, "DELETE", "/_search/scroll", {"scroll_id": [r["_scroll_id"]]})


def test_helpers_scan(env):
    elasticsearch = pytest.importorskip("elasticsearch")
    from elasticsearch import helpers
    nodes, single = env
    es = elasticsearch.Elasticsearch([nodes["n2"].url])
    try:
        ids = [h["_id"] for h in helpers.scan(es, index="docs", size=50,
                                               query={"query": {"match": {"title": "dog"}}})]
    finally:
        es.close()
    want = scroll_all(single, [single], {"query": {"match": {"title": "dog"}}}, 1000)
    assert sorted(ids, key=int) == sorted(want, key=int) and len(ids) == len(set(ids))
    wait_until("contexts freed by scan's clear_scroll",
               lambda: all(open_contexts(s) == 0 for s in nodes.values()))


def pit_pages(node, pid, size, sort):
    ids, after = [], None
    while True:
        body = {"size": size, "sort": sort, "pit": {"id": pid, "keep_alive": "1m"}}
        if after is not None:
            body["search_after"] = after
        r = ok(node, "POST", "/_search", body)
        hits = r["hits"]["hits"]
        if not hits:
            return ids
        assert r["_shards"]["failed"] == 0, r["_shards"]
        ids += [h["_id"] for h in hits]
        after = hits[-1]["sort"]
        pid = r["pit_id"]


def test_pit_search_after_equals_single_node(env):
    nodes, single = env
    sort = [{"tag": "desc"}, {"n": "asc"}]
    spid = ok(single, "POST", "/docs/_pit?keep_alive=1m")["id"]
    want = pit_pages(single, spid, 1000, sort)
    assert len(want) == N_DOCS
    r = ok(nodes["n2"], "POST", "/docs/_pit?keep_alive=1m")
    pid = r["id"]
    assert r["_shards"] == {"total": 6, "successful": 6, "skipped": 0, "failed": 0}, r
    # a write after the point in time is not seen by it
    st, _, w = nodes["n1"].request("PUT", "/docs/_doc/late?refresh=true",
                                   {"title": "late", "tag": "t00", "n": 10000})
    assert st in (200, 201), w
    for s in nodes.values():
        assert pit_pages(s, pid, 41, sort) == want
    assert ok(nodes["n3"], "POST", "/docs/_count")["count"] == N_DOCS + 1
    # aggregations and totals over the point in time
    r = ok(nodes["n3"], "POST", "/_search", {"size": 0, "pit": {"id": pid},
                                            "aggs": {"t": {"terms": {"field": "tag"}}}})
    w = ok(single, "POST", "/_search", {"size": 0, "pit": {"id": spid},
                                        "aggs": {"t": {"terms": {"field": "tag"}}}})
    assert r["hits"]["total"] == w["hits"]["total"] and r["aggregations"] == w["aggregations"]
    before = [open_contexts(s) for s in nodes.values()]
    assert sum(before) >= 3  # the coordinator's and the data nodes' contexts
    st, _, c = nodes["n3"].request("DELETE", "/_pit", {"id": pid})
    assert st == 200 and c["num_freed"] >= 1, c
    ok(single, "DELETE", "/_pit", {"id": spid})
    assert all(open_contexts(s) == 0 for s in nodes.values())
    st, _, e = nodes["n1"].request("POST", "/_search", {"size": 1, "pit": {"id": pid}})
    assert st == 404 and e["error"]["type"] == "search_context_missing_exception", e
    ok(nodes["n1"], "DELETE", "/docs/_doc/late?refresh=true")


def test_clear_scroll_frees_every_node(env):
    nodes, single = env
    assert all(open_contexts(s) == 0 for s in nodes.values())
    sids = [ok(s, "POST", "/docs/_search?scroll=5m", {"size": 3})["_scroll_id"]
            for s in nodes.values()]
    # every scroll: the coordinator's context and one per data node holding its shards
    counts = {name: open_contexts(s) for name, s in nodes.items()}
    assert all(c >= 2 for c in counts.values()), counts
    # cleared through another node than the one that opened it
    st, _, r = nodes["n3"].request("DELETE", "/_search/scroll", {"scroll_id": sids[0]})
    assert st == 200 and r["succeeded"] and r["num_freed"] == 6, r
    st, _, e = nodes["n1"].request("POST", "/_search/scroll", {"scroll_id": sids[0]})
    assert st == 404 and e["error"]["type"] == "search_context_missing_exception", e
    pid = ok(nodes["n2"], "POST", "/docs/_pit?keep_alive=1m")["id"]
    st, _, r = nodes["n1"].request("DELETE", "/_search/scroll/_all")
    assert st == 200 and r["num_freed"] >= 12, r
    # _all frees scrolls, not points in time
    r = ok(nodes["n3"], "POST", "/_search", {"size": 0, "pit": {"id": pid}})
    assert r["hits"]["total"]["value"] == N_DOCS and r["_shards"]["failed"] == 0, r
    ok(nodes["n1"], "DELETE", "/_pit", {"id": pid})
    assert all(open_contexts(s) == 0 for s in nodes.values())
    # the same on a single node
    spid = ok(single, "POST", "/docs/_pit?keep_alive=1m")["id"]
    ok(single, "POST", "/docs/_search?scroll=1m", {"size": 1})
    assert ok(single, "DELETE", "/_search/scroll/_all")["num_freed"] == 1
    ok(single, "POST", "/_search", {"size": 0, "pit": {"id": spid}})
    ok(single, "DELETE", "/_pit", {"id": spid})
    # malformed ids are a 400, ids of no context a 404
    for bad in ("not-a-scroll-id", "AAAA", sids[1] + "x" * 3):
        st, _, e = nodes["n2"].request("POST", "/_search/scroll", {"scroll_id": bad})
        assert st == 400 and e["error"]["type"] == "illegal_argument_exception", (bad, e)
    st, _, e = nodes["n2"].request("POST", "/_search/scroll", {"scroll_id": sids[2]})
    assert st == 404, e


@pytest.mark.parametrize("slices", [2, 3, 6])
def test_sliced_scroll_equals_single_node(env, slices):
    nodes, single = env
    seen = set()
    for i in range(slices):
        q = {"query": {"match_all": {}}, "slice": {"id": i, "max": slices}}
        want = scroll_all(single, [single], q, 1000)
        got = scroll_all(nodes["n%d" % (1 + i % 3)], [nodes["n2"]], q, 23)
        assert sorted(got, key=int) == sorted(want, key=int) and got, (i, slices)
        assert not seen & set(got)
        seen |= set(got)
    assert len(seen) == N_DOCS
    # a slice of a point in time
    pid = ok(nodes["n1"], "POST", "/docs/_pit?keep_alive=1m")["id"]
    spid = ok(single, "POST", "/docs/_pit?keep_alive=1m")["id"]
    body = {"size": 1000, "sort": [{"n": "asc"}], "slice": {"id": 1, "max": slices}}
    got = ok(nodes["n3"], "POST", "/_search", dict(body, pit={"id": pid}))["hits"]["hits"]
    want = ok(single, "POST", "/_search", dict(body, pit={"id": spid}))["hits"]["hits"]
    assert [h["_id"] for h in got] == [h["_id"] for h in want] and got
    ok(nodes["n1"], "DELETE", "/_pit", {"id": pid})
    ok(single, "DELETE", "/_pit", {"id": spid})


def test_slice_refusals(env):
    nodes, single = env
    for s in (nodes["n1"], single):
        st, _, e = s.request("POST", "/docs/_search?scroll=1m",
                             {"slice": {"id": 0, "max": 7}})  # more slices than shards
        assert st == 400 and "larger than the number of shards" in e["error"]["reason"], e
        st, _, e = s.request("POST", "/docs/_search", {"slice": {"id": 0, "max": 2}})
        assert st == 400 and "[scroll]" in e["error"]["reason"], e
        for bad in ({"id": 2, "max": 2}, {"id": 0, "max": 1}, {"id": 0},
                    {"id": 0, "max": 2, "field": "n"}):
            st, _, e = s.request("POST", "/docs/_search?scroll=1m", {"slice": bad})
            assert st == 400, (bad, e)
    assert all(open_contexts(s) == 0 for s in nodes.values())


def test_refused_in_a_cluster(env):
    nodes, _ = env
    st, _, e = nodes["n1"].request("POST", "/docs/_search?scroll=1m", {"size": 5, "from": 5})
    assert st == 400 and "[from]" in e["error"]["reason"], e
    st, _, e = nodes["n1"].request("POST", "/docs/_search?scroll=1m&search_type="
                                   "dfs_query_then_fetch", {"size": 5})
    assert st == 400 and "dfs_query_then_fetch" in e["error"]["reason"], e
    assert all(open_contexts(s) == 0 for s in nodes.values())


def test_scroll_keep_alive_expires_on_every_node(env):
    nodes, _ = env
    r = ok(nodes["n2"], "POST", "/docs/_search?scroll=1s", {"size": 5})
    assert sum(open_contexts(s) for s in nodes.values()) >= 2
    wait_until("contexts expired", lambda: all(open_contexts(s) == 0 for s in nodes.values()))
    st, _, e = nodes["n2"].request("POST", "/_search/scroll", {"scroll_id": r["_scroll_id"]})
    assert st == 404 and e["error"]["type"] == "search_context_missing_exception", e


@pytest.mark.parametrize("body", [{"field": "tag"}, {"field": "tag", "string": "t1", "size": 4},
                                  {"field": "tag", "string": "T0", "case_insensitive": True,
                                   "size": 100},
                                  {"field": "tag", "size": 1000}, {"field": "title"}])
def test_terms_enum_equals_single_node(env, body):
    nodes, single = env
    want = ok(single, "POST", "/docs/_terms_enum", body)
    for s in nodes.values():
        got = ok(s, "POST", "/docs/_terms_enum", body)
        assert got["terms"] == want["terms"] and got["complete"], (body, got)
        assert got["_shards"] == {"total": 6, "successful": 6, "failed": 0}, got


def test_scroll_with_a_killed_node_reports_shard_failures(env):
    nodes, single = env
    st, _, shards = nodes["n1"].request("GET", "/_cat/shards/docs?format=json")
    assert st == 200
    on_n3 = sorted(int(s["shard"]) for s in shards if s["node"] == "n3" and s["prirep"] == "p")
    assert on_n3, shards
    r = ok(nodes["n1"], "POST", "/docs/_search?scroll=1m", {"size": 20})
    sid, seen = r["_scroll_id"], [h["_id"] for h in r["hits"]["hits"]]
    # a scroll that n3 coordinates dies with it
    orphan = ok(nodes["n3"], "POST", "/docs/_search?scroll=1m", {"size": 5})["_scroll_id"]
    victim = nodes.pop("n3")
    victim.stop(sig=signal.SIGKILL)
    st, _, e = nodes["n2"].request("POST", "/_search/scroll", {"scroll_id": orphan})
    assert st == 404 and e["error"]["type"] == "search_context_missing_exception", e
    # clearing it still frees its contexts on the live nodes
    st, _, c = nodes["n2"].request("DELETE", "/_search/scroll", {"scroll_id": orphan})
    assert st == 200 and 0 < c["num_freed"] < 6, c
    # a scroll opened now (n3 still in the routing for its lease) opens n3's shards on their
    # replicas: every document, no failure
    fresh = scroll_all(nodes["n1"], [nodes["n2"]], {"query": {"match_all": {}}}, 100)
    assert sorted(fresh, key=int) == [str(i) for i in range(N_DOCS)]
    while True:
        r = ok(nodes["n1"], "POST", "/_search/scroll", {"scroll": "1m", "scroll_id": sid})
        sh = r["_shards"]
        assert (sh["total"], sh["failed"]) == (6, len(on_n3)), sh
        assert sorted(f["shard"] for f in sh["failures"]) == on_n3, sh
        if not r["hits"]["hits"]:
            break
        seen += [h["_id"] for h in r["hits"]["hits"]]
        sid = r["_scroll_id"]
    assert len(seen) == len(set(seen))
    assert 0 < len(seen) < N_DOCS
    ok(nodes["n1"], "DELETE", "/_search/scroll", {"scroll_id": sid})
