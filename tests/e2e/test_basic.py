"""Cluster-level endpoints, routing, error shapes and common parameters."""
from conftest import assert_error


def test_root(server):
    st, h, b = server.request("GET", "/")
    assert st == 200
    assert h["X-Elastic-Product"] == "Elasticsearch"
    assert b["tagline"] == "You Know, for Search"
    assert b["version"]["number"].startswith("8.")
    assert b["version"]["build_flavor"] == "default"
    assert "lucene_version" in b["version"]
    assert b["cluster_uuid"] and b["name"] and b["cluster_name"]


def test_head_root(server):
    st, h, body = server.request("HEAD", "/", raw=True)
    assert st == 200
    assert body == b""
    assert h["X-Elastic-Product"] == "Elasticsearch"


def test_compact_json_bytes(server):
    st, h, body = server.request("GET", "/_cluster/health", raw=True)
    assert st == 200
    assert b'"timed_out":false' in body
    assert b"\n" not in body


def test_pretty(server):
    st, h, body = server.request("GET", "/?pretty", raw=True)
    assert st == 200
    assert body.startswith(b"{\n  \"name\" : ")


def test_filter_path(server):
    st, h, b = server.request("GET", "/?filter_path=version.number,tagline")
    assert st == 200
    assert set(b) == {"version", "tagline"}
    assert set(b["version"]) == {"number"}
    st, h, b = server.request("GET", "/?filter_path=version.build_*")
    assert set(b["version"]) == {"build_flavor", "build_type", "build_hash", "build_date",
                                 "build_snapshot"}


def test_health(server):
    st, h, b = server.request("GET", "/_cluster/health?wait_for_status=yellow&timeout=1s")
    assert st == 200
    assert b["status"] in ("green", "yellow")
    assert b["number_of_nodes"] == 1
    assert b["timed_out"] is False


def test_cat_health(server):
    st, h, b = server.request("GET", "/_cat/health?v")
    assert st == 200
    assert h["Content-Type"].startswith("text/plain")
    assert b.splitlines()[0].split()[:4] == ["epoch", "timestamp", "cluster", "status"]
    st, h, b = server.request("GET", "/_cat/health?format=json")
    assert st == 200 and b[0]["status"] in ("green", "yellow")


def test_unknown_route_404(server):
    st, h, b = server.request("GET", "/_nope/foo/bar/baz")
    assert st == 404
    assert h["X-Elastic-Product"] == "Elasticsearch"
    assert_error(b, 404, "illegal_argument_exception")


def test_wrong_method_405(server):
    st, h, b = server.request("DELETE", "/_cluster/health")
    assert st == 405
    assert "allowed: [GET]" in b["error"]["reason"]
    assert_error(b, 405, "illegal_argument_exception")


def test_compat_media_type(server):
    hdr = {"Content-Type": "application/vnd.elasticsearch+json; compatible-with=8",
           "Accept": "application/vnd.elasticsearch+json; compatible-with=8"}
    st, h, b = server.request("GET", "/", headers=hdr)
    assert st == 200 and b["tagline"] == "You Know, for Search"


def test_nodes_stats(server):
    st, h, b = server.request("GET", "/_nodes/stats")
    assert st == 200
    assert b["_nodes"] == {"total": 1, "successful": 1, "failed": 0}
    node = next(iter(b["nodes"].values()))
    for br in ("request", "fielddata", "in_flight_requests", "parent"):
        assert "limit_size_in_bytes" in node["breakers"][br]
        assert "estimated_size_in_bytes" in node["breakers"][br]
        assert "tripped" in node["breakers"][br]
    assert "docs" in node["indices"] and "search" in node["indices"]


def test_stats_all_merges_current(server):
    st, h, b = server.request("GET", "/_stats")
    assert st == 200
    assert b["_all"]["total"]["merges"]["current"] == 0
    st, h, b = server.request("GET", "/_all/_stats")
    assert st == 200 and "merges" in b["_all"]["primaries"]


def test_tasks(server):
    st, h, b = server.request("GET", "/_tasks")
    assert st == 200 and "nodes" in b
    st, h, b = server.request("POST", "/_tasks/nonode:1/_cancel")
    assert st == 404
