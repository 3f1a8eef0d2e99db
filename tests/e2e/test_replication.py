"""Replication and peer recovery (issue 13, "Writes and replication"): etcd + three `scry serve
--cluster` processes and, as the reference, a single-node server. An index of 6 shards and 1
replica is bulk-loaded through one node; health reaches green only once every replica has
recovered from its primary; searches from every node equal the single node's. Then, while one
thread indexes documents through the live nodes and another searches, a node is SIGKILLed:
searches keep answering, health goes yellow (the lost copies are re-created and recover) then
green, and every acknowledged write is found. Last another node is killed: the copies that
were recovered (now the only ones) hold every acknowledged document."""
import json
import os
import random
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, free_port, wait_until

N_DOCS = 600
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]
MAPPING = {"properties": {"title": {"type": "text"}, "n": {"type": "long"},
                          "tag": {"type": "keyword"}}}


def doc(i):
    return {"title": " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(1 + i % 5)),
            "n": i, "tag": "t%d" % (i % 7)}


def bulk(docs):
    lines = []
    for i, d in docs:
        lines.append(json.dumps({"index": {"_index": "rep", "_id": str(i)}}))
        lines.append(json.dumps(d))
    return "\n".join(lines) + "\n"


def health(node, index="rep"):
    st, _, h = node.request("GET", "/_cluster/health/" + index)
    assert st == 200, h
    return h


def search(node, body):
    st, _, r = node.request("POST", "/rep/_search", body)
    assert st == 200, r
    return r


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-repl-")
    etcd = Etcd(tmp).start()
    nodes = {}
    for name in ("n1", "n2", "n3"):
        nodes[name] = Server(os.path.join(tmp, name), [
            "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "repl",
            "--transport-port", str(free_port()), "--lease-ttl", TTL]).start()
    single = Server(os.path.join(tmp, "single")).start()
    yield nodes, single
    for s in list(nodes.values()) + [single]:
        if s.alive():  # a clean stop (leak checks under ASan)
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


def test_replicas_recover_and_match_single_node(env):
    nodes, single = env
    n1 = nodes["n1"]
    wait_until("3 nodes", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
    body = {"settings": {"number_of_shards": 6, "number_of_replicas": 1}, "mappings": MAPPING}
    for s in (n1, single):
        st, _, r = s.request("PUT", "/rep", body)
        assert st == 200, r
    # every node has the index (placement) before writes go to them: a node that has not seen
    # a new index yet would auto-create a local one of its own with a bulk
    for s in nodes.values():
        wait_until("index on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health/rep?wait_for_status=green&timeout=1s")[0] == 200 and
            s.request("HEAD", "/rep")[0] == 200)
    docs = [(i, doc(i)) for i in range(N_DOCS)]
    for s in (nodes["n2"], single):
        for k in range(0, N_DOCS, 200):
            st, _, r = s.request("POST", "/_bulk", bulk(docs[k:k + 200]),
                                 headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not r["errors"], r
    for s in nodes.values():  # every replica recovered from its primary: green
        st, _, h = s.request("GET", "/_cluster/health/rep?wait_for_status=green&timeout=60s")
        assert st == 200 and h["status"] == "green" and h["active_shards"] == 12, h
    st, _, state = n1.request("GET", "/_cluster/state/metadata/rep")
    for num, ids in state["metadata"]["indices"]["rep"]["in_sync_allocations"].items():
        assert len(ids) == 2, (num, ids)
    for s in list(nodes.values()) + [single]:
        assert s.request("POST", "/rep/_refresh")[0] == 200
    queries = [{"query": {"match": {"title": "fox dog"}}, "size": 10},
               {"query": {"range": {"n": {"gte": 100, "lt": 350}}}, "size": 5,
                "sort": [{"n": "desc"}]},
               {"query": {"match_all": {}}, "size": 0, "track_total_hits": True}]
    for q in queries:
        want = search(single, q)
        for s in nodes.values():
            got = search(s, q)
            assert got["hits"]["total"] == want["hits"]["total"], (q, got["hits"]["total"])
            assert [(h["_id"], h["_score"]) for h in got["hits"]["hits"]] == \
                [(h["_id"], h["_score"]) for h in want["hits"]["hits"]], q


def test_kill_during_indexing_loses_no_acked_write(env):
    nodes, _ = env
    seed = int(os.environ.get("SCRY_TEST_SEED", time.time()))
    print("\ntest_replication seed %d (SCRY_TEST_SEED=%d replays)" % (seed, seed))
    rnd = random.Random(seed)
    live = dict(nodes)
    acked, write_errors, searches = set(), [], []
    stop = threading.Event()
    lock = threading.Lock()

    def writer():
        i = N_DOCS
        while not stop.is_set():
            with lock:
                node = rnd.choice(list(live.values()))
            try:
                st, _, r = node.request("PUT", "/rep/_doc/w%d" % i, doc(i))
            except Exception as e:  # the node died under us: not acknowledged
                write_errors.append(repr(e))
                st = None
            if st in (200, 201):
                acked.add("w%d" % i)
            elif st is not None:
                write_errors.append((st, r))
            i += 1

    def searcher():
        while not stop.is_set():
            with lock:
                node = rnd.choice(list(live.values()))
            try:
                st, _, r = node.request("POST", "/rep/_search", {"query": {"match_all": {}},
                                                                "size": 1})
                searches.append(st if st == 200 else (st, r))
            except Exception:  # the chosen node was just killed
                pass
            time.sleep(0.02)

    threads = [threading.Thread(target=writer), threading.Thread(target=searcher)]
    for t in threads:
        t.start()
    try:
        time.sleep(2)
        victim = rnd.choice(sorted(live))
        with lock:
            dead = live.pop(victim)
        dead.stop(signal.SIGKILL)
        seen = set()
        survivor = next(iter(live.values()))

        def green_after_yellow():
            seen.add(health(survivor)["status"])
            return "yellow" in seen and health(survivor)["status"] == "green" and \
                health(survivor)["number_of_nodes"] == 2
        wait_until("health yellow then green after killing %s" % victim, green_after_yellow,
                   timeout=60, interval=0.05)
        time.sleep(1)
    finally:
        stop.set()
        for t in threads:
            t.join()
    print("acked %d writes, %d not acknowledged, %d searches" % (len(acked), len(write_errors),
                                                                   len(searches)))
    assert len(acked) > 20, write_errors[:5]
    assert searches and all(st == 200 for st in searches), [s for s in searches if s != 200][:5]
    check_all(live, acked)
    fenced_on = check_fencing(live)
    # kill another node (not the one the stale op was sent to): the copies recovered after the
    # first kill are now the only ones
    victim = [n for n in sorted(live) if n != fenced_on][0]
    live.pop(victim).stop(signal.SIGKILL)
    last = next(iter(live.values()))

    def alone():  # yellow: each primary on the last node, its replica unassigned
        h = health(last)
        return h["status"] == "yellow" and h["active_primary_shards"] == 6 and \
            h["number_of_nodes"] == 1 and h["unassigned_shards"] == 6
    wait_until("every shard has its primary on the last node", alone, timeout=30)
    check_all(live, acked)
    r = search(last, {"query": {"ids": {"values": ["fenced"]}}})
    assert r["hits"]["total"]["value"] == 0, r  # the refused operation was never applied


def uvar(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def wbytes(b):
    return uvar(len(b)) + b


def transport_call(addr, msg_type, body):
    """One frame to a node's transport port; (flags, response body)."""
    host, port = addr.rsplit(":", 1)
    frame = b"SCTP" + bytes([1, 0]) + struct.pack("<HQI", msg_type, 7, len(body)) + body
    with socket.create_connection((host, int(port)), timeout=10) as c:
        c.sendall(frame)
        head = b""
        while len(head) < 20:
            chunk = c.recv(20 - len(head))
            assert chunk, "connection closed"
            head += chunk
        flags = head[5]
        (length,) = struct.unpack("<I", head[16:20])
        data = b""
        while len(data) < length:
            data += c.recv(length - len(data))
    return flags, data


def check_fencing(live):
    """An operation carrying an older primary term than a shard's current one (a deposed
    primary's late write) is refused by the replica. Returns the replica's node name (the
    caller keeps it alive and checks the document never appears there)."""
    node = next(iter(live.values()))
    st, _, state = node.request("GET", "/_cluster/state/metadata,routing_table,nodes/rep")
    terms = state["metadata"]["indices"]["rep"]["primary_terms"]
    num = next((k for k, t in terms.items() if t >= 2), None)
    assert num is not None, terms  # the first kill promoted some replicas under term 2
    replica = [e for e in state["routing_table"]["indices"]["rep"]["shards"][num]
               if not e["primary"]][0]
    addr = state["nodes"][replica["node"]]["transport_address"]
    op = bytes([0]) + uvar(10 ** 6 * 2) + uvar(1) + uvar(1) + wbytes(b"fenced") + \
        wbytes(b'{"title":"late write of a deposed primary"}')
    # index shard term refresh(false) n_ops op
    body = wbytes(b"rep") + uvar(int(num)) + uvar(terms[num] - 1) + bytes([0]) + uvar(1) + op
    flags, data = transport_call(addr, 0x0301, body)
    assert flags & 2, "the stale-term operation was accepted"
    assert b"older than the current" in data, data
    return state["nodes"][replica["node"]]["name"]


def check_all(live, acked):
    for s in live.values():
        assert s.request("POST", "/rep/_refresh")[0] == 200
        # the search coordinator follows the routing a moment after _cluster/health does
        wait_until("searches on %s reach every shard" % s.url, lambda: search(
            s, {"size": 0})["_shards"]["failed"] == 0, timeout=10)
    ids = sorted(acked)
    for s in live.values():
        for k in range(0, len(ids), 500):
            chunk = ids[k:k + 500]
            r = search(s, {"query": {"ids": {"values": chunk}}, "size": len(chunk),
                           "_source": False})
            assert r["_shards"]["failed"] == 0, r["_shards"]
            found = {h["_id"] for h in r["hits"]["hits"]}
            assert found == set(chunk), sorted(set(chunk) - found)[:10]
        r = search(s, {"query": {"match_all": {}}, "size": 0, "track_total_hits": True})
        assert r["hits"]["total"]["value"] >= N_DOCS + len(acked), r["hits"]["total"]
