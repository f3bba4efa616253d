#!/usr/bin/env bash
# Installs what is missing, then builds and checks everything:
#  0. the lint step (seconds): library code speaks one atomics dialect
#     (scripts/check-atomics.sh);
#  1. the criterion suite three times: a plain debug build, under
#     ThreadSanitizer, and under AddressSanitizer + UndefinedBehaviorSanitizer;
#     the plain one with 1 worker ($WEFT_NUM_THREADS), under
#     ThreadSanitizer with 2, under the address and UB sanitizers with 2;
#     the suites about threads (runtime, cache, dist and the trace suites
#     labelled "workers") with 4 too, plainly and under ThreadSanitizer;
#     all with -Werror, each suite run two tests at a time;
#     weft-dist's tests among them run under mpirun on 1, 2 and 4 ranks
#     (tests/dist/mpirun.sh, each job bounded by a timeout);
#  2. the soak test (bench/soak.c) for $WEFT_SOAK_SECONDS (default 30);
#  3. valgrind memcheck of every example, and of the native tier's
#     eviction test (the one run of native code under valgrind);
#  4. an install into a staging directory, with examples/tour.c built
#     through `pkg-config weft` (shared and static) and run, and
#     examples/dist_map.c through `pkg-config weft-dist`, run on 2 ranks;
#  5. a build of bench/ with -Werror (the benchmarks are not run), and of
#     every object of everything else with clang and -Werror (not linked);
#  6. each libFuzzer target (clang) for $WEFT_FUZZ_SECONDS (default 20),
#     starting from the inputs of fuzz/seeds/<target>/ (past findings).
# Ends with one line "N passed, N failed": every criterion test run, plus one
# for each step of 0 and 2-6.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/setup.sh || exit 1

soak_seconds=${WEFT_SOAK_SECONDS:-30}
fuzz_seconds=${WEFT_FUZZ_SECONDS:-20}
configs=(
    "plain:"
    "tsan:-Db_sanitize=thread"
    "asan:-Db_sanitize=address,undefined -Db_lundef=false"
)
# Races need threads that meet, so ThreadSanitizer runs with 2 workers,
# and the suites about threads meeting with 4 as well (the op suites'
# kernels split the same way on 2); memory errors do not depend on the
# worker count, so the address and UB sanitizers run once, with 2.  The
# plain build runs the counts the sanitizers do not: 1 worker (no thief at
# all) and, for the suites about threads meeting, 4 (more workers than
# cores; the op suites make runtimes of 1, 2 and 4 workers themselves,
# whatever $WEFT_NUM_THREADS says).  Together they keep the whole check
# under 30 minutes on 2 cores.
declare -A workers_of=([plain]="1 4" [tsan]="2 4" [asan]="2")
threads_meet="--suite runtime --suite cache --suite dist --suite workers"
declare -A suites_of=([plain:4]="$threads_meet" [tsan:4]="$threads_meet")
passed=0
failed=0
status=0

# step NAME CMD...: runs CMD, counts it, shows its output's tail on failure.
step() {
    local name=$1 log start=$SECONDS
    shift
    log=$(mktemp)
    echo "== $name"
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "$(tail -1 "$log") ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        status=1
        echo "FAILED: $name"
        tail -40 "$log"
    fi
    rm -f "$log"
}

# Cheap checks first, so that a violation shows before the builds.
step "lint: one atomics dialect in library code" scripts/check-atomics.sh

for cfg in "${configs[@]}"; do
    name=${cfg%%:*}
    opts=${cfg#*:}
    dir=build/ci-$name
    if [ ! -d "$dir" ]; then
        # shellcheck disable=SC2086
        meson setup "$dir" --buildtype=debug -Dwerror=true -Dfault_injection=true $opts >/dev/null || { status=1; failed=$((failed + 1)); continue; }
    fi
    echo "== $name: build"
    if ! ninja -C "$dir" >"$dir/ninja.log" 2>&1; then
        tail -40 "$dir/ninja.log"
        status=1
        failed=$((failed + 1))
        continue
    fi
    for w in ${workers_of[$name]}; do
        echo "== $name: WEFT_NUM_THREADS=$w ${suites_of[$name:$w]:-}"
        t0=$SECONDS
        # shellcheck disable=SC2086  # the suite options are words
        if ! WEFT_NUM_THREADS=$w meson test -C "$dir" --print-errorlogs --num-processes 2 \
            ${suites_of[$name:$w]:-} >"$dir/test-$w.log" 2>&1; then
            status=1
            grep -E "FAIL|TIMEOUT|ERROR" "$dir/test-$w.log" | head -20
            tail -60 "$dir/meson-logs/testlog.txt"
        fi
        grep -E "^(Ok|Fail|Timeout):" "$dir/test-$w.log" | tr '\n' ' '; echo "($((SECONDS - t0)) s)"
        # Criterion runs each test in a child process whose sanitizer report
        # does not always reach the exit status: any report fails the run.
        if grep -qE "ERROR: (Leak|Address)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$dir/meson-logs/testlog.txt"; then
            echo "sanitizer report in $name, WEFT_NUM_THREADS=$w:"
            grep -E -A30 "ERROR: (Leak|Address)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$dir/meson-logs/testlog.txt" | head -80
            status=1
            failed=$((failed + 1))
        fi
        # Sum criterion's own synthesis lines.
        while read -r p f c; do
            passed=$((passed + p)); failed=$((failed + f + c))
        done < <(sed -n 's/.*Synthesis: Tested: [0-9]* | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' "$dir/meson-logs/testlog.txt")
    done
done

plain=build/ci-plain
if [ -x "$plain/weft-soak" ]; then
    step "soak: $soak_seconds s, 8 outside threads" env WEFT_NUM_THREADS=2 "$plain/weft-soak" "$soak_seconds"
    for ex in tour fib pmap map_fn tracing sleep_map batchnorm mistakes; do
        [ -x "$plain/examples/$ex" ] || continue
        step "valgrind: examples/$ex" env WEFT_NUM_THREADS=2 valgrind -q --error-exitcode=1 \
            --leak-check=full --errors-for-leak-kinds=definite,indirect "$plain/examples/$ex"
    done
    # The examples' groups are below the native tier's size threshold, so
    # this is where native code runs under valgrind: the test compiles one
    # small group (its threshold is one element), runs it, evicts it and
    # checks that its code is freed.  --trace-children: criterion runs the
    # test in a process it starts; --smc-check: the code is generated in
    # anonymous memory, and an address may hold new code after an eviction.
    if [ -x "$plain/tests/test_trace_jit" ]; then
        step "valgrind: trace/jit eviction_frees_native_code" env WEFT_NUM_THREADS=2 valgrind -q \
            --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            --show-leak-kinds=definite,indirect --trace-children=yes --smc-check=all-non-file \
            "$plain/tests/test_trace_jit" --filter 'jit/eviction_frees_native_code' -j1
    fi
fi
if [ -f "$plain/build.ninja" ]; then
    step "install: examples/tour.c through pkg-config weft" scripts/check-install.sh "$plain"
fi

# The benchmarks are not run here (timings are not tests), only built with
# -Werror, so that they keep compiling against the library as it changes.
# shellcheck disable=SC2317  # called through step
bench_build() {
    [ -f build/ci-bench/build.ninja ] ||
        meson setup build/ci-bench --buildtype=release -Dbenchmarks=true -Dtests=false \
            -Dexamples=false -Dwerror=true || return 1
    ninja -C build/ci-bench
}
step "build: bench/ with -Werror (not run)" bench_build

# gcc builds everything above; clang must accept the same code (tests and
# examples included), with -Werror too; at -O0, since clang's warnings come
# from its front end whatever the optimisation, and -O0 builds fastest.
# Objects only: linking them (about 40 s of 100 on 2 cores) checks nothing
# that the gcc builds have not linked already.
# shellcheck disable=SC2317  # called through step
clang_build() {
    [ -f build/ci-clang/build.ninja ] ||
        CC=clang CXX=clang++ meson setup build/ci-clang --buildtype=debug -Dwerror=true \
            -Dfault_injection=true || return 1
    local objects
    objects=$(ninja -C build/ci-clang -t targets all | sed -n 's/^\([^:]*\.o\): .*/\1/p')
    [ -n "$objects" ] || return 1
    # shellcheck disable=SC2086  # one word per object
    ninja -C build/ci-clang $objects
}
if command -v clang >/dev/null 2>&1; then
    step "build: everything with clang and -Werror (objects, not linked)" clang_build
fi

if command -v clang >/dev/null 2>&1; then
    fz=build/ci-fuzz
    if [ ! -d "$fz" ]; then
        CC=clang CXX=clang++ meson setup "$fz" --buildtype=debugoptimized -Dfuzzing=true -Dtests=false \
            -Dexamples=false -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
    fi
    if ninja -C "$fz" >"$fz/ninja.log" 2>&1; then
        for t in "$fz"/fuzz/fuzz_*; do
            if [ ! -x "$t" ] || [ ! -f "$t" ]; then continue; fi
            corpus="$fz/corpus-$(basename "$t")"
            seeds="fuzz/seeds/$(basename "$t")"
            mkdir -p "$corpus"
            # New inputs go to the first directory; the seeds are only read.
            # shellcheck disable=SC2046
            step "fuzz: $(basename "$t") for $fuzz_seconds s" "$t" -max_total_time="$fuzz_seconds" \
                -print_final_stats=0 "$corpus" $([ -d "$seeds" ] && echo "$seeds")
        done
    else
        tail -40 "$fz/ninja.log"
        status=1
        failed=$((failed + 1))
    fi
else
    echo "== fuzz: skipped (clang is not installed; scripts/setup.sh installs it)"
fi

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1   # a build, timeout or sanitizer failure outside criterion's count
fi
echo "$passed passed, $failed failed ($SECONDS s in all)"
exit "$status"
