"""cardinality, percentiles, percentile_ranks and median_absolute_deviation over HTTP with the real server (three shards,
so partial sketches are encoded, merged and finalized): exact counts below the threshold, the
HyperLogLog++ bound above it, numpy-linear percentiles and midpoint ranks while the digests are
exact, Elasticsearch's response shapes (keyed and list forms, typed_keys, dates, empty results)
and errors."""
import datetime
import math
import random

import pytest

from conftest import bulk_body

N = 1500  # under 2000 values: the merged digests stay exact


def make_docs(seed=11):
    rnd = random.Random(seed)
    t0 = datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc)
    docs = []
    for i in range(N):
        d = {
            "user": "u%d" % rnd.randrange(1200),
            "n": rnd.randrange(5000),
            "x": round(rnd.expovariate(0.01), 3),
            "ip": "10.%d.%d.%d" % (rnd.randrange(2), rnd.randrange(16), rnd.randrange(16)),
            "flag": rnd.random() < 0.5,
            "date": (t0 + datetime.timedelta(minutes=rnd.randrange(60 * 24 * 60))).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "g": "g%d" % (i % 3),
        }
        if i % 13 == 0:
            del d["x"]
        docs.append(d)
    return docs


MAPPING = {"properties": {
    "user": {"type": "keyword"}, "n": {"type": "long"}, "x": {"type": "double"},
    "ip": {"type": "ip"}, "flag": {"type": "boolean"}, "date": {"type": "date"},
    "g": {"type": "keyword"}}}


@pytest.fixture(scope="module")
def idx(server):
    name = "aggs-sketches-e2e"
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 3}, "mappings": MAPPING})
    assert st == 200, b
    docs = make_docs()
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    yield name, docs
    server.request("DELETE", "/" + name)


def search(server, index, body, params=""):
    st, _, b = server.request("POST", "/%s/_search%s" % (index, params), body)
    assert st == 200, b
    return b["aggregations"]


def linear(vals, p):
    """numpy.percentile(vals, p), method linear."""
    s = sorted(vals)
    idx = p / 100 * (len(s) - 1)
    lo = int(idx)
    if lo >= len(s) - 1:
        return float(s[-1])
    return s[lo] + (idx - lo) * (s[lo + 1] - s[lo])


def midpoint_rank(vals, x):
    below = sum(v < x for v in vals)
    equal = sum(v == x for v in vals)
    return 100 * (below + equal / 2) / len(vals)


def test_cardinality_exact_and_bounded(server, idx):
    name, docs = idx
    a = search(server, name, {"size": 0, "aggs": {
        "u": {"cardinality": {"field": "user"}},
        "n": {"cardinality": {"field": "n", "precision_threshold": 40000}},
        "n_small": {"cardinality": {"field": "n", "precision_threshold": 100}},
        "ip": {"cardinality": {"field": "ip"}},
        "flag": {"cardinality": {"field": "flag"}},
        "x_missing": {"cardinality": {"field": "x", "missing": -1}},
        "none": {"cardinality": {"field": "no_such_field"}}}})
    assert a["u"] == {"value": len({d["user"] for d in docs})}
    distinct_n = len({d["n"] for d in docs})
    assert a["n"] == {"value": distinct_n}
    # threshold 100: p = 10, past the switch; 6 standard errors of 1.04/sqrt(1024)
    assert abs(a["n_small"]["value"] - distinct_n) <= 6 * 1.04 / 32 * distinct_n
    assert a["ip"] == {"value": len({d["ip"] for d in docs})}
    assert a["flag"] == {"value": 2}
    xs = {d.get("x", -1) for d in docs}
    assert a["x_missing"] == {"value": len(xs)}
    assert a["none"] == {"value": 0}


def test_percentiles_exact_small(server, idx):
    name, docs = idx
    a = search(server, name, {"size": 0, "aggs": {
        "x": {"percentiles": {"field": "x"}},
        "n": {"percentiles": {"field": "n", "percents": [99.9, 0, 50, 100], "keyed": False}},
        "r": {"percentile_ranks": {"field": "x", "values": [10, 100.5, 1000]}},
        "m": {"median_absolute_deviation": {"field": "x"}},
        "none": {"median_absolute_deviation": {"field": "no_such_field"}}}})
    xs = [d["x"] for d in docs if "x" in d]
    ns = [d["n"] for d in docs]
    keys = ["1.0", "5.0", "25.0", "50.0", "75.0", "95.0", "99.0"]
    assert list(a["x"]["values"]) == keys
    for k in keys:
        assert math.isclose(a["x"]["values"][k], linear(xs, float(k)), rel_tol=1e-9), k
    assert [v["key"] for v in a["n"]["values"]] == [0.0, 50.0, 99.9, 100.0]
    for v in a["n"]["values"]:
        assert math.isclose(v["value"], linear(ns, v["key"]), rel_tol=1e-9), v
    assert list(a["r"]["values"]) == ["10.0", "100.5", "1000.0"]
    for k, v in a["r"]["values"].items():
        assert math.isclose(v, midpoint_rank(xs, float(k)), rel_tol=1e-9, abs_tol=1e-9), k
    med = linear(xs, 50)
    assert math.isclose(a["m"]["value"], linear([abs(x - med) for x in xs], 50), rel_tol=1e-9)
    assert a["none"] == {"value": None}


def test_shapes_dates_typed_keys_and_empty(server, idx):
    name, docs = idx
    st, _, b = server.request("POST", "/%s/_search?typed_keys=true" % name, {
        "size": 0, "query": {"term": {"g": "g1"}}, "aggs": {
            "d": {"percentiles": {"field": "date", "percents": [50]}},
            "by": {"terms": {"field": "g", "order": {"c": "desc"}},
                   "aggs": {"c": {"cardinality": {"field": "user"}},
                            "p": {"percentile_ranks": {"field": "n", "values": [2500],
                                                       "keyed": False}}}}}})
    assert st == 200, b
    a = b["aggregations"]
    d = a["tdigest_percentiles#d"]["values"]
    assert set(d) == {"50.0", "50.0_as_string"}
    assert d["50.0_as_string"].endswith("Z")
    bucket = a["sterms#by"]["buckets"][0]
    assert bucket["key"] == "g1"
    assert bucket["cardinality#c"]["value"] == len({x["user"] for x in docs if x["g"] == "g1"})
    r = bucket["tdigest_percentile_ranks#p"]["values"]
    assert len(r) == 1 and r[0]["key"] == 2500.0
    a = search(server, name, {"size": 0, "query": {"term": {"g": "nope"}}, "aggs": {
        "p": {"percentiles": {"field": "x", "percents": [50, 75]}},
        "r": {"percentile_ranks": {"field": "x", "values": [1], "keyed": False}},
        "c": {"cardinality": {"field": "user"}}}})
    assert a == {"p": {"values": {"50.0": None, "75.0": None}},
                 "r": {"values": [{"key": 1.0, "value": None}]},
                 "c": {"value": 0}}


def test_compression_and_errors(server, idx):
    name, _ = idx
    a = search(server, name, {"size": 0, "aggs": {"p": {"percentiles": {
        "field": "x", "percents": [50], "tdigest": {"compression": 10}}}}})
    assert a["p"]["values"]["50.0"] is not None
    for body, etype in [
        ({"p": {"percentiles": {"field": "user"}}}, "illegal_argument_exception"),
        ({"p": {"percentiles": {"field": "x", "percents": [101]}}}, "illegal_argument_exception"),
        ({"p": {"percentile_ranks": {"field": "x"}}}, "illegal_argument_exception"),
        ({"p": {"percentiles": {"field": "x", "tdigest": {"execution_hint": "x"}}}},
         "illegal_argument_exception"),
        ({"c": {"cardinality": {"field": "user", "bogus": 1}}}, "x_content_parse_exception"),
        ({"c": {"cardinality": {"field": "user"}, "aggs": {"m": {"max": {"field": "n"}}}}},
         "aggregation_initialization_exception"),
    ]:
        st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "aggs": body})
        assert st == 400 and b["status"] == 400, (body, b)
        # field-type errors are shard-level: search_phase_execution_exception around the cause
        assert b["error"]["root_cause"][0]["type"] == etype, b
        assert b["error"]["type"] in (etype, "search_phase_execution_exception"), b


def test_with_post_filter_significant_terms_and_composite(server, idx):
    """The sketches beside aggregations built after them on the framework: post_filter narrows
    the hits but not the sketches, significant_terms and composite buckets carry exact
    cardinalities and percentiles (all below the switch to the sketches proper)."""
    name, docs = idx
    st, _, b = server.request("POST", "/%s/_search" % name, {
        "size": 0, "track_total_hits": True, "post_filter": {"term": {"g": "g0"}},
        "aggs": {"u": {"cardinality": {"field": "user"}},
                 "p": {"percentiles": {"field": "n", "percents": [50]}}}})
    assert st == 200, b
    assert b["hits"]["total"]["value"] == sum(d["g"] == "g0" for d in docs)
    assert b["aggregations"]["u"] == {"value": len({d["user"] for d in docs})}
    assert math.isclose(b["aggregations"]["p"]["values"]["50.0"],
                        linear([d["n"] for d in docs], 50), rel_tol=1e-9)

    g0 = [d for d in docs if d["g"] == "g0"]
    a = search(server, name, {"size": 0, "query": {"term": {"g": "g0"}}, "aggs": {
        "s": {"significant_terms": {"field": "g", "min_doc_count": 1}, "aggs": {
            "u": {"cardinality": {"field": "user"}},
            "m": {"median_absolute_deviation": {"field": "n"}}}}}})
    bs = a["s"]["buckets"]
    assert [x["key"] for x in bs] == ["g0"] and bs[0]["doc_count"] == len(g0)
    assert bs[0]["u"] == {"value": len({d["user"] for d in g0})}
    ns = [d["n"] for d in g0]
    med = linear(ns, 50)
    assert math.isclose(bs[0]["m"]["value"], linear([abs(n - med) for n in ns], 50),
                        rel_tol=1e-9)

    a = search(server, name, {"size": 0, "aggs": {
        "c": {"composite": {"sources": [{"g": {"terms": {"field": "g"}}}]}, "aggs": {
            "u": {"cardinality": {"field": "ip"}},
            "r": {"percentile_ranks": {"field": "x", "values": [100]}}}}}})
    bs = a["c"]["buckets"]
    assert [x["key"] for x in bs] == [{"g": "g0"}, {"g": "g1"}, {"g": "g2"}]
    for x in bs:
        part = [d for d in docs if d["g"] == x["key"]["g"]]
        assert x["u"] == {"value": len({d["ip"] for d in part})}
        xs = [d["x"] for d in part if "x" in d]
        assert math.isclose(x["r"]["values"]["100.0"], midpoint_rank(xs, 100),
                            rel_tol=1e-9, abs_tol=1e-9)
