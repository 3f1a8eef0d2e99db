#!/usr/bin/env bash
# Runs every built libFuzzer target in build/fuzz (files named *_fuzz) for SECONDS each
# against its seed corpus tests/fuzz/corpus/<name without _fuzz>/. New inputs go to a scratch
# corpus under build/fuzz/work/ (the repository corpus is only read); crashes are written to
# build/fuzz/artifacts/. Exits non-zero if any fuzzer crashes, leaks, times out or is missing.
# Usage: scripts/fuzz.sh [SECONDS]   (build first: make fuzz-build; FUZZ_JOBS at a time, 2)
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-${FUZZ_SECONDS:-60}}
BUILD=${FUZZ_BUILD_DIR:-build/fuzz}
shopt -s nullglob

fuzzers=()
for f in "$BUILD"/*_fuzz; do
  [ -x "$f" ] && [ -f "$f" ] && fuzzers+=("$f")
done
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "fuzz: no fuzzers in $BUILD (run: make fuzz-build)"; exit 1
fi
# Every tests/fuzz/<x>_fuzz.c must have been built.
fail=0
for src in tests/fuzz/*_fuzz.c; do
  name=$(basename "$src" .c)
  if [ ! -x "$BUILD/$name" ]; then echo "fuzz: $name was not built"; fail=1; fi
done

mkdir -p "$BUILD/artifacts" "$BUILD/work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Two fuzzers at a time (JOBS): each is one process on one core.
JOBS=${FUZZ_JOBS:-2}
run_one() { # fuzzer; writes $BUILD/work/<short>.rc
  local f=$1 name short corpus work log
  name=$(basename "$f")
  short=${name%_fuzz}
  corpus=tests/fuzz/corpus/$short
  work=$BUILD/work/$short
  mkdir -p "$work"
  local dirs=("$work")
  [ -d "$corpus" ] && dirs+=("$corpus")
  log=$BUILD/work/$short.log
  "$f" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$short-" "${dirs[@]}" >"$log" 2>&1
  echo $? > "$BUILD/work/$short.rc"
}
for f in "${fuzzers[@]}"; do
  short=$(basename "$f"); short=${short%_fuzz}
  [ -d "tests/fuzz/corpus/$short" ] || echo "fuzz: warning: no seed corpus tests/fuzz/corpus/$short"
  rm -f "$BUILD/work/$short.rc"
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  run_one "$f" &
done
wait
for f in "${fuzzers[@]}"; do
  name=$(basename "$f")
  short=${name%_fuzz}
  log=$BUILD/work/$short.log
  rc=$(cat "$BUILD/work/$short.rc" 2>/dev/null || echo 99)
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  printf 'fuzz: %-24s %4ss ... ' "$name" "$SECONDS_EACH"
  if [ "$rc" -ne 0 ]; then
    echo "FAILED (exit $rc)"; tail -n 40 "$log"; fail=1
    echo "fuzz: full log $log; reproduce with: $f <artifact printed above>"
  else
    echo "ok (${runs:-?} runs)"
  fi
done
exit $fail
