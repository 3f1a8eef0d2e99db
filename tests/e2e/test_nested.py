"""`nested` documents over HTTP with the real server: the mapping type, hidden child documents
(counts, totals, _count, _cat/count, docs.count and aggregations see only roots), the nested
query (one object must satisfy all conditions; score_mode; ignore_unmapped), updates and
deletes of whole blocks, translog replay after kill -9, force-merge, several shards, all
checked against brute-force computations over random documents (the seed is printed)."""
import json
import os
import random
import signal
import tempfile

import pytest

from conftest import Server, assert_error, bulk_body

AUTHORS = ["alice", "bob", "carol", "dave", "erin"]

MAPPING = {"properties": {
    "title": {"type": "keyword"},
    "n": {"type": "long"},
    "comments": {"type": "nested", "properties": {
        "author": {"type": "keyword"},
        "stars": {"type": "long"},
        "text": {"type": "text"}}}}}


def search(server, index, body):
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b


def count(server, index, query=None):
    st, _, b = server.request("POST", "/%s/_count" % index,
                              {"query": query} if query else None)
    assert st == 200, b
    return b["count"]


def bulk(server, index, docs, ids=None):
    lines = []
    for i, d in enumerate(docs):
        _id = str(ids[i]) if ids else str(i)
        lines.append(json.dumps({"index": {"_index": index, "_id": _id}}))
        lines.append(json.dumps(d))
    st, _, b = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b


def nested_q(path, query, **kw):
    body = {"path": path, "query": query}
    body.update(kw)
    return {"nested": body}


def both(author, min_stars):
    return nested_q("comments", {"bool": {"filter": [
        {"term": {"comments.author": author}},
        {"range": {"comments.stars": {"gte": min_stars}}}]}})


def random_docs(rnd, n):
    docs = []
    for i in range(n):
        cs = [{"author": rnd.choice(AUTHORS), "stars": rnd.randint(1, 5),
               "text": rnd.choice(["good", "bad", "good good", "meh"])}
              for _ in range(rnd.choice([0, 0, 1, 2, 3, 5]))]
        d = {"title": "t%d" % (i % 7), "n": i}
        if cs or rnd.random() < 0.5:
            d["comments"] = cs
        docs.append(d)
    return docs


def brute_both(docs, author, min_stars):
    return sorted(str(i) for i, d in enumerate(docs)
                  if any(c["author"] == author and c["stars"] >= min_stars
                         for c in d.get("comments", [])))


def ids_of(b):
    return sorted(h["_id"] for h in b["hits"]["hits"])


@pytest.fixture()
def idx(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": MAPPING})
    assert st == 200, b
    return fresh_index


def test_mapping_round_trip_and_refusals(server, idx):
    st, _, b = server.request("GET", "/%s/_mapping" % idx)
    assert st == 200
    cm = b[idx]["mappings"]["properties"]["comments"]
    assert cm["type"] == "nested"
    assert cm["properties"]["author"] == {"type": "keyword"}
    # include_in_parent / include_in_root are refused, not silently ignored
    for param in ("include_in_parent", "include_in_root"):
        st, _, b = server.request("PUT", "/%s-bad" % idx, {"mappings": {"properties": {
            "c": {"type": "nested", "include_in_parent": True}
            if param == "include_in_parent" else {"type": "nested", "include_in_root": True}}}})
        assert st == 400, b
        assert_error(b, 400, "mapper_parsing_exception")
        assert param in b["error"]["reason"]
    # nested cannot become object (or the reverse)
    st, _, b = server.request("PUT", "/%s/_mapping" % idx,
                              {"properties": {"comments": {"type": "object"}}})
    assert st == 400, b
    # dynamic mapping never creates nested
    st, _, b = server.request("PUT", "/%s/_doc/d?refresh=true" % idx,
                              {"other": [{"a": 1}, {"a": 2}]})
    assert st in (200, 201), b
    st, _, b = server.request("GET", "/%s/_mapping" % idx)
    assert b[idx]["mappings"]["properties"]["other"].get("type", "object") == "object"
    # a dynamic field inside a nested object keeps the field nested (the mapping update names
    # the type) and is searchable through a nested query
    st, _, b = server.request("PUT", "/%s/_doc/e?refresh=true" % idx,
                              {"comments": [{"author": "z", "mood": "happy"}]})
    assert st in (200, 201), b
    st, _, b = server.request("GET", "/%s/_mapping" % idx)
    cm = b[idx]["mappings"]["properties"]["comments"]
    assert cm["type"] == "nested" and cm["properties"]["mood"]["type"] == "text", cm
    assert ids_of(search(server, idx, {"query": nested_q(
        "comments", {"match": {"comments.mood": "happy"}})})) == ["e"]


def test_classic_example_counts_see_roots_only(server, idx):
    # Elasticsearch's documentation example: Alice Smith and John White
    st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % idx, {
        "title": "x", "comments": [{"author": "alice", "stars": 1, "text": "smith"},
                                   {"author": "john", "stars": 5, "text": "white"}]})
    assert st in (200, 201), b
    st, _, b = server.request("PUT", "/%s/_doc/2?refresh=true" % idx,
                              {"title": "y", "comments": {"author": "alice", "stars": 5,
                                                          "text": "white"}})
    assert st in (200, 201), b
    # counts, totals and match_all see the two roots, never the three hidden children
    assert count(server, idx) == 2
    b = search(server, idx, {"query": {"match_all": {}}})
    assert b["hits"]["total"]["value"] == 2
    assert ids_of(b) == ["1", "2"]
    st, _, cat = server.request("GET", "/_cat/count/%s?format=json" % idx)
    assert st == 200 and cat[0]["count"] == "2", cat
    st, _, stats = server.request("GET", "/%s/_stats" % idx)
    assert stats["_all"]["primaries"]["docs"]["count"] == 2, stats
    assert stats["_all"]["primaries"]["docs"]["deleted"] == 0, stats
    # a term on a nested field without `nested` matches no root (as in Elasticsearch)
    assert count(server, idx, {"term": {"comments.author": "alice"}}) == 0
    # one object must satisfy both conditions
    q = nested_q("comments", {"bool": {"must": [{"term": {"comments.author": "alice"}},
                                                 {"match": {"comments.text": "white"}}]}})
    b = search(server, idx, {"query": q})
    assert ids_of(b) == ["2"]
    assert count(server, idx, q) == 1
    q = nested_q("comments", {"term": {"comments.author": "alice"}})
    assert ids_of(search(server, idx, {"query": q})) == ["1", "2"]
    # inside bool with root-level clauses
    b = search(server, idx, {"query": {"bool": {"must": [q], "filter": [
        {"term": {"title": "x"}}]}}})
    assert ids_of(b) == ["1"]
    # a terms aggregation on a root field counts roots only
    b = search(server, idx, {"size": 0, "aggs": {"t": {"terms": {"field": "title"}}}})
    assert {x["key"]: x["doc_count"] for x in b["aggregations"]["t"]["buckets"]} == \
        {"x": 1, "y": 1}


def test_score_modes(server, idx):
    bulk(server, idx, [
        {"comments": [{"author": "a", "stars": 1}, {"author": "a", "stars": 4},
                      {"author": "b", "stars": 5}]},
        {"comments": [{"author": "a", "stars": 2}]},
    ])
    inner = {"function_score": {
        "query": {"term": {"comments.author": "a"}},
        "field_value_factor": {"field": "comments.stars"}, "boost_mode": "replace"}}
    expect = {"avg": {"0": 2.5, "1": 2.0}, "sum": {"0": 5.0, "1": 2.0},
              "min": {"0": 1.0, "1": 2.0}, "max": {"0": 4.0, "1": 2.0},
              "none": {"0": 0.0, "1": 0.0}}
    for mode, want in expect.items():
        b = search(server, idx, {"query": nested_q("comments", inner, score_mode=mode)})
        got = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
        assert got == pytest.approx(want), (mode, got)
    # default is avg; boost multiplies
    b = search(server, idx, {"query": nested_q("comments", inner, boost=2)})
    assert {h["_id"]: h["_score"] for h in b["hits"]["hits"]} == \
        pytest.approx({"0": 5.0, "1": 4.0})
    st, _, b = server.request("POST", "/%s/_search" % idx, {
        "query": nested_q("comments", inner, score_mode="median")})
    assert st == 400, b


def test_errors_and_ignore_unmapped(server, idx):
    bulk(server, idx, [{"comments": [{"author": "a"}]}])
    st, _, b = server.request("POST", "/%s/_search" % idx, {
        "query": nested_q("nope", {"match_all": {}})})
    assert st == 400, b
    assert "nope" in b["error"]["reason"]
    st, _, b = server.request("POST", "/%s/_search" % idx, {
        "query": nested_q("title", {"match_all": {}})})
    assert st == 400, b
    assert "not of nested type" in b["error"]["reason"]
    b = search(server, idx, {"query": nested_q("nope", {"match_all": {}},
                                               ignore_unmapped=True)})
    assert b["hits"]["total"]["value"] == 0
    st, _, b = server.request("POST", "/%s/_search" % idx, {"query": {"nested": {
        "query": {"match_all": {}}}}})
    assert st == 400, b
    st, _, b = server.request("POST", "/%s/_search" % idx, {"query": nested_q(
        "comments", {"bool": {"must": [nested_q("comments", {"match_all": {}})]}})})
    assert st == 400 and "inside another nested query" in b["error"]["reason"], b
    st, _, b = server.request("POST", "/%s/_search" % idx, {"query": {"nested": {
        "path": "comments", "query": {"match_all": {}}, "bogus": 1}}})
    assert st == 400, b
    # a nested object that is not an object
    st, _, b = server.request("PUT", "/%s/_doc/x" % idx, {"comments": 5})
    assert st == 400, b


def test_update_and_delete_address_the_block(server, idx):
    bulk(server, idx, [{"comments": [{"author": "alice", "stars": 5}]},
                       {"comments": [{"author": "bob", "stars": 5}]}])
    alice = nested_q("comments", {"term": {"comments.author": "alice"}})
    carol = nested_q("comments", {"term": {"comments.author": "carol"}})
    assert ids_of(search(server, idx, {"query": alice})) == ["0"]
    # reindex doc 0: its old children must disappear with it
    st, _, b = server.request("PUT", "/%s/_doc/0?refresh=true" % idx,
                              {"comments": [{"author": "carol", "stars": 1},
                                            {"author": "carol", "stars": 2}]})
    assert st == 200 and b["_version"] == 2, b
    assert ids_of(search(server, idx, {"query": alice})) == []
    assert ids_of(search(server, idx, {"query": carol})) == ["0"]
    assert count(server, idx) == 2
    # partial update through _update
    st, _, b = server.request("POST", "/%s/_update/1?refresh=true" % idx,
                              {"doc": {"comments": [{"author": "alice", "stars": 3}]}})
    assert st == 200, b
    assert ids_of(search(server, idx, {"query": alice})) == ["1"]
    # delete removes the root and its children
    st, _, b = server.request("DELETE", "/%s/_doc/0?refresh=true" % idx)
    assert st == 200, b
    assert ids_of(search(server, idx, {"query": carol})) == []
    assert count(server, idx) == 1
    st, _, stats = server.request("GET", "/%s/_stats" % idx)
    assert stats["_all"]["primaries"]["docs"]["count"] == 1, stats
    # delete_by_query with a nested query deletes the matching blocks
    bulk(server, idx, [{"comments": [{"author": "dave"}]}, {"comments": [{"author": "erin"}]}],
         ids=[10, 11])
    st, _, b = server.request("POST", "/%s/_delete_by_query?refresh=true" % idx, {
        "query": nested_q("comments", {"term": {"comments.author": "dave"}})})
    assert st == 200 and b["deleted"] == 1, b
    assert count(server, idx) == 2
    assert ids_of(search(server, idx, {"query": nested_q(
        "comments", {"match_all": {}})})) == ["1", "11"]
    # the same in the indexing buffer (no refresh between the writes)
    server.request("PUT", "/%s/_doc/20" % idx, {"comments": [{"author": "zed"}]})
    server.request("PUT", "/%s/_doc/20" % idx, {"comments": [{"author": "yan"}]})
    server.request("POST", "/%s/_refresh" % idx)
    assert ids_of(search(server, idx, {"query": nested_q(
        "comments", {"term": {"comments.author": "zed"}})})) == []
    assert ids_of(search(server, idx, {"query": nested_q(
        "comments", {"term": {"comments.author": "yan"}})})) == ["20"]


def check_random(server, idx, docs, rnd):
    assert count(server, idx) == len(docs)
    for _ in range(12):
        a, s = rnd.choice(AUTHORS), rnd.randint(1, 5)
        b = search(server, idx, {"query": both(a, s), "size": 1000})
        want = brute_both(docs, a, s)
        assert ids_of(b) == want, (a, s)
        assert b["hits"]["total"]["value"] == len(want)
        assert count(server, idx, both(a, s)) == len(want)
    # roots with any comment; roots filtered on a root field AND a nested condition
    want = sorted(str(i) for i, d in enumerate(docs) if d.get("comments"))
    assert ids_of(search(server, idx, {"query": nested_q("comments", {"match_all": {}}),
                                       "size": 1000})) == want
    want = sorted(str(i) for i, d in enumerate(docs)
                  if d["title"] == "t3" and any(c["author"] == "bob"
                                                for c in d.get("comments", [])))
    b = search(server, idx, {"size": 1000, "query": {"bool": {
        "filter": [{"term": {"title": "t3"}}],
        "must": [nested_q("comments", {"term": {"comments.author": "bob"}})]}}})
    assert ids_of(b) == want
    b = search(server, idx, {"size": 0, "aggs": {"t": {"terms": {"field": "title"}}}})
    want = {}
    for d in docs:
        want[d["title"]] = want.get(d["title"], 0) + 1
    assert {x["key"]: x["doc_count"] for x in b["aggregations"]["t"]["buckets"]} == want


@pytest.mark.parametrize("shards", [1, 3])
def test_random_docs_against_brute_force(server, fresh_index, shards):
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rnd = random.Random(seed)
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": shards}, "mappings": MAPPING})
    assert st == 200, b
    docs = random_docs(rnd, 300)
    # several segments: three refreshed batches
    for k in range(3):
        part = list(range(k * 100, (k + 1) * 100))
        bulk(server, fresh_index, [docs[i] for i in part], ids=part)
    check_random(server, fresh_index, docs, rnd)
    # overwrite a random third (blocks replaced), then force-merge to one segment
    for i in rnd.sample(range(len(docs)), 100):
        docs[i] = random_docs(rnd, 1)[0]
        docs[i]["title"] = "t%d" % (i % 7)
        st, _, b = server.request("PUT", "/%s/_doc/%d" % (fresh_index, i), docs[i])
        assert st == 200, b
    server.request("POST", "/%s/_refresh" % fresh_index)
    check_random(server, fresh_index, docs, rnd)
    st, _, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % fresh_index)
    assert st == 200, b
    server.request("POST", "/%s/_refresh" % fresh_index)
    check_random(server, fresh_index, docs, rnd)


def test_translog_replay_and_restart_keep_blocks():
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rnd = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="scry-e2e-nested-")
    s = Server(os.path.join(tmp, "data")).start()
    try:
        st, _, b = s.request("PUT", "/n", {"settings": {"number_of_shards": 2},
                                           "mappings": MAPPING})
        assert st == 200, b
        docs = random_docs(rnd, 120)
        bulk(s, "n", docs[:60], ids=list(range(60)))
        st, _, b = s.request("POST", "/n/_flush")
        assert st == 200, b
        # the rest only in the translog (acknowledged, never flushed), then a delete
        lines = []
        for i in range(60, 120):
            lines.append(json.dumps({"index": {"_index": "n", "_id": str(i)}}))
            lines.append(json.dumps(docs[i]))
        st, _, b = s.request("POST", "/_bulk", "\n".join(lines) + "\n",
                             headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"], b
        st, _, b = s.request("DELETE", "/n/_doc/5")
        assert st == 200, b
        docs[5] = None
        s.stop(sig=signal.SIGKILL)
        s.start()
        s.request("POST", "/n/_refresh")
        live = [(i, d) for i, d in enumerate(docs) if d is not None]
        assert count(s, "n") == len(live)
        for a in AUTHORS:
            want = sorted(str(i) for i, d in live
                          if any(c["author"] == a and c["stars"] >= 3
                                 for c in d.get("comments", [])))
            b = search(s, "n", {"query": both(a, 3), "size": 1000})
            assert ids_of(b) == want, a
        # a clean restart (flushed segments re-opened) keeps them too
        s.stop()
        s.start()
        assert count(s, "n") == len(live)
        st, _, b = s.request("POST", "/n/_forcemerge?max_num_segments=1")
        assert st == 200, b
        for a in AUTHORS:
            want = sorted(str(i) for i, d in live
                          if any(c["author"] == a for c in d.get("comments", [])))
            b = search(s, "n", {"size": 1000, "query": nested_q(
                "comments", {"term": {"comments.author": a}})})
            assert ids_of(b) == want, a
    finally:
        assert s.stop() == 0


def agg_body(query=None):
    body = {"size": 0, "aggs": {"c": {"nested": {"path": "comments"}, "aggs": {
        "a": {"terms": {"field": "comments.author", "size": 10}, "aggs": {
            "s": {"avg": {"field": "comments.stars"}},
            "r": {"reverse_nested": {}, "aggs": {
                "t": {"terms": {"field": "title", "size": 10}}}}}},
        "stars": {"sum": {"field": "comments.stars"}}}}}}
    if query:
        body["query"] = query
    return body


def brute_aggs(docs):
    out = {"doc_count": 0, "stars": 0, "authors": {}}
    for d in docs:
        cs = d.get("comments", [])
        out["doc_count"] += len(cs)
        out["stars"] += sum(c["stars"] for c in cs)
        for a in set(c["author"] for c in cs):
            mine = [c for c in cs if c["author"] == a]
            e = out["authors"].setdefault(a, {"n": 0, "stars": 0, "roots": 0, "titles": {}})
            e["n"] += len(mine)
            e["stars"] += sum(c["stars"] for c in mine)
            e["roots"] += 1
            e["titles"][d["title"]] = e["titles"].get(d["title"], 0) + 1
    return out


def check_aggs(b, docs):
    want = brute_aggs(docs)
    c = b["aggregations"]["c"]
    assert c["doc_count"] == want["doc_count"]
    assert c["stars"]["value"] == pytest.approx(want["stars"])
    got = {x["key"]: x for x in c["a"]["buckets"]}
    assert set(got) == set(want["authors"])
    for a, w in want["authors"].items():
        x = got[a]
        assert x["doc_count"] == w["n"], a
        assert x["s"]["value"] == pytest.approx(w["stars"] / w["n"]), a
        assert x["r"]["doc_count"] == w["roots"], a
        assert {t["key"]: t["doc_count"] for t in x["r"]["t"]["buckets"]} == w["titles"], a


@pytest.mark.parametrize("shards", [1, 3])
def test_nested_and_reverse_nested_aggs_against_brute_force(server, fresh_index, shards):
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rnd = random.Random(seed)
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": shards}, "mappings": MAPPING})
    assert st == 200, b
    docs = random_docs(rnd, 240)
    for k in range(2):
        part = list(range(k * 120, (k + 1) * 120))
        bulk(server, fresh_index, [docs[i] for i in part], ids=part)
    # deletes and overwrites: their old children must not be counted
    for i in rnd.sample(range(len(docs)), 30):
        server.request("DELETE", "/%s/_doc/%d" % (fresh_index, i))
        docs[i] = None
    for i in rnd.sample([i for i, d in enumerate(docs) if d is not None], 30):
        docs[i] = dict(random_docs(rnd, 1)[0], title="t%d" % (i % 7))
        server.request("PUT", "/%s/_doc/%d" % (fresh_index, i), docs[i])
    server.request("POST", "/%s/_refresh" % fresh_index)
    live = [d for d in docs if d is not None]
    check_aggs(search(server, fresh_index, agg_body()), live)
    # under a query on a root field, and under a nested query
    check_aggs(search(server, fresh_index, agg_body({"term": {"title": "t2"}})),
               [d for d in live if d["title"] == "t2"])
    q = nested_q("comments", {"term": {"comments.author": "carol"}})
    check_aggs(search(server, fresh_index, agg_body(q)),
               [d for d in live if any(c["author"] == "carol" for c in d.get("comments", []))])
    # nested under a root-level terms aggregation (a root reaches nested once per bucket)
    b = search(server, fresh_index, {"size": 0, "aggs": {"t": {"terms": {"field": "title"},
                                                               "aggs": {"c": {"nested": {
                                                                   "path": "comments"}}}}}})
    got = {x["key"]: x["c"]["doc_count"] for x in b["aggregations"]["t"]["buckets"]}
    want = {}
    for d in live:
        want[d["title"]] = want.get(d["title"], 0) + len(d.get("comments", []))
    assert got == want
    st, _, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % fresh_index)
    assert st == 200, b
    check_aggs(search(server, fresh_index, agg_body()), live)


def test_nested_agg_shapes_and_errors(server, idx):
    bulk(server, idx, [{"title": "a", "comments": [{"author": "x", "stars": 2},
                                                   {"author": "y", "stars": 4}]},
                       {"title": "b"}])
    b = search(server, idx, {"size": 0, "aggs": {"c": {"nested": {"path": "comments"},
                                                       "aggs": {"m": {"max": {
                                                           "field": "comments.stars"}}}}}})
    assert b["aggregations"] == {"c": {"doc_count": 2, "m": {"value": 4.0}}}
    # typed_keys names the types
    st, _, b = server.request("POST", "/%s/_search?typed_keys" % idx, {
        "size": 0, "aggs": {"c": {"nested": {"path": "comments"}, "aggs": {
            "r": {"reverse_nested": {}}}}}})
    assert st == 200, b
    assert b["aggregations"]["nested#c"]["reverse_nested#r"]["doc_count"] == 1
    # top_metrics reads the children's doc values; top_hits under reverse_nested sees roots
    b = search(server, idx, {"size": 0, "aggs": {"c": {"nested": {"path": "comments"}, "aggs": {
        "m": {"top_metrics": {"metrics": {"field": "comments.stars"},
                              "sort": {"comments.stars": "desc"}}},
        "r": {"reverse_nested": {}, "aggs": {"h": {"top_hits": {"size": 1}}}}}}}})
    c = b["aggregations"]["c"]
    assert c["m"]["top"][0]["metrics"]["comments.stars"] == 4
    assert c["r"]["h"]["hits"]["hits"][0]["_source"]["title"] == "a"
    # an unmapped path: an empty bucket
    b = search(server, idx, {"size": 0, "aggs": {"c": {"nested": {"path": "nope"}}}})
    assert b["aggregations"]["c"]["doc_count"] == 0
    for aggs, etype in [
            ({"c": {"nested": {"path": "title"}}}, "aggregation_execution_exception"),
            ({"c": {"nested": {}}}, "illegal_argument_exception"),
            ({"r": {"reverse_nested": {}}}, "illegal_argument_exception"),
            ({"c": {"nested": {"path": "comments"}, "aggs": {
                "c2": {"nested": {"path": "comments"}}}}}, "illegal_argument_exception"),
            ({"c": {"nested": {"path": "comments"}, "aggs": {
                "h": {"top_hits": {}}}}}, "illegal_argument_exception")]:
        st, _, b = server.request("POST", "/%s/_search" % idx, {"size": 0, "aggs": aggs})
        assert st == 400, (aggs, b)
        assert_error(b, 400, etype)


def test_inner_hits(server, idx):
    st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % idx, {
        "title": "x", "comments": [{"author": "alice", "stars": 1, "text": "big dog"},
                                   {"author": "bob", "stars": 3, "text": "cat"},
                                   {"author": "alice", "stars": 2, "text": "dog"}]})
    assert st in (200, 201), b
    st, _, b = server.request("PUT", "/%s/_doc/2?refresh=true" % idx, {
        "title": "y", "comments": {"author": "alice", "stars": 5, "text": "bird"}})
    assert st in (200, 201), b
    b = search(server, idx, {"query": nested_q(
        "comments", {"match": {"comments.text": "dog"}}, inner_hits={})})
    assert ids_of(b) == ["1"]
    hit = b["hits"]["hits"][0]
    ih = hit["inner_hits"]["comments"]["hits"]
    assert ih["total"] == {"value": 2, "relation": "eq"}
    # best first: "dog" (shorter field) scores above "big dog"
    assert [x["_nested"] for x in ih["hits"]] == [{"field": "comments", "offset": 2},
                                                  {"field": "comments", "offset": 0}]
    assert ih["hits"][0]["_source"] == {"author": "alice", "stars": 2, "text": "dog"}
    assert ih["hits"][1]["_source"] == {"author": "alice", "stars": 1, "text": "big dog"}
    assert all(x["_id"] == "1" and x["_index"] == idx for x in ih["hits"])
    assert ih["max_score"] == pytest.approx(ih["hits"][0]["_score"])
    # the root's score is the avg of its children's scores (score_mode avg)
    assert hit["_score"] == pytest.approx((ih["hits"][0]["_score"] + ih["hits"][1]["_score"]) / 2)
    # name, from, size, _source: false; roots matched by another clause get empty inner hits
    b = search(server, idx, {"_source": False, "query": {"bool": {"should": [
        nested_q("comments", {"term": {"comments.author": "alice"}},
                 inner_hits={"name": "al", "from": 1, "size": 1, "_source": False}),
        {"term": {"title": "y"}}]}}})
    got = {h["_id"]: h["inner_hits"]["al"]["hits"] for h in b["hits"]["hits"]}
    assert got["1"]["total"]["value"] == 2
    assert [x["_nested"]["offset"] for x in got["1"]["hits"]] == [2]
    assert "_source" not in got["1"]["hits"][0]
    assert got["2"]["total"]["value"] == 1 and got["2"]["hits"] == []
    b = search(server, idx, {"query": {"bool": {"should": [
        nested_q("comments", {"term": {"comments.author": "nobody"}}, inner_hits={}),
        {"term": {"title": "y"}}]}}})
    assert b["hits"]["hits"][0]["inner_hits"]["comments"]["hits"] == {
        "total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []}
    # errors
    for ih_opts in ({"sort": "x"}, {"size": -1}, {"from": "a"}):
        st, _, b = server.request("POST", "/%s/_search" % idx, {"query": nested_q(
            "comments", {"match_all": {}}, inner_hits=ih_opts)})
        assert st == 400, (ih_opts, b)
    st, _, b = server.request("POST", "/%s/_search" % idx, {"query": {"bool": {"should": [
        nested_q("comments", {"match_all": {}}, inner_hits={}),
        nested_q("comments", {"match_all": {}}, inner_hits={})]}}})
    assert st == 400, b
    assert "already contains an entry" in b["error"]["reason"]


def test_nested_sort_against_brute_force(server, fresh_index):
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rnd = random.Random(seed)
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 2}, "mappings": MAPPING})
    assert st == 200, b
    docs = random_docs(rnd, 150)
    for k in range(2):
        part = list(range(k * 75, (k + 1) * 75))
        bulk(server, fresh_index, [docs[i] for i in part], ids=part)

    def key(d, mode, field):
        vals = [c[field] for c in d.get("comments", [])]
        if not vals:
            return None
        return {"min": min, "max": max, "sum": sum,
                "avg": lambda v: sum(v) / len(v)}[mode](vals)

    for field, mode, order in [("stars", "max", "desc"), ("stars", "min", "asc"),
                               ("stars", "avg", "desc"), ("stars", "sum", "asc"),
                               ("author", "min", "asc"), ("author", "max", "desc")]:
        b = search(server, fresh_index, {"size": 200, "sort": [
            {"comments." + field: {"order": order, "mode": mode,
                                   "nested": {"path": "comments"}}},
            {"n": "asc"}]})
        got = [(h["sort"][0], int(h["_id"])) for h in b["hits"]["hits"]]
        have = [(key(d, mode, field), i) for i, d in enumerate(docs)]
        present = sorted([x for x in have if x[0] is not None],
                         key=lambda x: (x[0], x[1]) if order == "asc" else
                         (tuple(-ord(ch) for ch in x[0]) if isinstance(x[0], str) else -x[0],
                          x[1]))
        missing = sorted(i for k_, i in have if k_ is None)
        assert [i for _, i in got] == [i for _, i in present] + missing, (field, mode, order)
        for (v, _), (w, _) in zip(got, present):
            assert v == pytest.approx(w) if not isinstance(w, str) else v == w
    st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"sort": [
        {"comments.stars": {"nested": {"path": "title"}}}]})
    assert st == 400, b
    st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"sort": [
        {"comments.stars": {"nested": {"path": "comments", "filter": {"match_all": {}}}}}]})
    assert st == 400, b


def test_rank_features_of_root_and_nested_objects_stay_apart(server, fresh_index):
    """A root's rank_features met before a nested object keep scoring the root (the nested
    object's fields are gathered apart, and so are its rank features)."""
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "pop": {"type": "rank_features"},
        "comments": {"type": "nested", "properties": {
            "author": {"type": "keyword"}, "w": {"type": "rank_features"}}}}}})
    assert st == 200, b
    bulk(server, fresh_index, [
        {"pop": {"a": 4.0}, "comments": [{"author": "alice", "w": {"x": 2.0}}]},
        {"comments": [{"author": "bob", "w": {"x": 8.0}}], "pop": {"a": 1.0}},
        {"comments": [{"author": "carol"}]}])
    r = search(server, fresh_index, {"query": {"rank_feature": {"field": "pop.a",
                                                                 "saturation": {"pivot": 1}}}})
    got = {h["_id"]: h["_score"] for h in r["hits"]["hits"]}
    assert set(got) == {"0", "1"}, r
    assert got["0"] == pytest.approx(4 / 5, rel=1e-5) and got["1"] == pytest.approx(0.5, rel=1e-5)
    r = search(server, fresh_index, {"query": nested_q("comments", {"rank_feature": {
        "field": "comments.w.x", "saturation": {"pivot": 2}}}, score_mode="max")})
    got = {h["_id"]: h["_score"] for h in r["hits"]["hits"]}
    assert set(got) == {"0", "1"}, r
    assert got["0"] == pytest.approx(0.5, rel=1e-5) and got["1"] == pytest.approx(0.8, rel=1e-5)
