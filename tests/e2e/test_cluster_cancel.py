"""Cancellation and timeouts across nodes (issue 13): etcd + two `scry serve --cluster` nodes.

n1 coordinates and holds some shards of the index `slow`; n2 holds the others and runs with the
test-only `--test-search-delay 20s` (each shard query waits 20 s first, polling its cancellation
token), so a search through n1 is slow for real on n2 only.

* The coordinator's search is a task (`indices:data/read/search`) and n2's batch is a child task
  whose `parent_task_id` names it.
* Cancelling the search on n1 (task API, or the client closing its connection) cancels n2's child
  task: it disappears long before its 20 s wait would end, the client gets
  task_cancelled_exception, and n2 keeps serving.
* A `timeout` crosses nodes: n2 gets what is left of it, its shards stop there, and the answer has
  `timed_out: true` with n1's hits only (partial results, no shard failure)."""
import json
import socket
import threading

import pytest
import urllib3

from test_cluster import bulk_lines, bulk_on, create_on, running_cluster, wait_until

N_DOCS = 40
DELAY = "20s"  # far longer than any wait below: a child task gone before it was cancelled
CHILD = "indices:data/read/search[phase/query]"
PARENT = "indices:data/read/search"


@pytest.fixture(scope="module")
def env():
    def args(name):
        return ["--test-search-delay", DELAY] if name == "n2" else ["--log-level", "debug"]
    with running_cluster("scry-ccancel-", "cc", names=("n1", "n2"), args=args,
                         ttl="10s") as run:
        nodes, n1 = run.nodes, run.nodes["n1"]
        create_on([n1], "slow", {
            "settings": {"number_of_shards": 4, "number_of_replicas": 0},
            "mappings": {"properties": {"n": {"type": "long"}, "tag": {"type": "keyword"}}}})
        for s in nodes.values():
            wait_until("routing on " + s.url, lambda s=s: s.request(
                "GET", "/_cluster/health/slow?wait_for_status=green&timeout=1s")[0] == 200)
            wait_until("mapping on " + s.url, lambda s=s: "n" in s.request(
                "GET", "/slow/_mapping")[2]["slow"]["mappings"]["properties"])
        bulk_on([n1], bulk_lines("slow", N_DOCS, lambda i: {"n": i, "tag": "t%d" % (i % 3)}))
        # every node holds shards of `slow` (and documents on them)
        held = {}
        for name, s in nodes.items():  # a node counts the documents of its own copies
            st, _, rows = s.request("GET", "/_cat/shards/slow?format=json")
            assert st == 200, rows
            held[name] = sum(int(row["docs"]) for row in rows if row["node"] == name)
        assert all(held.values()) and sum(held.values()) == N_DOCS, held
        yield nodes, held


def tasks(node, actions):
    """{task id: task} of node's running tasks whose action matches the glob."""
    st, _, r = node.request("GET", "/_tasks?actions=" + actions)
    assert st == 200, r
    out = {}
    for n in r["nodes"].values():
        out.update(n["tasks"])
    return out


def children(node):
    return {k: t for k, t in tasks(node, "*search*").items() if t["action"] == CHILD}


def parent_and_child(nodes):
    """Waits until n1's search task and n2's child of it run; returns (parent id, child id)."""
    def both():
        p = [k for k, t in tasks(nodes["n1"], PARENT).items() if t["action"] == PARENT]
        c = children(nodes["n2"])
        if len(p) == 1 and len(c) == 1:
            return p[0], next(iter(c.items()))
        return None
    parent, (cid, child) = wait_until("the search's tasks", both, timeout=10)
    assert child["parent_task_id"] == parent, (parent, child)
    assert child["cancellable"] and not child["cancelled"]
    return parent, cid


def gone(node):
    return not children(node)


def healthy(node):
    """n2 answers, runs no search task, and searches again (its delay cut by a short timeout)."""
    st, _, r = node.request("GET", "/_cluster/health")
    assert st == 200 and r["number_of_nodes"] == 2, r
    assert not tasks(node, "*search*")
    st, _, r = node.request("POST", "/slow/_search?timeout=300ms", {"size": 0})
    assert st == 200 and r["timed_out"] is True and r["_shards"]["failed"] == 0, r
    assert r["hits"]["total"]["value"] < N_DOCS  # n2's shards stopped at their deadline


class Search(threading.Thread):
    """A search through n1 on a thread of its own: (status, body) in .result."""

    def __init__(self, node, path, body):
        super().__init__(daemon=True)
        self.url, self.path, self.body = node.url, path, body
        self.result = None

    def run(self):
        http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(60))
        r = http.request("POST", self.url + self.path, body=json.dumps(self.body).encode(),
                         headers={"Content-Type": "application/json"})
        self.result = (r.status, json.loads(r.data))


def test_cancel_through_the_task_api_reaches_the_data_node(env):
    nodes, held = env
    s = Search(nodes["n1"], "/slow/_search", {"query": {"match_all": {}}, "size": 50})
    s.start()
    parent, _ = parent_and_child(nodes)
    st, _, r = nodes["n1"].request("POST", "/_tasks/%s/_cancel" % parent)
    assert st == 200, r
    wait_until("n2's child task to stop", lambda: gone(nodes["n2"]), timeout=8)
    s.join(10)
    assert not s.is_alive(), "the search did not answer after its cancellation"
    st, r = s.result
    assert st == 400 and r["error"]["type"] == "task_cancelled_exception", r
    assert r["status"] == 400
    wait_until("n1's task to end", lambda: not tasks(nodes["n1"], PARENT), timeout=5)
    healthy(nodes["n2"])


def test_client_disconnect_cancels_the_data_nodes_work(env):
    nodes, held = env
    body = json.dumps({"query": {"match_all": {}}, "size": 50}).encode()
    sock = socket.create_connection(("127.0.0.1", nodes["n1"].port), timeout=10)
    sock.sendall(b"POST /slow/_search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) +
                 body)
    parent_and_child(nodes)
    sock.close()  # the client gives up
    wait_until("n2's child task to stop", lambda: gone(nodes["n2"]), timeout=8)
    wait_until("n1's task to end", lambda: not tasks(nodes["n1"], PARENT), timeout=5)
    healthy(nodes["n2"])


def test_timeout_crosses_nodes_with_partial_results(env):
    nodes, held = env
    st, _, r = nodes["n1"].request("POST", "/slow/_search?timeout=500ms",
                                   {"query": {"match_all": {}}, "size": 100,
                                    "track_total_hits": True})
    assert st == 200, r
    assert r["timed_out"] is True, r
    assert r["_shards"]["total"] == 4 and r["_shards"]["failed"] == 0, r["_shards"]
    # n1's shards answered in full; n2's stopped at the budget left when they were asked (had
    # the timeout not reached n2, its batch would fail as a transport timeout instead)
    assert r["hits"]["total"]["value"] == held["n1"], (r["hits"]["total"], held)
    assert len(r["hits"]["hits"]) == held["n1"]
    wait_until("n2's child task to end", lambda: gone(nodes["n2"]), timeout=5)

