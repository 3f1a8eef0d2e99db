"""rank_feature and rank_features fields and the rank_feature query over HTTP: saturation (with
a pivot, and the default pivot: the shard's approximate geometric mean), log, sigmoid and
linear, positive_score_impact false, boosts, features of a rank_features field, inside a bool
with a match; every score equal to Lucene 8.7's FeatureField arithmetic recomputed here in
float32 from the 9-bit encoded values (seeded values, seed printed); mapping round trip; bad
documents and bad queries as 400s."""
import math
import random

import numpy as np
import pytest

from conftest import assert_error, bulk_body

SEED = 20261201
N = 300
TOPICS = ["politics", "sports", "science"]


def enc(v):
    """Lucene FeatureField: float bits >> 15."""
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0]) >> 15


def dec(freq):
    return np.array([freq << 15], dtype=np.uint32).view(np.float32)[0]


def f32(x):
    return np.float32(x)


def default_pivot(freqs):
    avg = f32(float(sum(freqs)) / len(freqs))
    return dec(int(avg))


def score(fn, freq, w=1.0, pivot=None, scaling=None, exponent=None):
    f = dec(freq)
    w = f32(w)
    if fn == "saturation":
        p = f32(pivot)
        return w * (f32(1) - p / (f + p))
    if fn == "log":
        return f32(float(w) * math.log(float(f32(scaling) + f)))
    if fn == "sigmoid":
        pa = math.pow(float(f32(pivot)), float(f32(exponent)))
        return f32(float(w) * (1.0 - pa / (math.pow(float(f), float(f32(exponent))) + pa)))
    return w * f


@pytest.fixture(scope="module")
def corpus(server):
    print("seed", SEED)
    rng = random.Random(SEED)
    index = "rankfeat-%d" % SEED
    server.request("DELETE", "/" + index)
    st, _, b = server.request("PUT", "/" + index, {
        "settings": {"number_of_shards": 1},
        "mappings": {"properties": {
            "title": {"type": "text"},
            "pagerank": {"type": "rank_feature"},
            "url_length": {"type": "rank_feature", "positive_score_impact": False},
            "topics": {"type": "rank_features"},
            "n": {"type": "long"}}}})
    assert st == 200, b
    docs = []
    for i in range(N):
        d = {"title": rng.choice(["red fox", "blue fox", "red dog", "green"]), "n": i}
        if i % 5:
            d["pagerank"] = rng.choice([rng.uniform(0.01, 5), rng.uniform(1, 5000)])
        if i % 3:
            d["url_length"] = rng.randint(5, 200)
        t = {k: round(rng.uniform(0.1, 90), 3) for k in TOPICS if rng.random() < 0.6}
        if t:
            d["topics"] = t
        docs.append(d)
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    yield index, docs
    server.request("DELETE", "/" + index)


def freqs_of(docs, field):
    out = {}
    for i, d in enumerate(docs):
        if "." in field:
            top, k = field.split(".")
            if k in d.get(top, {}):
                out[i] = enc(d[top][k])
        elif field in d:
            v = d[field]
            out[i] = enc(f32(1) / f32(v) if field == "url_length" else v)
    return out


def run(server, index, query, size=N):
    st, _, b = server.request("POST", "/%s/_search" % index,
                              {"query": query, "size": size, "track_total_hits": True})
    assert st == 200, b
    return b


def check(b, want):
    """want: {doc: expected float32 score}; all of them hit, ordered by score then id."""
    assert b["hits"]["total"]["value"] == len(want)
    got = {int(h["_id"]): h["_score"] for h in b["hits"]["hits"]}
    assert set(got) == set(want)
    for d, s in want.items():
        assert f32(got[d]) == f32(s), (d, got[d], s)
    order = [int(h["_id"]) for h in b["hits"]["hits"]]
    scores = [f32(want[d]) for d in order]
    assert scores == sorted(scores, reverse=True)


CASES = [
    ("pagerank", {"saturation": {"pivot": 8}}, dict(fn="saturation", pivot=8)),
    ("pagerank", {"log": {"scaling_factor": 4}}, dict(fn="log", scaling=4)),
    ("pagerank", {"sigmoid": {"pivot": 7, "exponent": 0.6}},
     dict(fn="sigmoid", pivot=7, exponent=0.6)),
    ("pagerank", {"linear": {}}, dict(fn="linear")),
    ("url_length", {"saturation": {"pivot": 0.05}}, dict(fn="saturation", pivot=0.05)),
    ("url_length", {"sigmoid": {"pivot": 0.02, "exponent": 2}},
     dict(fn="sigmoid", pivot=0.02, exponent=2)),
    ("url_length", {"linear": {}}, dict(fn="linear")),
    ("topics.politics", {"saturation": {"pivot": 20}}, dict(fn="saturation", pivot=20)),
    ("topics.science", {"log": {"scaling_factor": 1}}, dict(fn="log", scaling=1)),
]


@pytest.mark.parametrize("field,fn,ref", CASES)
@pytest.mark.parametrize("boost", [1.0, 2.5])
def test_functions_match_lucene_arithmetic(server, corpus, field, fn, ref, boost):
    index, docs = corpus
    q = {"field": field, "boost": boost}
    q.update(fn)
    b = run(server, index, {"rank_feature": q})
    fr = freqs_of(docs, field)
    check(b, {d: score(freq=v, w=boost, **ref) for d, v in fr.items()})


@pytest.mark.parametrize("field", ["pagerank", "url_length", "topics.sports"])
def test_default_pivot_is_the_shards_geometric_mean(server, corpus, field):
    index, docs = corpus
    fr = freqs_of(docs, field)
    pivot = default_pivot(list(fr.values()))
    for body in ({"field": field}, {"field": field, "saturation": {}}):
        b = run(server, index, {"rank_feature": body})
        check(b, {d: score("saturation", v, pivot=pivot) for d, v in fr.items()})


def test_in_bool_with_match_adds_the_feature(server, corpus):
    index, docs = corpus
    fr = freqs_of(docs, "pagerank")
    plain = run(server, index, {"match": {"title": "fox"}})
    base = {int(h["_id"]): h["_score"] for h in plain["hits"]["hits"]}
    b = run(server, index, {"bool": {
        "must": [{"match": {"title": "fox"}}],
        "should": [{"rank_feature": {"field": "pagerank", "saturation": {"pivot": 10},
                                     "boost": 3}}]}})
    got = {int(h["_id"]): h["_score"] for h in b["hits"]["hits"]}
    assert set(got) == set(base)
    for d, s in got.items():
        extra = score("saturation", fr[d], w=3, pivot=10) if d in fr else 0
        assert s == pytest.approx(float(f32(base[d])) + float(extra), rel=1e-6), d
    # a filter context counts without scoring
    st, _, c = server.request("POST", "/%s/_count" % index,
                              {"query": {"rank_feature": {"field": "pagerank"}}})
    assert st == 200 and c["count"] == len(fr), c


def test_mapping_round_trip(server, corpus):
    index, _ = corpus
    st, _, b = server.request("GET", "/%s/_mapping" % index)
    assert st == 200, b
    props = b[index]["mappings"]["properties"]
    assert props["pagerank"] == {"type": "rank_feature"}
    assert props["url_length"] == {"type": "rank_feature", "positive_score_impact": False}
    assert props["topics"] == {"type": "rank_features"}


def test_bad_documents(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "pr": {"type": "rank_feature"}, "tp": {"type": "rank_features"}}}})
    assert st == 200, b
    bad = [{"pr": -1}, {"pr": 0}, {"pr": [1, 2]}, {"pr": "abc"}, {"pr": {"a": 1}},
           {"tp": {"a.b": 1}}, {"tp": {"a": -2}}, {"tp": 3}, {"tp": {"a": [1]}}]
    for d in bad:
        st, _, b = server.request("PUT", "/%s/_doc/1" % fresh_index, d)
        assert st == 400, (d, b)
        assert_error(b, 400, "mapper_parsing_exception")
    for d in ({"pr": "2.5"}, {"pr": None}, {"tp": {"a": 1, "b": 2.5}}):
        st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, d)
        assert st in (200, 201), (d, b)
    st, _, b = server.request("PUT", "/" + fresh_index + "/_mapping", {"properties": {
        "pr": {"type": "rank_feature", "positive_score_impact": False}}})
    assert st == 400, b
    st, _, b = server.request("PUT", "/x-" + fresh_index, {"mappings": {"properties": {
        "pr": {"type": "rank_feature", "index": False}}}})
    assert st == 400 and b["error"]["type"] == "mapper_parsing_exception", b


def test_bad_queries(server, corpus):
    index, _ = corpus

    def err(q, etype):
        st, _, b = server.request("POST", "/%s/_search" % index, {"query": {"rank_feature": q}})
        assert st == 400, (q, b)
        assert b["error"]["type"] == etype, (q, b)

    err({"field": "url_length", "log": {"scaling_factor": 2}}, "illegal_argument_exception")
    err({"field": "n"}, "illegal_argument_exception")
    err({"field": "topics"}, "illegal_argument_exception")
    err({"field": "pagerank", "log": {"scaling_factor": 2}, "linear": {}}, "parsing_exception")
    err({"field": "pagerank", "saturation": {"pivot": 0}}, "illegal_argument_exception")
    err({"field": "pagerank", "saturation": {"pivot": "x"}}, "parsing_exception")
    err({"field": "pagerank", "log": {"scaling_factor": 0.5}}, "illegal_argument_exception")
    err({"field": "pagerank", "log": {}}, "parsing_exception")
    err({"field": "pagerank", "sigmoid": {"pivot": 2}}, "parsing_exception")
    err({"field": "pagerank", "tanh": {}}, "parsing_exception")
    err({"saturation": {}}, "parsing_exception")
    st, _, b = server.request("POST", "/%s/_search" % index,
                              {"query": {"term": {"pagerank": 3}}})
    assert st == 400, b
    st, _, b = server.request("POST", "/%s/_search" % index, {"query": {"function_score": {
        "field_value_factor": {"field": "pagerank"}}}})
    assert st == 400, b
    # unmapped fields and features match nothing, as Elasticsearch
    for f in ("nope", "topics.nope"):
        b = run(server, index, {"rank_feature": {"field": f}})
        assert b["hits"]["total"]["value"] == 0, b


def test_values_read_back_and_are_not_aggregated(server, corpus):
    index, docs = corpus
    b = run(server, index, {"ids": {"values": ["1", "2"]}}, size=2)
    st, _, b = server.request("POST", "/%s/_search" % index, {
        "query": {"ids": {"values": ["1", "2"]}}, "docvalue_fields": ["pagerank", "url_length"]})
    assert st == 200, b
    for h in b["hits"]["hits"]:
        d = docs[int(h["_id"])]
        # the stored 9-bit value (url_length: inverted twice), within Lucene's 0.4%
        assert h["fields"]["pagerank"][0] == pytest.approx(d["pagerank"], rel=4e-3)
        assert h["fields"]["url_length"][0] == pytest.approx(d["url_length"], rel=4e-3)
    for field in ("pagerank", "topics.politics"):
        st, _, b = server.request("POST", "/%s/_search" % index, {
            "size": 0, "aggs": {"m": {"max": {"field": field}}}})
        assert st == 400, b
        assert "not supported for aggregation" in b["error"]["root_cause"][0]["reason"], b


def test_lucene_feature_field_oracle(server, corpus, tmp_path):
    """The same documents indexed with Lucene 8.7's FeatureField (as Elasticsearch does) and
    the same queries through FeatureField's factories (tests/oracle/rank_feature): every hit
    and every score equal, the default pivot included."""
    import os
    import subprocess
    index, docs = corpus
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    cp = "/usr/share/java/lucene-core-8.7.0.jar"
    src = os.path.join(root, "tests", "oracle", "rank_feature", "FeatureOracle.java")
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", cp, src], check=True)
    lines = []
    for i, d in enumerate(docs):
        if "pagerank" in d:
            lines.append("%d\t_feature\tpagerank\t%r" % (i, d["pagerank"]))
        if "url_length" in d:
            lines.append("%d\t_feature\turl_length\t%r" % (i, float(f32(1) / f32(d["url_length"]))))
        for k, v in d.get("topics", {}).items():
            lines.append("%d\ttopics\t%s\t%r" % (i, k, v))
    (tmp_path / "docs.tsv").write_text("\n".join(lines) + "\n")
    queries = []  # (lucene row, scry query)
    for fld, fn, ref in CASES:
        for boost in (1.0, 2.5):
            p1 = ref.get("pivot", ref.get("scaling", "-"))
            p2 = ref.get("exponent", "-")
            lf, feat = ("topics", fld.split(".")[1]) if "." in fld else ("_feature", fld)
            q = {"field": fld, "boost": boost}
            q.update(fn)
            queries.append(([lf, feat, ref["fn"], str(p1), str(p2), str(boost)], q))
    for fld in ("pagerank", "url_length", "topics.politics", "topics.sports"):
        lf, feat = ("topics", fld.split(".")[1]) if "." in fld else ("_feature", fld)
        queries.append(([lf, feat, "saturation", "-", "-", "3.0"], {"field": fld, "boost": 3.0}))
    rows = ["%d\t%s" % (i, "\t".join(r)) for i, (r, _) in enumerate(queries)]
    (tmp_path / "queries.tsv").write_text("\n".join(rows) + "\n")
    out = subprocess.run(["java", "-cp", "%s:%s" % (cp, tmp_path), "FeatureOracle",
                          str(tmp_path / "docs.tsv"), str(tmp_path / "queries.tsv")],
                         check=True, capture_output=True, text=True).stdout
    want = {}
    for line in out.splitlines():
        qid, doc, s = line.split("\t")
        want.setdefault(int(qid), {})[int(doc)] = f32(float(s))
    assert len(want) == len(queries)
    for i, (_, q) in enumerate(queries):
        b = run(server, index, {"rank_feature": q})
        got = {int(h["_id"]): f32(h["_score"]) for h in b["hits"]["hits"]}
        assert got == want[i], (q, sorted(set(got.items()) ^ set(want[i].items()))[:6])
