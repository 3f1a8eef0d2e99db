#!/usr/bin/env python3
"""A tiny Elasticsearch-shaped HTTP/1.1 keep-alive server for testing the load driver.

POST .../_search answers 200 with a SearchBench-valid body whose hits.total.value is the length
of the request body, except: a body containing "ERR500" gets a 500, "TIMEDOUT" gets a 200 with
"timed_out":true, "CHUNKED" gets a chunked 200 response. POST .../_count answers {"count": 7,...}.
Counts every request it answers; GET /_stats_test returns the counts as JSON.
Usage: mini_server.py PORT_FILE  (binds an ephemeral port on 127.0.0.1, writes it to PORT_FILE)
"""
import http.server
import json
import sys
import threading

LOCK = threading.Lock()
COUNTS = {"requests": 0, "errors_sent": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes

    def log_message(self, *args):
        pass

    def send_body(self, status, body, chunked=False):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = len(data) // 2
            for part in (data[:half], data[half:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def do_GET(self):
        with LOCK:
            body = json.dumps(COUNTS)
        self.send_body(200, body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = self.rfile.read(n).decode()
        shards = '"_shards":{"total":1,"successful":1,"skipped":0,"failed":0}'
        timed_out = "true" if "TIMEDOUT" in req else "false"
        status = 500 if "ERR500" in req else 200
        if self.path.split("?")[0].endswith("_count"):
            body = '{"count":7,%s}' % shards
        else:
            body = ('{"took":1,"timed_out":%s,%s,"hits":{"total":{"value":%d,"relation":"eq"},'
                    '"max_score":null,"hits":[{"_id":"1"}]}}' % (timed_out, shards, len(req)))
        if status != 200:
            body = '{"error":{"type":"test_exception","reason":"asked for"},"status":500}'
        with LOCK:
            COUNTS["requests"] += 1
            COUNTS["errors_sent"] += status != 200 or timed_out == "true"
        self.send_body(status, body, chunked="CHUNKED" in req)


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    srv.serve_forever()


if __name__ == "__main__":
    main()
