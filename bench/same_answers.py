#!/usr/bin/python3
"""Sends every request of a workload (CLASS<TAB>METHOD<TAB>PATH<TAB>BODY, as bench/lucene_http.sh
writes it) to two servers, e.g. an old and a new build on copies of one data folder, and compares
the answers: status and JSON body with `took` removed. Prints the requests that differ and a count.
Usage: same_answers.py WORKLOAD PORT_A PORT_B"""
import json, sys, http.client
wl, pa, pb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ca, cb = http.client.HTTPConnection("127.0.0.1", pa), http.client.HTTPConnection("127.0.0.1", pb)
def ask(c, m, p, b):
    c.request(m, p, body=b.encode(), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    d = json.loads(r.read())
    d.pop("took", None)
    return r.status, d
n = diff = 0
for line in open(wl):
    cls, m, p, b = line.rstrip("\n").split("\t", 3)
    n += 1
    if ask(ca, m, p, b) != ask(cb, m, p, b):
        diff += 1
        print("differs:", cls, b[:200])
print(f"{n} requests, {diff} different")
