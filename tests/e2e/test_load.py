"""`scry load`: plain NDJSON documents, _bulk-format files, gzip and zstd, progress and summary,
and a failing document reported with a non-zero exit."""
import gzip
import json
import os
import shutil
import subprocess

from conftest import scry_bin


def load(server, index, path, *extra):
    return subprocess.run([scry_bin(), "load", "--index", index, "--url", server.url,
                           "--refresh", "--batch-docs", "100", path] + list(extra),
                          capture_output=True, text=True, timeout=120)


def test_load_plain_gzip_zstd(server, fresh_index, tmp_path):
    plain = tmp_path / "docs.ndjson"
    plain.write_text("".join(json.dumps({"n": i, "t": "doc %d" % i}) + "\n" for i in range(250)))
    r = load(server, fresh_index, str(plain))
    assert r.returncode == 0, r.stderr
    assert "loaded 250 documents (0 failed)" in r.stderr
    assert "docs/s" in r.stderr
    st, h, b = server.request("GET", "/%s/_count" % fresh_index)
    assert b["count"] == 250
    gz = tmp_path / "docs.ndjson.gz"
    with gzip.open(gz, "wt") as f:
        f.write(plain.read_text())
    r = load(server, fresh_index, str(gz))
    assert r.returncode == 0, r.stderr
    assert server.request("GET", "/%s/_count" % fresh_index)[2]["count"] == 500
    if shutil.which("zstd"):
        zst = tmp_path / "docs.ndjson.zst"
        subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(zst)], check=True)
        r = load(server, fresh_index, str(zst))
        assert r.returncode == 0, r.stderr
        assert server.request("GET", "/%s/_count" % fresh_index)[2]["count"] == 750


def test_load_bulk_format_and_errors(server, fresh_index, tmp_path):
    server.request("PUT", "/" + fresh_index, {"mappings": {"dynamic": "strict", "properties": {
        "t": {"type": "text"}}}})
    lines = []
    for i in range(120):
        lines.append(json.dumps({"index": {"_id": "id%d" % i}}))
        lines.append(json.dumps({"t": "x"} if i != 7 else {"bad": 1}))
    f = tmp_path / "bulk.ndjson"
    f.write_text("\n".join(lines) + "\n")
    r = load(server, fresh_index, str(f))
    assert r.returncode == 1
    assert "(1 failed)" in r.stderr and "strict_dynamic_mapping_exception" in r.stderr
    assert server.request("GET", "/%s/_count" % fresh_index)[2]["count"] == 119
    assert server.request("GET", "/%s/_doc/id5" % fresh_index)[2]["found"] is True


def test_load_usage_and_missing_file(server):
    r = subprocess.run([scry_bin(), "load"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
    r = subprocess.run([scry_bin(), "load", "--index", "x", "/nonexistent.ndjson"],
                       capture_output=True, text=True)
    assert r.returncode == 1


def test_load_parallel_conns(server, fresh_index, tmp_path):
    """--conns 4: every document arrives exactly once (ids from a bulk-format file), the
    summary counts all requests, a failing item is still reported, and a bad --conns is a
    usage error."""
    server.request("PUT", "/" + fresh_index, {"mappings": {"dynamic": "strict", "properties": {
        "n": {"type": "long"}}}})
    lines = []
    for i in range(2003):
        lines.append(json.dumps({"index": {"_id": "d%d" % i}}))
        lines.append(json.dumps({"n": i} if i != 1500 else {"bad": 1}))
    f = tmp_path / "bulk.ndjson"
    f.write_text("\n".join(lines) + "\n")
    r = load(server, fresh_index, str(f), "--conns", "4")
    assert r.returncode == 1, r.stderr
    assert "loaded 2002 documents (1 failed)" in r.stderr
    assert "21 requests" in r.stderr  # 2003 docs in batches of 100
    assert "strict_dynamic_mapping_exception" in r.stderr
    assert server.request("GET", "/%s/_count" % fresh_index)[2]["count"] == 2002
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {
        "size": 0, "aggs": {"s": {"sum": {"field": "n"}}, "c": {"cardinality": {"field": "n"}}}})
    assert b["aggregations"]["s"]["value"] == sum(range(2003)) - 1500
    assert b["aggregations"]["c"]["value"] == 2002
    for bad in ("0", "65"):
        r = subprocess.run([scry_bin(), "load", "--index", "x", "--conns", bad, str(f)],
                           capture_output=True, text=True)
        assert r.returncode == 2 and "usage" in r.stderr
