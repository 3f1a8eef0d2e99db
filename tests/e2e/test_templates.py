"""Index templates: composable (_index_template), component (_component_template) and legacy
(_template) templates; priority, composed_of, overlap rules, _simulate_index, and templates
applied to explicitly created and auto-created indices."""
import os
import tempfile
import time

import pytest

from conftest import Server, assert_error


@pytest.fixture()
def pfx(server):
    """A unique name prefix; templates and indices starting with it are removed afterwards."""
    p = "tp%d%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)
    yield p
    server.request("DELETE", "/_index_template/%s*" % p)
    server.request("DELETE", "/_component_template/%s*" % p)
    server.request("DELETE", "/_template/%s*" % p)
    server.request("DELETE", "/%s*" % p)


def put(server, path, body):
    st, _, b = server.request("PUT", path, body)
    assert st == 200, b
    assert b == {"acknowledged": True}


def test_composable_template_applies_to_new_index(server, pfx):
    put(server, "/_component_template/%s-c1" % pfx, {"template": {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"host": {"type": "keyword"}}}}})
    put(server, "/_component_template/%s-c2" % pfx, {"template": {
        "mappings": {"properties": {"bytes": {"type": "long"}}}}})
    put(server, "/_index_template/%s-t" % pfx, {
        "index_patterns": ["%s-logs-*" % pfx], "priority": 10,
        "composed_of": ["%s-c1" % pfx, "%s-c2" % pfx],
        "template": {"settings": {"index.refresh_interval": "5s"},
                     "mappings": {"properties": {"msg": {"type": "text"}}},
                     "aliases": {"%s-all-logs" % pfx: {}}},
        "_meta": {"owner": "ops"}})
    st, _, b = server.request("GET", "/_index_template/%s-t" % pfx)
    assert st == 200
    t = b["index_templates"][0]
    assert t["name"] == "%s-t" % pfx
    assert t["index_template"]["index_patterns"] == ["%s-logs-*" % pfx]
    assert t["index_template"]["composed_of"] == ["%s-c1" % pfx, "%s-c2" % pfx]
    assert t["index_template"]["priority"] == 10
    # auto-created by a first write
    ix = "%s-logs-1" % pfx
    st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % ix,
                              {"host": "a", "bytes": 5, "msg": "hello"})
    assert st == 201, b
    st, _, b = server.request("GET", "/" + ix)
    assert b[ix]["settings"]["index"]["number_of_shards"] == "2"
    assert b[ix]["settings"]["index"]["refresh_interval"] == "5s"
    props = b[ix]["mappings"]["properties"]
    assert props["host"]["type"] == "keyword"
    assert props["bytes"]["type"] == "long"
    assert props["msg"]["type"] == "text"
    assert b[ix]["aliases"] == {"%s-all-logs" % pfx: {}}
    st, _, b = server.request("POST", "/%s-all-logs/_count" % pfx)
    assert b["count"] == 1
    # explicitly created: the request's settings win over the template's
    ix2 = "%s-logs-2" % pfx
    st, _, b = server.request("PUT", "/" + ix2, {"settings": {"number_of_shards": 1},
                                                 "mappings": {"properties": {
                                                     "extra": {"type": "keyword"}}}})
    assert st == 200, b
    st, _, b = server.request("GET", "/" + ix2)
    assert b[ix2]["settings"]["index"]["number_of_shards"] == "1"
    assert b[ix2]["mappings"]["properties"]["extra"]["type"] == "keyword"
    assert b[ix2]["mappings"]["properties"]["host"]["type"] == "keyword"
    # a bulk into a new index uses it too
    st, _, b = server.request("POST", "/_bulk",
                              '{"index":{"_index":"%s-logs-3"}}\n{"host":"x"}\n' % pfx,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    st, _, b = server.request("GET", "/%s-logs-3/_mapping" % pfx)
    assert b["%s-logs-3" % pfx]["mappings"]["properties"]["bytes"]["type"] == "long"


def test_priority_and_overlap(server, pfx):
    put(server, "/_index_template/%s-low" % pfx, {
        "index_patterns": ["%s-*" % pfx], "priority": 1,
        "template": {"settings": {"number_of_shards": 3}}})
    put(server, "/_index_template/%s-high" % pfx, {
        "index_patterns": ["%s-x*" % pfx], "priority": 5,
        "template": {"settings": {"number_of_shards": 2}}})
    st, _, b = server.request("PUT", "/_index_template/%s-same" % pfx, {
        "index_patterns": ["%s-xy*" % pfx], "priority": 5})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    assert "same priority" in b["error"]["reason"]
    st, _, b = server.request("POST", "/_index_template/_simulate_index/%s-xa" % pfx)
    assert st == 200, b
    assert b["template"]["settings"]["index"]["number_of_shards"] == 2
    assert [o["name"] for o in b["overlapping"]] == ["%s-low" % pfx]
    st, _, b = server.request("POST", "/_index_template/_simulate_index/%s-ya" % pfx)
    assert b["template"]["settings"]["index"]["number_of_shards"] == 3
    server.request("PUT", "/%s-xb" % pfx)
    st, _, b = server.request("GET", "/%s-xb/_settings" % pfx)
    assert b["%s-xb" % pfx]["settings"]["index"]["number_of_shards"] == "2"
    # simulate a stored template by name, and a body
    st, _, b = server.request("POST", "/_index_template/_simulate/%s-low" % pfx)
    assert st == 200 and b["template"]["settings"]["index"]["number_of_shards"] == 3
    st, _, b = server.request("POST", "/_index_template/_simulate", {
        "index_patterns": ["zzz*"], "template": {"mappings": {"properties": {
            "a": {"type": "keyword"}}}}})
    assert st == 200 and b["template"]["mappings"]["properties"]["a"]["type"] == "keyword"


def test_errors(server, pfx):
    st, _, b = server.request("PUT", "/_index_template/%s-bad" % pfx, {"priority": 1})
    assert st == 400
    assert_error(b, 400, "action_request_validation_exception")
    st, _, b = server.request("PUT", "/_index_template/%s-bad" % pfx, {
        "index_patterns": ["q*"], "composed_of": ["%s-nope" % pfx]})
    assert st == 400
    assert_error(b, 400, "invalid_index_template_exception")
    st, _, b = server.request("PUT", "/_index_template/%s-bad" % pfx, {
        "index_patterns": ["q*"], "bogus": 1})
    assert st == 400
    assert_error(b, 400, "x_content_parse_exception")
    st, _, b = server.request("PUT", "/_index_template/%s-bad" % pfx, {
        "index_patterns": ["%s-q*" % pfx],
        "template": {"mappings": {"properties": {"a": {"type": "no_such_type"}}}}})
    assert st == 400
    assert_error(b, 400, "mapper_parsing_exception")
    st, _, b = server.request("GET", "/_index_template/%s-nope" % pfx)
    assert st == 404
    assert_error(b, 404, "resource_not_found_exception")
    assert server.request("HEAD", "/_index_template/%s-nope" % pfx)[0] == 404
    st, _, b = server.request("DELETE", "/_index_template/%s-nope" % pfx)
    assert st == 404
    assert_error(b, 404, "resource_not_found_exception")
    # a component in use cannot be deleted
    put(server, "/_component_template/%s-c" % pfx, {"template": {"settings": {}}})
    put(server, "/_index_template/%s-u" % pfx, {"index_patterns": ["%s-u*" % pfx],
                                                "composed_of": ["%s-c" % pfx]})
    st, _, b = server.request("DELETE", "/_component_template/%s-c" % pfx)
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("PUT", "/_index_template/%s-u?create=true" % pfx,
                              {"index_patterns": ["%s-u*" % pfx]})
    assert st == 400
    put(server, "/_index_template/%s-u" % pfx, {"index_patterns": ["%s-u*" % pfx]})
    st, _, b = server.request("DELETE", "/_component_template/%s-c" % pfx)
    assert st == 200
    st, _, b = server.request("POST", "/_index_template/_simulate_index/nothing-matches-%s" % pfx)
    assert st == 404


def test_component_and_legacy_get(server, pfx):
    put(server, "/_component_template/%s-c" % pfx, {"template": {"mappings": {"properties": {
        "a": {"type": "keyword"}}}}, "version": 3})
    st, _, b = server.request("GET", "/_component_template/%s-*" % pfx)
    assert b["component_templates"][0]["name"] == "%s-c" % pfx
    assert b["component_templates"][0]["component_template"]["version"] == 3
    put(server, "/_template/%s-old" % pfx, {"index_patterns": ["%s-old-*" % pfx], "order": 1,
                                             "settings": {"number_of_shards": 4},
                                             "aliases": {"%s-oldies" % pfx: {}}})
    put(server, "/_template/%s-older" % pfx, {"template": "%s-old-*" % pfx, "order": 0,
                                               "settings": {"number_of_shards": 2,
                                                            "number_of_replicas": 0}})
    st, _, b = server.request("GET", "/_template/%s-old" % pfx)
    assert b["%s-old" % pfx]["order"] == 1
    assert b["%s-old" % pfx]["index_patterns"] == ["%s-old-*" % pfx]
    st, _, b = server.request("GET", "/_template/%s-none" % pfx)
    assert st == 404
    st, _, b = server.request("PUT", "/_template/%s-bad" % pfx, {
        "index_patterns": ["x*"], "settings": {"number_of_shards": 0}})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    ix = "%s-old-1" % pfx
    server.request("PUT", "/%s/_doc/1" % ix, {"a": 1})
    st, _, b = server.request("GET", "/%s/_settings" % ix)
    s = b[ix]["settings"]["index"]
    assert s["number_of_shards"] == "4" and s["number_of_replicas"] == "0"
    st, _, b = server.request("GET", "/_alias/%s-oldies" % pfx)
    assert ix in b
    # a composable template wins over legacy ones
    put(server, "/_index_template/%s-new" % pfx, {"index_patterns": ["%s-old-2*" % pfx],
                                                  "template": {"settings": {
                                                      "number_of_shards": 1}}})
    server.request("PUT", "/%s-old-2" % pfx)
    st, _, b = server.request("GET", "/%s-old-2/_settings" % pfx)
    assert b["%s-old-2" % pfx]["settings"]["index"]["number_of_shards"] == "1"
    st, _, b = server.request("DELETE", "/_template/%s-old" % pfx)
    assert st == 200


def test_templates_survive_restart():
    tmp = tempfile.mkdtemp(prefix="scry-tpl-")
    s = Server(os.path.join(tmp, "data")).start()
    try:
        put(s, "/_component_template/c", {"template": {"settings": {"number_of_shards": 2}}})
        put(s, "/_index_template/t", {"index_patterns": ["m-*"], "composed_of": ["c"]})
        assert s.stop() == 0
        s.start()
        st, _, b = s.request("GET", "/_index_template/t")
        assert st == 200 and b["index_templates"][0]["index_template"]["composed_of"] == ["c"]
        s.request("PUT", "/m-1")
        st, _, b = s.request("GET", "/m-1/_settings")
        assert b["m-1"]["settings"]["index"]["number_of_shards"] == "2"
    finally:
        s.stop()
