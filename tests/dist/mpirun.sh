#!/bin/sh
# Runs a weft-dist test on NP ranks of this machine:
#   tests/dist/mpirun.sh NP PROGRAM [ARGS...]
# --oversubscribe: CI has 2 cores and runs 4 ranks; --bind-to none: Open
# MPI would otherwise pin each rank, workers and all, to one core;
# --allow-run-as-root: CI runs as root.  Ranks that wait in MPI yield the
# CPU (mpi_yield_when_idle) instead of spinning, since their workers and
# the other ranks share the cores: an empty map on 2 ranks x 2 workers took
# 24-34 ms with spinning on a loaded 2-core machine, 57-70 us yielding.
# Only shared memory carries messages (btl self,vader): the tcp transport
# is not needed on one machine, and ThreadSanitizer reports lock-order
# inversions inside it during MPI_Init.  timeout ends a hung job (every
# test also has its own criterion timeout), so that no test can hang CI.
set -eu
np=$1
shift
as_root=""
if [ "$(id -u)" -eq 0 ]; then
    as_root=--allow-run-as-root
fi
# shellcheck disable=SC2086  # as_root is empty or one word
exec timeout -k 10 "${WEFT_DIST_TEST_TIMEOUT:-300}" mpirun $as_root --oversubscribe \
    --bind-to none --mca btl self,vader --mca mpi_yield_when_idle 1 -np "$np" "$@"
