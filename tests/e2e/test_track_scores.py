"""track_scores with a field sort over HTTP (issue 14): hits keep their _score and max_score is
the best score of every match, checked against the same query sorted by score."""
import pytest

from conftest import bulk_body

DOCS = [{"body": " ".join(["fox"] * (i % 4 + 1) + ["word"] * (i % 3)), "n": 100 - i}
        for i in range(30)]


@pytest.fixture(scope="module")
def ix(server):
    name = "track-scores"
    server.request("DELETE", "/" + name)
    st, h, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"body": {"type": "text"}, "n": {"type": "long"}}}})
    assert st == 200, b
    st, h, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, DOCS))
    assert st == 200 and not b["errors"], b
    yield name
    server.request("DELETE", "/" + name)


def search(server, index, body):
    st, h, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b["hits"]


def test_track_scores_with_field_sort(server, ix):
    q = {"match": {"body": "fox"}}
    by_score = search(server, ix, {"query": q, "size": 30})
    scores = {h["_id"]: h["_score"] for h in by_score["hits"]}
    # without track_scores: no scores under a field sort
    plain = search(server, ix, {"query": q, "sort": [{"n": "asc"}], "size": 5})
    assert plain["max_score"] is None
    assert all(h["_score"] is None for h in plain["hits"])
    got = search(server, ix, {"query": q, "sort": [{"n": "asc"}], "size": 2,
                              "track_scores": True})
    assert [h["sort"][0] for h in got["hits"]] == [71, 72]
    for h in got["hits"]:
        assert h["_score"] == scores[h["_id"]]
    # the best over every match, not only the page's hits
    assert got["max_score"] == by_score["max_score"]
    assert got["max_score"] > max(h["_score"] for h in got["hits"])
    # track_scores: false and a score sort are unchanged
    off = search(server, ix, {"query": q, "sort": [{"n": "asc"}], "track_scores": False})
    assert off["max_score"] is None
    st, h, b = server.request("POST", "/%s/_search" % ix, {"track_scores": "yes"})
    assert st == 400, b
