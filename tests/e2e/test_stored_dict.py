"""Stored fields of segment format v10 (a per-segment zstd dictionary, issue 17 item 11) through
the real server: after three refreshed batches, deletes and a force merge to one segment (the
merge trains the merged segment's dictionary and recompresses every block), every _source
comes back byte for byte, and fetch, sort, aggregations and `ids` queries on _id still work."""
import json
import random


def test_sources_and_ids_after_dictionary_merge(server, fresh_index):
    ix = fresh_index
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rnd = random.Random(seed)
    vocab = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 10)))
             for _ in range(3000)]
    st, _, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"},
        "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                                    "tag": {"type": "keyword"}, "n": {"type": "long"}}}})
    assert st == 200, b
    docs = {}
    for batch in range(3):
        lines = []
        for i in range(batch * 600, batch * 600 + 600):
            words = [vocab[rnd.randrange(1 + rnd.randrange(len(vocab)))]
                     for _ in range(rnd.randint(20, 80))]
            doc = {"title": " ".join(words[:3]), "body": " ".join(words),
                   "tag": "t%d" % (i % 13), "n": i}
            docs["d%d" % i] = doc
            lines.append(json.dumps({"index": {"_index": ix, "_id": "d%d" % i}}))
            lines.append(json.dumps(doc))
        st, _, b = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                  headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"], b
    for i in range(0, 1800, 7):  # deletes: the merge re-packs the blocks around them
        st, _, b = server.request("DELETE", "/%s/_doc/d%d" % (ix, i))
        assert st == 200, b
        del docs["d%d" % i]
    st, _, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % ix)
    assert st == 200, b
    st, _, b = server.request("GET", "/%s/_segments" % ix)
    segs = b["indices"][ix]["shards"]["0"][0]["segments"]
    assert len(segs) == 1 and list(segs.values())[0]["num_docs"] == len(docs), segs
    st, _, u = server.request("POST", "/%s/_disk_usage?run_expensive_tasks=true" % ix)
    raw = sum(len(json.dumps(d)) for d in docs.values())
    src_bytes = u[ix]["fields"]["_source"]["stored_fields_in_bytes"]
    assert 0 < src_bytes < raw, (src_bytes, raw)

    # every source back exactly (get by id)
    for did in rnd.sample(sorted(docs), 200):
        st, _, b = server.request("GET", "/%s/_doc/%s" % (ix, did))
        assert st == 200 and b["_id"] == did and b["_source"] == docs[did], (did, b)
    # search fetch with and without _source
    st, _, b = server.request("POST", "/%s/_search" % ix,
                              {"size": 50, "sort": [{"n": "asc"}], "query": {"match_all": {}}})
    assert st == 200, b
    want = ["d%d" % d["n"] for d in sorted(docs.values(), key=lambda d: d["n"])[:50]]
    assert [h["_id"] for h in b["hits"]["hits"]] == want, b
    assert all(h["_source"] == docs[h["_id"]] for h in b["hits"]["hits"])
    st, _, b = server.request("POST", "/%s/_search" % ix,
                              {"size": 20, "_source": False, "sort": [{"n": "desc"}]})
    top = sorted(docs.values(), key=lambda d: -d["n"])[:20]
    assert [h["_id"] for h in b["hits"]["hits"]] == ["d%d" % d["n"] for d in top], b
    # ids query and mget
    pick = rnd.sample(sorted(docs), 10) + ["d0", "missing"]
    st, _, b = server.request("POST", "/%s/_search" % ix,
                              {"size": 20, "query": {"ids": {"values": pick}}})
    assert sorted(h["_id"] for h in b["hits"]["hits"]) == sorted(p for p in pick if p in docs)
    assert all(h["_source"] == docs[h["_id"]] for h in b["hits"]["hits"])
    st, _, b = server.request("POST", "/%s/_mget" % ix, {"ids": pick})
    assert [d["found"] for d in b["docs"]] == [p in docs for p in pick], b
    # a terms aggregation next to fetched hits
    st, _, b = server.request("POST", "/%s/_search" % ix,
                              {"size": 3, "aggs": {"t": {"terms": {"field": "tag", "size": 20}}}})
    counts = {}
    for d in docs.values():
        counts[d["tag"]] = counts.get(d["tag"], 0) + 1
    assert {x["key"]: x["doc_count"] for x in b["aggregations"]["t"]["buckets"]} == counts, b
    assert all(h["_source"] == docs[h["_id"]] for h in b["hits"]["hits"])
