"""Start-up recovery (issue 17 item 13): after a kill -9 the node listens at once and recovers
its shards in the background. While a shard replays its translog the node answers `GET /` and
`_cluster/health` (red, `initializing_shards`), `_cat/shards` shows it INITIALIZING, and
searches, gets and writes of the index answer Elasticsearch's 503s; afterwards every
acknowledged document is there. The replay is made slow deterministically with the test-only
`--test-recovery-delay` flag of `scry serve` (each shard waits that long before its replay).
Also: `index.translog.flush_threshold_size` flushes a shard during a load whose refreshes are
explicit (refresh_interval -1), so the translog a restart replays stays bounded."""
import json
import os
import re
import signal
import tempfile

from conftest import Server

DELAY_S = 6  # > the 5 s progress-log period, so one progress line is logged during the delay


def bulk(server, index, start, n, refresh=None):
    lines = []
    for i in range(start, start + n):
        lines.append(json.dumps({"index": {"_index": index, "_id": "d%d" % i}}))
        lines.append(json.dumps({"n": i, "body": "recovery doc number %d" % i}))
    path = "/_bulk" + ("?refresh=%s" % refresh if refresh else "")
    st, _, b = server.request("POST", path, "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    return ["d%d" % i for i in range(start, start + n)]


def test_listens_and_reports_initializing_while_recovering():
    tmp = tempfile.mkdtemp(prefix="scry-recovery-")
    data = os.path.join(tmp, "data")
    server = Server(data).start()
    st, _, b = server.request("PUT", "/rec", {"settings": {"number_of_shards": 2,
                                                           "number_of_replicas": 0}})
    assert st == 200, b
    acked = []
    for k in range(6):  # refreshed but never flushed: everything is in the translog
        acked += bulk(server, "rec", k * 500, 500, refresh="true" if k % 2 else None)
    server.stop(signal.SIGKILL)

    server = Server(data, ["--test-recovery-delay", "%ds" % DELAY_S]).start(
        wait_recovered=False)
    try:
        # The port answers at once: no "connection refused" while the shards recover.
        st, _, b = server.request("GET", "/")
        assert st == 200 and b["tagline"] == "You Know, for Search", b
        st, _, h = server.request("GET", "/_cluster/health")
        assert st == 200, h
        assert h["status"] == "red", h
        assert h["initializing_shards"] == 2 and h["active_primary_shards"] == 0, h
        assert h["unassigned_shards"] == 0, h
        st, _, h = server.request("GET", "/_cluster/health?wait_for_status=green&timeout=50ms")
        assert st == 408 and h["timed_out"] and h["status"] == "red", h

        st, _, rows = server.request("GET", "/_cat/shards/rec?format=json")
        assert st == 200 and sorted(r["state"] for r in rows) == ["INITIALIZING"] * 2, rows
        st, _, rows = server.request("GET", "/_cat/indices/rec?format=json")
        assert st == 200 and rows[0]["health"] == "red", rows

        # A search of a recovering index: 503 search_phase_execution_exception, as
        # Elasticsearch answers when no copy of any shard is active.
        st, _, b = server.request("POST", "/rec/_search", {"query": {"match_all": {}}})
        assert st == 503, b
        assert b["status"] == 503 and b["error"]["type"] == "search_phase_execution_exception", b
        assert b["error"]["reason"] == "all shards failed", b
        assert b["error"]["root_cause"][0]["type"] == "no_shard_available_action_exception", b
        assert sorted(f["shard"] for f in b["error"]["failed_shards"]) == [0, 1], b
        st, _, b = server.request("GET", "/rec/_count")
        assert st == 503, b

        # A get: no_shard_available_action_exception; a write: unavailable_shards_exception.
        st, _, b = server.request("GET", "/rec/_doc/d1")
        assert st == 503 and b["error"]["type"] == "no_shard_available_action_exception", b
        st, _, b = server.request("PUT", "/rec/_doc/new", {"n": -1})
        assert st == 503 and b["error"]["type"] == "unavailable_shards_exception", b
        st, _, b = server.request("POST", "/_bulk",
                                  json.dumps({"index": {"_index": "rec", "_id": "new2"}}) +
                                  "\n" + json.dumps({"n": -2}) + "\n",
                                  headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and b["errors"], b
        assert b["items"][0]["index"]["status"] == 503, b
        assert b["items"][0]["index"]["error"]["type"] == "unavailable_shards_exception", b

        # Broadcast actions count only active copies: a recovering shard is not a failure.
        st, _, b = server.request("POST", "/rec/_refresh")
        assert st == 200 and b["_shards"]["failed"] == 0 and b["_shards"]["successful"] == 0, b

        # Health waits for the recovery like Elasticsearch's wait_for_status.
        st, _, h = server.request("GET", "/_cluster/health?wait_for_status=green&timeout=120s")
        assert st == 200 and h["status"] == "green" and h["initializing_shards"] == 0, h
        assert h["active_primary_shards"] == 2, h

        st, _, b = server.request("GET", "/rec/_count")
        assert st == 200 and b["count"] == len(acked), b
        for i in range(0, len(acked), 500):
            batch = acked[i:i + 500]
            st, _, b = server.request("POST", "/rec/_mget", {"ids": batch})
            assert st == 200
            missing = [d["_id"] for d in b["docs"] if not d.get("found")]
            assert not missing, missing[:10]
        st, _, b = server.request("POST", "/rec/_search?q=body:recovery&size=0")
        assert st == 200 and b["hits"]["total"]["value"] == len(acked), b
        st, _, b = server.request("PUT", "/rec/_doc/new", {"n": -1})
        assert st == 201, b

        log = server.read_log()
        assert re.search(r"recovering \[rec\]\[[01]\]: translog of [0-9.]+ MB to replay", log), log
        assert re.search(r"recovering \[rec\]\[[01]\]: \d+ ops replayed, [0-9.]+ of [0-9.]+ MB",
                         log), log
        assert "recovered [rec][0]" in log and "recovered [rec][1]" in log, log
    finally:
        rc = server.stop()
    assert rc == 0, server.read_log()


def test_sigterm_during_recovery_stops_promptly_and_loses_nothing():
    tmp = tempfile.mkdtemp(prefix="scry-recovery-")
    data = os.path.join(tmp, "data")
    server = Server(data).start()
    st, _, b = server.request("PUT", "/rec2", {"settings": {"number_of_replicas": 0}})
    assert st == 200, b
    acked = bulk(server, "rec2", 0, 300)
    server.stop(signal.SIGKILL)
    # Stopped while the shard waits to replay: the translog stays for the next start.
    server = Server(data, ["--test-recovery-delay", "60s"]).start(wait_recovered=False)
    st, _, h = server.request("GET", "/_cluster/health")
    assert h["initializing_shards"] == 1, h
    assert server.stop(timeout=20) == 0, server.read_log()
    server = Server(data).start()
    try:
        st, _, b = server.request("GET", "/rec2/_count")
        assert st == 200 and b["count"] == len(acked), b
    finally:
        server.stop()


def test_flush_threshold_bounds_the_translog_with_explicit_refreshes():
    tmp = tempfile.mkdtemp(prefix="scry-recovery-")
    server = Server(os.path.join(tmp, "data")).start()
    try:
        st, _, b = server.request("PUT", "/ft", {"settings": {
            "number_of_replicas": 0, "refresh_interval": "-1",
            "translog": {"flush_threshold_size": "64kb"}}})
        assert st == 200, b
        st, _, b = server.request("GET", "/ft/_settings")
        assert b["ft"]["settings"]["index"]["translog"]["flush_threshold_size"] == "64kb", b
        for k in range(20):  # about 20 x 30 KB of translog, refreshed by the requests
            bulk(server, "ft", k * 400, 400, refresh="true")
        st, _, b = server.request("GET", "/ft/_stats")
        tl = b["indices"]["ft"]["primaries"]["translog"]
        assert tl["size_in_bytes"] < 2 * 64 * 1024, tl
        st, _, b = server.request("GET", "/ft/_count")
        assert b["count"] == 8000, b
        # Dynamic: a larger threshold lets it grow again.
        st, _, b = server.request("PUT", "/ft/_settings",
                                  {"index.translog.flush_threshold_size": "100mb"})
        assert st == 200, b
        for k in range(20, 30):
            bulk(server, "ft", k * 400, 400, refresh="true")
        st, _, b = server.request("GET", "/ft/_stats")
        assert b["indices"]["ft"]["primaries"]["translog"]["size_in_bytes"] > 2 * 64 * 1024, b
        st, _, b = server.request("PUT", "/ft/_settings",
                                  {"index.translog.flush_threshold_size": "lots"})
        assert st == 400 and b["error"]["type"] == "illegal_argument_exception", b
    finally:
        server.stop()
