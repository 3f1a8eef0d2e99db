"""TLS on the node-to-node transport (issue 13, "Transport"; docs/cluster.md): etcd + two nodes
whose transport speaks mutual TLS (`--transport-tls-cert/-key/-ca`, verification_mode full),
with certificates made here by the `openssl` command line.

* The cluster works over TLS: a replica recovers from its primary (green), and searches from
  either node reach the other node's shards (an index without replicas).
* Peers that do not hold a certificate from the cluster's CA are refused before any frame is
  read or answered, and the refusal is logged: a plaintext peer, a TLS peer without a client
  certificate, one with a certificate of another CA. A peer with the right certificate gets an
  answer (the same probe, so the refusals are not an artefact of the probe).
* A third node with a certificate of another CA joins the membership (etcd) but no data
  crosses: its shard of a new index cannot be searched from the good nodes (the failure names
  the TLS handshake), it cannot search theirs, and both sides log the refused handshakes."""
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile

import pytest

from conftest import Server, scry_bin
from test_cluster import bulk_on, create_on, free_port, running_cluster, wait_until

N_DOCS = 60


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=" + name, "-keyout", name + ".key", "-out", name + ".pem", cwd=d)


def make_cert(d, name, ca):
    """A certificate for 127.0.0.1 (IP SAN, as `full` verification checks) signed by ca."""
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout",
            name + ".key", "-out", name + ".csr", cwd=d)
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-CAcreateserial", "-days", "2", "-extfile", name + ".ext", "-out", name + ".pem",
            cwd=d)


def tls_args(d, cert, ca):
    return ["--transport-tls-cert", os.path.join(d, cert + ".pem"),
            "--transport-tls-key", os.path.join(d, cert + ".key"),
            "--transport-tls-ca", os.path.join(d, ca + ".pem"),
            "--transport-tls-verify", "full"]


def bulk(index, n):
    return "".join(json.dumps({"index": {"_index": index, "_id": str(i)}}) + "\n" +
                   json.dumps({"n": i, "tag": "t%d" % (i % 3)}) + "\n" for i in range(n))


@pytest.fixture(scope="module")
def env():
    certs = tempfile.mkdtemp(prefix="scry-ctls-certs-")
    make_ca(certs, "ca")
    make_ca(certs, "other-ca")
    make_cert(certs, "node", "ca")
    make_cert(certs, "stranger", "other-ca")
    with running_cluster("scry-ctls-", "tls", names=("n1", "n2"), ttl="10s",
                         args=lambda n: tls_args(certs, "node", "ca")) as run:
        nodes, n1 = run.nodes, run.nodes["n1"]
        for index, replicas in (("plain", 0), ("copied", 1)):
            create_on([n1], index, {"settings": {
                "number_of_shards": 4, "number_of_replicas": replicas},
                "mappings": {"properties": {"n": {"type": "long"}, "tag": {"type": "keyword"}}}})
            for s in nodes.values():
                wait_until(index + " routing on " + s.url, lambda s=s, i=index: s.request(
                    "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % i)[0] == 200)
            bulk_on([n1], bulk(index, N_DOCS))
        yield nodes, run.tports, certs, (run.tmp, run.etcd)
    if not os.environ.get("SCRY_KEEP_TMP"):
        shutil.rmtree(certs, ignore_errors=True)


def test_cluster_serves_over_tls(env):
    nodes, _, _, _ = env
    # shards of `plain` live on both nodes without copies: each search crosses the transport
    for s in nodes.values():
        st, _, r = s.request("POST", "/plain/_search", {
            "size": 0, "aggs": {"tags": {"terms": {"field": "tag"}}}})
        assert st == 200, r
        assert r["_shards"] == {"total": 4, "successful": 4, "skipped": 0, "failed": 0}, r
        assert r["hits"]["total"]["value"] == N_DOCS
        assert sorted(b["doc_count"] for b in r["aggregations"]["tags"]["buckets"]) == [20] * 3
    # replication over TLS: every replica recovered and got the writes (green, both counts)
    assert all(transport_stats(s)["rx_count"] > 0 for s in nodes.values())
    assert all(transport_stats(s)["tls_handshakes_refused"] == 0 for s in nodes.values())
    st, _, h = nodes["n2"].request("GET", "/_cluster/health/copied")
    assert st == 200 and h["status"] == "green", h
    st, _, rows = nodes["n1"].request("GET", "/_cat/shards/copied?format=json")
    assert st == 200 and len(rows) == 8 and all(r["state"] == "STARTED" for r in rows), rows


def frame(msg_type, body=b""):
    """A transport request frame (cluster/wire.h): magic, version, flags, type, id, length."""
    return b"SCTP" + struct.pack("<BBHQI", 1, 0, msg_type, 7, len(body)) + body


def exchange(sock):
    """Sends a request of an unknown type; returns the response header bytes (b"" when the
    peer closed the connection instead of answering)."""
    sock.settimeout(10)
    sock.sendall(frame(0x7777))
    got = b""
    try:
        while len(got) < 20:
            part = sock.recv(20 - len(got))
            if not part:
                break
            got += part
    except ConnectionError:
        return b""  # closed (reset) without an answer
    return got


def tls_probe(port, certs, cert=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(certs, "ca.pem"))
    if cert:
        ctx.load_cert_chain(os.path.join(certs, cert + ".pem"), os.path.join(certs, cert + ".key"))
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            return exchange(s)
    except (ssl.SSLError, ConnectionError):
        return b""  # the server refused the handshake (or closed right after it)
    finally:
        raw.close()


def transport_stats(node):
    st, _, r = node.request("GET", "/_nodes/stats")
    assert st == 200, r
    (stats,) = r["nodes"].values()
    return stats["transport"]


def test_refuses_peers_without_the_cluster_certificate(env):
    nodes, tports, certs, _ = env
    port = tports["n1"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        assert exchange(s) == b"", "a plaintext peer got an answer"
    assert tls_probe(port, certs) == b"", "a peer without a client certificate got an answer"
    assert tls_probe(port, certs, "stranger") == b"", "another CA's certificate got an answer"
    # the same probe with the cluster's certificate: an answer (an error frame, unknown type)
    hdr = tls_probe(port, certs, "node")
    assert len(hdr) == 20 and hdr[:4] == b"SCTP", hdr
    assert hdr[5] == 0x03, hdr  # response | error
    log = nodes["n1"].read_log()
    assert log.count("refused transport connection from 127.0.0.1") >= 3, log
    assert transport_stats(nodes["n1"])["tls_handshakes_refused"] >= 3


def test_node_of_another_ca_gets_no_data(env):
    nodes, _, certs, (tmp, etcd) = env
    n1 = nodes["n1"]
    n3 = Server(os.path.join(tmp, "n3"), [
        "--cluster", "etcd=" + etcd.url, "--node-name", "n3", "--cluster-name", "tls",
        "--transport-port", str(free_port()), "--lease-ttl", "10s"] +
        tls_args(certs, "stranger", "other-ca")).start()
    nodes["n3"] = n3
    # it joins the membership (etcd is not the transport)...
    wait_until("3 nodes", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
    # ... and the node with the fewest copies gets the first shard of a new index
    st, _, r = n1.request("PUT", "/late", {"settings": {
        "number_of_shards": 3, "number_of_replicas": 0}})
    assert st == 200, r
    wait_until("late routed", lambda: n1.request(
        "GET", "/_cluster/health/late?wait_for_status=green&timeout=1s")[0] == 200)
    ids = {r["name"]: r["id"] for r in n1.request("GET", "/_cat/nodes?format=json&h=name,id")[2]}
    st, _, state = n1.request("GET", "/_cluster/state/routing_table/late")
    assert st == 200, state
    on = {e["node"] for copies in state["routing_table"]["indices"]["late"]["shards"].values()
          for e in copies}
    assert ids["n3"] in on, (ids, state)

    def failure_reasons():
        st, _, r = n1.request("POST", "/late/_search", {"query": {"match_all": {}}})
        failures = r["_shards"]["failures"] if st == 200 else r["error"]["failed_shards"]
        return [f["reason"]["reason"] for f in failures]

    # once n1's placement has the new routing, n3's shards fail on the handshake
    reasons = wait_until("a search of n3's shards", lambda: [
        x for x in failure_reasons() if "TLS handshake failed" in x])
    assert "node_not_connected" not in reasons[0]  # the reason is the handshake's own
    # n3 cannot read the good nodes' shards either
    st, _, r = n3.request("POST", "/plain/_search", {"size": 0})
    assert st in (200, 503), r
    if st == 200:
        assert r["_shards"]["successful"] == 0 and r["hits"]["total"]["value"] == 0, r
    assert "TLS handshake with 127.0.0.1" in n1.read_log()
    assert transport_stats(n1)["tls_handshakes_failed"] >= 1
    assert "refused transport connection from" in n3.read_log() or \
        "TLS handshake with 127.0.0.1" in n3.read_log()
    rc = n3.stop()
    assert rc == 0, n3.read_log()
    del nodes["n3"]


def test_bad_transport_tls_flags(env):
    _, _, certs, (tmp, etcd) = env
    d = os.path.join(tmp, "bad")
    for args, says in (
            (["--transport-tls-cert", os.path.join(certs, "node.pem")], "transport TLS needs"),
            (["--transport-tls-verify", "sometimes"], "bad value"),
            (tls_args(certs, "node", "missing-ca"), "cannot use the transport TLS files")):
        p = subprocess.run([scry_bin(), "serve", "--data", d, "--port", "0",
                            "--cluster", "etcd=" + etcd.url, "--cluster-name", "bad",
                            "--transport-port", "0"] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        out = p.stdout.decode("utf-8", "replace")
        assert p.returncode == 2 and says in out, out
