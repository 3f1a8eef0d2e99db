"""Aggregations over HTTP with the real server: response shapes as Elasticsearch documents
them, counts against Python over the same documents (two and three shards, so the reduce
runs), errors with Elasticsearch's types, and the official Python client."""
import datetime
import json
import math
import random

import pytest

from conftest import Server, bulk_body

GENRES = ["rock", "jazz", "pop", "blues", "folk", "metal", "punk"]


def make_docs(n=300, seed=7):
    rnd = random.Random(seed)
    docs = []
    t0 = datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc)
    for i in range(n):
        d = {
            "genre": rnd.choice(GENRES[: 1 + rnd.randrange(len(GENRES))]),
            "price": round(rnd.uniform(0, 300), 2),
            "qty": rnd.randrange(0, 20),
            "date": (t0 + datetime.timedelta(hours=rnd.randrange(0, 24 * 120))).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "ip": "10.0.%d.%d" % (rnd.randrange(2), rnd.randrange(4)),
            "flag": rnd.random() < 0.3,
            "title": "song %d" % i,
        }
        if i % 10 == 0:
            d["tags"] = ["a", "b"] if i % 20 == 0 else ["b", "c"]
        if i % 17 == 0:
            del d["price"]
        docs.append(d)
    return docs


MAPPING = {"properties": {
    "genre": {"type": "keyword"}, "price": {"type": "double"}, "qty": {"type": "long"},
    "date": {"type": "date"}, "ip": {"type": "ip"}, "flag": {"type": "boolean"},
    "title": {"type": "text"}, "tags": {"type": "keyword"}}}


@pytest.fixture(scope="module")
def idx(server):
    name = "aggs-e2e"
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
    return st, b


def test_terms_keyword_counts_and_shape(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"g": {"terms": {"field": "genre", "size": 3}}}})
    assert st == 200, b
    assert b["hits"]["hits"] == []
    g = b["aggregations"]["g"]
    assert set(g) == {"doc_count_error_upper_bound", "sum_other_doc_count", "buckets"}
    counts = {}
    for d in docs:
        counts[d["genre"]] = counts.get(d["genre"], 0) + 1
    expect = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    assert [(x["key"], x["doc_count"]) for x in g["buckets"]] == expect[:3]
    assert g["sum_other_doc_count"] == sum(c for _, c in expect[3:])
    assert g["doc_count_error_upper_bound"] >= 0


def test_terms_numeric_bool_ip_and_order(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "q": {"terms": {"field": "qty", "size": 50, "order": {"_key": "asc"}}},
        "f": {"terms": {"field": "flag"}},
        "ip": {"terms": {"field": "ip"}},
        "t": {"terms": {"field": "tags"}}}})
    assert st == 200, b
    a = b["aggregations"]
    qc = {}
    for d in docs:
        qc[d["qty"]] = qc.get(d["qty"], 0) + 1
    assert [(x["key"], x["doc_count"]) for x in a["q"]["buckets"]] == sorted(qc.items())
    fb = {x["key_as_string"]: (x["key"], x["doc_count"]) for x in a["f"]["buckets"]}
    assert fb["true"] == (1, sum(d["flag"] for d in docs))
    assert fb["false"] == (0, sum(not d["flag"] for d in docs))
    ips = {x["key"]: x["doc_count"] for x in a["ip"]["buckets"]}
    assert sum(ips.values()) == len(docs) and all(k.startswith("10.0.") for k in ips)
    tags = {x["key"]: x["doc_count"] for x in a["t"]["buckets"]}
    assert tags == {"b": 30, "a": 15, "c": 15}


def test_terms_with_metric_subs_and_order_by_metric(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"g": {
        "terms": {"field": "genre", "size": 10, "order": {"avg_price": "desc"}},
        "aggs": {"avg_price": {"avg": {"field": "price"}},
                 "st": {"stats": {"field": "qty"}},
                 "mx": {"max": {"field": "date"}}}}}})
    assert st == 200, b
    buckets = b["aggregations"]["g"]["buckets"]
    avgs = [x["avg_price"]["value"] for x in buckets]
    assert avgs == sorted(avgs, reverse=True)
    for x in buckets:
        ds = [d for d in docs if d["genre"] == x["key"]]
        prices = [d["price"] for d in ds if "price" in d]
        assert x["doc_count"] == len(ds)
        assert math.isclose(x["avg_price"]["value"], sum(prices) / len(prices), rel_tol=1e-9)
        q = [d["qty"] for d in ds]
        assert x["st"] == {"count": len(q), "min": float(min(q)), "max": float(max(q)),
                           "avg": pytest.approx(sum(q) / len(q)), "sum": float(sum(q))}
        assert x["mx"]["value_as_string"].endswith("Z")


def test_terms_include_exclude(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "re": {"terms": {"field": "genre", "include": "[a-m].*", "exclude": ["jazz"]}},
        "vals": {"terms": {"field": "qty", "include": [1, 2, 3]}},
        "p0": {"terms": {"field": "genre", "include": {"partition": 0, "num_partitions": 2}}},
        "p1": {"terms": {"field": "genre", "include": {"partition": 1, "num_partitions": 2}}}}})
    assert st == 200, b
    a = b["aggregations"]
    assert {x["key"] for x in a["re"]["buckets"]} == \
        {g for g in {d["genre"] for d in docs} if g[0] <= "m" and g != "jazz"}
    assert {x["key"] for x in a["vals"]["buckets"]} <= {1, 2, 3}
    p0 = {x["key"] for x in a["p0"]["buckets"]}
    p1 = {x["key"] for x in a["p1"]["buckets"]}
    assert not (p0 & p1) and p0 | p1 == {d["genre"] for d in docs}
    st, b = search(server, name, {"size": 0, "aggs": {
        "x": {"terms": {"field": "qty", "include": "1.*"}}}})
    assert st == 400 and b["error"]["type"] == "aggregation_execution_exception", b


def test_composite_paging(server, idx):
    name, docs = idx
    body = {"size": 0, "aggs": {"c": {"composite": {"size": 5, "sources": [
        {"g": {"terms": {"field": "genre"}}},
        {"q": {"histogram": {"field": "qty", "interval": 10, "order": "desc"}}},
        {"d": {"date_histogram": {"field": "date", "calendar_interval": "month"}}},
        {"t": {"terms": {"field": "tags", "missing_bucket": True}}}]},
        "aggs": {"p": {"max": {"field": "qty"}}}}}}
    expect = {}
    for d in docs:
        month = d["date"][:7]
        ms = int(datetime.datetime.strptime(month + "-01", "%Y-%m-%d").replace(
            tzinfo=datetime.timezone.utc).timestamp() * 1000)
        for t in d.get("tags") or [None]:
            k = (d["genre"], float(d["qty"] // 10 * 10), ms, t)
            expect[k] = expect.get(k, 0) + 1
    got = []
    while True:
        st, b = search(server, name, body)
        assert st == 200, b
        c = b["aggregations"]["c"]
        if not c["buckets"]:
            assert "after_key" not in c
            break
        assert c["after_key"] == c["buckets"][-1]["key"]
        for x in c["buckets"]:
            k = x["key"]
            got.append(((k["g"], k["q"], k["d"], k["t"]), x["doc_count"]))
            assert x["p"]["value"] is not None
        body["aggs"]["c"]["composite"]["after"] = c["after_key"]
    assert dict(got) == expect
    keys = [k for k, _ in got]
    order = sorted(keys, key=lambda k: (k[0], -k[1], k[2], (k[3] is not None, k[3] or "")))
    assert keys == order
    st, b = search(server, name, {"size": 0, "aggs": {"g": {"terms": {"field": "genre"}, "aggs": {
        "c": {"composite": {"sources": [{"q": {"terms": {"field": "qty"}}}]}}}}}})
    assert st == 400, b


def test_multi_terms(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"m": {"multi_terms": {
        "terms": [{"field": "genre"}, {"field": "flag"}], "size": 100}}}})
    assert st == 200, b
    m = b["aggregations"]["m"]
    expect = {}
    for d in docs:
        expect[(d["genre"], d["flag"])] = expect.get((d["genre"], d["flag"]), 0) + 1
    got = {(x["key"][0], x["key"][1]): x["doc_count"] for x in m["buckets"]}
    assert got == expect
    x = m["buckets"][0]
    assert x["key_as_string"] == "%s|%s" % (x["key"][0], "true" if x["key"][1] else "false")
    counts = [x["doc_count"] for x in m["buckets"]]
    assert counts == sorted(counts, reverse=True)


def test_pipelines(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "m": {"date_histogram": {"field": "date", "calendar_interval": "month"},
              "aggs": {"q": {"sum": {"field": "qty"}},
                       "cum": {"cumulative_sum": {"buckets_path": "q"}},
                       "d": {"derivative": {"buckets_path": "q"}},
                       "cnt": {"cumulative_sum": {"buckets_path": "_count"}}}},
        "max_q": {"max_bucket": {"buckets_path": "m>q"}},
        "min_q": {"min_bucket": {"buckets_path": "m>q"}},
        "avg_c": {"avg_bucket": {"buckets_path": "m>_count"}},
        "sum_q": {"sum_bucket": {"buckets_path": "m>q"}},
        "st": {"stats_bucket": {"buckets_path": "m>q"}},
        "g": {"terms": {"field": "genre", "size": 10},
              "aggs": {"q": {"sum": {"field": "qty"}},
                       "top": {"bucket_sort": {"sort": [{"q": {"order": "desc"}}], "size": 2}}}}}})
    assert st == 200, b
    a = b["aggregations"]
    months = a["m"]["buckets"]
    sums = [x["q"]["value"] for x in months]
    acc = 0
    for i, x in enumerate(months):
        acc += x["q"]["value"]
        assert x["cum"]["value"] == acc
        if i == 0:
            assert "d" not in x
        else:
            assert x["d"]["value"] == sums[i] - sums[i - 1]
    assert months[-1]["cnt"]["value"] == len(docs)
    assert a["max_q"]["value"] == max(sums)
    assert a["max_q"]["keys"] == [x["key_as_string"] for x in months if x["q"]["value"] == max(sums)]
    assert a["min_q"]["value"] == min(sums)
    assert a["avg_c"]["value"] == pytest.approx(len(docs) / len(months))
    assert a["sum_q"]["value"] == sum(sums)
    assert a["st"]["count"] == len(months) and a["st"]["max"] == max(sums)
    g = a["g"]["buckets"]
    assert len(g) == 2 and g[0]["q"]["value"] >= g[1]["q"]["value"]
    by = {}
    for d in docs:
        by[d["genre"]] = by.get(d["genre"], 0) + d["qty"]
    assert g[0]["q"]["value"] == max(by.values())
    st, b = search(server, name, {"size": 0, "aggs": {
        "x": {"max_bucket": {"buckets_path": "nope>q"}}}})
    assert st == 400, b
    st, b = search(server, name, {"size": 0, "aggs": {
        "x": {"cumulative_sum": {"buckets_path": "_count"}}}})
    assert st == 400, b


def test_auto_date_histogram(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "a": {"auto_date_histogram": {"field": "date", "buckets": "10"},
              "aggs": {"q": {"stats": {"field": "qty"}}}},
        "d": {"auto_date_histogram": {"field": "date", "buckets": 200,
                                      "minimum_interval": "day",
                                      "time_zone": "America/New_York"}}}})
    assert st == 200, b
    a = b["aggregations"]["a"]
    assert a["interval"] == "1M" and len(a["buckets"]) <= 10
    assert a["buckets"][0]["key_as_string"] == "2015-01-01T00:00:00.000Z"
    assert sum(x["doc_count"] for x in a["buckets"]) == len(docs)
    assert sum(x["q"]["count"] for x in a["buckets"]) == len(docs)
    d = b["aggregations"]["d"]
    assert d["interval"] == "1d" and 100 <= len(d["buckets"]) <= 200
    assert d["buckets"][0]["key_as_string"].endswith("-05:00")


def test_auto_date_histogram_under_range(server, idx):
    """Rally's autohisto_agg shape: under a range on its own field (segments without deletes
    count from the BKD tree) the buckets equal the same range under constant_score (docs
    visited) and Python's: the finest epoch-aligned fixed interval whose buckets fit."""
    name, docs = idx
    ladder = [("1s", 1000), ("5s", 5000), ("10s", 10000), ("30s", 30000), ("1m", 60000),
              ("5m", 300000), ("10m", 600000), ("30m", 1800000), ("1h", 3600000),
              ("3h", 3 * 3600000), ("12h", 12 * 3600000), ("1d", 86400000),
              ("7d", 7 * 86400000)]
    for lo, hi, size in (("01/01/2015", "21/01/2015", 20), ("01/01/2015", "21/01/2015", 30),
                         ("15/02/2015", "15/02/2015", 10), ("01/03/2015", "31/03/2015", 6)):
        q = {"range": {"date": {"gte": lo, "lte": hi, "format": "dd/MM/yyyy"}}}
        got = []
        for query in (q, {"constant_score": {"filter": q}}):
            st, b = search(server, name, {"size": 0, "query": query, "aggs": {
                "a": {"auto_date_histogram": {"field": "date", "buckets": size}}}})
            assert st == 200, b
            got.append(b["aggregations"]["a"])
        assert got[0] == got[1]
        t_lo = datetime.datetime.strptime(lo, "%d/%m/%Y").replace(tzinfo=datetime.timezone.utc)
        t_hi = t_lo.replace(day=int(hi[:2])) + datetime.timedelta(days=1)
        ms = [int(datetime.datetime.strptime(d["date"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()) * 1000 for d in docs]
        ms = [m for m in ms if t_lo.timestamp() * 1000 <= m < t_hi.timestamp() * 1000]
        label, step = next((lb, s) for lb, s in ladder
                           if max(ms) // s - min(ms) // s + 1 <= size)
        assert got[0]["interval"] == label, (lo, hi, size, got[0])
        want = {}
        for m in ms:
            want[m - m % step] = want.get(m - m % step, 0) + 1
        assert {x["key"]: x["doc_count"] for x in got[0]["buckets"] if x["doc_count"]} == want


def test_auto_date_histogram_range_wider_than_values(server):
    """The interval comes from the matching values, not from the range's bounds: values from
    Jan 3 to Jan 20 under a January range fit 20 daily buckets (the whole month would not)."""
    name = "auto-range-e2e"
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 1}, "mappings": {"properties": {"d": {"type": "date"}}}})
    assert st == 200, b
    docs = [{"d": d} for d in ("2015-01-03T00:00:00Z", "2015-01-10T12:00:00Z",
                               "2015-01-20T23:59:59Z", "2014-12-31T23:59:59Z",
                               "2015-02-01T00:00:00Z")]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    q = {"range": {"d": {"gte": "01/01/2015", "lte": "31/01/2015", "format": "dd/MM/yyyy"}}}
    for query in (q, {"constant_score": {"filter": q}}):
        st, b = search(server, name, {"size": 0, "query": query, "aggs": {
            "a": {"auto_date_histogram": {"field": "d", "buckets": 20}}}})
        assert st == 200, b
        a = b["aggregations"]["a"]
        assert a["interval"] == "1d", a
        assert len(a["buckets"]) == 18 and sum(x["doc_count"] for x in a["buckets"]) == 3
    server.request("DELETE", "/" + name)


def test_ip_range(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"r": {"ip_range": {"field": "ip", "ranges": [
        {"to": "10.0.0.2"}, {"from": "10.0.0.2", "to": "10.0.1.0"}, {"mask": "10.0.1.0/30"},
        {"from": "10.0.1.3"}]}}}})
    assert st == 200, b
    rb = b["aggregations"]["r"]["buckets"]
    assert [x["key"] for x in rb] == ["*-10.0.0.2", "10.0.0.2-10.0.1.0", "10.0.1.0/30",
                                      "10.0.1.3-*"]
    assert rb[0] == {"key": "*-10.0.0.2", "to": "10.0.0.2", "doc_count": sum(
        1 for d in docs if d["ip"] in ("10.0.0.0", "10.0.0.1"))}
    assert rb[2]["from"] == "10.0.1.0" and rb[2]["to"] == "10.0.1.4"
    assert rb[2]["doc_count"] == sum(1 for d in docs if d["ip"].startswith("10.0.1."))
    assert rb[3]["doc_count"] == sum(1 for d in docs if d["ip"] == "10.0.1.3")


def test_weighted_avg(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"w": {"weighted_avg": {
        "value": {"field": "price"}, "weight": {"field": "qty"}}}}})
    assert st == 200, b
    num = sum(d["price"] * d["qty"] for d in docs if "price" in d)
    den = sum(d["qty"] for d in docs if "price" in d)
    assert b["aggregations"]["w"]["value"] == pytest.approx(num / den)


def test_msearch_with_aggs(server, idx):
    name, docs = idx
    body = "\n".join([json.dumps({"index": name}),
                      json.dumps({"size": 0, "aggs": {"g": {"terms": {"field": "genre"}}}}),
                      json.dumps({"index": name}),
                      json.dumps({"size": 0, "aggs": {"x": {"terms": {"field": "title"}}}})]) + "\n"
    st, _, b = server.request("POST", "/_msearch", body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200, b
    r0, r1 = b["responses"]
    assert r0["status"] == 200 and "g" in r0["aggregations"]
    assert r1["status"] == 400 and "error" in r1


def test_terms_min_doc_count_zero(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "query": {"term": {"genre": "rock"}}, "aggs": {
        "g": {"terms": {"field": "genre", "min_doc_count": 0, "size": 20}}}})
    assert st == 200, b
    got = {x["key"]: x["doc_count"] for x in b["aggregations"]["g"]["buckets"]}
    assert set(got) == {d["genre"] for d in docs}
    assert got["rock"] == sum(1 for d in docs if d["genre"] == "rock")
    assert all(c == 0 for k, c in got.items() if k != "rock")


def test_significant_terms(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "query": {"term": {"flag": True}}, "aggs": {
        "s": {"significant_terms": {"field": "genre", "min_doc_count": 1}}}})
    assert st == 200, b
    s = b["aggregations"]["s"]
    flagged = [d for d in docs if d["flag"]]
    assert s["doc_count"] == len(flagged) and s["bg_count"] == len(docs)
    for x in s["buckets"]:
        assert set(x) == {"key", "doc_count", "score", "bg_count"}
        assert x["doc_count"] == sum(1 for d in flagged if d["genre"] == x["key"])
        # the shards that matched the term add their background counts (as Elasticsearch)
        assert 0 < x["bg_count"] <= sum(1 for d in docs if d["genre"] == x["key"])
        assert x["score"] > 0
    scores = [x["score"] for x in s["buckets"]]
    assert scores == sorted(scores, reverse=True)


def test_metrics_shapes(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "query": {"term": {"genre": "rock"}}, "aggs": {
        "mn": {"min": {"field": "price"}}, "mx": {"max": {"field": "price"}},
        "s": {"sum": {"field": "qty"}}, "a": {"avg": {"field": "qty"}},
        "vc": {"value_count": {"field": "price"}},
        "es": {"extended_stats": {"field": "qty"}},
        "none": {"avg": {"field": "no_such_field"}},
        "nosum": {"sum": {"field": "no_such_field"}}}})
    assert st == 200, b
    a = b["aggregations"]
    rock = [d for d in docs if d["genre"] == "rock"]
    prices = [d["price"] for d in rock if "price" in d]
    assert a["mn"] == {"value": min(prices)} and a["mx"] == {"value": max(prices)}
    assert a["s"]["value"] == float(sum(d["qty"] for d in rock))
    assert a["vc"] == {"value": len(prices)}
    assert a["none"] == {"value": None}
    assert a["nosum"] == {"value": 0.0}
    es = a["es"]
    for k in ("count", "min", "max", "avg", "sum", "sum_of_squares", "variance",
              "std_deviation", "std_deviation_bounds"):
        assert k in es
    q = [d["qty"] for d in rock]
    mean = sum(q) / len(q)
    assert math.isclose(es["variance"], sum((x - mean) ** 2 for x in q) / len(q), rel_tol=1e-9)


def test_histogram_and_date_histogram(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {
        "h": {"histogram": {"field": "qty", "interval": 5, "extended_bounds": {"min": 0, "max": 40}}},
        "hk": {"histogram": {"field": "price", "interval": 100, "keyed": True}},
        "m": {"date_histogram": {"field": "date", "calendar_interval": "month"}},
        "w": {"date_histogram": {"field": "date", "fixed_interval": "10d", "min_doc_count": 1}},
        "tz": {"date_histogram": {"field": "date", "calendar_interval": "day",
                                  "time_zone": "America/New_York"}}}})
    assert st == 200, b
    a = b["aggregations"]
    keys = [x["key"] for x in a["h"]["buckets"]]
    assert keys == [float(k) for k in range(0, 45, 5)]
    for x in a["h"]["buckets"]:
        assert x["doc_count"] == sum(1 for d in docs if x["key"] <= d["qty"] < x["key"] + 5)
    assert set(a["hk"]["buckets"]) <= {"0.0", "100.0", "200.0", "300.0"}
    assert a["hk"]["buckets"]["0.0"]["key"] == 0.0
    months = a["m"]["buckets"]
    assert months[0]["key_as_string"] == "2015-01-01T00:00:00.000Z"
    assert months[0]["key"] == 1420070400000
    assert sum(x["doc_count"] for x in months) == len(docs)
    assert all(x["doc_count"] > 0 for x in a["w"]["buckets"])
    assert sum(x["doc_count"] for x in a["w"]["buckets"]) == len(docs)
    days = a["tz"]["buckets"]
    assert days[0]["key_as_string"].endswith("-05:00")
    # 2015-03-08 in New York is 23 hours long
    by = {x["key_as_string"][:10]: x["key"] for x in days}
    assert by["2015-03-09"] - by["2015-03-08"] == 23 * 3600 * 1000
    assert sum(x["doc_count"] for x in days) == len(docs)


def test_range_date_range_filters_missing_global(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "query": {"term": {"genre": "rock"}}, "aggs": {
        "r": {"range": {"field": "price", "ranges": [{"to": 100}, {"from": 100, "to": 200},
                                                     {"from": 200}]}},
        "rk": {"range": {"field": "price", "keyed": True, "ranges": [{"key": "cheap", "to": 50}]}},
        "dr": {"date_range": {"field": "date", "format": "yyyy-MM-dd",
                              "ranges": [{"to": "2015-02-01"}, {"from": "2015-02-01"}]}},
        "f": {"filters": {"other_bucket": True, "filters": {
            "cheap": {"range": {"price": {"lt": 50}}}, "many": {"range": {"qty": {"gte": 10}}}}}},
        "fa": {"filters": {"filters": [{"term": {"flag": True}}]}},
        "one": {"filter": {"term": {"flag": True}}, "aggs": {"s": {"sum": {"field": "qty"}}}},
        "mi": {"missing": {"field": "price"}},
        "all": {"global": {}, "aggs": {"g": {"terms": {"field": "genre", "size": 20}}}}}})
    assert st == 200, b
    a = b["aggregations"]
    rock = [d for d in docs if d["genre"] == "rock"]
    rb = a["r"]["buckets"]
    assert [x["key"] for x in rb] == ["*-100.0", "100.0-200.0", "200.0-*"]
    assert "from" not in rb[0] and rb[0]["to"] == 100.0 and rb[2]["from"] == 200.0
    assert rb[1]["doc_count"] == sum(1 for d in rock if 100 <= d.get("price", -1) < 200)
    assert list(a["rk"]["buckets"]) == ["cheap"] and "key" not in a["rk"]["buckets"]["cheap"]
    drb = a["dr"]["buckets"]
    assert drb[0]["key"] == "*-2015-02-01" and drb[0]["to_as_string"] == "2015-02-01"
    assert drb[0]["to"] == 1422748800000.0
    fb = a["f"]["buckets"]
    assert list(fb) == ["cheap", "many", "_other_"]
    assert fb["many"]["doc_count"] == sum(1 for d in rock if d["qty"] >= 10)
    assert fb["_other_"]["doc_count"] == sum(
        1 for d in rock if not (d.get("price", 1e9) < 50 or d["qty"] >= 10))
    assert a["fa"]["buckets"] == [{"doc_count": sum(1 for d in rock if d["flag"])}]
    assert a["one"]["doc_count"] == sum(1 for d in rock if d["flag"])
    assert a["one"]["s"]["value"] == float(sum(d["qty"] for d in rock if d["flag"]))
    assert a["mi"] == {"doc_count": sum(1 for d in rock if "price" not in d)}
    assert a["all"]["doc_count"] == len(docs)
    assert sum(x["doc_count"] for x in a["all"]["g"]["buckets"]) == len(docs)


def test_size_and_hits_with_aggs_and_post_filter(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 5, "query": {"match_all": {}},
                                  "post_filter": {"term": {"genre": "rock"}},
                                  "aggs": {"g": {"terms": {"field": "genre"}}}})
    assert st == 200, b
    rock = sum(1 for d in docs if d["genre"] == "rock")
    assert b["hits"]["total"]["value"] == rock
    assert all(h["_source"]["genre"] == "rock" for h in b["hits"]["hits"])
    assert sum(x["doc_count"] for x in b["aggregations"]["g"]["buckets"]) + \
        b["aggregations"]["g"]["sum_other_doc_count"] == len(docs)
    # size 0: the shards' totals come from the aggregation pass, which sees every doc
    st, b0 = search(server, name, {"size": 0, "query": {"match_all": {}},
                                   "post_filter": {"term": {"genre": "rock"}},
                                   "aggs": {"g": {"terms": {"field": "genre"}}}})
    assert st == 200, b0
    assert b0["hits"]["total"] == {"value": rock, "relation": "eq"}
    assert b0["aggregations"] == b["aggregations"]


def test_typed_keys_and_empty_index(server, idx, fresh_index):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": {"g": {"terms": {"field": "genre"}},
                                                      "a": {"avg": {"field": "price"}}}},
                   "?typed_keys=true")
    assert st == 200 and "sterms#g" in b["aggregations"] and "avg#a" in b["aggregations"], b
    st, b = search(server, name, {"size": 0, "aggs": {"g": {
        "terms": {"field": "genre", "size": 2, "show_term_doc_count_error": True},
        "meta": {"color": "blue"}}}})
    assert st == 200, b
    g = b["aggregations"]["g"]
    assert g["meta"] == {"color": "blue"}
    assert all(x["doc_count_error_upper_bound"] >= 0 for x in g["buckets"])
    server.request("PUT", "/" + fresh_index, {"mappings": MAPPING})
    st, b = search(server, fresh_index, {"size": 0, "aggs": {
        "g": {"terms": {"field": "genre"}}, "a": {"avg": {"field": "price"}},
        "h": {"date_histogram": {"field": "date", "calendar_interval": "day"}}}})
    assert st == 200, b
    assert b["aggregations"]["g"] == {"doc_count_error_upper_bound": 0,
                                      "sum_other_doc_count": 0, "buckets": []}
    assert b["aggregations"]["a"] == {"value": None}
    assert b["aggregations"]["h"] == {"buckets": []}


@pytest.mark.parametrize("aggs,status,etype", [
    ({"x": {"not_an_agg": {"field": "genre"}}}, 400, "parsing_exception"),
    ({"x": {"terms": {"field": "title"}}}, 400, "search_phase_execution_exception"),
    ({"x": {"date_histogram": {"field": "date", "calendar_interval": "2d"}}}, 400,
     "illegal_argument_exception"),
    ({"x": {"date_histogram": {"field": "date", "fixed_interval": "1M"}}}, 400,
     "illegal_argument_exception"),
    ({"x": {"date_histogram": {"field": "date"}}}, 400, "illegal_argument_exception"),
    ({"x": {"histogram": {"field": "qty", "interval": 0}}}, 400, "illegal_argument_exception"),
    ({"x": {"avg": {"field": "genre"}}}, 400, "search_phase_execution_exception"),
    ({"x": {"avg": {"field": "qty"}, "aggs": {"y": {"max": {"field": "qty"}}}}}, 400,
     "aggregation_initialization_exception"),
    ({"x": {"terms": {"field": "genre", "bogus": 1}}}, 400, "x_content_parse_exception"),
    ({"x": {"terms": {"field": "genre", "order": {"nope": "asc"}}}}, 400,
     "aggregation_execution_exception"),
    ({"x": {"terms": {"field": "genre"}, "histogram": {"field": "qty", "interval": 1}}}, 400,
     "parsing_exception"),
    ({"x": {"top_hits": {"size": 101}}}, 400, "illegal_argument_exception"),  # window
    ({"x": {"date_histogram": {"field": "date", "calendar_interval": "day",
                               "time_zone": "Mars/Olympus"}}}, 400,
     "illegal_argument_exception"),
])
def test_errors(server, idx, aggs, status, etype):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": aggs})
    assert st == status, b
    assert b["error"]["type"] == etype, b
    assert b["status"] == status


def test_text_field_error_shape(server, idx):
    name, _ = idx
    st, b = search(server, name, {"aggs": {"x": {"terms": {"field": "title"}}}})
    assert st == 400
    assert b["error"]["root_cause"][0]["type"] == "illegal_argument_exception"
    assert b["error"]["root_cause"][0]["reason"].startswith("Text fields are not optimised")


def test_too_many_buckets(server, idx):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": {"h": {"histogram": {
        "field": "qty", "interval": 1, "extended_bounds": {"min": 0, "max": 100000}}}}})
    assert st == 400, b
    assert b["error"]["type"] == "too_many_buckets_exception"
    # the server keeps serving
    st, b = search(server, name, {"size": 0, "aggs": {"g": {"terms": {"field": "genre"}}}})
    assert st == 200


def test_large_terms_trips_the_breaker_and_server_stays_healthy(tmp_path):
    # a node with a 16 MB memory budget: the request breaker reserves about 1 MB per shard query
    s = Server(str(tmp_path / "data"), ["--memory", "16mb"]).start()
    try:
        s.request("PUT", "/big", {"settings": {"number_of_shards": 1}, "mappings": {
            "properties": {"k": {"type": "keyword"}, "n": {"type": "long"}}}})
        for part in range(20):
            lines = []
            for i in range(part * 2000, (part + 1) * 2000):
                lines.append(json.dumps({"index": {"_index": "big"}}))
                lines.append(json.dumps({"k": "key-%d" % i, "n": i}))
            st, _, b = s.request("POST", "/_bulk", "\n".join(lines) + "\n",
                                 headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not b["errors"]
        s.request("POST", "/big/_refresh")
        st, _, b = s.request("POST", "/big/_search", {"size": 0, "aggs": {"k": {
            "terms": {"field": "k", "size": 40000},
            "aggs": {"h": {"histogram": {"field": "n", "interval": 1}}}}}})
        assert st == 429, b
        assert b["error"]["root_cause"][0]["type"] == "circuit_breaking_exception", b
        st, _, b = s.request("GET", "/_nodes/stats/breaker")
        node = next(iter(b["nodes"].values()))
        assert node["breakers"]["request"]["tripped"] >= 1
        assert node["breakers"]["request"]["estimated_size_in_bytes"] == 0
        st, _, b = s.request("POST", "/big/_search", {"size": 0, "aggs": {
            "h": {"histogram": {"field": "n", "interval": 1000}},
            "k": {"terms": {"field": "k", "size": 3}}}})
        assert st == 200, b
        assert len(b["aggregations"]["h"]["buckets"]) == 40
        assert b["aggregations"]["k"]["sum_other_doc_count"] == 40000 - 3
    finally:
        assert s.stop() == 0


def test_official_client(server, idx):
    elasticsearch = pytest.importorskip("elasticsearch")
    es = elasticsearch.Elasticsearch([server.url])
    name, docs = idx
    r = es.search(index=name, body={"size": 0, "aggs": {
        "g": {"terms": {"field": "genre"}, "aggs": {"p": {"avg": {"field": "price"}}}},
        "m": {"date_histogram": {"field": "date", "calendar_interval": "month",
                                 "format": "yyyy-MM"}}}})
    assert r["hits"]["total"]["value"] == len(docs)
    assert sum(x["doc_count"] for x in r["aggregations"]["g"]["buckets"]) + \
        r["aggregations"]["g"]["sum_other_doc_count"] == len(docs)
    assert r["aggregations"]["m"]["buckets"][0]["key_as_string"] == "2015-01"
    with pytest.raises(elasticsearch.RequestError) as ei:
        es.search(index=name, body={"aggs": {"x": {"terms": {"field": "title"}}}})
    assert ei.value.status_code == 400
    es.close()


def test_scaled_float_histogram_and_stats(server, fresh_index):
    """scaled_float (single-valued: the batch paths) histogram > stats against Python over the
    values as indexed (round(v * factor) / factor), as Rally's distance_amount_agg."""
    rnd = random.Random(5)
    docs = [{"d": round(rnd.uniform(0, 30), 2), "a": round(rnd.uniform(2, 90), 2)}
            for _ in range(400)]
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"d": {"type": "scaled_float", "scaling_factor": 100},
                                    "a": {"type": "scaled_float", "scaling_factor": 100}}}})
    assert st == 200, b
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    st, b = search(server, fresh_index, {"size": 0, "query": {"range": {"d": {"gte": 0, "lt": 25}}},
                                         "aggs": {"h": {"histogram": {"field": "d", "interval": 2},
                                                        "aggs": {"s": {"stats": {"field": "a"}}}}}})
    assert st == 200, b
    want = {}
    for x in docs:
        d, a = round(x["d"] * 100) / 100, round(x["a"] * 100) / 100
        if 0 <= d < 25:
            want.setdefault(math.floor(d / 2) * 2.0, []).append(a)
    got = {bk["key"]: bk for bk in b["aggregations"]["h"]["buckets"] if bk["doc_count"]}
    assert sorted(got) == sorted(want)
    for k, vals in want.items():
        s = got[k]["s"]
        assert got[k]["doc_count"] == len(vals) == s["count"]
        assert math.isclose(s["sum"], sum(vals), rel_tol=1e-9)
        assert s["min"] == min(vals) and s["max"] == max(vals)


def test_scaled_float_sum_is_exact(server, fresh_index):
    """A scaled_float sums its stored integers (cents here) and divides once: the correctly
    rounded sum of the indexed values. A compensated sum of 3 x 0.05 and of 29 x 0.01 as
    doubles gives 0.15000000000000002 and 0.29000000000000004; the sums are 0.15 and 0.29 (one
    shard: across shards the partial sums add as doubles), and avg and stats agree."""
    docs = [{"a": 0.05, "g": 1}] * 3 + [{"a": 0.01, "g": 2}] * 29
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1},
        "mappings": {"properties": {"a": {"type": "scaled_float", "scaling_factor": 100},
                                    "g": {"type": "integer"}}}})
    assert st == 200, b
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    st, b = search(server, fresh_index, {
        "size": 0, "aggs": {"g": {"terms": {"field": "g"},
                                  "aggs": {"s": {"sum": {"field": "a"}},
                                           "v": {"avg": {"field": "a"}},
                                           "st": {"stats": {"field": "a"}}}}}})
    assert st == 200, b
    got = {bk["key"]: bk for bk in b["aggregations"]["g"]["buckets"]}
    for key, n, want in ((1, 3, 0.15), (2, 29, 0.29)):
        bk = got[key]
        assert bk["doc_count"] == n
        assert bk["s"]["value"] == want, bk
        assert bk["st"]["sum"] == want and bk["st"]["count"] == n, bk
        assert bk["v"]["value"] == want / n, bk
