#!/usr/bin/env bash
# Test step: build the libFuzzer targets (fuzz preset, clang) and run each for a short bounded
# time against its seed corpus. FUZZ_SECONDS overrides the per-fuzzer time (default 4; `make fuzz` runs each for 60 s).
set -uo pipefail
cd "$(dirname "$0")/../.."
JOBS=${JOBS:-$(nproc)}
targets=()
for src in tests/fuzz/*_fuzz.c; do
  [ -e "$src" ] && targets+=("$(basename "$src" .c)")
done
if [ ${#targets[@]} -eq 0 ]; then echo "fuzz: no fuzz targets"; exit 0; fi
cmake --preset fuzz >/dev/null || exit 1
cmake --build build/fuzz -j"$JOBS" --target "${targets[@]}" || exit 1
# A fixed libFuzzer seed keeps the suite repeatable (set FUZZ_SEED to explore; `make fuzz` uses
# a random one). Findings from exploration join tests/fuzz/corpus/<name>/ as regression inputs.
export FUZZ_SEED=${FUZZ_SEED:-1}
echo "fuzz: libFuzzer seed $FUZZ_SEED"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-4}"
