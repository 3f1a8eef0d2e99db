"""HTTP/1.1 protocol rules of the server's transport (issue 18, section 4), over raw sockets:
framing that could smuggle a request is refused with 400 and a closed connection, limits are
enforced while reading (chunked bodies, headers, open connections), protocol errors answer
with Elasticsearch's JSON error shape, and keep-alive, pipelining, HEAD, Expect and gzip
bodies work. Each of the section 4 findings failed against the libmicrohttpd transport."""
import gzip
import json
import os
import resource
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import Server, scry_bin


def raw(server, data, timeout=5.0, port=None):
    """Sends data on a new connection; returns (bytes read, closed by the server)."""
    s = socket.create_connection(("127.0.0.1", port or server.port), timeout=timeout)
    try:
        s.sendall(data)
        return read_all(s, timeout)
    finally:
        s.close()


def read_all(s, timeout):
    out = b""
    s.settimeout(timeout)
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out, True
            out += chunk
    except socket.timeout:
        return out, False
    except ConnectionResetError:
        return out, True


def responses(data):
    """Splits a byte stream into [(status, {header: value}, body)]."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, data
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        n = int(hdrs.get("content-length", "0"))
        if status == 100:
            n = 0
        out.append((status, hdrs, rest[:n]))
        data = rest[n:]
    return out


def assert_json_error(resp, status):
    st, hdrs, body = resp
    assert st == status, resp
    assert hdrs["content-type"].startswith("application/json"), resp
    doc = json.loads(body)
    assert doc["status"] == status
    assert doc["error"]["type"] and doc["error"]["reason"]
    assert doc["error"]["root_cause"][0]["type"] == doc["error"]["type"]
    return doc


def test_two_different_content_lengths_400_and_close(server):
    data, closed = raw(server, b"POST /_search HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                               b"Content-Length: 10\r\nContent-Type: application/json\r\n\r\n{}")
    rs = responses(data)
    assert len(rs) == 1
    assert_json_error(rs[0], 400)
    assert rs[0][1].get("connection") == "close"
    assert closed


def test_content_length_with_transfer_encoding_no_smuggling(server):
    smuggled = b"GET /_cluster/health HTTP/1.1\r\nHost: x\r\n\r\n"
    data, closed = raw(server, b"POST /_search HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                               b"Transfer-Encoding: chunked\r\nContent-Type: application/json"
                               b"\r\n\r\n0\r\n\r\n" + smuggled)
    rs = responses(data)
    assert len(rs) == 1, rs  # the request after the body is never served
    assert_json_error(rs[0], 400)
    assert closed


def test_huge_chunk_size_refused_at_once(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(b"POST /_bulk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                  b"Content-Type: application/x-ndjson\r\n\r\nffffffffffffffff\r\n")
        data, closed = read_all(s, 5)
    finally:
        s.close()
    rs = responses(data)
    assert len(rs) == 1
    assert_json_error(rs[0], 413)
    assert closed


@pytest.fixture(scope="module")
def small_server():
    """A server with a 64 KiB body limit, 40 connections at most, gzip responses on and no busy
    polling (the other servers of the suite poll: http.busy_poll_us's default)."""
    tmp = tempfile.mkdtemp(prefix="scry-e2e-proto-")
    s = Server(os.path.join(tmp, "data"),
               ["--max-content-length", "64kb", "-E", "http.max_open_connections=40",
                "-E", "http.compression=true", "-E", "http.busy_poll_us=0"]).start()
    yield s
    assert s.stop() == 0, s.read_log()


def test_bad_busy_poll_is_refused():
    data = os.path.join(tempfile.mkdtemp(prefix="scry-e2e-proto-"), "data")
    for bad in ["-1", "fast", "100001"]:
        p = subprocess.run([scry_bin(), "serve", "--data", data, "--port", "0",
                            "-E", "http.busy_poll_us=" + bad], capture_output=True, timeout=30)
        assert p.returncode != 0, bad
        assert b"http.busy_poll_us" in p.stdout + p.stderr, (bad, p.stdout, p.stderr)


def test_keep_alive_without_busy_polling(small_server):
    """Sequential requests on one connection are each answered when no worker polls."""
    s = socket.create_connection(("127.0.0.1", small_server.port), timeout=10)
    try:
        for i in range(50):
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while b"\r\n\r\n" not in got or len(got.split(b"\r\n\r\n", 1)[1]) < body_len(got):
                chunk = s.recv(65536)
                assert chunk, i
                got += chunk
            assert got.startswith(b"HTTP/1.1 200"), (i, got[:100])
    finally:
        s.close()


def body_len(resp):
    for line in resp.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


def test_chunked_body_limit_enforced_while_reading(small_server):
    """The 413 arrives while the client is still sending chunks, not after the whole body."""
    s = socket.create_connection(("127.0.0.1", small_server.port), timeout=10)
    got = b""
    try:
        s.sendall(b"POST /_bulk HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                  b"Content-Type: application/x-ndjson\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (16384, b"x" * 16384)
        s.settimeout(0.2)
        for _ in range(64):  # 1 MiB offered, 16x the limit; no final 0-chunk
            try:
                s.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            try:
                got += s.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                break
            if got:
                break
        more, _ = read_all(s, 5)
        got += more
    finally:
        s.close()
    rs = responses(got)
    assert_json_error(rs[0], 413)


def test_http11_without_host_400(server):
    data, closed = raw(server, b"GET / HTTP/1.1\r\n\r\n")
    assert_json_error(responses(data)[0], 400)
    assert closed
    data, closed = raw(server, b"GET / HTTP/1.0\r\n\r\n")  # HTTP/1.0 needs no Host
    assert responses(data)[0][0] == 200


def test_garbage_request_line_answered_and_closed_at_once(server):
    t0 = time.time()
    data, closed = raw(server, b"\x00\x01\x02 GARBAGE\r\n\r\n", timeout=5)
    assert closed and time.time() - t0 < 4
    assert_json_error(responses(data)[0], 400)


def test_protocol_errors_are_json(server):
    data, _ = raw(server, b"GET / HTTP/2.0\r\nHost: x\r\n\r\n")
    assert_json_error(responses(data)[0], 505)
    data, _ = raw(server, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n")
    assert_json_error(responses(data)[0], 431)
    data, _ = raw(server, b"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n")
    assert_json_error(responses(data)[0], 400)


def test_nul_byte_in_header_value_400(server):
    data, closed = raw(server, b"GET / HTTP/1.1\r\nHost: x\r\nX-Opaque-Id: ab\x00cd\r\n\r\n")
    doc = assert_json_error(responses(data)[0], 400)
    assert "NUL" in doc["error"]["reason"]
    assert closed


def test_pipelining_keeps_order(server):
    reqs = b"".join(b"GET /_cluster/health?x=%d HTTP/1.1\r\nHost: x\r\nX-Opaque-Id: r%d\r\n\r\n"
                    % (i, i) for i in range(5))
    data, _ = raw(server, reqs + b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    rs = responses(data)
    assert [r[0] for r in rs] == [200] * 6
    assert [r[1].get("x-opaque-id") for r in rs[:5]] == ["r%d" % i for i in range(5)]
    assert rs[5][1].get("connection") == "close"


def test_head_has_length_but_no_body(server):
    data, _ = raw(server, b"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head = data.partition(b"\r\n\r\n")
    assert head[0].startswith(b"HTTP/1.1 200") and head[2] == b""


def test_expect_100_continue(server):
    body = b'{"query":{"match_all":{}}}'
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(b"POST /_search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        first = s.recv(1000)
        assert first.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        s.sendall(body)
        data, _ = read_all(s, 2)
    finally:
        s.close()
    rest = first[len(b"HTTP/1.1 100 Continue\r\n\r\n"):] + data
    assert responses(rest)[0][0] in (200, 404)


def test_gzip_request_body_and_response(small_server):
    idx = "gz-%d" % os.getpid()
    bulk = "".join('{"index":{"_index":"%s","_id":"%d"}}\n{"t":"hello %d"}\n' % (idx, i, i)
                   for i in range(50)).encode()
    st, _, b = small_server.request("POST", "/_bulk?refresh=true", gzip.compress(bulk),
                                    headers={"Content-Type": "application/x-ndjson",
                                             "Content-Encoding": "gzip"})
    assert st == 200 and not b["errors"], b
    data, _ = raw(small_server, b"GET /%s/_count HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n"
                               b"Connection: close\r\n\r\n" % idx.encode())
    st, hdrs, body = responses(data)[0]
    assert st == 200 and hdrs.get("content-encoding") == "gzip"
    assert json.loads(gzip.decompress(body))["count"] == 50
    # A body that is not gzip at all, and one that inflates past the limit.
    st, _, b = small_server.request("POST", "/_bulk", b"not gzip",
                                    headers={"Content-Encoding": "gzip"})
    assert st == 400, b
    st, _, b = small_server.request("POST", "/_bulk", gzip.compress(b" " * (1 << 20)),
                                    headers={"Content-Encoding": "gzip"})
    assert st == 413, b


def test_max_open_connections_refused_promptly(small_server):
    """Connections past http.max_open_connections (40) get a prompt 503 and a close, not a
    wait; once connections close, new ones are served again."""
    socks, served, refused = [], 0, None
    try:
        for _ in range(60):
            s = socket.create_connection(("127.0.0.1", small_server.port), timeout=10)
            socks.append(s)
            t0 = time.time()
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            first = s.recv(65536)
            if first.startswith(b"HTTP/1.1 200"):
                served += 1
                continue
            more, closed = read_all(s, 5)
            refused = (first + more, closed, time.time() - t0)
            break
    finally:
        for s in socks:
            s.close()
    assert 30 <= served <= 40, served  # (the fixture's own pooled connection may hold one)
    assert refused is not None
    data, closed, took = refused
    assert closed and took < 4
    assert_json_error(responses(data)[0], 503)
    for _ in range(50):  # the slots free up once the server has seen the closes
        data, _ = raw(small_server, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        if data.startswith(b"HTTP/1.1 200"):
            break
        time.sleep(0.1)
    assert data.startswith(b"HTTP/1.1 200")


def rss_anon_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


def test_many_idle_keepalive_connections_are_cheap(server):
    """2,000 idle keep-alive connections (past the old ~1,020 ceiling): all served, and the
    server's anonymous memory grows by far less than the 179 MB libmicrohttpd took."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2300:
        pytest.skip("file descriptor limit too low for the client side")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2300), hard))
    raw(server, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    before = rss_anon_kb(server.proc.pid)
    socks = []
    try:
        for i in range(2000):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
            if i % 100 == 99:
                for t in socks[-100:]:
                    assert t.recv(65536).startswith(b"HTTP/1.1 200")
        grown_mb = (rss_anon_kb(server.proc.pid) - before) / 1024.0
        data, _ = raw(server, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 200")
    finally:
        for s in socks:
            s.close()
    assert grown_mb < 40, grown_mb


def test_no_connection_waits_on_a_busy_worker(server):
    """A request that blocks its worker (a health wait that times out after 3 s) must not hold
    up requests on other open connections: any free worker serves any ready connection. With
    libmicrohttpd's pool, the connections accepted by the blocked thread waited for it."""
    conns = [socket.create_connection(("127.0.0.1", server.port), timeout=30)
             for _ in range(17)]
    try:
        for s in conns:  # accepted and served once: each now belongs to some worker
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
        blocker, others = conns[0], conns[1:]
        blocker.sendall(b"GET /_cluster/health/no-such-index-%d?wait_for_status=green&timeout=3s"
                        b" HTTP/1.1\r\nHost: x\r\n\r\n" % os.getpid())
        time.sleep(0.2)
        for s in others:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        for s in others:
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
        # Every other connection was answered while the blocker is still waiting.
        blocker.setblocking(False)
        try:
            early = blocker.recv(65536)
        except BlockingIOError:
            early = b""
        assert early == b"", early
        blocker.settimeout(30)
        assert blocker.recv(65536).startswith(b"HTTP/1.1")
    finally:
        for s in conns:
            s.close()


def test_slow_clients_are_dropped():
    """With http.timeout 1s: an idle keep-alive connection, a head that stops half way and a
    head trickled one byte at a time (which an inactivity timer would never end) are all
    closed by the server within a few timeouts, while it keeps serving."""
    tmp = tempfile.mkdtemp(prefix="scry-e2e-slow-")
    srv = Server(os.path.join(tmp, "data"), ["--timeout", "1s"]).start()
    try:
        idle = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        idle.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert idle.recv(65536).startswith(b"HTTP/1.1 200")
        half = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        half.sendall(b"GET / HTTP/1.1\r\nHo")
        trickle = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        closed_after = None
        t0 = time.time()
        for i, b in enumerate(head):
            try:
                trickle.sendall(bytes([b]))
            except (BrokenPipeError, ConnectionResetError):
                closed_after = i
                break
            time.sleep(0.05)
        assert closed_after is not None, "a trickled head was never cut off"
        assert time.time() - t0 < 8
        for s in (idle, half):
            data, closed = read_all(s, 8)
            assert closed, data
        data, _ = raw(srv, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert data.startswith(b"HTTP/1.1 200")
    finally:
        assert srv.stop() == 0, srv.read_log()
