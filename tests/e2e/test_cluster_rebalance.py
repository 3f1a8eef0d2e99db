"""Rebalancing when nodes join or leave (issue 13): etcd and two `scry serve --cluster` nodes hold
an index of 6 shards x 1 replica while a writer indexes and a reader searches through both;
a third node joins and the master moves copies to it (relocation: the target recovers from the
primary, then replaces its source). Checks that the copies spread 4/4/4, that _cat/shards and
_cluster/health show the moves while they run, that every acknowledged document is there exactly
once and every copy of a shard holds the same documents, and that no search failed during the
moves. The writer sends each bulk once and no item may fail: writes that arrive during a
primary hand-over wait for the new primary. Then, with cluster.routing.rebalance.enable none, a
node that leaves and comes back gets nothing until rebalancing is enabled again; last, the master
is SIGKILLed in the middle of a move. One cluster for the module."""
import os
import re
import shutil
import signal
import tempfile
import threading
import time

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, cat_nodes, free_port, wait_until

INDEX = "moves"


def node_args(etcd, name):
    return ["--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "rebal",
            "--transport-port", str(free_port()), "--lease-ttl", TTL]


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-rebal-")
    etcd = Etcd(tmp).start()
    nodes = {}
    for name in ("n1", "n2"):
        nodes[name] = Server(os.path.join(tmp, name), node_args(etcd, name)).start()
    wait_until("2 nodes", lambda: nodes["n1"].request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
    yield {"tmp": tmp, "etcd": etcd, "nodes": nodes}
    for s in nodes.values():
        if s.alive():
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


def shards(node):
    st, _, rows = node.request("GET", "/_cat/shards/%s?format=json" % INDEX)
    assert st == 200, rows
    return rows


def per_node(rows):
    """{node name: copies} of the STARTED copies (a RELOCATING one counts on its source)."""
    out = {}
    for r in rows:
        if r["state"] in ("STARTED", "RELOCATING"):
            name = r["node"].split(" -> ")[0]
            out[name] = out.get(name, 0) + 1
    return out


def settled(node, want):
    """The copies per node are `want`, nothing relocates, health green."""
    st, _, h = node.request("GET", "/_cluster/health/%s" % INDEX)
    if st != 200 or h["status"] != "green" or h["relocating_shards"]:
        return False
    return per_node(shards(node)) == want


class Load:
    """A writer (bulks of explicit ids through alternating nodes, every third batch as single
    PUTs, each sent once: a write that arrives during a primary hand-over or a promotion waits
    for the new primary, as in Elasticsearch, so no item may fail) and a reader (searches
    through alternating nodes) on threads."""

    def __init__(self, nodes, read=True):
        self.nodes = nodes
        self.acked = set()
        self.failed = []  # (id, status or exception, item) of writes not acknowledged
        self.slowest = 0.0  # the longest request (printed, not asserted: a wait at a hand-over)
        self.search_errors = []
        self.searches = 0
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.write)]
        if read:
            self.threads.append(threading.Thread(target=self.read))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()

    def write(self):
        i = 0
        while not self.stop.is_set() and i < 6000:  # within one search page (10,000)
            ids = ["d%05d" % (i + k) for k in range(20)]
            node = self.nodes[(i // 20) % len(self.nodes)]
            i += 20
            if (i // 20) % 3 == 0:
                self.put_each(node, ids)
                continue
            body = "".join('{"index":{"_index":"%s","_id":"%s"}}\n{"n":%d,"t":"doc %s"}\n'
                           % (INDEX, d, int(d[1:]), d) for d in ids)
            try:
                t0 = time.time()
                st, _, r = node.request("POST", "/_bulk", body,
                                        {"Content-Type": "application/x-ndjson"})
                self.slowest = max(self.slowest, time.time() - t0)
            except Exception as e:  # noqa: BLE001 - recorded: the test fails on it
                self.failed += [(d, repr(e), None) for d in ids]
                continue
            if st != 200:
                self.failed += [(d, st, r) for d in ids]
                continue
            for d, item in zip(ids, r["items"]):
                if item["index"]["status"] in (200, 201):
                    self.acked.add(d)
                else:
                    self.failed.append((d, item["index"]["status"], item))
            time.sleep(0.01)

    def put_each(self, node, ids):
        for d in ids:
            try:
                t0 = time.time()
                st, _, r = node.request("PUT", "/%s/_doc/%s" % (INDEX, d),
                                        {"n": int(d[1:]), "t": "doc " + d})
                self.slowest = max(self.slowest, time.time() - t0)
            except Exception as e:  # noqa: BLE001 - recorded: the test fails on it
                self.failed.append((d, repr(e), None))
                continue
            if st in (200, 201):
                self.acked.add(d)
            else:
                self.failed.append((d, st, r))

    def read(self):
        k = 0
        while not self.stop.is_set():
            node = self.nodes[k % len(self.nodes)]
            k += 1
            st, _, r = node.request("POST", "/%s/_search" % INDEX,
                                    {"size": 3, "query": {"match": {"t": "doc"}}})
            self.searches += 1
            if st != 200 or r["_shards"]["failed"] or r["_shards"]["successful"] != 6:
                self.search_errors.append((st, r))
            time.sleep(0.02)


def check_docs(nodes, acked):
    """Every acknowledged id once; every copy of a shard holds the same number of docs."""
    nodes = {k: v for k, v in nodes.items() if v.alive()}
    n1 = next(iter(nodes.values()))
    st, _, r = n1.request("POST", "/%s/_refresh" % INDEX)
    assert st == 200, r
    st, _, r = n1.request("POST", "/%s/_search" % INDEX, {
        "size": 10000, "_source": False, "track_total_hits": True})
    assert st == 200 and r["_shards"]["failed"] == 0, r
    ids = [h["_id"] for h in r["hits"]["hits"]]
    assert len(ids) == len(set(ids)), "duplicated documents"
    assert r["hits"]["total"]["value"] == len(ids)
    assert set(ids) == acked, "missing %s, unexpected %s" % (
        sorted(acked - set(ids))[:5], sorted(set(ids) - acked)[:5])
    docs = {}  # shard -> {node: docs}, each node reports its own copies
    for name, node in nodes.items():
        for row in shards(node):
            if row["node"] == name and row["docs"]:
                docs.setdefault(row["shard"], {})[name] = int(row["docs"])
    assert sum(min(v.values()) for v in docs.values()) == len(acked), docs
    for shard, copies in docs.items():
        assert len(copies) == 2 and len(set(copies.values())) == 1, (shard, copies)


def test_join_spreads_copies_under_load(env):
    nodes = env["nodes"]
    n1 = nodes["n1"]
    st, _, r = n1.request("PUT", "/" + INDEX, {
        "settings": {"number_of_shards": 6, "number_of_replicas": 1},
        "mappings": {"properties": {"n": {"type": "long"}, "t": {"type": "text"}}}})
    assert st == 200, r
    wait_until("green", lambda: n1.request(
        "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % INDEX)[0] == 200)
    wait_until("6 copies on each node", lambda: settled(n1, {"n1": 6, "n2": 6}))
    seen = {"relocating": 0, "rows": []}
    with Load([nodes["n1"], nodes["n2"]]) as load:
        wait_until("first writes", lambda: len(load.acked) >= 100)
        nodes["n3"] = Server(os.path.join(env["tmp"], "n3"), node_args(env["etcd"], "n3")).start()

        def watch():
            st, _, h = n1.request("GET", "/_cluster/health")
            seen["relocating"] = max(seen["relocating"], h["relocating_shards"])
            seen["rows"] += [r for r in shards(nodes["n2"]) if r["state"] == "RELOCATING"]
            return settled(n1, {"n1": 4, "n2": 4, "n3": 4})

        wait_until("copies spread over 3 nodes", watch, timeout=60, interval=0.02)
        wait_until("more writes", lambda: len(load.acked) >= 300)
    # the moves were visible while they ran, at most 2 at a time (cluster_concurrent_rebalance)
    assert 1 <= seen["relocating"] <= 2, seen["relocating"]
    assert seen["rows"], "no RELOCATING row in _cat/shards"
    for r in seen["rows"]:
        assert re.match(r"^n[12] -> \S+ \S+ n3$", r["node"]), r
    assert not load.search_errors, load.search_errors[:3]
    assert not load.failed, (len(load.failed), load.failed[:3])
    assert load.searches > 10
    print("\n%d docs acknowledged (slowest write %.2f s), %d searches during the moves" % (
        len(load.acked), load.slowest, load.searches))
    check_docs(nodes, load.acked)
    env["acked"] = load.acked
    st, _, state = n1.request("GET", "/_cluster/state/routing_table/" + INDEX)
    assert st == 200, state
    for copies in state["routing_table"]["indices"][INDEX]["shards"].values():
        assert {c["state"] for c in copies} == {"STARTED"}
        assert len({c["node"] for c in copies}) == 2


def test_rebalance_settings(env):
    n1 = env["nodes"]["n1"]
    for bad in ({"cluster.routing.rebalance.enable": "sometimes"},
                {"cluster.routing.allocation.cluster_concurrent_rebalance": "-5"}):
        st, _, r = n1.request("PUT", "/_cluster/settings", {"transient": bad})
        assert st == 400 and r["error"]["type"] == "illegal_argument_exception", r
    st, _, r = n1.request("PUT", "/_cluster/settings", {"persistent": {
        "cluster.routing.rebalance.enable": "none"}})
    assert st == 200, r
    st, _, r = n1.request("GET", "/_cluster/settings?flat_settings=true")
    assert r["persistent"]["cluster.routing.rebalance.enable"] == "none", r


def test_none_keeps_copies_put_until_enabled(env):
    """rebalance.enable is none (previous test): n3 leaves, its copies are re-created on n1 and
    n2, it comes back and holds nothing; with `primaries`, primaries move back to it under load
    (each one hands over to its target under a new term), writes and searches going on."""
    nodes = env["nodes"]
    n1 = nodes["n1"]
    assert nodes["n3"].stop() == 0
    wait_until("n3's copies re-created", lambda: settled(n1, {"n1": 6, "n2": 6}), timeout=60)
    nodes["n3"].start()
    wait_until("3 nodes", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
    time.sleep(1.5)  # the master has seen the join (it recomputes at once on a view change)
    st, _, h = n1.request("GET", "/_cluster/health")
    assert h["relocating_shards"] == 0, h
    assert per_node(shards(n1)) == {"n1": 6, "n2": 6}
    st, _, r = n1.request("GET", "/_cluster/state/metadata/" + INDEX)
    terms = r["metadata"]["indices"][INDEX]["primary_terms"]
    with Load([nodes["n1"], nodes["n2"]]) as load:
        wait_until("first writes", lambda: len(load.acked) >= 100)
        st, _, r = n1.request("PUT", "/_cluster/settings", {"persistent": {
            "cluster.routing.rebalance.enable": "primaries"}})
        assert st == 200, r
        wait_until("primaries moved to n3",
                   lambda: settled(n1, {"n1": 4, "n2": 4, "n3": 4}), timeout=60)
        wait_until("more writes", lambda: len(load.acked) >= 300)
    assert not load.search_errors, load.search_errors[:3]
    assert not load.failed, (len(load.failed), load.failed[:3])
    on_n3 = [r for r in shards(n1) if r["node"] == "n3"]
    assert len(on_n3) == 4 and {r["prirep"] for r in on_n3} == {"p"}, on_n3
    st, _, r = n1.request("GET", "/_cluster/state/metadata/" + INDEX)
    now = r["metadata"]["indices"][INDEX]["primary_terms"]
    for row in on_n3:  # a moved primary took over under a new term
        assert now[row["shard"]] > terms[row["shard"]], (terms, now)
    print("\n%d docs acknowledged (slowest write %.2f s) while 4 primaries moved" % (
        len(load.acked), load.slowest))
    env["acked"] |= load.acked
    check_docs(nodes, env["acked"])
    st, _, r = n1.request("PUT", "/_cluster/settings", {"persistent": {
        "cluster.routing.rebalance.enable": None}})
    assert st == 200, r


def test_master_killed_mid_move(env):
    """A node leaves and comes back (rebalancing is on again), so the master starts moving
    copies to it; while a move is under way (a target recovering or waiting to take over) the
    master is SIGKILLed. The next master finishes or drops the half-done moves: health goes back
    to green with no copy RELOCATING, every acknowledged document is there once, and a writer
    through a surviving node saw no failed item (the master's primaries were promoted under
    it)."""
    nodes = env["nodes"]
    n1 = nodes["n1"]
    wait_until("4/4/4", lambda: settled(n1, {"n1": 4, "n2": 4, "n3": 4}), timeout=60)
    master = [r["name"] for r in cat_nodes(n1) if r["master"] == "*"][0]
    ids = {r["name"]: r["id"] for r in cat_nodes(n1)}
    mover, other = [n for n in ("n3", "n2", "n1") if n != master][:2]
    assert nodes[mover].stop() == 0
    wait_until("%s's copies re-created" % mover,
               lambda: settled(nodes[other], {master: 6, other: 6}), timeout=60)
    seen = []
    with Load([nodes[other]], read=False) as load:
        wait_until("first writes", lambda: len(load.acked) >= 100)
        nodes[mover].start(wait_recovered=False)

        t0 = time.time()

        def moving():
            """A move whose target is still recovering (the shard's in-sync set holds only
            its two started copies), or after 3 s any move under way (a fast machine)."""
            st, _, state = nodes[other].request(
                "GET", "/_cluster/state/routing_table,metadata/" + INDEX)
            if st != 200:
                return None
            in_sync = state["metadata"]["indices"][INDEX]["in_sync_allocations"]
            for num, copies in state["routing_table"]["indices"][INDEX]["shards"].items():
                for c in copies:
                    if c["state"] == "RELOCATING":
                        recovering = len(in_sync[num]) == 2
                        if recovering or time.time() - t0 > 3:
                            seen.append((num, c["node"], c["relocating_node"], recovering))
                            return True
            return None

        wait_until("a move under way", moving, timeout=30, interval=0.01)
        nodes[master].stop(signal.SIGKILL)
        print("\nkilled master %s (%s) during the move of shard %s from %s to %s (target %s)"
              % (master, ids[master], seen[0][0], seen[0][1], seen[0][2],
                 "recovering" if seen[0][3] else "in sync, not yet primary"))
        def recovered():
            st, _, h = nodes[other].request("GET", "/_cluster/health/%s" % INDEX)
            rows = shards(nodes[other])
            return (st == 200 and h["status"] == "green" and not h["relocating_shards"]
                    and not h["initializing_shards"] and len(rows) == 12
                    and {r["state"] for r in rows} == {"STARTED"})

        wait_until("green after the master's death", recovered, timeout=60)
        wait_until("more writes", lambda: len(load.acked) >= 200)
    assert not load.failed, (len(load.failed), load.failed[:3])
    print("%d docs acknowledged (slowest write %.2f s) around the master's death" % (
        len(load.acked), load.slowest))
    new_master = [r["name"] for r in cat_nodes(nodes[other]) if r["master"] == "*"]
    assert new_master and new_master[0] != master, new_master
    assert per_node(shards(nodes[other])) == {other: 6, mover: 6}
    env["acked"] |= load.acked
    check_docs(nodes, env["acked"])
