#!/usr/bin/env bash
# The whole test suite (`make test`): unit tests (debug), unit tests under ASan+UBSan,
# header/layering checks, end-to-end, oracle and crash tests. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-/usr/bin/python3}
start=$(date +%s)
fail=0
last=$(date +%s)
step() {
  local now; now=$(date +%s)
  [ -n "${cur:-}" ] && echo "--- $cur: $((now - last))s"
  cur="$*"; last=$now
  echo; echo "=== $* ==="
}

step "headers and layering"
bash scripts/check_headers.sh || fail=1

step "unit tests (debug)"
cmake --preset debug >/dev/null && cmake --build build/debug -j"$JOBS" &&
  (cd build/debug && ctest --output-on-failure -j"$JOBS") || fail=1

step "unit tests (ASan+UBSan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cmake --preset asan >/dev/null && cmake --build build/asan -j"$JOBS" &&
  (cd build/asan && ctest --output-on-failure -j"$JOBS") || fail=1

for extra in scripts/test.d/*.sh; do
  [ -e "$extra" ] || continue
  step "$(basename "$extra" .sh)"
  bash "$extra" || fail=1
done

step "summary"
echo "make test: $([ $fail -eq 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - start ))s"
exit $fail
