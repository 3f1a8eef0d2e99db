#!/usr/bin/env bash
# Regenerates the Lucene oracle fixtures for src/text from the real Lucene 8.7 jars:
#   tests/fixtures/text/lucene_tokens.tsv  (LuceneTokens over sentences.txt, 6 analyzers)
#   tests/fixtures/text/random_tokens.tsv  (LuceneTokens over random_unicode.txt)
#   tests/fixtures/text/porter_words.tsv   (PorterStemFilter over the words of sentences.txt)
#   tests/fixtures/text/snowball_words.tsv (SnowballFilter(English) over the same words)
#   tests/fixtures/text/fold_chars.tsv     (ASCIIFoldingFilter over Latin and punctuation blocks)
#   tests/fixtures/text/chain_tokens.tsv   (every chain of chains.tsv over chain_inputs.txt)
#   tests/fixtures/text/light_stems.tsv    (the German, French, Spanish, Italian, Portuguese,
#                                           Arabic, Hindi, Indonesian and Greek analyzers over
#                                           light_words.txt)
# Rebuild the inputs first if wanted:
#   tests/oracle/analysis/make_sentences.py > tests/fixtures/text/sentences.txt
#   tests/oracle/analysis/make_random.py > tests/fixtures/text/random_unicode.txt
#   tests/oracle/analysis/make_light_words.py > tests/fixtures/text/light_words.txt
#     (needs the word lists of wngerman wfrench wspanish witalian wportuguese)
# Usage: regen.sh [output dir]   (default tests/fixtures/text; the inputs are always read
# from tests/fixtures/text)
set -euo pipefail
cd "$(dirname "$0")/../../.."
dest=${1:-tests/fixtures/text}
mkdir -p "$dest"
CP=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -d "$out" -cp "$CP" tests/oracle/analysis/LuceneTokens.java
java -cp "$CP:$out" LuceneTokens tokens tests/fixtures/text/sentences.txt \
  > "$dest/lucene_tokens.tsv"
java -cp "$CP:$out" LuceneTokens tokens tests/fixtures/text/random_unicode.txt \
  > "$dest/random_tokens.tsv"
java -cp "$CP:$out" LuceneTokens chains tests/oracle/analysis/chains.tsv \
  tests/fixtures/text/chain_inputs.txt > "$dest/chain_tokens.tsv"
java -cp "$CP:$out" LuceneTokens light tests/fixtures/text/light_words.txt \
  > "$dest/light_stems.tsv"
# Porter word list: every lowercase ASCII word of the standard tokens, plus stemming classics.
awk -F'\t' '$2=="standard" && $7 ~ /^[a-z]+$/ {print $7}' "$dest/lucene_tokens.tsv" |
  sort -u > "$out/words.txt"
java -cp "$CP:$out" LuceneTokens porter "$out/words.txt" > "$dest/porter_words.tsv"
java -cp "$CP:$out" LuceneTokens snowball "$out/words.txt" > "$dest/snowball_words.tsv"
/usr/bin/python3 -c '
import unicodedata
ranges = [(0xA0, 0x250), (0x1E00, 0x1F00), (0x2000, 0x2070), (0x2070, 0x20A0), (0xFB00, 0xFB07),
          (0xFF01, 0xFF5F)]
for lo, hi in ranges:
    for c in range(lo, hi):
        if not unicodedata.category(chr(c)).startswith("C"):
            print(chr(c) + "x" + chr(c))
' > "$out/chars.txt"
java -cp "$CP:$out" LuceneTokens fold "$out/chars.txt" > "$dest/fold_chars.tsv"
wc -l "$dest"/*.tsv
