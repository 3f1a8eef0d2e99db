"""Ingest pipelines: PUT/GET/DELETE /_ingest/pipeline, _simulate, the processors, if /
on_failure / ignore_failure / ignore_missing, and pipelines on index, bulk (a failing document
fails its item only), index.default_pipeline and index.final_pipeline."""
import json
import os
import time

import pytest

from conftest import assert_error


@pytest.fixture()
def pfx(server):
    p = "ing%d%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)
    yield p
    st, _, b = server.request("GET", "/_ingest/pipeline")
    for name in (b or {}):
        if name.startswith(p):
            server.request("DELETE", "/_ingest/pipeline/" + name)
    server.request("DELETE", "/%s*" % p)


def simulate(server, processors, docs, on_failure=None):
    pipe = {"processors": processors}
    if on_failure:
        pipe["on_failure"] = on_failure
    st, _, b = server.request("POST", "/_ingest/pipeline/_simulate", {
        "pipeline": pipe, "docs": [{"_source": d} for d in docs]})
    assert st == 200, b
    return [r.get("doc", {}).get("_source") if "doc" in r and r["doc"] else r for r in b["docs"]]


def one(server, processors, doc, **kw):
    return simulate(server, processors, [doc], **kw)[0]


def test_crud(server, pfx):
    body = {"description": "d", "processors": [{"set": {"field": "a", "value": 1}}]}
    st, _, b = server.request("PUT", "/_ingest/pipeline/%s-p" % pfx, body)
    assert st == 200 and b == {"acknowledged": True}, b
    st, _, b = server.request("GET", "/_ingest/pipeline/%s-p" % pfx)
    assert st == 200 and b == {"%s-p" % pfx: body}
    st, _, b = server.request("GET", "/_ingest/pipeline/%s-*" % pfx)
    assert list(b) == ["%s-p" % pfx]
    st, _, b = server.request("GET", "/_ingest/pipeline/%s-none" % pfx)
    assert st == 404 and b == {}
    st, _, b = server.request("POST", "/_ingest/pipeline/%s-p/_simulate" % pfx,
                              {"docs": [{"_index": "i", "_id": "7", "_source": {"b": 2}}]})
    assert st == 200, b
    assert b["docs"][0]["doc"]["_source"] == {"a": 1, "b": 2}
    assert b["docs"][0]["doc"]["_index"] == "i" and b["docs"][0]["doc"]["_id"] == "7"
    st, _, b = server.request("DELETE", "/_ingest/pipeline/%s-p" % pfx)
    assert st == 200
    st, _, b = server.request("DELETE", "/_ingest/pipeline/%s-p" % pfx)
    assert st == 404
    assert_error(b, 404, "resource_not_found_exception")


def test_bad_definitions(server, pfx):
    for body, etype in [({"processors": [{"nope": {}}]}, "parse_exception"),
                        ({"processors": [{"set": {"value": 1}}]}, "parse_exception"),
                        ({"processors": [{"grok": {"field": "a", "patterns": ["%{NOPE:x}"]}}]},
                         "illegal_argument_exception"),
                        ({"processors": [{"set": {"field": "a", "value": 1,
                                                  "if": "ctx.a.b.contains('x')"}}]},
                         "illegal_argument_exception"),
                        ({"processors": [{"convert": {"field": "a", "type": "zzz"}}]},
                         "parse_exception"),
                        ({"description": "no processors"}, "parse_exception")]:
        st, _, b = server.request("PUT", "/_ingest/pipeline/%s-bad" % pfx, body)
        assert st == 400, (body, b)
        assert_error(b, 400, etype)


def test_processors(server):
    assert one(server, [{"set": {"field": "x.y", "value": "{{a}}-{{{b}}}"}}], {"a": "A", "b": 2}) \
        == {"a": "A", "b": 2, "x": {"y": "A-2"}}
    assert one(server, [{"set": {"field": "a", "value": 9, "override": False}}], {"a": 1}) == {"a": 1}
    assert one(server, [{"set": {"field": "c", "copy_from": "a"}}], {"a": [1]}) == {"a": [1], "c": [1]}
    assert one(server, [{"remove": {"field": ["a", "b"]}}], {"a": 1, "b": 2, "c": 3}) == {"c": 3}
    assert one(server, [{"rename": {"field": "a", "target_field": "z.q"}}], {"a": 1}) == {"z": {"q": 1}}
    assert one(server, [{"lowercase": {"field": "a"}}, {"uppercase": {"field": "b"}},
                        {"trim": {"field": "c"}}], {"a": "AbC", "b": ["x", "y"], "c": "  t "}) \
        == {"a": "abc", "b": ["X", "Y"], "c": "t"}
    assert one(server, [{"split": {"field": "a", "separator": ",\\s*"}}], {"a": "x, y,z"}) \
        == {"a": ["x", "y", "z"]}
    assert one(server, [{"join": {"field": "a", "separator": "-", "target_field": "b"}}],
               {"a": ["x", 1]}) == {"a": ["x", 1], "b": "x-1"}
    assert one(server, [{"convert": {"field": "a", "type": "integer"}},
                        {"convert": {"field": "b", "type": "float"}},
                        {"convert": {"field": "c", "type": "boolean"}},
                        {"convert": {"field": "d", "type": "auto"}},
                        {"convert": {"field": "e", "type": "string"}}],
               {"a": "42", "b": "1.5", "c": "TRUE", "d": "7", "e": 3}) \
        == {"a": 42, "b": 1.5, "c": True, "d": 7, "e": "3"}
    assert one(server, [{"append": {"field": "t", "value": ["b", "c"]}}], {"t": "a"}) \
        == {"t": ["a", "b", "c"]}
    assert one(server, [{"append": {"field": "t", "value": "a", "allow_duplicates": False}}],
               {"t": ["a"]}) == {"t": ["a"]}
    assert one(server, [{"gsub": {"field": "a", "pattern": "\\d+", "replacement": "#"}}],
               {"a": "a1b22c"}) == {"a": "a#b#c"}
    assert one(server, [{"date": {"field": "ts", "formats": ["dd/MM/yyyy HH:mm:ss"]}}],
               {"ts": "05/03/2024 10:11:12"})["@timestamp"].startswith("2024-03-05T10:11:12")
    assert one(server, [{"date": {"field": "ts", "formats": ["UNIX"], "target_field": "t"}}],
               {"ts": 1700000000})["t"].startswith("2023-11-14T22:13:20")
    assert one(server, [{"date": {"field": "ts", "formats": ["ISO8601"]}}],
               {"ts": "2024-01-02T03:04:05Z"})["@timestamp"].startswith("2024-01-02T03:04:05")
    assert one(server, [{"dissect": {"field": "m", "pattern": "%{a} %{b->} [%{+c}] %{?skip} %{+c}",
                                     "append_separator": "|"}}],
               {"m": "1 2 [x] s y"}) == {"m": "1 2 [x] s y", "a": "1", "b": "2", "c": "x|y"}
    assert one(server, [{"dissect": {"field": "m", "pattern": "%{ts->} %{level} %{*k}=%{&k}"}}],
               {"m": "17:15:42     WARN user=bob"}) \
        == {"m": "17:15:42     WARN user=bob", "ts": "17:15:42", "level": "WARN", "user": "bob"}
    r = one(server, [{"dissect": {"field": "m", "pattern": "%{a}|%{b}"}}], {"m": "no bar"})
    assert r["error"]["type"] == "dissect_exception"
    assert one(server, [{"drop": {"if": "ctx.a == 'x'"}}], {"a": "x"}) == {"doc": None}


def test_grok(server):
    line = ('127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" '
            '200 2326')
    r = one(server, [{"grok": {"field": "m", "patterns": ["%{COMMONAPACHELOG}"]}}], {"m": line})
    assert r["clientip"] == "127.0.0.1"
    assert r["auth"] == "frank"
    assert r["timestamp"] == "10/Oct/2000:13:55:36 -0700"
    assert r["verb"] == "GET" and r["request"] == "/apache_pb.gif"
    assert r["httpversion"] == "1.0" and r["response"] == "200" and r["bytes"] == "2326"
    combined = line + ' "http://example.com/" "Mozilla/5.0 (X11)"'
    r = one(server, [{"grok": {"field": "m", "patterns": ["%{COMBINEDAPACHELOG}"]}}],
            {"m": combined})
    assert r["referrer"] == '"http://example.com/"' and r["agent"] == '"Mozilla/5.0 (X11)"'
    r = one(server, [{"grok": {"field": "m", "patterns": [
        "%{IP:ip} %{WORD:w} %{NUMBER:n:int} %{NUMBER:f:float} %{GREEDYDATA:rest}"]}}],
        {"m": "10.1.2.3 hello 42 3.5 the rest here"})
    assert r["ip"] == "10.1.2.3" and r["w"] == "hello" and r["n"] == 42 and r["f"] == 3.5
    assert r["rest"] == "the rest here"
    r = one(server, [{"grok": {"field": "m", "patterns": ["%{NOPE2:x}", "%{MYNUM:x}"],
                               "pattern_definitions": {"NOPE2": "zzz", "MYNUM": "\\d+"}}}],
            {"m": "a 123 b"})
    assert r["x"] == "123"
    r = one(server, [{"grok": {"field": "m", "patterns": ["%{IP:ip}"]}}], {"m": "no ip"})
    assert r["error"]["type"] == "illegal_argument_exception"
    assert "do not match" in r["error"]["reason"]
    r = one(server, [{"grok": {"field": "m", "patterns": ["%{TIMESTAMP_ISO8601:t} %{LOGLEVEL:l}"]}}],
            {"m": "2024-01-02T03:04:05.123Z ERROR boom"})
    assert r["t"] == "2024-01-02T03:04:05.123Z" and r["l"] == "ERROR"


def test_conditions_and_failures(server):
    procs = [{"set": {"field": "hit", "value": True, "if": "ctx.a?.b == 'x' && ctx.n != null"}}]
    assert one(server, procs, {"a": {"b": "x"}, "n": 1})["hit"] is True
    assert "hit" not in one(server, procs, {"a": {"b": "y"}, "n": 1})
    assert "hit" not in one(server, procs, {"a": {"b": "x"}})
    assert one(server, [{"set": {"field": "h", "value": 1, "if": "ctx.k == 5 || ctx.flag"}}],
               {"flag": True})["h"] == 1
    # missing field fails the document
    r = one(server, [{"lowercase": {"field": "nope"}}], {"a": 1})
    assert r["error"]["type"] == "illegal_argument_exception"
    assert r["error"]["reason"] == "field [nope] not present as part of path [nope]"
    assert one(server, [{"lowercase": {"field": "nope", "ignore_missing": True}}], {"a": 1}) == {"a": 1}
    assert one(server, [{"convert": {"field": "a", "type": "integer", "ignore_failure": True}}],
               {"a": "x"}) == {"a": "x"}
    r = one(server, [{"convert": {"field": "a", "type": "integer", "on_failure": [
        {"set": {"field": "err", "value": "{{_ingest.on_failure_message}}"}}]}}], {"a": "x"})
    assert r == {"a": "x", "err": "unable to convert [x] to integer"}
    r = one(server, [{"fail": {"message": "bad {{a}}"}}], {"a": "q"},
            on_failure=[{"set": {"field": "failed", "value": True}}])
    assert r == {"a": "q", "failed": True}


def test_pipelines_on_writes(server, pfx):
    ix = pfx + "-docs"
    assert server.request("PUT", "/_ingest/pipeline/%s-p" % pfx, {"processors": [
        {"convert": {"field": "n", "type": "integer"}},
        {"set": {"field": "via", "value": "p"}}]})[0] == 200
    assert server.request("PUT", "/_ingest/pipeline/%s-final" % pfx, {"processors": [
        {"set": {"field": "final", "value": True}}]})[0] == 200
    assert server.request("PUT", "/_ingest/pipeline/%s-default" % pfx, {"processors": [
        {"set": {"field": "via", "value": "default"}}]})[0] == 200
    st, _, b = server.request("PUT", "/%s/_doc/1?pipeline=%s-p&refresh=true" % (ix, pfx), {"n": "5"})
    assert st == 201, b
    st, _, b = server.request("GET", "/%s/_doc/1" % ix)
    assert b["_source"] == {"n": 5, "via": "p"}
    st, _, b = server.request("PUT", "/%s/_doc/2?pipeline=%s-p" % (ix, pfx), {"n": "zz"})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("PUT", "/%s/_doc/2?pipeline=%s-missing" % (ix, pfx), {"n": 1})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    assert "does not exist" in b["error"]["reason"]
    body = "".join(json.dumps(x) + "\n" for x in [
        {"index": {"_index": ix, "_id": "a"}}, {"n": "1"},
        {"index": {"_index": ix, "_id": "b"}}, {"n": "not a number"},
        {"create": {"_index": ix, "_id": "c", "pipeline": "%s-default" % pfx}}, {"n": 3}])
    st, _, b = server.request("POST", "/_bulk?pipeline=%s-p&refresh=true" % pfx, body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and b["errors"] is True, b
    assert b["items"][0]["index"]["status"] == 201
    assert b["items"][1]["index"]["status"] == 400
    assert b["items"][1]["index"]["error"]["type"] == "illegal_argument_exception"
    assert b["items"][2]["create"]["status"] == 201
    st, _, b = server.request("GET", "/%s/_doc/c" % ix)
    assert b["_source"] == {"n": 3, "via": "default"}
    # index.default_pipeline and index.final_pipeline
    ix2 = pfx + "-dflt"
    st, _, b = server.request("PUT", "/" + ix2, {"settings": {
        "index.default_pipeline": "%s-default" % pfx, "index.final_pipeline": "%s-final" % pfx}})
    assert st == 200, b
    server.request("PUT", "/%s/_doc/1" % ix2, {"a": 1})
    st, _, b = server.request("GET", "/%s/_doc/1" % ix2)
    assert b["_source"] == {"a": 1, "via": "default", "final": True}
    server.request("PUT", "/%s/_doc/2?pipeline=_none" % ix2, {"a": 1})
    st, _, b = server.request("GET", "/%s/_doc/2" % ix2)
    assert b["_source"] == {"a": 1, "final": True}
    # a drop processor: noop, nothing indexed
    assert server.request("PUT", "/_ingest/pipeline/%s-drop" % pfx, {"processors": [
        {"drop": {}}]})[0] == 200
    st, _, b = server.request("PUT", "/%s/_doc/9?pipeline=%s-drop" % (ix, pfx), {"a": 1})
    assert st == 200 and b["result"] == "noop", b
    assert server.request("GET", "/%s/_doc/9" % ix)[0] == 404


def test_json_and_kv(server):
    assert one(server, [{"json": {"field": "j", "target_field": "p"}}], {"j": '{"a":[1,2],"b":{"c":true}}'}) \
        == {"j": '{"a":[1,2],"b":{"c":true}}', "p": {"a": [1, 2], "b": {"c": True}}}
    assert one(server, [{"json": {"field": "j", "add_to_root": True}}, {"remove": {"field": "j"}}],
               {"j": '{"x":1}', "y": 2}) == {"x": 1, "y": 2}
    r = one(server, [{"json": {"field": "j"}}], {"j": "{nope"})
    assert r["error"]["type"] == "illegal_argument_exception"
    assert one(server, [{"kv": {"field": "m", "field_split": " ", "value_split": "=",
                                "target_field": "kv", "exclude_keys": ["secret"],
                                "trim_value": "\""}}],
               {"m": 'user=bob ip=1.2.3.4 tag=a tag=b secret=x msg="hi"'}) \
        == {"m": 'user=bob ip=1.2.3.4 tag=a tag=b secret=x msg="hi"',
            "kv": {"user": "bob", "ip": "1.2.3.4", "tag": ["a", "b"], "msg": "hi"}}
    assert one(server, [{"kv": {"field": "q", "field_split": "&", "value_split": "=",
                                "prefix": "arg_", "include_keys": ["a"]}}], {"q": "a=1&b=2"}) \
        == {"q": "a=1&b=2", "arg_a": "1"}


def test_pipeline_processor(server, pfx):
    assert server.request("PUT", "/_ingest/pipeline/%s-inner" % pfx, {"processors": [
        {"set": {"field": "inner", "value": True}}]})[0] == 200
    assert server.request("PUT", "/_ingest/pipeline/%s-outer" % pfx, {"processors": [
        {"pipeline": {"name": "%s-inner" % pfx}}, {"set": {"field": "outer", "value": True}}]})[0] == 200
    assert server.request("PUT", "/_ingest/pipeline/%s-loop" % pfx, {"processors": [
        {"pipeline": {"name": "%s-loop" % pfx}}]})[0] == 200
    st, _, b = server.request("POST", "/_ingest/pipeline/%s-outer/_simulate" % pfx,
                              {"docs": [{"_source": {}}]})
    assert b["docs"][0]["doc"]["_source"] == {"inner": True, "outer": True}, b
    ix = pfx + "-nested"
    st, _, b = server.request("PUT", "/%s/_doc/1?pipeline=%s-outer" % (ix, pfx), {"a": 1})
    assert st == 201, b
    st, _, b = server.request("GET", "/%s/_doc/1" % ix)
    assert b["_source"] == {"a": 1, "inner": True, "outer": True}
    st, _, b = server.request("PUT", "/%s/_doc/2?pipeline=%s-loop" % (ix, pfx), {"a": 1})
    assert st == 400 and "too deep" in b["error"]["reason"], b
    st, _, b = server.request("POST", "/_ingest/pipeline/_simulate", {
        "pipeline": {"processors": [{"pipeline": {"name": "%s-none" % pfx}}]},
        "docs": [{"_source": {}}]})
    assert b["docs"][0]["error"]["type"] == "illegal_argument_exception"


def test_ingest_timestamp(server):
    r = one(server, [{"set": {"field": "received", "value": "{{_ingest.timestamp}}"}}], {})
    assert r["received"].endswith("Z") and r["received"][:2] == "20", r


def test_foreach(server, pfx):
    doc = {"tags": ["a", "b"], "people": [{"n": 1}, {"n": 2}], "m": {"x": "p", "y": "q"}}
    out = one(server, [
        {"foreach": {"field": "tags", "processor": {"uppercase": {"field": "_ingest._value"}}}},
        {"foreach": {"field": "people",
                     "processor": {"set": {"field": "_ingest._value.seen", "value": "{{_ingest._value.n}}"}}}},
        {"foreach": {"field": "m", "processor": {"uppercase": {"field": "_ingest._key"}}}},
        {"foreach": {"field": "m", "processor": {"uppercase": {"field": "_ingest._value"}}}},
    ], doc)
    assert out == {"tags": ["A", "B"], "people": [{"n": 1, "seen": "1"}, {"n": 2, "seen": "2"}],
                   "m": {"X": "P", "Y": "Q"}}
    # nested foreach keeps each level's element; the outer one is restored afterwards
    out = one(server, [{"foreach": {"field": "rows", "processor": {"foreach": {
        "field": "_ingest._value.cells", "processor": {"trim": {"field": "_ingest._value"}}}}}}],
        {"rows": [{"cells": [" a ", "b "]}, {"cells": [" c"]}]})
    assert out == {"rows": [{"cells": ["a", "b"]}, {"cells": ["c"]}]}
    # missing, not a list, a failing element, ignore_missing / ignore_failure
    got = one(server, [{"foreach": {"field": "nope", "processor": {"uppercase": {"field": "_ingest._value"}}}}], {})
    assert got["error"]["type"] == "illegal_argument_exception"
    assert one(server, [{"foreach": {"field": "nope", "ignore_missing": True,
                                     "processor": {"uppercase": {"field": "_ingest._value"}}}}], {"a": 1}) == {"a": 1}
    got = one(server, [{"foreach": {"field": "s", "processor": {"uppercase": {"field": "_ingest._value"}}}}], {"s": "x"})
    assert "cannot be cast to [java.util.List]" in got["error"]["reason"]
    got = one(server, [{"foreach": {"field": "v", "processor": {"convert": {"field": "_ingest._value", "type": "integer"}}}}],
              {"v": ["1", "x"]})
    assert got["error"]["type"] == "illegal_argument_exception", got
    assert one(server, [{"foreach": {"field": "v", "processor": {"convert": {
        "field": "_ingest._value", "type": "integer", "ignore_failure": True}}}}],
        {"v": ["1", "x", "3"]}) == {"v": [1, "x", 3]}
    # bad definitions are refused at PUT
    for body in ({"processors": [{"foreach": {"field": "a"}}]},
                 {"processors": [{"foreach": {"processor": {"uppercase": {"field": "x"}}}}]},
                 {"processors": [{"foreach": {"field": "a", "processor": {"nope": {}}}}]}):
        st, _, b = server.request("PUT", "/_ingest/pipeline/%s-fe" % pfx, body)
        assert_error(b, 400, "parse_exception")
    # on a real write
    st, _, b = server.request("PUT", "/_ingest/pipeline/%s-fe" % pfx, {"processors": [
        {"foreach": {"field": "tags", "processor": {"lowercase": {"field": "_ingest._value"}}}}]})
    assert st == 200, b
    st, _, b = server.request("PUT", "/%s-i/_doc/1?pipeline=%s-fe&refresh=true" % (pfx, pfx),
                              {"tags": ["X", "Y"]})
    assert st == 201, b
    st, _, b = server.request("GET", "/%s-i/_doc/1" % pfx)
    assert b["_source"] == {"tags": ["x", "y"]}


UA = [
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/120.0.6099.109 Safari/537.36",
     {"name": "Chrome", "version": "120.0.6099.109",
      "os": {"name": "Mac OS X", "version": "10.15.7", "full": "Mac OS X 10.15.7"},
      "device": {"name": "Mac"}}),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
     {"name": "Firefox", "version": "121.0",
      "os": {"name": "Windows", "version": "10", "full": "Windows 10"}, "device": {"name": "Other"}}),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91",
     {"name": "Edge", "version": "120.0.2210.91",
      "os": {"name": "Windows", "version": "10", "full": "Windows 10"}, "device": {"name": "Other"}}),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
     "Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
     {"name": "Mobile Safari", "version": "17.2",
      "os": {"name": "iOS", "version": "17.2", "full": "iOS 17.2"}, "device": {"name": "iPhone"}}),
    ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/120.0.6099.144 Mobile Safari/537.36",
     {"name": "Chrome Mobile", "version": "120.0.6099.144",
      "os": {"name": "Android", "version": "14", "full": "Android 14"},
      "device": {"name": "Samsung SM-S918B"}}),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
     {"name": "Googlebot", "version": "2.1", "device": {"name": "Spider"}}),
    ("curl/8.4.0", {"name": "curl", "version": "8.4.0", "device": {"name": "Other"}}),
    ("something else entirely", {"name": "Other", "device": {"name": "Other"}}),
]


def test_user_agent(server):
    for ua, want in UA:
        out = one(server, [{"user_agent": {"field": "agent"}}], {"agent": ua})
        want = dict(want, original=ua)
        assert out["user_agent"] == want, (ua, out)
    out = one(server, [{"user_agent": {"field": "agent", "target_field": "ua",
                                       "properties": ["name", "os"]}}], {"agent": UA[0][0]})
    assert out["ua"] == {"name": "Chrome", "os": UA[0][1]["os"]}
    got = one(server, [{"user_agent": {"field": "agent"}}], {})
    assert got["error"]["type"] == "illegal_argument_exception"
    assert one(server, [{"user_agent": {"field": "agent", "ignore_missing": True}}], {"a": 1}) == {"a": 1}
    got = one(server, [{"user_agent": {"field": "agent"}}], {"agent": 5})
    assert "cannot be cast" in got["error"]["reason"]
    st, _, b = server.request("POST", "/_ingest/pipeline/_simulate", {
        "pipeline": {"processors": [{"user_agent": {"field": "a", "properties": ["bogus"]}}]},
        "docs": [{"_source": {}}]})
    assert_error(b, 400, "parse_exception")


def test_unwritable_target_says_why(server):
    """A result that cannot be written at its path (an empty target_field) fails the document
    with a type and a reason, and an earlier ignored failure does not speak for it (found by
    ingest_fuzz: the processor failed with no reason)."""
    r = one(server, [{"json": {"field": "j", "target_field": "x.", "ignore_failure": True}},
                     {"json": {"field": "j", "target_field": ""}}], {"j": "{\"a\":1}"})
    err = r["error"]
    assert err["type"] == "illegal_argument_exception", r
    assert "[json] processor could not write its result to []" in err["reason"], r
