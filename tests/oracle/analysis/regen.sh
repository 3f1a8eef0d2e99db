#!/usr/bin/env bash
# Regenerates the Lucene oracle fixtures for src/text from the real Lucene 8.7 jars:
#   tests/fixtures/text/lucene_tokens.tsv  (LuceneTokens over sentences.txt, 6 analyzers)
#   tests/fixtures/text/random_tokens.tsv  (LuceneTokens over random_unicode.txt)
#   tests/fixtures/text/porter_words.tsv   (PorterStemFilter over the words of sentences.txt)
# Rebuild the inputs first if wanted:
#   tests/oracle/analysis/make_sentences.py > tests/fixtures/text/sentences.txt
#   tests/oracle/analysis/make_random.py > tests/fixtures/text/random_unicode.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
CP=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$CP" tests/oracle/analysis/LuceneTokens.java
java -cp "$CP:$out" LuceneTokens tokens tests/fixtures/text/sentences.txt \
  > tests/fixtures/text/lucene_tokens.tsv
java -cp "$CP:$out" LuceneTokens tokens tests/fixtures/text/random_unicode.txt \
  > tests/fixtures/text/random_tokens.tsv
# Porter word list: every lowercase ASCII word of the standard tokens, plus stemming classics.
awk -F'\t' '$2=="standard" && $6 ~ /^[a-z]+$/ {print $6}' tests/fixtures/text/lucene_tokens.tsv |
  sort -u > "$out/words.txt"
java -cp "$CP:$out" LuceneTokens porter "$out/words.txt" > tests/fixtures/text/porter_words.tsv
wc -l tests/fixtures/text/lucene_tokens.tsv tests/fixtures/text/random_tokens.tsv tests/fixtures/text/porter_words.tsv
