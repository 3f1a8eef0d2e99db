"""composite with geotile_grid sources over HTTP (three shards, two segments each, so shard
partials are reduced): buckets and paging against a brute-force Python computation of the
tiles (Elasticsearch's GeoTileUtils over the points as Lucene's encoding quantizes them) on
random docs with missing and multi-valued points (the seed is printed); errors."""
import math
import os
import random

import pytest

from conftest import make_index


LAT_DECODE = 180.0 / 2**32
LON_DECODE = 360.0 / 2**32
SEED = int(os.environ.get("GEOTILE_SEED", random.randrange(1 << 30)))


def quantize(lat, lon):
    la = 2**31 - 1 if lat >= 90 else math.floor(lat / LAT_DECODE)
    lo = 2**31 - 1 if lon >= 180 else math.floor(lon / LON_DECODE)
    return la * LAT_DECODE, lo * LON_DECODE


def tile(z, lat, lon):
    """GeoTileUtils.longEncode of a (quantized) point."""
    tiles = 2**z
    x = math.floor((lon + 180.0) / 360.0 * tiles)
    s = math.sin(lat * (math.pi / 180.0))
    if 1.0 + s == 0.0:  # the south pole: log(0) is -inf in C, an error in Python
        y = tiles - 1
    elif 1.0 - s == 0.0:
        y = 0
    else:
        y = math.floor((0.5 - math.log((1.0 + s) / (1.0 - s)) / (4.0 * math.pi)) * tiles)
    x = min(max(x, 0), tiles - 1)
    y = min(max(y, 0), tiles - 1)
    return (z << 58) | (x << 29) | y


def key_text(t):
    return "%d/%d/%d" % (t >> 58, (t >> 29) & 0x1FFFFFFF, t & 0x1FFFFFFF)


def make_docs(rnd, n=400):
    docs = []
    for i in range(n):
        d = {"k": "abc"[rnd.randrange(3)]}
        r = rnd.random()
        # clustered points so that tiles of high zooms hold several docs
        pt = lambda: {"lat": round(rnd.uniform(40.6, 40.9), rnd.choice([2, 3, 6])),
                      "lon": round(rnd.uniform(-74.1, -73.8), rnd.choice([2, 3, 6]))}
        if r < 0.1:
            pass  # no point
        elif r < 0.25:
            d["p"] = [pt(), pt(), {"lat": rnd.uniform(-85, 85), "lon": rnd.uniform(-180, 180)}]
        elif r < 0.3:
            d["p"] = {"lat": rnd.choice([90.0, -90.0, 0.0]),
                      "lon": rnd.choice([180.0, -180.0, 0.0])}
        else:
            d["p"] = pt()
        docs.append(d)
    return docs


def points(d):
    p = d.get("p")
    if p is None:
        return []
    return [quantize(q["lat"], q["lon"]) for q in (p if isinstance(p, list) else [p])]


@pytest.fixture(scope="module")
def geo(server):
    print("geotile seed", SEED)
    rnd = random.Random(SEED)
    name = "aggs-geotile-e2e"
    docs = make_docs(rnd)  # loaded in two parts: two segments per shard
    make_index(server, name, {
        "settings": {"number_of_shards": 3},
        "mappings": {"properties": {"p": {"type": "geo_point"}, "k": {"type": "keyword"}}}}, docs,
               headers={"Content-Type": "application/x-ndjson"}, segments=2)
    yield name, docs
    server.request("DELETE", "/" + name)


def expected(docs, z, with_k=False, missing_bucket=False):
    counts = {}
    for d in docs:
        tiles = sorted({tile(z, la, lo) for la, lo in points(d)})
        if not tiles and missing_bucket:
            tiles = [None]
        for t in tiles:
            key = (t, d["k"]) if with_k else (t,)
            counts[key] = counts.get(key, 0) + 1
    return counts


def search(server, name, comp):
    st, _, b = server.request("POST", "/%s/_search" % name, {
        "size": 0, "aggs": {"c": {"composite": comp}}})
    assert st == 200, b
    return b["aggregations"]["c"]


@pytest.mark.parametrize("z", [0, 3, 8, 12, 15, 29])
def test_geotile_source_counts(server, geo, z):
    name, docs = geo
    exp = expected(docs, z)
    got = search(server, name, {"size": 10000, "sources": [
        {"tile": {"geotile_grid": {"field": "p", "precision": z}}}]})
    keys = [b["key"]["tile"] for b in got["buckets"]]
    want = sorted(exp)
    assert keys == [key_text(t) for (t,) in want], (SEED, z)
    assert [b["doc_count"] for b in got["buckets"]] == [exp[k] for k in want], (SEED, z)


def test_geotile_paging_desc_with_terms(server, geo):
    name, docs = geo
    exp = expected(docs, 14, with_k=True, missing_bucket=True)
    # descending tiles (nulls last), then k ascending
    want = sorted((k for k in exp if k[0] is not None), key=lambda k: (-k[0], k[1]))
    want += sorted((k for k in exp if k[0] is None), key=lambda k: k[1])
    comp = {"size": 7, "sources": [
        {"tile": {"geotile_grid": {"field": "p", "precision": 14, "order": "desc",
                                   "missing_bucket": True}}},
        {"k": {"terms": {"field": "k"}}}]}
    seen = []
    for _ in range(1000):
        got = search(server, name, comp)
        if not got["buckets"]:
            break
        seen += [((b["key"]["tile"], b["key"]["k"]), b["doc_count"]) for b in got["buckets"]]
        comp["after"] = got["after_key"]
    txt = lambda t: None if t is None else key_text(t)
    assert seen == [((txt(k[0]), k[1]), exp[k]) for k in want], SEED


def test_geotile_default_precision_and_unmapped(server, geo):
    name, docs = geo
    exp = expected(docs, 7)
    got = search(server, name, {"sources": [{"t": {"geotile_grid": {"field": "p"}}}],
                                "size": 100})
    assert {b["key"]["t"]: b["doc_count"] for b in got["buckets"]} == \
        {key_text(t): n for (t,), n in exp.items()}
    got = search(server, name, {"sources": [{"t": {"geotile_grid": {"field": "nope"}}}]})
    assert got["buckets"] == []


@pytest.mark.parametrize("z,size", [(0, 10000), (6, 10000), (12, 10000), (15, 5), (29, 3)])
def test_geotile_grid_aggregation(server, geo, z, size):
    """The geotile_grid aggregation: buckets by doc count descending (ties by the tile's long
    encoding), `size` kept; also per bucket of a terms aggregation; typed_keys. shard_size
    covers every tile so that the counts are exact (a smaller one approximates as terms)."""
    name, docs = geo
    g = {"geotile_grid": {"field": "p", "precision": z, "size": size, "shard_size": 10000}}
    st, _, b = server.request("POST", "/%s/_search?typed_keys=true" % name, {"size": 0, "aggs": {
        "g": g, "k": {"terms": {"field": "k"}, "aggs": {"g": g}}}})
    assert st == 200, b
    aggs = b["aggregations"]

    def want(ds):
        exp = expected(ds, z)
        keys = sorted(exp, key=lambda k: (-exp[k], k[0]))[:size]
        return [{"key": key_text(t), "doc_count": exp[(t,)]} for (t,) in keys]

    got = aggs["geotile_grid#g"]
    assert got == {"buckets": want(docs)}, SEED
    for kb in aggs["sterms#k"]["buckets"]:
        sub = [d for d in docs if d["k"] == kb["key"]]
        assert kb["geotile_grid#g"]["buckets"] == want(sub), (SEED, kb["key"])


def geohash(n, lat, lon):
    """The classic geohash by bisection (a value on a midpoint goes up, as the bits of the
    LatLonPoint encoding do)."""
    b32 = "0123456789bcdefghjkmnpqrstuvwxyz"
    rng = [[-180.0, 180.0], [-90.0, 90.0]]
    bits = []
    for i in range(5 * n):
        r, v = (rng[0], lon) if i % 2 == 0 else (rng[1], lat)
        mid = (r[0] + r[1]) / 2
        bits.append(1 if v >= mid else 0)
        r[0 if v >= mid else 1] = mid
    return "".join(b32[int("".join(map(str, bits[i:i + 5])), 2)] for i in range(0, 5 * n, 5))


@pytest.mark.parametrize("n", [1, 3, 5, 8])
def test_geohash_grid_aggregation(server, geo, n):
    name, docs = geo
    st, _, b = server.request("POST", "/%s/_search?typed_keys=true" % name, {"size": 0, "aggs": {
        "h": {"geohash_grid": {"field": "p", "precision": n, "shard_size": 10000}}}})
    assert st == 200, b
    exp = {}
    for d in docs:
        for h in {geohash(n, la, lo) for la, lo in points(d)}:
            exp[h] = exp.get(h, 0) + 1
    got = b["aggregations"]["geohash_grid#h"]["buckets"]
    assert {x["key"]: x["doc_count"] for x in got} == exp, SEED
    counts = [x["doc_count"] for x in got]
    assert counts == sorted(counts, reverse=True)


@pytest.mark.parametrize("body", [
    {"field": "p", "precision": 30},
    {"field": "k"},
    {"field": "p", "size": 0},
    {"field": "p", "bounds": {}},
])
@pytest.mark.parametrize("kind", ["geotile_grid", "geohash_grid"])
def test_geotile_grid_errors(server, geo, body, kind):
    name, _ = geo
    if kind == "geohash_grid" and body.get("precision") == 30:
        body = dict(body, precision=13)
    st, _, b = server.request("POST", "/%s/_search" % name, {
        "size": 0, "aggs": {"g": {kind: body}}})
    assert st == 400, b
    assert b["error"]["root_cause"][0]["type"] in (
        "illegal_argument_exception", "x_content_parse_exception"), b


@pytest.mark.parametrize("src,after", [
    ({"field": "p", "precision": 30}, None),
    ({"field": "p", "precision": -1}, None),
    ({"field": "p", "precision": "x"}, None),
    ({"field": "p", "bounds": {}}, None),
    ({"field": "k"}, None),
    ({"precision": 3}, None),
    ({"field": "p", "precision": 3}, "3/8/1"),
    ({"field": "p", "precision": 3}, "a/b/c"),
    ({"field": "p", "precision": 3}, 12),
])
def test_geotile_errors(server, geo, src, after):
    name, _ = geo
    comp = {"sources": [{"t": {"geotile_grid": src}}]}
    if after is not None:
        comp["after"] = {"t": after}
    st, _, b = server.request("POST", "/%s/_search" % name, {
        "size": 0, "aggs": {"c": {"composite": comp}}})
    assert st == 400, b
    assert b["status"] == 400 and b["error"]["root_cause"][0]["type"] in (
        "illegal_argument_exception", "x_content_parse_exception"), b
