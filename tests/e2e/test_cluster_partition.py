"""Faults of issue 13's test list, on etcd + `scry serve --cluster` processes on loopback:

* a network partition: one node's etcd and transport traffic is dropped. Without root network
  namespaces the test uses the test-only switch `--test-partition-file F` (while F exists the
  node's etcd client and transport refuse all traffic, docs/cluster.md). The partitioned
  primary acknowledges no write (it can neither reach its replica nor remove it from the in-sync
  set in etcd, and once its lease lapsed it refuses outright); the other side elects a master
  (no split brain: one master key in etcd, held by a reachable node) and promotes the in-sync
  replica under a new term; every write acknowledged before and after is kept; when the
  partition heals the node rejoins and its copy recovers (by files: the writes it applied but
  never acknowledged are gone).
* etcd and the master restarted together: searches keep answering while both are down, and a
  new master is elected once etcd is back."""
import json
import os
import shutil
import signal
import tempfile
import threading
import time

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, cat_nodes, converged, free_port, wait_until

INDEX = "part"


def bulk(node, ids):
    lines = []
    for i in ids:
        lines.append(json.dumps({"index": {"_index": INDEX, "_id": i}}))
        lines.append(json.dumps({"title": "doc " + i}))
    st, _, r = node.request("POST", "/_bulk", "\n".join(lines) + "\n",
                            headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r


def routing_rows(node, shard="0"):
    st, _, s = node.request("GET", "/_cluster/state/routing_table,nodes,metadata/" + INDEX)
    assert st == 200, s
    names = {k: v["name"] for k, v in s["nodes"].items()}
    rows = s["routing_table"]["indices"][INDEX]["shards"][shard]
    return [(names.get(e["node"], e["node"]), e["primary"]) for e in rows], s


def ids_on(node):
    assert node.request("POST", "/%s/_refresh" % INDEX)[0] == 200
    st, _, r = node.request("POST", "/%s/_search" % INDEX,
                            {"query": {"match_all": {}}, "size": 10000, "_source": False})
    assert st == 200 and r["_shards"]["failed"] == 0, r
    return {h["_id"] for h in r["hits"]["hits"]}


def master_key(etcd, cluster):
    keys = etcd.range_prefix("/scry/%s/master" % cluster)
    return keys.get("/scry/%s/master" % cluster)


def start_nodes(tmp, etcd, names, cluster):
    nodes = {}
    for name in names:
        nodes[name] = Server(os.path.join(tmp, name), [
            "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", cluster,
            "--transport-port", str(free_port()), "--lease-ttl", TTL,
            "--test-partition-file", os.path.join(tmp, name + ".cut")]).start()
    return nodes


@pytest.fixture
def tmp():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    d = tempfile.mkdtemp(prefix="scry-part-")
    yield d
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(d, ignore_errors=True)


def stop_all(nodes, etcd):
    for s in nodes.values():
        if s.alive():
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()


def test_partitioned_primary(tmp):
    etcd = Etcd(tmp).start()
    nodes = start_nodes(tmp, etcd, ("n1", "n2"), "part")
    try:
        n1 = nodes["n1"]
        wait_until("2 nodes", lambda: converged(nodes.values(), nodes.keys()))
        st, _, r = n1.request("PUT", "/" + INDEX, {
            "settings": {"number_of_shards": 1, "number_of_replicas": 1}})
        assert st == 200, r
        for s in nodes.values():
            wait_until("green", lambda s=s: s.request(
                "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % INDEX)[0] == 200
                and s.request("HEAD", "/" + INDEX)[0] == 200, timeout=30)
        acked = {"a%d" % i for i in range(200)}
        bulk(n1, sorted(acked))
        rows, _ = routing_rows(n1)
        p_name = next(n for n, p in rows if p)
        q_name = next(n for n in nodes if n != p_name)
        P, Q = nodes[p_name], nodes[q_name]
        # cut P off
        open(os.path.join(tmp, p_name + ".cut"), "w").close()
        t0 = time.time()
        refused, sent = [], 0
        # writes to P are never acknowledged: it cannot reach its replica nor etcd
        while time.time() - t0 < 4:  # past the 2 s lease TTL
            st, _, r = P.request("PUT", "/%s/_doc/p%d?timeout=200ms" % (INDEX, sent),
                                 {"title": "cut off"})
            sent += 1
            assert st >= 500, (st, r)
            refused.append(r["error"]["type"])
            time.sleep(0.05)
        print("\n%d writes to the partitioned primary refused: %s" % (sent, sorted(set(refused))))
        # the other side: Q is master and primary under a new term; writes through Q succeed
        wait_until("Q alone as master", lambda: converged([Q], [q_name]) == q_name, timeout=20)
        mk = master_key(etcd, "part")
        assert mk and json.loads(mk)["name"] == q_name, mk  # one master, the reachable node
        wait_until("Q's copy promoted", lambda: routing_rows(Q)[0][0] == (q_name, True),
                   timeout=20)
        _, s = routing_rows(Q)
        assert s["metadata"]["indices"][INDEX]["primary_terms"]["0"] >= 2
        more = {"b%d" % i for i in range(100)}
        bulk(Q, sorted(more))
        acked |= more
        # P still refuses: its lease lapsed and it is no longer the primary
        st, _, r = P.request("PUT", "/%s/_doc/late?timeout=200ms" % INDEX, {"title": "cut off"})
        assert st >= 500, r
        assert ids_on(Q) == acked
        # heal: P rejoins, its copy (holding writes it never acknowledged) recovers from Q
        os.unlink(os.path.join(tmp, p_name + ".cut"))
        wait_until("P rejoins", lambda: converged(nodes.values(), nodes.keys()), timeout=30)
        wait_until("green again", lambda: Q.request(
            "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % INDEX)[0] == 200,
            timeout=60)
        log = open(P.log_path, "rb").read().decode("utf-8", "replace")
        assert "recovered by files" in log, log[-3000:]
        # Q goes: P's recovered copy is promoted and holds exactly the acknowledged writes
        Q.stop(signal.SIGKILL)
        wait_until("P primary again", lambda: routing_rows(P)[0][0] == (p_name, True),
                   timeout=30)
        wait_until("searches on P", lambda: P.request(
            "POST", "/%s/_search" % INDEX, {"size": 0})[2]["_shards"]["failed"] == 0)
        got = ids_on(P)
        assert got == acked, (sorted(acked - got)[:10], sorted(got - acked)[:10])
    finally:
        stop_all(nodes, etcd)


def test_etcd_and_master_restart(tmp):
    etcd = Etcd(tmp).start()
    nodes = start_nodes(tmp, etcd, ("n1", "n2", "n3"), "restart")
    try:
        master = wait_until("a master", lambda: converged(nodes.values(), nodes.keys()))
        a = nodes[master]
        st, _, r = a.request("PUT", "/" + INDEX, {
            "settings": {"number_of_shards": 3, "number_of_replicas": 1}})
        assert st == 200, r
        for s in nodes.values():
            wait_until("green", lambda s=s: s.request(
                "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % INDEX)[0] == 200
                and s.request("HEAD", "/" + INDEX)[0] == 200, timeout=30)
        docs = {"d%d" % i for i in range(300)}
        bulk(a, sorted(docs))
        rest = [n for n in nodes if n != master]
        for n in rest:
            assert ids_on(nodes[n]) == docs
        # etcd and the master go down together
        etcd.kill()
        nodes[master].stop(signal.SIGKILL)
        stop = threading.Event()
        answers = []

        def searcher():
            while not stop.is_set():
                for n in rest:
                    st, _, r = nodes[n].request("POST", "/%s/_search" % INDEX,
                                                {"query": {"match_all": {}}, "size": 0,
                                                 "track_total_hits": True})
                    answers.append((st, r["hits"]["total"]["value"] if st == 200 else r))
                time.sleep(0.05)
        t = threading.Thread(target=searcher)
        t.start()
        try:
            time.sleep(3)  # etcd down longer than the lease TTL
            etcd.start()
            new_master = wait_until("a new master among the survivors",
                                    lambda: converged([nodes[n] for n in rest], rest),
                                    timeout=30)
            assert new_master in rest
            for n in rest:
                wait_until("green on the survivors", lambda n=n: nodes[n].request(
                    "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % INDEX)[0]
                    == 200, timeout=60)
            time.sleep(0.5)
        finally:
            stop.set()
            t.join()
        print("\n%d searches while etcd and the master restarted" % len(answers))
        bad = [x for x in answers if x != (200, len(docs))]
        assert answers and not bad, bad[:5]
        for n in rest:
            assert ids_on(nodes[n]) == docs
        # the old master returns as an ordinary node
        nodes[master].start(wait_recovered=False)
        wait_until("rejoin", lambda: converged(nodes.values(), nodes.keys()) == new_master,
                   timeout=30)
        assert len([r for r in cat_nodes(nodes[master]) if r["master"] == "*"]) == 1
    finally:
        stop_all(nodes, etcd)
