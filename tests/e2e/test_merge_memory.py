"""index.merge.memory (issue 17, item 14): a merge under a tiny memory limit spills to temporary
files in the shard folder and must give the same index as one under the default limit (search
hits and scores, phrase matches, doc values through sorts and aggregations, stored sources),
leaving no spill file behind; spill files a crash left are removed at the next open. Randomized:
the seed is printed."""
import json
import os
import random
import tempfile

from conftest import Server, assert_error

VOCAB = ["w%d" % i for i in range(400)] + ["the"] * 60


def docs(seed, n):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        body = " ".join(rnd.choice(VOCAB) for _ in range(rnd.randint(3, 40)))
        out.append({"_id": "d%05d" % i, "body": body, "tag": rnd.choice(["a", "b", "c", "d"]),
                    "tags": rnd.sample(["x%d" % k for k in range(30)], rnd.randint(0, 3)),
                    "n": rnd.randint(-1000, 1000), "when": 1600000000000 + i * 1000})
    return out


def load(srv, ix, settings, items, rnd):
    st, h, b = srv.request("PUT", "/" + ix, {
        "settings": dict({"number_of_shards": 1, "refresh_interval": "-1"}, **settings),
        "mappings": {"properties": {"body": {"type": "text"}, "tag": {"type": "keyword"},
                                    "tags": {"type": "keyword"}, "n": {"type": "long"},
                                    "when": {"type": "date"}}}})
    assert st == 200, b
    # several segments (one per refresh) and some deletes, the same for both indices
    for k in range(0, len(items), 700):
        lines = []
        for d in items[k:k + 700]:
            src = {key: v for key, v in d.items() if key != "_id"}
            lines.append(json.dumps({"index": {"_id": d["_id"]}}) + "\n" + json.dumps(src) + "\n")
        st, h, b = srv.request("POST", "/%s/_bulk" % ix, "".join(lines))
        assert st == 200 and not b["errors"], b
        assert srv.request("POST", "/%s/_refresh" % ix)[0] == 200
    for d in rnd:
        assert srv.request("DELETE", "/%s/_doc/%s" % (ix, d))[0] == 200
    assert srv.request("POST", "/%s/_refresh" % ix)[0] == 200
    st, h, b = srv.request("POST", "/%s/_forcemerge?max_num_segments=1" % ix)
    assert st == 200, b
    assert srv.request("POST", "/%s/_refresh" % ix)[0] == 200


def answers(srv, ix):
    bodies = [
        {"query": {"match": {"body": "the w7 w12"}}, "size": 50},
        {"query": {"match_phrase": {"body": "the w3"}}, "size": 50},
        {"query": {"range": {"n": {"gte": -100, "lt": 300}}}, "size": 30,
         "sort": [{"n": "desc"}, {"when": "asc"}]},
        {"query": {"term": {"tags": "x5"}}, "size": 30, "sort": [{"tag": "asc"}, {"_id": "asc"}],
         "docvalue_fields": ["tags", "when"]},
        {"size": 0, "aggs": {"t": {"terms": {"field": "tag"}, "aggs": {"s": {"stats": {"field": "n"}}}},
                             "x": {"terms": {"field": "tags", "size": 40}},
                             "h": {"date_histogram": {"field": "when", "fixed_interval": "1h"}}}},
        {"query": {"match_all": {}}, "size": 100, "sort": [{"_id": "desc"}]},
    ]
    out = []
    for q in bodies:
        st, h, b = srv.request("POST", "/%s/_search" % ix, q)
        assert st == 200, b
        hits = [(x["_id"], x.get("_score"), x.get("sort"), x.get("fields"), x["_source"])
                for x in b["hits"]["hits"]]
        out.append((b["hits"]["total"], hits, b.get("aggregations")))
    return out


def shard_dir(srv, data, ix):
    uuid = srv.request("GET", "/" + ix)[2][ix]["settings"]["index"]["uuid"]
    return os.path.join(data, "indices", uuid, "0")


def test_merge_memory_setting_validated(server):
    for bad in ["0", "x", "-5mb", True]:
        st, h, b = server.request("PUT", "/mm-bad", {"settings": {"index.merge.memory": bad}})
        assert_error(b, 400, "illegal_argument_exception")
        assert "index.merge.memory" in b["error"]["reason"], b
    st, h, b = server.request("PUT", "/mm-ok", {"settings": {"index": {"merge": {"memory": "64mb"}}}})
    assert st == 200, b
    st, h, b = server.request("GET", "/mm-ok/_settings")
    assert st == 200 and "64mb" in json.dumps(b["mm-ok"]["settings"]), b


def test_merge_under_tiny_limit_equals_default():
    seed = random.randrange(1 << 30)
    print("seed", seed)
    items = docs(seed, 4000)
    gone = random.Random(seed).sample([d["_id"] for d in items], 300)
    tmp = tempfile.mkdtemp(prefix="scry-mm-")
    data = os.path.join(tmp, "data")
    srv = Server(data).start()
    try:
        load(srv, "big", {}, items, gone)
        load(srv, "tiny", {"index.merge.memory": "1b"}, items, gone)
        assert answers(srv, "tiny") == answers(srv, "big")
        for ix in ["big", "tiny"]:
            st, h, b = srv.request("GET", "/%s/_count" % ix)
            assert b["count"] == 4000 - 300, b
            segs = srv.request("GET", "/%s/_segments" % ix)[2]
            assert sum(len(c["segments"]) for cs in segs["indices"][ix]["shards"].values()
                       for c in cs) == 1, segs
        stats = srv.request("GET", "/tiny,big/_stats")[2]["indices"]
        assert stats["tiny"]["total"]["merges"]["total_spilled_size_in_bytes"] > 0, stats
        assert stats["big"]["total"]["merges"]["total_spilled_size_in_bytes"] == 0, stats
        for ix in ["big", "tiny"]:
            left = [f for f in os.listdir(shard_dir(srv, data, ix)) if "spill" in f]
            assert not left, left
    finally:
        srv.stop()


def test_spill_leftovers_removed_at_open():
    tmp = tempfile.mkdtemp(prefix="scry-mm-")
    data = os.path.join(tmp, "data")
    srv = Server(data).start()
    try:
        srv.request("PUT", "/sp", {"settings": {"number_of_shards": 1}})
        st, h, b = srv.request("POST", "/sp/_bulk?refresh=true",
                               '{"index":{"_id":"1"}}\n{"a":1}\n')
        assert st == 200 and not b["errors"], b
        shard = shard_dir(srv, data, "sp")
        assert srv.stop() == 0
        leftovers = [".seg00000007.postings.spill.tmp", ".seg00000007.terms.spill.tmp"]
        for name in leftovers:
            with open(os.path.join(shard, name), "wb") as f:
                f.write(b"x" * 5000)
        srv.start()
        assert not set(leftovers) & set(os.listdir(shard))
        st, h, b = srv.request("GET", "/sp/_count")
        assert st == 200 and b["count"] == 1, b
    finally:
        srv.stop()
