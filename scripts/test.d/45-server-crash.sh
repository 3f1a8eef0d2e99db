#!/usr/bin/env bash
# Test step (owner 9): server-level kill -9 crash test (issue 6, Durability). Starts the real
# `scry serve`, streams _bulk/_doc writes (index/create/update/delete) from client threads that
# model every acknowledged result, SIGKILLs the server at random moments (20 times by default,
# sometimes again during recovery), restarts it and checks that every acknowledged write is there
# (realtime GET, search after refresh) and the index is consistent (_count == match_all hits,
# no duplicate _id, no superseded version searchable). See tests/crash/server_kill_test.py.
#   SCRY_CRASH_SEED=N            replay a run (the seed is printed first)
#   SCRY_SERVER_CRASH_KILLS=N    kills against the debug build (default 20)
#   SCRY_SERVER_CRASH_ASAN=1     also run against the ASan+UBSan build (SCRY_SERVER_CRASH_KILLS_ASAN,
#                                default 8); SCRY_SERVER_CRASH_ASAN=only runs just that one
set -uo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-$(nproc)}
PY=${PYTHON:-/usr/bin/python3}
ASAN=${SCRY_SERVER_CRASH_ASAN:-0}
fail=0
if [ "$ASAN" != "only" ]; then
  cmake --preset debug >/dev/null && cmake --build build/debug -j"$JOBS" --target scry >/dev/null || exit 1
  echo "-- server crash test against build/debug/scry"
  SCRY_BIN=build/debug/scry "$PY" tests/crash/server_kill_test.py || fail=1
fi
if [ "$ASAN" != "0" ]; then
  cmake --preset asan >/dev/null && cmake --build build/asan -j"$JOBS" --target scry >/dev/null || exit 1
  echo "-- server crash test against build/asan/scry (ASan+UBSan)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    SCRY_SERVER_CRASH_KILLS=${SCRY_SERVER_CRASH_KILLS_ASAN:-8} SCRY_BIN=build/asan/scry \
    "$PY" tests/crash/server_kill_test.py || fail=1
fi
exit $fail
