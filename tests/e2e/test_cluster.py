"""Cluster membership and metadata on etcd (issue 13): a private etcd 3.4 on free loopback
ports with a temporary data dir, and three `scry serve --cluster` processes. Checks that every
node sees the same live nodes and exactly one master, that a SIGKILLed master is replaced and
disappears within a few seconds (the measured failover time is printed), that it rejoins after
a restart, that index metadata and a routing table (no two copies of a shard on one node) reach
etcd and every node, and that the cluster recovers after etcd itself is killed and restarted.
Also the single-node forms of _cat/nodes, _cluster/state and wait_for_nodes."""
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import urllib3

from conftest import Server

ETCD = os.environ.get("SCRY_ETCD", "/usr/bin/etcd")
TTL = "2s"  # etcd's minimum lease TTL: the fastest failover


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Etcd:
    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "etcd")
        self.client, self.peer = free_port(), free_port()
        self.url = "http://127.0.0.1:%d" % self.client
        self.proc = None
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(3))

    def start(self):
        c, p = self.url, "http://127.0.0.1:%d" % self.peer
        self.log = open(self.dir + ".log", "ab")
        self.proc = subprocess.Popen(
            [ETCD, "--name", "e2e", "--data-dir", self.dir, "--listen-client-urls", c,
             "--advertise-client-urls", c, "--listen-peer-urls", p,
             "--initial-advertise-peer-urls", p, "--initial-cluster", "e2e=" + p,
             "--log-level", "error"], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                if self.http.request("GET", self.url + "/version").status == 200:
                    return self
            except urllib3.exceptions.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("etcd did not start")

    def kill(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def range_prefix(self, prefix):
        """{key: value} of every key under prefix."""
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        body = {"key": base64.b64encode(prefix.encode()).decode(),
                "range_end": base64.b64encode(end.encode()).decode()}
        r = self.http.request("POST", self.url + "/v3/kv/range", body=json.dumps(body).encode())
        out = {}
        for kv in json.loads(r.data).get("kvs", []):
            out[base64.b64decode(kv["key"]).decode()] = base64.b64decode(
                kv.get("value", "")).decode()
        return out


def wait_until(what, fn, timeout=20.0, interval=0.1):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = fn()
            if last:
                return last
        except (urllib3.exceptions.HTTPError, ValueError, KeyError, TypeError,
                AssertionError) as e:
            last = e
        time.sleep(interval)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


class Running:
    """What running_cluster started: the temp folder, etcd, the nodes by name, their transport
    ports by name and the single node beside them (or None)."""

    def __init__(self, tmp, etcd):
        self.tmp, self.etcd, self.nodes, self.tports, self.single = tmp, etcd, {}, {}, None

    def servers(self):
        return list(self.nodes.values()) + ([self.single] if self.single else [])


def _stop_all(run, check):
    """Stops every live server (SIGKILL when not checking: a failed start), then etcd; with
    `check`, a server that exits non-zero fails the test after everything is stopped."""
    bad = []
    try:
        for s in run.servers():
            if s.alive():
                rc = s.stop() if check else s.stop(sig=signal.SIGKILL)
                if check and rc != 0:
                    bad.append("exit code %s; log:\n%s" % (rc, s.read_log()))
    finally:  # a node that did not stop is killed, and etcd goes too
        for s in run.servers():
            if s.alive():
                s.stop(sig=signal.SIGKILL)
        run.etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(run.tmp, ignore_errors=True)
    assert not bad, bad[0]


@contextlib.contextmanager
def running_cluster(prefix, cluster_name, names=("n1", "n2", "n3"), args=None, single=False,
                    ttl=TTL):
    """etcd and one node per name joined as `cluster_name` (and with `single` a plain single
    node beside them) in one temp folder, every node seen by the first; `args(name)` gives a
    node's extra flags and `ttl` is the lease TTL.
    At the end every server is stopped and one that exits non-zero fails the test; when
    starting fails, everything started is killed."""
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix=prefix)
    run = Running(tmp, Etcd(tmp).start())
    try:
        for name in names:
            run.tports[name] = free_port()
            run.nodes[name] = Server(os.path.join(tmp, name), [
                "--cluster", "etcd=" + run.etcd.url, "--node-name", name,
                "--cluster-name", cluster_name, "--transport-port", str(run.tports[name]),
                "--lease-ttl", ttl] + (args(name) if args else [])).start()
        if single:
            run.single = Server(os.path.join(tmp, "single")).start()
        first = run.nodes[names[0]]
        wait_until("%d nodes" % len(names), lambda: first.request(
            "GET", "/_cluster/health?wait_for_nodes=%d&timeout=1s" % len(names))[0] == 200)
        yield run
    except BaseException:
        _stop_all(run, False)
        raise
    _stop_all(run, True)


def create_on(servers, index, body):
    """PUT /{index} with `body` on each server (a cluster's node and a single node, say)."""
    for s in servers:
        st, _, r = s.request("PUT", "/" + index, body)
        assert st == 200, r


def wait_green(nodes, index):
    """Every node has `index` and sees it green."""
    for s in nodes:
        wait_until("%s green on %s" % (index, s.url), lambda s=s: s.request(
            "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % index)[0] == 200
            and s.request("HEAD", "/" + index)[0] == 200)


def bulk_on(servers, body):
    """POST /_bulk?refresh=true of an NDJSON body on each server, with no item failing."""
    for s in servers:
        st, _, r = s.request("POST", "/_bulk?refresh=true", body,
                             headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r


def bulk_lines(index, n, doc):
    """The NDJSON of `index` actions for ids 0..n-1 with sources doc(i)."""
    lines = []
    for i in range(n):
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps(doc(i)))
    return "\n".join(lines) + "\n"


def cat_nodes(node):
    st, _, body = node.request("GET", "/_cat/nodes?format=json&h=name,master,id,ip")
    assert st == 200, body
    return body


def view_of(node):
    """(sorted names, master name) as this node sees it."""
    rows = cat_nodes(node)
    masters = [r["name"] for r in rows if r["master"] == "*"]
    return sorted(r["name"] for r in rows), masters


@pytest.fixture(scope="module")
def cluster():
    with running_cluster("scry-cluster-", "e2e") as run:
        yield run.etcd, run.nodes


def converged(nodes, names):
    """The common (names, master) when every node in `nodes` sees exactly `names` and the same
    single master; else None."""
    views = [view_of(s) for s in nodes]
    if all(v[0] == sorted(names) and len(v[1]) == 1 and v[1] == views[0][1] for v in views):
        return views[0][1][0]
    return None


def routing(node, index):
    st, _, body = node.request("GET", "/_cluster/state/routing_table,metadata,master_node/" + index)
    assert st == 200, body
    return body


def check_routing(state, index, live_ids, n_shards, copies):
    shards = state["routing_table"]["indices"][index]["shards"]
    assert len(shards) == n_shards
    for num, entries in shards.items():
        assigned = [e for e in entries if e["node"] is not None]
        nodes = [e["node"] for e in assigned]
        assert len(nodes) == len(set(nodes)), "two copies of %s/%s on one node" % (index, num)
        assert set(nodes) <= set(live_ids), (nodes, live_ids)
        assert len(assigned) == copies, entries
        assert sum(e["primary"] for e in assigned) == 1, entries
    return True


def node_ids(node):
    return {r["name"]: r["id"] for r in cat_nodes(node)}


def test_membership_and_single_master(cluster):
    etcd, nodes = cluster
    master = wait_until("3 nodes and one master everywhere",
                        lambda: converged(nodes.values(), nodes.keys()))
    assert master in nodes
    for s in nodes.values():
        st, _, h = s.request("GET", "/_cluster/health?wait_for_nodes=3&timeout=5s")
        assert st == 200 and h["number_of_nodes"] == 3 and h["number_of_data_nodes"] == 3, h
        st, _, cs = s.request("GET", "/_cluster/state/master_node,nodes")
        assert cs["cluster_name"] == "e2e"
        assert cs["nodes"][cs["master_node"]]["name"] == master
        assert len(cs["nodes"]) == 3
    keys = etcd.range_prefix("/scry/e2e/")
    assert len([k for k in keys if k.startswith("/scry/e2e/nodes/")]) == 3
    assert json.loads(keys["/scry/e2e/master"])["name"] == master
    st, _, text = nodes["n1"].request("GET", "/_cat/nodes?v")
    header = text.splitlines()[0].split()
    assert header == ["ip", "heap.percent", "ram.percent", "cpu", "load_1m", "load_5m",
                      "load_15m", "node.role", "master", "name"]


def test_index_metadata_and_routing(cluster):
    etcd, nodes = cluster
    s = nodes["n2"]
    st, _, body = s.request("PUT", "/logs", {"settings": {"number_of_shards": 6,
                                                           "number_of_replicas": 1}})
    assert st == 200, body
    meta = wait_until("index metadata in etcd",
                      lambda: etcd.range_prefix("/scry/e2e/indices/").get("/scry/e2e/indices/logs"))
    assert json.loads(meta)["settings"]["index"]["number_of_shards"] == "6"
    ids = node_ids(s)
    for n in nodes.values():
        state = wait_until("routing of logs on " + n.url,
                           lambda: routing(n, "logs") if "logs" in routing(n, "logs").get(
                               "routing_table", {}).get("indices", {}) else None)
        check_routing(state, "logs", ids.values(), 6, 2)
        assert "logs" in state["metadata"]["indices"]
        assert state["metadata"]["indices"]["logs"]["primary_terms"] == {str(i): 1 for i in range(6)}
    # evenly spread: 12 copies, 4 per node
    shards = routing(s, "logs")["routing_table"]["indices"]["logs"]["shards"]
    per_node = {}
    for entries in shards.values():
        for e in entries:
            per_node[e["node"]] = per_node.get(e["node"], 0) + 1
    assert sorted(per_node.values()) == [4, 4, 4], per_node
    # only the primaries start in sync; each replica is INITIALIZING (yellow) until its peer
    # recovery from the primary completed, then green
    st, _, h = s.request("GET", "/_cluster/health/logs?wait_for_status=green&timeout=30s")
    assert h["status"] == "green" and h["active_shards"] == 12, h
    for n in nodes.values():
        state = wait_until("every copy in sync on " + n.url, lambda: routing(n, "logs") if all(
            len(v) == 2 for v in routing(n, "logs")["metadata"]["indices"]["logs"][
                "in_sync_allocations"].values()) else None)
        st, _, rows = n.request("GET", "/_cat/shards/logs?format=json")
        assert st == 200 and len(rows) == 12, rows
        assert all(r["state"] == "STARTED" and r["node"] in nodes for r in rows), rows
        for num in range(6):
            on = [r["node"] for r in rows if r["shard"] == str(num)]
            assert len(set(on)) == 2, rows
            assert sorted(r["prirep"] for r in rows if r["shard"] == str(num)) == ["p", "r"]


def test_master_failover_and_rejoin(cluster):
    etcd, nodes = cluster
    master = wait_until("a master", lambda: converged(nodes.values(), nodes.keys()))
    ids = node_ids(nodes[master])
    before = routing(nodes[master], "logs")
    t0 = time.time()
    nodes[master].stop(signal.SIGKILL)
    rest = [n for n in nodes if n != master]
    new_master = wait_until("a new master without the killed node",
                            lambda: converged([nodes[n] for n in rest], rest), timeout=20)
    failover = time.time() - t0
    print("\nfailover: SIGKILL of master %s -> %s is master and %s is gone on both: %.2fs "
          "(lease TTL %s)" % (master, new_master, master, failover, TTL))
    assert new_master != master
    # shards whose primary was on the dead node are promoted under term 2 (their replicas
    # recovered and are in sync); nothing stays on it
    live = [ids[n] for n in rest]

    def promoted():
        st = routing(nodes[new_master], "logs")
        check_routing(st, "logs", live, 6, 2)
        return st
    after = wait_until("routing over the two survivors", promoted)
    terms = after["metadata"]["indices"]["logs"]["primary_terms"]
    for num, entries in before["routing_table"]["indices"]["logs"]["shards"].items():
        was = [e for e in entries if e["primary"]][0]["node"]
        assert terms[num] == (2 if was == ids[master] else 1), (num, terms)
    # the killed node comes back with its data folder (same node id) and rejoins; its copies
    # are new replicas that recover from the primaries
    nodes[master].start(wait_recovered=False)
    wait_until("rejoin", lambda: converged(nodes.values(), nodes.keys()))
    wait_until("routing over three nodes",
               lambda: check_routing(routing(nodes[rest[0]], "logs"), "logs", ids.values(), 6, 2))
    st, _, h = nodes[rest[0]].request("GET",
                                      "/_cluster/health/logs?wait_for_status=green&timeout=30s")
    assert h["status"] == "green", h


def test_etcd_restart(cluster):
    etcd, nodes = cluster
    wait_until("a master", lambda: converged(nodes.values(), nodes.keys()))
    etcd.kill()
    time.sleep(3)  # longer than the lease TTL: every node's session is lost
    for s in nodes.values():  # the HTTP API keeps answering from the cached view
        st, _, _ = s.request("GET", "/_cat/nodes")
        assert st == 200
    etcd.start()
    master = wait_until("re-registration after the etcd restart",
                        lambda: converged(nodes.values(), nodes.keys()), timeout=30)
    assert master in nodes
    keys = etcd.range_prefix("/scry/e2e/")
    assert len([k for k in keys if k.startswith("/scry/e2e/nodes/")]) == 3
    assert "/scry/e2e/routing/logs" in keys


def test_etcd_data_loss(cluster):
    """etcd comes back empty: nodes register again, elect a master, the index's owner publishes
    its metadata again and the master allocates it anew."""
    etcd, nodes = cluster
    wait_until("a master", lambda: converged(nodes.values(), nodes.keys()))
    etcd.kill()
    shutil.rmtree(etcd.dir)
    etcd.start()
    # the nodes' views can still be the ones from before the loss when this first holds, so
    # the live node ids are read again with each routing check below
    wait_until("re-registration in an empty etcd",
               lambda: converged(nodes.values(), nodes.keys()), timeout=30)
    wait_until("index metadata published again",
               lambda: "/scry/e2e/indices/logs" in etcd.range_prefix("/scry/e2e/indices/"))
    for n in nodes.values():
        wait_until("routing of logs again", lambda: len(node_ids(nodes["n1"])) == 3 and
                   check_routing(routing(n, "logs"), "logs", node_ids(nodes["n1"]).values(), 6, 2),
                   timeout=30)


def test_cluster_settings_shared(cluster):
    etcd, nodes = cluster
    st, _, body = nodes["n1"].request("PUT", "/_cluster/settings", {
        "persistent": {"cluster.routing.allocation.enable": "all"},
        "transient": {"indices": {"recovery": {"max_bytes_per_sec": "50mb"}}}})
    assert st == 200 and body["acknowledged"], body
    assert body["persistent"] == {"cluster": {"routing": {"allocation": {"enable": "all"}}}}
    for s in nodes.values():  # every node reads the same document from etcd
        st, _, got = s.request("GET", "/_cluster/settings?flat_settings=true")
        assert got == {"persistent": {"cluster.routing.allocation.enable": "all"},
                       "transient": {"indices.recovery.max_bytes_per_sec": "50mb"}}, got
    st, _, body = nodes["n2"].request("PUT", "/_cluster/settings", {
        "persistent": {"cluster.routing.allocation.enable": None}, "transient": {"a.b": 1}})
    assert st == 200, body
    st, _, got = nodes["n3"].request("GET", "/_cluster/settings")
    assert got == {"persistent": {}, "transient": {"a": {"b": "1"}, "indices": {
        "recovery": {"max_bytes_per_sec": "50mb"}}}}, got
    assert "/scry/e2e/settings" in etcd.range_prefix("/scry/e2e/settings")


def test_snapshot_repository_needs_path_repo_when_clustered(cluster):
    """Snapshots in a cluster are tested in test_cluster_meta.py; these nodes have no
    path.repo: a repository is refused as on a single node."""
    etcd, nodes = cluster
    st, _, b = nodes["n1"].request("PUT", "/_snapshot/r",
                                   {"type": "fs", "settings": {"location": "r"}})
    assert st == 400 and b["error"]["type"] == "repository_exception", b


def test_graceful_stop_leaves_at_once(cluster):
    etcd, nodes = cluster
    wait_until("a master", lambda: converged(nodes.values(), nodes.keys()))
    n3_id = node_ids(nodes["n1"])["n3"]
    assert nodes["n3"].stop() == 0
    # the lease was revoked before the process exited: its key is gone at once, not after the TTL
    assert "/scry/e2e/nodes/" + n3_id not in etcd.range_prefix("/scry/e2e/nodes/")
    wait_until("n3 gone", lambda: converged([nodes["n1"], nodes["n2"]], ["n1", "n2"]))
    nodes["n3"].start(wait_recovered=False)
    wait_until("n3 back", lambda: converged(nodes.values(), nodes.keys()))


def test_single_node_views(server):
    st, _, rows = server.request("GET", "/_cat/nodes?format=json")
    assert st == 200 and len(rows) == 1 and rows[0]["master"] == "*", rows
    st, _, cs = server.request("GET", "/_cluster/state")
    assert cs["master_node"] in cs["nodes"]
    st, _, _ = server.request("PUT", "/single-view", {"settings": {"number_of_shards": 2}})
    assert st == 200
    st, _, cs = server.request("GET", "/_cluster/state/routing_table/single-view")
    shards = cs["routing_table"]["indices"]["single-view"]["shards"]
    for entries in shards.values():
        assert [e["state"] for e in entries] == ["STARTED", "UNASSIGNED"], entries
        assert entries[0]["primary"] and entries[0]["node"] == cs.get("master_node", entries[0]["node"])
    st, _, rows = server.request("GET", "/_cat/shards/single-view?format=json")
    assert [(r["shard"], r["prirep"], r["state"]) for r in rows] == [
        ("0", "p", "STARTED"), ("0", "r", "UNASSIGNED"), ("1", "p", "STARTED"),
        ("1", "r", "UNASSIGNED")], rows
    assert rows[0]["docs"] == "0" and rows[1]["node"] is None
    st, _, h = server.request("GET", "/_cluster/health?wait_for_nodes=1")
    assert st == 200 and h["number_of_nodes"] == 1
    st, _, h = server.request("GET", "/_cluster/health?wait_for_nodes=>=2&timeout=100ms")
    assert st == 408 and h["timed_out"], h
    st, _, body = server.request("GET", "/_cluster/health?wait_for_nodes=x")
    assert st == 400
    st, _, body = server.request("GET", "/_cluster/state/bogus")
    assert st == 400
    st, _, body = server.request("PUT", "/_cluster/settings", {
        "persistent": {"search": {"batched_query_phase": False}}, "transient": {"x": [1, "a"]}})
    assert st == 200 and body["persistent"] == {"search": {"batched_query_phase": "false"}}, body
    st, _, got = server.request("GET", "/_cluster/settings?flat_settings=true")
    assert got["persistent"]["search.batched_query_phase"] == "false"
    assert got["transient"]["x"] == ["1", "a"]
    st, _, body = server.request("PUT", "/_cluster/settings", {"persistent": {"a": {"b": [{}]}}})
    assert st == 400 and body["error"]["type"] == "illegal_argument_exception", body
    st, _, body = server.request("PUT", "/_cluster/settings", {"other": {}})
    assert st == 400, body
    server.request("PUT", "/_cluster/settings", {"persistent": {"search.batched_query_phase": None},
                                                 "transient": {"x": None}})
    st, _, got = server.request("GET", "/_cluster/settings")
    assert got == {"persistent": {}, "transient": {}}, got
    server.request("DELETE", "/single-view")


def test_bad_cluster_flags():
    from conftest import scry_bin
    tmp = tempfile.mkdtemp(prefix="scry-cluster-flags-")
    for args in (["--cluster", "etcd=127.0.0.1:2379"], ["--cluster", "etcd="],
                 ["--transport-port", "70000"], ["--lease-ttl", "10ms"]):
        p = subprocess.run([scry_bin(), "serve", "--data", os.path.join(tmp, "d"), "--port", "0"]
                           + args, capture_output=True, timeout=30)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


class EtcdCluster:
    """Three etcd members on loopback (one temporary data dir each)."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.members = []
        for i in range(3):
            self.members.append({"name": "m%d" % i, "client": free_port(), "peer": free_port(),
                                 "proc": None})
        self.initial = ",".join("%s=http://127.0.0.1:%d" % (m["name"], m["peer"])
                                for m in self.members)
        self.urls = ["http://127.0.0.1:%d" % m["client"] for m in self.members]
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(2))

    def start(self):
        for m in self.members:
            c, p = "http://127.0.0.1:%d" % m["client"], "http://127.0.0.1:%d" % m["peer"]
            log = open(os.path.join(self.tmp, m["name"] + ".log"), "ab")
            m["proc"] = subprocess.Popen(
                [ETCD, "--name", m["name"], "--data-dir", os.path.join(self.tmp, m["name"]),
                 "--listen-client-urls", c, "--advertise-client-urls", c,
                 "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
                 "--initial-cluster", self.initial, "--initial-cluster-token", "scry-e2e",
                 "--log-level", "error"], stdout=log, stderr=subprocess.STDOUT)

        def healthy():
            r = self.http.request("GET", self.urls[0] + "/health")
            return r.status == 200 and json.loads(r.data).get("health") == "true"
        wait_until("a 3-member etcd", healthy, timeout=30)
        return self

    def leases(self, url, prefix):
        """{key: lease id} under prefix, read from member `url`."""
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        body = {"key": base64.b64encode(prefix.encode()).decode(),
                "range_end": base64.b64encode(end.encode()).decode()}
        r = self.http.request("POST", url + "/v3/kv/range", body=json.dumps(body).encode())
        return {base64.b64decode(kv["key"]).decode(): kv.get("lease")
                for kv in json.loads(r.data).get("kvs", [])}

    def kill(self, i):
        p = self.members[i]["proc"]
        if p:
            p.kill()
            p.wait()
            self.members[i]["proc"] = None

    def stop(self):
        for i in range(3):
            self.kill(i)


def test_etcd_member_failover():
    """Nodes given all three etcd members keep their leases, master, watch and metadata writes
    when the member they were using dies (the client fails over to the next endpoint). With a
    2 s lease an etcd leader election (the first member is usually the leader) can outlast the
    TTL: keepalives fail meanwhile, the master stops acting as one, and both resume on the same
    leases once the new etcd leader (which extends every lease) answers. SCRY_E2E3_TTL changes
    the TTL."""
    tmp = tempfile.mkdtemp(prefix="scry-cluster3-")
    etcd = EtcdCluster(tmp).start()
    eps = ",".join(etcd.urls)
    nodes = {name: Server(os.path.join(tmp, name), [
        "--cluster", "etcd=" + eps, "--node-name", name, "--cluster-name", "e2e3",
        "--lease-ttl", os.environ.get("SCRY_E2E3_TTL", "2s")]).start() for name in ("a", "b")}
    try:
        master = wait_until("2 nodes, one master", lambda: converged(nodes.values(), nodes.keys()))
        before = etcd.leases(etcd.urls[1], "/scry/e2e3/")
        etcd.kill(0)  # the first endpoint: every client started on it
        time.sleep(6)  # longer than the lease TTL: keepalives must have moved to another member
        assert converged(nodes.values(), nodes.keys()) == master
        after = etcd.leases(etcd.urls[1], "/scry/e2e3/")
        assert before == after and len(after) == 3, (before, after)  # 2 nodes + master
        st, _, body = nodes["b"].request("PUT", "/after", {"settings": {"number_of_shards": 2,
                                                                         "number_of_replicas": 1}})
        assert st == 200, body
        ids = node_ids(nodes["a"])
        for n in nodes.values():
            wait_until("routing of a new index via the other members", lambda: check_routing(
                routing(n, "after"), "after", ids.values(), 2, 2))
    finally:
        for s in nodes.values():
            if s.alive():
                assert s.stop() == 0, s.read_log()
        etcd.stop()
        shutil.rmtree(tmp, ignore_errors=True)
