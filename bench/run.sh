#!/bin/sh
# Builds the benchmarks (release libweft, programs at -O2) and runs them all,
# printing one table per benchmark.
#
#   bench/run.sh                 # workers/threads "1 2"
#   bench/run.sh "1 2 4 8 16"    # a bigger machine
#   BENCH_REPS=5 bench/run.sh    # fewer repetitions (default 11)
#   BENCH_ONLY="fib spawn" bench/run.sh   # a subset: fib spawn lace map idle trace eager cache dist shape matmul numeric index conv linalg signal grad grad_map
#   BENCH_WAIT_QUIET=120 bench/run.sh     # on a shared machine: before each
#       program wait (at most 120 s) until the CPUs are >= 90% idle over 2 s
# Finer knobs read by the programs: BENCH_FIB_N="30 35", BENCH_WEFT_ONLY=1
# (fib: skip OpenMP/TBB, for perf record), BENCH_MAP_ONLY=balanced|unbalanced,
# BENCH_MAP_SIZES="1000 1000000 10000000", BENCH_LACE_ONLY="queens uts cilksort matmul",
# BENCH_NUMERIC_ONLY="normalize softmax" (a subset of: normalize chain softmax colsum
# matmul fused4), BENCH_INDEX_ONLY="sort top_k" (a subset of: sort argsort top_k
# segsum gather_nd random mask argwhere unique), BENCH_CONV_ONLY="conv3x3 max_pool" (a
# subset of: conv3x3 stem conv1x1 max_pool avg_pool depthwise conv3d frac_pool),
# BENCH_LINALG_ONLY="solve_big" (a subset of: solve_batch chol_batch solve_big).
#
# Run it on a quiet machine: every program measures weft, serial C, OpenMP
# and oneTBB in the same process, one after the other.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
workers=${1:-"1 2"}
build=${BENCH_BUILD:-"$root/build/bench"}
only=${BENCH_ONLY:-"fib spawn lace map idle trace eager cache dist shape matmul numeric index conv linalg signal grad grad_map"}

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" --buildtype=release -Dbenchmarks=true -Dtests=false
fi
ninja -C "$build"

echo "weft benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: nproc=$(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "workers/threads: $workers"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# With BENCH_WAIT_QUIET=S, each program waits (at most S seconds) until the
# machine has been at least 90% idle over 2 s, for shared machines.
idle_pct() {
    a=$(head -1 /proc/stat); sleep 2; b=$(head -1 /proc/stat)
    echo "$a
$b" | awk '{t=0; for (i=2;i<=NF;i++) t+=$i; idle=$5+$6; if (NR==1) {t0=t; i0=idle} else print int(100*(idle-i0)/(t-t0+0.001))}'
}
wait_quiet() {
    [ -n "${BENCH_WAIT_QUIET:-}" ] || return 0
    waited=0
    while [ "$(idle_pct)" -lt 90 ] && [ "$waited" -lt "$BENCH_WAIT_QUIET" ]; do
        waited=$((waited + 2))
    done
    echo "(waited ${waited}s for a quiet machine)"
}

status=0
for b in $only; do
    exe="$build/bench/bench_$b"
    if [ ! -x "$exe" ]; then
        echo "(bench_$b not built: skipped)"
        continue
    fi
    echo
    wait_quiet
    echo "#### bench_$b $workers   (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
    s0=$(head -1 /proc/stat)
    tfile=$(mktemp)
    # bench_dist is an MPI program of 2 ranks (1 or 2 threads each, whatever
    # the worker list); the others take the worker list.
    args=$workers
    launch=""
    if [ "$b" = dist ]; then
        args=""
        launch="mpirun -np 2 --bind-to none"
        [ "$(id -u)" -ne 0 ] || launch="$launch --allow-run-as-root"
    fi
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %U %S' -o "$tfile" $launch "$exe" $args || status=1
    s1=$(head -1 /proc/stat)
    # How much of the machine other processes used meanwhile: all busy CPU
    # time minus this program's own user + system time.
    echo "$s0
$s1
$(tail -1 "$tfile")" | awk -v hz="$(getconf CLK_TCK)" '
        NR <= 2 { t = 0; for (i = 2; i <= NF; i++) t += $i; busy = t - $5 - $6
                  if (NR == 1) { t0 = t; b0 = busy } else { t1 = t; b1 = busy } }
        NR == 3 { mine = ($2 + $3) * hz
                  other = (b1 - b0 - mine) / (t1 - t0 + 0.001) * 100
                  if (other < 0) other = 0
                  printf "#### bench done in %.0f s; other processes used %.0f%% of the machine meanwhile\n", $1, other }'
    rm -f "$tfile"
done
exit $status
