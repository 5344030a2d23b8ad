#!/bin/sh
# Runs every tests/golden/*.tc script through tcalc in JSON mode (compared
# with NAME.jsonl) and text mode (stdout and stderr merged, then the exit
# status, compared with NAME.txt). Scripts run with -k so that one file can
# hold many error cases. Usage: scripts/run-golden.sh path/to/tcalc
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
dir=$(dirname "$0")/../tests/golden
fail=0 n=0
tmp=$(mktemp -d)
# scripts may write files (save, save_csv) named tmp-* next to themselves
trap 'rm -rf "$tmp" "$dir"/tmp-*' EXIT
for tc in "$dir"/*.tc; do
  name=$(basename "$tc" .tc)
  n=$((n + 1))
  (cd "$dir" && NO_COLOR=1 "$bin" --json -k < "$name.tc") > "$tmp/out.jsonl" 2>"$tmp/err"
  if ! cmp -s "$tmp/out.jsonl" "$dir/$name.jsonl" || [ -s "$tmp/err" ]; then
    echo "FAIL $name (json)"; diff "$dir/$name.jsonl" "$tmp/out.jsonl" | head -20; head -5 "$tmp/err"; fail=$((fail + 1))
  fi
  (cd "$dir" && NO_COLOR=1 "$bin" -k < "$name.tc" > "$tmp/out.txt" 2>&1; echo "# exit $?" >> "$tmp/out.txt")
  if ! cmp -s "$tmp/out.txt" "$dir/$name.txt"; then
    echo "FAIL $name (text)"; diff "$dir/$name.txt" "$tmp/out.txt" | head -20; fail=$((fail + 1))
  fi
done
echo "golden: $n scripts, $fail failures"
[ "$fail" -eq 0 ]
