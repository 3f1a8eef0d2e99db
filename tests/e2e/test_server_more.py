"""More server behaviour: hit ids without _source (read from the _id doc values), before and
after merges."""
from conftest import bulk_body


def _ids_of(server, index, body):
    st, h, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return [(x["_id"], x.get("_source")) for x in b["hits"]["hits"]]


def test_ids_without_source_match_stored(server, fresh_index):
    st, h, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"n": {"type": "long"}, "t": {"type": "text"}}}})
    assert st == 200, b
    docs = [{"n": i, "t": "word%d common" % (i % 7)} for i in range(300)]
    # Three refreshes -> several segments per shard; ids are strings of varied length.
    for part in range(3):
        lines = []
        for i in range(part * 100, part * 100 + 100):
            lines.append('{"index":{"_id":"id-%s"}}' % ("x" * (i % 13) + str(i)))
            lines.append('{"n":%d,"t":"%s"}' % (i, docs[i]["t"]))
        st, h, b = server.request("POST", "/%s/_bulk?refresh=true" % fresh_index,
                                  "\n".join(lines) + "\n")
        assert st == 200 and not b["errors"], b
    # Overwrite and delete some, so ids of deleted docs must not leak.
    st, h, b = server.request("POST", "/%s/_bulk?refresh=true" % fresh_index,
                              '{"index":{"_id":"id-0"}}\n{"n":0,"t":"common"}\n'
                              '{"delete":{"_id":"id-x1"}}\n')
    assert st == 200 and not b["errors"], b
    q = {"query": {"match": {"t": "common"}}, "size": 400, "sort": [{"n": "asc"}]}

    def check():
        with_src = _ids_of(server, fresh_index, q)
        without = _ids_of(server, fresh_index, dict(q, _source=False,
                                                    docvalue_fields=["n"]))
        assert [i for i, _ in with_src] == [i for i, _ in without]
        assert all(s is None for _, s in without)
        assert len(with_src) == 299
        for i, s in with_src:
            assert i == "id-" + "x" * (s["n"] % 13) + str(s["n"])
    check()
    st, h, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % fresh_index)
    assert st == 200, b
    server.request("POST", "/%s/_refresh" % fresh_index)
    check()
