"""Data streams: PUT/GET/DELETE /_data_stream, backing indices .ds-{name}-{date}-{generation},
@timestamp required, op_type create only, searches over every backing index, rollover with
conditions, _data_stream/_stats, and a bulk into a name matching a data_stream template
creating the stream."""
import json
import os
import re
import tempfile
import time

import pytest

from conftest import Server, assert_error


@pytest.fixture()
def pfx(server):
    p = "ds%d%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)
    st, _, b = server.request("PUT", "/_index_template/%s-t" % p, {
        "index_patterns": ["%s-logs-*" % p], "data_stream": {}, "priority": 100,
        "template": {"settings": {"number_of_shards": 1},
                     "mappings": {"properties": {"msg": {"type": "text"},
                                                 "level": {"type": "keyword"}}}}})
    assert st == 200, b
    yield p
    server.request("DELETE", "/_data_stream/%s-*" % p)
    server.request("DELETE", "/_index_template/%s-t" % p)


def bulk(server, lines):
    body = "".join(json.dumps(x) + "\n" for x in lines)
    st, _, b = server.request("POST", "/_bulk?refresh=true", body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200, b
    return b


def test_create_get_write_search_delete(server, pfx):
    name = "%s-logs-app" % pfx
    st, _, b = server.request("PUT", "/_data_stream/" + name)
    assert st == 200 and b == {"acknowledged": True}, b
    st, _, b = server.request("PUT", "/_data_stream/" + name)
    assert st == 400
    assert_error(b, 400, "resource_already_exists_exception")
    st, _, b = server.request("GET", "/_data_stream/" + name)
    assert st == 200
    ds = b["data_streams"][0]
    assert ds["name"] == name and ds["generation"] == 1
    assert ds["timestamp_field"] == {"name": "@timestamp"}
    assert ds["template"] == "%s-t" % pfx
    backing = ds["indices"][0]["index_name"]
    assert re.fullmatch(r"\.ds-%s-\d{4}\.\d{2}\.\d{2}-000001" % re.escape(name), backing)
    # writes: create only, @timestamp required
    st, _, b = server.request("POST", "/%s/_doc?refresh=true" % name,
                              {"@timestamp": "2024-01-01T00:00:00Z", "msg": "hello",
                               "level": "info"})
    assert st == 201, b
    assert b["_index"] == backing
    st, _, b = server.request("PUT", "/%s/_doc/1" % name, {"@timestamp": "2024-01-01T00:00:00Z"})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("PUT", "/%s/_create/1" % name, {"msg": "no timestamp"})
    assert st == 400, b
    st, _, b = server.request("PUT", "/%s/_create/1?refresh=true" % name,
                              {"@timestamp": "2024-01-02T00:00:00Z", "msg": "two"})
    assert st == 201, b
    b = bulk(server, [{"create": {"_index": name}}, {"@timestamp": "2024-01-03", "msg": "three"},
                      {"index": {"_index": name, "_id": "x"}},
                      {"@timestamp": "2024-01-03", "msg": "bad op"},
                      {"create": {"_index": name}}, {"msg": "no ts"}])
    assert b["errors"] is True
    assert b["items"][0]["create"]["status"] == 201
    assert b["items"][1]["index"]["status"] == 400
    assert b["items"][2]["create"]["status"] == 400
    st, _, b = server.request("GET", "/%s/_count" % name)
    assert b["count"] == 3
    # updates and deletes through the stream are refused (they go to a backing index)
    st, _, b = server.request("POST", "/%s/_update/1" % name, {"doc": {"msg": "x"}})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("DELETE", "/%s/_doc/1" % name)
    assert st == 400
    st, _, b = server.request("GET", "/%s/_doc/1" % backing)
    assert st == 200 and b["_source"]["msg"] == "two"
    st, _, b = server.request("GET", "/%s/_mapping" % backing)
    assert b[backing]["mappings"]["properties"]["@timestamp"]["type"] == "date"
    # the stream's name is not an alias to show
    st, _, b = server.request("GET", "/_alias")
    assert all(name not in v["aliases"] for v in b.values())
    st, _, b = server.request("DELETE", "/_data_stream/" + name)
    assert st == 200
    assert server.request("HEAD", "/" + backing)[0] == 404
    st, _, b = server.request("GET", "/_data_stream/" + name)
    assert st == 404
    assert_error(b, 404, "index_not_found_exception")


def test_no_template(server, pfx):
    st, _, b = server.request("PUT", "/_data_stream/%s-other" % pfx)
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")


def test_bulk_creates_stream_and_rollover(server, pfx):
    name = "%s-logs-web" % pfx
    b = bulk(server, [{"create": {"_index": name}},
                      {"@timestamp": "2024-05-01T10:00:00Z", "msg": "a", "level": "warn"},
                      {"create": {"_index": name}},
                      {"@timestamp": "2024-05-01T10:00:01Z", "msg": "b", "level": "info"}])
    assert b["errors"] is False, b
    st, _, b = server.request("GET", "/_data_stream/" + name)
    assert st == 200 and b["data_streams"][0]["generation"] == 1
    first = b["data_streams"][0]["indices"][0]["index_name"]
    # conditions not met: nothing happens
    st, _, b = server.request("POST", "/%s/_rollover" % name, {"conditions": {"max_docs": 100}})
    assert st == 200, b
    assert b["rolled_over"] is False and b["conditions"] == {"[max_docs: 100]": False}
    st, _, b = server.request("POST", "/%s/_rollover?dry_run=true" % name,
                              {"conditions": {"max_docs": 2}})
    assert b["rolled_over"] is False and b["dry_run"] is True
    st, _, b = server.request("POST", "/%s/_rollover" % name,
                              {"conditions": {"max_docs": 2, "max_age": "30d",
                                              "max_primary_shard_size": "50gb"}})
    assert st == 200, b
    assert b["rolled_over"] is True and b["old_index"] == first
    assert b["conditions"]["[max_docs: 2]"] is True
    second = b["new_index"]
    assert second.endswith("-000002")
    # writes go to the new backing index, searches see both
    b = bulk(server, [{"create": {"_index": name}},
                      {"@timestamp": "2024-05-02T00:00:00Z", "msg": "c", "level": "warn"}])
    assert b["items"][0]["create"]["_index"] == second
    st, _, b = server.request("POST", "/%s/_search" % name,
                              {"query": {"term": {"level": "warn"}}})
    assert b["hits"]["total"]["value"] == 2
    assert {h["_index"] for h in b["hits"]["hits"]} == {first, second}
    st, _, b = server.request("POST", "/%s/_rollover" % name)  # no conditions: always
    assert b["rolled_over"] is True and b["new_index"].endswith("-000003")
    st, _, b = server.request("GET", "/_data_stream/%s-*" % pfx)
    assert [i["index_name"] for i in b["data_streams"][0]["indices"]][:2] == [first, second]
    st, _, b = server.request("GET", "/_data_stream/_stats")
    assert st == 200
    row = [r for r in b["data_streams"] if r["data_stream"] == name][0]
    assert row["backing_indices"] == 3
    assert row["maximum_timestamp"] == 1714608000000  # 2024-05-02T00:00:00Z
    st, _, b = server.request("POST", "/%s/_rollover" % name, {"conditions": {"max_foo": 1}})
    assert st == 400
    st, _, b = server.request("POST", "/%s-nope/_rollover" % pfx)
    assert st == 400


def test_stream_survives_restart():
    tmp = tempfile.mkdtemp(prefix="scry-ds-")
    s = Server(os.path.join(tmp, "data")).start()
    try:
        s.request("PUT", "/_index_template/t", {"index_patterns": ["logs-*"], "data_stream": {}})
        st, _, b = s.request("POST", "/logs-x/_doc?refresh=true", {"@timestamp": "2024-01-01"})
        assert st == 201, b
        assert s.stop() == 0
        s.start()
        st, _, b = s.request("GET", "/logs-x/_count")
        assert st == 200 and b["count"] == 1
        st, _, b = s.request("POST", "/logs-x/_doc", {"@timestamp": "2024-01-02"})
        assert st == 201, b
    finally:
        s.stop()


def test_backing_indices_are_hidden(server, pfx):
    name = "%s-logs-h" % pfx
    st, _, b = server.request("POST", "/%s/_doc?refresh=true" % name, {"@timestamp": "2024-01-01"})
    assert st == 201, b
    st, _, b = server.request("POST", "/%s*/_count" % pfx)
    assert b["count"] == 1  # through the stream's name, once
    st, _, b = server.request("POST", "/.ds-%s*/_count" % name)
    assert b["count"] == 1  # a pattern starting with a dot sees them
    st, _, b = server.request("GET", "/_cat/indices?format=json")
    assert st == 200 and not any(r["index"].startswith(".ds-" + name) for r in b)
    st, _, b = server.request("GET", "/_cat/indices?format=json&expand_wildcards=all")
    assert any(r["index"].startswith(".ds-" + name) for r in b)
    st, _, b = server.request("POST", "/*/_count?expand_wildcards=open,hidden",
                              {"query": {"exists": {"field": "@timestamp"}}})
    assert st == 200 and b["count"] >= 1


def test_write_index_cannot_be_deleted(server, pfx):
    name = "%s-logs-d" % pfx
    st, _, b = server.request("PUT", "/_data_stream/" + name)
    assert st == 200
    st, _, b = server.request("GET", "/_data_stream/" + name)
    first = b["data_streams"][0]["indices"][0]["index_name"]
    st, _, b = server.request("DELETE", "/" + first)
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("POST", "/%s/_rollover" % name)
    assert b["rolled_over"] is True
    st, _, b = server.request("DELETE", "/" + first)
    assert st == 200, b
    st, _, b = server.request("GET", "/_data_stream/" + name)
    assert [i["index_name"] for i in b["data_streams"][0]["indices"]] == [first.replace(
        "-000001", "-000002")]


def test_log_shipper_bulk_through_grok_pipeline(server, pfx):
    st, _, b = server.request("PUT", "/_ingest/pipeline/%s-access" % pfx, {"processors": [
        {"grok": {"field": "message", "patterns": ["%{COMMONAPACHELOG}"]}},
        {"date": {"field": "timestamp", "formats": ["dd/MMM/yyyy:HH:mm:ss Z"]}},
        {"convert": {"field": "response", "type": "integer"}},
        {"remove": {"field": ["timestamp", "message"]}}]})
    assert st == 200, b
    st, _, b = server.request("PUT", "/_index_template/%s-access" % pfx, {
        "index_patterns": ["%s-access-*" % pfx], "data_stream": {}, "priority": 200,
        "template": {"settings": {"index.default_pipeline": "%s-access" % pfx},
                     "mappings": {"properties": {"clientip": {"type": "ip"},
                                                 "verb": {"type": "keyword"},
                                                 "response": {"type": "integer"}}}}})
    assert st == 200, b
    name = "%s-access-web" % pfx
    lines = [
        '10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326',
        '10.0.0.2 - bob [10/Oct/2000:13:55:37 -0700] "POST /b HTTP/1.1" 404 12',
        'this line is not an access log',
        '10.0.0.1 - - [10/Oct/2000:13:56:00 -0700] "GET /c HTTP/1.1" 200 -',
    ]
    body = "".join(json.dumps({"create": {"_index": name}}) + "\n" +
                   json.dumps({"message": m}) + "\n" for m in lines)
    st, _, b = server.request("POST", "/_bulk?refresh=true", body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and b["errors"] is True, b
    assert [i["create"]["status"] for i in b["items"]] == [201, 201, 400, 201]
    assert b["items"][2]["create"]["error"]["type"] == "illegal_argument_exception"
    assert b["items"][0]["create"]["_index"].startswith(".ds-%s-" % name)
    st, _, b = server.request("GET", "/_data_stream/" + name)
    assert st == 200 and b["data_streams"][0]["template"] == "%s-access" % pfx
    st, _, b = server.request("POST", "/%s/_search" % name,
                              {"query": {"term": {"response": 200}},
                               "sort": [{"@timestamp": "asc"}]})
    assert b["hits"]["total"]["value"] == 2
    hit = b["hits"]["hits"][0]["_source"]
    assert hit["clientip"] == "10.0.0.1" and hit["verb"] == "GET" and hit["response"] == 200
    assert hit["@timestamp"].startswith("2000-10-10T20:55:36")
    st, _, b = server.request("POST", "/%s/_count" % name, {"query": {"term": {"clientip": "10.0.0.2"}}})
    assert b["count"] == 1
    server.request("DELETE", "/_data_stream/" + name)
    server.request("DELETE", "/_index_template/%s-access" % pfx)
    server.request("DELETE", "/_ingest/pipeline/%s-access" % pfx)
