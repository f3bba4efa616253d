#!/bin/sh
# Runs a weft-dist test on NP ranks of this machine:
#   tests/dist/mpirun.sh NP PROGRAM [ARGS...]
# --oversubscribe: CI has 2 cores and runs 4 ranks; --bind-to none: Open
# MPI would otherwise pin each rank, workers and all, to one core;
# --allow-run-as-root: CI runs as root.  timeout ends a hung job (every
# test also has its own criterion timeout), so that no test can hang CI.
set -eu
np=$1
shift
as_root=""
if [ "$(id -u)" -eq 0 ]; then
    as_root=--allow-run-as-root
fi
# shellcheck disable=SC2086  # as_root is empty or one word
exec timeout -k 10 "${WEFT_DIST_TEST_TIMEOUT:-150}" mpirun $as_root --oversubscribe \
    --bind-to none -np "$np" "$@"
