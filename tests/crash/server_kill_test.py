#!/usr/bin/python3
"""Server-level crash test (issue 6, Durability): kill -9 the real `scry serve` while clients
stream writes, restart it on the same data folder, and check that nothing acknowledged was lost
and that the index is consistent.

Each cycle: writer threads (each owning a disjoint range of ids, so the order of writes to an id
is known) send `_bulk` requests (to /_bulk and /{index}/_bulk, sometimes with refresh) mixing
index (explicit ids, overwriting), create, update (partial doc, sometimes doc_as_upsert) and
delete, plus single-document PUT _doc, PUT _create, POST _update and DELETE with refresh=true,
wait_for or false (with refresh, the write must be searchable when acknowledged); a chaos thread
calls _refresh/_flush/_forcemerge and a metadata thread creates and deletes side indices. Every
write carries a unique token (field `tok`, keyword). A model of each id follows the acknowledged
results: the exact per-item status is predicted (201/200/409/404), _version must grow by one per
write to a live doc and (_primary_term, _seq_no) must grow per id; any mismatch fails the test.
At a random moment the server gets SIGKILL (sometimes while it shuts down after a SIGTERM,
sometimes again during its restart); the request in flight at that moment is "uncertain": for
each id it touches, any prefix of its operations on that id may have been applied.

After restart the checks are:
  - realtime _mget of every id: the document is in an allowed state (the last acknowledged one,
    or one that an in-flight op could have produced); an acknowledged doc missing, an old version,
    or a deleted doc back is reported as a lost acknowledged write;
  - after _refresh: `_count` equals the number of live ids; match_all (size > count,
    track_total_hits) returns exactly the live ids, no duplicate _id, each with its _source;
    an `ids` query and a `terms` query on every live doc's current token find all of them;
    `terms` on superseded tokens (overwritten, updated or deleted versions) finds nothing;
    _stats docs.count and a range count on `v` agree; dynamically mapped fields keep their
    types and are searchable through term queries; side indices exist
    exactly as acknowledged (with their shard count and document).
After the last kill: graceful SIGTERM must exit 0, and a final restart is verified again.

Environment: SCRY_CRASH_SEED (replay), SCRY_SERVER_CRASH_KILLS (default 20), SCRY_BIN (server
binary, default build/debug/scry), SCRY_SERVER_CRASH_WRITERS (default 2), SCRY_CRASH_KEEP=1 keeps
the data folder. Standard library only. Exit status 0 on success, 1 on any lost write or
inconsistency (with what was lost), 2 on a harness problem (server would not start)."""
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INDEX = "crash"
IDS_PER_WRITER = 300
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu k\u00e4se stra\u00dfe \u65e5\u672c caf\u00e9 \"quoted\" back\\slash tab\there").split(" ")


class Failure(Exception):
    pass


class HarnessError(Exception):
    pass


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- HTTP


def http_request(port, method, path, body=None, timeout=60, ndjson=False, conn=None):
    """One request; returns (status, parsed body or None). Raises OSError/HTTPException on a
    transport failure. Uses `conn` (kept alive) when given, else a fresh connection."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {}
        data = None
        if body is not None:
            if ndjson:
                data = body.encode("utf-8")
                headers["Content-Type"] = "application/x-ndjson"
            else:
                data = json.dumps(body).encode("utf-8")
                headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = {"_unparsed": raw[:500].decode("utf-8", "replace")}
        return resp.status, parsed
    finally:
        if own:
            conn.close()


# ---------------------------------------------------------------- server process


class Server:
    def __init__(self, binary, data_dir, log_path):
        self.binary = binary
        self.data_dir = data_dir
        self.log_path = log_path
        self.port_file = data_dir.rstrip("/") + ".port"
        self.proc = None
        self.port = None

    def spawn(self):
        if os.path.exists(self.port_file):
            os.unlink(self.port_file)
        with open(self.log_path, "ab") as lf:
            lf.write(b"----- start\n")
            self.proc = subprocess.Popen(
                [self.binary, "serve", "--data", self.data_dir, "--port", "0",
                 "--port-file", self.port_file, "--threads", "4"],
                stdout=lf, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise Failure("server exited by itself with status %s during start-up; log:\n%s"
                              % (self.proc.returncode, self.log_tail()))
            txt = ""
            if os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    txt = f.read().strip()
            if txt:
                self.port = int(txt)
                break
            time.sleep(0.01)
        else:
            raise HarnessError("server did not write its port within %ds; log:\n%s"
                               % (timeout, self.log_tail()))
        while time.time() < deadline:
            try:
                st, b = http_request(self.port, "GET",
                                     "/_cluster/health?wait_for_status=yellow&timeout=10s",
                                     timeout=15)
                if st == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            if self.proc.poll() is not None:
                raise Failure("server exited by itself with status %s during start-up; log:\n%s"
                              % (self.proc.returncode, self.log_tail()))
            time.sleep(0.02)
        raise HarnessError("server not healthy within %ds; log:\n%s" % (timeout, self.log_tail()))

    def start(self):
        self.spawn()
        self.wait_ready()

    def check_alive(self):
        if self.proc.poll() is not None:
            raise Failure("server died on its own (status %s) before the planned kill; log:\n%s"
                          % (self.proc.returncode, self.log_tail()))

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def terminate(self, timeout=60):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            raise Failure("server did not exit within %ds of SIGTERM" % timeout)
        self.proc = None
        return rc

    def log_tail(self, n=6000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return ""


# ---------------------------------------------------------------- model


def apply_op(op, prior):
    """(expected item status, new state) of `op` applied to `prior` (a source dict or None)."""
    kind = op["kind"]
    if kind == "index":
        return (201 if prior is None else 200), op["doc"]
    if kind == "create":
        return (201, op["doc"]) if prior is None else (409, prior)
    if kind == "update":
        if prior is None:
            return (201, op["doc"]) if op["upsert"] else (404, None)
        merged = dict(prior)
        merged.update(op["doc"])  # updates only touch top-level scalar fields
        return 200, merged
    if kind == "delete":
        return (404, None) if prior is None else (200, None)
    raise AssertionError(kind)


def describe(state):
    if state is None:
        return "absent"
    return json.dumps(state, ensure_ascii=False, sort_keys=True)


class Writer:
    """One client thread and the model of the ids it owns."""

    def __init__(self, wid, seed, ids):
        self.wid = wid
        self.seed = seed
        self.ids = ids
        self.hot = ids[: len(ids) // 5]
        self.state = {i: None for i in ids}   # last known state (certain)
        self.version = {i: None for i in ids}  # _version of a live doc (None: absent/unknown)
        self.seqno = {i: (0, -1) for i in ids}  # highest acknowledged (_primary_term, _seq_no)
        self.uncertain = []                   # ops of the request in flight at the kill
        self.history = {}                     # id -> recent (request, op, tok, status) for reports
        self.where = ""                       # the current request, for the history
        self.tokens = {}                      # tok -> id, every token ever sent
        self.failures = []
        self.acked_ops = 0
        self.requests = 0
        self.counter = 0
        self.cycle = 0
        self.unexpected = []

    # -- content

    def make_doc(self, rng, did, tok, partial=False):
        doc = {"key": did, "tok": tok, "v": self.counter}
        if partial:
            if rng.random() < 0.5:
                doc["u"] = rng.choice(WORDS)
            return doc
        doc["body"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
        for _ in range(rng.randint(0, 3)):
            k = rng.randint(0, 11)
            kind = k % 4
            doc["f%d" % k] = (rng.randint(-10 ** 12, 10 ** 12) if kind == 0 else
                              rng.randint(0, 4096) / 8.0 if kind == 1 else
                              rng.random() < 0.5 if kind == 2 else
                              rng.choice(WORDS))
        if rng.random() < 0.2:
            doc["o"] = {"a": rng.randint(0, 100), "b": [rng.choice(WORDS), rng.choice(WORDS)]}
        if rng.random() < 0.05:
            doc["big"] = "x" * rng.randint(1000, 20000)
        return doc

    def make_op(self, rng):
        did = rng.choice(self.hot) if rng.random() < 0.5 else rng.choice(self.ids)
        self.counter += 1
        tok = "w%d-%d" % (self.wid, self.counter)
        r = rng.random()
        if r < 0.45:
            op = {"kind": "index", "id": did, "doc": self.make_doc(rng, did, tok)}
        elif r < 0.60:
            op = {"kind": "create", "id": did, "doc": self.make_doc(rng, did, tok)}
        elif r < 0.82:
            upsert = rng.random() < 0.4
            op = {"kind": "update", "id": did, "upsert": upsert,
                  "doc": self.make_doc(rng, did, tok, partial=True)}
        else:
            op = {"kind": "delete", "id": did}
        if "doc" in op:
            self.tokens[tok] = did
        return op

    @staticmethod
    def bulk_lines(op, with_index=True):
        meta = {op["kind"]: {"_index": INDEX, "_id": op["id"]} if with_index else
                {"_id": op["id"]}}
        if op["kind"] == "delete":
            return [json.dumps(meta)]
        if op["kind"] == "update":
            return [json.dumps(meta), json.dumps(Writer.update_body(op), ensure_ascii=False)]
        return [json.dumps(meta), json.dumps(op["doc"], ensure_ascii=False)]

    @staticmethod
    def update_body(op):
        body = {"doc": op["doc"]}
        if op["upsert"]:
            body["doc_as_upsert"] = True
        return body

    # -- acknowledged results

    def note(self, did, what):
        h = self.history.setdefault(did, [])
        h.append(what)
        del h[:-8]

    def record(self, op, status, res):
        did = op["id"]
        self.note(did, "%s %s %s -> %s v%s" % (self.where, op["kind"], op.get("doc", {}).get("tok", ""),
                                             status, res.get("_version")))
        prior = self.state[did]
        want, new = apply_op(op, prior)
        if status != want:
            self.failures.append(
                "writer %d: %s of id %s answered %s but the acknowledged history predicts %s "
                "(state before: %s); reply: %s; history: %s"
                % (self.wid, op["kind"], did, status, want, describe(prior),
                   json.dumps(res)[:400], self.history.get(did)))
        if isinstance(status, int) and 200 <= status < 300:
            self.acked_ops += 1
            ver = res.get("_version")
            if prior is not None and self.version[did] is not None and \
                    ver != self.version[did] + 1:
                self.failures.append(
                    "writer %d: %s of live id %s answered _version %s, the last acknowledged "
                    "version was %s" % (self.wid, op["kind"], did, ver, self.version[did]))
            self.version[did] = ver if new is not None else None
        if "_seq_no" in res:
            sq = (res.get("_primary_term", 0), res["_seq_no"])
            if sq <= self.seqno[did]:
                self.failures.append(
                    "writer %d: %s of id %s got (_primary_term, _seq_no) %s, not above the "
                    "acknowledged %s of an earlier write to it (seq_no reused?)"
                    % (self.wid, op["kind"], did, sq, self.seqno[did]))
            else:
                self.seqno[did] = sq
        self.state[did] = new

    def run(self, port, cycle, stop):
        rng = random.Random("%d/%d/%d" % (self.seed, cycle, self.wid))
        self.cycle = cycle
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            while not stop.is_set() and not self.failures:
                if rng.random() < 0.08:
                    if not self.single(rng, port, conn):
                        return
                elif not self.bulk(rng, port, conn):
                    return
        finally:
            conn.close()

    def bulk(self, rng, port, conn):
        ops = [self.make_op(rng) for _ in range(rng.choice((1, 5, 20, 60)))]
        per_index = rng.random() < 0.3
        body = "\n".join(line for op in ops
                         for line in self.bulk_lines(op, not per_index)) + "\n"
        path = "/%s/_bulk" % INDEX if per_index else "/_bulk"
        refresh = rng.choice((None,) * 8 + ("true", "wait_for"))
        if refresh:
            path += "?refresh=" + refresh
        self.uncertain = ops
        self.where = "c%d %s" % (self.cycle, path)
        try:
            st, b = http_request(port, "POST", path, body, ndjson=True, conn=conn)
        except (OSError, http.client.HTTPException):
            return False
        self.requests += 1
        if st != 200 or not isinstance(b, dict) or len(b.get("items", ())) != len(ops):
            self.unexpected.append("bulk answered HTTP %s: %s" % (st, json.dumps(b)[:300]))
            return False  # stays uncertain: the verification decides
        self.uncertain = []
        for op, item in zip(ops, b["items"]):
            res = item.get(op["kind"], {})
            if res.get("_id") != op["id"]:
                self.failures.append("writer %d: bulk item for id %s answered for id %s: %s"
                                     % (self.wid, op["id"], res.get("_id"), json.dumps(item)))
            self.record(op, res.get("status"), res)
        if refresh:
            return self.check_visible(port, conn, {op["id"] for op in ops}, "_bulk?refresh=" + refresh)
        return True

    def check_visible(self, port, conn, ids, what):
        """After an acknowledged refresh=true|wait_for write: the current version of every id is
        searchable (by its token) and deleted ids are not."""
        ids = sorted(ids)
        toks = [self.state[i]["tok"] for i in ids if self.state[i] is not None]
        try:
            st, b = http_request(port, "POST", "/%s/_search" % INDEX, {
                "query": {"bool": {"filter": [{"ids": {"values": ids}}],
                                   "should": [{"terms": {"tok": toks}}] if toks else [],
                                   "minimum_should_match": 0}},
                "size": 2 * len(ids) + 10, "_source": ["tok"]}, conn=conn)
        except (OSError, http.client.HTTPException):
            return False
        if st != 200:
            return True  # the verification after the restart covers it
        got = sorted((h["_id"], h.get("_source", {}).get("tok")) for h in b["hits"]["hits"])
        want = sorted((i, self.state[i]["tok"]) for i in ids if self.state[i] is not None)
        if got != want:
            self.failures.append("writer %d: %s acknowledged but search shows %s instead of %s; "
                                 "history: %s" % (self.wid, what, got[:20], want[:20],
                                                  {i: self.history.get(i) for i in ids[:5]}))
        return True

    def single(self, rng, port, conn):
        op = self.make_op(rng)
        refresh = rng.choice(("true", "wait_for", "false"))
        did = op["id"]
        self.uncertain = [op]
        self.where = "c%d single?refresh=%s" % (self.cycle, refresh)
        try:
            if op["kind"] == "index":
                st, b = http_request(port, "PUT", "/%s/_doc/%s?refresh=%s" % (INDEX, did, refresh),
                                     op["doc"], conn=conn)
            elif op["kind"] == "create":
                st, b = http_request(port, "PUT", "/%s/_create/%s?refresh=%s"
                                     % (INDEX, did, refresh), op["doc"], conn=conn)
            elif op["kind"] == "update":
                st, b = http_request(port, "POST", "/%s/_update/%s?refresh=%s"
                                     % (INDEX, did, refresh), self.update_body(op), conn=conn)
            else:
                st, b = http_request(port, "DELETE", "/%s/_doc/%s?refresh=%s"
                                     % (INDEX, did, refresh), conn=conn)
        except (OSError, http.client.HTTPException):
            return False
        self.requests += 1
        if st not in (200, 201, 404, 409):
            self.unexpected.append("single %s answered HTTP %s: %s"
                                   % (op["kind"], st, json.dumps(b)[:300]))
            return False
        self.uncertain = []
        self.record(op, st, b if isinstance(b, dict) else {})
        # a refused write (409 create, 404 update) does not refresh, as in Elasticsearch; a
        # not_found delete is a write and does
        if refresh != "false" and (st in (200, 201) or op["kind"] == "delete"):
            return self.check_visible(port, conn, [did], "%s of %s with refresh=%s"
                                      % (op["kind"], did, refresh))
        return True

    def allowed(self, did):
        """States id `did` may be in after the crash: its last acknowledged state, or any state a
        prefix of the in-flight request's operations on it could have produced."""
        states = [self.state[did]]
        cur = self.state[did]
        for op in self.uncertain:
            if op["id"] == did:
                _, cur = apply_op(op, cur)
                states.append(cur)
        return states


class Meta:
    """Index-level metadata under the crash: creates side indices (1-3 shards, one document
    each), deletes some and re-creates deleted names; acknowledged creations/deletions must
    survive, and a re-created index must not show the old one's document."""

    def __init__(self, seed):
        self.seed = seed
        self.indices = {}       # name -> {"shards": k, "exists": bool, "doc": source or None}
        self.uncertain = None   # (name, action) in flight at the kill
        self.next = 0
        self.failures = []

    def run(self, port, cycle, stop):
        rng = random.Random("%d/%d/meta" % (self.seed, cycle))
        while not stop.is_set():
            time.sleep(rng.uniform(0.02, 0.3))
            live = sorted(n for n, m in self.indices.items() if m["exists"])
            try:
                if live and rng.random() < 0.3:
                    name = rng.choice(live)
                    self.uncertain = (name, "delete")
                    st, b = http_request(port, "DELETE", "/" + name)
                    if st != 200:
                        self.failures.append("DELETE /%s answered %s: %s" % (name, st, b))
                        return
                    self.indices[name]["exists"] = False
                else:
                    gone = sorted(n for n, m in self.indices.items() if not m["exists"])
                    if gone and rng.random() < 0.3:
                        name = rng.choice(gone)  # re-create a deleted name: no resurrection
                    else:
                        self.next += 1
                        name = "side-%d" % self.next
                    shards = rng.randint(1, 3)
                    self.indices[name] = {"shards": shards, "exists": False, "doc": None}
                    self.uncertain = (name, "create")
                    st, b = http_request(port, "PUT", "/" + name, {"settings": {
                        "number_of_shards": shards, "number_of_replicas": 0}})
                    if st != 200:
                        self.failures.append("PUT /%s answered %s: %s" % (name, st, b))
                        return
                    self.indices[name]["exists"] = True
                    doc = {"name": name, "n": rng.randint(0, 1 << 40)}
                    self.uncertain = (name, "doc")
                    st, b = http_request(port, "PUT", "/%s/_doc/one" % name, doc)
                    if st != 201:
                        self.failures.append("PUT /%s/_doc/one answered %s: %s" % (name, st, b))
                        return
                    self.indices[name]["doc"] = doc
                self.uncertain = None
            except (OSError, http.client.HTTPException):
                return

    def verify(self, port):
        problems = []
        for name, m in sorted(self.indices.items()):
            st, _ = http_request(port, "HEAD", "/" + name)
            exists = st == 200
            unc = self.uncertain[1] if self.uncertain and self.uncertain[0] == name else None
            if exists != m["exists"] and unc not in ("create", "delete"):
                problems.append("index %s: acknowledged %s but it %s after restart"
                                % (name, "created" if m["exists"] else "deleted",
                                   "is missing" if m["exists"] else "exists again"))
            m["exists"] = exists
            if not exists:
                continue
            b = checked(port, "GET", "/%s/_settings" % name)
            shards = b.get(name, {}).get("settings", {}).get("index", {}).get("number_of_shards")
            if str(shards) != str(m["shards"]):
                problems.append("index %s: created with %d shards, _settings says %s"
                                % (name, m["shards"], shards))
            st, d = http_request(port, "GET", "/%s/_doc/one" % name)
            got = d.get("_source") if st == 200 and d.get("found") else None
            if got != m["doc"] and not (unc == "doc" and m["doc"] is None):
                problems.append("index %s: acknowledged document %s, server has %s"
                                % (name, describe(m["doc"]), describe(got)))
            if unc == "doc" and got is not None and m["doc"] is None:
                m["doc"] = got
        self.uncertain = None
        return problems


DYNAMIC_TYPES = ("long", "float", "boolean", "text")


def check_mapping(port, actual):
    """Dynamically mapped fields of acknowledged documents are still mapped (with their types)
    and searchable through them (term on the field, or on .keyword for strings) after the
    restart."""
    problems = []
    b = checked(port, "GET", "/%s/_mapping" % INDEX)
    props = b.get(INDEX, {}).get("mappings", {}).get("properties", {})
    example = {}
    for did, src in sorted(actual.items()):
        if src is None:
            continue
        for f in src:
            if f.startswith("f") and f not in example:
                example[f] = did
    for f, did in sorted(example.items()):
        want = DYNAMIC_TYPES[int(f[1:]) % 4]
        got = props.get(f, {}).get("type")
        if got != want:
            problems.append("dynamic field %s (in acknowledged doc %s) is mapped as %s, want %s"
                            % (f, did, got, want))
            continue
        field = f + ".keyword" if want == "text" else f
        q = {"bool": {"filter": [{"term": {field: actual[did][f]}}, {"ids": {"values": [did]}}]}}
        b = checked(port, "POST", "/%s/_search" % INDEX,
                    {"query": q, "size": 0, "track_total_hits": True})
        if b["hits"]["total"]["value"] != 1:
            problems.append("term query %s on dynamic field does not find acknowledged doc %s"
                            % (json.dumps(q, ensure_ascii=False), did))
    return problems


def chaos(port, cycle, seed, stop):
    rng = random.Random("%d/%d/chaos" % (seed, cycle))
    while not stop.is_set():
        time.sleep(rng.uniform(0.05, 0.4))
        r = rng.random()
        path = ("/%s/_refresh" % INDEX if r < 0.5 else
                "/%s/_flush" % INDEX if r < 0.85 else
                "/%s/_forcemerge?max_num_segments=1" % INDEX)
        try:
            http_request(port, "POST", path, timeout=30)
        except (OSError, http.client.HTTPException):
            return


# ---------------------------------------------------------------- verification


def checked(port, method, path, body=None, what=""):
    st, b = http_request(port, method, path, body)
    if st != 200:
        raise Failure("%s %s answered HTTP %s: %s" % (method, path, st, json.dumps(b)[:600]))
    return b


def verify(port, writers, meta, label):
    """Checks the restarted server against the writers' models; resolves uncertain ids to what
    the server holds. Returns the number of live documents."""
    problems = meta.verify(port)
    actual = {}
    versions = {}
    all_ids = [i for w in writers for i in w.ids]
    for i in range(0, len(all_ids), 400):
        batch = all_ids[i:i + 400]
        b = checked(port, "POST", "/%s/_mget" % INDEX, {"ids": batch})
        for did, d in zip(batch, b["docs"]):
            if d.get("_id") != did:
                problems.append("_mget answered %s for id %s" % (d.get("_id"), did))
            actual[did] = d["_source"] if d.get("found") else None
            versions[did] = d.get("_version")
    rng = random.Random(label)
    for did in rng.sample(all_ids, 40):  # single realtime GETs agree with _mget
        st, d = http_request(port, "GET", "/%s/_doc/%s" % (INDEX, did))
        got = d.get("_source") if st == 200 and d.get("found") else None
        if st not in (200, 404) or got != actual[did]:
            problems.append("GET _doc/%s answered %s %s but _mget has %s"
                            % (did, st, json.dumps(d)[:300], describe(actual[did])))
    for w in writers:
        for did in w.ids:
            allowed = w.allowed(did)
            got = actual[did]
            if got not in allowed:
                last = w.state[did]
                if last is not None and got is None:
                    kind = "LOST acknowledged document"
                elif last is None and got is not None:
                    kind = "acknowledged delete undone (document is back)"
                else:
                    kind = "acknowledged version lost (wrong _source)"
                problems.append("%s: id %s; acknowledged state %s; possible in-flight states %s; "
                                "server has %s" % (kind, did, describe(last),
                                                   [describe(s) for s in allowed[1:]],
                                                   describe(got)))
            elif got is not None and got == w.state[did] and w.version[did] is not None and \
                    versions[did] != w.version[did]:
                problems.append("id %s has its acknowledged _source but _version %s instead of "
                                "the acknowledged %s" % (did, versions[did], w.version[did]))
            if got != w.state[did]:
                w.note(did, "after %s: in-flight op landed: %s" % (label, describe(got)[:80]))
            w.state[did] = got
            w.version[did] = versions[did] if got is not None else None
        w.uncertain = []
    checked(port, "POST", "/%s/_refresh" % INDEX)
    live = sorted(d for d, s in actual.items() if s is not None)

    count = checked(port, "GET", "/%s/_count" % INDEX)["count"]
    if count != len(live):
        problems.append("_count is %d but %d ids are live (by realtime GET)" % (count, len(live)))
    b = checked(port, "GET", "/%s/_stats/docs" % INDEX)
    sc = b.get("_all", {}).get("primaries", {}).get("docs", {}).get("count")
    if sc != len(live):
        problems.append("_stats primaries docs.count is %s but %d ids are live" % (sc, len(live)))
    b = checked(port, "POST", "/%s/_search" % INDEX,
                {"query": {"match_all": {}}, "size": len(live) + 100, "track_total_hits": True})
    hits = b["hits"]["hits"]
    if b["hits"]["total"]["value"] != len(live) or len(hits) != len(live):
        problems.append("match_all: total %d, %d hits returned, %d ids live"
                        % (b["hits"]["total"]["value"], len(hits), len(live)))
    seen = {}
    for h in hits:
        seen[h["_id"]] = seen.get(h["_id"], 0) + 1
        if h["_id"] in actual and h.get("_source") != actual[h["_id"]]:
            problems.append("match_all hit %s has _source %s but GET has %s"
                            % (h["_id"], describe(h.get("_source")), describe(actual[h["_id"]])))
    dups = sorted(k for k, n in seen.items() if n > 1)
    if dups:
        problems.append("duplicate _id in match_all hits: %s" % dups[:20])
    if set(seen) != set(live):
        problems.append("match_all ids differ from live ids: only in search %s, only in GET %s"
                        % (sorted(set(seen) - set(live))[:20], sorted(set(live) - set(seen))[:20]))

    for i in range(0, len(live), 500):
        batch = live[i:i + 500]
        b = checked(port, "POST", "/%s/_search" % INDEX,
                    {"query": {"ids": {"values": batch}}, "size": 0, "track_total_hits": True})
        if b["hits"]["total"]["value"] != len(batch):
            problems.append("ids query over %d live ids finds %d"
                            % (len(batch), b["hits"]["total"]["value"]))
        toks = [actual[d]["tok"] for d in batch]
        b = checked(port, "POST", "/%s/_search" % INDEX,
                    {"query": {"terms": {"tok": toks}}, "size": len(batch),
                     "_source": False, "track_total_hits": True})
        found = {h["_id"] for h in b["hits"]["hits"]}
        if b["hits"]["total"]["value"] != len(batch) or found != set(batch):
            problems.append("terms query on the current tokens of %d live ids finds %d (missing %s)"
                            % (len(batch), b["hits"]["total"]["value"],
                               sorted(set(batch) - found)[:20]))
    problems += check_mapping(port, actual)
    vs = sorted(actual[d]["v"] for d in live)
    if vs:  # a range over the numeric `v` (points) agrees with the documents
        mid = vs[len(vs) // 2]
        want = sum(1 for x in vs if x >= mid)
        b = checked(port, "POST", "/%s/_count" % INDEX, {"query": {"range": {"v": {"gte": mid}}}})
        if b["count"] != want:
            problems.append("range v >= %d counts %d, the live documents have %d"
                            % (mid, b["count"], want))
    current = {s["tok"] for s in actual.values() if s is not None}
    stale = [t for w in writers for t in w.tokens if t not in current]
    for i in range(0, len(stale), 1000):
        batch = stale[i:i + 1000]
        b = checked(port, "POST", "/%s/_search" % INDEX,
                    {"query": {"terms": {"tok": batch}}, "size": 20, "track_total_hits": True})
        if b["hits"]["total"]["value"] != 0:
            problems.append("superseded versions are searchable: %d hits for old tokens, e.g. %s"
                            % (b["hits"]["total"]["value"],
                               [(h["_id"], h["_source"].get("tok")) for h in b["hits"]["hits"]]))
    if problems:
        raise Failure("after %s:\n  " % label + "\n  ".join(problems[:30]) +
                      ("\n  ... %d problems in all" % len(problems) if len(problems) > 30 else ""))
    return len(live)


# ---------------------------------------------------------------- main


def main():
    seed = int(os.environ.get("SCRY_CRASH_SEED") or random.randrange(1 << 31))
    kills = int(os.environ.get("SCRY_SERVER_CRASH_KILLS", "20"))
    nwriters = int(os.environ.get("SCRY_SERVER_CRASH_WRITERS", "2"))
    binary = os.environ.get("SCRY_BIN", os.path.join(ROOT, "build", "debug", "scry"))
    log("server crash test seed %d (SCRY_CRASH_SEED=%d to replay), %d kills, %d writers, %s"
        % (seed, seed, kills, nwriters, binary))
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="scry-server-crash-")
    server = Server(binary, os.path.join(tmp, "data"), os.path.join(tmp, "server.log"))
    writers = [Writer(w, seed, ["d%d-%03d" % (w, k) for k in range(IDS_PER_WRITER)])
               for w in range(nwriters)]
    meta = Meta(seed)
    start = time.time()
    double_kills = 0
    term_kills = 0
    cycle = 0
    ok = False
    try:
        server.start()
        checked(server.port, "PUT", "/" + INDEX, {
            "settings": {"number_of_shards": 2, "number_of_replicas": 0},
            "mappings": {"properties": {"key": {"type": "keyword"}, "tok": {"type": "keyword"},
                                        "v": {"type": "long"}, "body": {"type": "text"}}}})
        for cycle in range(1, kills + 1):
            stop = threading.Event()
            threads = [threading.Thread(target=w.run, args=(server.port, cycle, stop))
                       for w in writers]
            threads.append(threading.Thread(target=chaos, args=(server.port, cycle, seed, stop)))
            threads.append(threading.Thread(target=meta.run, args=(server.port, cycle, stop)))
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.1, 1.5) if rng.random() < 0.85 else rng.uniform(1.5, 4.0))
            server.check_alive()
            if rng.random() < 0.15:
                # SIGKILL in the middle of a graceful shutdown (stop, flush, close)
                server.proc.send_signal(signal.SIGTERM)
                time.sleep(rng.uniform(0.0, 0.1))
                term_kills += 1
            server.kill9()
            stop.set()
            for t in threads:
                t.join()
            fails = [f for w in writers for f in w.failures] + meta.failures
            if fails:
                raise Failure("while writing in cycle %d:\n  %s" % (cycle, "\n  ".join(fails[:20])))
            # sometimes kill the restarting server again, during recovery
            if rng.random() < 0.2:
                server.spawn()
                time.sleep(rng.uniform(0.0, 0.08))
                if server.proc.poll() is None:
                    server.kill9()
                    double_kills += 1
                else:
                    raise Failure("server exited by itself (status %s) during start-up; log:\n%s"
                                  % (server.proc.returncode, server.log_tail()))
            server.start()
            live = verify(server.port, writers, meta, "kill %d" % cycle)
            notes = [u for w in writers for u in w.unexpected]
            for w in writers:
                w.unexpected = []
            log("kill %2d/%d: ok, %d live docs, %d acknowledged ops, %d side indices so far%s"
                % (cycle, kills, live, sum(w.acked_ops for w in writers), len(meta.indices),
                   ("; note: " + "; ".join(notes)) if notes else ""))
        rc = server.terminate()
        if rc != 0:
            raise Failure("graceful SIGTERM shutdown exited with status %s; log:\n%s"
                          % (rc, server.log_tail()))
        server.start()
        live = verify(server.port, writers, meta, "graceful restart")
        rc = server.terminate()
        if rc != 0:
            raise Failure("graceful SIGTERM shutdown exited with status %s; log:\n%s"
                          % (rc, server.log_tail()))
        ok = True
        log("server crash test PASSED: seed %d, %d kills (%d during a SIGTERM shutdown, +%d "
            "during recovery), %d requests, %d acknowledged ops, %d live docs, %.1fs"
            % (seed, kills, term_kills, double_kills, sum(w.requests for w in writers),
               sum(w.acked_ops for w in writers), live, time.time() - start))
        return 0
    except Failure as e:
        log("server crash test FAILED (seed %d, SCRY_CRASH_SEED=%d to replay, cycle %d): %s"
            % (seed, seed, cycle, e))
        log("data folder and server log kept in %s" % tmp)
        return 1
    except HarnessError as e:
        log("server crash test could not run (seed %d): %s" % (seed, e))
        return 2
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
        if ok and not os.environ.get("SCRY_CRASH_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
