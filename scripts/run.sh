#!/usr/bin/env bash
# Starts the server for `make run`: release build, data folder, loopback:PORT.
set -euo pipefail
DATA=${1:-./data}
PORT=${2:-9200}
BIN=build/release/scry
mkdir -p "$DATA"
if "$BIN" --help 2>/dev/null | grep -q '^  serve'; then
  exec "$BIN" serve --data "$DATA" --port "$PORT" --bind 127.0.0.1
fi
"$BIN" --version
"$BIN" --help
