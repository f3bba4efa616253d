#!/usr/bin/env bash
# Keeps docs/GUIDE.md honest.
#
#   scripts/guide-snippets.sh check [BUILDDIR]
#       Builds and runs tests/api/test_guide.c, which checks that every C
#       block of the guide appears verbatim in the test and runs it.
#   scripts/guide-snippets.sh timelines [BUILDDIR]
#       Regenerates docs/timeline-pi1.svg and docs/timeline-pi10.svg: runs
#       examples/sleep_map --profile and renders its two traced timelines
#       with tools/weft-timeline-svg.
#
# BUILDDIR defaults to build/guide (a release build, set up if absent).
set -euo pipefail
cd "$(dirname "$0")/.."

cmd=${1:-}
build=${2:-build/guide}
if [ "$cmd" != check ] && [ "$cmd" != timelines ]; then
    echo "usage: $0 check|timelines [BUILDDIR]" >&2
    exit 2
fi
if [ ! -d "$build" ]; then
    meson setup "$build" --buildtype=release >/dev/null
fi

case "$cmd" in
check)
    ninja -C "$build" tests/test_api_guide >/dev/null
    "$build/tests/test_api_guide" --ascii
    ;;
timelines)
    ninja -C "$build" examples/sleep_map tools/weft-timeline-svg >/dev/null
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$build/examples/sleep_map" --profile "$tmp/sleep_map.json"
    for pi in 1 10; do
        "$build/tools/weft-timeline-svg" "$tmp/sleep_map-traced-pi$pi.json" \
            "docs/timeline-pi$pi.svg"
        echo "wrote docs/timeline-pi$pi.svg"
    done
    ;;
esac
