#!/usr/bin/env bash
# Server CPU per request of several `scry serve` variants, alternated on one data folder
# (docs/benchmarks.md, "The per-request floor" and "The allocator set up for a server"). On a
# shared machine QPS swings with other work; the server's CPU per request (`scry bench run
# --pid`) is the steady measure, and alternating the variants round by round makes drift hit
# them alike. A variant is one line of the VARIANTS file: NAME<TAB>BINARY<TAB>ENV (ENV: space-
# separated VAR=VALUE for the server, or "-"). The data folder is only searched, never written.
#
#   bench/ab_cpu.sh DATA VARIANTS WORKLOAD CLASS
#     env: CONNS ("1 8 32") ROUNDS (3) DURATION (4) WARMUP (1) OUT (/tmp/scry-ab-cpu)
#          EVENTS: perf events counted in the server during each cell (`perf stat -p`), e.g.
#          "syscalls:sys_enter_futex,page-faults,context-switches"; reported per request.
#          Counts of events do not swing with the machine's load as CPU time does.
# Prints one line per variant and connection count: the median and min-max over the rounds of
# server CPU µs per request and of QPS (and of each event per request).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=$1 VARIANTS=$2 WORKLOAD=$3 CLASS=$4
CONNS=${CONNS:-"1 8 32"}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-4}
WARMUP=${WARMUP:-1}
OUT=${OUT:-/tmp/scry-ab-cpu}
mkdir -p "$OUT"
rm -f "$OUT"/r-*.json
SPID=""
trap '[ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true' EXIT
for round in $(seq "$ROUNDS"); do
  while IFS=$'\t' read -r name bin envs; do
    [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
    [ "$envs" = "-" ] && envs=""
    rm -f "$OUT/port"
    # shellcheck disable=SC2086
    env $envs "$bin" serve --data "$DATA" --port 0 --port-file "$OUT/port" --log-level warn \
      > "$OUT/server-$name.log" 2>&1 &
    SPID=$!
    for _ in $(seq 300); do [ -s "$OUT/port" ] && break; sleep 0.1; done
    PORT=$(cat "$OUT/port")
    # Wait until the index answers (shards recover in the background after the open).
    for _ in $(seq 300); do
      curl -sf "http://127.0.0.1:$PORT/_cluster/health?wait_for_status=yellow&timeout=1s" \
        >/dev/null && break
      sleep 0.2
    done
    for c in $CONNS; do
      PERF=""
      if [ -n "${EVENTS:-}" ]; then
        perf stat -x, -e "$EVENTS" -p "$SPID" -o "$OUT/e-$name-$round-$c.csv" \
          -- sleep "$(awk -v w="$WARMUP" -v d="$DURATION" 'BEGIN{print w + d}')" &
        PERF=$!
      fi
      "$bin" bench run --port "$PORT" --pid "$SPID" --workload "$WORKLOAD" --class "$CLASS" \
        --conns "$c" --warmup "$WARMUP" --reps 1 --duration "$DURATION" --no-validate \
        --out "$OUT/r-$name-$round-$c.json" > /dev/null
      [ -z "$PERF" ] || wait "$PERF" || true
    done
    kill "$SPID"; wait "$SPID" || true; SPID=""
  done < "$VARIANTS"
done
WARMUP=$WARMUP DURATION=$DURATION EVENTS=${EVENTS:-} /usr/bin/python3 - "$OUT" "$VARIANTS" "$CONNS" <<'PY'
import glob, json, statistics, sys
out, variants, conns = sys.argv[1], sys.argv[2], sys.argv[3].split()
names = [l.split("\t")[0] for l in open(variants) if l.strip() and not l.startswith("#")]
def find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, key)
            if r is not None:
                return r
    return None
def fmt(xs, d):
    return f"{statistics.median(xs):.{d}f} [{min(xs):.{d}f}-{max(xs):.{d}f}]"
import os
events = [e for e in os.environ.get("EVENTS", "").split(",") if e]
def counts(f):
    r = {}
    for line in open(f):
        p = line.strip().split(",")
        if len(p) > 2 and p[2] in events:
            try:
                r[p[2]] = float(p[0])
            except ValueError:
                pass
    return r
print("| variant | conns | server CPU µs/req | QPS |" + "".join(f" {e}/req |" for e in events))
print("|---|---:|---:|---:|" + "---:|" * len(events))
for c in conns:
    for n in names:
        cpu, qps, ev = [], [], {e: [] for e in events}
        for f in sorted(glob.glob(f"{out}/r-{n}-*-{c}.json")):
            j = json.load(open(f))
            cpu.append(find(j, "server_cpu_us_per_req"))
            qps.append(find(j, "qps"))
            if events:
                # perf counted the warm-up too: per request of warm-up + measured window.
                reqs = find(j, "requests") * (1 + float(os.environ.get("WARMUP", "1")) /
                                              float(os.environ.get("DURATION", "4")))
                got = counts(f.replace("/r-", "/e-").replace(".json", ".csv"))
                for e in events:
                    if e in got:
                        ev[e].append(got[e] / reqs)
        if cpu:
            print(f"| {n} | {c} | {fmt(cpu, 1)} | {fmt(qps, 0)} |" +
                  "".join(f" {fmt(ev[e], 3)} |" if ev[e] else " - |" for e in events))
PY
