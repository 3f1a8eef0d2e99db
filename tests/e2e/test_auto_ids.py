"""Generated ids (`_bulk` items without `_id`, `POST /{index}/_doc`): their first attempt on the
primary does not look the id up (sc_shard_write_opts.append_only), so these check what must
still hold. A generated id's doc is found by a realtime GET before any refresh; a write that
names an earlier generated id (a user's, or the forms a forwarded first attempt and a retry
take: create and index with the id) looks it up: create conflicts, index answers "updated" with
version 2, and the count does not grow, with the doc buffered and in a segment. In a cluster of
two nodes (etcd), items forwarded to the other node's primaries and replicated to the replicas
land once: the counts of every primary and its replica are equal and sum to the docs sent."""
import json

from conftest import assert_error
from test_cluster import running_cluster, wait_green, wait_until

ND = {"Content-Type": "application/x-ndjson"}


def auto_bulk(index, docs):
    lines = []
    for d in docs:
        lines.append(json.dumps({"index": {"_index": index}}))
        lines.append(json.dumps(d))
    return "\n".join(lines) + "\n"


def load_auto(node, index, n, start=0):
    """n docs through one _bulk without ids and 3 through POST /_doc: the generated ids, in
    order, with their docs."""
    docs = [{"n": start + i, "t": "doc %d" % (start + i)} for i in range(n)]
    st, _, b = node.request("POST", "/_bulk", auto_bulk(index, docs), headers=ND)
    assert st == 200 and not b["errors"], b
    ids = []
    for it in b["items"]:
        r = it["index"]
        assert r["status"] == 201 and r["result"] == "created" and r["_version"] == 1, r
        ids.append(r["_id"])
    for k in range(3):
        d = {"n": start + n + k, "t": "single %d" % k}
        st, _, r = node.request("POST", "/%s/_doc" % index, d)
        assert st == 201 and r["result"] == "created" and r["_version"] == 1, r
        ids.append(r["_id"])
        docs.append(d)
    return ids, docs


def count(node, index):
    st, _, b = node.request("GET", "/%s/_count" % index)
    assert st == 200, b
    return b["count"]


def check_overwrites(node, index, ids, total):
    """Writes naming generated ids find them: every form of them."""
    a, b_, c, d = ids[0], ids[1], ids[2], ids[-1]
    body = "\n".join([
        json.dumps({"create": {"_index": index, "_id": a}}), json.dumps({"x": "create"}),
        json.dumps({"index": {"_index": index, "_id": b_}}), json.dumps({"x": "index"}),
    ]) + "\n"
    st, _, r = node.request("POST", "/_bulk", body, headers=ND)
    assert st == 200 and r["errors"] is True, r
    cr, ix = r["items"][0]["create"], r["items"][1]["index"]
    assert cr["status"] == 409, cr
    assert cr["error"]["type"] == "version_conflict_engine_exception", cr
    assert ix["status"] == 200 and ix["result"] == "updated" and ix["_version"] == 2, ix
    st, _, r = node.request("PUT", "/%s/_doc/%s" % (index, c), {"x": "put"})
    assert st == 200 and r["result"] == "updated" and r["_version"] == 2, r
    st, _, r = node.request("PUT", "/%s/_create/%s" % (index, d), {"x": "put-create"})
    assert st == 409, r
    assert_error(r, 409, "version_conflict_engine_exception")
    st, _, r = node.request("GET", "/%s/_doc/%s" % (index, b_))
    assert st == 200 and r["_source"] == {"x": "index"} and r["_version"] == 2, r
    st, _, r = node.request("GET", "/%s/_doc/%s" % (index, a))
    assert st == 200 and r["_version"] == 1 and "x" not in r["_source"], r
    assert node.request("POST", "/%s/_refresh" % index)[0] == 200
    assert count(node, index) == total


def test_generated_ids_realtime_get_and_overwrite(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 2, "refresh_interval": "-1"}})
    assert st == 200, b
    ids, docs = load_auto(server, fresh_index, 300)
    assert len(set(ids)) == len(ids) == 303
    # realtime: nothing was refreshed, every doc is in the buffer and found by id
    assert count(server, fresh_index) == 0
    for i, d in zip(ids, docs):
        st, _, r = server.request("GET", "/%s/_doc/%s" % (fresh_index, i))
        assert st == 200 and r["found"] and r["_source"] == d and r["_version"] == 1, r
    # buffered: a write naming a generated id finds it
    check_overwrites(server, fresh_index, ids[:2] + ids[2:3] + ids[-1:], 303)
    # in a segment (refreshed and flushed), new generated ids beside them
    assert server.request("POST", "/%s/_flush" % fresh_index)[0] == 200
    more, _ = load_auto(server, fresh_index, 50, start=1000)
    assert not set(more) & set(ids)
    check_overwrites(server, fresh_index, ids[10:13] + ids[-2:-1], 356)
    st, _, r = server.request("POST", "/%s/_search" % fresh_index,
                              {"size": 0, "track_total_hits": True})
    assert st == 200 and r["hits"]["total"]["value"] == 356, r


def test_generated_ids_in_a_cluster():
    with running_cluster("scry-autoid-", "autoid", names=("a1", "a2")) as run:
        n1, n2 = run.nodes["a1"], run.nodes["a2"]
        st, _, b = n1.request("PUT", "/auto", {
            "settings": {"number_of_shards": 4, "number_of_replicas": 1,
                         "refresh_interval": "-1"}})
        assert st == 200, b
        wait_green([n1, n2], "auto")
        ids1, docs1 = load_auto(n1, "auto", 200)
        ids2, docs2 = load_auto(n2, "auto", 200, start=1000)
        ids, docs = ids1 + ids2, docs1 + docs2
        assert len(set(ids)) == len(ids) == 406
        # realtime GET from the other node (forwarded to the primary)
        for node, some, sdocs in ((n2, ids1, docs1), (n1, ids2, docs2)):
            for i, d in list(zip(some, sdocs))[::7]:
                st, _, r = node.request("GET", "/auto/_doc/%s" % i)
                assert st == 200 and r["found"] and r["_source"] == d, r
        check_overwrites(n2, "auto", ids1[:3] + ids1[-1:], 406)
        check_overwrites(n1, "auto", ids2[:3] + ids2[-1:], 406)
        assert count(n1, "auto") == count(n2, "auto") == 406

        def copies_equal():  # a node reports the docs of the copies it holds
            per = {}
            for node in (n1, n2):
                st, _, rows = node.request("GET", "/_cat/shards/auto?format=json")
                assert st == 200 and len(rows) == 8, rows
                for row in rows:
                    if row["docs"] not in (None, "-"):
                        per.setdefault(row["shard"], {})[row["prirep"]] = int(row["docs"])
            assert len(per) == 4, per
            assert all(v.get("p") == v.get("r") for v in per.values()), per
            assert sum(v["p"] for v in per.values()) == 406, per
            return True

        wait_until("primaries and replicas hold the same docs", copies_equal)
