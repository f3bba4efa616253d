#!/usr/bin/env bash
# Installs what is missing, builds weft and runs the demo programs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d build/demo ] || meson setup build/demo --buildtype=release -Dtests=false >/dev/null
ninja -C build/demo >/dev/null
for prog in fib pmap map_fn tracing sleep_map; do
    if [ -x "build/demo/examples/$prog" ]; then
        echo "== examples/$prog"
        "build/demo/examples/$prog"
    fi
done
