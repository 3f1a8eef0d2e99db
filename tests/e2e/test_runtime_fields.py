"""runtime_mappings in a search body, used by aggregations (two shards, two segments each,
some deletes): double, long, keyword, date and boolean runtime fields whose scripts read long,
double, scaled_float, keyword and date doc values, checked against a brute force over the same
random docs in Python (the seed is printed). Errors: unsupported types and parameters, compile
errors, a wrong emit type at run time, runtime fields in a query or a sort."""
import json
import math
import os
import random

import pytest

from conftest import assert_error, make_index

SEED = int(os.environ.get("RUNTIME_SEED", random.randrange(1 << 30)))
DAY = 86400000
T0 = 1600000000000

RUNTIME = {
    "ratio": {"type": "double", "script": {"source": "emit(doc['b'].value / doc['s'].value)"}},
    "a3": {"type": "long", "script": {
        "source": "emit(doc['a'].empty ? params.m : doc['a'].value * 3 + 1)",
        "params": {"m": -5}}},
    "kk": {"type": "keyword", "script": "emit(doc['k'].size() == 0 ? 'none' : doc['k'].value)"},
    "day": {"type": "date", "script": "emit(doc['t'].value + 86400000L)"},
    "big": {"type": "boolean", "script": "emit(doc['b'].value > 50)"},
}


def make_docs(rnd, n=400):
    docs = []
    for _ in range(n):
        d = {"g": "xy"[rnd.randrange(2)], "b": rnd.randrange(1, 10000) / 100.0,
             "s": rnd.randrange(1, 5000) / 100.0, "t": T0 + rnd.randrange(12 * DAY)}
        if rnd.random() < 0.85:
            d["a"] = rnd.randrange(-20, 60)
        r = rnd.random()
        if r < 0.7:
            d["k"] = "k%d" % rnd.randrange(9)
        elif r < 0.85:
            d["k"] = ["k%d" % rnd.randrange(9), "k%d" % rnd.randrange(9)]
        docs.append(d)
    return docs


def runtime_values(d):
    """The runtime fields of doc d as the scripts compute them."""
    ks = sorted(set(d["k"] if isinstance(d.get("k"), list) else [d["k"]])) if "k" in d else []
    return {"ratio": d["b"] / d["s"], "a3": d["a"] * 3 + 1 if "a" in d else -5,
            "kk": ks[0] if ks else "none", "day": d["t"] + DAY, "big": d["b"] > 50}


@pytest.fixture(scope="module")
def idx(server):
    print("runtime fields seed", SEED)
    rnd = random.Random(SEED)
    name = "runtime-e2e"
    docs = make_docs(rnd)  # loaded in two parts: two segments per shard
    make_index(server, name, {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {
            "g": {"type": "keyword"}, "a": {"type": "long"}, "b": {"type": "double"},
            "s": {"type": "scaled_float", "scaling_factor": 100}, "k": {"type": "keyword"},
            "t": {"type": "date"}}}}, docs,
               headers={"Content-Type": "application/x-ndjson"}, segments=2)
    dead = set(rnd.sample(range(len(docs)), 25))
    for i in sorted(dead):
        st, _, b = server.request("DELETE", "/%s/_doc/%d" % (name, i))
        assert st == 200, b
    server.request("POST", "/%s/_refresh" % name)
    live = [docs[i] for i in range(len(docs)) if i not in dead]
    yield name, live
    server.request("DELETE", "/" + name)


def search(server, name, body):
    st, _, b = server.request("POST", "/%s/_search" % name, body)
    assert st == 200, b
    return b["aggregations"]


def close(x, y):
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)


def counts(vals):
    c = {}
    for v in vals:
        c[v] = c.get(v, 0) + 1
    return c


@pytest.mark.parametrize("group", [None, "x"])
def test_runtime_aggs_match_brute_force(server, idx, group):
    name, live = idx
    query = {"term": {"g": group}} if group else {"match_all": {}}
    docs = [d for d in live if not group or d["g"] == group]
    rv = [runtime_values(d) for d in docs]
    aggs = search(server, name, {
        "size": 0, "query": query, "runtime_mappings": RUNTIME,
        "aggs": {
            "avg_ratio": {"avg": {"field": "ratio"}},
            "stats_ratio": {"stats": {"field": "ratio"}},
            "a3_terms": {"terms": {"field": "a3", "size": 500}},
            "a3_histo": {"histogram": {"field": "a3", "interval": 10}},
            "kk": {"terms": {"field": "kk", "size": 50},
                   "aggs": {"m": {"max": {"field": "ratio"}}}},
            "days": {"date_histogram": {"field": "day", "fixed_interval": "1d"}},
            "big": {"terms": {"field": "big"}},
            "ranges": {"range": {"field": "ratio", "ranges": [{"to": 1}, {"from": 1, "to": 10},
                                                              {"from": 10}]}},
        }})
    ratios = [r["ratio"] for r in rv]
    assert close(aggs["avg_ratio"]["value"], sum(ratios) / len(ratios))
    st = aggs["stats_ratio"]
    assert st["count"] == len(ratios)
    assert close(st["min"], min(ratios)) and close(st["max"], max(ratios))
    assert close(st["sum"], sum(ratios))

    want = counts(r["a3"] for r in rv)
    got = {b["key"]: b["doc_count"] for b in aggs["a3_terms"]["buckets"]}
    assert got == want

    hk = counts(math.floor(r["a3"] / 10) * 10 for r in rv)
    keys = list(range(min(hk), max(hk) + 1, 10))
    assert [(b["key"], b["doc_count"]) for b in aggs["a3_histo"]["buckets"]] == \
        [(float(k), hk.get(k, 0)) for k in keys]

    kc = counts(r["kk"] for r in rv)
    got = {b["key"]: (b["doc_count"], b["m"]["value"]) for b in aggs["kk"]["buckets"]}
    assert set(got) == set(kc)
    for k, (n, m) in got.items():
        assert n == kc[k]
        assert close(m, max(r["ratio"] for r in rv if r["kk"] == k))

    dc = counts(r["day"] // DAY * DAY for r in rv)
    dkeys = list(range(min(dc), max(dc) + 1, DAY))
    assert [(b["key"], b["doc_count"]) for b in aggs["days"]["buckets"]] == \
        [(k, dc.get(k, 0)) for k in dkeys]

    bc = counts(1 if r["big"] else 0 for r in rv)
    got = {b["key"]: (b["doc_count"], b["key_as_string"]) for b in aggs["big"]["buckets"]}
    assert got == {k: (n, "true" if k else "false") for k, n in bc.items()}

    rb = aggs["ranges"]["buckets"]
    assert [b["doc_count"] for b in rb] == [
        sum(1 for x in ratios if x < 1), sum(1 for x in ratios if 1 <= x < 10),
        sum(1 for x in ratios if x >= 10)]


def test_runtime_field_errors(server, idx):
    name, _ = idx

    def err(body, status, etype, text=None, root=None):
        st, _, b = server.request("POST", "/%s/_search" % name, body)
        assert st == status, b
        if root:
            assert b["error"]["type"] == etype, b
            assert b["error"]["root_cause"][0]["type"] == root, b
        else:
            assert_error(b, status, etype)
        if text:
            assert text in json.dumps(b), b

    agg = {"m": {"max": {"field": "r"}}}
    err({"runtime_mappings": {"r": {"type": "ip", "script": "emit('1.2.3.4')"}}, "aggs": agg},
        400, "mapper_parsing_exception", "type [ip] is not supported")
    err({"runtime_mappings": {"r": {"script": "emit(1L)"}}, "aggs": agg},
        400, "mapper_parsing_exception", "No type specified")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(1L)", "format": "x"}},
         "aggs": agg}, 400, "mapper_parsing_exception", "unknown parameter [format]")
    err({"runtime_mappings": {"r": {"type": "long"}}, "aggs": agg},
        400, "illegal_argument_exception", "has no [script]")
    err({"runtime_mappings": {"r": {"type": "long", "script": "for (x : y) emit(1L)"}},
         "aggs": agg}, 400, "script_exception", "runtime field [r]")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(doc['nope'].value)"}},
         "aggs": agg}, 400, "illegal_argument_exception", "No field found for [nope]")
    err({"runtime_mappings": {"a": {"type": "long", "script": "emit(1L)"}}, "aggs": agg},
        400, "illegal_argument_exception", "shadows a mapped field")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(1L)"}},
         "query": {"range": {"r": {"gte": 1}}}},
        400, "illegal_argument_exception", "runtime field [r] in a query")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(1L)"}},
         "query": {"multi_match": {"query": "x", "fields": ["g", "r^2"]}}},
        400, "illegal_argument_exception", "runtime field [r] in a query")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(1L)"}},
         "sort": [{"r": {"unmapped_type": "long"}}]},
        400, "illegal_argument_exception", "runtime field [r] in [sort]")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(1L)"}}, "sort": ["r"]},
        400, "query_shard_exception", "No mapping found for [r]")
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(1L)"}}, "fields": ["r"]},
        400, "illegal_argument_exception", "runtime field [r] in [fields]")
    err({"runtime_mappings": "x", "aggs": agg}, 400, "parsing_exception")
    # run-time: a long field emitting a double fails the shards with the script's reason
    err({"runtime_mappings": {"r": {"type": "long", "script": "emit(doc['b'].value)"}},
         "size": 0, "aggs": agg}, 400, "search_phase_execution_exception",
        "takes a long (cast a double with (long)), got a double", "illegal_argument_exception")


def test_script_errors_only_on_matching_docs(server, idx):
    """A doc the query excludes never fails the search (as Elasticsearch runs the script on the
    matching docs only); a matching one does."""
    name, live = idx
    rm = {"a2": {"type": "long", "script": "emit(doc['a'].value * 2)"}}
    aggs = search(server, name, {"size": 0, "runtime_mappings": rm,
                                 "query": {"exists": {"field": "a"}},
                                 "aggs": {"s": {"sum": {"field": "a2"}}}})
    assert aggs["s"]["value"] == sum(d["a"] * 2 for d in live if "a" in d)
    st, _, b = server.request("POST", "/%s/_search" % name, {
        "size": 0, "runtime_mappings": rm, "aggs": {"s": {"sum": {"field": "a2"}}}})
    assert st == 400, b
    assert "runtime field [a2]" in json.dumps(b) and "null" in json.dumps(b), b


def test_conditional_emit_leaves_docs_without_values(server, idx):
    name, live = idx
    rm = {"pos": {"type": "long", "script": "doc['a'].size() > 0 && doc['a'].value > 10 ? "
                                            "emit(doc['a'].value) : null"}}
    aggs = search(server, name, {"size": 0, "runtime_mappings": rm, "aggs": {
        "c": {"value_count": {"field": "pos"}}, "m": {"missing": {"field": "pos"}},
        "s": {"sum": {"field": "pos"}}}})
    vals = [d["a"] for d in live if d.get("a", 0) > 10]
    assert aggs["c"]["value"] == len(vals)
    assert aggs["m"]["doc_count"] == len(live) - len(vals)
    assert aggs["s"]["value"] == sum(vals)


def test_batch_path_equals_interpreter(server, idx):
    """A double field over single-valued double / scaled_float doc values runs a window of docs
    at a time; the same expression with a doc['a'].size() term (not batchable: the interpreter,
    doc by doc) gives bit-for-bit the same sums."""
    name, _ = idx
    rm = {"fast": {"type": "double", "script": "emit((doc['b'].value * 3 - 1.5) / doc['s'].value)"},
          "slow": {"type": "double", "script": "emit((doc['b'].value * 3 - 1.5) / doc['s'].value"
                                                " + 0L * doc['a'].size())"}}
    aggs = search(server, name, {"size": 0, "runtime_mappings": rm, "aggs": {
        "f": {"stats": {"field": "fast"}}, "s": {"stats": {"field": "slow"}},
        "hf": {"histogram": {"field": "fast", "interval": 5}},
        "hs": {"histogram": {"field": "slow", "interval": 5}}}})
    assert aggs["f"] == aggs["s"]
    assert aggs["hf"] == aggs["hs"]


def test_index_mapping_runtime_section(server):
    """Runtime fields of the index mapping's `runtime` section are usable like the body's; the
    body's runtime_mappings win on a name."""
    name = "runtime-section-e2e"
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, {"mappings": {
        "runtime": {"double_n": {"type": "long", "script": "emit(doc['n'].value * 2)"},
                    "tag": {"type": "keyword",
                            "script": "emit(doc['n'].value > 2 ? 'big' : 'small')"}},
        "properties": {"n": {"type": "long"}}}})
    assert st == 200, b
    lines = []
    for i in range(6):
        lines += [json.dumps({"index": {"_index": name, "_id": str(i)}}), json.dumps({"n": i})]
    st, _, b = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    st, _, b = server.request("GET", "/%s/_mapping" % name)
    assert st == 200 and "double_n" in json.dumps(b[name]["mappings"]["runtime"]), b
    aggs = search(server, name, {"size": 0, "aggs": {
        "s": {"sum": {"field": "double_n"}}, "t": {"terms": {"field": "tag"}}}})
    assert aggs["s"]["value"] == 30
    assert {x["key"]: x["doc_count"] for x in aggs["t"]["buckets"]} == {"big": 3, "small": 3}
    aggs = search(server, name, {"size": 0, "runtime_mappings": {
        "double_n": {"type": "long", "script": "emit(doc['n'].value * 3)"}},
        "aggs": {"s": {"sum": {"field": "double_n"}}}})
    assert aggs["s"]["value"] == 45
    server.request("DELETE", "/" + name)
