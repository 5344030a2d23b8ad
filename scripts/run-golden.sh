#!/bin/sh
# Runs every tests/golden/*.tc script through tcalc in JSON mode (compared
# with NAME.jsonl) and text mode (stdout and stderr merged, then the exit
# status, compared with NAME.txt). Scripts run with -k so that one file can
# hold many error cases. Scripts run under LC_ALL=C.UTF-8 (NAME_ascii.tc
# under LC_ALL=C), so that plots draw the same wherever. They run in a private copy of tests/golden and
# tests/data (scripts write tmp-* files next to themselves), JOBS scripts
# at a time (default 1), so that runs side by side never meet.
# Usage: scripts/run-golden.sh [-j JOBS] path/to/tcalc
set -u
if [ "${1:-}" = "--one" ]; then
  # one script, both modes: --one TCALC DIR NAME; prints why it failed
  bin=$2 dir=$3 name=$4 fail=0
  out=$(mktemp -d)
  # plots draw braille under a UTF-8 locale and ASCII otherwise: each script
  # runs under a fixed one (NAME_ascii.tc under C, the rest under C.UTF-8)
  case $name in *_ascii) LC_ALL=C ;; *) LC_ALL=C.UTF-8 ;; esac
  export LC_ALL
  (cd "$dir" && NO_COLOR=1 "$bin" --json -k < "$name.tc") > "$out/out.jsonl" 2>"$out/err"
  if ! cmp -s "$out/out.jsonl" "$dir/$name.jsonl" || [ -s "$out/err" ]; then
    echo "FAIL $name (json)"; diff "$dir/$name.jsonl" "$out/out.jsonl" | head -20; head -5 "$out/err"; fail=1
  fi
  (cd "$dir" && NO_COLOR=1 "$bin" -k < "$name.tc" > "$out/out.txt" 2>&1; echo "# exit $?" >> "$out/out.txt")
  if ! cmp -s "$out/out.txt" "$dir/$name.txt"; then
    echo "FAIL $name (text)"; diff "$dir/$name.txt" "$out/out.txt" | head -20; fail=1
  fi
  rm -rf "$out"
  exit $fail
fi
jobs=1
if [ "${1:-}" = "-j" ]; then jobs=$2; shift 2; fi
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
tests=$(cd "$(dirname "$0")/../tests" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests"
cp -R "$tests/golden" "$tests/data" "$tmp/tests/"
dir=$tmp/tests/golden
n=$(ls "$dir"/*.tc | wc -l)
# each failing script prints FAIL lines (and xargs exits 123)
ls "$dir"/*.tc | sed 's|.*/||; s|\.tc$||' | xargs -P "$jobs" -I{} "$self" --one "$bin" "$dir" {} > "$tmp/report"
cat "$tmp/report"
fail=$(grep -c '^FAIL' "$tmp/report")
echo "golden: $n scripts, $fail failures"
[ "$fail" -eq 0 ]
