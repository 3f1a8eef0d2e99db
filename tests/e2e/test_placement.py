"""Placement (issue 13, many shards): etcd + three `scry serve --cluster` nodes. A node holds
only the shard copies the routing table allocates to it: with 0 and with 1 replica, each node's
data folder has exactly the shard folders of its copies. `_mget` and `_count` answer the same
through every node. After a node is SIGKILLed the lost replicas are rebuilt on the others and
every search answers completely; when the node returns, its copies that are no longer allocated
are retired (the routing has every copy started elsewhere) and the results stay complete.
`_reindex` and background by-query tasks read and write through the cluster (every shard,
wherever it lives), and `_stats` / `_cat` counts are gathered from every node."""
import json
import os
import shutil
import signal
import tempfile

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, free_port, wait_until

N_DOCS = 120


def data_shards(node, uuid):
    """Shard numbers with a folder under the node's data folder for index `uuid`."""
    d = os.path.join(node.data_dir, "indices", uuid)
    if not os.path.isdir(d):
        return set()
    return {int(x) for x in os.listdir(d) if x.isdigit()}


def allocation(node, index):
    """{node name: set of shard numbers} from the routing table (via _cluster/state)."""
    st, _, state = node.request("GET", "/_cluster/state/nodes,routing_table,metadata/" + index)
    assert st == 200, state
    names = {nid: n["name"] for nid, n in state["nodes"].items()}
    out = {}
    for num, copies in state["routing_table"]["indices"][index]["shards"].items():
        for c in copies:
            if c.get("node"):
                out.setdefault(names.get(c["node"], c["node"]), set()).add(int(num))
    return out, state["metadata"]["indices"][index]["settings"]["index"]["uuid"]


def bulk(index, ids):
    lines = []
    for i in ids:
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps({"n": i, "tag": "t%d" % (i % 3)}))
    return "\n".join(lines) + "\n"


def green(node, index, timeout="60s"):
    st, _, h = node.request(
        "GET", "/_cluster/health/%s?wait_for_status=green&timeout=%s" % (index, timeout))
    return st == 200 and h["status"] == "green"


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-place-")
    etcd = Etcd(tmp).start()
    nodes = {}
    for name in ("n1", "n2", "n3"):
        nodes[name] = Server(os.path.join(tmp, name), [
            "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "place",
            "--transport-port", str(free_port()), "--lease-ttl", TTL])
        nodes[name].start()
    wait_until("3 nodes", lambda: nodes["n1"].request(
        "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
    for index, replicas in (("p0", 0), ("p1", 1)):
        st, _, r = nodes["n1"].request("PUT", "/" + index, {
            "settings": {"number_of_shards": 6, "number_of_replicas": replicas},
            "mappings": {"properties": {"n": {"type": "long"}, "tag": {"type": "keyword"}}}})
        assert st == 200, r
        for s in nodes.values():
            wait_until("%s green on %s" % (index, s.url), lambda s=s: green(s, index, "1s"),
                       timeout=60)
        st, _, r = nodes["n2"].request("POST", "/_bulk?refresh=true", bulk(index, range(N_DOCS)),
                                       headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r
    yield nodes
    for s in nodes.values():
        if s.alive():
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


def check_folders(nodes, index):
    """Every live node's shard folders of `index` are exactly its copies in the routing (the
    placement follows the routing a moment after _cluster/state shows it)."""
    last = []

    def same():
        alloc, uuid = allocation(nodes["n1"], index)
        last[:] = [alloc, {n: data_shards(s, uuid) for n, s in nodes.items() if s.alive()}]
        return all(last[1][n] == alloc.get(n, set()) for n in last[1])
    wait_until("%s: folders = routing (%r)" % (index, last), same, timeout=20)
    return last[0]


def settled(nodes, index, n):
    """Waits until every live node counts n documents: health follows the membership view,
    a node's searches its routing snapshot, published a moment later."""
    for s in nodes.values():
        if s.alive():
            wait_until("%s counts %d on %s" % (index, n, s.url), lambda s=s: s.request(
                "GET", "/%s/_count" % index)[2].get("count") == n, timeout=30)


def check_answers(nodes, index, want_ids):
    ids = sorted(want_ids)[:25] + ["absent-1"]
    for s in nodes.values():
        if not s.alive():
            continue
        st, _, r = s.request("GET", "/%s/_count" % index)
        assert st == 200 and r["count"] == len(want_ids), (s.url, r)
        st, _, r = s.request("POST", "/%s/_search" % index,
                             {"size": 0, "track_total_hits": True,
                              "aggs": {"t": {"terms": {"field": "tag"}}}})
        assert st == 200 and r["hits"]["total"]["value"] == len(want_ids), (s.url, r)
        assert r["_shards"]["failed"] == 0, r["_shards"]
        st, _, r = s.request("POST", "/_mget", {"docs": [{"_index": index, "_id": str(i)}
                                                         for i in ids]})
        assert st == 200, r
        got = [(d["_id"], d["found"], d.get("_source", {}).get("n")) for d in r["docs"]]
        assert got == [(str(i), i != "absent-1", i if i != "absent-1" else None)
                       for i in ids], (s.url, got)
        st, _, r = s.request("POST", "/%s/_mget" % index, {"ids": [str(ids[0]), str(ids[1])]})
        assert st == 200 and [d["found"] for d in r["docs"]] == [True, True], (s.url, r)


def test_each_node_holds_only_its_copies(env):
    nodes = env
    alloc0 = check_folders(nodes, "p0")
    assert sum(len(v) for v in alloc0.values()) == 6 and len(alloc0) == 3, alloc0
    alloc1 = check_folders(nodes, "p1")
    assert sum(len(v) for v in alloc1.values()) == 12 and len(alloc1) == 3, alloc1
    for index in ("p0", "p1"):
        check_answers(nodes, index, range(N_DOCS))


def test_node_loss_rebuilds_replicas_and_answers_stay_complete(env):
    nodes = env
    n3 = nodes["n3"]
    n3.stop(sig=signal.SIGKILL)
    live = {k: v for k, v in nodes.items() if k != "n3"}
    wait_until("n3's lease expired", lambda: nodes["n1"].request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200, timeout=30)
    wait_until("p1 green on n1 and n2 only", lambda: green(nodes["n1"], "p1", "1s") and set(
        allocation(nodes["n1"], "p1")[0]) == {"n1", "n2"}, timeout=60)
    alloc = check_folders(live, "p1")
    assert set(alloc) == {"n1", "n2"} and all(len(v) == 6 for v in alloc.values()), alloc
    check_answers(live, "p1", range(N_DOCS))
    # more writes while n3 is away: its old copies of p1 miss them
    st, _, r = nodes["n1"].request("POST", "/_bulk?refresh=true",
                                   bulk("p1", range(N_DOCS, N_DOCS + 30)),
                                   headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    # no rebalancing from here on (test_cluster_rebalance.py covers it): the rebuilt copies of
    # p1 stay on n1 and n2 and n3 retires its old ones; the next tests need no moves either
    st, _, r = nodes["n1"].request("PUT", "/_cluster/settings", {
        "persistent": {"cluster.routing.rebalance.enable": "none"}})
    assert st == 200, r
    n3.start()
    for index in ("p0", "p1"):
        wait_until(index + " green with n3", lambda: green(nodes["n1"], index, "1s"), timeout=60)
    settled(nodes, "p0", N_DOCS)
    check_answers(nodes, "p0", range(N_DOCS))  # n3's p0 primaries came back with it
    check_answers(nodes, "p1", range(N_DOCS + 30))
    # every copy of p1 is started on n1 and n2: n3's old copies are retired, never searched
    alloc, _ = allocation(nodes["n1"], "p1")
    assert "n3" not in alloc, alloc  # rebalancing off: the rebuilt copies stay where they are

    def retired():
        with open(n3.log_path, "rb") as f:
            return f.read().count(b"is no longer allocated to this node") >= 1
    wait_until("n3 retires its p1 copies", retired, timeout=20)


def test_by_query_through_every_node(env):
    """A by-query request runs on every node's primaries (each node holds only its copies), so
    its counts and effect are the same whichever node receives it."""
    nodes = env
    n_all = N_DOCS + 30
    t1 = [i for i in range(n_all) if i % 3 == 1]
    t0 = [i for i in range(n_all) if i % 3 == 0]
    for s in nodes.values():
        st, _, r = s.request("POST", "/p1/_update_by_query?refresh=true",
                             {"query": {"term": {"tag": "t1"}}})
        assert st == 200 and r["updated"] == len(t1) and r["total"] == len(t1), (s.url, r)
        assert r["failures"] == [], r
    st, _, r = nodes["n3"].request("POST", "/p1/_delete_by_query?refresh=true",
                                   {"query": {"term": {"tag": "t0"}}})
    assert st == 200 and r["deleted"] == len(t0), r
    left = [i for i in range(n_all) if i % 3 != 0]
    settled(nodes, "p1", len(left))
    check_answers(nodes, "p1", left)
    for s in nodes.values():
        st, _, r = s.request("POST", "/p1/_delete_by_query", {"query": {"term": {"tag": "t0"}}})
        assert st == 200 and r["deleted"] == 0 and r["total"] == 0, (s.url, r)


def task_done(node, task, timeout=60):
    """The finished background task (GET /_tasks/{id} on the node that runs it)."""
    last = {}

    def done():
        st, _, b = node.request("GET", "/_tasks/" + task)
        assert st == 200, b
        last.update(b)
        return b["completed"]
    wait_until("task %s completes (%r)" % (task, last), done, timeout=timeout)
    return last


# After test_by_query_through_every_node p1 holds these documents (i % 3 != 0 of 150).
P1_LEFT = [i for i in range(N_DOCS + 30) if i % 3 != 0]


def test_reindex_reads_and_writes_every_node(env):
    """A reindex reads every shard of the source wherever it lives and writes the destination's
    primaries on every node: exact counts through every node, the same options as on one node."""
    nodes = env
    st, _, r = nodes["n3"].request("POST", "/_reindex?refresh=true", {
        "source": {"index": "p1", "_source": ["n"]}, "dest": {"index": "r1"}})
    assert st == 200 and r["created"] == len(P1_LEFT) and r["total"] == len(P1_LEFT), r
    assert r["failures"] == [] and r["batches"] == 1, r
    settled(nodes, "r1", len(P1_LEFT))
    st, _, m = nodes["n1"].request("POST", "/r1/_mget", {"ids": ["1", "2", "3", "149"]})
    assert [(d["_id"], d["found"], d.get("_source")) for d in m["docs"]] == [
        ("1", True, {"n": 1}), ("2", True, {"n": 2}), ("3", False, None),
        ("149", True, {"n": 149})], m
    # op_type create into the same index: every document conflicts
    st, _, r = nodes["n1"].request("POST", "/_reindex", {
        "source": {"index": "p1"}, "dest": {"index": "r1", "op_type": "create"},
        "conflicts": "proceed"})
    assert st == 200 and r["created"] == 0 and r["version_conflicts"] == len(P1_LEFT), r
    st, _, r = nodes["n2"].request("POST", "/_reindex", {
        "source": {"index": "p1"}, "dest": {"index": "r1", "op_type": "create"}})
    assert st == 409 and r["version_conflicts"] >= 1 and r["failures"], r
    # a query, max_docs and small batches; slices split the source by shard
    st, _, r = nodes["n2"].request("POST", "/_reindex?refresh=true&scroll_size=7", {
        "source": {"index": "p1", "query": {"term": {"tag": "t1"}}}, "max_docs": 30,
        "dest": {"index": "r2"}})
    assert st == 200 and r["created"] == 30 and r["total"] == 30 and r["batches"] == 5, r
    settled(nodes, "r2", 30)
    st, _, r = nodes["n1"].request("POST", "/_reindex?refresh=true&slices=3", {
        "source": {"index": "p0"}, "dest": {"index": "r3"}})
    assert st == 200 and r["created"] == N_DOCS and len(r["slices"]) == 3, r
    assert sorted(s["slice_id"] for s in r["slices"]) == [0, 1, 2], r
    assert sum(s["created"] for s in r["slices"]) == N_DOCS, r
    settled(nodes, "r3", N_DOCS)
    # the sources are copied as the search gives them, not re-serialized: a pretty-printed one,
    # 0.1 and 1e-7 (jansson would write 0.10000000000000001 and 9.9999999999999995e-08)
    st, _, r = nodes["n1"].request("PUT", "/raw1", {
        "settings": {"number_of_shards": 3, "number_of_replicas": 0},
        "mappings": {"properties": {"raw": {"type": "object", "enabled": False}}}})
    assert st == 200, r
    src = b'{\n  "raw": {"big": 9223372036854775807, "f": 0.1, "g": 1e-7, "s": "a\\nb"},\n  "n": 1\n}'
    for i in range(4):
        st, _, r = nodes["n2"].request("PUT", "/raw1/_doc/d%d?refresh=true" % i, src)
        assert st in (200, 201), r
    st, _, r = nodes["n3"].request("POST", "/_reindex?refresh=true", {
        "source": {"index": "raw1"}, "dest": {"index": "raw2"}})
    assert st == 200 and r["created"] == 4 and r["failures"] == [], r
    for i in range(4):
        st, _, want = nodes["n1"].request("GET", "/raw1/_source/d%d" % i, raw=True)
        assert st == 200 and b'"f":0.1,' in want.replace(b" ", b""), want
        st, _, got = nodes["n1"].request("GET", "/raw2/_source/d%d" % i, raw=True)
        # the clustered search hands the source over compacted; the reindex copies its bytes
        assert st == 200 and json.loads(got) == json.loads(want), (got, want)
        assert b'"f":0.1,' in got and b'"g":1e-07' in got, got
    st, _, r = nodes["n1"].request("POST", "/_reindex", {"source": {"index": "absent"},
                                                         "dest": {"index": "r4"}})
    assert st == 404 and r["error"]["type"] == "index_not_found_exception", r
    st, _, r = nodes["n1"].request("POST", "/_reindex", {
        "source": {"index": "p1", "query": {"nope": {}}}, "dest": {"index": "r4"}})
    assert st == 400, r
    st, _, r = nodes["n1"].request("GET", "/r4/_count")
    assert st == 404, r


def test_background_jobs_cover_every_shard(env):
    """wait_for_completion=false: a task of the receiving node, reading and writing through the
    cluster; GET /_tasks/{id} there has its status and response; it can be cancelled."""
    nodes = env
    st, _, r = nodes["n1"].request("PUT", "/r5", {
        "settings": {"number_of_shards": 6, "number_of_replicas": 1},
        "mappings": {"properties": {"n": {"type": "long"}, "tag": {"type": "keyword"}}}})
    assert st == 200, r
    wait_until("r5 green", lambda: green(nodes["n2"], "r5", "1s"), timeout=60)
    st, _, r = nodes["n2"].request("POST", "/_reindex?wait_for_completion=false", {
        "source": {"index": "p1"}, "dest": {"index": "r5"}})
    assert st == 200 and ":" in r["task"], r
    b = task_done(nodes["n2"], r["task"])
    assert "error" not in b and b["response"]["created"] == len(P1_LEFT), b
    assert b["task"]["status"]["total"] == len(P1_LEFT), b
    assert b["task"]["status"]["created"] == len(P1_LEFT), b
    st, _, r = nodes["n1"].request("POST", "/r5/_refresh")
    settled(nodes, "r5", len(P1_LEFT))
    t2 = [i for i in P1_LEFT if i % 3 == 2]
    st, _, r = nodes["n3"].request(
        "POST", "/r5/_update_by_query?wait_for_completion=false&refresh=true&scroll_size=20",
        {"query": {"term": {"tag": "t2"}}})
    assert st == 200 and "task" in r, r
    b = task_done(nodes["n3"], r["task"])
    assert b["response"]["updated"] == len(t2) and b["response"]["total"] == len(t2), b
    assert b["response"]["batches"] == (len(t2) + 19) // 20 and b["response"]["failures"] == []
    st, _, r = nodes["n1"].request(
        "POST", "/r5/_delete_by_query?wait_for_completion=false&refresh=true&slices=auto",
        {"query": {"term": {"tag": "t2"}}})
    b = task_done(nodes["n1"], r["task"])
    assert b["response"]["deleted"] == len(t2), b
    assert len(b["response"]["slices"]) == 6, b  # auto: one per source shard
    settled(nodes, "r5", len(P1_LEFT) - len(t2))
    # cancelled between pages: 5 documents, then a throttle wait of 5 s that the cancel ends
    st, _, r = nodes["n1"].request(
        "POST", "/_reindex?wait_for_completion=false&requests_per_second=1&scroll_size=5",
        {"source": {"index": "p1"}, "dest": {"index": "r6"}})
    task = r["task"]
    wait_until("a first page", lambda: nodes["n1"].request(
        "GET", "/_tasks/" + task)[2]["task"]["status"]["batches"] >= 1, timeout=30)
    st, _, r = nodes["n1"].request("POST", "/_tasks/%s/_cancel" % task)
    assert st == 200, r
    b = task_done(nodes["n1"], task)
    assert b["response"]["canceled"] == "by user request", b
    assert b["response"]["created"] == 5 and b["response"]["total"] == len(P1_LEFT), b
    # the scroll contexts of every job are freed on every node
    for s in nodes.values():
        st, _, ns = s.request("GET", "/_nodes/stats")
        assert sum(n["indices"]["search"]["open_contexts"] for n in ns["nodes"].values()) == 0, s


def test_stats_are_cluster_wide(env):
    """_stats, _cat/indices, _cat/count and _count count every copy wherever it lives: the same
    numbers through every node."""
    nodes = env
    # a replica shows the earlier tests' deletes after its own periodic refresh
    for s in nodes.values():
        wait_until("p1's replicas refreshed on %s" % s.url, lambda s=s: s.request(
            "GET", "/p1/_stats")[2]["indices"]["p1"]["total"]["docs"]["count"] ==
            2 * len(P1_LEFT), timeout=30)
    for s in nodes.values():
        for index, n, replicas in (("p0", N_DOCS, 0), ("p1", len(P1_LEFT), 1)):
            st, _, r = s.request("GET", "/%s/_stats" % index)
            assert st == 200, r
            assert r["_shards"] == {"total": 6 * (1 + replicas), "successful": 6 * (1 + replicas),
                                    "failed": 0}, (s.url, r["_shards"])
            pri = r["indices"][index]["primaries"]
            tot = r["indices"][index]["total"]
            assert pri["docs"]["count"] == n, (s.url, index, pri)
            assert tot["docs"]["count"] == n * (1 + replicas), (s.url, index, tot)
            assert r["_all"]["primaries"]["docs"]["count"] == n, r["_all"]
            assert pri["store"]["size_in_bytes"] > 0
            if replicas:
                assert tot["store"]["size_in_bytes"] > pri["store"]["size_in_bytes"], (pri, tot)
            else:
                assert tot["store"]["size_in_bytes"] == pri["store"]["size_in_bytes"]
            st, _, c = s.request("GET", "/_cat/indices/%s?format=json" % index)
            assert st == 200 and c[0]["docs.count"] == str(n), (s.url, c)
            st, _, c = s.request("GET", "/_cat/count/%s?format=json" % index)
            assert st == 200 and c[0]["count"] == str(n), (s.url, c)
            st, _, c = s.request("GET", "/%s/_count" % index)
            assert st == 200 and c["count"] == n, (s.url, c)
        st, _, r = s.request("GET", "/p0,r3/_stats")
        assert r["_all"]["primaries"]["docs"]["count"] == 2 * N_DOCS, r["_all"]


def work_counters(node, index):
    st, _, r = node.request("GET", "/%s/_stats" % index)
    assert st == 200, r
    out = {}
    for part in ("primaries", "total"):
        b = r["indices"][index][part]
        out[part] = (b["indexing"]["index_total"], b["indexing"]["delete_total"],
                     b["search"]["query_total"])
        out[part + ".refresh"] = b["refresh"]["total"]  # periodic refreshes may add to it
    return out


def test_work_counters_are_cluster_wide(env):
    """The indexing, search, refresh and flush counters of _stats are the copies' own, summed
    over every node (they were the answering node's): the same through every node, and a
    search of a 6-shard index counts 6 query phases wherever they ran."""
    nodes = env
    seen = [work_counters(s, "p1") for s in nodes.values()]
    assert all(c["primaries"] == seen[0]["primaries"] and c["total"] == seen[0]["total"]
               for c in seen), seen
    pri, tot = seen[0]["primaries"], seen[0]["total"]
    assert pri[0] > 0 and pri[1] > 0, pri  # p1 took writes and deletes
    assert tot[0] >= pri[0] and tot[1] > pri[1], (pri, tot)  # replicas count their own
    assert seen[0]["total.refresh"] >= seen[0]["primaries.refresh"] > 0, seen[0]
    for i, s in enumerate(nodes.values()):
        before = work_counters(s, "p0")["total"][2]
        st, _, r = s.request("POST", "/p0/_search", {"query": {"match_all": {}}, "size": 1})
        assert st == 200 and r["_shards"]["successful"] == 6, r
        for other in nodes.values():
            assert work_counters(other, "p0")["total"][2] == before + 6, (i, other.url)
