#!/usr/bin/env bash
# Test step (owner: server): end-to-end tests in tests/e2e (pytest from Debian) against the real
# `scry serve` binary on a free loopback port — every endpoint, error shapes, hostile inputs and
# the official Python client. Runs against the debug build, then once more against the
# ASan+UBSan build when it exists (the unit-test step builds it). Includes the kill -9 crash
# test (20 kills against the debug build, 4 under ASan; SCRY_CRASH_SEED replays a run).
set -uo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-$(nproc)}
PY=${PYTHON:-/usr/bin/python3}
cmake --preset debug >/dev/null && cmake --build build/debug -j"$JOBS" --target scry || exit 1
fail=0
echo "-- e2e against build/debug/scry"
SCRY_BIN=build/debug/scry "$PY" -m pytest -q -p no:cacheprovider tests/e2e || fail=1
if cmake --preset asan >/dev/null && cmake --build build/asan -j"$JOBS" --target scry; then
  echo "-- e2e against build/asan/scry (ASan+UBSan)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    SCRY_CRASH_KILLS=${SCRY_CRASH_KILLS_ASAN:-4} SCRY_BIN=build/asan/scry "$PY" -m pytest -q -p no:cacheprovider tests/e2e || fail=1
fi
exit $fail
