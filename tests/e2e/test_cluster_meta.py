"""Managing data in a cluster (issue 15 in a cluster): etcd + two `scry serve --cluster`
processes. Index templates, ingest pipelines, data streams and snapshot repositories live in
one etcd document that every node watches: a template PUT on n1 is used by an auto-create on
n2, a pipeline PUT on n1 runs on a bulk sent to n2, a data stream created through n2 is listed,
written and rolled over from n1. A filtered alias counts exactly the filter's documents through
either node (the data nodes apply the alias filter of each index they search). A node that
joins with templates and pipelines from a single-node past publishes them."""
import json
import os
import shutil
import tempfile

import pytest

from conftest import Server
from test_cluster import ETCD, TTL, Etcd, free_port, wait_until

ND = {"Content-Type": "application/x-ndjson"}


def cluster_args(etcd, name, repo):
    return ["--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "cmeta",
            "--transport-port", str(free_port()), "--lease-ttl", TTL, "--path-repo", repo]


@pytest.fixture(scope="module")
def env():
    if not os.access(ETCD, os.X_OK):
        pytest.fail("etcd is not installed (scripts/deps.sh installs etcd-server)")
    tmp = tempfile.mkdtemp(prefix="scry-cmeta-")
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    etcd = Etcd(tmp).start()
    nodes = {}
    for name in ("n1", "n2"):
        nodes[name] = Server(os.path.join(tmp, name), cluster_args(etcd, name, repo)).start()
    wait_until("2 nodes", lambda: nodes["n1"].request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
    # These tests place copies by the allocator's choice for new shards (the newest node gets
    # them) and restore while a third node has just joined: no rebalancing moves in between
    # (test_cluster_rebalance.py covers those; a restored index reports green before a busy
    # node has opened its restored copy, which moves made visible here).
    st, _, r = nodes["n1"].request("PUT", "/_cluster/settings", {
        "persistent": {"cluster.routing.rebalance.enable": "none"}})
    assert st == 200, r
    yield {"tmp": tmp, "etcd": etcd, "nodes": nodes, "repo": repo}
    for s in nodes.values():
        if s.alive():
            rc = s.stop()
            assert rc == 0, "exit code %s; log:\n%s" % (rc, s.read_log())
    etcd.kill()
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(tmp, ignore_errors=True)


def seen(node, path):
    """Waits until node answers 200 to GET path (its watch has the etcd change)."""
    wait_until("%s on %s" % (path, node.url), lambda: node.request("GET", path)[0] == 200,
               timeout=10)


def green(node, index):
    wait_until("green " + index, lambda: node.request(
        "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % index)[0] == 200)


def test_template_put_on_one_node_is_used_by_an_autocreate_on_the_other(env):
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/_component_template/ct-shards", {
        "template": {"settings": {"number_of_shards": 3}}})
    assert st == 200, r
    st, _, r = n1.request("PUT", "/_index_template/tpl-app", {
        "index_patterns": ["app-*"], "priority": 5, "composed_of": ["ct-shards"],
        "template": {"mappings": {"properties": {"code": {"type": "keyword"}}},
                     "aliases": {"apps": {}}}})
    assert st == 200, r
    st, _, r = n1.request("PUT", "/_template/legacy-old", {
        "index_patterns": ["old-*"], "settings": {"number_of_shards": 2}})
    assert st == 200, r
    seen(n2, "/_index_template/tpl-app")
    seen(n2, "/_template/legacy-old")
    st, _, r = n2.request("GET", "/_component_template/ct-shards")
    assert st == 200 and r["component_templates"][0]["name"] == "ct-shards", r
    st, _, r = n2.request("PUT", "/app-1/_doc/1?refresh=true", {"code": "A-1"})
    assert st == 201, r
    st, _, r = n2.request("PUT", "/old-1/_doc/1?refresh=true", {"x": 1})
    assert st == 201, r
    seen(n1, "/apps/_count")  # the new index and its alias reach n1 through the watch
    seen(n1, "/old-1/_settings")
    for node in (n1, n2):
        st, _, s = node.request("GET", "/app-1/_settings")
        assert st == 200 and s["app-1"]["settings"]["index"]["number_of_shards"] == "3", s
        st, _, m = node.request("GET", "/app-1/_mapping")
        assert m["app-1"]["mappings"]["properties"]["code"]["type"] == "keyword", m
        st, _, s = node.request("GET", "/old-1/_settings")
        assert st == 200 and s["old-1"]["settings"]["index"]["number_of_shards"] == "2", s
        st, _, c = node.request("GET", "/apps/_count")
        assert st == 200 and c["count"] == 1, c
    # a delete through n2 reaches n1
    st, _, r = n2.request("DELETE", "/_template/legacy-old")
    assert st == 200, r
    wait_until("legacy template gone on n1",
               lambda: n1.request("GET", "/_template/legacy-old")[0] == 404, timeout=10)
    # the component is still used: refused on either node
    st, _, r = n1.request("DELETE", "/_component_template/ct-shards")
    assert st == 400 and r["error"]["type"] == "illegal_argument_exception", r


def test_pipeline_put_on_one_node_runs_on_a_bulk_sent_to_the_other(env):
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/_ingest/pipeline/tag-it", {
        "processors": [{"set": {"field": "via", "value": "pipeline"}},
                       {"uppercase": {"field": "name"}}]})
    assert st == 200, r
    st, _, r = n1.request("PUT", "/piped", {"settings": {"number_of_shards": 2,
                                                         "number_of_replicas": 0}})
    assert st == 200, r
    green(n1, "piped")
    seen(n2, "/_ingest/pipeline/tag-it")
    lines = []
    for i in range(10):
        lines.append(json.dumps({"index": {"_index": "piped", "_id": str(i)}}))
        lines.append(json.dumps({"name": "doc%d" % i}))
    st, _, r = n2.request("POST", "/_bulk?refresh=true&pipeline=tag-it",
                          "\n".join(lines) + "\n", headers=ND)
    assert st == 200 and not r["errors"], r
    for node in (n1, n2):
        st, _, c = node.request("POST", "/piped/_count",
                                {"query": {"term": {"via.keyword": "pipeline"}}})
        assert st == 200 and c["count"] == 10, c
        st, _, d = node.request("GET", "/piped/_doc/7")
        assert st == 200 and d["_source"] == {"name": "DOC7", "via": "pipeline"}, d
    # an index created through n1 with index.default_pipeline, written through n2
    st, _, r = n1.request("PUT", "/piped-default", {"settings": {
        "number_of_shards": 2, "number_of_replicas": 0, "index.default_pipeline": "tag-it"}})
    assert st == 200, r
    green(n1, "piped-default")
    st, _, r = n2.request("PUT", "/piped-default/_doc/x?refresh=true", {"name": "late"})
    assert st == 201, r
    st, _, d = n1.request("GET", "/piped-default/_doc/x")
    assert d["_source"] == {"name": "LATE", "via": "pipeline"}, d
    st, _, r = n2.request("DELETE", "/_ingest/pipeline/tag-it")
    assert st == 200, r
    wait_until("pipeline gone on n1",
               lambda: n1.request("GET", "/_ingest/pipeline/tag-it")[0] == 404, timeout=10)


def test_data_stream_created_on_one_node_is_written_and_rolled_over_from_the_other(env):
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/_index_template/tpl-logs", {
        "index_patterns": ["logs-*"], "priority": 10, "data_stream": {},
        "template": {"settings": {"number_of_shards": 2}}})
    assert st == 200, r
    seen(n2, "/_index_template/tpl-logs")
    st, _, r = n2.request("PUT", "/_data_stream/logs-web")
    assert st == 200, r
    def stream(node, name):
        st, _, r = node.request("GET", "/_data_stream/" + name)
        return r["data_streams"][0] if st == 200 else {"generation": 0, "indices": []}

    # the record comes with the meta document, the backing index and its alias with the index
    # metadata: n1 follows both within its watch delay
    wait_until("logs-web on n1", lambda: len(stream(n1, "logs-web")["indices"]) == 1 and
               n1.request("GET", "/logs-web/_count")[0] == 200, timeout=10)
    ds = stream(n1, "logs-web")
    assert ds["generation"] == 1, ds
    first = ds["indices"][0]["index_name"]
    assert first.startswith(".ds-logs-web-") and first.endswith("-000001"), r
    lines = []
    for i in range(6):
        lines.append(json.dumps({"create": {"_index": "logs-web"}}))
        lines.append(json.dumps({"@timestamp": "2026-01-01T00:00:0%dZ" % i, "m": i}))
    st, _, r = n1.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n", headers=ND)
    assert st == 200 and not r["errors"], r
    st, _, r = n1.request("POST", "/logs-web/_rollover")
    assert st == 200 and r["rolled_over"] is True, r
    assert r["new_index"].endswith("-000002"), r
    wait_until("generation 2 on n2", lambda: stream(n2, "logs-web")["generation"] == 2 and
               len(stream(n2, "logs-web")["indices"]) == 2, timeout=10)
    st, _, r = n1.request("POST", "/logs-web/_doc?refresh=true",
                          {"@timestamp": "2026-01-02T00:00:00Z", "m": 99})
    assert st == 201 and r["_index"].endswith("-000002"), r
    st, _, c = n1.request("GET", "/logs-web/_count")  # the node that rolled over: at once
    assert st == 200 and c["count"] == 7, c
    # n2 takes the stream name on the new backing index from the index metadata in etcd
    wait_until("n2 counts both backing indices", lambda: n2.request(
        "GET", "/logs-web/_count")[2]["count"] == 7, timeout=10)
    # a bulk create into a missing stream name on n2 creates it cluster-wide
    st, _, r = n2.request("POST", "/_bulk?refresh=true", json.dumps(
        {"create": {"_index": "logs-auto"}}) + "\n" + json.dumps(
        {"@timestamp": "2026-01-03T00:00:00Z"}) + "\n", headers=ND)
    assert st == 200 and not r["errors"], r
    wait_until("logs-auto on n1", lambda: n1.request("GET", "/logs-auto/_count")[0] == 200,
               timeout=10)
    st, _, r = n1.request("DELETE", "/_data_stream/logs-auto")
    assert st == 200, r
    wait_until("stream gone on n2",
               lambda: n2.request("GET", "/_data_stream/logs-auto")[0] == 404, timeout=10)


def test_filtered_alias_counts_the_filter_across_nodes(env):
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/fa", {
        "settings": {"number_of_shards": 6, "number_of_replicas": 0},
        "mappings": {"properties": {"tag": {"type": "keyword"}, "n": {"type": "integer"}}}})
    assert st == 200, r
    green(n1, "fa")
    wait_until("fa's shards on both nodes", lambda: len({  # both nodes hold shards
        row["node"] for row in n1.request("GET", "/_cat/shards/fa?format=json")[2]}) == 2)
    lines = []
    for i in range(60):
        lines.append(json.dumps({"index": {"_index": "fa", "_id": str(i)}}))
        lines.append(json.dumps({"tag": "red" if i % 3 == 0 else "blue", "n": i}))
    st, _, r = n1.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n", headers=ND)
    assert st == 200 and not r["errors"], r
    st, _, r = n2.request("POST", "/_aliases", {"actions": [
        {"add": {"index": "fa", "alias": "fa-red", "filter": {"term": {"tag": "red"}}}},
        {"add": {"index": "fa", "alias": "fa-low-red", "filter": {"term": {"tag": "red"}},
                 "search_routing": "1"}}]})
    assert st == 200, r
    for node in (n1, n2):
        wait_until("alias on " + node.url,
                   lambda node=node: node.request("GET", "/fa-red/_count")[0] == 200)
        st, _, c = node.request("GET", "/fa-red/_count")
        assert st == 200 and c["count"] == 20, c
        st, _, s = node.request("POST", "/fa-red/_search", {
            "size": 100, "query": {"range": {"n": {"gte": 30}}}, "sort": [{"n": "asc"}],
            "aggs": {"tags": {"terms": {"field": "tag"}}}})
        assert st == 200 and s["_shards"]["failed"] == 0, s
        assert s["hits"]["total"]["value"] == 10, s
        assert [h["_source"]["n"] for h in s["hits"]["hits"]] == list(range(30, 60, 3)), s
        assert s["aggregations"]["tags"]["buckets"] == [{"key": "red", "doc_count": 10}], s
        # the alias and the index in one search: the index's own name is unfiltered
        st, _, c = node.request("GET", "/fa-red,fa/_count")
        assert st == 200 and c["count"] == 60, c
        # search_routing: only the shard of routing "1", filtered
        st, _, c = node.request("GET", "/fa-low-red/_count")
        st2, _, want = node.request("POST", "/fa/_count?routing=1",
                                    {"query": {"term": {"tag": "red"}}})
        assert st == 200 and st2 == 200 and c["count"] == want["count"] < 20, (c, want)


def test_settings_update_reaches_every_node_and_adds_replicas(env):
    """PUT _settings on one node is published: number_of_replicas 0 -> 1 makes the master
    allocate a replica that recovers every doc (green), and the other node takes the dynamic
    settings (refresh_interval) too."""
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/upd", {"settings": {"number_of_shards": 1,
                                                       "number_of_replicas": 0}})
    assert st == 200, r
    green(n1, "upd")
    body = "".join(json.dumps({"index": {"_index": "upd", "_id": str(i)}}) + "\n" +
                   json.dumps({"n": i}) + "\n" for i in range(300))
    st, _, r = n1.request("POST", "/_bulk?refresh=true", body,
                          headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    st, _, r = n2.request("PUT", "/upd/_settings", {"index": {"number_of_replicas": 1,
                                                             "refresh_interval": "3s"}})
    assert st == 200, r

    def two_copies():
        st, _, h = n1.request("GET", "/_cluster/health/upd")
        return st == 200 and h["status"] == "green" and h["active_shards"] == 2
    wait_until("a replica of upd", two_copies, timeout=30)
    for node in (n1, n2):
        st, _, rows = node.request("GET", "/_cat/shards/upd?format=json")
        assert st == 200 and len(rows) == 2, rows
    # each node counts the docs of its own copy (the replica's reader opens the recovered
    # files at its next refresh)

    def docs():
        return sorted(int(x["docs"]) for n in (n1, n2) for x in n.request(
            "GET", "/_cat/shards/upd?format=json")[2] if x["docs"] is not None)
    wait_until("300 docs in both copies", lambda: docs() == [300, 300], timeout=20)
    wait_until("settings on n1", lambda: n1.request("GET", "/upd/_settings")[2]["upd"][
        "settings"]["index"].get("refresh_interval") == "3s", timeout=10)
    assert n1.request("GET", "/upd/_settings")[2]["upd"]["settings"]["index"][
        "number_of_replicas"] == "1"


def test_snapshot_repository_registered_cluster_wide(env):
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/_snapshot/shared", {
        "type": "fs", "settings": {"location": os.path.join(env["repo"], "shared")}})
    assert st == 200, r
    seen(n2, "/_snapshot/shared")
    st, _, r = n2.request("GET", "/_snapshot/shared")
    assert r["shared"]["type"] == "fs", r
    st, _, r = n2.request("POST", "/_snapshot/shared/_verify")
    assert st == 200, r
    st, _, r = n2.request("DELETE", "/_snapshot/shared")
    assert st == 200, r
    wait_until("repository gone on n1",
               lambda: n1.request("GET", "/_snapshot/shared")[0] == 404, timeout=10)


def test_a_node_joining_with_local_templates_publishes_them(env):
    tmp, n1 = env["tmp"], env["nodes"]["n1"]
    data = os.path.join(tmp, "n3")
    single = Server(data, ["--path-repo", env["repo"]]).start()
    try:
        st, _, r = single.request("PUT", "/_index_template/tpl-local", {
            "index_patterns": ["local-*"], "priority": 3,
            "template": {"settings": {"number_of_shards": 4}}})
        assert st == 200, r
        st, _, r = single.request("PUT", "/_ingest/pipeline/local-pipe", {
            "processors": [{"set": {"field": "local", "value": True}}]})
        assert st == 200, r
        # the cluster already has "both"; the local one differs: the cluster's is kept
        st, _, r = n1.request("PUT", "/_ingest/pipeline/both", {
            "processors": [{"set": {"field": "from", "value": "cluster"}}]})
        assert st == 200, r
        st, _, r = single.request("PUT", "/_ingest/pipeline/both", {
            "processors": [{"set": {"field": "from", "value": "local"}}]})
        assert st == 200, r
    finally:
        assert single.stop() == 0
    assert os.path.exists(os.path.join(data, "cluster_meta.json"))
    n3 = Server(data, cluster_args(env["etcd"], "n3", env["repo"])).start()
    env["nodes"]["n3"] = n3
    seen(n1, "/_index_template/tpl-local")
    seen(n1, "/_ingest/pipeline/local-pipe")
    st, _, r = n1.request("GET", "/_ingest/pipeline/both")
    assert r["both"]["processors"][0]["set"]["value"] == "cluster", r
    # n3 renames the file once it has published every entry, a moment after n1 sees them
    wait_until("cluster_meta.json published", lambda: os.path.exists(
        os.path.join(data, "cluster_meta.json.published")), timeout=10)
    assert not os.path.exists(os.path.join(data, "cluster_meta.json"))
    assert "differs from the cluster's" in n3.read_log()
    st, _, r = n1.request("PUT", "/local-1/_doc/1", {"a": 1})
    assert st == 201, r
    seen(n3, "/local-1/_settings")
    st, _, s = n3.request("GET", "/local-1/_settings")
    assert st == 200 and s["local-1"]["settings"]["index"]["number_of_shards"] == "4", s


QUERIES = [
    {"query": {"match_all": {}}, "size": 0,
     "aggs": {"k": {"terms": {"field": "kind", "size": 10}}, "s": {"sum": {"field": "n"}}}},
    {"query": {"match": {"body": "alpha"}}, "size": 20, "sort": [{"n": "asc"}]},
    {"query": {"bool": {"filter": [{"range": {"n": {"gte": 50, "lt": 150}}}],
                        "must": [{"match": {"body": "beta gamma"}}]}}, "size": 10},
]


def answers(node, index):
    out = []
    for q in QUERIES:
        st, _, r = node.request("POST", "/%s/_search" % index, q)
        assert st == 200 and r["_shards"]["failed"] == 0, json.dumps(r["_shards"])
        out.append((r["hits"]["total"], [(h["_id"], h.get("_score"), h["_source"])
                                         for h in r["hits"]["hits"]], r.get("aggregations")))
    return out


def test_snapshot_of_the_cluster_restores_in_the_cluster_and_on_a_single_node(env):
    """Each primary's node copies its shards into the shared repository; the coordinator writes
    the manifest. Restoring into the same cluster under a new name, and on a fresh single node,
    gives the cluster's answers."""
    n1, n2 = env["nodes"]["n1"], env["nodes"]["n2"]
    st, _, r = n1.request("PUT", "/snapidx", {
        "settings": {"number_of_shards": 4, "number_of_replicas": 0},
        "mappings": {"properties": {"kind": {"type": "keyword"}, "n": {"type": "integer"},
                                    "body": {"type": "text"}}}})
    assert st == 200, r
    green(n1, "snapidx")
    wait_until("snapidx in _cat/shards", lambda: len(n1.request(
        "GET", "/_cat/shards/snapidx?format=json")[2]) == 4)
    st, _, rows = n1.request("GET", "/_cat/shards/snapidx?format=json")
    # the coordinator (n2) asks other nodes for their primaries (new shards go to the node
    # with the fewest copies: the newest one)
    assert any(row["node"] != "n2" for row in rows), rows
    words = ["alpha", "beta", "gamma", "delta"]
    lines = []
    for i in range(200):
        lines.append(json.dumps({"index": {"_index": "snapidx", "_id": "d%d" % i}}))
        lines.append(json.dumps({"kind": "k%d" % (i % 7), "n": i,
                                 "body": " ".join(words[(i * j) % 4] for j in range(1, 4))}))
    st, _, r = n2.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n", headers=ND)
    assert st == 200 and not r["errors"], r
    loc = os.path.join(env["repo"], "clrepo")
    st, _, r = n1.request("PUT", "/_snapshot/clrepo", {"type": "fs",
                                                       "settings": {"location": loc}})
    assert st == 200, r
    seen(n2, "/_snapshot/clrepo")
    st, _, r = n2.request("PUT", "/_snapshot/clrepo/snap1?wait_for_completion=true",
                          {"indices": "snapidx"})
    assert st == 200, r
    snap = r["snapshot"]
    assert snap["state"] == "SUCCESS" and snap["indices"] == ["snapidx"], snap["failures"]
    assert snap["shards"] == {"total": 4, "failed": 0, "successful": 4}, snap["failures"]
    st, _, r = n1.request("GET", "/_snapshot/clrepo/snap1")
    assert st == 200 and r["snapshots"][0]["state"] == "SUCCESS", r
    st, _, r = n1.request("GET", "/_cat/snapshots/clrepo?format=json")
    assert st == 200 and [s["id"] for s in r] == ["snap1"], r
    want = answers(n1, "snapidx")
    assert answers(n2, "snapidx") == want
    # restored into the same cluster under a new name: every node that creates the index from
    # the cluster's metadata fills its shards from the repository
    st, _, r = n1.request("POST", "/_snapshot/clrepo/snap1/_restore?wait_for_completion=true", {
        "rename_pattern": "snap(.+)", "rename_replacement": "restored-$1"})
    assert st == 200 and r["snapshot"]["indices"] == ["restored-idx"], r
    # green comes from the routing table, where a new primary is in sync as soon as it is
    # allocated; its node opens the restored copy a moment later (docs/cluster.md), and until
    # then searches list that shard in _shards.failures: wait until every shard answers
    def all_shards_answer(node):
        st, _, r = node.request("GET", "/restored-idx/_count")
        return st == 200 and r["_shards"]["failed"] == 0
    for node in (n1, n2):
        green(node, "restored-idx")
        wait_until("restored-idx on " + node.url, lambda node=node: all_shards_answer(node))
        assert answers(node, "restored-idx") == want
    st, _, rows = n1.request("GET", "/_cat/shards/restored-idx?format=json")
    assert len(rows) == 4, rows
    single = Server(os.path.join(env["tmp"], "single"), ["--path-repo", env["repo"]]).start()
    try:
        st, _, r = single.request("PUT", "/_snapshot/clrepo", {"type": "fs",
                                                               "settings": {"location": loc}})
        assert st == 200, r
        st, _, r = single.request("POST", "/_snapshot/clrepo/snap1/_restore"
                                  "?wait_for_completion=true", {
                                      "rename_pattern": "snapidx",
                                      "rename_replacement": "restored"})
        assert st == 200 and r["snapshot"]["shards"]["successful"] == 4, r
        st, _, c = single.request("GET", "/restored/_count")
        assert c["count"] == 200, c
        assert answers(single, "restored") == want
    finally:
        assert single.stop() == 0
    st, _, r = n1.request("DELETE", "/_snapshot/clrepo/snap1")
    assert st == 200, r
    st, _, r = n2.request("GET", "/_snapshot/clrepo/snap1")
    assert st == 404, r


def test_snapshot_with_a_lost_primary_is_partial(env):
    """A shard whose primary's node is gone (no replica) is a failure of the snapshot: listed in
    failures, the snapshot PARTIAL with partial=true, FAILED without."""
    import signal
    n1, n3 = env["nodes"]["n1"], env["nodes"].get("n3")
    assert n3 is not None, "runs after test_a_node_joining_with_local_templates_publishes_them"
    st, _, r = n1.request("PUT", "/lost", {"settings": {"number_of_shards": 6,
                                                        "number_of_replicas": 0}})
    assert st == 200, r
    green(n1, "lost")
    wait_until("no shard initializing", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_no_initializing_shards=true&timeout=1s")[0] == 200)
    wait_until("lost in _cat/shards", lambda: len(n1.request(
        "GET", "/_cat/shards/lost?format=json")[2]) == 6)
    st, _, rows = n1.request("GET", "/_cat/shards/lost?format=json")
    assert all(row["state"] == "STARTED" for row in rows), rows
    on_n3 = sorted(int(row["shard"]) for row in rows if row["node"] == "n3")
    assert on_n3, rows
    n3.stop(sig=signal.SIGKILL)
    wait_until("n3 gone", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
    loc = os.path.join(env["repo"], "lostrepo")
    st, _, r = n1.request("PUT", "/_snapshot/lostrepo", {"type": "fs",
                                                         "settings": {"location": loc}})
    assert st == 200, r
    st, _, r = n1.request("PUT", "/_snapshot/lostrepo/p1?wait_for_completion=true",
                          {"indices": "lost", "partial": True})
    assert st == 200, r
    snap = r["snapshot"]
    assert snap["state"] == "PARTIAL", snap
    assert snap["shards"] == {"total": 6, "failed": len(on_n3),
                              "successful": 6 - len(on_n3)}, (rows, snap["failures"])
    assert sorted(f["shard_id"] for f in snap["failures"]) == on_n3, snap
    st, _, r = n1.request("PUT", "/_snapshot/lostrepo/p2?wait_for_completion=true",
                          {"indices": "lost"})
    assert st == 200 and r["snapshot"]["state"] == "FAILED", r
