"""A data node that dies between a search's query and fetch phases (issue 13): etcd + two
`scry serve --cluster` nodes.

n1 coordinates with the test-only `--test-fetch-delay 3s` (it waits 3 s between the query phase
and the fetch phase). n2 is killed with SIGKILL inside that window, after it answered the query
phase. As Elasticsearch's fetch phase does, the search still answers 200: n2's shards with hits
on the page are shard failures in `_shards.failures`, their hits leave the page, and n1's hits
are fetched. (Before the fix the whole search failed with 500 "i/o error".)"""
import json
import os
import shutil
import signal
import tempfile
import threading
import time

import pytest

from conftest import Server
from test_cluster import ETCD, Etcd, free_port, wait_until

N_DOCS = 40


@pytest.fixture()
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-cfetch-")
    etcd = Etcd(tmp).start()
    nodes = {}
    for name in ("n1", "n2"):
        extra = ["--test-fetch-delay", "3s"] if name == "n1" else []
        nodes[name] = Server(os.path.join(tmp, name), [
            "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "cf",
            "--transport-port", str(free_port()), "--lease-ttl", "10s"] + extra).start()
    try:
        n1 = nodes["n1"]
        wait_until("2 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
        st, _, r = n1.request("PUT", "/ff", {
            "settings": {"number_of_shards": 4, "number_of_replicas": 0},
            "mappings": {"properties": {"n": {"type": "long"}}}})
        assert st == 200, r
        for s in nodes.values():
            wait_until("routing on " + s.url, lambda s=s: s.request(
                "GET", "/_cluster/health/ff?wait_for_status=green&timeout=1s")[0] == 200)
        body = "".join(json.dumps({"index": {"_index": "ff", "_id": str(i)}}) + "\n" +
                       json.dumps({"n": i}) + "\n" for i in range(N_DOCS))
        st, _, r = n1.request("POST", "/_bulk?refresh=true", body,
                              headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r
        held = {}  # node -> (its shard numbers, their docs); a node counts its own copies
        for name, s in nodes.items():
            st, _, rows = s.request("GET", "/_cat/shards/ff?format=json")
            assert st == 200, rows
            mine = [row for row in rows if row["node"] == name]
            held[name] = ({int(row["shard"]) for row in mine}, sum(int(row["docs"]) for row in mine))
        assert all(d for _, d in held.values()), held
    except BaseException:
        for s in nodes.values():
            s.stop(sig=signal.SIGKILL)
        etcd.kill()
        raise
    yield nodes, held
    try:
        rc = nodes["n1"].stop()
        assert rc == 0, "exit code %s; log:\n%s" % (rc, nodes["n1"].read_log())
    finally:
        for s in nodes.values():
            if s.alive():
                s.stop(sig=signal.SIGKILL)
        etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=["kill", "stop"])
def test_node_killed_between_query_and_fetch_fails_only_its_shards(env, sig):
    """SIGKILL: the fetch fails at once. SIGSTOP (n2 frozen) under `?timeout=1s`: the fetch
    request times out what is left of the search's timeout plus a grace (5 s) after it was
    sent, not a fixed 30 s (the client's own limit: before, the search did not answer)."""
    nodes, held = env
    out = {}
    path = "/ff/_search" + ("?timeout=1s" if sig == signal.SIGSTOP else "")

    def search():
        out["r"] = nodes["n1"].request("POST", path, {
            "query": {"match_all": {}}, "size": N_DOCS, "sort": [{"n": "asc"}]})

    th = threading.Thread(target=search)
    th.start()
    time.sleep(1.5)  # the query phase is done (a few ms); n1 waits before fetching
    if sig == signal.SIGKILL:
        nodes["n2"].stop(sig=signal.SIGKILL)
    else:
        nodes["n2"].proc.send_signal(signal.SIGSTOP)
    try:
        th.join(30)
    finally:
        if sig == signal.SIGSTOP:
            nodes["n2"].proc.send_signal(signal.SIGCONT)
    assert not th.is_alive()
    st, _, r = out["r"]
    assert st == 200, r
    n2_shards, _ = held["n2"]
    sh = r["_shards"]
    assert sh["total"] == 4 and sh["failed"] == len(n2_shards), sh
    assert sh["successful"] == 4 - len(n2_shards), sh
    assert {f["shard"] for f in sh["failures"]} == n2_shards, sh
    assert all("fetch failed" in f["reason"]["reason"] for f in sh["failures"]), sh
    assert {f["reason"]["type"] for f in sh["failures"]} == (
        {"node_not_connected_exception"} if sig == signal.SIGKILL
        else {"receive_timeout_transport_exception"}), sh
    # the total counts every shard's matches (the query phase answered); the page has n1's hits
    assert r["hits"]["total"]["value"] == N_DOCS, r["hits"]["total"]
    hits = r["hits"]["hits"]
    assert len(hits) == held["n1"][1], (len(hits), held)
    assert all(h["_source"]["n"] == h["sort"][0] for h in hits)
    ns = [h["sort"][0] for h in hits]
    assert ns == sorted(ns)
