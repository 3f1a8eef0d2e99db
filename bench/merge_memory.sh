#!/usr/bin/env bash
# Memory of indexing and merging (issue #17 item 14): a fresh release `scry serve`, the wiki
# mapping with refresh off, N `scry gen wiki` docs through `scry load` (_bulk), a refresh, then
# _forcemerge?max_num_segments=1. Reads the server's /proc/PID/status: RssAnon of the fresh
# server (index created, nothing loaded), VmHWM after the load, VmHWM after the force merge
# (the peak of the whole run), RssAnon once idle (5 s after the merge), the merge time, and
# RssAnon of a server restarted on the same data folder (5 s after it answers).
#
# VmHWM is reset (/proc/PID/clear_refs) before the force merge too, so merge_hwm_kb is the
# merge's own peak (the largest RSS while it ran), apart from the load's.
#
#   bench/merge_memory.sh [N_DOCS (1000000)]     # env: SEED (1) OUT (build/merge-memory)
#                                                #      SKIP_BUILD=1 SERVE_ARGS="..." BIN (a copy of
#                                                #      a release scry, with SKIP_BUILD=1)
#                                                #      MERGE_MEMORY=64mb (index.merge.memory)
#                                                #      KIND=vectors DIMS=128 VTYPE=hnsw
# KIND=vectors loads `scry gen vectors --dims DIMS` docs instead (a dense_vector field `v`,
# l2_norm, index_options VTYPE with m 16, ef_construction 100, plus two integers), to measure a
# merge that writes vectors and builds their HNSW graph.
# Prints one line: docs= json_mb= fresh_anon_kb= load_hwm_kb= peak_hwm_kb= idle_anon_kb=
# load_s= merge_s= index_mb= segments_before= restart_anon_kb= restart_hwm_kb= merge_hwm_kb=
# spilled_mb= load_cpu_s= merge_cpu_s= (the server's CPU seconds of the load and of the merge)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
: "${SEED:=1}" "${OUT:=build/merge-memory}"
BIN=${BIN:-build/release/scry}
die() { echo "bench/merge_memory.sh: $*" >&2; exit 1; }
mkdir -p "$OUT/corpus"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake --preset release >/dev/null
  cmake --build build/release -j2 --target scry >"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log" >&2; die "release build failed"; }
fi
KIND=${KIND:-wiki}
case $KIND in
  wiki) CORPUS=$OUT/corpus/wiki-$N-$SEED.ndjson; GEN=(wiki) ;;
  vectors) CORPUS=$OUT/corpus/vectors-${DIMS:=128}-$N-$SEED.ndjson; GEN=(vectors --dims "$DIMS") ;;
  *) die "KIND is wiki or vectors, not $KIND" ;;
esac
[ -s "$CORPUS" ] || { "$BIN" gen "${GEN[@]}" --seed "$SEED" --docs "$N" > "$CORPUS.tmp"; mv "$CORPUS.tmp" "$CORPUS"; }
SPID=""
cleanup() { if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi; }
trap cleanup EXIT
rm -rf "$OUT/data"
start_server() {
  rm -f "$OUT/port"
  # shellcheck disable=SC2086
  "$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn ${SERVE_ARGS:-} \
    >> "$OUT/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 600); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
  [ -s "$OUT/port" ] || { tail -20 "$OUT/server.log" >&2; die "scry serve did not start"; }
  URL=http://127.0.0.1:$(cat "$OUT/port")
}
: > "$OUT/server.log"
start_server
req() { # method path [body]
  local code
  code=$(curl -s -o "$OUT/last.json" -w '%{http_code}' -X "$1" "$URL$2" \
    -H 'Content-Type: application/json' ${3:+--data-binary "$3"})
  [ "${code:0:1}" = 2 ] || die "$1 $2 answered $code: $(head -c 300 "$OUT/last.json")"
}
kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$SPID/status"; }
cpu_s() { # the server's user + system CPU seconds so far
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$SPID/stat"
}
KIND=$KIND DIMS=${DIMS:-0} VTYPE=${VTYPE:-hnsw} MERGE_MEMORY=${MERGE_MEMORY:-} \
  /usr/bin/python3 - > "$OUT/index.json" <<'PY'
import json, os
m = json.load(open("bench/workloads/wiki.index.json"))
if os.environ["KIND"] == "vectors":
    m["mappings"] = {"dynamic": "strict", "properties": {
        "v": {"type": "dense_vector", "dims": int(os.environ["DIMS"]), "similarity": "l2_norm",
              "index_options": {"type": os.environ["VTYPE"], "m": 16, "ef_construction": 100}},
        "cluster": {"type": "integer"}, "sel": {"type": "integer"}}}
m["settings"]["index"]["refresh_interval"] = "-1"
if os.environ.get("MERGE_MEMORY"):
    m["settings"]["index"]["merge.memory"] = os.environ["MERGE_MEMORY"]
print(json.dumps(m))
PY
req PUT /wiki @"$OUT/index.json"
sleep 1
FRESH=$(kb RssAnon)
t0=$(date +%s.%N)
"$BIN" load --index wiki "$CORPUS" --url "$URL" --quiet
req POST /wiki/_refresh
t1=$(date +%s.%N)
LOAD_CPU=$(cpu_s)
LOAD_HWM=$(kb VmHWM)
req GET "/wiki/_segments"
SEGS=$(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(len(s["segments"]) for sh in j["indices"]["wiki"]["shards"].values() for s in sh))' "$OUT/last.json")
PEAK_LOAD=$(kb VmHWM)
echo 5 > "/proc/$SPID/clear_refs" # VmHWM := current RSS
t2=$(date +%s.%N)
req POST "/wiki/_forcemerge?max_num_segments=1"
t3=$(date +%s.%N)
MERGE_CPU=$(echo "$(cpu_s) - $LOAD_CPU" | bc)
MERGE_HWM=$(kb VmHWM)
PEAK=$((MERGE_HWM > PEAK_LOAD ? MERGE_HWM : PEAK_LOAD))
req GET "/wiki/_stats"
SPILLED=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["_all"]["total"]["merges"]["total_spilled_size_in_bytes"] // 1000000)' "$OUT/last.json")
sleep 5
IDLE=$(kb RssAnon)
req GET /wiki/_count
grep -q "\"count\":$N[,}]" "$OUT/last.json" || die "wiki holds $(cat "$OUT/last.json"), not $N docs"
req POST /wiki/_flush
cleanup
start_server
for _ in $(seq 120); do # the shard opens in the background: wait for it to answer
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/wiki/_count")" = 200 ] && break; sleep 1
done
req GET /wiki/_count
sleep 5
RESTART=$(kb RssAnon)
RESTART_HWM=$(kb VmHWM)
echo "docs=$N json_mb=$(($(stat -L -c %s "$CORPUS") / 1000000)) fresh_anon_kb=$FRESH load_hwm_kb=$LOAD_HWM" \
  "peak_hwm_kb=$PEAK idle_anon_kb=$IDLE load_s=$(echo "$t1 - $t0" | bc) merge_s=$(echo "$t3 - $t2" | bc)" \
  "index_mb=$(($(du -sk "$OUT/data" | cut -f1) / 1024)) segments_before=$SEGS restart_anon_kb=$RESTART restart_hwm_kb=$RESTART_HWM" \
  "merge_hwm_kb=$MERGE_HWM spilled_mb=$SPILLED load_cpu_s=$LOAD_CPU merge_cpu_s=$MERGE_CPU"
