#!/usr/bin/env bash
# Fails if a header does not compile on its own, or if an include points up the layers of
# DESIGN.md section 2 (a layer may include only itself and the layers below it).
set -uo pipefail
cd "$(dirname "$0")/.."
order=(base text index search mapping shard cluster api http cmd)
rank() { local i=0; for l in "${order[@]}"; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i+1)); done; echo -1; }
fail=0
CFLAGS=$(pkg-config --cflags jansson libmicrohttpd icu-uc 2>/dev/null)
for h in $(git ls-files 'src/*.h' 2>/dev/null; git ls-files -o --exclude-standard 'src/*.h' 2>/dev/null); do
  [ -f "$h" ] || continue
  if ! echo "#include \"${h#src/}\"" | cc -std=c11 -D_GNU_SOURCE -Wall -Werror -fsyntax-only -Isrc $CFLAGS -x c - 2>/tmp/hdr.$$; then
    echo "header does not compile on its own: $h"; cat /tmp/hdr.$$; fail=1
  fi
done
rm -f /tmp/hdr.$$
for f in $(git ls-files 'src/*.[ch]'; git ls-files -o --exclude-standard 'src/*.[ch]'); do
  [ -f "$f" ] || continue
  layer=$(echo "$f" | cut -d/ -f2); r=$(rank "$layer")
  for dep in $(grep -oE '^#include "([a-z_]+)/' "$f" | sed -E 's/#include "([a-z_]+)\//\1/' | sort -u); do
    d=$(rank "$dep")
    if [ "$d" -gt "$r" ]; then echo "include points up the layers: $f includes $dep/"; fail=1; fi
  done
done
[ $fail -eq 0 ] && echo "headers: ok (each compiles alone, includes point down)"
exit $fail
