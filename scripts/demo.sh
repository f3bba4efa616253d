#!/usr/bin/env bash
# Installs what is missing, builds weft and runs the demo programs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d build/demo ] || meson setup build/demo --buildtype=release -Dtests=false >/dev/null
ninja -C build/demo >/dev/null
for prog in tour fib pmap map_fn tracing sleep_map; do
    if [ -x "build/demo/examples/$prog" ]; then
        echo "== examples/$prog"
        if [ "$prog" = sleep_map ]; then
            # One timeline per configuration, rendered like docs/timeline-pi*.svg.
            "build/demo/examples/$prog" --profile build/demo/sleep_map.json
            for pi in 1 10; do
                build/demo/tools/weft-timeline-svg "build/demo/sleep_map-traced-pi$pi.json" \
                    "build/demo/timeline-pi$pi.svg"
                echo "  rendered build/demo/timeline-pi$pi.svg"
            done
        else
            "build/demo/examples/$prog"
        fi
    fi
done
