#!/bin/sh
# Installs a configured build into a staging directory and builds
# examples/tour.c against it the way a user does, through
# `pkg-config weft`: linked to libweft.so, and linked statically to
# libweft.a with the libraries `pkg-config --static` lists.  Both programs
# must run.  Usage: scripts/check-install.sh BUILD_DIR
set -eu
build=${1:?usage: scripts/check-install.sh BUILD_DIR}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >/dev/null
pc=$(find "$stage" -name weft.pc | head -n 1)
[ -n "$pc" ] || { echo "check-install: no weft.pc installed" >&2; exit 1; }
# The .pc file names the real prefix; the sysroot maps it into the stage.
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$stage"
libdir=$(dirname "$(dirname "$pc")")   # <libdir>/pkgconfig/weft.pc
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Wextra -Werror -o "$stage/tour" examples/tour.c $(pkg-config --cflags --libs weft)
LD_LIBRARY_PATH="$libdir" "$stage/tour" >/dev/null
# weft.pc requires only what libweft links: each package of
# Requires.private is a library libweft.so needs (xxhash, used header-only,
# is not one, and requiring it failed `pkg-config weft` without its .pc).
needed=$(readelf -d "$libdir/libweft.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for req in $(pkg-config --print-requires-private weft | cut -d' ' -f1); do
    for l in $(pkg-config --libs-only-l "$req"); do
        echo "$needed" | grep -q "^lib${l#-l}\.so" ||
            { echo "check-install: weft.pc requires $req, which libweft.so does not link" >&2; exit 1; }
    done
done
# Statically: libweft.a itself, then what --static adds (ck, pthread, m).
static_libs=$(pkg-config --static --libs weft | sed 's/-lweft\b/-l:libweft.a/')
# shellcheck disable=SC2086
$cc -std=c11 -Wall -Wextra -Werror -o "$stage/tour-static" examples/tour.c \
    $(pkg-config --cflags weft) $static_libs
if ldd "$stage/tour-static" | grep -q libweft; then
    echo "check-install: the static program still needs libweft.so" >&2
    exit 1
fi
"$stage/tour-static" >/dev/null
# Every example compiles as a user's strict ISO C program would: without
# -pthread (whose _REENTRANT quietly enables POSIX declarations in glibc),
# so a POSIX call with no feature-test macro in the file fails here.
for std in c99 c11; do
    for ex in examples/*.c; do
        # shellcheck disable=SC2046
        $cc -std=$std -Wall -Wextra -pedantic -Werror -o "$stage/example" "$ex" \
            $(pkg-config --cflags --libs weft) -lm ||
            { echo "check-install: $ex does not build with -std=$std" >&2; exit 1; }
    done
done
echo "check-install: tour built and ran through pkg-config weft (shared and static); examples build as c99 and c11"
