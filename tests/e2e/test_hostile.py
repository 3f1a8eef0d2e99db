"""Hostile inputs: each gets a 4xx (or a clean 200 for what is valid) and the server keeps
serving."""
import socket
import time

from conftest import assert_error


def alive(server):
    st, h, b = server.request("GET", "/")
    assert st == 200 and b["tagline"] == "You Know, for Search"


def test_malformed_json(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    for body in ('{"query": ', '{"query": {"match_all": {}}}}', "[1,2", "nope", '{"a":}'):
        st, h, b = server.request("POST", "/%s/_search" % fresh_index, body)
        assert st == 400, (body, b)
        assert b["error"]["type"] in ("x_content_parse_exception", "parse_exception",
                                      "parsing_exception"), b
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, '{\n  "query": {\n    "x" ')
    assert st == 400 and "[3:" in b["error"]["reason"], b
    alive(server)


def test_invalid_utf8(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    st, h, b = server.request("POST", "/%s/_search" % fresh_index,
                              b'{"query":{"match":{"t":"\xff\xfe\xc3"}}}')
    assert 400 <= st < 500, b
    st, h, b = server.request("PUT", "/%s/_doc/1" % fresh_index, b'{"t":"\xff\xfe"}')
    assert 400 <= st < 500, b
    alive(server)


def test_deep_nesting(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    deep = "[" * 10000 + "]" * 10000
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, '{"query":' + deep + "}")
    assert 400 <= st < 500, b
    q = '{"bool":{"must":' * 5000 + '{"match_all":{}}' + "}}" * 5000
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, '{"query":' + q + "}")
    assert 400 <= st < 500
    alive(server)


def test_many_clauses(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    should = [{"term": {"t": "w%d" % i}} for i in range(5000)]
    st, h, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"bool": {"should": should}}})
    assert st == 400, b
    assert "maxClauseCount" in b["error"]["reason"]
    alive(server)


def test_giant_term(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    st, h, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"term": {"t": "x" * 1000000}}})
    assert st < 500, b
    alive(server)


def test_huge_body_413(server):
    big = b"x" * (101 * 1024 * 1024)
    try:
        st, h, b = server.request("POST", "/_bulk", big)
        assert st == 413
    except Exception:
        pass  # the server may close the connection while we are still sending
    alive(server)


def test_truncated_body(server):
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"POST /_search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 1000\r\n\r\n{\"query\":")
    s.close()
    alive(server)


def test_slow_loris_does_not_block(server):
    socks = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    t0 = time.time()
    alive(server)
    assert time.time() - t0 < 5
    for s in socks:
        s.close()


def test_many_connections(server):
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(200)]
    alive(server)
    for s in socks:
        s.close()
    alive(server)


def test_garbage_request_line(server):
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"\x00\x01\x02 GARBAGE\r\n\r\n")
    s.settimeout(5)
    try:
        s.recv(1000)
    except OSError:
        pass
    s.close()
    alive(server)


def test_bad_query_params(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    st, h, b = server.request("GET", "/%s/_search?size=abc" % fresh_index)
    assert st == 400
    st, h, b = server.request("GET", "/%s/_search?from=-5" % fresh_index)
    assert st == 400
    st, h, b = server.request("GET", "/%s/_search?size=20000" % fresh_index)
    assert st == 400 and "Result window is too large" in b["error"]["reason"]
    alive(server)


def test_unknown_query_and_field(server, fresh_index):
    server.request("PUT", "/" + fresh_index)
    st, h, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"no_such_query": {}}})
    assert st == 400
    assert_error(b, 400, "parsing_exception")
    st, h, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"match": {"t": {"query": "x", "bogus": 1}}}})
    assert st == 400
    assert_error(b, 400, "parsing_exception")
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {"qery": {}})
    assert st == 400
    assert_error(b, 400, "parsing_exception")


def test_circuit_breaker_429(tmp_path):
    """A server with a 4 MB memory budget refuses a 5 MB body (in-flight requests breaker) and a
    query needing more than its reservation (request breaker) with 429, and keeps serving."""
    from conftest import Server
    s = Server(str(tmp_path / "data"), ["--memory", "4mb"]).start()
    try:
        body = '{"index":{"_index":"b"}}\n{"t":"%s"}\n' % ("x" * (5 << 20))
        st, h, b = s.request("POST", "/_bulk", body)
        assert st == 429, b
        assert_error(b, 429, "circuit_breaking_exception")
        st, h, b = s.request("GET", "/_nodes/stats")
        node = next(iter(b["nodes"].values()))
        assert node["breakers"]["in_flight_requests"]["tripped"] >= 1
        assert node["breakers"]["in_flight_requests"]["estimated_size_in_bytes"] == 0
        st, h, b = s.request("PUT", "/b/_doc/1", {"t": "small"})
        assert st == 201, b
        # The request breaker: a query whose memory exceeds the budget fails with 429 (as the
        # all-shards-failed error with the breaker as root cause); small queries still work.
        s.request("PUT", "/big", {"settings": {"number_of_shards": 1, "max_result_window": 100000},
                                  "mappings": {"properties": {"n": {"type": "long"}}}})
        for start in range(0, 80000, 250):
            body = "".join('{"index":{}}\n{"n":%d}\n' % i for i in range(start, start + 250))
            st, h, b = s.request("POST", "/big/_bulk", body)
            assert st == 200 and not b["errors"]
        s.request("POST", "/big/_refresh")
        st, h, b = s.request("POST", "/big/_search", {"size": 80000, "sort": [{"n": "desc"}],
                                                      "_source": False})
        assert st == 429, str(b)[:300]
        assert b["error"]["root_cause"][0]["type"] == "circuit_breaking_exception"
        st, h, b = s.request("GET", "/_nodes/stats")
        node = next(iter(b["nodes"].values()))
        assert node["breakers"]["request"]["tripped"] >= 1
        assert node["breakers"]["request"]["estimated_size_in_bytes"] == 0
        st, h, b = s.request("GET", "/big/_count")
        assert st == 200 and b["count"] == 80000
    finally:
        assert s.stop() == 0
