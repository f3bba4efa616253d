#!/bin/sh
# Installs a configured build into a staging directory and builds
# examples/tour.c against it the way a user does, through
# `pkg-config weft`: linked to libweft.so, and linked statically to
# libweft.a with the libraries `pkg-config --static` lists.  Both programs
# must run.  When weft-dist was built, examples/dist_map.c is built through
# `pkg-config weft-dist` and run on 2 ranks.  Usage:
# scripts/check-install.sh BUILD_DIR
set -eu
build=${1:?usage: scripts/check-install.sh BUILD_DIR}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >/dev/null
pc=$(find "$stage" -name weft.pc | head -n 1)
[ -n "$pc" ] || { echo "check-install: no weft.pc installed" >&2; exit 1; }
# The .pc file names the real prefix; the sysroot maps it into the stage.
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR="$stage"
libdir=$(dirname "$(dirname "$pc")")   # <libdir>/pkgconfig/weft.pc
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Wextra -Werror -o "$stage/tour" examples/tour.c $(pkg-config --cflags --libs weft)
LD_LIBRARY_PATH="$libdir" "$stage/tour" >/dev/null
# The public headers use nothing of ck, so its flags (-D__x86_64__) stay
# out of the users' builds.
if pkg-config --cflags weft | grep -q -- '-D'; then
    echo "check-install: pkg-config --cflags weft defines macros: $(pkg-config --cflags weft)" >&2
    exit 1
fi
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
# shellcheck disable=SC2046,SC2086
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
# weft-dist's examples (dist_*.c) build through weft-dist below.
for std in c99 c11; do
    for ex in examples/*.c; do
        case $ex in examples/dist_*) continue ;; esac
        # shellcheck disable=SC2046
        $cc -std=$std -Wall -Wextra -pedantic -Werror -o "$stage/example" "$ex" \
            $(pkg-config --cflags --libs weft) -lm ||
            { echo "check-install: $ex does not build with -std=$std" >&2; exit 1; }
    done
done
# weft-dist, installed when MPI was found: examples/dist_map.c built through
# `pkg-config weft-dist` and run on 2 ranks.  The sysroot moves every path
# of every .pc file into the stage, MPI's own too: link those there.
dist_pc=$(find "$stage" -name weft-dist.pc | head -n 1)
if [ -n "$dist_pc" ]; then
    mpi_reqs=""
    for req in $(pkg-config --print-requires weft-dist | cut -d' ' -f1); do
        [ "$req" = weft ] && continue
        mpi_reqs="$mpi_reqs $req"
        for dir in $(PKG_CONFIG_SYSROOT_DIR="" pkg-config --cflags-only-I --libs-only-L "$req"); do
            dir=${dir#-[IL]}
            [ -e "$stage$dir" ] || { mkdir -p "$stage$(dirname "$dir")" && ln -s "$dir" "$stage$dir"; }
        done
    done
    for std in c99 c11; do
        # shellcheck disable=SC2046
        $cc -std=$std -Wall -Wextra -pedantic -Werror -o "$stage/dist_map" examples/dist_map.c \
            $(pkg-config --cflags --libs weft-dist) ||
            { echo "check-install: examples/dist_map.c does not build with -std=$std" >&2; exit 1; }
    done
    as_root=""
    [ "$(id -u)" -ne 0 ] || as_root=--allow-run-as-root
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH="$libdir" timeout 120 mpirun $as_root --oversubscribe --bind-to none \
        -np 2 "$stage/dist_map" 200 | grep -q "^ok: every result" ||
        { echo "check-install: examples/dist_map did not run on 2 ranks" >&2; exit 1; }
fi
# The installed headers are C++'s too: each compiles on its own as C++11
# and C++17 with g++ and with clang++ (which also flags identifiers that
# C++ reserves, such as any with a double underscore), and a C++ program
# that calls into every header links (extern "C") and runs.
inc=$(dirname "$(find "$stage" -name weft.h | head -n 1)")
cat >"$stage/consumer.cpp" <<'EOF'
#include <weft.h>
static int body(weft_ctx *cx, weft_value *const *args, weft_value **outs, void *)
{
    outs[0] = weft_neg(cx, args[0]);
    return weft_ctx_status(cx);
}
int main()
{
    weft_runtime *rt = nullptr;
    if (weft_runtime_create(nullptr, &rt) != 0 || weft_runtime_workers(rt) == 0)
        return 1;
    int64_t n = 3;
    weft_tensor *x = nullptr, *y = nullptr;
    weft_function_desc d = {};
    d.body = body;
    d.n_args = d.n_outs = 1;
    weft_function *f = nullptr;
    int err = weft_tensor_create(WEFT_F64, 1, &n, nullptr, &x);
    if (err == 0)
        err = weft_function_create(rt, &d, &f);
    weft_arg a = weft_arg_tensor(x);
    if (err == 0)
        err = weft_function_call(f, &a, 1, &y, 1);
    if (err != 0)
        fprintf(stderr, "%s: %s\n", weft_err_name(err), weft_errmsg());
    weft_tensor_release(y);
    weft_tensor_release(x);
    weft_function_destroy(&f);
    weft_runtime_destroy(&rt);
    return err != 0;
}
EOF
for cxx in "${CXX:-c++}" clang++; do
    command -v "$cxx" >/dev/null 2>&1 || continue
    reserved=""
    case $($cxx --version) in *clang*) reserved=-Wreserved-identifier ;; esac
    for std in c++11 c++17; do
        for h in $(cd "$inc" && find weft.h weft -name '*.h' | sort); do
            # <weft/dist.h> needs MPI's headers, which are MPI's to keep
            # clean: they come as system headers, and without MPI's
            # deprecated C++ bindings (whose casts between function types
            # fail -Werror).
            mpi=""
            if [ "$h" = weft/dist.h ]; then
                [ -n "$dist_pc" ] || continue
                # shellcheck disable=SC2086
                mpi="-DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX $(pkg-config --cflags-only-I $mpi_reqs |
                    sed 's/-I/-isystem /g')"
            fi
            printf '#include <%s>\n#include <%s>\nint main() { return 0; }\n' "$h" "$h" >"$stage/header.cpp"
            # shellcheck disable=SC2046,SC2086
            $cxx -std=$std -Wall -Wextra -pedantic -Werror $reserved $mpi -fsyntax-only \
                $(pkg-config --cflags weft) "$stage/header.cpp" ||
                { echo "check-install: <$h> does not compile with $cxx -std=$std" >&2; exit 1; }
        done
        # shellcheck disable=SC2046
        $cxx -std=$std -Wall -Wextra -pedantic -Werror -o "$stage/consumer" "$stage/consumer.cpp" \
            $(pkg-config --cflags --libs weft) ||
            { echo "check-install: a C++ program does not build with $cxx -std=$std" >&2; exit 1; }
        LD_LIBRARY_PATH="$libdir" "$stage/consumer"
    done
done
echo "check-install: tour built and ran through pkg-config weft (shared and static); examples build as c99 and c11${dist_pc:+; dist_map built through pkg-config weft-dist and ran on 2 ranks}; headers compile and link as C++"
