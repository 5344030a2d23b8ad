#!/bin/sh
# Writes the fuzzers' seed corpus into DIR: every golden test script whole,
# and each of its lines on its own. Usage: scripts/fuzz-seeds.sh DIR
set -eu
out=$1
dir=$(dirname "$0")/../tests/golden
mkdir -p "$out"
for tc in "$dir"/*.tc; do
  name=$(basename "$tc" .tc)
  cp "$tc" "$out/$name"
  awk -v out="$out/$name" '!/^[[:space:]]*(#|$)/ { f = sprintf("%s.%04d", out, NR); print > f; close(f) }' "$tc"
done
