"""Script pipelines over HTTP with the real server: bucket_script and bucket_selector (the
Painless subset of search/script.h) with buckets_path maps, `_count`, `agg.value` and paths
through a filter (`f>metric`), against Python over the same documents (three shards); script
errors as 400 script_exception."""
import math

import pytest

from conftest import make_index
from test_aggs import MAPPING, make_docs


@pytest.fixture(scope="module")
def idx(server):
    name = "aggs-pipe-e2e"
    docs = make_docs()
    make_index(server, name, {"settings": {"number_of_shards": 3}, "mappings": MAPPING}, docs,
               headers={"Content-Type": "application/x-ndjson"})
    yield name, docs
    server.request("DELETE", "/" + name)


def search(server, index, body):
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    return st, b


def by_genre(docs):
    g = {}
    for d in docs:
        g.setdefault(d["genre"], []).append(d)
    return g


def genre_pipelines(keep_script):
    """terms on genre with sum/stats/filter subs, two bucket_scripts over them and a
    bucket_selector `keep` running keep_script."""
    return {"size": 0, "aggs": {"g": {
        "terms": {"field": "genre", "size": 10},
        "aggs": {
            "q": {"sum": {"field": "qty"}},
            "p": {"stats": {"field": "price"}},
            "cheap": {"filter": {"range": {"price": {"lt": 100}}},
                      "aggs": {"cq": {"sum": {"field": "qty"}}}},
            "per_doc": {"bucket_script": {
                "buckets_path": {"q": "q.value", "n": "_count"},
                "script": "params.q / params.n"}},
            "mix": {"bucket_script": {
                "buckets_path": {"c": "cheap>_count", "cq": "cheap>cq", "avg": "p.avg"},
                "script": {"source": "params.c > 0 ? Math.round(params.cq * params.k / params.c)"
                                     " : -1 - params.avg * 0", "params": {"k": 10}}}},
            "keep": {"bucket_selector": {
                "buckets_path": {"n": "_count", "q": "q"},
                "script": keep_script}}}}}}


def test_bucket_script_and_selector_under_terms(server, idx):
    name, docs = idx
    keep = "params.n >= params.min && params.q % 2 == 0"
    st, b = search(server, name, genre_pipelines(keep))
    # params.min is not bound: null, so the comparison fails at run time
    assert st == 400, b
    assert b["error"]["type"] == "script_exception", b
    assert "null" in b["error"]["reason"]
    st, b = search(server, name, genre_pipelines({"source": keep, "params": {"min": 20}}))
    assert st == 200, b
    groups = by_genre(docs)
    expect = []
    for genre, ds in groups.items():
        q = sum(d["qty"] for d in ds)
        if len(ds) >= 20 and q % 2 == 0:
            expect.append(genre)
    got = b["aggregations"]["g"]["buckets"]
    assert sorted(x["key"] for x in got) == sorted(expect)
    assert "keep" not in (got[0] if got else {})
    for x in got:
        ds = groups[x["key"]]
        q = sum(d["qty"] for d in ds)
        assert x["per_doc"]["value"] == pytest.approx(q / len(ds))
        cheap = [d for d in ds if "price" in d and d["price"] < 100]
        cq = sum(d["qty"] for d in cheap)
        want = math.floor(cq * 10 / len(cheap) + 0.5) if cheap else -1
        assert x["mix"]["value"] == want


def test_bucket_script_in_date_histogram_gaps(server, idx):
    name, docs = idx
    # weekly buckets over a range with empty weeks: avg is missing there, so under the default
    # gap_policy skip the bucket has no value; insert_zeros binds 0
    st, b = search(server, name, {"size": 0, "query": {"term": {"genre": "folk"}}, "aggs": {"w": {
        "date_histogram": {"field": "date", "calendar_interval": "day", "min_doc_count": 0},
        "aggs": {"a": {"avg": {"field": "qty"}},
                 "skip": {"bucket_script": {"buckets_path": {"v": "a"},
                                            "script": "params.v * 2"}},
                 "zero": {"bucket_script": {"buckets_path": {"v": "a"}, "gap_policy":
                                            "insert_zeros", "script": "params.v * 2 + 1"}}}}}})
    assert st == 200, b
    buckets = b["aggregations"]["w"]["buckets"]
    assert any(x["doc_count"] == 0 for x in buckets)
    for x in buckets:
        if x["doc_count"] == 0:
            assert "skip" not in x
            assert x["zero"]["value"] == 1
        else:
            assert x["skip"]["value"] == pytest.approx(2 * x["a"]["value"])
            assert x["zero"]["value"] == pytest.approx(2 * x["a"]["value"] + 1)


def test_bucket_selector_under_range_and_bucket_script_feeding_a_sibling(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "r": {"range": {"field": "price", "ranges": [{"to": 100}, {"from": 100, "to": 200},
                                                     {"from": 200}]},
              "aggs": {"keep": {"bucket_selector": {"buckets_path": {"n": "_count"},
                                                    "script": "params.n > 90"}}}},
        "g": {"terms": {"field": "genre"},
              "aggs": {"q": {"sum": {"field": "qty"}},
                       "dbl": {"bucket_script": {"buckets_path": {"q": "q"},
                                                 "script": "return params.q * 2;"}}}},
        "best": {"max_bucket": {"buckets_path": "g>dbl"}}}})
    assert st == 200, b
    counts = [sum(1 for d in docs if "price" in d and lo <= d["price"] < hi)
              for lo, hi in ((-1e9, 100), (100, 200), (200, 1e9))]
    assert [x["doc_count"] for x in b["aggregations"]["r"]["buckets"]] == \
        [c for c in counts if c > 90]
    qs = [sum(d["qty"] for d in ds) for ds in by_genre(docs).values()]
    assert b["aggregations"]["best"]["value"] == 2 * max(qs)


@pytest.mark.parametrize("aggs,etype", [
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}, "script": "params.n +"}}}}}, "script_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}, "script": "foo(params.n)"}}}}}, "script_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}, "script": "doc['qty'].value"}}}}}, "script_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}, "script": "(long) params.n / 0"}}}}}, "script_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}, "script": "params.n > 1"}}}}}, "script_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_selector": {
        "buckets_path": {"n": "_count"}, "script": "params.n"}}}}}, "script_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "nope"}, "script": "params.n"}}}}}, "illegal_argument_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}}}}}}, "illegal_argument_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"s": {"bucket_script": {
        "buckets_path": {"n": "_count"}, "script": {"source": "1", "lang": "groovy"}}}}}},
     "illegal_argument_exception"),
    ({"g": {"terms": {"field": "genre"}, "aggs": {"q": {"sum": {"field": "qty"}}, "s": {
        "bucket_script": {"buckets_path": {"n": "q>x"}, "script": "params.n"}}}}},
     "illegal_argument_exception"),
    ({"s": {"bucket_script": {"buckets_path": {"n": "_count"}, "script": "1"}}},
     "illegal_argument_exception"),
])
def test_errors(server, idx, aggs, etype):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": aggs})
    assert st == 400, b
    assert b["error"]["type"] == etype, b


def hist_values(docs, field="qty", metric="price"):
    """Sum of `metric` per qty value 0..19 (None when the bucket's docs have no metric)."""
    out = []
    for q in range(20):
        vals = [d[metric] for d in docs if d[field] == q and metric in d]
        out.append(sum(vals) if vals else None)
    return out


def mf_model(values, window, shift, fn):
    have = [v for v in values if v is not None]
    out, k = [], 0
    for v in values:
        if v is None:
            out.append("absent")
            continue
        lo = min(max(k - window + shift, 0), len(have))
        hi = min(max(k + shift, 0), len(have))
        out.append(fn(have[lo:max(lo, hi)]))
        k += 1
    return out


def test_moving_fn_and_serial_diff(server, idx):
    name, docs = idx
    # docs of one genre only, so that some qty buckets have no price (sum is 0 there, avg null)
    sub = [d for d in docs if d["genre"] == "rock" and d["qty"] % 3]
    body = {"size": 0, "query": {"bool": {"filter": [{"term": {"genre": "rock"}}],
                                          "must_not": [{"terms": {"qty": [0, 3, 6, 9, 12, 15,
                                                                          18]}}]}},
            "aggs": {"h": {"histogram": {"field": "qty", "interval": 1, "min_doc_count": 0,
                                         "extended_bounds": {"min": 0, "max": 19}},
                     "aggs": {"a": {"avg": {"field": "price"}},
                              "mx": {"moving_fn": {"buckets_path": "a", "window": 3,
                                                   "script": "MovingFunctions.max(values)"}},
                              "avg": {"moving_fn": {"buckets_path": "a", "window": 2, "shift": 1,
                                                    "script": "MovingFunctions.unweightedAvg("
                                                              "values)"}},
                              "sm": {"moving_fn": {"buckets_path": "a", "window": 4,
                                                   "script": "MovingFunctions.sum(values) * "
                                                             "params.k",
                                                   }},
                              "ew": {"moving_fn": {"buckets_path": "a", "window": 5, "script": {
                                  "source": "MovingFunctions.ewma(values, params.alpha)",
                                  "params": {"alpha": 0.3}}}},
                              "lw": {"moving_fn": {"buckets_path": "a", "window": 3, "script":
                                                   "MovingFunctions.linearWeightedAvg(values)"}},
                              "sd": {"moving_fn": {"buckets_path": "a", "window": 3, "script":
                                                   "MovingFunctions.stdDev(values, "
                                                   "MovingFunctions.unweightedAvg(values))"}},
                              "ho": {"moving_fn": {"buckets_path": "a", "window": 4, "script":
                                                   "MovingFunctions.holt(values, 0.5, 0.2)"}},
                              "diff": {"serial_diff": {"buckets_path": "_count", "lag": 2}}}}}}
    # params.k is unbound: the sum script fails on null
    st, b = search(server, name, body)
    assert st == 400 and b["error"]["type"] == "script_exception", b
    body["aggs"]["h"]["aggs"]["sm"]["moving_fn"]["script"] = {
        "source": "MovingFunctions.sum(values) * params.k", "params": {"k": 2}}
    st, b = search(server, name, body)
    assert st == 200, b
    buckets = b["aggregations"]["h"]["buckets"]
    assert len(buckets) == 20
    avgs = []
    for q in range(20):
        p = [d["price"] for d in sub if d["qty"] == q and "price" in d]
        avgs.append(sum(p) / len(p) if p else None)
    assert avgs.count(None) >= 7

    def mean(v):
        return sum(v) / len(v) if v else None

    def ewma(v):
        avg = None
        for x in v:
            avg = x if avg is None else x * 0.3 + avg * 0.7
        return avg

    def linear(v):
        if not v:
            return None
        return sum(x * (i + 1) for i, x in enumerate(v)) / sum(range(1, len(v) + 1))

    def std(v):
        if not v:
            return None
        m = mean(v)
        return math.sqrt(sum((x - m) ** 2 for x in v) / len(v))

    def holt(v):
        if not v:
            return None
        s = last_s = b_ = last_b = 0
        for i, x in enumerate(v):
            if i == 0:
                s, b_ = x, 0
            else:
                s = 0.5 * x + 0.5 * (last_s + last_b)
                b_ = 0.2 * (s - last_s) + 0.8 * last_b
            last_s, last_b = s, b_
        return s

    checks = {"mx": mf_model(avgs, 3, 0, lambda v: max(v) if v else None),
              "avg": mf_model(avgs, 2, 1, mean),
              "sm": mf_model(avgs, 4, 0, lambda v: 2 * sum(v)),
              "ew": mf_model(avgs, 5, 0, ewma),
              "lw": mf_model(avgs, 3, 0, linear),
              "sd": mf_model(avgs, 3, 0, std),
              "ho": mf_model(avgs, 4, 0, holt)}
    for key, want in checks.items():
        for x, w in zip(buckets, want):
            if w == "absent":
                assert key not in x, (key, x)
            elif w is None:
                assert x[key]["value"] is None, (key, x)
            else:
                assert x[key]["value"] == pytest.approx(w, rel=1e-9, abs=1e-9), (key, x)
    counts = [x["doc_count"] for x in buckets]
    for i, x in enumerate(buckets):
        if i < 2:
            assert "diff" not in x
        else:
            assert x["diff"]["value"] == counts[i] - counts[i - 2]


def test_percentiles_and_extended_stats_bucket(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "h": {"histogram": {"field": "qty", "interval": 1},
              "aggs": {"p": {"sum": {"field": "price"}}}},
        "pb": {"percentiles_bucket": {"buckets_path": "h>p", "percents": [0, 10, 50, 99.9, 100]}},
        "pd": {"percentiles_bucket": {"buckets_path": "h>_count", "keyed": False}},
        "eb": {"extended_stats_bucket": {"buckets_path": "h>p", "sigma": 3}}}})
    assert st == 200, b
    a = b["aggregations"]
    sums = sorted(x["p"]["value"] for x in a["h"]["buckets"])
    for pct in (0, 10, 50, 99.9, 100):
        want = sums[int(math.floor(pct / 100 * (len(sums) - 1) + 0.5))]
        assert a["pb"]["values"][repr(float(pct))] == pytest.approx(want)
    counts = sorted(x["doc_count"] for x in a["h"]["buckets"])
    got = a["pd"]["values"]
    assert [x["key"] for x in got] == [1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0]
    for x in got:
        assert x["value"] == counts[int(math.floor(x["key"] / 100 * (len(counts) - 1) + 0.5))]
    e = a["eb"]
    n = len(sums)
    mean = sum(sums) / n
    var = sum((s - mean) ** 2 for s in sums) / n
    assert e["count"] == n
    assert e["sum"] == pytest.approx(sum(sums))
    assert e["min"] == pytest.approx(sums[0]) and e["max"] == pytest.approx(sums[-1])
    assert e["variance"] == pytest.approx(var, rel=1e-6)
    assert e["std_deviation_bounds"]["upper"] == pytest.approx(mean + 3 * math.sqrt(var),
                                                               rel=1e-6)


@pytest.mark.parametrize("aggs", [
    {"h": {"histogram": {"field": "qty", "interval": 1}, "aggs": {"m": {"moving_fn": {
        "buckets_path": "_count", "window": 0, "script": "MovingFunctions.max(values)"}}}}},
    {"h": {"histogram": {"field": "qty", "interval": 1}, "aggs": {"m": {"moving_fn": {
        "buckets_path": "_count", "window": 2}}}}},
    {"h": {"histogram": {"field": "qty", "interval": 1}, "aggs": {"m": {"moving_fn": {
        "buckets_path": "_count", "window": 2, "script": "MovingFunctions.nope(values)"}}}}},
    {"h": {"histogram": {"field": "qty", "interval": 1}, "aggs": {"m": {"moving_fn": {
        "buckets_path": "_count", "window": 2, "script": "MovingFunctions.max(1)"}}}}},
    {"g": {"terms": {"field": "genre"}, "aggs": {"m": {"serial_diff": {
        "buckets_path": "_count"}}}}},
    {"h": {"histogram": {"field": "qty", "interval": 1}, "aggs": {"m": {"serial_diff": {
        "buckets_path": "_count", "lag": 0}}}}},
    {"p": {"percentiles_bucket": {"buckets_path": "h>_count", "percents": [101]}},
     "h": {"histogram": {"field": "qty", "interval": 1}}},
    {"p": {"extended_stats_bucket": {"buckets_path": "h>_count", "sigma": -1}},
     "h": {"histogram": {"field": "qty", "interval": 1}}},
])
def test_more_pipeline_errors(server, idx, aggs):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": aggs})
    assert st == 400, b
    assert b["error"]["type"] in ("illegal_argument_exception", "script_exception"), b
