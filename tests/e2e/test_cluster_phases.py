"""Search across nodes, the shard phases (issue 13): etcd + three `scry serve --cluster` nodes
and, as the reference, a single node with the same documents.

can_match: three time-based indices logs-1..3 (2 shards each, values 100-139, 200-239,
300-339): a range that only the last can match skips the other shards (counted in
`_shards.skipped`) under Elasticsearch's default pre-filter rule (a primary field sort) or
`pre_filter_shard_size`; a sort that a node's other shards cannot beat skips them too.

dfs_query_then_fetch: an index of 6 shards in the cluster scores exactly as a 1-shard index of
the same documents on the single node.

Request breaker: a fourth node with a small `--memory` joins as a coordinator that holds no copy
of an index of many distinct keywords; a `terms` aggregation whose node partials it cannot hold
answers 429 circuit_breaking_exception, and the node keeps serving (its breaker back at 0).

Retries on other copies: the index `docs` has 6 shards and 1 replica, loaded through n1 (the
primaries replicate every write); the test waits until every copy holds every document (the
replicas refresh on their interval), so any copy may answer.

* n3 runs with a small memory budget: a sort over 10,000 hits trips its per-shard request
  breaker, so every shard it serves fails inside its batch and is retried on another copy; the
  answer equals the single node's, batched and unbatched.
* n3 is SIGKILLed: its shards are retried on the other copies at once (the lease is long, so
  the routing still names n3), full results.
* n2 is frozen (SIGSTOP): the coordinator's request times out (the search `timeout` + 1 s) and
  its shards are retried; shards whose every copy is gone are in `_shards.failures` with
  partial results, or 503 with allow_partial_search_results=false."""
import json
import os
import re
import shutil
import signal
import tempfile

import pytest

from conftest import Server
from test_cluster import ETCD, Etcd, free_port, wait_until

N_DOCS = 240
MAPPING = {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                          "n": {"type": "long"}, "price": {"type": "double"}}}
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river"]
# Long enough to outlast the module under load: the last test needs the killed n3 and the
# frozen n2 to stay in the routing while it runs (once a lease expires the master drops the
# node, its shards get copies elsewhere or none: other answers than the test asserts)
LEASE = "60s"
WIDE_DOCS = 4000  # longer than any step below: the routing keeps a killed node's copies meanwhile


def doc(i):
    return {"title": " ".join(WORDS[(i * 5 + k) % len(WORDS)] for k in range(1 + i % 4)),
            "tag": "t%d" % (i % 5), "n": i, "price": round((i % 11) * 1.5, 2)}


def bulk_body():
    lines = []
    for i in range(N_DOCS):
        lines.append(json.dumps({"index": {"_index": "docs", "_id": str(i)}}))
        lines.append(json.dumps(doc(i)))
    return "\n".join(lines) + "\n"


def logs_body():
    lines = []
    for m in (1, 2, 3):
        for i in range(40):
            lines.append(json.dumps({"index": {"_index": "logs-%d" % m, "_id": "%d-%d" % (m, i)}}))
            lines.append(json.dumps({"n": m * 100 + i, "title": WORDS[i % len(WORDS)],
                                     "tag": "t%d" % (i % 3)}))
    return "\n".join(lines) + "\n"


def copies_hold_all(nodes):
    """True when every copy of every `docs` shard (primaries and replicas) is started and holds
    its primary's document count, summing to N_DOCS: the replicas got every write and
    refreshed, so any copy may answer. A node's `_cat/shards` gives the counts of its own
    copies only, so each node is asked for its own rows."""
    per = {}
    for name, node in nodes.items():
        st, _, rows = node.request("GET", "/_cat/shards/docs?format=json")
        if st != 200:
            return False
        for r in rows:
            if r["state"] != "STARTED":
                return False
            if r["node"] == name:
                if r["docs"] in (None, ""):
                    return False
                per.setdefault(r["shard"], []).append(int(r["docs"]))
    return (len(per) == 6 and all(len(v) == 2 and v[0] == v[1] for v in per.values()) and
            sum(v[0] for v in per.values()) == N_DOCS)


def load(nodes, single, tports):
    """Indices and documents of every test (the fixture's setup)."""
    n1 = nodes["n1"]
    wait_until("3 nodes", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
    # the failure tests count the shards each node holds, and a node joins later: no
    # rebalancing moves (test_cluster_rebalance.py covers them)
    st, _, r = n1.request("PUT", "/_cluster/settings", {
        "persistent": {"cluster.routing.rebalance.enable": "none"}})
    assert st == 200, r
    st, _, r = n1.request("PUT", "/docs", {
        "settings": {"number_of_shards": 6, "number_of_replicas": 1}, "mappings": MAPPING})
    assert st == 200, r
    st, _, r = single.request("PUT", "/docs", {
        "settings": {"number_of_shards": 6, "number_of_replicas": 0}, "mappings": MAPPING})
    assert st == 200, r
    for s in nodes.values():
        wait_until("routing on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health/docs?wait_for_status=green&timeout=1s")[0] == 200)
    st, _, r = n1.request("POST", "/_bulk?refresh=true", bulk_body(),
                          headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    wait_until("every copy of docs holds its documents", lambda: copies_hold_all(nodes))
    st, _, r = single.request("POST", "/_bulk?refresh=true", bulk_body(),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    for m in (1, 2, 3):
        for s in (n1, single):
            st, _, r = s.request("PUT", "/logs-%d" % m, {
                "settings": {"number_of_shards": 2, "number_of_replicas": 0},
                "mappings": MAPPING})
            assert st == 200, r
    for s in nodes.values():
        for m in (1, 2, 3):
            wait_until("logs routing on " + s.url, lambda s=s, m=m: s.request(
                "GET", "/_cluster/health/logs-%d?wait_for_status=green&timeout=1s" % m)[0] == 200)
            # the mapping reaches each node's copy a moment after the index (placement)
            wait_until("logs mapping on " + s.url, lambda s=s, m=m: "tag" in s.request(
                "GET", "/logs-%d/_mapping" % m)[2]["logs-%d" % m]["mappings"]["properties"])
    for s in (nodes["n2"], single):
        st, _, r = s.request("POST", "/_bulk?refresh=true", logs_body(),
                             headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], [i for i in r["items"] if "error" in i["index"]][:3]
    st, _, r = n1.request("PUT", "/dfs", {
        "settings": {"number_of_shards": 6, "number_of_replicas": 0}, "mappings": MAPPING})
    assert st == 200, r
    st, _, r = single.request("PUT", "/dfs", {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0}, "mappings": MAPPING})
    assert st == 200, r
    for s in nodes.values():
        wait_until("dfs routing on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health/dfs?wait_for_status=green&timeout=1s")[0] == 200)
        wait_until("dfs mapping on " + s.url, lambda s=s: "tag" in s.request(
            "GET", "/dfs/_mapping")[2]["dfs"]["mappings"]["properties"])
    dfs_docs = "".join(json.dumps({"index": {"_index": "dfs", "_id": str(i)}}) + "\n" +
                       json.dumps(doc(i)) + "\n" for i in range(N_DOCS))
    for s in (nodes["n1"], single):
        st, _, r = s.request("POST", "/_bulk?refresh=true", dfs_docs,
                             headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-cphases-")
    etcd = Etcd(tmp).start()
    nodes, tports = {}, {}
    for name in ("n1", "n2", "n3"):
        tports[name] = free_port()
        extra = {"n1": ["--log-level", "debug"], "n3": ["--memory", "7mb"]}.get(name, [])
        nodes[name] = Server(os.path.join(tmp, name), [
            "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "cr",
            "--transport-port", str(tports[name]), "--lease-ttl", LEASE] + extra).start()
    single = Server(os.path.join(tmp, "single")).start()
    try:
        load(nodes, single, tports)
    except BaseException:  # no teardown runs for a fixture that failed: stop what started
        for s in list(nodes.values()) + [single]:
            s.stop(sig=signal.SIGKILL)
        etcd.kill()
        raise
    yield nodes, single, (tmp, etcd)
    for s in list(nodes.values()) + [single]:
        if s.alive():
            s.proc.send_signal(signal.SIGCONT)
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


def essence(r):
    assert "error" not in r, r
    sh = r["_shards"]
    return {"total": r["hits"]["total"], "max_score": r["hits"].get("max_score"),
            "hits": [(h["_id"], None if h.get("_score") is None else round(h["_score"], 5),
                      h.get("sort")) for h in r["hits"]["hits"]],
            "aggs": r.get("aggregations"), "shards": (sh["total"], sh["successful"], sh["failed"])}


def search(node, q, params="", index="docs"):
    st, _, r = node.request("POST", "/%s/_search%s" % (index, params), q)
    assert st == 200, r
    return r


def retried_counts(node):
    """The 'retried on another copy' numbers of the coordinator's debug lines so far."""
    with open(node.log_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return [int(m) for m in re.findall(r"(\d+) retried on another copy", text)]


def all_threads_stopped(pid):
    """True once every thread of the process is in the stopped state (SIGSTOP acts on each
    thread as it next runs; a loaded machine may take a moment)."""
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            if f.read().rsplit(")", 1)[1].split()[0] != "T":
                return False
    return True


def search_log_lines(node, n=40):
    """The coordinator's last [search] log lines (debug level on n1): which units ran, were
    retried, or lost their fetch; printed when an assertion on a partial result fails."""
    with open(node.log_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return [l for l in text.splitlines() if "[search]" in l or "slowlog" in l][-n:]


def set_batched(node, on):
    st, _, r = node.request("PUT", "/_cluster/settings",
                            {"transient": {"search.batched_query_phase": on}})
    assert st == 200, r
    import time
    time.sleep(2.5)  # the nodes read the setting at most a second after it changes


BIG_SORT = {"query": {"match_all": {}}, "size": 10000, "sort": [{"n": "asc"}, {"price": "desc"}]}
QUERIES = [
    {"query": {"match": {"title": "fox river"}}, "size": 10},
    {"query": {"match_all": {}}, "sort": [{"n": "desc"}], "size": 7, "from": 5},
    {"size": 0, "aggs": {"tags": {"terms": {"field": "tag"},
                                  "aggs": {"s": {"sum": {"field": "price"}}}}}},
]


def shards(r):
    sh = r["_shards"]
    return (sh["total"], sh["successful"], sh["skipped"], sh["failed"])


def test_can_match_skips_shards_that_cannot_match(env):
    nodes, single, _ = env
    late = {"range": {"n": {"gte": 320}}}
    cases = [  # (body, params, skipped)
        ({"query": late, "size": 5, "sort": [{"n": "asc"}]}, "", 4),  # default: field sort
        ({"query": late, "size": 5}, "", 0),  # 6 shards, no field sort: no pre-filter
        ({"query": late, "size": 5}, "?pre_filter_shard_size=1", 4),
        ({"query": late, "size": 5}, "?pre_filter_shard_size=6", 0),
        ({"query": {"bool": {"must": [{"match": {"title": "fox"}}], "filter": [
            {"range": {"n": {"gte": 120, "lt": 210}}}]}}, "size": 5}, "?pre_filter_shard_size=1", 2),
        ({"query": {"bool": {"should": [{"range": {"n": {"lte": 105}}}, late]}}, "size": 50,
          "sort": [{"n": "desc"}]}, "", 2),
        ({"query": {"term": {"n": 5000}}, "size": 5}, "?pre_filter_shard_size=1", 5),  # one runs
        ({"query": late, "size": 5, "aggs": {"t": {"terms": {"field": "tag"}}}},
         "?pre_filter_shard_size=1", 0),  # aggregations are never pre-filtered
    ]
    for body, params, skipped in cases:
        want = search(single, body, params, "logs-*")
        assert shards(want) == (6, 6, skipped, 0), (body, params, want["_shards"])
        for s in nodes.values():
            got = search(s, body, params, "logs-*")
            assert shards(got) == shards(want), (body, params, got["_shards"])
            assert essence(got) == essence(want), (body, params)
    for params in ("?pre_filter_shard_size=0", "?pre_filter_shard_size=x",
                   "?max_concurrent_shard_requests=0", "?batched_reduce_size=1"):
        st, _, e = nodes["n1"].request("POST", "/logs-*/_search" + params, {"size": 0})
        assert st == 400 and e["error"]["type"] == "illegal_argument_exception", (params, e)


def test_can_match_by_sort_bottom(env):
    """track_total_hits false and a numeric primary sort: shards whose points cannot beat a
    full top k found on the node are skipped; the hits are the same."""
    nodes, single, _ = env
    for order in ("desc", "asc"):
        body = {"size": 3, "sort": [{"n": order}], "track_total_hits": False}
        full = search(single, dict(body, track_total_hits=True), index="logs-*")
        assert shards(full)[2] == 0  # a tracked total needs every shard
        r = search(single, body, index="logs-*")
        # one node runs the best-bounded shards first (2 search threads): the other index's
        # 4 shards cannot beat their top 3 (nor, depending on the split, the second shard)
        assert shards(r)[:2] == (6, 6) and shards(r)[2] >= 4, r["_shards"]
        want = [h["_id"] for h in full["hits"]["hits"]]
        assert [h["_id"] for h in r["hits"]["hits"]] == want
        for s in nodes.values():
            got = search(s, body, index="logs-*")
            assert [h["_id"] for h in got["hits"]["hits"]] == want, order
            assert shards(got)[3] == 0


DFS_QUERIES = [
    {"match": {"title": "fox river"}},
    {"match_phrase": {"title": "lazy dog"}},
    {"bool": {"should": [{"match": {"title": "quick"}}, {"term": {"tag": "t2"}}],
              "filter": [{"range": {"n": {"lt": 200}}}]}},
    {"dis_max": {"queries": [{"match": {"title": "jumps"}}, {"match": {"title": "over"}}],
                 "tie_breaker": 0.3}},
]


def scored(r):
    assert "error" not in r, r
    return sorted(((round(h["_score"], 5), h["_id"]) for h in r["hits"]["hits"]),
                  key=lambda x: (-x[0], x[1]))


@pytest.mark.parametrize("batched", [True, False])
def test_dfs_scores_equal_one_shard(env, batched):
    nodes, single, _ = env
    set_batched(nodes["n1"], batched)
    for q in DFS_QUERIES:
        body = {"query": q, "size": N_DOCS}
        want = scored(search(single, body, index="dfs"))
        assert want, q
        plain = scored(search(nodes["n1"], body, index="dfs"))
        assert plain != want, q  # per-shard statistics differ from one shard's
        for s in nodes.values():
            r = search(s, body, "?search_type=dfs_query_then_fetch", "dfs")
            assert r["_shards"]["successful"] == 6
            assert scored(r) == want, (s.url, q)
    st, _, e = nodes["n2"].request("POST", "/dfs/_search?search_type=scan", {})
    assert st == 400 and "No search type for [scan]" in e["error"]["reason"], e
    set_batched(nodes["n1"], True)


BRS_AGGS = {
    "tags": {"terms": {"field": "tag", "size": 10},
             "aggs": {"avg_price": {"avg": {"field": "price"}},
                      "best": {"top_hits": {"size": 2, "sort": [{"n": "desc"}]}}}},
    "avg_n": {"avg": {"field": "n"}},
    "distinct": {"cardinality": {"field": "n"}},
    "pct": {"percentiles": {"field": "price", "percents": [5, 50, 95]}},
}


@pytest.mark.parametrize("batched", [True, False])
def test_batched_reduce_size_across_nodes(env, batched):
    """batched_reduce_size 2: the coordinator folds the nodes' (or, unbatched, the shards')
    answers two at a time, and a data node with more than 2 target shards (docs,dfs: 4 per
    node) folds its own; results equal the default's, num_reduce_phases counts the folds."""
    from test_batched_reduce import diff
    nodes, _, _ = env
    set_batched(nodes["n1"], batched)
    for body in ({"query": {"match": {"title": "fox river"}}, "size": 10, "aggs": BRS_AGGS},
                 {"size": 15, "sort": [{"n": "desc"}], "aggs": BRS_AGGS}):
        for index in ("docs", "docs,dfs"):
            want = search(nodes["n1"], body, index=index)
            want.pop("took")
            assert "num_reduce_phases" not in want, want
            got = search(nodes["n1"], body, "?batched_reduce_size=2", index)
            got.pop("took")
            phases = got.pop("num_reduce_phases", 1)
            # 3 nodes (6 or 12 shards unbatched): at least one fold, plus the final reduce
            assert phases >= (2 if batched and index == "docs" else 3), (index, phases)
            assert diff(got, want) is None, (index, diff(got, want))
    set_batched(nodes["n1"], True)


def node_breaker(node):
    st, _, r = node.request("GET", "/_nodes/stats/breaker")
    assert st == 200, r
    (stats,) = r["nodes"].values()
    return stats["breakers"]["request"]


def test_coordinator_breaker_refuses_a_large_reduce(env):
    nodes, single, (tmp, etcd) = env
    n1 = nodes["n1"]
    st, _, r = n1.request("PUT", "/wide", {
        "settings": {"number_of_shards": 6, "number_of_replicas": 0},
        "mappings": {"properties": {"u": {"type": "keyword"}}}})
    assert st == 200, r
    wait_until("wide routing", lambda: n1.request(
        "GET", "/_cluster/health/wide?wait_for_status=green&timeout=1s")[0] == 200)
    for s in nodes.values():
        wait_until("wide mapping on " + s.url, lambda s=s: "u" in s.request(
            "GET", "/wide/_mapping")[2]["wide"]["mappings"]["properties"])
    for start in range(0, WIDE_DOCS, 500):  # n3's small budget takes small bulks
        lines = []
        for i in range(start, start + 500):
            lines.append(json.dumps({"index": {"_index": "wide", "_id": str(i)}}))
            lines.append(json.dumps({"u": "%06d-%s" % (i, "x" * 90)}))
        st, _, r = n1.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], str(r)[:300]
    # a coordinator with a small budget that holds no copy of "wide": every partial is remote
    small = Server(os.path.join(tmp, "n4"), [
        "--cluster", "etcd=" + etcd.url, "--node-name", "n4", "--cluster-name", "cr",
        "--transport-port", str(free_port()), "--lease-ttl", LEASE,
        "--memory", "2mb"]).start()
    try:
        wait_until("4 nodes", lambda: small.request(
            "GET", "/_cluster/health?wait_for_nodes=4&timeout=1s")[0] == 200)
        wait_until("wide on n4", lambda: small.request(
            "GET", "/_cluster/health/wide?wait_for_status=green&timeout=1s")[0] == 200)
        body = {"size": 0, "aggs": {"u": {"terms": {"field": "u", "size": WIDE_DOCS}}}}
        want = search(n1, body, index="wide")  # n1 (1gb) reduces it
        assert len(want["aggregations"]["u"]["buckets"]) == WIDE_DOCS
        for batched in (True, False):
            set_batched(n1, batched)
            st, _, e = small.request("POST", "/wide/_search", body)
            assert st == 429, (batched, str(e)[:500])
            err = e["error"]
            assert err["type"] == "circuit_breaking_exception", e
            assert err["root_cause"][0]["type"] == "circuit_breaking_exception", e
            assert "Data too large" in err["reason"] and "<reduce_aggs>" in err["reason"], e
            assert int(err["bytes_wanted"]) > int(err["bytes_limit"]) > 0, e
            assert e["status"] == 429
            # healthy: nothing held, a small search from the same node works
            assert node_breaker(small)["estimated_size_in_bytes"] == 0
            r = search(small, {"size": 3, "query": {"match_all": {}}}, index="wide")
            assert r["hits"]["total"]["value"] == WIDE_DOCS and len(r["hits"]["hits"]) == 3
            r = search(small, {"size": 0, "aggs": {"u": {"terms": {"field": "u", "size": 5}}}},
                       index="wide")
            assert len(r["aggregations"]["u"]["buckets"]) == 5
        assert node_breaker(small)["tripped"] >= 2
        set_batched(n1, True)
    finally:
        rc = small.stop()
        assert rc == 0, small.read_log()


@pytest.mark.parametrize("batched", [True, False])
def test_shard_failure_in_batch_is_retried(env, batched):
    """n3's breaker refuses the big sort on each of its shards: each is retried elsewhere."""
    nodes, single, _ = env
    set_batched(nodes["n1"], batched)
    before = len(retried_counts(nodes["n1"]))
    want = essence(search(single, BIG_SORT))
    assert len(want["hits"]) == N_DOCS
    got = essence(search(nodes["n1"], BIG_SORT))
    assert got == want
    counts = retried_counts(nodes["n1"])[before:]
    assert counts and counts[-1] > 0, counts  # n3 holds primaries: they were retried
    # the same search sent to n3 itself: its local shards fail and run on the other nodes
    assert essence(search(nodes["n3"], BIG_SORT)) == want
    for q in QUERIES:  # small searches need no retry and equal the single node too
        assert essence(search(nodes["n2"], q)) == essence(search(single, q)), q
    set_batched(nodes["n1"], True)


def test_killed_node_is_retried_then_frozen_node_times_out(env):
    nodes, single, _ = env
    victim = nodes.pop("n3")
    victim.stop(sig=signal.SIGKILL)
    # the routing still lists n3 (its lease runs for 60 s): its shards move to other copies
    for q in QUERIES:
        want = essence(search(single, q))
        for s in nodes.values():
            assert essence(search(s, q)) == want, q
    assert retried_counts(nodes["n1"])[-1] > 0
    # n2 frozen: its requests time out, then its shards go to copies on n1; the shards whose
    # copies were on n2 and n3 only cannot be served
    st, _, shards = nodes["n1"].request("GET", "/_cat/shards/docs?format=json")
    assert st == 200
    on = {}
    for row in shards:
        on.setdefault(int(row["shard"]), set()).add(row["node"])
    lost = sorted(s for s, where in on.items() if "n1" not in where)
    assert 0 < len(lost) < 6, on
    st, _, rows = nodes["n1"].request("GET", "/_cat/nodes?format=json&h=name,id")
    assert st == 200, rows
    ids = {row["name"]: row["id"] for row in rows}
    frozen = nodes["n2"]
    frozen.proc.send_signal(signal.SIGSTOP)
    wait_until("n2 stopped", lambda: all_threads_stopped(frozen.proc.pid))
    try:
        r = search(nodes["n1"], {"query": {"match_all": {}}, "size": 300,
                                 "track_total_hits": True}, "?timeout=1s")
        sh = r["_shards"]
        assert (sh["total"], sh["successful"], sh["failed"]) == (6, 6 - len(lost), len(lost)), \
            (json.dumps(sh), r["took"], on, search_log_lines(nodes["n1"]))
        assert sorted(f["shard"] for f in sh["failures"]) == lost, sh
        # each failure names the node that could not serve the shard (n2 or n3)
        assert {f["node"] for f in sh["failures"]} <= {ids["n2"], ids["n3"]}, (sh, ids)
        types = {f["reason"]["type"] for f in sh["failures"]}
        assert types <= {"receive_timeout_transport_exception", "node_not_connected_exception"}, sh
        ids = {h["_id"] for h in r["hits"]["hits"]}
        assert 0 < len(ids) == r["hits"]["total"]["value"] < N_DOCS
        st, _, e = nodes["n1"].request(
            "POST", "/docs/_search?timeout=1s&allow_partial_search_results=false",
            {"query": {"match_all": {}}})
        assert st == 503 and e["error"]["type"] == "search_phase_execution_exception", e
    finally:
        frozen.proc.send_signal(signal.SIGCONT)
