"""Security: HTTP basic authentication (`scry serve --users FILE`, lines made by `scry passwd`)
and TLS (`--tls-cert/--tls-key`) against the real binary, with the official client too."""
import base64
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile

import pytest

from conftest import Server, scry_bin, assert_error


def basic(user, password):
    tok = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
    return {"Authorization": "Basic " + tok}


def passwd(name, password):
    r = subprocess.run([scry_bin(), "passwd", name], input=(password + "\n").encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 0, r.stderr
    line = r.stdout.decode().strip()
    assert line.startswith(name + ":$6$"), line
    return line


@pytest.fixture(scope="module")
def tmp():
    d = tempfile.mkdtemp(prefix="scry-sec-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def users_file(tmp):
    path = os.path.join(tmp, "users")
    with open(path, "w") as f:
        f.write("# scry users\n\n")
        f.write(passwd("alice", "s3cret pass") + "\n")
        f.write(passwd("bob", "hunter2") + "\n")
    return path


@pytest.fixture(scope="module")
def auth_server(tmp, users_file):
    s = Server(os.path.join(tmp, "auth-data"), ["--users", users_file]).start()
    yield s
    rc = s.stop()
    assert rc == 0, "server exit code %s; log:\n%s" % (rc, s.read_log())


@pytest.fixture(scope="module")
def cert(tmp):
    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    key, crt = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj",
                    "/CN=localhost", "-days", "1", "-keyout", key, "-out", crt],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    return crt, key


@pytest.fixture(scope="module")
def tls_server(tmp, cert, users_file):
    crt, key = cert
    s = Server(os.path.join(tmp, "tls-data"),
               ["--tls-cert", crt, "--tls-key", key, "--users", users_file]).start()
    yield s
    rc = s.stop()
    assert rc == 0, "server exit code %s; log:\n%s" % (rc, s.read_log())


def test_passwd_salts_and_rejects_bad_names():
    a, b = passwd("carol", "same"), passwd("carol", "same")
    assert a != b  # random salt
    r = subprocess.run([scry_bin(), "passwd", "a:b"], input=b"x\n", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 2
    r = subprocess.run([scry_bin(), "passwd", "dave"], input=b"", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    assert r.returncode == 2


def check_401(status, headers, body, reason):
    assert status == 401, body
    assert headers["WWW-Authenticate"] == 'Basic realm="security" charset="UTF-8"'
    assert headers["X-Elastic-Product"] == "Elasticsearch"
    assert_error(body, 401, "security_exception")
    assert body["error"]["reason"] == reason


def test_missing_credentials(auth_server):
    st, h, body = auth_server.request("GET", "/_cluster/health")
    check_401(st, h, body, "missing authentication credentials for REST request "
                           "[/_cluster/health]")
    # A request with a body is refused too, and nothing is indexed.
    st, h, body = auth_server.request("PUT", "/noauth/_doc/1", {"a": 1})
    check_401(st, h, body, "missing authentication credentials for REST request "
                           "[/noauth/_doc/1]")
    # Not a Basic header.
    st, h, body = auth_server.request("GET", "/", headers={"Authorization": "Bearer abc"})
    check_401(st, h, body, "missing authentication credentials for REST request [/]")


def test_wrong_credentials(auth_server):
    for user, pw in [("alice", "wrong"), ("alice", "s3cret pas"), ("alice", "s3cret pass "),
                     ("bob", "s3cret pass"), ("mallory", "hunter2"), ("alice", "")]:
        st, h, body = auth_server.request("GET", "/_cat/indices", headers=basic(user, pw))
        check_401(st, h, body, "unable to authenticate user [%s] for REST request "
                               "[/_cat/indices]" % user)


def test_right_credentials(auth_server):
    for _ in range(3):  # the second and later checks hit the credentials cache
        st, _, body = auth_server.request("GET", "/", headers=basic("alice", "s3cret pass"))
        assert st == 200 and body["tagline"] == "You Know, for Search"
    hdr = basic("bob", "hunter2")
    st, _, body = auth_server.request("PUT", "/sec-idx/_doc/1?refresh=true", {"t": "hello"},
                                      headers=hdr)
    assert st in (200, 201), body
    st, _, body = auth_server.request("GET", "/sec-idx/_search?q=t:hello", headers=hdr)
    assert st == 200 and body["hits"]["total"]["value"] == 1
    # A cached success for alice does not let a wrong password through.
    st, h, body = auth_server.request("GET", "/", headers=basic("alice", "hunter2"))
    assert st == 401


def test_official_client_http_auth(auth_server):
    es_mod = pytest.importorskip("elasticsearch")
    es = es_mod.Elasticsearch([auth_server.url], http_auth=("alice", "s3cret pass"))
    try:
        assert es.info()["tagline"] == "You Know, for Search"
        es.index(index="sec-client", id="1", document={"t": "x"}, refresh=True)
        assert es.count(index="sec-client")["count"] == 1
    finally:
        es.close()
    bad = es_mod.Elasticsearch([auth_server.url], http_auth=("alice", "nope"))
    try:
        with pytest.raises(es_mod.AuthenticationException):
            bad.info()
    finally:
        bad.close()


def https_request(server, crt, method, path, body=None, headers=None):
    ctx = ssl.create_default_context(cafile=crt)
    conn = http.client.HTTPSConnection("localhost", server.port, context=ctx, timeout=30)
    try:
        hdrs = {"Content-Type": "application/json"}
        hdrs.update(headers or {})
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers=hdrs)
        r = conn.getresponse()
        data = r.read()
        return r.status, r.headers, json.loads(data) if data else None
    finally:
        conn.close()


def test_tls_requests(tls_server, cert):
    crt, _ = cert
    st, _, body = https_request(tls_server, crt, "GET", "/", headers=basic("bob", "hunter2"))
    assert st == 200 and body["tagline"] == "You Know, for Search"
    st, h, body = https_request(tls_server, crt, "GET", "/")
    check_401(st, h, body, "missing authentication credentials for REST request [/]")
    # Keep-alive over TLS: several requests on one connection.
    ctx = ssl.create_default_context(cafile=crt)
    conn = http.client.HTTPSConnection("localhost", tls_server.port, context=ctx, timeout=30)
    for i in range(5):
        conn.request("PUT", "/tls-idx/_doc/%d" % i, body=json.dumps({"n": i}),
                     headers=dict(basic("bob", "hunter2"), **{"Content-Type": "application/json"}))
        r = conn.getresponse()
        assert r.status in (200, 201), r.read()
        r.read()
    conn.close()
    # An unknown CA is refused by the client (the server really speaks TLS with our cert).
    with pytest.raises(ssl.SSLError):
        c = http.client.HTTPSConnection("localhost", tls_server.port,
                                        context=ssl.create_default_context(), timeout=30)
        try:
            c.request("GET", "/")
        finally:
            c.close()


def test_plain_http_to_tls_port_fails_cleanly(tls_server, cert):
    crt, _ = cert
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", tls_server.port), timeout=30)
        try:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            data = b""
            while True:
                try:
                    chunk = s.recv(4096)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                data += chunk
            assert b"HTTP/1.1 200" not in data
        finally:
            s.close()
    assert tls_server.alive()
    st, _, body = https_request(tls_server, crt, "GET", "/", headers=basic("alice", "s3cret pass"))
    assert st == 200


def test_pipelined_requests_over_tls(tls_server, cert):
    """Five requests written back to back as separate TLS records before any answer is read:
    the edge-triggered transport reads until the socket would block (one TLS record per read,
    so a short read does not mean the socket is empty) and answers all five, in order."""
    crt, _ = cert
    ctx = ssl.create_default_context(cafile=crt)
    raw_sock = socket.create_connection(("127.0.0.1", tls_server.port), timeout=30)
    s = ctx.wrap_socket(raw_sock, server_hostname="localhost")
    try:
        auth = "Authorization: %s\r\n" % basic("bob", "hunter2")["Authorization"]
        for k in range(5):
            s.sendall(("GET / HTTP/1.1\r\nHost: localhost\r\n%sX-Opaque-Id: p%d\r\n%s\r\n"
                       % (auth, k, "Connection: close\r\n" if k == 4 else "")).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    heads = [h for h in data.split(b"HTTP/1.1 ")[1:]]
    assert [h[:3] for h in heads] == [b"200"] * 5, data[:300]
    assert [h.split(b"X-Opaque-Id: ")[1][:2] for h in heads] == [b"p%d" % k for k in range(5)]


def test_official_client_over_tls(tls_server, cert):
    es_mod = pytest.importorskip("elasticsearch")
    crt, _ = cert
    es = es_mod.Elasticsearch(["https://localhost:%d" % tls_server.port], ca_certs=crt,
                              http_auth=("alice", "s3cret pass"))
    try:
        assert es.info()["tagline"] == "You Know, for Search"
    finally:
        es.close()


def run_serve(tmp, *args):
    return subprocess.run([scry_bin(), "serve", "--data", os.path.join(tmp, "bad-data"),
                           "--port", "0"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60)


def test_bad_security_config_exits(tmp, cert, users_file):
    crt, key = cert
    cases = [
        (["--users", os.path.join(tmp, "nope")], b"users file"),
        (["--tls-cert", os.path.join(tmp, "nope.pem"), "--tls-key", key], b"nope.pem"),
        (["--tls-cert", crt], b"--tls-key"),
        (["--tls-cert", users_file, "--tls-key", key], b"invalid TLS certificate"),
        (["--tls-cert", crt, "--tls-key", crt], b"invalid TLS certificate"),
    ]
    bad_users = os.path.join(tmp, "bad-users")
    with open(bad_users, "w") as f:
        f.write("alice:plaintext\n")
    cases.append((["--users", bad_users], b"line 1"))
    for args, needle in cases:
        r = run_serve(tmp, *args)
        assert r.returncode == 2, (args, r.stdout)
        assert needle in r.stdout, (args, r.stdout)
