#!/bin/sh
# Keeps the library on one atomics dialect, the GCC __atomic builtins
# (docs/DESIGN.md says why): fails when library code includes
# <stdatomic.h>, uses _Atomic or calls ck_pr_*.  Only the library is
# checked: tests/api/test_guide.c runs the guide's snippets, which show a
# user's program with C11 atomics.  A grep: it takes well under a second.
# Usage: scripts/check-atomics.sh
set -eu
cd "$(dirname "$0")/.."
found=$(grep -rnE --include='*.c' --include='*.h' \
    '#[[:space:]]*include[[:space:]]*<stdatomic\.h>|\b_Atomic\b|\bck_pr_[a-z0-9_]+' \
    base runtime trace cache dist include || true)
if [ -n "$found" ]; then
    echo "check-atomics: library code must use the __atomic builtins" \
        "(no <stdatomic.h>, _Atomic or ck_pr_):" >&2
    echo "$found" >&2
    exit 1
fi
echo "check-atomics: ok"
