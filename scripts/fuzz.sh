#!/bin/sh
# Runs each libFuzzer harness for SECONDS seconds, FUZZ_JOBS of them at a
# time (default: one a CPU), and prints its executions, corpus size and
# peak memory. The corpus of each
# harness grows in FUZZ_DIR/corpus/NAME across runs; seeds come from the
# golden tests, tokens from the generated dictionary. Crash inputs land in
# FUZZ_DIR/artifacts/ and fail the run.
# Usage: scripts/fuzz.sh FUZZ_DIR GEN_DICT SECONDS [HARNESS...]
set -u
fdir=$1 gendict=$2 secs=$3
shift 3
[ $# -gt 0 ] || set -- fuzz_parse fuzz_stmt fuzz_json fuzz_npz
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$fdir/seeds" "$fdir/artifacts"
fdir=$(cd "$fdir" && pwd)   # absolute: fuzz_stmt runs in a directory of its own
"$gendict" | awk '!seen[$0]++' > "$fdir/tcalc.dict" || { echo "fuzz: cannot generate the dictionary" >&2; exit 1; }
rm -rf "$fdir/seeds" "$fdir/seeds-json" && "$root/scripts/fuzz-seeds.sh" "$fdir/seeds" "$fdir/seeds-json"
# the seed directories of a harness: golden scripts, their JSON output, or
# the binary file fixtures (the .npz and .npy files of tests/data)
seeds() {
  case $1 in
    fuzz_json) echo "$fdir/seeds-json" ;;
    fuzz_npz) echo "$root/tests/data/npz $root/tests/data/npy" ;;
    *) echo "$fdir/seeds" ;;
  esac
}
# One harness: its regression inputs, then SECONDS of fuzzing; its report
# goes to $fdir/NAME.summary, and a failure leaves $fdir/NAME.failed.
fuzz_one() {
  h=$1
  corpus="$fdir/corpus/$h"
  mkdir -p "$corpus"
  log="$fdir/$h.log"
  sum="$fdir/$h.summary"
  rm -f "$fdir/$h.failed"
  : > "$sum"
  # Inputs that once crashed a harness run first, as plain test cases.
  regress="$root/tests/fuzz/regress/$h"
  if [ -d "$regress" ] && [ -n "$(ls "$regress")" ]; then
    if ! "$fdir/$h" -runs=0 "$regress"/* > "$fdir/$h.regress.log" 2>&1; then
      { echo "FAIL $h: a regression input crashes again (see $fdir/$h.regress.log)"; tail -30 "$fdir/$h.regress.log"; } >> "$sum"
      touch "$fdir/$h.failed"
      return
    fi
  fi
  "$fdir/$h" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -max_len=4096 \
    -dict="$fdir/tcalc.dict" -artifact_prefix="$fdir/artifacts/$h-" -print_final_stats=1 \
    "$corpus" $(seeds "$h") > "$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  files=$(ls "$corpus" | wc -l)
  printf '%-11s %ss: %s execs (%s/s), corpus %s files, %s, peak RSS %s MB\n' \
    "$h" "$secs" "${execs:-?}" "${rate:-?}" "$files" "${cov:-cov: ?}" "${rss:-?}" >> "$sum"
  if [ "$rc" -ne 0 ]; then
    { echo "FAIL $h (exit $rc): see $log"
      grep -E 'ERROR|SUMMARY|check failed|runtime error|Test unit written' "$log" | head -20; } >> "$sum"
    touch "$fdir/$h.failed"
  fi
}
# FUZZ_JOBS harnesses at a time (default: one a CPU), each one process
# of one thread for SECONDS seconds.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for h in "$@"; do
  if [ "$running" -ge "$jobs" ]; then wait; running=0; fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait
fail=0
for h in "$@"; do
  cat "$fdir/$h.summary"
  [ -e "$fdir/$h.failed" ] && fail=1
done
exit $fail
