"""The epoll transport's readiness design over raw sockets: connections registered once,
edge-triggered, held by one worker at a time through an atomic state, and closed connections'
slots reused under a new generation. A response larger than the socket buffers waits for
write readiness and resumes; pipelined requests are all answered; connections opened and
dropped in every state while others are served never get another connection's answer."""
import os
import random
import socket
import threading
import time

from test_http_protocol import read_all, responses


def test_large_pipelined_responses_to_a_late_reader(server, fresh_index):
    """Three pipelined searches whose answers (~2 MB each) do not fit the socket buffers,
    read only after a pause: the connection waits for write readiness and each answer comes
    whole and in order."""
    text = " ".join("w%d" % i for i in range(40000))  # ~250 KB per document
    body = "".join('{"index":{"_id":"%d"}}\n{"t":"%s"}\n' % (i, text) for i in range(8))
    st, _, b = server.request("POST", "/%s/_bulk?refresh=true" % fresh_index, body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    q = b'{"size":8,"query":{"match_all":{}}}'
    req = b"".join(b"POST /%s/_search HTTP/1.1\r\nHost: x\r\nX-Opaque-Id: r%d\r\n"
                   b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                   % (fresh_index.encode(), k, len(q), q) for k in range(3))
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.sendall(req + b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        time.sleep(0.5)
        data, closed = read_all(s, 30)
    finally:
        s.close()
    assert closed
    rs = responses(data)
    assert [r[0] for r in rs] == [200, 200, 200, 200]
    assert [r[1].get("x-opaque-id") for r in rs[:3]] == ["r0", "r1", "r2"]
    for r in rs[:3]:
        assert len(r[2]) > 8 * 250000 and r[2].count(b'"_id"') == 8


def test_connection_churn_never_crosses_answers(server):
    """Four threads open connections and drop them in every state (before sending, half way
    through a head, with a request unanswered, after the answer) while a keep-alive connection
    asks with a distinct X-Opaque-Id each time: every answer it gets is its own, and the server
    keeps serving. Slots of the dropped connections are reused meanwhile."""
    seed = int(os.environ.get("SCRY_TEST_SEED", random.randrange(1 << 30)))
    print("seed", seed)
    errors = []

    def churn(k):
        rnd = random.Random(seed + k)
        try:
            for _ in range(150):
                s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
                try:
                    how = rnd.randrange(4)
                    if how == 1:
                        s.sendall(b"GET / HTTP/1.1\r\nHo")
                    elif how >= 2:
                        s.sendall(b"GET /_cluster/health HTTP/1.1\r\nHost: x\r\n\r\n")
                    if how == 3:
                        got = s.recv(65536)
                        if not got.startswith(b"HTTP/1.1 200"):
                            errors.append(got[:200])
                finally:
                    s.close()
        except OSError as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=churn, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    try:
        n = 0
        while any(t.is_alive() for t in threads) or n < 50:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Opaque-Id: keep-%d\r\n\r\n" % n)
            data = b""
            while b"\r\n\r\n" not in data or len(responses_or_none(data)) < 1:
                chunk = s.recv(65536)
                assert chunk, "the keep-alive connection was closed"
                data += chunk
            (st, hdrs, _), = responses(data)
            assert st == 200 and hdrs.get("x-opaque-id") == "keep-%d" % n, (n, hdrs)
            n += 1
    finally:
        s.close()
        for t in threads:
            t.join()
    assert not errors, errors[:3]
    st, _, b = server.request("GET", "/")
    assert st == 200


def responses_or_none(data):
    """responses(data) when data holds whole responses, else []."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length" and len(rest) < int(v):
            return []
    return responses(data) if sep else []
