#!/bin/sh
# Writes the fuzzers' seed corpus into DIR: every golden test script whole,
# and each of its lines on its own; with JSONDIR, the JSON harness's seeds
# there: each distinct line of the golden JSON output (tensors and errors).
# Usage: scripts/fuzz-seeds.sh DIR [JSONDIR]
set -eu
out=$1
dir=$(dirname "$0")/../tests/golden
mkdir -p "$out"
for tc in "$dir"/*.tc; do
  name=$(basename "$tc" .tc)
  cp "$tc" "$out/$name"
  awk -v out="$out/$name" '!/^[[:space:]]*(#|$)/ { f = sprintf("%s.%04d", out, NR); print > f; close(f) }' "$tc"
done
if [ $# -gt 1 ]; then
  mkdir -p "$2"
  cat "$dir"/*.jsonl | awk '!seen[$0]++' | awk -v out="$2/j" '{ f = sprintf("%s.%05d", out, NR); print > f; close(f) }'
fi
