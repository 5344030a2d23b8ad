#!/bin/sh
# Rewrites the expected output of golden tests from the current build, for
# review with `git diff tests/golden`. Usage: scripts/update-golden.sh [NAME...]
set -eu
bin=$(cd "$(dirname "$0")/.." && pwd)/build/tcalc
dir=$(dirname "$0")/../tests/golden
cd "$dir"
if [ $# -eq 0 ]; then set -- $(ls *.tc | sed 's/\.tc$//'); fi
for name in "$@"; do
  name=${name%.tc}
  NO_COLOR=1 "$bin" --json -k < "$name.tc" > "$name.jsonl" 2>/dev/null || true
  { NO_COLOR=1 "$bin" -k < "$name.tc" 2>&1; echo "# exit $?"; } > "$name.txt" || true
  echo "updated $name"
done
