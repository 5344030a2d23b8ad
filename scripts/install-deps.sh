#!/bin/sh
# Installs the Debian packages tcalc builds and tests with, when missing.
set -e
pkgs="make gcc pkg-config libedit-dev libcjson-dev libcriterion-dev libopenblas-dev libsleef-dev liblapacke-dev zlib1g-dev python3 python3-mpmath tmux groff-base"
# plots written as PNG, SVG and PDF (src/plot_cairo.c)
pkgs="$pkgs libcairo2-dev libfontconfig-dev"
# reliability: libFuzzer (clang 14 and its runtime), valgrind, GNU time (peak RSS)
pkgs="$pkgs clang libclang-rt-14-dev valgrind time"
# scripts/npy-interop.sh checks tcalc against NumPy (it fails without it under CI=true)
pkgs="$pkgs python3-numpy"
# make bench compares erf with SciPy's (NumPy has none)
pkgs="$pkgs python3-scipy"
# PyTorch is a test oracle only (scripts/semantics-torch.sh checks --semantics torch
# against it; it fails without it under CI=true): tcalc never links or loads it
pkgs="$pkgs python3-torch"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
