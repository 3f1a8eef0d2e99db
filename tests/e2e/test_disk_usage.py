"""GET /{index}/_segments lists each segment (issue 17 item 11: it was an empty object) and
POST /{index}/_disk_usage?run_expensive_tasks=true gives Elasticsearch's per-field breakdown
whose parts add up to the segment files."""
import json


def test_segments_and_disk_usage(server, fresh_index):
    ix = fresh_index
    st, _, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                                    "n": {"type": "long"}}}})
    assert st == 200, b
    lines = []
    for i in range(400):
        lines.append(json.dumps({"index": {"_index": ix, "_id": "id-%d" % i}}))
        lines.append(json.dumps({"title": "the quick brown fox %d jumps" % (i % 37),
                                 "tag": "t%d" % (i % 11), "n": i}))
    st, _, b = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"]
    st, _, b = server.request("GET", "/%s/_segments" % ix)
    assert st == 200, b
    shards = b["indices"][ix]["shards"]
    docs = 0
    for s in ("0", "1"):
        copy = shards[s][0]
        assert copy["routing"]["state"] == "STARTED"
        assert copy["num_search_segments"] >= 1
        for name, seg in copy["segments"].items():
            for key in ("generation", "num_docs", "deleted_docs", "size_in_bytes", "committed",
                        "search", "version", "compound"):
                assert key in seg, seg
            assert seg["search"] is True and seg["compound"] is False and seg["size_in_bytes"] > 0
            docs += seg["num_docs"]
    assert docs == 400

    st, _, b = server.request("POST", "/%s/_disk_usage" % ix)
    assert st == 400 and b["error"]["type"] == "illegal_argument_exception", b
    st, _, b = server.request("POST", "/%s/_disk_usage?run_expensive_tasks=true" % ix)
    assert st == 200, b
    assert b["_shards"]["total"] == 2 and b["_shards"]["successful"] == 2, b
    u = b[ix]
    f = u["fields"]
    assert f["title"]["inverted_index"]["positions_in_bytes"] > 0, f["title"]
    assert f["title"]["norms_in_bytes"] == 400, f["title"]
    assert f["tag"]["doc_values_in_bytes"] > 0 and f["tag"]["inverted_index"]["total_in_bytes"] > 0
    assert f["n"]["points_in_bytes"] > 0 and f["n"]["doc_values_in_bytes"] > 0, f["n"]
    assert f["_source"]["stored_fields_in_bytes"] > f["_id"]["stored_fields_in_bytes"] > 0
    a = u["all_fields"]
    assert a["total_in_bytes"] == sum(x["total_in_bytes"] for x in f.values())
    # The flush (flush=true by default) committed the segments: _segments agrees.
    st, _, sb = server.request("GET", "/%s/_segments" % ix)
    seg_bytes = sum(seg["size_in_bytes"] for s in ("0", "1")
                    for seg in sb["indices"][ix]["shards"][s][0]["segments"].values())
    assert all(seg["committed"] for s in ("0", "1")
               for seg in sb["indices"][ix]["shards"][s][0]["segments"].values())
    assert a["total_in_bytes"] + u["scry"]["segment_structure_in_bytes"] == seg_bytes, (u, sb)
    assert u["store_size_in_bytes"] == seg_bytes + u["scry"]["id_table_in_bytes"]
