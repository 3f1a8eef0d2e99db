"""Refresh across the copies of a clustered index (issue 13, replication follow-ups): etcd +
three `scry serve --cluster` processes. Indices use refresh_interval -1, so only an explicit
refresh makes writes visible: a write with refresh=true is visible on every copy (replicas
refresh after applying the primary's operations) before it is acknowledged."""
import json

import pytest

from test_cluster import running_cluster, wait_until

SETTINGS = {"number_of_shards": 3, "number_of_replicas": 1, "refresh_interval": "-1"}


@pytest.fixture(scope="module")
def nodes():
    with running_cluster("scry-crefresh-", "crefresh") as run:
        yield run.nodes


def create_green(nodes, name):
    st, _, r = nodes["n1"].request("PUT", "/" + name, {"settings": SETTINGS})
    assert st == 200, r
    for s in nodes.values():
        wait_until("green on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % name)[0] == 200 and
            s.request("HEAD", "/" + name)[0] == 200)


def copy_docs(nodes, name):
    """{shard: [docs of each copy]} from each node's own rows of _cat/shards."""
    per = {}
    for node_name, node in nodes.items():
        st, _, rows = node.request("GET", "/_cat/shards/%s?format=json" % name)
        assert st == 200, rows
        for r in rows:
            if r["node"] == node_name:
                per.setdefault(r["shard"], []).append(int(r["docs"] or 0))
    return per


def bulk_body(index, ids):
    lines = []
    for i in ids:
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps({"n": i}))
    return "\n".join(lines) + "\n"


def test_refresh_true_write_is_visible_on_every_copy(nodes):
    create_green(nodes, "rt")
    st, _, r = nodes["n2"].request("POST", "/_bulk?refresh=true", bulk_body("rt", range(30)),
                                   headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    st, _, r = nodes["n3"].request("PUT", "/rt/_doc/extra?refresh=wait_for", {"n": 99})
    assert st == 201, r
    per = copy_docs(nodes, "rt")  # at once: no waiting, no explicit refresh
    assert len(per) == 3 and all(len(v) == 2 and v[0] == v[1] for v in per.values()), per
    assert sum(v[0] for v in per.values()) == 31, per


def test_bulk_right_after_create_on_another_node_uses_the_cluster_index(nodes):
    """A node that has not seen a just-created index yet waits for it (its metadata is in etcd
    once the create is acknowledged) instead of auto-creating a local one of 1 shard."""
    for k in range(5):
        name = "fresh%d" % k
        st, _, r = nodes["n1"].request("PUT", "/" + name, {"settings": SETTINGS})
        assert st == 200, r
        st, _, r = nodes["n3"].request("POST", "/_bulk?refresh=true",
                                       bulk_body(name, range(20)),
                                       headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r
        for s in nodes.values():
            # n2 took no part: it follows the new index within its watch delay
            wait_until("%s on %s" % (name, s.url), lambda s=s: s.request(
                "GET", "/%s/_settings" % name)[0] == 200, timeout=10)
            st, _, got = s.request("GET", "/%s/_settings" % name)
            assert st == 200, got
            assert got[name]["settings"]["index"]["number_of_shards"] == "3", got
            st, _, c = s.request("GET", "/%s/_count" % name)
            assert st == 200 and c["count"] == 20, c


def test_refresh_and_flush_reach_every_copy(nodes):
    create_green(nodes, "bc")
    st, _, r = nodes["n1"].request("POST", "/_bulk", bulk_body("bc", range(40)),
                                   headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    st, _, r = nodes["n2"].request("POST", "/bc/_refresh")
    assert st == 200 and r["_shards"] == {"total": 6, "successful": 6, "failed": 0}, r
    per = copy_docs(nodes, "bc")
    assert all(len(v) == 2 and v[0] == v[1] for v in per.values()), per
    assert sum(v[0] for v in per.values()) == 40, per
    st, _, r = nodes["n3"].request("POST", "/bc/_flush")
    assert st == 200 and r["_shards"] == {"total": 6, "successful": 6, "failed": 0}, r
    st, _, r = nodes["n1"].request("POST", "/_refresh")  # every index of the cluster
    assert st == 200 and r["_shards"]["failed"] == 0, r
    assert r["_shards"]["successful"] == r["_shards"]["total"] >= 6, r
