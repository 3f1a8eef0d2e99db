"""Idle shards (issue 13, memory per idle shard): with `indices.memory.shard_inactive_time`
set low, a shard without writes for that long commits and frees its indexing buffer
(`_stats`: `segments.index_writer_memory_in_bytes` and `translog.operations` fall to 0). An
idle shard still returns every document (search, realtime get, versions), takes writes again
(and goes idle again), and a SIGKILL after it went idle loses nothing, before or after the
writes that followed. A shard with refresh off keeps its unrefreshed documents unsearchable."""
import json
import os
import signal
import tempfile
import time

from conftest import Server

N_INDICES = 4
DOCS = 5


def server_args():
    return ["-E", "indices.memory.shard_inactive_time=300ms"]


def bulk(server, index, ids, refresh=None):
    lines = []
    for i in ids:
        lines.append(json.dumps({"index": {"_index": index, "_id": i}}))
        lines.append(json.dumps({"title": "idle doc %s" % i, "n": len(i)}))
    path = "/_bulk" + ("?refresh=%s" % refresh if refresh else "")
    st, _, b = server.request("POST", path, "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b


def shard_stats(server, index):
    st, _, b = server.request("GET", "/%s/_stats" % index)
    assert st == 200, b
    p = b["indices"][index]["primaries"]
    return p["segments"]["index_writer_memory_in_bytes"], p["translog"]["operations"]


def wait_idle(server, index, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        mem, ops = shard_stats(server, index)
        if mem == 0 and ops == 0:
            return
        time.sleep(0.1)
    raise AssertionError("%s never went idle: %s" % (index, shard_stats(server, index)))


def count(server, index):
    st, _, b = server.request("GET", "/%s/_count" % index)
    assert st == 200, b
    return b["count"]


def ids_of(server, index):
    st, _, b = server.request("POST", "/%s/_search" % index,
                              {"size": 100, "sort": [{"n": "asc"}, {"_id": "asc"}]})
    assert st == 200, b
    return sorted(h["_id"] for h in b["hits"]["hits"])


def test_idle_shard_keeps_everything_and_survives_kill():
    tmp = tempfile.mkdtemp(prefix="scry-idle-")
    data = os.path.join(tmp, "data")
    server = Server(data, server_args()).start()
    try:
        names = ["idle-%d" % i for i in range(N_INDICES)]
        want = {}
        for name in names:
            st, _, b = server.request("PUT", "/" + name, {
                "settings": {"number_of_shards": 1, "number_of_replicas": 0}})
            assert st == 200, b
            want[name] = ["%s-%d" % (name, d) for d in range(DOCS)]
            bulk(server, name, want[name])
        # refresh off: its buffered documents must stay unsearchable through an idle period
        st, _, b = server.request("PUT", "/quiet", {"settings": {
            "number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"}})
        assert st == 200, b
        bulk(server, "quiet", ["q1", "q2"])
        st, _, b = server.request("PUT", "/idle-0/_doc/idle-0-1", {"title": "updated", "n": 1})
        assert st == 200 and b["_version"] == 2, b

        for name in names:
            wait_idle(server, name)
        for name in names:
            assert count(server, name) == DOCS
            assert ids_of(server, name) == sorted(want[name])
        st, _, b = server.request("GET", "/idle-0/_doc/idle-0-1")
        assert st == 200 and b["_version"] == 2 and b["_source"]["title"] == "updated", b
        # versions and conflicts as before
        st, _, b = server.request("PUT", "/idle-1/_create/idle-1-0", {"title": "dup"})
        assert st == 409, b
        assert count(server, "quiet") == 0
        st, _, b = server.request("GET", "/quiet/_doc/q1")
        assert st == 200 and b["found"], b

        # Writes again: a buffer again, then idle again.
        bulk(server, "idle-2", ["idle-2-new"], refresh="true")
        want["idle-2"].append("idle-2-new")
        mem, ops = shard_stats(server, "idle-2")
        assert mem > 0 and ops == 1, (mem, ops)
        wait_idle(server, "idle-2")
        assert ids_of(server, "idle-2") == sorted(want["idle-2"])
        # A write after the last idle commit, then a kill: the translog has it.
        st, _, b = server.request("PUT", "/idle-3/_doc/late?refresh=true", {"title": "late",
                                                                            "n": 9})
        assert st == 201, b
        want["idle-3"].append("late")
        server.stop(signal.SIGKILL)

        server = Server(data, server_args()).start()
        for name in names:
            assert count(server, name) == len(want[name]), name
            assert ids_of(server, name) == sorted(want[name])
        st, _, b = server.request("GET", "/idle-0/_doc/idle-0-1")
        assert st == 200 and b["_version"] == 2, b
        st, _, b = server.request("POST", "/quiet/_refresh")
        assert st == 200, b
        assert count(server, "quiet") == 2
    finally:
        server.stop()
