"""End-to-end fixtures: start the real `scry serve` binary on a free loopback port with a
temporary data folder, and talk to it over HTTP (urllib3) or the official client.

The binary is $SCRY_BIN, else build/debug/scry relative to the repository root."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import urllib3

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def scry_bin():
    return os.environ.get("SCRY_BIN", os.path.join(ROOT, "build", "debug", "scry"))


class Server:
    """A running scry server; .url is http://127.0.0.1:PORT."""

    def __init__(self, data_dir, extra_args=()):
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.proc = None
        self.port = None
        self.log_path = data_dir.rstrip("/") + ".log"
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(30))

    def start(self, wait_recovered=True):
        """Starts the server. The port answers at once while the indices found in the data
        folder recover in the background; with wait_recovered (the default) this waits until
        no shard is INITIALIZING any more (as a client waits for health), so tests that restart
        a server see their indices."""
        port_file = self.data_dir + ".port"
        if os.path.exists(port_file):
            os.unlink(port_file)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [scry_bin(), "serve", "--data", self.data_dir, "--port", "0",
             "--port-file", port_file, "--threads", "4"] + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    txt = f.read().strip()
                if txt:
                    self.port = int(txt)
                    break
            if self.proc.poll() is not None:
                raise RuntimeError("scry serve exited with %s; log:\n%s" %
                                   (self.proc.returncode, self.read_log()))
            time.sleep(0.02)
        else:
            raise RuntimeError("scry serve did not start; log:\n" + self.read_log())
        self.url = "http://127.0.0.1:%d" % self.port
        if wait_recovered:
            self.wait_recovered()
        return self

    def wait_recovered(self, timeout=120):
        """Polls _cluster/health until initializing_shards is 0 (or the server asks for
        credentials or speaks TLS only: the caller then talks to it its own way)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                st, _, b = self.request("GET", "/_cluster/health")
            except urllib3.exceptions.HTTPError:
                return  # plain HTTP to a TLS port: the connection is refused

            if st != 200 or not isinstance(b, dict) or b.get("initializing_shards", 0) == 0:
                return
            time.sleep(0.02)
        raise RuntimeError("shards still recovering after %ds; log:\n%s" %
                           (timeout, self.read_log()))

    def read_log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-5000:]
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def request(self, method, path, body=None, headers=None, raw=False):
        """Returns (status, headers, parsed JSON or text). body: dict/list (JSON), str/bytes
        (sent as is)."""
        hdrs = {"Content-Type": "application/json"}
        if headers:
            hdrs.update(headers)
        data = None
        if body is not None:
            if isinstance(body, (dict, list)):
                data = json.dumps(body).encode()
            elif isinstance(body, str):
                data = body.encode()
            else:
                data = body
        r = self.http.request(method, self.url + path, body=data, headers=hdrs)
        text = r.data
        if raw:
            return r.status, r.headers, text
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text.decode("utf-8", "replace")
        return r.status, r.headers, parsed


@pytest.fixture(scope="session")
def server():
    tmp = tempfile.mkdtemp(prefix="scry-e2e-")
    s = Server(os.path.join(tmp, "data")).start()
    yield s
    rc = s.stop()
    assert rc == 0, "server exit code %s; log:\n%s" % (rc, s.read_log())


@pytest.fixture()
def fresh_index(server):
    """A unique index name; deleted after the test."""
    name = "t-%d-%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)
    yield name
    server.request("DELETE", "/" + name)


def bulk_body(index, docs, start=0):
    """The NDJSON that indexes docs with ids start, start + 1, ..."""
    lines = []
    for i, d in enumerate(docs, start):
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps(d))
    return "\n".join(lines) + "\n"


def assert_error(body, status, etype):
    assert body["status"] == status, body
    assert body["error"]["type"] == etype, body
    assert body["error"]["root_cause"][0]["type"] == etype, body
    assert isinstance(body["error"]["reason"], str)


def make_index(server, name, body, docs, headers=None, segments=1):
    """(Re)creates index `name` with the create-index `body` and bulk-loads `docs` (ids "0",
    "1", ... in order) with refresh=true (the bulk requests with `headers`) in `segments`
    parts, so each shard gets up to that many segments; asserts every step succeeds."""
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, body)
    assert st == 200, b
    cuts = [len(docs) * k // segments for k in range(segments + 1)]
    for lo, hi in zip(cuts, cuts[1:]):
        st, _, b = server.request("POST", "/_bulk?refresh=true",
                                  bulk_body(name, docs[lo:hi], lo), headers=headers)
        assert st == 200 and not b["errors"], b


def search_ok(server, index, body):
    """POST /{index}/_search; asserts 200 and returns the response body."""
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b
