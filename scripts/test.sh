#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole criterion suite
# three times: a plain debug build, under ThreadSanitizer, and under
# AddressSanitizer + UndefinedBehaviorSanitizer; each with 1, 2 and 4
# workers ($WEFT_NUM_THREADS).  All builds use -Werror.  Ends with one line
# "N passed, N failed" summing every criterion test run.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1

configs=(
    "plain:"
    "tsan:-Db_sanitize=thread"
    "asan:-Db_sanitize=address,undefined -Db_lundef=false"
)
workers=(1 2 4)
passed=0
failed=0
status=0

for cfg in "${configs[@]}"; do
    name=${cfg%%:*}
    opts=${cfg#*:}
    dir=build/ci-$name
    if [ ! -d "$dir" ]; then
        # shellcheck disable=SC2086
        meson setup "$dir" --buildtype=debug -Dwerror=true -Dfault_injection=true $opts >/dev/null || { status=1; continue; }
    fi
    echo "== $name: build"
    if ! ninja -C "$dir" >"$dir/ninja.log" 2>&1; then
        tail -40 "$dir/ninja.log"
        status=1
        continue
    fi
    for w in "${workers[@]}"; do
        echo "== $name: WEFT_NUM_THREADS=$w"
        if ! WEFT_NUM_THREADS=$w meson test -C "$dir" --print-errorlogs --num-processes 1 >"$dir/test-$w.log" 2>&1; then
            status=1
            grep -E "FAIL|TIMEOUT|ERROR" "$dir/test-$w.log" | head -20
            tail -60 "$dir/meson-logs/testlog.txt"
        fi
        grep -E "^(Ok|Fail|Timeout):" "$dir/test-$w.log" | tr '\n' ' '; echo
        # Criterion runs each test in a child process whose sanitizer report
        # does not always reach the exit status: any report fails the run.
        if grep -qE "ERROR: (Leak|Address)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$dir/meson-logs/testlog.txt"; then
            echo "sanitizer report in $name, WEFT_NUM_THREADS=$w:"
            grep -E -A30 "ERROR: (Leak|Address)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$dir/meson-logs/testlog.txt" | head -80
            status=1
        fi
        # Sum criterion's own synthesis lines.
        while read -r p f c; do
            passed=$((passed + p)); failed=$((failed + f + c))
        done < <(sed -n 's/.*Synthesis: Tested: [0-9]* | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' "$dir/meson-logs/testlog.txt")
    done
done

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1   # a build, timeout or sanitizer failure outside criterion's count
fi
echo "$passed passed, $failed failed"
exit "$status"
