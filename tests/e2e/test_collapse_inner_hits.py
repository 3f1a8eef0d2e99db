"""collapse with inner_hits over HTTP (3 shards): each group hit carries the group's docs for
every inner_hits entry (name, size, from, sort, _source), computed here from a plain search of
the same query; the group without a value; post_filter; a numeric collapse field;
max_concurrent_group_searches; bad entries as 400s."""
import random

import pytest

from conftest import bulk_body

SEED = 1412
N = 90


@pytest.fixture(scope="module")
def corpus(server):
    print("seed", SEED)
    rng = random.Random(SEED)
    ix = "collapse-ih-%d" % SEED
    server.request("DELETE", "/" + ix)
    st, _, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 3, "number_of_replicas": 0},
        "mappings": {"properties": {"t": {"type": "text"}, "brand": {"type": "keyword"},
                                    "shop": {"type": "integer"}, "likes": {"type": "long"},
                                    "color": {"type": "keyword"}}}})
    assert st == 200, b
    docs = []
    for i in range(N):
        d = {"t": "phone " + "x " * rng.randint(0, 30), "shop": i % 4,
             "likes": rng.randint(0, 10**6), "color": rng.choice(["red", "blue"])}
        if i % 11:
            d["brand"] = "b%d" % (i % 6)
        docs.append(d)
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(ix, docs))
    assert st == 200 and not b["errors"], b
    yield ix, docs
    server.request("DELETE", "/" + ix)


def search(server, ix, body):
    st, _, b = server.request("POST", "/%s/_search" % ix, body)
    assert st == 200, b
    return b


Q = {"match": {"t": "phone x"}}


def scores(server, ix, query):
    b = search(server, ix, {"query": query, "size": N})
    return {int(h["_id"]): h["_score"] for h in b["hits"]["hits"]}


def check_group(ih, members, sc, docs, size, frm=0, by_likes=False, src=None):
    """ih: one inner_hits entry of a hit; members: the ids of the group matching."""
    assert ih["hits"]["total"] == {"value": len(members), "relation": "eq"}
    if by_likes:
        order = sorted(members, key=lambda i: (-docs[i]["likes"], i))
    else:
        order = sorted(members, key=lambda i: (-sc[i], i))
    want = order[frm:frm + size]
    got = [int(h["_id"]) for h in ih["hits"]["hits"]]
    if by_likes:
        assert got == want
        assert [h["sort"] for h in ih["hits"]["hits"]] == [[docs[i]["likes"]] for i in want]
    else:  # ties may come in any order: compare the scores rank by rank
        assert [sc[i] for i in got] == [sc[i] for i in want]
        assert set(got) <= set(members)
        for h in ih["hits"]["hits"]:
            assert h["_score"] == pytest.approx(sc[int(h["_id"])], rel=1e-6)
    if src is not None:
        for h in ih["hits"]["hits"]:
            assert h["_source"] == {k: docs[int(h["_id"])][k] for k in src
                                    if k in docs[int(h["_id"])]}


def test_inner_hits_per_group(server, corpus):
    ix, docs = corpus
    sc = scores(server, ix, Q)
    b = search(server, ix, {"query": Q, "size": 10, "collapse": {
        "field": "brand", "max_concurrent_group_searches": 2,
        "inner_hits": [{"name": "top", "size": 2, "sort": [{"likes": "desc"}],
                        "_source": ["likes", "brand"]},
                       {"from": 1}]}})
    hits = b["hits"]["hits"]
    assert len(hits) == 7  # six brands and the docs without one
    seen_missing = False
    for h in hits:
        brand = h["fields"]["brand"][0]
        members = [i for i in sc if docs[i].get("brand") == brand]
        seen_missing |= brand is None
        assert set(h["inner_hits"]) == {"top", "brand"}
        check_group(h["inner_hits"]["top"], members, sc, docs, 2, by_likes=True,
                    src=["likes", "brand"])
        check_group(h["inner_hits"]["brand"], members, sc, docs, 3, frm=1)
    assert seen_missing


def test_post_filter_and_numeric_field(server, corpus):
    ix, docs = corpus
    sc = scores(server, ix, Q)
    b = search(server, ix, {"query": Q, "size": 4, "post_filter": {"term": {"color": "red"}},
                            "collapse": {"field": "shop", "inner_hits": {"name": "x", "size": 5}}})
    hits = b["hits"]["hits"]
    assert len(hits) == 4
    for h in hits:
        shop = h["fields"]["shop"][0]
        assert docs[int(h["_id"])]["color"] == "red"
        members = [i for i in sc if docs[i]["shop"] == shop and docs[i]["color"] == "red"]
        check_group(h["inner_hits"]["x"], members, sc, docs, 5)


def test_without_inner_hits_nothing_changes(server, corpus):
    ix, _ = corpus
    b = search(server, ix, {"query": Q, "collapse": {"field": "brand"}})
    assert all("inner_hits" not in h for h in b["hits"]["hits"])


@pytest.mark.parametrize("collapse", [
    {"field": "brand", "inner_hits": [{"name": "a"}, {"name": "a"}]},
    {"field": "brand", "inner_hits": [{}, {}]},
    {"field": "brand", "inner_hits": {"size": 101}},
    {"field": "brand", "inner_hits": {"size": -1}},
    {"field": "brand", "inner_hits": {"name": 3}},
    {"field": "brand", "inner_hits": {"query": {}}},
    {"field": "brand", "inner_hits": "x"},
    {"field": "brand", "inner_hits": {"collapse": {"field": "shop"}}},
    {"field": "brand", "inner_hits": {"sort": ["t"]}},
    {"field": "brand", "max_concurrent_group_searches": 0},
])
def test_bad_inner_hits(server, corpus, collapse):
    ix, _ = corpus
    st, _, b = server.request("POST", "/%s/_search" % ix, {"query": Q, "collapse": collapse})
    assert st == 400, (collapse, b)
    assert b["status"] == 400 and b["error"]["type"], b
