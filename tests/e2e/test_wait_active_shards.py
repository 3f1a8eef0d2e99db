"""wait_for_active_shards on writes (issue 13, "Writes and replication"): the request parameter
(`1`, `all`, a number) and the index setting `index.write.wait_for_active_shards`. A write that
cannot get enough active copies (primary + started replicas) waits up to `timeout`, then fails
with 503 unavailable_shards_exception as Elasticsearch does; once the copies are active it
goes through. On a single node (replicas are never assigned) and on etcd + two cluster nodes
where the replica's node is killed and comes back."""
import json
import os
import shutil
import signal
import tempfile
import threading
import time

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, free_port, wait_until

ND = {"Content-Type": "application/x-ndjson"}


def put(node, index, did, params=""):
    return node.request("PUT", "/%s/_doc/%s%s" % (index, did, params), {"t": did})


def test_single_node(server):
    st, _, r = server.request("PUT", "/wa1", {"settings": {"number_of_shards": 1,
                                                            "number_of_replicas": 1}})
    assert st == 200, r
    st, _, r = put(server, "wa1", "a")  # default 1: the primary is enough
    assert st == 201, r
    st, _, r = put(server, "wa1", "b", "?wait_for_active_shards=1")
    assert st == 201, r
    st, _, r = put(server, "wa1", "z", "?wait_for_active_shards=0")
    assert st == 201, r
    t0 = time.time()
    st, _, r = put(server, "wa1", "c", "?wait_for_active_shards=all&timeout=300ms")
    waited = time.time() - t0
    assert st == 503, r
    assert r["error"]["type"] == "unavailable_shards_exception", r
    assert "Not enough active copies to meet shard count of [ALL] (have 1, needed 2)" in \
        r["error"]["reason"], r
    assert waited >= 0.25, waited  # it waited for the timeout, not refused at once
    st, _, r = put(server, "wa1", "d", "?wait_for_active_shards=2&timeout=0s")
    assert st == 503 and "needed 2" in r["error"]["reason"], r
    assert server.request("GET", "/wa1/_doc/c")[0] == 404  # nothing written
    for bad in ("abc", "-1", "1.5", ""):
        st, _, r = put(server, "wa1", "e", "?wait_for_active_shards=" + bad)
        assert st == 400 and r["error"]["type"] == "illegal_argument_exception", (bad, r)
    st, _, r = put(server, "wa1", "e", "?timeout=soon")
    assert st == 400, r
    # bulk: every item of the shard fails
    body = "".join(json.dumps({"index": {"_index": "wa1", "_id": "k%d" % i}}) + "\n" +
                   json.dumps({"t": i}) + "\n" for i in range(3))
    st, _, r = server.request("POST", "/_bulk?wait_for_active_shards=all&timeout=100ms", body,
                              headers=ND)
    assert st == 200 and r["errors"], r
    assert all(it["index"]["status"] == 503 and
               it["index"]["error"]["type"] == "unavailable_shards_exception"
               for it in r["items"]), r
    st, _, r = server.request("POST", "/_bulk?wait_for_active_shards=x", body, headers=ND)
    assert st == 400, r
    # update
    st, _, r = server.request("POST", "/wa1/_update/a?wait_for_active_shards=all&timeout=100ms",
                              {"doc": {"u": 1}})
    assert st == 503 and r["error"]["type"] == "unavailable_shards_exception", r
    # the index setting, at creation and updated
    st, _, r = server.request("PUT", "/wa2", {"settings": {
        "number_of_replicas": 0, "index.write.wait_for_active_shards": "all"}})
    assert st == 200, r
    st, _, r = put(server, "wa2", "a")  # all = 1 copy without replicas
    assert st == 201, r
    st, _, r = server.request("PUT", "/wa3", {"settings": {
        "number_of_replicas": 2, "index": {"write": {"wait_for_active_shards": "all"}}}})
    assert st == 200, r
    st, _, r = put(server, "wa3", "a", "?timeout=100ms")
    assert st == 503 and "needed 3" in r["error"]["reason"], r
    st, _, r = put(server, "wa3", "a", "?timeout=100ms&wait_for_active_shards=1")  # the
    assert st == 201, r                                         # parameter wins
    st, _, r = server.request("PUT", "/wa3/_settings", {"index.write.wait_for_active_shards": 1})
    assert st == 200, r
    st, _, r = put(server, "wa3", "b", "?timeout=100ms")
    assert st == 201, r
    st, _, r = server.request("PUT", "/wa3/_settings", {"index.write.wait_for_active_shards": "2"})
    assert st == 200, r
    st, _, r = put(server, "wa3", "c", "?timeout=100ms")
    assert st == 503 and "needed 2" in r["error"]["reason"], r
    st, _, r = server.request("PUT", "/wa3/_settings", {"index.write.wait_for_active_shards": "x"})
    assert st == 400, r
    st, _, r = server.request("PUT", "/wa4", {"settings": {
        "index.write.wait_for_active_shards": "many"}})
    assert st == 400 and r["error"]["type"] == "illegal_argument_exception", r
    for ix in ("wa1", "wa2", "wa3"):
        server.request("DELETE", "/" + ix)


@pytest.fixture
def tmp():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    d = tempfile.mkdtemp(prefix="scry-wa-")
    yield d
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(d, ignore_errors=True)


def test_cluster_waits_for_the_replica(tmp):
    etcd = Etcd(tmp).start()
    nodes = {}
    try:
        for name in ("n1", "n2"):
            nodes[name] = Server(os.path.join(tmp, name), [
                "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "wa",
                "--transport-port", str(free_port()), "--lease-ttl", TTL]).start()
        n1 = nodes["n1"]
        wait_until("2 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
        st, _, r = n1.request("PUT", "/wa", {"settings": {"number_of_shards": 1,
                                                          "number_of_replicas": 1}})
        assert st == 200, r
        for s in nodes.values():
            wait_until("green", lambda s=s: s.request(
                "GET", "/_cluster/health/wa?wait_for_status=green&timeout=1s")[0] == 200 and
                s.request("HEAD", "/wa")[0] == 200, timeout=30)
        for s in nodes.values():  # through the primary's node and forwarded
            st, _, r = put(s, "wa", "all-" + s.url[-5:], "?wait_for_active_shards=all")
            assert st == 201, r
        st, _, state = n1.request("GET", "/_cluster/state/routing_table,nodes/wa")
        names = {k: v["name"] for k, v in state["nodes"].items()}
        rows = state["routing_table"]["indices"]["wa"]["shards"]["0"]
        replica = names[next(e["node"] for e in rows if not e["primary"])]
        primary = next(n for n in nodes if n != replica)
        P = nodes[primary]
        nodes[replica].stop(signal.SIGKILL)
        wait_until("the replica is gone", lambda: P.request(
            "GET", "/_cluster/health/wa")[2]["active_shards"] == 1, timeout=30)
        st, _, r = put(P, "wa", "x", "?wait_for_active_shards=all&timeout=300ms")
        assert st == 503 and r["error"]["type"] == "unavailable_shards_exception", r
        assert "(have 1, needed 2)" in r["error"]["reason"], r
        st, _, r = put(P, "wa", "y", "?wait_for_active_shards=1")
        assert st == 201, r
        # a write that waits: the replica comes back and recovers within its timeout
        out = {}

        def waiter():
            out["r"] = put(P, "wa", "w", "?wait_for_active_shards=all&timeout=60s")
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.5)
        assert "r" not in out  # still waiting
        nodes[replica].start()
        t.join(90)
        st, _, r = out["r"]
        assert st == 201, r
        assert P.request("GET", "/_cluster/health/wa")[2]["status"] == "green"
        assert P.request("GET", "/wa/_doc/w")[0] == 200
    finally:
        for s in nodes.values():
            if s.alive():
                rc = s.stop()
                assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
        etcd.kill()
