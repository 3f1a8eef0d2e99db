"""Hardening (issue 17): a NUL byte anywhere in a request never cuts a name or an id short, ids
are byte strings end to end, a corrupt shard leaves its index visible and red, and the small
request-validation items. Each test drives the real server over HTTP."""
import base64
import glob
import json
import random
import os
import shutil
import subprocess
import tempfile

from conftest import Server, assert_error, scry_bin


def count(server, index):
    server.request("POST", "/%s/_refresh" % index)
    st, h, b = server.request("GET", "/%s/_count" % index)
    assert st == 200, b
    return b["count"]


def exists(server, index):
    st, h, b = server.request("GET", "/" + index)
    return st == 200


# ---- item 1: NUL in path segments, parameters, headers and JSON strings ----


def test_nul_in_index_segment_never_deletes_the_index(server, fresh_index):
    ix = fresh_index
    st, h, b = server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "keep me"})
    assert st == 201, b
    st, h, b = server.request("DELETE", "/%s%%00/_doc/1" % ix)
    assert st == 400, b
    assert_error(b, 400, "invalid_index_name_exception")
    st, h, b = server.request("DELETE", "/%s%%00" % ix)
    assert st == 400, b
    st, h, b = server.request("DELETE", "/%s%%00xyz" % ix)
    assert st == 400, b
    assert exists(server, ix)
    assert count(server, ix) == 1


def test_nul_in_index_name_never_creates_a_prefix_index(server):
    for path in ("/nulcut%00b", "/nulcut%00b/_doc/1", "/nulcut%00/_doc", "/nulcut%00b/_bulk"):
        method = "POST" if path.endswith(("_doc", "_bulk")) else "PUT"
        body = '{"index":{}}\n{"a":1}\n' if path.endswith("_bulk") else {"a": 1}
        st, h, b = server.request(method, path, body)
        assert st == 400, (path, b)
        assert b["error"]["type"] == "invalid_index_name_exception", b
        assert "NUL" in b["error"]["reason"], b
    assert not exists(server, "nulcut")


def test_nul_in_other_path_segments_refused(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    for method, path in (("GET", "/%s/_search%%00" % fresh_index),
                         ("GET", "/_cat/indices%00x"),
                         ("GET", "/_tasks/a%00b"),
                         ("GET", "/_search/scroll/abc%00def")):
        st, h, b = server.request(method, path)
        assert st == 400, (path, b)
        assert b["error"]["type"] == "illegal_argument_exception", b


def test_nul_in_query_parameters_refused(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "x"})
    for q in ("q=t:x%00y", "routing=a%00b", "size=1%00", "x%00y=1", "filter_path=took%00,hits"):
        st, h, b = server.request("GET", "/%s/_search?%s" % (ix, q))
        assert st == 400, (q, b)
        assert_error(b, 400, "illegal_argument_exception")
        assert "NUL" in b["error"]["reason"], b
    st, h, b = server.request("PUT", "/%s/_doc/2?routing=r%%00x" % ix, {"t": "y"})
    assert st == 400, b
    assert count(server, ix) == 1


def test_nul_in_basic_credentials_refused():
    """libmicrohttpd hands the decoded password over as a C string: "pw\\0junk" must not pass
    as "pw"."""
    tmp = tempfile.mkdtemp(prefix="scry-hard-")
    r = subprocess.run([scry_bin(), "passwd", "alice"], input=b"pw\n", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 0, r.stderr
    users = os.path.join(tmp, "users")
    with open(users, "w") as f:
        f.write(r.stdout.decode())
    srv = Server(os.path.join(tmp, "data"), ["--users", users]).start()
    try:
        def basic(cred):
            return {"Authorization": "Basic " + base64.b64encode(cred).decode()}
        st, h, b = srv.request("GET", "/", headers=basic(b"alice:pw"))
        assert st == 200, b
        for cred in (b"alice:pw\x00junk", b"alice:pw\x00", b"alice\x00x:pw"):
            st, h, b = srv.request("GET", "/", headers=basic(cred))
            assert st == 401, (cred, b)
    finally:
        srv.stop()


def test_nul_in_json_names_refused(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "x"})
    # A bulk delete aimed at "<ix>\0..." must not delete ix's doc 1.
    body = json.dumps({"delete": {"_index": ix + "\u0000evil", "_id": "1"}}) + "\n"
    st, h, b = server.request("POST", "/_bulk?refresh=true", body)
    assert st in (200, 400), b
    if st == 200:
        assert b["errors"] is True, b
        assert b["items"][0]["delete"]["status"] == 400, b
    assert count(server, ix) == 1
    # Search bodies: a string holding NUL is refused, not searched as its prefix.
    st, h, b = server.request("POST", "/%s/_search" % ix,
                              '{"query":{"term":{"t":"x\\u0000zzz"}}}')
    assert st == 400, b
    assert "NUL" in b["error"]["reason"], b
    st, h, b = server.request("PUT", "/nuljs", '{"settings":{"number_of_shards":"1\\u00002"}}')
    assert st == 400, b
    assert not exists(server, "nuljs")


# ---- item 2: ids are byte strings ----


def test_nul_in_url_id_kept_whole(server, fresh_index):
    ix = fresh_index
    st, h, b = server.request("PUT", "/%s/_doc/a?refresh=true" % ix, {"v": "plain"})
    assert st == 201, b
    st, h, b = server.request("PUT", "/%s/_doc/a%%00b?refresh=true" % ix, {"v": "nul"})
    assert st == 201, b
    assert b["_id"] == "a\u0000b" and b["result"] == "created", b
    st, h, b = server.request("GET", "/%s/_doc/a" % ix)
    assert st == 200 and b["_source"] == {"v": "plain"}, b
    st, h, b = server.request("GET", "/%s/_doc/a%%00b" % ix)
    assert st == 200 and b["_id"] == "a\u0000b" and b["_source"] == {"v": "nul"}, b
    st, h, b = server.request("GET", "/%s/_doc/a%%00zzz" % ix)
    assert st == 404 and b["found"] is False, b
    st, h, b = server.request("GET", "/%s/_source/a%%00b" % ix)
    assert st == 200 and b == {"v": "nul"}, b
    assert count(server, ix) == 2
    st, h, b = server.request("POST", "/%s/_update/a%%00b?refresh=true" % ix,
                              {"doc": {"w": 1}})
    assert st == 200 and b["_id"] == "a\u0000b", b
    st, h, b = server.request("GET", "/%s/_doc/a" % ix)
    assert b["_source"] == {"v": "plain"}, b
    st, h, b = server.request("DELETE", "/%s/_doc/a%%00b?refresh=true" % ix)
    assert st == 200 and b["result"] == "deleted", b
    st, h, b = server.request("GET", "/%s/_doc/a" % ix)
    assert st == 200 and b["_source"] == {"v": "plain"}, b
    assert count(server, ix) == 1


def test_nul_in_bulk_and_mget_ids_kept_whole(server, fresh_index):
    ix = fresh_index
    lines = [{"index": {"_index": ix, "_id": "a"}}, {"v": "plain"},
             {"index": {"_index": ix, "_id": "a\u0000b"}}, {"v": "nul"},
             {"create": {"_index": ix, "_id": "a\u0000c", "routing": "r\u0000s"}}, {"v": "rt"}]
    body = "".join(json.dumps(l) + "\n" for l in lines)
    st, h, b = server.request("POST", "/_bulk?refresh=true", body)
    assert st == 200 and not b["errors"], b
    assert [list(i.values())[0]["_id"] for i in b["items"]] == ["a", "a\u0000b", "a\u0000c"]
    assert [list(i.values())[0]["result"] for i in b["items"]] == ["created"] * 3, b
    assert count(server, ix) == 3
    st, h, b = server.request("GET", "/%s/_doc/a" % ix)
    assert b["_source"] == {"v": "plain"}, b
    st, h, b = server.request("POST", "/%s/_mget" % ix,
                              {"docs": [{"_id": "a\u0000b"}, {"_id": "a"},
                                        {"_id": "a\u0000"}, {"_id": "a\u0000c",
                                                             "routing": "r\u0000s"}]})
    assert st == 200, b
    got = [(d["_id"], d["found"], d.get("_source")) for d in b["docs"]]
    assert got == [("a\u0000b", True, {"v": "nul"}), ("a", True, {"v": "plain"}),
                   ("a\u0000", False, None), ("a\u0000c", True, {"v": "rt"})], b
    st, h, b = server.request("POST", "/%s/_mget" % ix, {"ids": ["a\u0000b"]})
    assert st == 200 and b["docs"][0]["found"] and b["docs"][0]["_id"] == "a\u0000b", b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"sort": [{"_id": "asc"}]})
    assert [x["_id"] for x in b["hits"]["hits"]] == ["a", "a\u0000b", "a\u0000c"], b
    body = json.dumps({"delete": {"_index": ix, "_id": "a\u0000b"}}) + "\n"
    st, h, b = server.request("POST", "/_bulk?refresh=true", body)
    assert st == 200 and b["items"][0]["delete"]["result"] == "deleted", b
    st, h, b = server.request("GET", "/%s/_doc/a" % ix)
    assert st == 200 and b["_source"] == {"v": "plain"}, b


def test_nul_ids_survive_restart():
    """Ids holding NUL through the translog (replay) and through the id table (flushed)."""
    tmp = tempfile.mkdtemp(prefix="scry-hard-")
    srv = Server(os.path.join(tmp, "data")).start()
    try:
        srv.request("PUT", "/ids", {"settings": {"number_of_shards": 1}})
        for i, doc_id in enumerate(("a", "a%00b", "a%00%00", "b")):
            st, h, b = srv.request("PUT", "/ids/_doc/%s" % doc_id, {"n": i})
            assert st == 201, b
        assert srv.stop() == 0
        srv.start()
        for i, doc_id in enumerate(("a", "a%00b", "a%00%00", "b")):
            st, h, b = srv.request("GET", "/ids/_doc/%s" % doc_id)
            assert st == 200 and b["_source"] == {"n": i}, (doc_id, b)
        st, h, b = srv.request("POST", "/ids/_flush")
        assert st == 200, b
        srv.request("PUT", "/ids/_doc/a%00b", {"n": 10})
        assert srv.stop() == 0
        srv.start()
        st, h, b = srv.request("GET", "/ids/_doc/a%00b")
        assert b["_source"] == {"n": 10} and b["_version"] == 2, b
        st, h, b = srv.request("GET", "/ids/_doc/a")
        assert b["_source"] == {"n": 0} and b["_version"] == 1, b
        assert count(srv, "ids") == 4
    finally:
        srv.stop()


# ---- item 3: a corrupt shard stays visible, red and failed ----


def corrupt_one_segment(data_dir, index_uuid, shard):
    segs = sorted(glob.glob(os.path.join(data_dir, "indices", index_uuid, str(shard), "*.seg")))
    assert segs, os.listdir(os.path.join(data_dir, "indices", index_uuid, str(shard)))
    path = segs[0]
    with open(path, "r+b") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(size // 2)
        c = f.read(1)
        f.seek(size // 2)
        f.write(bytes([c[0] ^ 0x5A]))
    return path


def test_corrupt_shard_keeps_index_visible_and_red():
    tmp = tempfile.mkdtemp(prefix="scry-hard-")
    data = os.path.join(tmp, "data")
    srv = Server(data).start()
    try:
        st, h, b = srv.request("PUT", "/corr", {"settings": {"number_of_shards": 2,
                                                             "number_of_replicas": 0}})
        assert st == 200, b
        docs = "".join(json.dumps({"index": {"_id": str(i)}}) + "\n" +
                       json.dumps({"t": "word", "n": i}) + "\n" for i in range(40))
        st, h, b = srv.request("POST", "/corr/_bulk?refresh=true", docs)
        assert st == 200 and not b["errors"], b
        st, h, b = srv.request("GET", "/_cat/shards/corr?format=json")
        assert st == 200, b
        per_shard = {int(r["shard"]): int(r["docs"]) for r in b}
        assert per_shard[0] > 0 and per_shard[1] > 0, b
        st, h, b = srv.request("POST", "/corr/_flush")
        assert st == 200, b
        st, h, b = srv.request("GET", "/corr")
        uuid = b["corr"]["settings"]["index"]["uuid"]
        assert srv.stop() == 0
        seg = corrupt_one_segment(data, uuid, 0)
        folders = sorted(os.listdir(os.path.join(data, "indices")))
        srv.start()

        st, h, b = srv.request("GET", "/corr")
        assert st == 200, b
        st, h, b = srv.request("GET", "/_cluster/health")
        assert st == 200 and b["status"] == "red", b
        assert b["unassigned_shards"] >= 1 and b["unassigned_primary_shards"] == 1, b
        assert b["active_primary_shards"] == 1, b
        st, h, b = srv.request("GET", "/_cluster/health/corr")
        assert b["status"] == "red", b
        st, h, b = srv.request("GET", "/_cat/indices?format=json")
        rows = [r for r in b if r["index"] == "corr"]
        assert rows and rows[0]["health"] == "red", b
        st, h, b = srv.request("GET", "/_cat/shards/corr?format=json&h=index,shard,prirep,state,"
                               "docs,unassigned.reason,unassigned.details")
        assert st == 200, b
        by = {int(r["shard"]): r for r in b}
        assert by[0]["state"] == "UNASSIGNED", b
        assert by[0]["unassigned.reason"] == "ALLOCATION_FAILED", b
        assert by[0]["unassigned.details"], b
        assert by[1]["state"] == "STARTED" and int(by[1]["docs"]) == per_shard[1], b
        st, h, text = srv.request("GET", "/_cat/shards/corr?v&h=index,shard,prirep,state")
        assert "UNASSIGNED" in text and "STARTED" in text, text

        st, h, b = srv.request("POST", "/corr/_search", {"query": {"match": {"t": "word"}},
                                                       "size": 100})
        assert st == 200, b
        assert b["_shards"] == {"total": 2, "successful": 1, "skipped": 0, "failed": 1,
                                "failures": b["_shards"]["failures"]}, b
        f = b["_shards"]["failures"][0]
        assert f["shard"] == 0 and f["index"] == "corr", b
        assert b["hits"]["total"]["value"] == per_shard[1], b
        st, h, b = srv.request("GET", "/corr/_count")
        assert st == 200 and b["count"] == per_shard[1], b
        assert b["_shards"]["failed"] == 1, b
        # Scroll and point in time pin the shards that serve and report the failed one.
        st, h, b = srv.request("POST", "/corr/_search?scroll=1m", {"size": 5})
        assert st == 200 and b["_shards"]["failed"] == 1, b
        seen = len(b["hits"]["hits"])
        while b["hits"]["hits"]:
            st, h, b = srv.request("POST", "/_search/scroll",
                                   {"scroll_id": b["_scroll_id"], "scroll": "1m"})
            assert st == 200, b
            seen += len(b["hits"]["hits"])
        assert seen == per_shard[1]
        st, h, b = srv.request("POST", "/corr/_pit?keep_alive=1m")
        assert st == 200, b
        st, h, b = srv.request("POST", "/_search", {"pit": {"id": b["id"]}, "size": 100})
        assert st == 200 and len(b["hits"]["hits"]) == per_shard[1], b
        assert b["_shards"]["failed"] == 1, b

        st, h, b = srv.request("PUT", "/corr")
        assert st == 400, b
        assert_error(b, 400, "resource_already_exists_exception")
        assert sorted(os.listdir(os.path.join(data, "indices"))) == folders
        assert os.path.exists(seg), "the corrupt segment is kept for inspection"
        # Writes: the failed shard's items fail alone with 503, the others succeed.
        docs = "".join(json.dumps({"index": {"_id": str(i)}}) + "\n" +
                       json.dumps({"t": "again"}) + "\n" for i in range(40))
        st, h, b = srv.request("POST", "/corr/_bulk", docs)
        assert st == 200 and b["errors"], b
        bad = [i["index"] for i in b["items"] if i["index"]["status"] != 200]
        assert len(bad) == 40 - per_shard[1], b
        assert all(x["status"] == 503 and
                   x["error"]["type"] == "unavailable_shards_exception" for x in bad), bad
        lost = bad[0]["_id"]
        st, h, b = srv.request("GET", "/corr/_doc/%s" % lost)
        assert st == 503 and b["error"]["type"] == "no_shard_available_action_exception", b
        st, h, b = srv.request("POST", "/corr/_mget", {"ids": [lost]})
        assert st == 200 and b["docs"][0]["error"]["type"] == \
            "no_shard_available_action_exception", b
        # Still red after a restart; deleting the index is allowed and removes it.
        assert srv.stop() == 0
        srv.start()
        st, h, b = srv.request("GET", "/_cluster/health")
        assert b["status"] == "red", b
        st, h, b = srv.request("DELETE", "/corr")
        assert st == 200, b
        st, h, b = srv.request("GET", "/_cluster/health")
        assert b["status"] == "green", b
        st, h, b = srv.request("PUT", "/corr")
        assert st == 200, b
    finally:
        srv.stop()


# ---- item 10: op_type create inside a bulk index action ----


def test_bulk_index_op_type_create_conflicts(server, fresh_index):
    ix = fresh_index
    st, h, b = server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"v": "original"})
    assert st == 201, b
    body = (json.dumps({"index": {"_index": ix, "_id": "1", "op_type": "create"}}) + "\n" +
            json.dumps({"v": "overwritten"}) + "\n" +
            json.dumps({"index": {"_index": ix, "_id": "2", "op_type": "create"}}) + "\n" +
            json.dumps({"v": "new"}) + "\n")
    st, h, b = server.request("POST", "/_bulk?refresh=true", body)
    assert st == 200 and b["errors"] is True, b
    first, second = b["items"]
    assert list(first) == ["create"], b
    assert first["create"]["status"] == 409, b
    assert first["create"]["error"]["type"] == "version_conflict_engine_exception", b
    assert list(second) == ["create"] and second["create"]["status"] == 201, b
    st, h, b = server.request("GET", "/%s/_doc/1" % ix)
    assert b["_source"] == {"v": "original"} and b["_version"] == 1, b
    body = json.dumps({"index": {"_index": ix, "_id": "3", "op_type": "bogus"}}) + "\n{}\n"
    st, h, b = server.request("POST", "/_bulk", body)
    assert st == 200 and b["items"][0]["index"]["status"] == 400, b


# ---- item 9: bulk action lines as log shippers send them ----


def test_bulk_action_with_extra_keys_accepted_with_warning(server, fresh_index):
    ix = fresh_index
    body = (json.dumps({"index": {"_index": ix, "pipeline": None}, "attempts": 0}) + "\n" +
            json.dumps({"message": "hello"}) + "\n" +
            json.dumps({"create": {"_index": ix, "_id": "c1", "pipeline": None}}) + "\n" +
            json.dumps({"message": "world"}) + "\n")
    st, h, b = server.request("POST", "/_bulk?refresh=true", body)
    assert st == 200 and b["errors"] is False, b
    assert [list(i)[0] for i in b["items"]] == ["index", "create"], b
    warning = h.get("Warning", "")
    assert warning.startswith("299 Elasticsearch-") and "multiple keys" in warning, h
    assert count(server, ix) == 2
    # Without extra keys there is no warning.
    st, h, b = server.request("POST", "/_bulk", json.dumps({"index": {"_index": ix}}) + "\n{}\n")
    assert st == 200 and "Warning" not in h, h


# ---- item 6: messages for bad size / from ----


def test_size_and_from_messages(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "x"})
    st, h, b = server.request("POST", "/%s/_search" % ix, {"size": "x"})
    assert st == 400, b
    reason = b["error"]["reason"]
    assert "[size]" in reason and '"x"' in reason and "negative" not in reason, b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"from": 1e9})
    assert st == 400, b
    assert "Result window is too large" in json.dumps(b), b
    assert "negative" not in json.dumps(b), b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"size": -1})
    assert st == 400 and "[size] parameter cannot be negative, found [-1]" in \
        b["error"]["reason"], b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"size": "1", "from": 0.0})
    assert st == 200 and len(b["hits"]["hits"]) == 1, b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"size": 1.5})
    assert st == 400 and "1.5" in b["error"]["reason"], b


# ---- item 12: leftovers of interrupted writes are removed at open ----


def test_leftover_files_removed_at_open():
    tmp = tempfile.mkdtemp(prefix="scry-hard-")
    data = os.path.join(tmp, "data")
    srv = Server(data).start()
    try:
        srv.request("PUT", "/left", {"settings": {"number_of_shards": 1}})
        body = "".join(json.dumps({"index": {"_id": str(i)}}) + "\n" + json.dumps({"n": i}) +
                       "\n" for i in range(10))
        st, h, b = srv.request("POST", "/left/_bulk?refresh=true", body)
        assert st == 200 and not b["errors"], b
        assert srv.request("POST", "/left/_flush")[0] == 200
        uuid = srv.request("GET", "/left")[2]["left"]["settings"]["index"]["uuid"]
        assert srv.stop() == 0
        shard = os.path.join(data, "indices", uuid, "0")
        before = set(os.listdir(shard))
        leftovers = [".seg00000003.seg.tmp", "seg00000099.seg.tmp", "seg00000098.seg"]
        for name in leftovers:
            with open(os.path.join(shard, name), "wb") as f:
                f.write(b"" if name.endswith(".tmp") else b"junk" * 100)
        srv.start()
        after = set(os.listdir(shard))
        assert not (set(leftovers) & after), after
        assert before <= after, (before, after)
        assert "removed 3 unreferenced files" in srv.read_log(), srv.read_log()
        assert count(srv, "left") == 10
    finally:
        srv.stop()


# ---- item 5: requests that should fail ----


def test_sort_on_text_or_unmapped_field_refused(server, fresh_index):
    ix = fresh_index
    st, h, b = server.request("PUT", "/" + ix, {"mappings": {"properties": {
        "t": {"type": "text", "fields": {"raw": {"type": "keyword"}}}, "n": {"type": "long"}}}})
    assert st == 200, b
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "b", "n": 2})
    server.request("PUT", "/%s/_doc/2?refresh=true" % ix, {"t": "a", "n": 1})
    st, h, b = server.request("POST", "/%s/_search" % ix, {"sort": [{"t": "asc"}]})
    assert st == 400, b
    assert b["error"]["type"] == "illegal_argument_exception", b
    assert b["error"]["reason"].startswith("Text fields are not optimised"), b
    st, h, b = server.request("GET", "/%s/_search?sort=t:asc" % ix)
    assert st == 400, b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"sort": ["nope"]})
    assert st == 400 and "No mapping found for [nope] in order to sort on" in \
        b["error"]["reason"], b
    st, h, b = server.request("POST", "/%s/_search" % ix,
                              {"sort": [{"nope": {"order": "asc", "unmapped_type": "long"}}]})
    assert st == 200 and b["hits"]["total"]["value"] == 2, b
    assert all(x["sort"] == [None] or x["sort"][0] is None or isinstance(x["sort"][0], int)
               for x in b["hits"]["hits"]), b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"sort": [{"t.raw": "asc"}, "n", "_id"]})
    assert st == 200 and [x["_id"] for x in b["hits"]["hits"]] == ["2", "1"], b


def test_duplicate_keys_and_bad_source_refused(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "x"})
    st, h, b = server.request("POST", "/%s/_search" % ix,
                              '{"query":{"match_all":{}},"size":1,"size":2}')
    assert st == 400, b
    assert_error(b, 400, "x_content_parse_exception")
    assert "Duplicate field 'size'" in b["error"]["reason"], b
    st, h, b = server.request("PUT", "/%s/_doc/2" % ix, '{"a":1,"a":2}')
    assert st == 400 and "Duplicate field 'a'" in b["error"]["reason"], b
    st, h, b = server.request("POST", "/%s/_search" % ix, {"_source": 5})
    assert st == 400, b
    assert_error(b, 400, "parsing_exception")
    for ok in (False, True, "t", ["t"], {"includes": ["t"]}):
        st, h, b = server.request("POST", "/%s/_search" % ix, {"_source": ok})
        assert st == 200, (ok, b)


def test_unsupported_search_keys_refused(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"t": "x"})
    for key, val in (("script_fields", {"a": {"script": "1"}}),):
        st, h, b = server.request("POST", "/%s/_search" % ix,
                                  {"query": {"match_all": {}}, key: val})
        assert st == 400, (key, b)
        assert_error(b, 400, "illegal_argument_exception")
        assert "[%s]" % key in b["error"]["reason"], b
    st, h, b = server.request("POST", "/%s/_search" % ix,
                              {"explain": False, "profile": False, "highlight": {}})
    assert st == 200, b
    # runtime_mappings runs (test_runtime_fields.py); a field without a script (values from
    # _source) is what it refuses
    st, h, b = server.request("POST", "/%s/_search" % ix,
                              {"runtime_mappings": {"x": {"type": "long"}}})
    assert st == 400, b
    assert_error(b, 400, "illegal_argument_exception")
    assert "runtime field [x] has no [script]" in b["error"]["reason"], b


def test_task_id_may_start_with_underscore(server):
    """A node id is random base64url, so a task id (node:n) may start with '_': GET
    /_tasks/{id} must reach the tasks API (unknown task), not answer "no handler found"."""
    st, _, b = server.request("GET", "/_tasks/_AbCdEfGhIjKlMnOpQrStUv:424242")
    assert "no handler found" not in json.dumps(b), b
    assert st == 200 and "nodes" in b, b  # the tasks API answered (no such task running)


def test_sort_on_id_sorts_ids_in_byte_order(server, fresh_index):
    """Sorting on _id reads the ids' doc values (keyword order), whatever the indexing order,
    across segments, with search_after paging."""
    ix = fresh_index
    ids = ["d%d" % i for i in range(15)]
    order = list(range(15))
    random.Random(5).shuffle(order)
    for k, i in enumerate(order):
        refresh = "?refresh=true" if k in (5, 14) else ""  # three segments
        st, _, b = server.request("PUT", "/%s/_doc/%s%s" % (ix, ids[i], refresh), {"n": i})
        assert st in (200, 201), b
    want = sorted(ids)
    st, _, b = server.request("POST", "/%s/_search" % ix, {"size": 20, "sort": [{"_id": "asc"}]})
    assert st == 200 and [h["_id"] for h in b["hits"]["hits"]] == want, b
    assert [h["sort"] for h in b["hits"]["hits"]] == [[x] for x in want], b
    st, _, b = server.request("POST", "/%s/_search" % ix, {"size": 20, "sort": [{"_id": "desc"}]})
    assert [h["_id"] for h in b["hits"]["hits"]] == want[::-1], b
    st, _, b = server.request("POST", "/%s/_search" % ix, {"size": 4, "sort": ["_id"],
                                                          "search_after": [want[5]]})
    assert [h["_id"] for h in b["hits"]["hits"]] == want[6:10], b


def test_settings_update_survives_a_restart():
    """PUT _settings is persisted with the index's metadata (it was applied in memory only and
    lost at the next start)."""
    tmp = tempfile.mkdtemp(prefix="scry-hard-")
    data = os.path.join(tmp, "data")
    srv = Server(data).start()
    try:
        st, _, b = srv.request("PUT", "/st", {"settings": {"number_of_shards": 1}})
        assert st == 200, b
        st, _, b = srv.request("PUT", "/st/_settings", {"index": {
            "refresh_interval": "7s", "max_result_window": 777, "number_of_replicas": 0}})
        assert st == 200, b
        assert srv.stop() == 0
        srv = Server(data).start()
        st, _, b = srv.request("GET", "/st/_settings")
        ix = b["st"]["settings"]["index"]
        assert (ix["refresh_interval"], ix["max_result_window"], ix["number_of_replicas"]) == \
            ("7s", "777", "0"), b
        st, _, b = srv.request("POST", "/st/_search", {"from": 770, "size": 7})
        assert st == 200, b  # the window of 777 is in force after the restart
        st, _, b = srv.request("POST", "/st/_search", {"from": 770, "size": 8})
        assert st == 400, b
        st, _, b = srv.request("GET", "/_cluster/health/st")
        assert b["status"] == "green", b  # no replica expected any more
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
