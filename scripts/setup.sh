#!/usr/bin/env bash
# Installs what weft needs on Debian 12 when it is missing.  Idempotent; asks
# apt only when a package is absent.  Run as root or with sudo available.
set -euo pipefail

pkgs=(gcc g++ meson ninja-build pkg-config libck-dev libxxhash-dev
      libcriterion-dev libtbb-dev valgrind clang libclang-rt-14-dev python3
      libopenmpi-dev openmpi-bin libopenblas-dev llvm-15-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
