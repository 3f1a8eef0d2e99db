"""_reindex, _delete_by_query and _update_by_query: synchronous runs, queries, max_docs,
pipelines, op_type create conflicts, wait_for_completion=false with GET /_tasks/{id}, and the
clear 400 for scripts."""
import json
import os
import time

import pytest

from conftest import assert_error


@pytest.fixture()
def pfx(server):
    p = "rx%d%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)
    yield p
    server.request("DELETE", "/%s*" % p)


def fill(server, index, n, shards=2):
    server.request("PUT", "/" + index, {"settings": {"number_of_shards": shards},
                                        "mappings": {"properties": {"k": {"type": "keyword"},
                                                                    "n": {"type": "long"}}}})
    body = "".join(json.dumps({"index": {"_index": index, "_id": str(i)}}) + "\n" +
                   json.dumps({"n": i, "k": "even" if i % 2 == 0 else "odd"}) + "\n"
                   for i in range(n))
    st, _, b = server.request("POST", "/_bulk?refresh=true", body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"]


def count(server, index, q=None):
    st, _, b = server.request("POST", "/%s/_count" % index, {"query": q} if q else None)
    assert st == 200, b
    return b["count"]


def test_reindex(server, pfx):
    src, dst = pfx + "-src", pfx + "-dst"
    fill(server, src, 2500)
    st, _, b = server.request("POST", "/_reindex?refresh=true",
                              {"source": {"index": src, "size": 700}, "dest": {"index": dst}})
    assert st == 200, b
    assert b["total"] == 2500 and b["created"] == 2500 and b["batches"] == 4
    assert b["failures"] == [] and b["timed_out"] is False
    server.request("POST", "/%s/_refresh" % dst)
    assert count(server, dst) == 2500
    st, _, b = server.request("GET", "/%s/_doc/17" % dst)
    assert b["_source"] == {"n": 17, "k": "odd"}
    # again: updates
    st, _, b = server.request("POST", "/_reindex", {"source": {"index": src,
                                                               "query": {"term": {"k": "even"}}},
                                                    "dest": {"index": dst}, "max_docs": 10})
    assert st == 200 and b["updated"] == 10 and b["total"] == 10, b
    # op_type create: conflicts abort with 409, or proceed and count them
    st, _, b = server.request("POST", "/_reindex", {"source": {"index": src},
                                                    "dest": {"index": dst, "op_type": "create"}})
    assert st == 409, b
    assert b["version_conflicts"] >= 1 and b["failures"][0]["status"] == 409
    st, _, b = server.request("POST", "/_reindex", {"source": {"index": src}, "conflicts": "proceed",
                                                    "dest": {"index": dst, "op_type": "create"}})
    assert st == 200 and b["version_conflicts"] == 2500 and b["created"] == 0, b


def test_reindex_with_pipeline_and_errors(server, pfx):
    src, dst = pfx + "-src", pfx + "-p"
    fill(server, src, 20)
    assert server.request("PUT", "/_ingest/pipeline/%s-up" % pfx, {"processors": [
        {"uppercase": {"field": "k"}}]})[0] == 200
    st, _, b = server.request("POST", "/_reindex?refresh=true", {
        "source": {"index": src}, "dest": {"index": dst, "pipeline": "%s-up" % pfx}})
    assert st == 200 and b["created"] == 20, b
    st, _, b = server.request("GET", "/%s/_doc/3" % dst)
    assert b["_source"]["k"] == "ODD"
    server.request("DELETE", "/_ingest/pipeline/%s-up" % pfx)
    st, _, b = server.request("POST", "/_reindex", {"source": {"index": src}, "dest": {"index": dst},
                                                    "script": {"source": "ctx._source.n++"}})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("POST", "/_reindex", {"source": {"index": pfx + "-missing"},
                                                    "dest": {"index": dst}})
    assert st == 404
    assert_error(b, 404, "index_not_found_exception")
    st, _, b = server.request("POST", "/_reindex", {"source": {"index": src}})
    assert st == 400


def test_delete_and_update_by_query(server, pfx):
    ix = pfx + "-q"
    fill(server, ix, 1200, shards=3)
    st, _, b = server.request("POST", "/%s/_delete_by_query?refresh=true&scroll_size=500" % ix,
                              {"query": {"term": {"k": "odd"}}})
    assert st == 200, b
    assert b["deleted"] == 600 and b["total"] == 600 and b["batches"] == 2
    assert count(server, ix) == 600
    assert count(server, ix, {"term": {"k": "odd"}}) == 0
    st, _, b = server.request("POST", "/%s/_delete_by_query" % ix, {})
    assert st == 400
    # update in place picks up a new mapping
    st, _, b = server.request("PUT", "/%s/_mapping" % ix, {"properties": {
        "k": {"type": "keyword", "fields": {"raw": {"type": "keyword"}}}}})
    assert st == 200, b
    assert count(server, ix, {"term": {"k.raw": "even"}}) == 0
    st, _, b = server.request("POST", "/%s/_update_by_query?refresh=true" % ix)
    assert st == 200 and b["updated"] == 600, b
    assert count(server, ix, {"term": {"k.raw": "even"}}) == 600
    st, _, b = server.request("POST", "/%s/_update_by_query" % ix,
                              {"script": {"source": "ctx._source.n += 1"}})
    assert st == 400
    st, _, b = server.request("POST", "/%s/_delete_by_query?max_docs=5&refresh=true" % ix,
                              {"query": {"match_all": {}}})
    assert b["deleted"] == 5 and count(server, ix) == 595


def test_async_task(server, pfx):
    src, dst = pfx + "-a", pfx + "-b"
    fill(server, src, 3000)
    before_ms = int(time.time() * 1000)
    st, _, b = server.request("POST", "/_reindex?wait_for_completion=false&scroll_size=300",
                              {"source": {"index": src}, "dest": {"index": dst}})
    assert st == 200, b
    task = b["task"]
    assert ":" in task
    deadline = time.time() + 60
    while True:
        st, _, b = server.request("GET", "/_tasks/" + task)
        assert st == 200, b
        assert b["task"]["action"] == "indices:data/write/reindex"
        assert "total" in b["task"]["status"]
        # epoch ms of the start (derived from the monotonic start: 1 s of slack for rounding
        # and the wall clock's granularity)
        start = b["task"]["start_time_in_millis"]
        assert before_ms - 1000 <= start <= int(time.time() * 1000) + 1000, (before_ms, b)
        if b["completed"]:
            break
        assert time.time() < deadline
        time.sleep(0.05)
    assert b["response"]["created"] == 3000
    assert b["task"]["status"]["created"] == 3000
    server.request("POST", "/%s/_refresh" % dst)
    assert count(server, dst) == 3000
    st, _, b = server.request("POST", "/%s/_delete_by_query?wait_for_completion=false" % dst,
                              {"query": {"range": {"n": {"lt": 100}}}})
    task = b["task"]
    for _ in range(600):
        st, _, b = server.request("GET", "/_tasks/" + task)
        if b["completed"]:
            break
        time.sleep(0.05)
    assert b["completed"] and b["response"]["deleted"] == 100


def test_snapshots_without_path_repo_answer_clear_errors(server):
    """The shared server runs without --path-repo: no repository can be registered, and the
    snapshot endpoints name what is missing (test_snapshots.py covers the working paths)."""
    st, _, b = server.request("PUT", "/_snapshot/repo", {"type": "fs", "settings": {"location": "/x"}})
    assert_error(b, 400, "repository_exception")
    assert "path.repo" in b["error"]["reason"]
    st, _, b = server.request("GET", "/_snapshot")
    assert st == 200 and b == {}, b
    for method, path in [("PUT", "/_snapshot/repo/snap1"), ("POST", "/_snapshot/repo/snap1/_restore"),
                         ("POST", "/_snapshot/repo/_verify"), ("GET", "/_cat/snapshots/repo"),
                         ("GET", "/_snapshot/repo/snap1"), ("DELETE", "/_snapshot/repo/snap1")]:
        st, _, b = server.request(method, path)
        assert st == 404, (method, path, b)
        assert_error(b, 404, "repository_missing_exception")


def test_requests_per_second_throttles(server, pfx):
    src = pfx + "-t"
    fill(server, src, 200)
    st, _, b = server.request(
        "POST", "/_reindex?requests_per_second=1000&scroll_size=50",
        {"source": {"index": src}, "dest": {"index": pfx + "-t2"}})
    assert st == 200 and b["created"] == 200, b
    assert b["requests_per_second"] == 1000.0 and b["throttled_millis"] > 0


def test_cancel_background_task(server, pfx):
    src = pfx + "-c"
    fill(server, src, 300)
    st, _, b = server.request(
        "POST", "/_reindex?wait_for_completion=false&requests_per_second=100&scroll_size=10",
        {"source": {"index": src}, "dest": {"index": pfx + "-c2"}})
    task = b["task"]
    st, _, b = server.request("POST", "/_tasks/%s/_cancel" % task)
    assert st == 200, b
    for _ in range(200):
        st, _, b = server.request("GET", "/_tasks/" + task)
        if b["completed"]:
            break
        time.sleep(0.05)
    assert b["completed"] and b["task"]["cancelled"] is True
    assert b["response"]["created"] < 300
    assert b["response"]["canceled"] == "by user request"


def test_reindex_source_fields(server, pfx):
    src, dst = pfx + "-s", pfx + "-s2"
    server.request("PUT", "/%s/_doc/1?refresh=true" % src, {"a": 1, "b": {"c": 2, "d": 3}, "e": 4})
    st, _, b = server.request("POST", "/_reindex?refresh=true", {
        "source": {"index": src, "_source": ["a", "b.c"]}, "dest": {"index": dst}})
    assert st == 200 and b["created"] == 1, b
    st, _, b = server.request("GET", "/%s/_doc/1" % dst)
    assert b["_source"] == {"a": 1, "b": {"c": 2}}


def test_update_by_query_with_pipeline(server, pfx):
    ix = pfx + "-u"
    fill(server, ix, 30)
    assert server.request("PUT", "/_ingest/pipeline/%s-tag" % pfx, {"processors": [
        {"set": {"field": "tagged", "value": "yes"}}]})[0] == 200
    st, _, b = server.request("POST", "/%s/_update_by_query?pipeline=%s-tag&refresh=true" % (ix, pfx),
                              {"query": {"term": {"k": "even"}}})
    assert st == 200 and b["updated"] == 15, b
    st, _, b = server.request("POST", "/%s/_count" % ix, {"query": {"exists": {"field": "tagged"}}})
    assert b["count"] == 15
    server.request("DELETE", "/_ingest/pipeline/%s-tag" % pfx)


def test_reindex_100k_progress_and_cancel(server, pfx):
    src = pfx + "-big"
    server.request("PUT", "/" + src, {"settings": {"number_of_shards": 2}})
    for part in range(10):
        body = "".join(json.dumps({"index": {"_index": src, "_id": str(i)}}) + "\n" +
                       json.dumps({"n": i}) + "\n" for i in range(part * 10000, (part + 1) * 10000))
        st, _, b = server.request("POST", "/_bulk", body,
                                  headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"]
    server.request("POST", "/%s/_refresh" % src)
    # throttled to 20k docs/s: about 5 s for all of it, so progress is visible and a cancel lands
    st, _, b = server.request(
        "POST", "/_reindex?wait_for_completion=false&requests_per_second=20000",
        {"source": {"index": src}, "dest": {"index": pfx + "-big2"}})
    assert st == 200, b
    task = b["task"]
    seen = []
    for _ in range(400):
        st, _, b = server.request("GET", "/_tasks/" + task)
        assert st == 200
        status = b["task"]["status"]
        if status["created"] > 0:
            seen.append(status["created"])
        if len(seen) >= 2 and seen[-1] > seen[0]:
            break
        assert not b["completed"], "finished before any progress was seen"
        time.sleep(0.05)
    assert status["total"] == 100000 and seen[-1] > seen[0]
    st, _, b = server.request("POST", "/_tasks/%s/_cancel" % task)
    assert st == 200
    for _ in range(400):
        st, _, b = server.request("GET", "/_tasks/" + task)
        if b["completed"]:
            break
        time.sleep(0.05)
    assert b["completed"] and b["response"]["canceled"] == "by user request"
    assert 0 < b["response"]["created"] < 100000


def all_sources(server, index):
    st, _, b = server.request("POST", "/%s/_search" % index,
                              {"size": 10000, "query": {"match_all": {}}})
    assert st == 200, b
    return {h["_id"]: h["_source"] for h in b["hits"]["hits"]}


def test_reindex_slices_by_shard_and_by_hash(server, pfx):
    src = pfx + "-sl"
    fill(server, src, 1000, shards=4)
    want = all_sources(server, src)
    # auto: one slice per source shard, each with its own status
    st, _, b = server.request("POST", "/_reindex?slices=auto&refresh=true",
                              {"source": {"index": src, "size": 100},
                               "dest": {"index": pfx + "-a"}})
    assert st == 200, b
    assert b["created"] == 1000 and b["total"] == 1000 and b["updated"] == 0, b
    assert [s["slice_id"] for s in b["slices"]] == [0, 1, 2, 3]
    assert sum(s["created"] for s in b["slices"]) == 1000
    assert all(s["created"] > 0 and s["total"] == s["created"] for s in b["slices"])
    assert all_sources(server, pfx + "-a") == want
    # more slices than shards: slices sharing a shard split it by _id, nothing twice
    st, _, b = server.request("POST", "/_reindex?slices=7&refresh=true",
                              {"source": {"index": src}, "dest": {"index": pfx + "-b",
                                                                  "op_type": "create"}})
    assert st == 200, b
    assert len(b["slices"]) == 7 and b["created"] == 1000 and b["version_conflicts"] == 0, b
    assert all(s["created"] > 0 for s in b["slices"])
    assert all_sources(server, pfx + "-b") == want
    # max_docs is divided among the slices; a query limits every slice
    st, _, b = server.request("POST", "/_reindex?slices=3&refresh=true",
                              {"source": {"index": src, "query": {"term": {"k": "odd"}}},
                               "dest": {"index": pfx + "-c"}, "max_docs": 100})
    assert st == 200 and b["created"] == 100, b
    assert sorted(s["created"] for s in b["slices"]) == [33, 33, 34]
    assert count(server, pfx + "-c", {"term": {"k": "even"}}) == 0
    # by-query writes slice too
    st, _, b = server.request("POST", "/%s/_delete_by_query?slices=2&refresh=true" % (pfx + "-a"),
                              {"query": {"term": {"k": "even"}}})
    assert st == 200 and b["deleted"] == 500 and len(b["slices"]) == 2, b
    assert count(server, pfx + "-a") == 500
    for bad in ("0", "x", "-1", "2000"):
        st, _, b = server.request("POST", "/_reindex?slices=" + bad,
                                  {"source": {"index": src}, "dest": {"index": pfx + "-d"}})
        assert_error(b, 400, "illegal_argument_exception")


def test_sliced_background_task_reports_slices(server, pfx):
    src = pfx + "-bg"
    fill(server, src, 300, shards=3)
    st, _, b = server.request(
        "POST", "/_reindex?slices=auto&wait_for_completion=false&requests_per_second=300",
        {"source": {"index": src, "size": 10}, "dest": {"index": pfx + "-bgd"}})
    assert st == 200, b
    task = b["task"]
    for _ in range(600):
        st, _, t = server.request("GET", "/_tasks/" + task)
        if t["completed"]:
            break
        time.sleep(0.05)
    assert t["completed"], t
    assert [s["slice_id"] for s in t["task"]["status"]["slices"]] == [0, 1, 2]
    assert t["response"]["created"] == 300
    assert all(s["requests_per_second"] == 100.0 for s in t["response"]["slices"])
