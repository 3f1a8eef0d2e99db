"""geo_bounds and geo_centroid over HTTP (three shards, so partials are reduced): values
against Python over the same points (Lucene's encoding quantizes them by < 1e-7 degrees),
Elasticsearch's shapes (wrap_longitude, empty and unmapped results, per-bucket), errors; and
the request breaker's peak_used_in_bytes in _nodes/stats with reset_peak."""
import random

import pytest

from conftest import bulk_body

EPS = 1e-6


def make_docs(n=240, seed=11, east_west=True):
    rnd = random.Random(seed)
    docs = []
    for i in range(n):
        d = {"k": "abc"[i % 3]}
        if i % 7:
            lon = rnd.uniform(150, 179) if (east_west and rnd.random() < 0.5) else rnd.uniform(-179, -150)
            d["p"] = {"lat": rnd.uniform(-60, 60), "lon": lon}
        docs.append(d)
    return docs


@pytest.fixture(scope="module")
def geo(server):
    name = "aggs-geo-e2e"
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 3},
        "mappings": {"properties": {"p": {"type": "geo_point"}, "k": {"type": "keyword"}}}})
    assert st == 200, b
    docs = make_docs()
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    yield name, docs
    server.request("DELETE", "/" + name)


def expect_bounds(points, wrap=True):
    lats = [p["lat"] for p in points]
    pos = [p["lon"] for p in points if p["lon"] >= 0]
    neg = [p["lon"] for p in points if p["lon"] < 0]
    if not pos:
        left, right = min(neg), max(neg)
    elif not neg:
        left, right = min(pos), max(pos)
    elif not wrap or max(pos) - min(neg) <= (180 - min(pos)) - (-180 - max(neg)):
        left, right = min(neg), max(pos)
    else:
        left, right = min(pos), max(neg)
    return max(lats), left, min(lats), right


def close(a, b):
    return abs(a - b) < EPS


def check_bounds(got, points, wrap=True):
    top, left, bottom, right = expect_bounds(points, wrap)
    b = got["bounds"]
    assert close(b["top_left"]["lat"], top) and close(b["top_left"]["lon"], left), (got, top, left)
    assert close(b["bottom_right"]["lat"], bottom) and close(b["bottom_right"]["lon"], right)


def check_centroid(got, points):
    assert got["count"] == len(points)
    assert close(got["location"]["lat"], sum(p["lat"] for p in points) / len(points))
    assert close(got["location"]["lon"], sum(p["lon"] for p in points) / len(points))


def test_bounds_and_centroid(server, geo):
    name, docs = geo
    pts = [d["p"] for d in docs if "p" in d]
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "aggs": {
        "b": {"geo_bounds": {"field": "p"}},
        "nw": {"geo_bounds": {"field": "p", "wrap_longitude": False}},
        "c": {"geo_centroid": {"field": "p"}},
        "t": {"terms": {"field": "k"}, "aggs": {"c": {"geo_centroid": {"field": "p"}},
                                                "b": {"geo_bounds": {"field": "p"}}}}}})
    assert st == 200, b
    a = b["aggregations"]
    check_bounds(a["b"], pts)
    check_bounds(a["nw"], pts, wrap=False)
    # the points straddle the dateline: the wrapped box is the narrow one
    assert a["b"]["bounds"]["top_left"]["lon"] > a["b"]["bounds"]["bottom_right"]["lon"]
    check_centroid(a["c"], pts)
    for bucket in a["t"]["buckets"]:
        kp = [d["p"] for d in docs if d["k"] == bucket["key"] and "p" in d]
        check_centroid(bucket["c"], kp)
        check_bounds(bucket["b"], kp)


def test_empty_unmapped_and_errors(server, geo):
    name, _ = geo
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "query": {
        "term": {"k": "zzz"}}, "aggs": {"b": {"geo_bounds": {"field": "p"}},
                                        "c": {"geo_centroid": {"field": "p"}},
                                        "u": {"geo_bounds": {"field": "nope"}}}})
    assert st == 200, b
    assert b["aggregations"] == {"b": {}, "c": {"count": 0}, "u": {}}
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "aggs": {
        "c": {"geo_centroid": {"field": "k"}}}})
    assert st == 400 and b["error"]["type"] == "search_phase_execution_exception", b
    assert "not supported for aggregation [geo_centroid]" in b["error"]["caused_by"]["reason"]
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "aggs": {
        "c": {"geo_bounds": {"field": "p", "bogus": 1}}}})
    assert st == 400, b


def test_request_breaker_peak(server, geo):
    name, _ = geo
    st, _, b = server.request("GET", "/_nodes/stats/breaker?reset_peak=true")
    assert st == 200
    st, _, b = server.request("GET", "/_nodes/stats/breaker")
    node = next(iter(b["nodes"].values()))
    assert node["breakers"]["request"]["peak_used_in_bytes"] == 0
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "aggs": {
        "t": {"terms": {"field": "k"}, "aggs": {"c": {"geo_centroid": {"field": "p"}}}}}})
    assert st == 200
    st, _, b = server.request("GET", "/_nodes/stats/breaker")
    node = next(iter(b["nodes"].values()))
    assert node["breakers"]["request"]["peak_used_in_bytes"] > 0
