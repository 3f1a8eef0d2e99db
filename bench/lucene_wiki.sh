#!/usr/bin/env bash
# Lucene 8.7 in-process numbers for the luceneutil classes on the same generated wiki corpus that
# `make bench` loads into scry (bench/run.sh calls this after the grid, with the server stopped).
#
#   bench/lucene_wiki.sh CORPUS.ndjson WORK_DIR [REPS (3)]
#
# Reuses bench/LuceneQueryBench.java (the query-execution harness): the `body` of every corpus
# document goes into WORK_DIR/docs.tsv (id <TAB> body), the queries are those of
# bench/workloads/luceneutil.top10.txt (query_string text, or the regexp for the regex class);
# Lucene indexes `body` with StandardAnalyzer without stop words (what the `standard` analyzer
# of the wiki mapping is), force-merges to one segment, then times every query single-threaded
# in the modes COUNT, TOP_10, TOP_10_COUNT (median and p99 per class, hit count sums).
# Writes WORK_DIR/lucene.tsv. The Lucene index is kept in WORK_DIR and reused while the corpus
# (its .meta line) is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=$1
WORK=$2
REPS=${3:-3}
PY=/usr/bin/python3
JARS=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-queryparser-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
mkdir -p "$WORK/classes"
META="$(cat "$CORPUS.meta" 2>/dev/null || echo "?") $(stat -c %s "$CORPUS")"
if [ "$(cat "$WORK/corpus.meta" 2>/dev/null)" != "$META" ]; then
  rm -rf "$WORK/lucene" "$WORK/docs.tsv" "$WORK/corpus.meta"
fi
javac -d "$WORK/classes" -cp "$JARS" bench/LuceneQueryBench.java
"$PY" - "$CORPUS" "$WORK" bench/workloads/luceneutil.top10.txt <<'PY'
import json, os, sys
corpus, work, workload = sys.argv[1:4]
docs = os.path.join(work, "docs.tsv")
if not os.path.exists(docs):
    with open(corpus, encoding="utf-8") as f, open(docs + ".tmp", "w", encoding="utf-8") as o:
        for line in f:
            d = json.loads(line)
            if "body" not in d:  # a _bulk action line
                continue
            body = d["body"].replace("\t", " ").replace("\n", " ").replace("\r", " ")
            o.write("%s\t%s\n" % (d["id"], body))
    os.rename(docs + ".tmp", docs)
with open(os.path.join(work, "queries.txt"), "w", encoding="utf-8") as o:
    for line in open(workload, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        cls, _, _, body = line.rstrip("\n").split("\t", 3)
        q = json.loads(body)["query"]
        text = q["regexp"]["body"]["value"] if "regexp" in q else q["query_string"]["query"]
        o.write(json.dumps({"query": text, "class": cls}, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
java -Xmx3g -cp "$JARS:$WORK/classes" LuceneQueryBench "$WORK/docs.tsv" "$WORK/queries.txt" "$WORK" "$REPS" \
  > "$WORK/lucene.tsv.tmp"
mv "$WORK/lucene.tsv.tmp" "$WORK/lucene.tsv"
echo "$META" > "$WORK/corpus.meta"
