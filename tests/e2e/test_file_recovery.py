"""File-based peer recovery (issue 13: "A copy that returns recovers from the primary by
copying segment files and replaying the operations after them, while writes continue"):
etcd + two `scry serve --cluster` processes, one index of 1 shard and 1 replica.

1. An operation the primary never had is planted on the replica (a raw replication message with
   the current term: what a replica holds when its primary died before acknowledging), the
   replica's node is SIGKILLed, the primary takes many writes and deletes, a flush (its
   translog is trimmed) and more writes; the node restarts while a thread keeps writing. The
   returning copy is not empty, so it is replaced by the primary's commit (copied in chunks)
   and receives the operations after it; health goes green. Then the primary's node is
   killed: the recovered copy, promoted, holds exactly the acknowledged documents (none of
   the deleted ones, not the planted one).
2. A third node joins: the new empty copy of a shard with many documents is recovered by
   files too, while writes continue; then the other node is killed and the new copy, alone,
   holds exactly the acknowledged documents."""
import json
import os
import random
import shutil
import signal
import tempfile
import threading
import time

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, free_port, wait_until
from test_replication import transport_call, uvar, wbytes

INDEX = "frec"


def bulk_body(ids, tag):
    lines = []
    for i in ids:
        lines.append(json.dumps({"index": {"_index": INDEX, "_id": i}}))
        lines.append(json.dumps({"title": "doc %s %s" % (i, tag), "n": len(lines)}))
    return "\n".join(lines) + "\n"


def bulk(node, ids, tag="a"):
    for k in range(0, len(ids), 500):
        st, _, r = node.request("POST", "/_bulk", bulk_body(ids[k:k + 500], tag),
                                headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r


def state(node):
    st, _, s = node.request("GET", "/_cluster/state/metadata,routing_table,nodes/" + INDEX)
    assert st == 200, s
    return s


def copies(node):
    """[(node name, primary)] of shard 0, and the nodes' transport addresses by name."""
    s = state(node)
    names = {k: v["name"] for k, v in s["nodes"].items()}
    addrs = {v["name"]: v["transport_address"] for v in s["nodes"].values()}
    rows = s["routing_table"]["indices"][INDEX]["shards"]["0"]
    return [(names.get(e["node"]), e["primary"], e["state"]) for e in rows], addrs, s


def green(node, n_nodes):
    st, _, h = node.request("GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % INDEX)
    return st == 200 and h["status"] == "green" and h["number_of_nodes"] == n_nodes


def all_ids(node):
    assert node.request("POST", "/%s/_refresh" % INDEX)[0] == 200
    st, _, r = node.request("POST", "/%s/_search" % INDEX,
                            {"query": {"match_all": {}}, "size": 10000, "_source": False,
                             "track_total_hits": True})
    assert st == 200 and r["_shards"]["failed"] == 0, r
    return {h["_id"] for h in r["hits"]["hits"]}


class Writer:
    """Writes documents through a node in a thread; remembers the acknowledged ones."""

    def __init__(self, node, prefix):
        self.node, self.prefix = node, prefix
        self.acked, self.errors = set(), []
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run)

    def run(self):
        i = 0
        while not self.stop.is_set():
            did = "%s%d" % (self.prefix, i)
            try:
                st, _, r = self.node.request("PUT", "/%s/_doc/%s" % (INDEX, did),
                                             {"title": "during recovery", "n": i})
            except Exception as e:
                st, r = None, repr(e)
            if st in (200, 201):
                self.acked.add(did)
            else:
                self.errors.append((st, r))
            i += 1
            time.sleep(0.005)

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *a):
        self.stop.set()
        self.t.join()


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-frec-")
    etcd = Etcd(tmp).start()

    def make(name):
        return Server(os.path.join(tmp, name), [
            "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "frec",
            "--transport-port", str(free_port()), "--lease-ttl", TTL])
    nodes = {"n1": make("n1").start(), "n2": make("n2").start()}
    yield nodes, make
    for s in nodes.values():
        if s.alive():
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


def test_returning_copy_recovers_by_files(env):
    nodes, _ = env
    seed = int(os.environ.get("SCRY_TEST_SEED", time.time()))
    print("\ntest_file_recovery seed %d (SCRY_TEST_SEED=%d replays)" % (seed, seed))
    rnd = random.Random(seed)
    n1 = nodes["n1"]
    wait_until("2 nodes", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
    st, _, r = n1.request("PUT", "/" + INDEX, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 1},
        "mappings": {"properties": {"title": {"type": "text"}, "n": {"type": "long"}}}})
    assert st == 200, r
    for s in nodes.values():
        wait_until("green on " + s.url, lambda s=s: green(s, 2) and
                   s.request("HEAD", "/" + INDEX)[0] == 200, timeout=30)
    acked = set("a%d" % i for i in range(300))
    bulk(n1, sorted(acked))
    rows, addrs, s = copies(n1)
    primary = next(n for n, p, _ in rows if p)
    replica = next(n for n, p, _ in rows if not p)
    # plant an operation the primary never had on the replica (current term, fresh seq_no)
    term = s["metadata"]["indices"][INDEX]["primary_terms"]["0"]
    op = bytes([0]) + uvar(10 ** 6) + uvar(term) + uvar(1) + wbytes(b"ghost") + \
        wbytes(b'{"title":"never acknowledged"}')
    body = wbytes(INDEX.encode()) + uvar(0) + uvar(term) + bytes([0]) + uvar(1) + op
    flags, data = transport_call(addrs[replica], 0x0301, body)
    assert not flags & 2, data
    nodes[replica].stop(signal.SIGKILL)
    pnode = nodes[primary]
    wait_until("the replica's node left", lambda: pnode.request(
        "GET", "/_cluster/health?wait_for_nodes=1&timeout=1s")[0] == 200, timeout=30)
    more = ["b%d" % i for i in range(3000)]
    bulk(pnode, more)
    acked |= set(more)
    gone = rnd.sample(sorted(acked), 200)
    for d in gone:
        st, _, r = pnode.request("DELETE", "/%s/_doc/%s" % (INDEX, d))
        assert st == 200, r
    acked -= set(gone)
    st, _, r = pnode.request("POST", "/%s/_flush" % INDEX)
    assert st == 200, r
    late = ["c%d" % i for i in range(500)]
    bulk(pnode, late, "late")
    acked |= set(late)
    # the copy returns while writes continue
    with Writer(pnode, "w") as w:
        nodes[replica].start()
        wait_until("green with the returned copy", lambda: green(pnode, 2), timeout=60,
                   interval=0.1)
        time.sleep(0.5)
    assert w.acked and not w.errors, w.errors[:5]
    acked |= w.acked
    log = nodes[replica].read_log() + open(nodes[replica].log_path, "rb").read().decode(
        "utf-8", "replace")
    assert "recovered by files" in log, log[-3000:]
    # the primary goes: the recovered copy is promoted and holds exactly the acknowledged docs
    nodes[primary].stop(signal.SIGKILL)
    survivor = nodes[replica]
    wait_until("the recovered copy is primary", lambda: any(
        n == replica and p for n, p, _ in copies(survivor)[0]), timeout=30)
    wait_until("searches reach the shard", lambda: survivor.request(
        "POST", "/%s/_search" % INDEX, {"size": 0})[2]["_shards"]["failed"] == 0, timeout=30)
    got = all_ids(survivor)
    assert "ghost" not in got
    assert not (got & set(gone)), sorted(got & set(gone))[:10]
    assert got == acked, (sorted(acked - got)[:10], sorted(got - acked)[:10])
    nodes[primary].start()  # back for the next test: its copy recovers from the survivor


def test_new_copy_of_a_big_shard_recovers_by_files(env):
    nodes, make = env
    live = [s for s in nodes.values() if s.alive()]
    a = live[0]
    wait_until("green", lambda: green(a, 2), timeout=60)
    before = all_ids(a)
    rows, _, _ = copies(a)
    holders = [n for n, _, _ in rows]
    # stop the node holding the replica; a third node joins and gets the new copy
    primary = next(n for n, p, _ in rows if p)
    other = next(n for n in holders if n != primary)
    nodes[other].stop(signal.SIGKILL)
    pnode = nodes[primary]
    wait_until("the replica's node left", lambda: pnode.request(
        "GET", "/_cluster/health?wait_for_nodes=1&timeout=1s")[0] == 200, timeout=30)
    nodes["n3"] = make("n3").start()
    with Writer(pnode, "x") as w:
        wait_until("green with the new copy", lambda: green(pnode, 2), timeout=60, interval=0.1)
        time.sleep(0.5)
    assert w.acked and not w.errors, w.errors[:5]
    log = open(nodes["n3"].log_path, "rb").read().decode("utf-8", "replace")
    assert "recovered by files" in log, log[-3000:]
    nodes[primary].stop(signal.SIGKILL)
    n3 = nodes["n3"]
    wait_until("the new copy is primary", lambda: any(
        n == "n3" and p for n, p, _ in copies(n3)[0]), timeout=30)
    wait_until("searches reach the shard", lambda: n3.request(
        "POST", "/%s/_search" % INDEX, {"size": 0})[2]["_shards"]["failed"] == 0, timeout=30)
    assert all_ids(n3) == before | w.acked
