"""geo_point queries over HTTP: documents in every accepted form (object, [lon, lat],
"lat,lon", WKT POINT, GeoJSON Point), geo_bounding_box (every box form, dateline-crossing
boxes) and geo_distance (units, every point form) checked against a Python model over the same
quantized points, across two shards, two refreshes, deletes and a force merge; fields with
points + doc values, doc values only and points only; exists; bad input gets 400s with clear
reasons. Also range on keyword and ip fields and CIDR term/terms on ip (IPv4 and IPv6)."""
import math
import random

from conftest import assert_error, bulk_body

R = 6371008.7714
LAT_Q = 180.0 / 2**32
LON_Q = 360.0 / 2**32


def quant(lat, lon):
    """Lucene's encode then decode: the point the index compares."""
    el = 2**31 - 1 if lat >= 90 else math.floor(lat / LAT_Q)
    eo = 2**31 - 1 if lon >= 180 else math.floor(lon / LON_Q)
    return el * LAT_Q, eo * LON_Q


def arc(lat1, lon1, lat2, lon2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * R * math.asin(math.sqrt(min(1.0, max(0.0, h))))


def in_box(p, top, left, bottom, right):
    lat, lon = p
    if not (bottom <= lat <= top):
        return False
    return left <= lon <= right if left <= right else (lon >= left or lon <= right)


def count(server, index, query):
    st, _, b = server.request("POST", "/%s/_count" % index, {"query": query})
    assert st == 200, b
    return b["count"]


def as_form(rnd, lat, lon):
    f = rnd.randrange(5)
    if f == 4:
        return {"type": "Point", "coordinates": [lon, lat]}
    if f == 0:
        return {"lat": lat, "lon": lon}
    if f == 1:
        return [lon, lat]
    if f == 2:
        return "%r,%r" % (lat, lon)
    return "POINT (%r %r)" % (lon, lat)


def rand_point(rnd):
    k = rnd.randrange(5)
    if k == 0:
        return 48.85 + rnd.randrange(30) * 1e-3, 2.35 + rnd.randrange(30) * 1e-3
    if k == 1:
        return rnd.uniform(-50, 50), rnd.choice([rnd.uniform(178, 180), rnd.uniform(-180, -178)])
    if k == 2:
        return rnd.choice([90.0, -90.0, rnd.uniform(85, 90)]), rnd.uniform(-180, 180)
    return rnd.uniform(-90, 90), rnd.uniform(-180, 180)


def test_geo_queries_vs_model(server, fresh_index):
    idx = fresh_index
    st, _, b = server.request("PUT", "/" + idx, {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {
            "loc": {"type": "geo_point"},
            "dvonly": {"type": "geo_point", "index": False},
            "ptsonly": {"type": "geo_point", "doc_values": False},
            "tag": {"type": "keyword"}}}})
    assert st == 200, b
    rnd = random.Random(11)
    docs, model = [], []
    for i in range(700):
        pts = [rand_point(rnd) for _ in range(rnd.choice([0, 1, 1, 1, 2]))]
        doc = {"tag": "t%d" % (i % 3)}
        if pts:
            forms = [as_form(rnd, la, lo) for la, lo in pts]
            v = forms[0] if len(forms) == 1 else forms
            doc["loc"] = v
            doc["dvonly"] = v
            doc["ptsonly"] = v
        docs.append(doc)
        model.append([quant(la, lo) for la, lo in pts])
    half = len(docs) // 2
    server.request("POST", "/_bulk?refresh=true", bulk_body(idx, docs[:half]))
    lines = bulk_body(idx, docs).split("\n")[2 * half:]
    st, _, b = server.request("POST", "/_bulk?refresh=true", "\n".join(lines))
    assert st == 200 and not b["errors"], b
    deleted = set(range(0, 700, 7))
    for i in sorted(deleted):
        server.request("DELETE", "/%s/_doc/%d" % (idx, i))
    server.request("POST", "/%s/_refresh" % idx)
    live = [i for i in range(700) if i not in deleted]

    def check_all():
        for q in range(30):
            if q % 2 == 0:
                a, b2 = rnd.uniform(-90, 90), rnd.uniform(-90, 90)
                top, bottom = max(a, b2), min(a, b2)
                left = rnd.uniform(-180, 180)
                right = rnd.uniform(-180, 180) if q % 4 == 0 else min(180, left + rnd.uniform(0, 60))
                if q % 10 == 0:
                    left, right = 170.0, -170.0  # dateline
                want = sum(1 for i in live if any(in_box(p, top, left, bottom, right) for p in model[i]))
                forms = [
                    {"top_left": {"lat": top, "lon": left}, "bottom_right": {"lat": bottom, "lon": right}},
                    {"top_left": [left, top], "bottom_right": [right, bottom]},
                    {"top_left": "%r,%r" % (top, left), "bottom_right": "%r,%r" % (bottom, right)},
                    {"top": top, "left": left, "bottom": bottom, "right": right},
                    {"top_right": {"lat": top, "lon": right}, "bottom_left": {"lat": bottom, "lon": left}},
                    {"wkt": "BBOX (%r, %r, %r, %r)" % (left, right, top, bottom)},
                ]
                for field in ("loc", "dvonly", "ptsonly"):
                    box = forms[rnd.randrange(len(forms))]
                    got = count(server, idx, {"geo_bounding_box": {field: box}})
                    assert got == want, (field, box, got, want)
            else:
                clat, clon = rand_point(rnd)
                meters = rnd.choice([2000, 50e3, 700e3, 3000e3, 12000e3]) * rnd.uniform(0.5, 1.5)
                dists = [arc(clat, clon, la, lo) for i in live for la, lo in model[i]]
                if any(abs(d - meters) < 1e-6 * meters for d in dists):
                    continue  # a point on the edge: float ambiguity
                want = sum(1 for i in live if any(arc(clat, clon, la, lo) <= meters for la, lo in model[i]))
                unit, scale = rnd.choice([("m", 1), ("km", 1000), ("mi", 1609.344), ("", 1)])
                dist = "%r%s" % (meters / scale, unit) if unit else meters
                for field in ("loc", "dvonly", "ptsonly"):
                    got = count(server, idx, {"geo_distance": {
                        "distance": dist, field: as_form(rnd, clat, clon)}})
                    assert got == want, (field, clat, clon, dist, got, want)
        with_pts = sum(1 for i in live if model[i])
        for field in ("loc", "dvonly", "ptsonly"):
            assert count(server, idx, {"exists": {"field": field}}) == with_pts
        # under a bool with a keyword filter
        want = sum(1 for i in live if docs[i]["tag"] == "t1" and
                   any(in_box(p, 60, -10, 40, 10) for p in model[i]))
        assert count(server, idx, {"bool": {"must": {"term": {"tag": "t1"}}, "filter": {
            "geo_bounding_box": {"loc": {"top": 60, "left": -10, "bottom": 40, "right": 10}}}}}) == want

    check_all()
    st, _, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % idx)
    assert st == 200, b
    server.request("POST", "/%s/_refresh" % idx)
    check_all()


def test_geo_hits_and_forms(server, fresh_index):
    idx = fresh_index
    server.request("PUT", "/" + idx, {"mappings": {"properties": {"loc": {"type": "geo_point"},
                                                                  "k": {"type": "keyword"}}}})
    docs = [{"loc": {"lat": 40.7128, "lon": -74.006}},   # 0 New York
            {"loc": [2.3522, 48.8566]},                   # 1 Paris
            {"loc": "51.5074,-0.1278"},                   # 2 London
            {"loc": "POINT (151.2093 -33.8688)"},        # 3 Sydney
            {"loc": {"lat": "35.6762", "lon": "139.6503"}},  # 4 Tokyo, numeric strings
            {"loc": [[179.9, 0.0], "0.5,-179.9"]},        # 5 two points across the dateline
            {"k": "no location"},                         # 6
            {"loc": {"type": "Point", "coordinates": [-122.4194, 37.7749]}}]  # 7 GeoJSON
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(idx, docs))
    assert not b["errors"], b

    def ids(query):
        st, _, b = server.request("POST", "/%s/_search" % idx, {"query": query, "size": 20})
        assert st == 200, b
        return sorted(int(h["_id"]) for h in b["hits"]["hits"])

    # Paris - London is about 344 km
    assert ids({"geo_distance": {"distance": "350km", "loc": {"lat": 48.8566, "lon": 2.3522}}}) == [1, 2]
    assert ids({"geo_distance": {"distance": "340km", "loc": [2.3522, 48.8566]}}) == [1]
    assert ids({"geo_distance": {"distance": "218mi", "loc": "48.8566,2.3522"}}) == [1, 2]
    assert ids({"geo_distance": {"distance": 1000, "distance_type": "plane", "loc": "POINT (2.3522 48.8566)"}}) == [1]
    assert ids({"geo_distance": {"distance": "30km", "loc": {"lat": 0.2, "lon": 180}}}) == [5]
    assert ids({"geo_bounding_box": {"loc": {"top_left": [170, 10], "bottom_right": [-170, -10]}}}) == [5]
    assert ids({"geo_bounding_box": {"loc": {"top": 60, "left": -80, "bottom": 30, "right": 10}}}) == [0, 1, 2]
    assert ids({"geo_bounding_box": {"loc": {"wkt": "BBOX (100, 160, 0, -40)"}}}) == [3]
    assert ids({"exists": {"field": "loc"}}) == [0, 1, 2, 3, 4, 5, 7]
    assert ids({"geo_distance": {"distance": "10km",
                                 "loc": {"type": "Point", "coordinates": [-122.42, 37.77]}}}) == [7]
    assert ids({"bool": {"must": {"match_all": {}}, "must_not": {"exists": {"field": "loc"}}}}) == [6]
    # an unmapped field: ignore_unmapped matches nothing, else a 400
    assert ids({"geo_distance": {"distance": "1km", "nope": [0, 0], "ignore_unmapped": True}}) == []
    # coerce wraps out-of-range coordinates (lon 182 -> -178)
    assert ids({"geo_distance": {"distance": "250km", "loc": [182.0, 0.0], "validation_method": "coerce"}}) == [5]


def test_geo_bad_input(server, fresh_index):
    idx = fresh_index
    server.request("PUT", "/" + idx, {"mappings": {"properties": {"loc": {"type": "geo_point"},
                                                                  "k": {"type": "keyword"}}}})

    def bad(query, etype, words):
        st, _, b = server.request("POST", "/%s/_search" % idx, {"query": query})
        assert st == 400, b
        assert_error(b, 400, etype)
        for w in words:
            assert w in b["error"]["reason"], b

    bad({"geo_distance": {"distance": "12kmz", "loc": [0, 0]}}, "parsing_exception", ["distance", "12kmz"])
    bad({"geo_distance": {"distance": "-5km", "loc": [0, 0]}}, "illegal_argument_exception", ["greater than zero"])
    bad({"geo_distance": {"loc": [0, 0]}}, "parsing_exception", ["requires [distance]"])
    bad({"geo_distance": {"distance": "1km", "loc": {"lat": 91, "lon": 0}}}, "query_shard_exception", ["latitude", "91"])
    bad({"geo_distance": {"distance": "1km", "loc": [190, 0]}}, "query_shard_exception", ["longitude", "190"])
    bad({"geo_distance": {"distance": "1km", "loc": "u09tun"}}, "parsing_exception", ["geohash"])
    bad({"geo_distance": {"distance": "1km", "loc": {"lat": 1}}}, "parsing_exception", ["lat"])
    bad({"geo_distance": {"distance": "1km", "loc": {"type": "LineString", "coordinates": [1, 2]}}},
        "parsing_exception", ["GeoJSON"])
    bad({"geo_distance": {"distance": "1km", "distance_type": "sloppy", "loc": [0, 0]}}, "parsing_exception", ["distance_type"])
    bad({"geo_bounding_box": {"loc": {"top": 10, "left": 0, "bottom": 20, "right": 5}}}, "query_shard_exception", ["top is below bottom"])
    bad({"geo_bounding_box": {"loc": {"top_left": [0, 10]}}}, "parsing_exception", ["top, bottom, left and right"])
    bad({"geo_bounding_box": {"loc": {"wkt": "BBOX (1, 2)"}}}, "parsing_exception", ["wkt"])
    bad({"geo_bounding_box": {"loc": {"top": 10, "left": 0, "bottom": 0, "right": 5, "middle": 1}}}, "parsing_exception", ["middle"])
    bad({"geo_bounding_box": {"k": {"top": 10, "left": 0, "bottom": 0, "right": 5}}}, "query_shard_exception", ["not a geo_point"])
    bad({"geo_distance": {"distance": "1km", "nope": [0, 0]}}, "query_shard_exception", ["failed to find geo field"])
    bad({"range": {"loc": {"gte": 1}}}, "illegal_argument_exception", ["does not support range"])
    bad({"term": {"loc": "1,2"}}, "query_shard_exception", ["Geometry fields"])
    # bad documents are refused with a 400 too
    st, _, b = server.request("PUT", "/%s/_doc/x" % idx, {"loc": {"lat": 100, "lon": 0}})
    assert st == 400, b
    st, _, b = server.request("PUT", "/%s/_doc/y" % idx, {"loc": {"type": "Polygon", "coordinates": [0, 1]}})
    assert st == 400, b


def test_keyword_and_ip_ranges(server, fresh_index):
    idx = fresh_index
    server.request("PUT", "/" + idx, {
        "settings": {"number_of_shards": 2,
                     "analysis": {"normalizer": {"lc": {"type": "custom", "filter": ["lowercase"]}}}},
        "mappings": {"properties": {"k": {"type": "keyword"}, "kn": {"type": "keyword", "normalizer": "lc"},
                                    "ip": {"type": "ip"}}}})
    rnd = random.Random(5)
    words = ["apple", "Banana", "banana", "cherry", "date", "", "a", "ab", "abc", "zeta", "\u00e9clair"]
    ips = ["10.0.0.1", "10.0.0.255", "10.1.2.3", "192.168.1.1", "192.168.200.7", "8.8.8.8",
           "2001:db8::1", "2001:db8:ffff::2", "2001:db9::1", "::1", "255.255.255.255", "0.0.0.0"]
    docs = [{"k": w, "kn": w, "ip": ips[i % len(ips)]} for i, w in
            enumerate(rnd.choice(words) for _ in range(200))]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(idx, docs))
    assert not b["errors"], b

    def kcmp(field, lo, hi, il, iu):
        def norm(s):
            return s.lower() if field == "kn" else s
        want = 0
        for d in docs:
            v = norm(d[field]).encode()
            ok = True
            if lo is not None:
                ok = ok and (v >= norm(lo).encode() if il else v > norm(lo).encode())
            if hi is not None:
                ok = ok and (v <= norm(hi).encode() if iu else v < norm(hi).encode())
            want += ok
        return want

    for field in ("k", "kn"):
        for _ in range(25):
            lo, hi = rnd.choice(words + [None]), rnd.choice(words + [None])
            il, iu = rnd.random() < 0.5, rnd.random() < 0.5
            r = {}
            if lo is not None:
                r["gte" if il else "gt"] = lo
            if hi is not None:
                r["lte" if iu else "lt"] = hi
            assert count(server, idx, {"range": {field: r}}) == kcmp(field, lo, hi, il, iu), (field, r)

    import ipaddress

    def ip16(s):
        a = ipaddress.ip_address(s)
        return (ipaddress.IPv6Address("::ffff:" + s) if a.version == 4 else a).packed

    def ipn(pred):
        return sum(1 for d in docs if pred(ip16(d["ip"])))

    assert count(server, idx, {"range": {"ip": {"gte": "10.0.0.0", "lt": "10.1.0.0"}}}) == \
        ipn(lambda x: ip16("10.0.0.0") <= x < ip16("10.1.0.0"))
    assert count(server, idx, {"range": {"ip": {"gt": "2001:db8::1"}}}) == ipn(lambda x: x > ip16("2001:db8::1"))
    def in_net(x, cidr):
        net, a = ipaddress.ip_network(cidr), ipaddress.IPv6Address(x)
        if net.version == 4:
            return a.ipv4_mapped is not None and a.ipv4_mapped in net
        return a in net

    for cidr in ("10.0.0.0/8", "192.168.0.0/16", "10.0.0.0/24", "0.0.0.0/0", "8.8.8.8/32",
                 "2001:db8::/32", "::/0", "::1/128"):
        assert count(server, idx, {"term": {"ip": cidr}}) == ipn(lambda x: in_net(x, cidr)), cidr
    assert count(server, idx, {"terms": {"ip": ["10.0.0.0/8", "8.8.8.8", "2001:db8::/32"]}}) == \
        ipn(lambda x: in_net(x, "10.0.0.0/8") or x == ip16("8.8.8.8") or in_net(x, "2001:db8::/32"))
    st, _, b = server.request("POST", "/%s/_search" % idx, {"query": {"term": {"ip": "10.0.0.0/33"}}})
    assert st == 400 and "CIDR" in b["error"]["reason"], b
    st, _, b = server.request("POST", "/%s/_search" % idx, {"query": {"range": {"ip": {"gte": "not-an-ip"}}}})
    assert st == 400, b
