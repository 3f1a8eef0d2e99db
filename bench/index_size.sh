#!/usr/bin/env bash
# Index size side by side on real text (issue 17 item 11): the corpus of
# bench/real_text_corpus.py (Debian package descriptions, manual page sections, changelog
# entries and /usr/share/doc texts of this machine; about 310k docs, 240 MB of JSON) indexed
#  - by scry: a release server, bench/workloads/realtext.index.json (one shard), the docs
#    through `scry load` with _id = line number, `_forcemerge?max_num_segments=1`, then the
#    bytes per part from `_disk_usage` and the shard folder's files;
#  - by Lucene 8.7 in process (bench/LuceneSizeBench.java): the same fields as Elasticsearch
#    maps them, _id/_source/_seq_no/_version/_primary_term as Elasticsearch writes them, the
#    default codec (stored fields LZ4), force-merged to one segment;
# and prints total and per-part bytes of both and their ratio.
# Usage: bench/index_size.sh [MAX_DOCS]   (WORK=dir keeps the corpus; BIN=path of scry;
#        PORT=9391; LUCENE=reuse keeps the Lucene numbers of the previous run in WORK)
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=${1:-1000000000}
WORK=${WORK:-/tmp/scry-index-size}
BIN=${BIN:-build/release/scry}
PORT=${PORT:-9391}
JARS=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
URL=http://127.0.0.1:$PORT
mkdir -p "$WORK"
CORPUS="$WORK/realtext-$MAX.ndjson"
[ -s "$CORPUS" ] || /usr/bin/python3 bench/real_text_corpus.py --max-docs "$MAX" > "$CORPUS"
awk '{ printf "{\"index\":{\"_id\":\"%d\"}}\n%s\n", NR - 1, $0 }' "$CORPUS" > "$WORK/bulk.ndjson"

rm -rf "$WORK/data"
mkdir -p "$WORK/data"
"$BIN" serve --data "$WORK/data" --port "$PORT" --bind 127.0.0.1 > "$WORK/server.log" 2>&1 &
SRV=$!
trap 'kill -TERM $SRV 2>/dev/null || true; wait $SRV 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
    curl -sf "$URL/" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -sf -XPUT "$URL/realtext" -H 'Content-Type: application/json' \
    --data-binary @bench/workloads/realtext.index.json >/dev/null
"$BIN" load --index realtext --url "$URL" "$WORK/bulk.ndjson" >&2
curl -sf -XPOST "$URL/realtext/_forcemerge?max_num_segments=1" >/dev/null
curl -sf -XPOST "$URL/realtext/_disk_usage?run_expensive_tasks=true" > "$WORK/scry-usage.json"
curl -sf "$URL/_cat/indices/realtext?v" >&2
kill -TERM $SRV
wait $SRV || true
trap - EXIT
find "$WORK/data" -type f -printf '%s %P\n' > "$WORK/scry-files.txt"

if [ "${LUCENE:-}" != reuse ] || [ ! -s "$WORK/lucene.txt" ]; then
    mkdir -p "$WORK/classes"
    javac -d "$WORK/classes" -cp "$JARS" bench/LuceneSizeBench.java bench/LuceneNdjson.java
    java -Xmx4g -cp "$JARS:$WORK/classes" LuceneSizeBench "$CORPUS" "$WORK/lucene-idx" \
        title=text body=text kind=keyword name=keyword section=keyword author=keyword \
        lang=keyword size=long date=date > "$WORK/lucene.txt"
    rm -rf "$WORK/lucene-idx"
fi

/usr/bin/python3 - "$WORK" "$CORPUS" <<'PY'
import json, os, sys
work, corpus = sys.argv[1], sys.argv[2]
u = json.load(open(os.path.join(work, "scry-usage.json")))["realtext"]
files = [l.split(" ", 1) for l in open(os.path.join(work, "scry-files.txt")).read().splitlines()]
index_files = sum(int(s) for s, p in files if "/translog" not in p and not p.endswith(".tlog"))
a = u["all_fields"]
inv = a["inverted_index"]
scry = {"terms": inv["terms_in_bytes"], "postings": inv["postings_in_bytes"],
        "positions": inv["positions_in_bytes"], "norms": a["norms_in_bytes"],
        "doc_values": a["doc_values_in_bytes"], "stored": a["stored_fields_in_bytes"],
        "points": a["points_in_bytes"]}
scry["other"] = index_files - sum(scry.values())
luc, ltotal, docs = {}, 0, 0
for line in open(os.path.join(work, "lucene.txt")):
    f = line.split()
    if f[0] == "lucene_part":
        luc[f[1]] = int(f[2])
    elif f[0] == "lucene_total":
        ltotal = int(f[1])
    elif f[0] == "lucene_docs":
        docs = int(f[1])
print("corpus: %d docs, %.1f MB of JSON; scry index files %.1f MB (store_size %.1f MB, id table "
      "%.1f MB), Lucene %.1f MB" % (docs, os.path.getsize(corpus) / 1e6, index_files / 1e6,
      u["store_size_in_bytes"] / 1e6, u["scry"]["id_table_in_bytes"] / 1e6, ltotal / 1e6))
print("\n| part | scry MB | Lucene 8.7 MB | scry / Lucene |")
print("|---|---:|---:|---:|")
for k in ("terms", "postings", "positions", "norms", "doc_values", "stored", "points", "other"):
    s, l = scry.get(k, 0), luc.get(k, 0)
    print("| %s | %.1f | %.1f | %s |" % (k, s / 1e6, l / 1e6,
                                         "%.2f" % (s / l) if l > 100000 else "-"))
print("| **total** | **%.1f** | **%.1f** | **%.3f** |" % (index_files / 1e6, ltotal / 1e6,
                                                          index_files / ltotal))
print("\nscry per field (MB: terms+postings+positions / doc values / stored / points / norms):")
for name, f in sorted(u["fields"].items()):
    i = f["inverted_index"]
    print("  %-14s %7.1f %7.1f %7.1f %7.1f %7.1f" % (name, i["total_in_bytes"] / 1e6,
          f["doc_values_in_bytes"] / 1e6, f["stored_fields_in_bytes"] / 1e6,
          f["points_in_bytes"] / 1e6, f["norms_in_bytes"] / 1e6))
PY
