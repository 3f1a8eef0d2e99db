#!/usr/bin/env bash
# Re-runs the Lucene 8.7 analysis oracle (tests/oracle/analysis) and checks that the expected
# outputs checked in under tests/fixtures/text are what the installed Lucene jars produce, so
# the C unit test (tests/unit/text/analyzer_test.c) compares against real Lucene behaviour.
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! command -v javac >/dev/null || [ ! -f /usr/share/java/lucene-core-8.7.0.jar ]; then
  echo "analysis oracle: javac or the Lucene 8.7 jars are missing (scripts/deps.sh)"; exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tests/oracle/analysis/regen.sh "$tmp" >/dev/null || { echo "analysis oracle: regen failed"; exit 1; }
fail=0
for f in lucene_tokens.tsv random_tokens.tsv porter_words.tsv snowball_words.tsv fold_chars.tsv; do
  if ! cmp -s "$tmp/$f" "tests/fixtures/text/$f"; then
    echo "analysis oracle: tests/fixtures/text/$f differs from Lucene's output:"
    diff "tests/fixtures/text/$f" "$tmp/$f" | head -20
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "analysis oracle: fixtures match Lucene 8.7"
exit $fail
