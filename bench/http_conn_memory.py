"""Anonymous memory per idle keep-alive connection of `scry serve` (docs/benchmarks.md, "HTTP
transport"): starts BIN on an empty data folder, opens 2,000 connections that each make one
request and stay open, and prints RssAnon before and after. Usage: http_conn_memory.py BIN"""
import os, resource, socket, subprocess, sys, time, shutil
os.makedirs("/tmp/scry-conn-memory", exist_ok=True)
binp = sys.argv[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (8000, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
d = "/tmp/scry-conn-memory/data"; shutil.rmtree(d, ignore_errors=True)
pf = "/tmp/scry-conn-memory/port"
if os.path.exists(pf): os.unlink(pf)
p = subprocess.Popen([binp, "serve", "--data", d, "--port", "0", "--port-file", pf, "--log-level", "warn"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while not os.path.exists(pf) or not open(pf).read().strip(): time.sleep(0.05)
port = int(open(pf).read())
def rss():
    for l in open("/proc/%d/status" % p.pid):
        if l.startswith("RssAnon"): return int(l.split()[1]) / 1024.0
s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"); s.recv(9999); s.close()
time.sleep(0.5)
before = rss()
socks = []
ok = 0
for i in range(2000):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=3)
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(c)
    except OSError:
        break
for c in socks:
    try:
        if c.recv(65536).startswith(b"HTTP/1.1 200"): ok += 1
    except OSError:
        pass
time.sleep(0.5)
after = rss()
print("%s: RssAnon %.1f MB idle -> %.1f MB with %d connections open (%d answered): %.1f KB per connection"
      % (os.path.basename(binp), before, after, len(socks), ok, (after - before) * 1024 / max(1, len(socks))))
for c in socks: c.close()
p.terminate(); p.wait()
