#!/bin/sh
# make install into a scratch DESTDIR, the installed tree checked
# (tests/cli/install.sh), then make uninstall, which must leave no file.
# Usage: tests/cli/install-cycle.sh CUDA MAKE [MAKE ARGUMENTS...]: the make
# command with the build's own variables (BUILD, SAN, OPT, ...), so that
# nothing is rebuilt.
set -u
cuda=$1
shift
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# a make of its own: not one of the parent's jobs
unset MAKEFLAGS MFLAGS MAKELEVEL
"$@" install DESTDIR="$d" PREFIX=/opt/tcalc > /dev/null || { echo "make install failed"; exit 1; }
"$(dirname "$0")/install.sh" "$d" /opt/tcalc "$cuda" || exit 1
"$@" uninstall DESTDIR="$d" PREFIX=/opt/tcalc > /dev/null || { echo "make uninstall failed"; exit 1; }
left=$(find "$d" -type f)
if [ -n "$left" ]; then echo "make uninstall left: $left"; exit 1; fi
echo "install: make install, the installed tree and make uninstall checked"
