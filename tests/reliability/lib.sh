# Helpers for the reliability tests (sourced). Every run of tcalc is
# bounded by `timeout`; a run that times out, dies of a signal, or writes
# anything unexpected fails the test.
#   BIN    the tcalc binary under test (first argument of each script)
#   TMP    a scratch directory, removed on exit
set -u
BIN=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LIMIT=${TC_TEST_LIMIT:-120}   # seconds per run: generous, for ASan and valgrind builds
PASS=0 FAIL=0
export NO_COLOR=1

ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }

# Explains an exit status that is no normal exit of tcalc.
status_note() {
  case $1 in
    124) echo "timed out after ${LIMIT}s" ;;
    13[0-9]|14[0-9]|15[0-9]) echo "killed by signal $(($1 - 128))" ;;
    *) echo "exit $1" ;;
  esac
}

# Checks that every line of a file is one JSON object with "ok".
valid_jsonl() {
  python3 - "$1" <<'PY'
import json, sys
with open(sys.argv[1], 'rb') as f:
    for n, raw in enumerate(f, 1):
        try:
            o = json.loads(raw.decode('utf-8', errors='strict'))
            assert isinstance(o, dict) and isinstance(o.get('ok'), bool)
        except Exception as e:
            print(f"line {n}: {e}: {raw[:200]!r}")
            sys.exit(1)
PY
}

# expect NAME STATUS INPUT PATTERN...
# Runs INPUT through tcalc in JSON mode (-k) and text mode (-k): both must
# exit with STATUS (an extended regex such as "1|3"), the JSON output must
# be valid JSON Lines with a line matching each extended regex PATTERN,
# JSON mode must write nothing to stderr, and text mode must print its
# errors as `error[...]` lines and no crash report.
expect() {
  [ -n "${TC_TEST_TIMES:-}" ] && t_start=$(date +%s%N)
  name=$1 want=$2 input=$3
  shift 3
  timeout -k 5 "$LIMIT" "$BIN" --json -k < "$input" > "$TMP/json" 2> "$TMP/err"
  rc=$?
  if ! echo "$rc" | grep -Eqx "$want"; then bad "$name (json): $(status_note $rc), wanted $want"; head -c 600 "$TMP/err"; return; fi
  if [ -s "$TMP/err" ]; then bad "$name (json): wrote to stderr"; head -c 600 "$TMP/err"; return; fi
  if ! valid_jsonl "$TMP/json"; then bad "$name (json): invalid JSON output"; return; fi
  for pat in "$@"; do
    if ! grep -Eq "$pat" "$TMP/json"; then bad "$name (json): no line matches $pat"; head -c 600 "$TMP/json"; return; fi
  done
  timeout -k 5 "$LIMIT" "$BIN" -k < "$input" > "$TMP/out" 2> "$TMP/err"
  rc=$?
  if ! echo "$rc" | grep -Eqx "$want"; then bad "$name (text): $(status_note $rc), wanted $want"; head -c 600 "$TMP/err"; return; fi
  if [ "$rc" -ne 0 ] && ! grep -q '^error\[' "$TMP/err"; then bad "$name (text): no error line"; head -c 600 "$TMP/err"; return; fi
  if grep -Eq 'Sanitizer|runtime error|Segmentation|Aborted|core dumped' "$TMP/err"; then bad "$name (text): crash report"; head -c 600 "$TMP/err"; return; fi
  [ -n "${TC_TEST_TIMES:-}" ] && echo "  $name: $((($(date +%s%N) - t_start) / 1000000)) ms"
  ok
}

# count NAME N PATTERN: the last JSON output of `expect` has N lines matching PATTERN.
count() {
  n=$(grep -Ec "$3" "$TMP/json")
  if [ "$n" -eq "$2" ]; then ok; else bad "$1: $n lines match $3, wanted $2"; fi
}

finish() {
  echo "$(basename "$0" .sh): $PASS passed, $FAIL failed"
  [ "$FAIL" -eq 0 ]
}

# For tests that drive the REPL in a tmux pane: tm runs tmux on the server
# at $sock (set by the test), screen prints the pane, wait_screen PATTERN
# polls it until a line matches (up to 30 s). need_tmux fails the test and
# ends it when tmux is missing.
tm() { tmux -S "$sock" "$@"; }
screen() { tm capture-pane -p -J -t t 2>/dev/null; }
wait_screen() {
  i=0
  while ! screen | grep -Eq "$1"; do
    i=$((i + 1))
    if [ $i -gt 1500 ]; then return 1; fi
    sleep 0.02
  done
}
need_tmux() {
  command -v tmux > /dev/null && return 0
  bad "${1:-repl}: tmux is not installed (scripts/install-deps.sh installs it)"
  finish
  exit
}
