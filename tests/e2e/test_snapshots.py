"""Snapshot and restore with fs repositories (_snapshot, _cat/snapshots): repositories confined
to --path-repo, a snapshot taken while a client keeps indexing restored into a new data folder
with identical answers, incremental copies, SIGKILL during a snapshot, corrupt repository
files, restore options and Elasticsearch's error shapes. Random choices print their seed
(SCRY_SNAP_SEED replays them)."""
import glob
import json
import os
import random
import signal
import tempfile
import threading
import time

import pytest
import urllib3

from conftest import Server, assert_error

SEED = int(os.environ.get("SCRY_SNAP_SEED", random.randrange(1 << 30)))
print("test_snapshots seed", SEED)

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega").split()


def start(tmp, name="data", extra=()):
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo, exist_ok=True)
    return Server(os.path.join(tmp, name), ["--path-repo", repo] + list(extra)).start()


def stop_clean(server):
    """Stops the server and checks it exited cleanly (sanitizer reports make it fail)."""
    rc = server.stop()
    assert rc == 0, "exit code %s; log:\n%s" % (rc, server.read_log())


def ok(server, method, path, body=None):
    st, _, b = server.request(method, path, body)
    assert st in (200, 201), (method, path, st, b)
    return b


def make_doc(rng, i):
    return {"title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8))),
            "n": i, "tag": rng.choice(WORDS[:5])}


def bulk(server, index, docs):
    lines = []
    for i, d in docs:
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps(d))
    st, _, b = server.request("POST", "/_bulk", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b


QUERIES = [
    {"match": {"title": "alpha"}},
    {"match": {"title": "beta gamma omega"}},
    {"term": {"tag": "delta"}},
    {"range": {"n": {"gte": 100, "lt": 400}}},
    {"bool": {"must": [{"match": {"title": "pi"}}], "filter": [{"term": {"tag": "alpha"}}]}},
    {"match_all": {}},
]


def answers(server, index):
    """Every hit (id, score) of each query, sorted, plus totals and a terms aggregation."""
    out = []
    for q in QUERIES:
        b = ok(server, "POST", "/%s/_search" % index,
               {"query": q, "size": 2000, "track_total_hits": True,
                "aggs": {"tags": {"terms": {"field": "tag"}}}})
        hits = sorted((h["_id"], round(h["_score"] or 0, 5)) for h in b["hits"]["hits"])
        out.append((b["hits"]["total"]["value"], hits,
                    sorted((x["key"], x["doc_count"]) for x in b["aggregations"]["tags"]["buckets"])))
    return out


MAPPING = {"properties": {"title": {"type": "text"}, "n": {"type": "long"},
                          "tag": {"type": "keyword"}}}


def test_repository_registration_and_errors():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    s = start(tmp)
    try:
        assert ok(s, "PUT", "/_snapshot/r1", {"type": "fs", "settings": {"location": "r1"}}) == \
            {"acknowledged": True}
        assert os.path.isdir(os.path.join(tmp, "repo", "r1"))
        abs_loc = os.path.join(tmp, "repo", "abs")
        ok(s, "PUT", "/_snapshot/r2", {"type": "fs", "settings": {"location": abs_loc}})
        got = ok(s, "GET", "/_snapshot")
        assert got["r1"] == {"type": "fs", "settings": {"location": "r1"}}
        assert set(got) == {"r1", "r2"}
        assert set(ok(s, "GET", "/_snapshot/r*")) == {"r1", "r2"}
        assert set(ok(s, "GET", "/_snapshot/r2")) == {"r2"}
        st, _, b = s.request("GET", "/_snapshot/nope")
        assert st == 404
        assert_error(b, 404, "repository_missing_exception")
        for loc in ("/etc", "../escape", os.path.join(tmp, "elsewhere"), "r1/../../x"):
            st, _, b = s.request("PUT", "/_snapshot/bad", {"type": "fs",
                                                             "settings": {"location": loc}})
            assert st == 400, (loc, b)
            assert_error(b, 400, "repository_exception")
            assert "path.repo" in b["error"]["reason"]
        st, _, b = s.request("PUT", "/_snapshot/bad", {"type": "s3", "settings": {}})
        assert_error(b, 400, "repository_exception")
        st, _, b = s.request("PUT", "/_snapshot/bad", {"settings": {"location": "x"}})
        assert st == 400, b
        st, _, b = s.request("PUT", "/_snapshot/bad", "{not json")
        assert st == 400, b
        st, _, b = s.request("PUT", "/_snapshot/bad", {"type": "fs", "settings": {}})
        assert_error(b, 400, "repository_exception")
        v = ok(s, "POST", "/_snapshot/r1/_verify")
        assert len(v["nodes"]) == 1
        st, _, b = s.request("POST", "/_snapshot/nope/_verify")
        assert_error(b, 404, "repository_missing_exception")
        st, _, b = s.request("GET", "/_snapshot/r1/nothing")
        assert_error(b, 404, "snapshot_missing_exception")
        assert ok(s, "GET", "/_snapshot/r1/_all") == {"snapshots": [], "total": 0, "remaining": 0}
        assert ok(s, "DELETE", "/_snapshot/r2") == {"acknowledged": True}
        st, _, b = s.request("DELETE", "/_snapshot/r2")
        assert_error(b, 404, "repository_missing_exception")
        # registrations survive a restart
        stop_clean(s)
        s.start()
        assert set(ok(s, "GET", "/_snapshot")) == {"r1"}
    finally:
        stop_clean(s)
    # without path.repo no repository may be registered
    s = Server(os.path.join(tmp, "data2")).start()
    try:
        st, _, b = s.request("PUT", "/_snapshot/r1", {"type": "fs", "settings": {"location": "r1"}})
        assert_error(b, 400, "repository_exception")
        assert "path.repo" in b["error"]["reason"]
    finally:
        stop_clean(s)


def writer(url, index, rng_seed, acked, sent, stop):
    rng = random.Random(rng_seed)
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(30))
    i = 0
    while not stop.is_set():
        lines = []
        batch = []
        for _ in range(20):
            d = make_doc(rng, i)
            batch.append((str(i), d))
            lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
            lines.append(json.dumps(d))
            i += 1
        sent.update(dict(batch))
        r = http.request("POST", url + "/_bulk", body=("\n".join(lines) + "\n").encode(),
                         headers={"Content-Type": "application/x-ndjson"})
        assert r.status == 200
        for item in json.loads(r.data)["items"]:
            if item["index"]["status"] in (200, 201):
                acked.add(item["index"]["_id"])


def test_snapshot_while_indexing_then_restore_on_a_fresh_node():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    a = start(tmp, "data-a")
    try:
        ok(a, "PUT", "/logs", {"settings": {"number_of_shards": 3, "refresh_interval": "100ms"},
                               "mappings": MAPPING, "aliases": {"logs-read": {}}})
        ok(a, "PUT", "/_snapshot/repo1", {"type": "fs", "settings": {"location": "one"}})
        acked, sent, stop = set(), {}, threading.Event()
        t = threading.Thread(target=writer, args=(a.url, "logs", SEED, acked, sent, stop))
        t.start()
        try:
            while len(acked) < 300:
                time.sleep(0.02)
            before = set(acked)
            snap = ok(a, "PUT", "/_snapshot/repo1/mid?wait_for_completion=true",
                      {"indices": "logs"})["snapshot"]
            time.sleep(0.2)
        finally:
            stop.set()
            t.join()
        assert snap["state"] == "SUCCESS", snap
        assert snap["shards"] == {"total": 3, "failed": 0, "successful": 3}
        assert snap["indices"] == ["logs"]
        ok(a, "POST", "/logs/_refresh")
        final = ok(a, "PUT", "/_snapshot/repo1/final?wait_for_completion=true",
                   {"indices": ["logs"]})["snapshot"]
        assert final["state"] == "SUCCESS"
        expect = answers(a, "logs")
        assert expect[-1][0] == len(acked)
    finally:
        stop_clean(a)

    # A new node with an empty data folder and the same repository.
    b = start(tmp, "data-b")
    try:
        ok(b, "PUT", "/_snapshot/repo1", {"type": "fs", "settings": {"location": "one"}})
        names = [x["snapshot"] for x in ok(b, "GET", "/_snapshot/repo1/_all")["snapshots"]]
        assert names == ["mid", "final"]
        r = ok(b, "POST", "/_snapshot/repo1/final/_restore?wait_for_completion=true")
        assert r["snapshot"]["indices"] == ["logs"]
        assert r["snapshot"]["shards"]["failed"] == 0
        assert answers(b, "logs") == expect
        assert ok(b, "GET", "/logs/_mapping")["logs"]["mappings"] == MAPPING
        assert ok(b, "GET", "/logs/_settings")["logs"]["settings"]["index"]["number_of_shards"] \
            == "3"
        assert ok(b, "GET", "/logs-read/_count")["count"] == len(acked)
        # the snapshot taken during the writes: a consistent commit of each shard that holds
        # every write acknowledged before it started, each with the source that was sent
        ok(b, "POST", "/_snapshot/repo1/mid/_restore?wait_for_completion=true",
           {"rename_pattern": "logs", "rename_replacement": "mid-logs",
            "include_aliases": False})
        got = ok(b, "POST", "/mid-logs/_search", {"size": 5000, "query": {"match_all": {}}})
        ids = {h["_id"]: h["_source"] for h in got["hits"]["hits"]}
        assert before <= set(ids), len(before - set(ids))
        for i, src in ids.items():
            assert sent[i] == src
        assert "mid-logs" not in ok(b, "GET", "/_alias/logs-read")
        # the restored index takes writes and survives a restart
        ok(b, "PUT", "/logs/_doc/new?refresh=true", {"title": "alpha new", "n": 1, "tag": "x"})
        stop_clean(b)
        b.start()
        assert ok(b, "GET", "/logs/_count")["count"] == len(acked) + 1
    finally:
        stop_clean(b)


def blob_state(repo_dir):
    out = {}
    for p in glob.glob(os.path.join(repo_dir, "blobs", "*", "*")):
        st = os.stat(p)
        out[os.path.basename(p)] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


def manifest(repo_dir, snap_uuid):
    with open(os.path.join(repo_dir, "snap-%s.dat" % snap_uuid), "rb") as f:
        data = f.read()
    return json.loads(data[:data.rindex(b"\nscry-checksum ")])


def test_snapshots_are_incremental_and_delete_collects_garbage():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    s = start(tmp)
    repo_dir = os.path.join(tmp, "repo", "inc")
    rng = random.Random(SEED + 1)
    try:
        ok(s, "PUT", "/_snapshot/inc", {"type": "fs", "settings": {"location": "inc"}})
        ok(s, "PUT", "/big", {"settings": {"number_of_shards": 1}, "mappings": MAPPING})
        bulk(s, "big", [(i, make_doc(rng, i)) for i in range(2000)])
        s1 = ok(s, "PUT", "/_snapshot/inc/s1?wait_for_completion=true")["snapshot"]
        state1 = blob_state(repo_dir)
        segs1 = {f["name"]: f["blob"] for f in manifest(repo_dir, s1["uuid"])["indices"]["big"]
                 ["shards"][0]["files"] if f["name"].endswith(".seg")}
        assert segs1
        bulk(s, "big", [(i, make_doc(rng, i)) for i in range(2000, 2100)])
        s2 = ok(s, "PUT", "/_snapshot/inc/s2?wait_for_completion=true")["snapshot"]
        state2 = blob_state(repo_dir)
        # every blob of s1 is untouched (not copied again) ...
        for k, v in state1.items():
            assert state2[k] == v
        files2 = manifest(repo_dir, s2["uuid"])["indices"]["big"]["shards"][0]["files"]
        segs2 = {f["name"]: f["blob"] for f in files2 if f["name"].endswith(".seg")}
        # ... the old segment is shared, and only the new segment and small files were added
        for name, blob in segs1.items():
            if name in segs2:
                assert segs2[name] == blob
        assert set(segs1.values()) & set(segs2.values())
        new = set(state2) - set(state1)
        old_seg_bytes = sum(state1[b][2] for b in segs1.values())
        assert sum(state2[b][2] for b in new) < old_seg_bytes
        # deleting s1 keeps what s2 needs and drops the rest
        assert ok(s, "DELETE", "/_snapshot/inc/s1") == {"acknowledged": True}
        needed = {f["blob"] for f in files2}
        assert set(blob_state(repo_dir)) == needed
        ok(s, "DELETE", "/big")
        ok(s, "POST", "/_snapshot/inc/s2/_restore?wait_for_completion=true")
        assert ok(s, "GET", "/big/_count")["count"] == 2100
        ok(s, "DELETE", "/_snapshot/inc/s2")
        assert blob_state(repo_dir) == {}
        st, _, b = s.request("DELETE", "/_snapshot/inc/s2")
        assert_error(b, 404, "snapshot_missing_exception")
    finally:
        stop_clean(s)


def wait_for(pred, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def test_sigkill_during_a_snapshot_leaves_the_repository_usable():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    rng = random.Random(SEED + 2)
    s = start(tmp, extra=["--test-snapshot-delay", "300ms"])
    repo_dir = os.path.join(tmp, "repo", "k")
    try:
        ok(s, "PUT", "/_snapshot/k", {"type": "fs", "settings": {"location": "k"}})
        ok(s, "PUT", "/docs", {"settings": {"number_of_shards": 2}, "mappings": MAPPING})
        bulk(s, "docs", [(i, make_doc(rng, i)) for i in range(500)])
        ok(s, "POST", "/docs/_refresh")
        first = ok(s, "PUT", "/_snapshot/k/first?wait_for_completion=true")["snapshot"]
        assert first["state"] == "SUCCESS"
        bulk(s, "docs", [(i, make_doc(rng, i)) for i in range(500, 800)])
        acc = ok(s, "PUT", "/_snapshot/k/killed")
        assert acc["accepted"] is True
        st = ok(s, "GET", "/_snapshot/k/killed")["snapshots"][0]
        assert st["state"] == "IN_PROGRESS"
        assert [x["snapshot"] for x in ok(s, "GET", "/_snapshot/k/_current")["snapshots"]] == \
            ["killed"]
        # kill once some files of the new commit are in the repository
        wait_for(lambda: ok(s, "GET", "/_tasks/" + acc["task"])["task"]["status"]
                 ["files_done"] >= 2)
        s.stop(signal.SIGKILL)
        pins = glob.glob(os.path.join(tmp, "data", "indices", "*", "*", ".pin-*"))
        assert pins, "the kill should land while shard commits are pinned"
        s = start(tmp, extra=[])
        assert not glob.glob(os.path.join(tmp, "data", "indices", "*", "*", ".pin-*"))
        snaps = ok(s, "GET", "/_snapshot/k/_all")["snapshots"]
        assert [x["snapshot"] for x in snaps] == ["first"]
        again = ok(s, "PUT", "/_snapshot/k/again?wait_for_completion=true")["snapshot"]
        assert again["state"] == "SUCCESS"
        expect = answers(s, "docs")
        ok(s, "POST", "/_snapshot/k/again/_restore?wait_for_completion=true",
           {"indices": "docs", "rename_pattern": "^(.*)$", "rename_replacement": "back-$1"})
        assert answers(s, "back-docs") == expect
        ok(s, "POST", "/_snapshot/k/first/_restore?wait_for_completion=true",
           {"rename_pattern": "docs", "rename_replacement": "first-docs"})
        assert ok(s, "GET", "/first-docs/_count")["count"] == 500
        # deleting every snapshot removes every blob, including the killed copy's
        ok(s, "DELETE", "/_snapshot/k/first,again")
        assert glob.glob(os.path.join(repo_dir, "blobs", "*", "*")) == []
        assert glob.glob(os.path.join(repo_dir, "blobs", "*", ".*")) == []
    finally:
        stop_clean(s)


def test_corrupt_or_truncated_repository_files_give_clear_errors():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    rng = random.Random(SEED + 3)
    s = start(tmp)
    repo_dir = os.path.join(tmp, "repo", "c")
    try:
        ok(s, "PUT", "/_snapshot/c", {"type": "fs", "settings": {"location": "c"}})
        ok(s, "PUT", "/x", {"mappings": MAPPING})
        bulk(s, "x", [(i, make_doc(rng, i)) for i in range(50)])
        snap = ok(s, "PUT", "/_snapshot/c/one?wait_for_completion=true")["snapshot"]
        files = manifest(repo_dir, snap["uuid"])["indices"]["x"]["shards"][0]["files"]
        seg = [f for f in files if f["name"].endswith(".seg")][0]
        blob = os.path.join(repo_dir, "blobs", seg["blob"][:2], seg["blob"])
        # a flipped byte in a blob: the restore fails, naming the file, and leaves no index
        data = bytearray(open(blob, "rb").read())
        data[len(data) // 2] ^= 0x40
        open(blob, "wb").write(bytes(data))
        st, _, b = s.request("POST", "/_snapshot/c/one/_restore?wait_for_completion=true",
                             {"rename_pattern": "x", "rename_replacement": "y"})
        assert_error(b, 500, "snapshot_restore_exception")
        assert "checksum" in b["error"]["reason"] and seg["name"] in b["error"]["reason"]
        st, _, b = s.request("GET", "/y/_count")
        assert st == 404
        # a truncated blob
        open(blob, "wb").write(bytes(data[:100]))
        st, _, b = s.request("POST", "/_snapshot/c/one/_restore",
                             {"rename_pattern": "x", "rename_replacement": "y"})
        assert_error(b, 500, "snapshot_restore_exception")
        assert "shorter" in b["error"]["reason"]
        # a corrupt snapshot manifest
        mpath = os.path.join(repo_dir, "snap-%s.dat" % snap["uuid"])
        mdata = bytearray(open(mpath, "rb").read())
        mdata[5] ^= 0x01
        open(mpath, "wb").write(bytes(mdata))
        st, _, b = s.request("POST", "/_snapshot/c/one/_restore",
                             {"rename_pattern": "x", "rename_replacement": "y"})
        assert_error(b, 500, "snapshot_exception")
        assert "checksum mismatch" in b["error"]["reason"]
        # a truncated root: listing, snapshotting and registering all say which file is bad
        latest = open(os.path.join(repo_dir, "index.latest")).read().strip()
        root = os.path.join(repo_dir, "index-" + latest)
        rdata = open(root, "rb").read()
        open(root, "wb").write(rdata[:len(rdata) // 2])
        for method, path, body in (("GET", "/_snapshot/c/_all", None),
                                   ("PUT", "/_snapshot/c/two?wait_for_completion=true", {}),
                                   ("GET", "/_cat/snapshots/c", None)):
            st, _, b = s.request(method, path, body)
            assert_error(b, 500, "repository_exception")
            assert "index-" + latest in b["error"]["reason"], b
        st, _, b = s.request("PUT", "/_snapshot/c2", {"type": "fs", "settings": {"location": "c"}})
        assert_error(b, 500, "repository_exception")
        assert s.alive()
    finally:
        stop_clean(s)


def test_restore_options_names_and_cat():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    rng = random.Random(SEED + 4)
    s = start(tmp)
    try:
        ok(s, "PUT", "/_snapshot/o", {"type": "fs", "settings": {"location": "o"}})
        for name in ("a-1", "a-2", "b-1"):
            ok(s, "PUT", "/" + name, {"mappings": MAPPING,
                                      "aliases": {"al-" + name: {"filter": {"term": {"tag": "alpha"}}}}})
            bulk(s, name, [(i, make_doc(rng, i)) for i in range(30)])
        for bad in ("UPPER", "a%20b", "a,b", "a*", "a%23b"):
            st, _, b = s.request("PUT", "/_snapshot/o/%s?wait_for_completion=true" % bad, {})
            assert_error(b, 400, "invalid_snapshot_name_exception")
        st, _, b = s.request("PUT", "/_snapshot/o/s?wait_for_completion=true",
                             {"indices": "missing-index"})
        assert_error(b, 404, "index_not_found_exception")
        st, _, b = s.request("PUT", "/_snapshot/nope/s?wait_for_completion=true", {})
        assert_error(b, 404, "repository_missing_exception")
        snap = ok(s, "PUT", "/_snapshot/o/s?wait_for_completion=true",
                  {"indices": "a-*", "metadata": {"by": "test"}})["snapshot"]
        assert sorted(snap["indices"]) == ["a-1", "a-2"]
        assert snap["metadata"] == {"by": "test"}
        ok(s, "PUT", "/_snapshot/o/all?wait_for_completion=true")
        # restoring over an open index is refused; over a closed one it replaces it
        st, _, b = s.request("POST", "/_snapshot/o/s/_restore?wait_for_completion=true")
        assert_error(b, 400, "snapshot_restore_exception")
        assert "open index with same name" in b["error"]["reason"]
        ok(s, "PUT", "/a-1/_doc/extra?refresh=true", {"title": "x", "n": 1, "tag": "x"})
        ok(s, "POST", "/a-1/_close")
        r = ok(s, "POST", "/_snapshot/o/s/_restore?wait_for_completion=true",
               {"indices": "a-1"})
        assert r["snapshot"]["indices"] == ["a-1"]
        assert ok(s, "GET", "/a-1/_count")["count"] == 30
        # indices with exclusions, renames with groups, aliases in or out
        r = ok(s, "POST", "/_snapshot/o/all/_restore?wait_for_completion=true",
               {"indices": "*,-a-2", "rename_pattern": "(a|b)-(\\d)",
                "rename_replacement": "copy-$2-$1", "include_aliases": False})
        assert sorted(r["snapshot"]["indices"]) == ["copy-1-a", "copy-1-b"]
        assert ok(s, "GET", "/copy-1-b/_alias") == {"copy-1-b": {"aliases": {}}}
        ok(s, "POST", "/_snapshot/o/all/_restore?wait_for_completion=true",
           {"indices": ["b-1"], "rename_pattern": "b", "rename_replacement": "c"})
        assert "al-b-1" in ok(s, "GET", "/c-1/_alias")["c-1"]["aliases"]
        assert ok(s, "GET", "/al-b-1/_count")["count"] == 2 * ok(s, "POST", "/b-1/_count",
                                                                  {"query": {"term": {"tag": "alpha"}}})["count"]
        st, _, b = s.request("POST", "/_snapshot/o/all/_restore",
                             {"indices": "zzz", "rename_pattern": "a", "rename_replacement": "q"})
        assert_error(b, 404, "index_not_found_exception")
        st, _, b = s.request("POST", "/_snapshot/o/all/_restore",
                             {"rename_pattern": "(", "rename_replacement": "q"})
        assert st == 400, b
        st, _, b = s.request("POST", "/_snapshot/o/all/_restore",
                             {"rename_pattern": ".*", "rename_replacement": "same"})
        assert_error(b, 400, "snapshot_restore_exception")
        st, _, b = s.request("POST", "/_snapshot/o/all/_restore",
                             {"indices": "b-1", "rename_pattern": "b-1", "rename_replacement": "al-a-2"})
        assert_error(b, 400, "invalid_index_name_exception")
        st, _, b = s.request("POST", "/_snapshot/o/gone/_restore", {})
        assert_error(b, 404, "snapshot_missing_exception")
        assert ok(s, "POST", "/_snapshot/o/all/_restore",
                  {"indices": "a-2", "rename_pattern": "a", "rename_replacement": "w"}) == \
            {"accepted": True}
        assert ok(s, "GET", "/w-2/_count")["count"] == 30
        # listing and _cat/snapshots
        got = ok(s, "GET", "/_snapshot/o/s,al*")["snapshots"]
        assert [x["snapshot"] for x in got] == ["s", "all"]
        for x in got:
            assert x["repository"] == "o" and x["state"] == "SUCCESS"
            assert x["end_time_in_millis"] >= x["start_time_in_millis"]
        st, _, text = s.request("GET", "/_cat/snapshots/o?v")
        assert st == 200
        lines = text.strip().split("\n")
        assert lines[0].split()[:3] == ["id", "repository", "status"]
        assert [l.split()[0] for l in lines[1:]] == ["s", "all"]
        rows = ok(s, "GET", "/_cat/snapshots?format=json")
        assert [(r["id"], r["status"], r["indices"]) for r in rows] == \
            [("s", "SUCCESS", "2"), ("all", "SUCCESS", "3")]
        st, _, b = s.request("GET", "/_cat/snapshots/nope")
        assert_error(b, 404, "repository_missing_exception")
    finally:
        stop_clean(s)


def test_cancelled_snapshot_is_failed_and_not_restorable():
    tmp = tempfile.mkdtemp(prefix="scry-snap-")
    rng = random.Random(SEED + 5)
    s = start(tmp, extra=["--test-snapshot-delay", "200ms"])
    repo_dir = os.path.join(tmp, "repo", "x")
    try:
        ok(s, "PUT", "/_snapshot/x", {"type": "fs", "settings": {"location": "x"}})
        ok(s, "PUT", "/d", {"settings": {"number_of_shards": 2}, "mappings": MAPPING})
        bulk(s, "d", [(i, make_doc(rng, i)) for i in range(200)])
        acc = ok(s, "PUT", "/_snapshot/x/c")
        wait_for(lambda: ok(s, "GET", "/_tasks/" + acc["task"])["task"]["status"]["files_done"] >= 1)
        ok(s, "POST", "/_tasks/%s/_cancel" % acc["task"])
        wait_for(lambda: ok(s, "GET", "/_tasks/" + acc["task"])["completed"])
        snap = ok(s, "GET", "/_snapshot/x/c")["snapshots"][0]
        assert snap["state"] == "FAILED", snap
        assert snap["shards"]["failed"] >= 1 and snap["failures"]
        assert "cancelled" in snap["failures"][0]["reason"]
        st, _, b = s.request("POST", "/_snapshot/x/c/_restore",
                             {"rename_pattern": "d", "rename_replacement": "e"})
        assert_error(b, 400, "snapshot_restore_exception")
        assert "FAILED" in b["error"]["reason"]
        # the repository goes on: a new snapshot, then deleting both leaves no blob
        assert ok(s, "PUT", "/_snapshot/x/ok?wait_for_completion=true")["snapshot"]["state"] == \
            "SUCCESS"
        ok(s, "DELETE", "/_snapshot/x/*")
        assert glob.glob(os.path.join(repo_dir, "blobs", "*", "*")) == []
        assert ok(s, "GET", "/_snapshot/x/_all")["total"] == 0
    finally:
        stop_clean(s)
