"""The indexing buffer's size (issue 17): `-E indices.memory.index_buffer_size=256kb` makes a
shard with refresh off turn its buffer into segments once it holds 256 KiB, dense_vector
documents included (their `_source` text counts), so `_stats` never shows a buffer past
2.25 times it (a writer refreshes itself at twice the limit if the scheduler has not yet; the
capacity kept between refreshes is at most a quarter of it) and the documents become searchable without a refresh. A size that is not a byte size is
refused at start."""
import json
import os
import random
import subprocess
import tempfile

from conftest import Server, scry_bin

LIMIT = 256 << 10
DIMS = 32


def test_buffer_flushes_at_the_node_setting():
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rng = random.Random(seed)
    data = os.path.join(tempfile.mkdtemp(prefix="scry-ibuf-"), "data")
    server = Server(data, ["-E", "indices.memory.index_buffer_size=256kb"]).start()
    try:
        st, _, b = server.request("PUT", "/vec", {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0,
                         "refresh_interval": "-1"},
            "mappings": {"properties": {"v": {"type": "dense_vector", "dims": DIMS,
                                              "similarity": "l2_norm",
                                              "index_options": {"type": "flat"}}}}})
        assert st == 200, b
        n = 0
        peak = 0
        for _ in range(6):  # ~1.5 MB of JSON sources, ~6x the limit
            lines = []
            for _ in range(500):
                lines.append(json.dumps({"index": {"_id": str(n)}}))
                lines.append(json.dumps({"v": [rng.uniform(-1, 1) for _ in range(DIMS)]}))
                n += 1
            st, _, b = server.request("POST", "/vec/_bulk", "\n".join(lines) + "\n",
                                      headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not b["errors"], b
            st, _, b = server.request("GET", "/vec/_stats")
            assert st == 200, b
            seg = b["indices"]["vec"]["primaries"]["segments"]
            peak = max(peak, seg["index_writer_memory_in_bytes"])
        # refresh is off: only full buffers made segments (the default 64 MiB would make none)
        assert seg["count"] >= 3, seg
        # the scheduler makes a full buffer a segment; a writer finding it at twice the limit
        # (the scheduler not run yet) does it itself; plus the capacity kept between refreshes
        # (at most a quarter of the limit) and one bulk item
        assert peak <= LIMIT * 9 // 4 + (64 << 10), peak
        st, _, b = server.request("GET", "/vec/_count")
        assert st == 200 and 0 < b["count"] <= n, b
        st, _, b = server.request("POST", "/vec/_refresh")
        assert st == 200, b
        st, _, b = server.request("GET", "/vec/_count")
        assert st == 200 and b["count"] == n, b
    finally:
        assert server.stop() == 0, server.read_log()


def test_bad_size_is_refused():
    data = os.path.join(tempfile.mkdtemp(prefix="scry-ibuf-"), "data")
    for bad in ["10%", "lots", "12"]:
        p = subprocess.run([scry_bin(), "serve", "--data", data, "--port", "0",
                            "-E", "indices.memory.index_buffer_size=" + bad],
                           capture_output=True, timeout=30)
        assert p.returncode != 0, bad
        assert b"index_buffer_size" in p.stdout + p.stderr, (bad, p.stdout, p.stderr)
