"""Document APIs: _doc, _create, _source, _update, _mget, _bulk, versions and concurrency."""
import json

from conftest import assert_error, bulk_body


def test_index_get_delete(server, fresh_index):
    st, h, b = server.request("PUT", "/%s/_doc/1" % fresh_index, {"title": "hello", "n": 1})
    assert st == 201, b
    assert b["result"] == "created" and b["_version"] == 1 and b["_id"] == "1"
    assert b["_shards"]["successful"] == 1 and b["_shards"]["failed"] == 0
    assert "_seq_no" in b and b["_primary_term"] == 1
    st, h, b = server.request("GET", "/%s/_doc/1" % fresh_index)
    assert st == 200
    assert b["found"] is True and b["_source"] == {"title": "hello", "n": 1}
    assert b["_version"] == 1
    st, h, b = server.request("PUT", "/%s/_doc/1" % fresh_index, {"title": "again"})
    assert st == 200 and b["result"] == "updated" and b["_version"] == 2
    st, h, b = server.request("GET", "/%s/_source/1" % fresh_index)
    assert st == 200 and b == {"title": "again"}
    assert server.request("HEAD", "/%s/_doc/1" % fresh_index)[0] == 200
    st, h, b = server.request("DELETE", "/%s/_doc/1" % fresh_index)
    assert st == 200 and b["result"] == "deleted"
    st, h, b = server.request("GET", "/%s/_doc/1" % fresh_index)
    assert st == 404 and b["found"] is False and b["_id"] == "1"
    assert server.request("HEAD", "/%s/_doc/1" % fresh_index)[0] == 404
    st, h, b = server.request("DELETE", "/%s/_doc/1" % fresh_index)
    assert st == 404 and b["result"] == "not_found"
    st, h, b = server.request("GET", "/%s/_source/1" % fresh_index)
    assert st == 404


def test_auto_id_and_create(server, fresh_index):
    st, h, b = server.request("POST", "/%s/_doc" % fresh_index, {"a": 1})
    assert st == 201 and len(b["_id"]) == 20
    st, h, b = server.request("PUT", "/%s/_create/x" % fresh_index, {"a": 1})
    assert st == 201
    st, h, b = server.request("PUT", "/%s/_create/x" % fresh_index, {"a": 2})
    assert st == 409
    assert_error(b, 409, "version_conflict_engine_exception")


def test_optimistic_concurrency(server, fresh_index):
    st, h, b = server.request("PUT", "/%s/_doc/1" % fresh_index, {"v": 1})
    seq, term = b["_seq_no"], b["_primary_term"]
    st, h, b = server.request("PUT", "/%s/_doc/1?if_seq_no=%d&if_primary_term=%d" %
                              (fresh_index, seq, term), {"v": 2})
    assert st == 200, b
    st, h, b = server.request("PUT", "/%s/_doc/1?if_seq_no=%d&if_primary_term=%d" %
                              (fresh_index, seq, term), {"v": 3})
    assert st == 409
    assert_error(b, 409, "version_conflict_engine_exception")


def test_update(server, fresh_index):
    server.request("PUT", "/%s/_doc/1" % fresh_index, {"a": 1, "o": {"x": 1}})
    st, h, b = server.request("POST", "/%s/_update/1" % fresh_index, {"doc": {"b": 2, "o": {"y": 2}}})
    assert st == 200 and b["result"] == "updated", b
    st, h, b = server.request("GET", "/%s/_source/1" % fresh_index)
    assert b == {"a": 1, "o": {"x": 1, "y": 2}, "b": 2}
    st, h, b = server.request("POST", "/%s/_update/1" % fresh_index, {"doc": {"b": 2}})
    assert st == 200 and b["result"] == "noop"
    st, h, b = server.request("POST", "/%s/_update/nope" % fresh_index, {"doc": {"b": 2}})
    assert st == 404
    assert_error(b, 404, "document_missing_exception")
    st, h, b = server.request("POST", "/%s/_update/2" % fresh_index,
                              {"doc": {"c": 3}, "doc_as_upsert": True})
    assert st == 201 and b["result"] == "created", b
    st, h, b = server.request("POST", "/%s/_update/3" % fresh_index,
                              {"doc": {"c": 3}, "upsert": {"c": 0}})
    assert st == 201
    assert server.request("GET", "/%s/_source/3" % fresh_index)[2] == {"c": 0}


def test_mget(server, fresh_index):
    server.request("PUT", "/%s/_doc/1" % fresh_index, {"a": 1})
    server.request("PUT", "/%s/_doc/2" % fresh_index, {"a": 2})
    st, h, b = server.request("POST", "/%s/_mget" % fresh_index, {"ids": ["1", "2", "3"]})
    assert st == 200
    assert [d["found"] for d in b["docs"]] == [True, True, False]
    assert b["docs"][1]["_source"] == {"a": 2}
    st, h, b = server.request("POST", "/_mget", {"docs": [{"_index": fresh_index, "_id": "1"}]})
    assert b["docs"][0]["_source"] == {"a": 1}


def test_bulk(server, fresh_index):
    body = "\n".join([
        json.dumps({"index": {"_index": fresh_index, "_id": "1"}}), json.dumps({"t": "a"}),
        json.dumps({"create": {"_index": fresh_index, "_id": "2"}}), json.dumps({"t": "b"}),
        json.dumps({"create": {"_index": fresh_index, "_id": "2"}}), json.dumps({"t": "c"}),
        json.dumps({"update": {"_index": fresh_index, "_id": "1"}}), json.dumps({"doc": {"u": 1}}),
        json.dumps({"delete": {"_index": fresh_index, "_id": "9"}}),
        json.dumps({"index": {"_index": fresh_index}}), json.dumps({"t": "auto"}),
        json.dumps({"index": {"_index": fresh_index, "_id": "bad"}}), "{not json",
    ]) + "\n"
    st, h, b = server.request("POST", "/_bulk", body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200, b
    assert b["errors"] is True
    items = b["items"]
    assert [list(i)[0] for i in items] == ["index", "create", "create", "update", "delete",
                                           "index", "index"]
    assert items[0]["index"]["status"] == 201 and items[0]["index"]["result"] == "created"
    assert items[1]["create"]["status"] == 201
    assert items[2]["create"]["status"] == 409
    assert items[2]["create"]["error"]["type"] == "version_conflict_engine_exception"
    assert items[3]["update"]["status"] == 200 and items[3]["update"]["result"] == "updated"
    assert items[4]["delete"]["status"] == 404 and items[4]["delete"]["result"] == "not_found"
    assert "error" not in items[4]["delete"]
    assert items[5]["index"]["status"] == 201 and len(items[5]["index"]["_id"]) == 20
    assert items[6]["index"]["status"] == 400 and "error" in items[6]["index"]
    assert server.request("GET", "/%s/_source/1" % fresh_index)[2] == {"t": "a", "u": 1}


def test_bulk_index_in_path_and_errors(server, fresh_index):
    st, h, b = server.request("POST", "/%s/_bulk" % fresh_index,
                              bulk_body(fresh_index, [{"x": i} for i in range(50)]))
    assert st == 200 and b["errors"] is False and len(b["items"]) == 50
    st, h, b = server.request("POST", "/_bulk", '{"index":{"_index":"%s"}}\n{"a":1}' % fresh_index)
    assert st == 400 and "newline" in b["error"]["reason"]
    st, h, b = server.request("POST", "/_bulk", '{"explode":{}}\n{}\n')
    assert st == 400 and b["error"]["type"] == "illegal_argument_exception"
    st, h, b = server.request("POST", "/_bulk", '{"index":{}}\n{"a":1}\n')
    assert st == 200 and b["errors"] is True
    assert b["items"][0]["index"]["status"] == 400


def test_strict_mapping(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"mappings": {"dynamic": "strict", "properties": {
        "a": {"type": "keyword"}}}})
    st, h, b = server.request("PUT", "/%s/_doc/1" % fresh_index, {"b": 1})
    assert st == 400
    assert b["error"]["type"] == "strict_dynamic_mapping_exception"


def test_dynamic_mapping(server, fresh_index):
    server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index,
                   {"s": "text here", "n": 5, "f": 1.5, "b": True})
    st, h, b = server.request("GET", "/%s/_mapping" % fresh_index)
    props = b[fresh_index]["mappings"]["properties"]
    assert props["s"]["type"] == "text"
    assert props["s"]["fields"]["keyword"]["type"] == "keyword"
    assert props["n"]["type"] == "long"
    assert props["f"]["type"] == "float"
    assert props["b"]["type"] == "boolean"


def test_routing(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"settings": {"number_of_shards": 4}})
    st, h, b = server.request("PUT", "/%s/_doc/1?routing=user7" % fresh_index, {"a": 1})
    assert st == 201
    st, h, b = server.request("GET", "/%s/_doc/1?routing=user7" % fresh_index)
    assert st == 200 and b["found"]


def test_long_dynamic_field_name(server, fresh_index):
    # a dynamically mapped field keeps its whole name (it was cut at 255 bytes, so the next
    # document did not find it and the mapping update never converged)
    name = "n" * 300
    for i in range(2):
        st, h, b = server.request("PUT", "/%s/_doc/%d?refresh=true" % (fresh_index, i), {name: "x y"})
        assert st == 201, b
    st, h, b = server.request("POST", "/%s/_count" % fresh_index, {"query": {"match": {name: "y"}}})
    assert st == 200 and b["count"] == 2, b
