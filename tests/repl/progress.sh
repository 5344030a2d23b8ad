#!/bin/sh
# Progress bars (SPEC 17). Without a terminal, through the test hook
# (TCALC_PROGRESS_TEST=1: drawn on any stderr, at every report): a load
# writes frames whose fraction rises and whose last bytes erase the line;
# nothing is written without the hook, in --json, with -q, or after
# :set progress off; a script's job wraps the load's; an interrupted load
# erases its bar before the error. Then on a real terminal (tmux): a load
# from a FIFO fed slowly shows the bar after a second and leaves nothing
# when it ends, and Ctrl-C takes the bar (and the "^C") away.
# Usage: tests/repl/progress.sh path/to/tcalc
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d)
sock="tcalc-progress-$$"
T() { tmux -L "$sock" -f /dev/null "$@"; }
writer=""
cleanup() {
  [ -n "$writer" ] && kill "$writer" 2> /dev/null
  T kill-server > /dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
cd "$tmp" || exit 1
n=0 fail=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; }
limit=${TCALC_REPL_WAIT:-300}   # tenths of a second for each wait

"$bin" -e 'save("big.npy", arange(2097152) * 1.0)' || { echo "FAIL: cannot write big.npy"; exit 1; }
printf 'a = 1\nx = load("big.npy")\nsize(x)\n' > s.tc
# feed SRC into the FIFO DST in N pieces, PAUSE seconds apart (in the background: $writer)
feed() {
  "$PY" -c '
import sys, time
data = open(sys.argv[1], "rb").read()
step = -(-len(data) // int(sys.argv[3]))
with open(sys.argv[2], "wb") as f:
    for i in range(0, len(data), step):
        f.write(data[i:i + step]); f.flush(); time.sleep(float(sys.argv[4]))
' "$@" 2> /dev/null &
  writer=$!
}

# check FILE WHAT PATTERN: FILE's frames (text between \r) include one
# matching PATTERN (a Python regex), the fractions never go down, and the
# file ends with the erase, "\r\033[K", and nothing after it.
check() {
  if "$PY" - "$@" <<'EOF'; then ok; else bad "$2"; fi
import re, sys
data = open(sys.argv[1], "rb").read().decode("ascii", "replace")
frames = [f[:-3] for f in data.split("\r") if f.endswith("\033[K") and len(f) > 3]
if not any(re.search(sys.argv[3], f) for f in frames):
    sys.exit("no frame matches %r in %r" % (sys.argv[3], data[:300]))
pcts = [int(m.group(1)) for f in frames for m in [re.search(r"(\d+)% \[", f)] if m]
if len(pcts) < 2 or pcts != sorted(pcts):
    sys.exit("fractions %r" % pcts)
if not data.endswith("\r\033[K"):
    sys.exit("does not end with the erase: %r" % data[-40:])
EOF
}
quiet() {   # quiet WHAT COMMAND...: nothing on stderr
  what=$1
  shift
  "$@" > /dev/null 2> quiet.err
  if [ -s quiet.err ]; then bad "$what wrote to stderr: $(head -c 80 quiet.err | od -c | head -2)"; else ok; fi
}

# ---- without a terminal: the test hook ----
TCALC_PROGRESS_TEST=1 "$bin" -e 'x = load("big.npy")' -e 'size(x)' > out 2> err
[ "$(cat out)" = 2097152 ] && ok || bad "load printed [$(cat out)]"
check err "load frames" '^load big\.npy +\d+% \[[#.]+\]'
TCALC_PROGRESS_TEST=1 "$bin" -e 'x = arange(8388608) * 1.0' -e 'y = reduce_sum(x)' 2> err
check err "reduction frames" '^reduce_sum +\d+% \['
TCALC_PROGRESS_TEST=1 "$bin" -e ':run s.tc' > out 2> err
[ "$(cat out)" = 2097152 ] && ok || bad ":run printed [$(cat out)]"
check err "a script's job around the load's" '^run s\.tc 1/3 > load big\.npy +\d+% \['
quiet "no terminal" "$bin" -e 'x = load("big.npy")'
quiet "--json" env TCALC_PROGRESS_TEST=1 "$bin" --json -e 'x = load("big.npy")'
quiet "-q" env TCALC_PROGRESS_TEST=1 "$bin" -q -e 'x = load("big.npy")'
quiet ":set progress off" env TCALC_PROGRESS_TEST=1 "$bin" -e ':set progress off' -e 'x = load("big.npy")'
TCALC_PROGRESS_TEST=1 "$bin" -e ':set progress off' -e ':set progress on' -e 'x = load("big.npy")' 2> err
check err ":set progress on" '^load big\.npy'
"$bin" -e ':set' | grep -qx 'progress    on' && ok || bad ":set does not list progress"
"$bin" -e ':set progress off' -e ':set' | grep -qx 'progress    off' && ok || bad ":set does not show progress off"
"$bin" -j -e ':set progress off' -e ':set' | grep -q '"progress":false}' && ok || bad ":set in JSON"
"$bin" -e ':set progress maybe' 2>&1 | grep -qF "progress must be on or off, not 'maybe'" && ok || bad ":set progress maybe"

# An interrupted load (SIGINT outside the REPL ends the run): the bar is
# erased, then the error is reported.
mkfifo fifo.npy
TCALC_PROGRESS_TEST=1 "$bin" -e 'x = load("fifo.npy")' 2> err &
pid=$!
feed big.npy fifo.npy 400 0.05
i=0
until grep -q '%' err 2> /dev/null; do i=$((i + 1)); [ $i -gt $limit ] && break; sleep 0.1; done
kill -INT $pid
wait $pid
kill "$writer" 2> /dev/null
if "$PY" - err <<'EOF'; then ok; else bad "interrupted load"; fi
import sys
data = open(sys.argv[1], "rb").read()
at = data.find(b"error[interrupted]")
if at < 0 or b"% [" not in data[:at] or not data[:at].endswith(b"\r\033[K"):
    sys.exit("%r" % data[-200:])
EOF

# ---- on a terminal (tmux) ----
if ! command -v tmux > /dev/null; then
  echo "FAIL: tmux is not installed (scripts/install-deps.sh installs it)"
  exit 1
fi
screen() { T capture-pane -p -J -t t 2> /dev/null | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
count() { screen | grep -cF -- "$1"; }
wait_for() {   # wait_for TEXT [N]: until N (1) screen lines hold TEXT
  i=0
  while [ "$(count "$1")" -lt "${2:-1}" ]; do i=$((i + 1)); [ $i -gt $limit ] && return 1; sleep 0.1; done
}
wait_re() {   # wait_re REGEX: until a screen line matches the extended regex
  i=0
  until screen | grep -Eq -- "$1"; do i=$((i + 1)); [ $i -gt $limit ] && return 1; sleep 0.1; done
}
line() { T send-keys -t t -l "$1"; T send-keys -t t Enter; }
settle() {   # until the last line is an empty prompt: the statement has run
  i=0
  until [ "$(screen | tail -n 1)" = 'tcalc> ' ] || [ "$(screen | tail -n 1)" = 'tcalc>' ]; do
    i=$((i + 1)); [ $i -gt $limit ] && return 1; sleep 0.1
  done
}
T new-session -d -s t -x 100 -y 20 env HOME="$tmp" TCALC_HISTORY="$tmp/history" "$bin"
wait_for 'tcalc> ' || bad "no prompt"

# A load of 16 MiB fed over 2.4 s: the bar, with its fraction, rate and
# time left, then nothing left of it.
line 'x = load("fifo.npy")'
feed big.npy fifo.npy 24 0.1
if wait_re '^load fifo\.npy +[0-9]+% \[[#.]+\]  [0-9.]+ [KMG]?i?B/s  [0-9]+s left$'; then ok; else
  bad "no bar with its fraction, rate and time left: [$(screen | grep -F 'load fifo.npy ')]"
fi
if settle; then ok; else bad "the load did not end"; fi
line 'size(x)'
if wait_for '2097152'; then ok; else bad "no size"; fi
[ "$(count 'load fifo.npy ')" = 0 ] && [ "$(count '% [')" = 0 ] && ok || bad "the bar was left on the screen"
wait "$writer"

# Ctrl-C during a load: the bar goes, with the terminal's ^C, and the error follows the statement.
line 'y = load("fifo.npy")'
feed big.npy fifo.npy 400 0.05
if wait_re '^load fifo\.npy +[0-9]+% \['; then ok; else bad "no bar before the Ctrl-C"; fi
T send-keys -t t C-c
if wait_for 'error[interrupted]'; then ok; else bad "Ctrl-C did not interrupt the load"; fi
[ "$(count '% [')" = 0 ] && [ "$(count '^C')" = 0 ] && ok || bad "the bar or ^C was left: $(screen | grep -F -e '% [' -e '^C')"
screen | grep -A1 -F 'tcalc> y = load("fifo.npy")' | tail -1 | grep -q '^error\[interrupted\]' && ok ||
  bad "the error does not follow the statement: $(screen | tail -8)"
kill "$writer" 2> /dev/null

echo "progress: $n checks, $fail failures"
[ "$fail" -eq 0 ]
