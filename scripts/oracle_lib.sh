# Shared steps of the Lucene oracle scripts in scripts/test.d (sourced, after `cd` to the
# repository root and with BIN, OUT and NAME set): remove OUT and stop the server on exit,
# build the debug scry unless SCRY_BIN names a binary, and start / stop `scry serve` on a
# free loopback port with its data under OUT (the URL in SCRY_URL).
SPID=""
oracle_cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap oracle_cleanup EXIT

oracle_build_scry() {
  if [ -z "${SCRY_BIN:-}" ]; then
    if [ ! -f build/debug/CMakeCache.txt ]; then cmake --preset debug >/dev/null; fi
    cmake --build build/debug -j"$(nproc)" --target scry >/dev/null
  fi
}

oracle_serve() {
  "$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn > "$OUT/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 300); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
  [ -s "$OUT/port" ] || { cat "$OUT/server.log" >&2; echo "$NAME: scry serve did not start" >&2; exit 1; }
  SCRY_URL="http://127.0.0.1:$(cat "$OUT/port")"
}

oracle_stop() {
  kill "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
}
