#!/usr/bin/env bash
# Re-runs the Lucene 8.7 analysis oracle (tests/oracle/analysis): (1) the expected outputs
# checked in under tests/fixtures/text must be what the installed Lucene jars produce; (2) every
# code point of planes 0-1 (plus samples of planes 2, 14, 15), in four contexts, must get the
# same tokens, positions, offsets and types from scry's six built-in analyzers as from Lucene
# (needs the debug build's text_analyzer_test; BUILD_DIR overrides build/debug).
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! command -v javac >/dev/null || [ ! -f /usr/share/java/lucene-core-8.7.0.jar ]; then
  echo "analysis oracle: javac or the Lucene 8.7 jars are missing (scripts/deps.sh)"; exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tests/oracle/analysis/regen.sh "$tmp" >/dev/null || { echo "analysis oracle: regen failed"; exit 1; }
fail=0
for f in lucene_tokens.tsv random_tokens.tsv porter_words.tsv snowball_words.tsv fold_chars.tsv \
  chain_tokens.tsv light_stems.tsv; do
  if ! cmp -s "$tmp/$f" "tests/fixtures/text/$f"; then
    echo "analysis oracle: tests/fixtures/text/$f differs from Lucene's output:"
    diff "tests/fixtures/text/$f" "$tmp/$f" | head -20
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "analysis oracle: fixtures match Lucene 8.7"

test_bin=${BUILD_DIR:-build/debug}/text_analyzer_test
if [ ! -x "$test_bin" ]; then
  echo "analysis oracle: $test_bin not built"; exit 1
fi
root="$tmp/all"
mkdir -p "$root/tests/fixtures/text"
cp tests/fixtures/text/* "$root/tests/fixtures/text/"
mkdir -p "$root/tests/oracle/analysis"
cp tests/oracle/analysis/chains.tsv "$root/tests/oracle/analysis/"
CP=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
javac -d "$tmp/cls" -cp "$CP" tests/oracle/analysis/LuceneTokens.java
/usr/bin/python3 tests/oracle/analysis/make_all_codepoints.py > "$root/tests/fixtures/text/random_unicode.txt"
java -cp "$CP:$tmp/cls" LuceneTokens tokens "$root/tests/fixtures/text/random_unicode.txt" \
  > "$root/tests/fixtures/text/random_tokens.tsv"
if SCRY_SOURCE_DIR="$root" "$test_bin" > "$tmp/all.log" 2>&1; then
  echo "analysis oracle: every code point agrees with Lucene ($(grep -o '[0-9]* line x analyzer' "$tmp/all.log" | tail -1))"
else
  echo "analysis oracle: code point sweep differs from Lucene:"
  grep -E "MISMATCH|mismatch|FAILED" -A8 "$tmp/all.log" | head -60
  fail=1
fi
# (3) html_strip and the word-delimiter chains over random markup and words (a new seed each
# run, printed; SCRY_ORACLE_SEED replays one): scry must equal Lucene line for line.
seed=${SCRY_ORACLE_SEED:-$(( $(date +%s) % 100000 ))}
rroot="$tmp/random"
mkdir -p "$rroot/tests/fixtures/text" "$rroot/tests/oracle/analysis"
cp tests/fixtures/text/* "$rroot/tests/fixtures/text/"
grep -P '^(html_strip|wdg?_)' tests/oracle/analysis/chains.tsv > "$rroot/tests/oracle/analysis/chains.tsv"
/usr/bin/python3 tests/oracle/analysis/make_random_markup.py "$seed" 600 \
  > "$rroot/tests/fixtures/text/chain_inputs.txt"
java -cp "$CP:$tmp/cls" LuceneTokens chains "$rroot/tests/oracle/analysis/chains.tsv" \
  "$rroot/tests/fixtures/text/chain_inputs.txt" > "$rroot/tests/fixtures/text/chain_tokens.tsv"
if SCRY_SOURCE_DIR="$rroot" "$test_bin" > "$tmp/random.log" 2>&1; then
  echo "analysis oracle: random markup (seed $seed) agrees with Lucene ($(grep -o 'chain oracle: .*' "$tmp/random.log"))"
else
  echo "analysis oracle: random markup (seed $seed, replay with SCRY_ORACLE_SEED=$seed) differs:"
  grep -E "MISMATCH|mismatch|FAILED" -A8 "$tmp/random.log" | head -60
  fail=1
fi
exit $fail
