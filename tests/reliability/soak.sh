#!/bin/sh
# Soak (issue 7): a script that reassigns a 10^6-element tensor 300 times
# and then runs 100 000 small statements, and (issue 14) a while loop and a
# for loop of 10^6 iterations each, must keep their peak memory flat:
# peak RSS under twice that of a 10-statement run of the same kind. The
# results are checked too, so that a leak cannot hide behind a wrong answer.
# Usage: tests/reliability/soak.sh path/to/tcalc
. "$(dirname "$0")/lib.sh"

# Peak RSS (KiB) from GNU time, or from the kernel's VmHWM.
TIME=/usr/bin/time
if ! [ -x "$TIME" ]; then
  bad "soak: $TIME is missing (scripts/install-deps.sh installs the time package)"
  finish
  exit
fi
# Under AddressSanitizer freed memory waits in a quarantine of up to 256 MiB,
# which is ASan's memory, not tcalc's: measure without it.
export ASAN_OPTIONS="quarantine_size_mb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

python3 - "$TMP" <<'PY'
import sys
tmp = sys.argv[1]
setup = ["x = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"]
for k in range(1, 6):
    setup.append("x = x + [" + ", ".join("[" * k + str(i) + "]" * k for i in range(10)) + "]")
small = ["a = 3", "b = [1, 2, 3] * a", "c = reduce_sum(b) - 18", "d = f32(b) / 2", "e = where(b > 4, b, -b)"]
def script(reassign, statements, checks):
    lines = list(setup)
    lines += ["x = x + 1"] * reassign
    lines += [small[i % len(small)] for i in range(statements)]
    lines += checks
    return "\n".join(lines) + "\n"
# 10 statements: the setup (6), one reassignment, two small ones, a check.
open(f"{tmp}/base.tc", "w").write(script(1, 2, ["reduce_sum(x)"]))
open(f"{tmp}/soak.tc", "w").write(script(300, 100000, ["reduce_sum(x)", "c", "e"]))
PY

# run NAME: runs NAME.tc, sets $peak to its peak RSS in KiB (empty on failure).
run() {
  peak=
  timeout -k 5 "$LIMIT" "$TIME" -f '%M' -o "$TMP/rss" "$BIN" --json < "$TMP/$1.tc" > "$TMP/$1.out" 2> "$TMP/err"
  rc=$?
  if [ "$rc" -ne 0 ]; then bad "$1: $(status_note $rc)"; head -c 600 "$TMP/err"; return 1; fi
  peak=$(tail -n 1 "$TMP/rss")
}

# The sum of x: the digit sums of 0..999999 (27 000 000) plus the number
# of reassignments times 10^6.
run base && {
  if grep -q '"data":28000000}' "$TMP/base.out"; then ok; else bad "base: wrong result"; head -3 "$TMP/base.out"; fi
}
base=$peak
run soak && {
  if grep -q '"data":327000000}' "$TMP/soak.out" && grep -q '"data":0}' "$TMP/soak.out" \
     && grep -q '"data":\[-3,6,9\]}' "$TMP/soak.out"; then ok; else bad "soak: wrong results"; tail -3 "$TMP/soak.out"; fi
}
soak=$peak
if [ -n "$base" ] && [ -n "$soak" ]; then
  echo "  peak RSS: $base KiB for 10 statements, $soak KiB for 100 306"
  if [ "$soak" -lt $((2 * base)) ]; then ok; else bad "soak: peak RSS $soak KiB is not under twice $base KiB"; fi
fi

# flat_loop NAME MAKER RESULT10 RESULT: runs the scripts MAKER writes for
# 10 and for 10^6 iterations, checks their results (JSON data, as a grep
# pattern) and that the second's peak RSS is under twice the first's.
flat_loop() {
  $2 10 > "$TMP/$1_base.tc"
  $2 1000000 > "$TMP/$1.tc"
  run "$1_base" && {
    if grep -q "\"data\":$3}" "$TMP/$1_base.out"; then ok; else bad "$1_base: wrong result"; head -3 "$TMP/$1_base.out"; fi
  }
  base=$peak
  run "$1" && {
    if grep -q "\"data\":$4}" "$TMP/$1.out"; then ok; else bad "$1: wrong result"; head -3 "$TMP/$1.out"; fi
  }
  if [ -n "$base" ] && [ -n "$peak" ]; then
    echo "  peak RSS: $base KiB for 10 iterations of $1, $peak KiB for 10^6"
    if [ "$peak" -lt $((2 * base)) ]; then ok; else bad "$1: peak RSS $peak KiB is not under twice $base KiB"; fi
  fi
}

# A while loop (SPEC 10) that calls a user function, assigns, indexes and
# prints nothing.
loop_script() {
  printf 'def f(x, k=3) = (x * k) %% 7\nn = 0; total = 0; v = [0, 0, 0]\n'
  printf 'while n < %s do\n  total += f(n)\n  v[n %% 3] += 1\n  n += 1\nend\n[total, sum(v)]\n' "$1"
}
flat_loop loop loop_script '\[30,10\]' '\[2999997,1000000\]'

# A for loop over a tensor, through the short paths for scalars (the loop's
# variable stepped in place, x += e in x's storage, a chain's temporary, a
# new value each iteration).
for_script() {
  printf 'R = arange(1000000); s = 0; t = 0.5; c = -1\n'
  printf 'for i in R[:%s] do\n  s += i\n  t = t * 0.5 + i - 1\n  if i %% 2 == 0 then c = i end\nend\n[s, c]\n' "$1"
}
flat_loop for for_script '\[45,8\]' '\[499999500000,999998\]'
finish
