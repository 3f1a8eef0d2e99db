"""Aliases: POST /_aliases (atomic add / remove / remove_index), the per-index alias endpoints,
GET _alias, _cat/aliases, filters and routing applied through the alias, write indices, and
aliases wherever an index name goes (search, count, msearch, docs, bulk, refresh, wildcards)."""
import json
import os
import tempfile
import threading
import time

import pytest

from conftest import Server, assert_error


@pytest.fixture()
def names(server):
    """A factory of unique index names, all deleted after the test."""
    made = []
    base = "al-%d-%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)

    def make(suffix):
        made.append(base + "-" + suffix)
        return made[-1]

    yield make
    server.request("DELETE", "/" + ",".join(made) if made else "/none")
    for m in made:
        server.request("DELETE", "/" + m)


def mkindex(server, name, docs=(), shards=1):
    st, _, b = server.request("PUT", "/" + name, {"settings": {"number_of_shards": shards},
                                                   "mappings": {"properties": {
                                                       "tag": {"type": "keyword"},
                                                       "n": {"type": "long"}}}})
    assert st == 200, b
    for i, d in enumerate(docs):
        st, _, b = server.request("PUT", "/%s/_doc/%d" % (name, i), d)
        assert st in (200, 201), b
    server.request("POST", "/%s/_refresh" % name)


def count(server, target, body=None):
    st, _, b = server.request("POST", "/%s/_count" % target, body)
    assert st == 200, b
    return b["count"]


def aliases(server, actions):
    return server.request("POST", "/_aliases", {"actions": actions})


def test_add_get_remove(server, names):
    a, alias = names("a"), names("alias")
    mkindex(server, a, [{"tag": "x"}, {"tag": "y"}])
    st, _, b = aliases(server, [{"add": {"index": a, "alias": alias}}])
    assert st == 200 and b["acknowledged"] is True, b
    st, _, b = server.request("GET", "/_alias/" + alias)
    assert st == 200 and b == {a: {"aliases": {alias: {}}}}, b
    st, _, b = server.request("GET", "/%s/_alias" % a)
    assert b == {a: {"aliases": {alias: {}}}}
    st, _, b = server.request("GET", "/" + a)
    assert b[a]["aliases"] == {alias: {}}
    assert server.request("HEAD", "/_alias/" + alias)[0] == 200
    assert count(server, alias) == 2
    st, _, b = aliases(server, [{"remove": {"index": a, "alias": alias}}])
    assert st == 200, b
    st, _, b = server.request("GET", "/_alias/" + alias)
    assert st == 404 and b["error"] == "alias [%s] missing" % alias, b
    assert server.request("HEAD", "/_alias/" + alias)[0] == 404
    st, _, b = server.request("POST", "/%s/_count" % alias)
    assert st == 404
    assert_error(b, 404, "index_not_found_exception")


def test_put_delete_alias_endpoints(server, names):
    a, alias = names("a"), names("alias")
    mkindex(server, a)
    st, _, b = server.request("PUT", "/%s/_alias/%s" % (a, alias))
    assert st == 200 and b["acknowledged"], b
    st, _, b = server.request("GET", "/%s/_alias/%s" % (a, alias))
    assert b == {a: {"aliases": {alias: {}}}}
    st, _, b = server.request("DELETE", "/%s/_alias/%s" % (a, alias))
    assert st == 200, b
    st, _, b = server.request("DELETE", "/%s/_alias/%s" % (a, alias))
    assert st == 404
    assert_error(b, 404, "aliases_not_found_exception")


def test_errors(server, names):
    a, b_ = names("a"), names("b")
    mkindex(server, a)
    mkindex(server, b_)
    st, _, b = aliases(server, [{"add": {"index": names("missing"), "alias": "x" + a}}])
    assert st == 404
    assert_error(b, 404, "index_not_found_exception")
    # an alias cannot take an index's name
    st, _, b = aliases(server, [{"add": {"index": a, "alias": b_}}])
    assert st == 400
    assert_error(b, 400, "invalid_alias_name_exception")
    st, _, b = aliases(server, [{"add": {"index": a, "alias": "_bad"}}])
    assert st == 400
    assert_error(b, 400, "invalid_alias_name_exception")
    st, _, b = aliases(server, [{"frobnicate": {"index": a, "alias": "x"}}])
    assert st == 400
    st, _, b = server.request("POST", "/_aliases", {"actions": []})
    assert st == 400
    assert_error(b, 400, "action_request_validation_exception")
    st, _, b = aliases(server, [{"add": {"alias": "x"}}])
    assert st == 400
    assert_error(b, 400, "action_request_validation_exception")
    st, _, b = aliases(server, [{"add": {"index": a, "alias": "f" + a,
                                         "filter": {"nonsense_query": {}}}}])
    assert st == 400, b
    # a failing action leaves every earlier action of the request undone
    ok_alias = names("ok")
    st, _, b = aliases(server, [{"add": {"index": a, "alias": ok_alias}},
                                {"remove": {"index": a, "alias": names("nope")}}])
    assert st == 404
    assert_error(b, 404, "aliases_not_found_exception")
    assert server.request("GET", "/_alias/" + ok_alias)[0] == 404
    # an index cannot be created with an alias's name
    assert aliases(server, [{"add": {"index": a, "alias": ok_alias}}])[0] == 200
    st, _, b = server.request("PUT", "/" + ok_alias)
    assert st == 400
    assert_error(b, 400, "invalid_index_name_exception")
    # deleting an index through an alias is refused
    st, _, b = server.request("DELETE", "/" + ok_alias)
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    assert server.request("HEAD", "/" + a)[0] == 200


def test_filter_applies_to_search_and_count(server, names):
    a, alias = names("a"), names("alias")
    mkindex(server, a, [{"tag": "red", "n": 1}, {"tag": "blue", "n": 2}, {"tag": "red", "n": 3}])
    st, _, b = aliases(server, [{"add": {"index": a, "alias": alias,
                                         "filter": {"term": {"tag": "red"}}}}])
    assert st == 200, b
    assert count(server, alias) == 2
    assert count(server, a) == 3
    st, _, b = server.request("POST", "/%s/_search" % alias,
                              {"query": {"range": {"n": {"gte": 2}}}})
    assert st == 200
    assert [h["_source"]["n"] for h in b["hits"]["hits"]] == [3]
    assert b["hits"]["hits"][0]["_index"] == a
    # index named directly as well as through the alias: unfiltered
    assert count(server, "%s,%s" % (alias, a)) == 3
    st, _, b = server.request("GET", "/_alias/" + alias)
    assert b[a]["aliases"][alias]["filter"] == {"term": {"tag": "red"}}
    # msearch through the alias
    body = "\n".join([json.dumps({"index": alias}), json.dumps({"query": {"match_all": {}}}),
                      json.dumps({"index": a}), json.dumps({"size": 0})]) + "\n"
    st, _, b = server.request("POST", "/_msearch", body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200, b
    assert b["responses"][0]["hits"]["total"]["value"] == 2
    assert b["responses"][1]["hits"]["total"]["value"] == 3
    # scroll pages keep the filter
    st, _, b = server.request("POST", "/%s/_search?scroll=1m" % alias, {"size": 1})
    assert st == 200 and b["hits"]["total"]["value"] == 2
    seen = [b["hits"]["hits"][0]["_source"]["tag"]]
    sid = b["_scroll_id"]
    while True:
        st, _, b = server.request("POST", "/_search/scroll", {"scroll": "1m", "scroll_id": sid})
        if not b["hits"]["hits"]:
            break
        seen += [h["_source"]["tag"] for h in b["hits"]["hits"]]
    assert seen == ["red", "red"]


def test_two_filtered_aliases_or(server, names):
    a, r, bl = names("a"), names("red"), names("blue")
    mkindex(server, a, [{"tag": "red"}, {"tag": "blue"}, {"tag": "green"}])
    assert aliases(server, [
        {"add": {"index": a, "alias": r, "filter": {"term": {"tag": "red"}}}},
        {"add": {"index": a, "alias": bl, "filter": {"term": {"tag": "blue"}}}}])[0] == 200
    assert count(server, "%s,%s" % (r, bl)) == 2


def test_alias_over_several_indices_and_write_index(server, names):
    a, b_, alias = names("a"), names("b"), names("alias")
    mkindex(server, a, [{"tag": "a"}])
    mkindex(server, b_, [{"tag": "b"}, {"tag": "b"}])
    assert aliases(server, [{"add": {"indices": [a, b_], "alias": alias}}])[0] == 200
    assert count(server, alias) == 3
    # no write index: Elasticsearch's 400
    st, _, b = server.request("PUT", "/%s/_doc/new" % alias, {"tag": "n"})
    assert st == 400, b
    assert_error(b, 400, "illegal_argument_exception")
    assert "no write index is defined for alias" in b["error"]["reason"]
    st, _, b = server.request("POST", "/_bulk", "%s\n%s\n" % (
        json.dumps({"index": {"_index": alias, "_id": "z"}}), json.dumps({"tag": "z"})),
        headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and b["errors"] is True
    assert b["items"][0]["index"]["status"] == 400
    assert b["items"][0]["index"]["error"]["type"] == "illegal_argument_exception"
    # a get through an alias of two indices is refused
    st, _, b = server.request("GET", "/%s/_doc/0" % alias)
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    # designate b as the write index
    assert aliases(server, [{"add": {"index": b_, "alias": alias, "is_write_index": True}}])[0] == 200
    st, _, b = server.request("PUT", "/%s/_doc/new?refresh=true" % alias, {"tag": "n"})
    assert st == 201, b
    assert b["_index"] == b_
    st, _, b = server.request("POST", "/_bulk?refresh=true", "%s\n%s\n%s\n" % (
        json.dumps({"index": {"_index": alias, "_id": "z"}}), json.dumps({"tag": "z"}),
        json.dumps({"delete": {"_index": alias, "_id": "new"}})),
        headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and b["errors"] is False, b
    assert b["items"][0]["index"]["_index"] == b_
    assert b["items"][1]["delete"]["result"] == "deleted"
    assert count(server, b_) == 3
    # two write indices are refused
    st, _, b = aliases(server, [{"add": {"index": a, "alias": alias, "is_write_index": True}}])
    assert st == 400, b
    st, _, b = server.request("GET", "/_cat/aliases/%s?format=json" % alias)
    assert st == 200
    rows = sorted((r["index"], r["is_write_index"]) for r in b)
    assert rows == [(a, "-"), (b_, "true")]
    st, _, text = server.request("GET", "/_cat/aliases?v")
    assert text.splitlines()[0].split() == ["alias", "index", "filter", "routing.index",
                                            "routing.search", "is_write_index"]
    assert any(line.split()[:2] == [alias, b_] for line in text.splitlines())


def test_single_index_alias_is_write_index(server, names):
    a, alias = names("a"), names("alias")
    mkindex(server, a)
    assert aliases(server, [{"add": {"index": a, "alias": alias}}])[0] == 200
    st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % alias, {"tag": "q"})
    assert st == 201 and b["_index"] == a, b
    st, _, b = server.request("GET", "/%s/_doc/1" % alias)
    assert st == 200 and b["_index"] == a and b["_source"] == {"tag": "q"}
    st, _, b = server.request("GET", "/%s/_source/1" % alias)
    assert st == 200 and b == {"tag": "q"}
    st, _, b = server.request("POST", "/%s/_update/1?refresh=true" % alias, {"doc": {"n": 5}})
    assert st == 200, b
    st, _, b = server.request("POST", "/_mget", {"docs": [{"_index": alias, "_id": "1"}]})
    assert b["docs"][0]["found"] is True and b["docs"][0]["_index"] == a
    assert server.request("POST", "/%s/_refresh" % alias)[0] == 200
    st, _, b = server.request("DELETE", "/%s/_doc/1" % alias)
    assert st == 200 and b["result"] == "deleted"
    # is_write_index false on the only index: no write index
    assert aliases(server, [{"add": {"index": a, "alias": alias, "is_write_index": False}}])[0] == 200
    st, _, b = server.request("PUT", "/%s/_doc/2" % alias, {"tag": "q"})
    assert st == 400


def test_routing(server, names):
    a, alias = names("a"), names("alias")
    mkindex(server, a, shards=4)
    assert aliases(server, [{"add": {"index": a, "alias": alias, "routing": "k1"}}])[0] == 200
    st, _, b = server.request("GET", "/_alias/" + alias)
    assert b[a]["aliases"][alias] == {"index_routing": "k1", "search_routing": "k1"}
    for i in range(8):
        st, _, b = server.request("PUT", "/%s/_doc/%d" % (alias, i), {"n": i})
        assert st == 201, b
    server.request("POST", "/%s/_refresh" % a)
    # every document went to the shard of routing k1, and a get through the alias finds it
    st, _, b = server.request("GET", "/%s/_doc/3" % alias)
    assert st == 200 and b["_source"] == {"n": 3}, b
    st, _, b = server.request("GET", "/%s/_doc/3?routing=k1" % a)
    assert st == 200
    st, _, b = server.request("POST", "/%s/_search" % alias, {"size": 0})
    assert b["_shards"]["total"] == 1 and b["hits"]["total"]["value"] == 8, b
    st, _, b = server.request("POST", "/%s/_search" % a, {"size": 0})
    assert b["_shards"]["total"] == 4
    st, _, b = aliases(server, [{"add": {"index": a, "alias": alias + "2",
                                         "index_routing": "a,b"}}])
    assert st == 400


def test_wildcards_and_hidden(server, names):
    a, vis, hid = names("a"), names("vis"), names("hid")
    mkindex(server, a, [{"tag": "x"}, {"tag": "y"}])
    assert aliases(server, [
        {"add": {"index": a, "alias": vis, "filter": {"term": {"tag": "x"}}}},
        {"add": {"index": a, "alias": hid, "is_hidden": True,
                 "filter": {"term": {"tag": "y"}}}}])[0] == 200
    # a wildcard over an alias name applies its filter; hidden aliases are not matched
    assert count(server, vis[:-2] + "*") == 1
    assert count(server, hid[:-2] + "*") == 0
    assert count(server, hid) == 1
    st, _, b = server.request("GET", "/_alias/" + hid)
    assert b[a]["aliases"][hid]["is_hidden"] is True
    # remove with a wildcard alias pattern
    st, _, b = aliases(server, [{"remove": {"index": a, "aliases": [vis[:-2] + "*"]}}])
    assert st == 200
    st, _, b = server.request("GET", "/%s/_alias" % a)
    assert list(b[a]["aliases"]) == [hid]


def test_remove_index_swaps_index_for_alias(server, names):
    old, new = names("old"), names("new")
    mkindex(server, old, [{"tag": "o"}])
    mkindex(server, new, [{"tag": "n"}, {"tag": "n"}])
    st, _, b = aliases(server, [{"add": {"index": new, "alias": old}},
                                {"remove_index": {"index": old}}])
    assert st == 200, b
    assert count(server, old) == 2
    st, _, b = server.request("GET", "/_alias/" + old)
    assert b == {new: {"aliases": {old: {}}}}


def test_create_index_with_aliases(server, names):
    a, alias = names("a"), names("alias")
    st, _, b = server.request("PUT", "/" + a, {"aliases": {alias: {"is_write_index": True}}})
    assert st == 200, b
    st, _, b = server.request("GET", "/_alias/" + alias)
    assert b == {a: {"aliases": {alias: {"is_write_index": True}}}}
    bad = names("bad")
    st, _, b = server.request("PUT", "/" + bad, {"aliases": {a: {}}})
    assert st == 400
    assert server.request("HEAD", "/" + bad)[0] == 404


def test_atomic_swap_under_concurrent_searches(server, names):
    v1, v2, alias = names("v1"), names("v2"), names("live")
    mkindex(server, v1, [{"tag": "one"}] * 3)
    mkindex(server, v2, [{"tag": "two"}] * 5)
    assert aliases(server, [{"add": {"index": v1, "alias": alias}}])[0] == 200
    stop = threading.Event()
    bad = []
    seen = set()

    def searcher():
        while not stop.is_set():
            st, _, b = server.request("POST", "/%s/_search" % alias, {"size": 0})
            if st != 200:
                bad.append((st, b))
                continue
            total = b["hits"]["total"]["value"]
            seen.add(total)
            if total not in (3, 5) or b["_shards"]["total"] != 1:
                bad.append(b)

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(40):
            src, dst = (v1, v2) if i % 2 == 0 else (v2, v1)
            st, _, b = aliases(server, [{"remove": {"index": src, "alias": alias}},
                                        {"add": {"index": dst, "alias": alias}}])
            assert st == 200, b
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not bad, bad[:3]
    assert seen <= {3, 5}


def test_aliases_survive_restart():
    tmp = tempfile.mkdtemp(prefix="scry-alias-")
    s = Server(os.path.join(tmp, "data")).start()
    try:
        mkindex(s, "logs-a", [{"tag": "x"}, {"tag": "y"}])
        st, _, b = s.request("POST", "/_aliases", {"actions": [
            {"add": {"index": "logs-a", "alias": "logs", "filter": {"term": {"tag": "x"}},
                     "is_write_index": True, "routing": "r"}}]})
        assert st == 200, b
        assert s.stop() == 0
        s.start()
        st, _, b = s.request("GET", "/_alias/logs")
        assert b == {"logs-a": {"aliases": {"logs": {
            "filter": {"term": {"tag": "x"}}, "index_routing": "r", "search_routing": "r",
            "is_write_index": True}}}}, b
        st, _, b = s.request("POST", "/logs/_count")
        assert b["count"] == 1
    finally:
        s.stop()


def test_alias_rollover(server, names):
    base = names("r")
    first, alias = base + "-000001", names("w")
    assert server.request("PUT", "/" + first, {"aliases": {alias: {"is_write_index": True}}})[0] == 200
    server.request("PUT", "/%s/_doc/1?refresh=true" % alias, {"n": 1})
    st, _, b = server.request("POST", "/%s/_rollover" % alias, {"conditions": {"max_docs": 5}})
    assert st == 200 and b["rolled_over"] is False, b
    st, _, b = server.request("POST", "/%s/_rollover" % alias,
                              {"conditions": {"max_docs": 1},
                               "settings": {"number_of_shards": 2}})
    assert st == 200 and b["rolled_over"] is True, b
    second = base + "-000002"
    assert b["old_index"] == first and b["new_index"] == second
    names("r-000002")  # cleaned up after the test
    st, _, b = server.request("PUT", "/%s/_doc/2?refresh=true" % alias, {"n": 2})
    assert st == 201 and b["_index"] == second
    st, _, b = server.request("GET", "/_alias/" + alias)
    assert b[first]["aliases"][alias]["is_write_index"] is False
    assert b[second]["aliases"][alias]["is_write_index"] is True
    assert count(server, alias) == 2
    st, _, b = server.request("GET", "/%s/_settings" % second)
    assert b[second]["settings"]["index"]["number_of_shards"] == "2"
    # an implicit write index (single index, no flag) loses the alias
    third_alias = names("imp")
    assert server.request("PUT", "/%s/_alias/%s" % (second, third_alias))[0] == 200
    st, _, b = server.request("POST", "/%s/_rollover/%s" % (third_alias, names("custom")))
    assert st == 200 and b["rolled_over"] is True, b
    st, _, b = server.request("GET", "/_alias/" + third_alias)
    assert list(b) == [b_ for b_ in b if b_.endswith("custom")]
    st, _, b = server.request("POST", "/%s/_rollover" % first)
    assert st == 400
