#!/usr/bin/env bash
# Static checks (`make lint`, not part of `make test`): clang-tidy with .clang-tidy over the C
# sources in src/ (or only the files given), run in parallel. Flags come from a
# compile_commands.json made by configuring (not building) the debug preset's settings into
# build/lint, refreshed on every run so new files are seen without disturbing build/debug. With --format, also checks those files against .clang-format (report only; run
# clang-format -i on your own files to fix). Exits non-zero on any clang-tidy finding.
# Usage: scripts/lint.sh [--format] [file.c ...]
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
BUILD=${LINT_BUILD_DIR:-build/lint}
format=0
if [ "${1:-}" = "--format" ]; then format=1; shift; fi

cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-g -O1" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null || { echo "lint: cannot configure $BUILD"; exit 1; }
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'src/*.c'; git ls-files -o --exclude-standard 'src/*.c')
fi
# Only files the build knows (a brand-new file needs a re-configure to get its flags).
known=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if grep -q "\"file\": \"$(pwd)/$f\"" "$BUILD/compile_commands.json"; then
    known+=("$f")
  else
    echo "lint: skipping $f (not in $BUILD/compile_commands.json; re-run cmake)"
  fi
done
[ ${#known[@]} -gt 0 ] || { echo "lint: nothing to check"; exit 0; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${known[@]}" |
  xargs -P "$JOBS" -n 4 clang-tidy -p "$BUILD" --quiet >"$log" 2>&1
rc=$?
grep -E '(error|warning):' -A3 "$log" | grep -v 'warnings generated' || true
fail=0
[ $rc -eq 0 ] || fail=1

if [ $format -eq 1 ]; then
  hdrs=()
  for f in "${known[@]}"; do h=${f%.c}.h; [ -f "$h" ] && hdrs+=("$h"); done
  if ! clang-format --dry-run -Werror "${known[@]}" "${hdrs[@]}" 2>/dev/null; then
    echo "lint: formatting differs from .clang-format in:"
    for f in "${known[@]}" "${hdrs[@]}"; do
      clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "  $f"
    done
    fail=1
  fi
fi
echo "lint: ${#known[@]} file(s), $([ $fail -eq 0 ] && echo clean || echo FINDINGS)"
exit $fail
