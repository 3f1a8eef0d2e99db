"""Crash test: a client streams _bulk requests and records every acknowledged id; the server is
killed with SIGKILL at a random moment, restarted, and every acknowledged document must be
present (realtime GET) and searchable (ids query after refresh), with the hit count between
the acknowledged and the sent totals. 20 kills; the seed is printed (SCRY_CRASH_SEED to
replay), SCRY_CRASH_KILLS overrides the number of kills."""
import json
import os
import random
import signal
import tempfile
import threading
import time

import urllib3

from conftest import Server


def writer(url, index, start_id, acked, sent, stop):
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=2, read=10))
    next_id = start_id
    while not stop.is_set():
        lines = []
        ids = []
        for _ in range(50):
            ids.append(str(next_id))
            lines.append(json.dumps({"index": {"_index": index, "_id": str(next_id)}}))
            lines.append(json.dumps({"n": next_id, "t": "doc number %d" % next_id}))
            next_id += 1
        sent.update(ids)
        try:
            r = http.request("POST", url + "/_bulk", body=("\n".join(lines) + "\n").encode(),
                             headers={"Content-Type": "application/x-ndjson"})
        except Exception:
            return
        if r.status != 200:
            continue
        body = json.loads(r.data)
        for item in body["items"]:
            res = item["index"]
            if res.get("status") in (200, 201):
                acked.add(res["_id"])


def verify(server, index, acked, sent):
    st, h, b = server.request("POST", "/%s/_refresh" % index)
    assert st == 200, b
    ids = sorted(acked, key=int)
    for i in range(0, len(ids), 500):
        batch = ids[i:i + 500]
        st, h, b = server.request("POST", "/%s/_mget" % index, {"ids": batch})
        assert st == 200
        missing = [d["_id"] for d in b["docs"] if not d.get("found")]
        assert not missing, "acknowledged but missing after restart: %s" % missing[:10]
        st, h, b = server.request("POST", "/%s/_search" % index,
                                  {"query": {"ids": {"values": batch}}, "size": 0,
                                   "track_total_hits": True})
        assert st == 200 and b["hits"]["total"]["value"] == len(batch), b
    st, h, b = server.request("GET", "/%s/_count" % index)
    assert len(acked) <= b["count"] <= len(sent), (len(acked), b["count"], len(sent))


def test_kill9_loses_no_acknowledged_write():
    seed = int(os.environ.get("SCRY_CRASH_SEED", random.randrange(1 << 30)))
    kills = int(os.environ.get("SCRY_CRASH_KILLS", "20"))
    print("crash test seed %d (SCRY_CRASH_SEED=%d to replay), %d kills" % (seed, seed, kills))
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="scry-crash-")
    server = Server(os.path.join(tmp, "data")).start()
    index = "crash"
    st, h, b = server.request("PUT", "/" + index, {"settings": {"number_of_shards": 2,
                                                                "number_of_replicas": 0}})
    assert st == 200, b
    acked, sent = set(), set()
    next_id = 0
    try:
        for k in range(kills):
            stop = threading.Event()
            t = threading.Thread(target=writer,
                                 args=(server.url, index, next_id, acked, sent, stop))
            t.start()
            time.sleep(rng.uniform(0.2, 1.5))
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait()
            stop.set()
            t.join()
            next_id = max((int(x) for x in sent), default=-1) + 1
            server.proc = None
            server.start()
            verify(server, index, acked, sent)
        assert len(acked) > 0
    finally:
        if server.alive():
            server.stop()
    print("crash test: %d kills, %d acknowledged, %d sent" % (kills, len(acked), len(sent)))
