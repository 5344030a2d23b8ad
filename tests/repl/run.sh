#!/bin/sh
# The REPL on a real terminal (SPEC 9), driven through tmux: a multi-line
# literal with the continuation prompt, Tab completion of a function, a
# variable and a command, an error and going on, history recalled with Up,
# Ctrl-C clearing the line and interrupting a computation, colour, Ctrl-D
# leaving with status 0, and the history file written and read back.
# Every wait polls the screen with a deadline instead of sleeping blindly.
# Usage: tests/repl/run.sh path/to/tcalc
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
if ! command -v tmux > /dev/null; then
  echo "FAIL: tmux is not installed (scripts/install-deps.sh installs it)"
  exit 1
fi
tmp=$(mktemp -d)
# One tmux server per session (start): a new session on a server whose last
# session was just killed can meet it exiting ("server exited unexpectedly").
nsock=0
sock="tcalc-test-$$-$nsock"
T() { tmux -L "$sock" -f "$tmp/tmux.conf" "$@"; }
cleanup() {
  k=0
  while [ $k -le $nsock ]; do tmux -L "tcalc-test-$$-$k" kill-server > /dev/null 2>&1; k=$((k + 1)); done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
printf 'set -g remain-on-exit on\nset -g history-limit 5000\n' > "$tmp/tmux.conf"
hist="$tmp/history"
n=0 fail=0
# Deadline for each wait, in tenths of a second (sanitizer builds are slow).
limit=${TCALC_REPL_WAIT:-300}

ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; echo "--- screen:"; screen | tail -15; echo "---"; }
screen() { T capture-pane -p -J -S -5000 -t t 2>/dev/null | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
colour_screen() { T capture-pane -p -e -J -S -5000 -t t 2>/dev/null; }
# count PATTERN: how many screen lines contain the fixed string
count() { screen | grep -cF -- "$1"; }
# wait_for PATTERN [N]: until at least N (default 1) screen lines contain PATTERN
wait_for() {
  want=${2:-1} i=0
  while [ "$(count "$1")" -lt "$want" ]; do
    i=$((i + 1))
    [ $i -gt $limit ] && return 1
    sleep 0.1
  done
  return 0
}
expect() { if wait_for "$@"; then ok; else bad "no [$1] on the screen (wanted ${2:-1})"; fi; }
# settle: until the last line is an empty prompt (the line before has run):
# keys typed while tcalc still computes are echoed by the terminal into
# the output, which under load made the screen checks race
settle() {
  i=0
  until [ "$(screen | tail -n 1)" = 'tcalc> ' ] || [ "$(screen | tail -n 1)" = 'tcalc>' ]; do
    i=$((i + 1)); [ $i -gt $limit ] && return 1; sleep 0.1
  done
}
keys() { T send-keys -t t "$@"; }
line() { T send-keys -t t -l "$1"; T send-keys -t t Enter; }
pane() { T display -p -t t "$1"; }
# tcalc runs under a small sh that records its exit status: tmux itself may
# be slow to reap a dead pane's process. The sh traps SIGINT (so Ctrl-C
# reaches tcalc alone to handle) and tcalc starts with the default disposition.
start() {   # start [ENV...]: a fresh tcalc in a 120x50 terminal
  T kill-server > /dev/null 2>&1
  nsock=$((nsock + 1))
  sock="tcalc-test-$$-$nsock"
  rm -f "$tmp/status"
  T new-session -d -s t -x 120 -y 50 sh -c 'trap : INT; "$@"; echo $? > "$0"' "$tmp/status" \
    env TCALC_HISTORY="$hist" HOME="$tmp" "$@" "$bin"
  i=0
  until [ "$(count 'tcalc> ')" -ge 1 ]; do
    i=$((i + 1)); [ $i -gt $limit ] && { bad "no prompt"; return 1; }; sleep 0.1
  done
}
wait_exit() {
  i=0
  until [ -s "$tmp/status" ]; do
    i=$((i + 1)); [ $i -gt $limit ] && return 1; sleep 0.1
  done
}
status() { cat "$tmp/status" 2>/dev/null; }
# The pid of tcalc: the child of the pane's sh.
tcalc_pid() {
  sh_pid=$(pane '#{pane_pid}')
  for st in /proc/[0-9]*/stat; do
    set -- $(cat "$st" 2>/dev/null)
    [ "${4:-}" = "$sh_pid" ] && [ "${2:-}" = "(tcalc)" ] && { echo "$1"; return; }
  done
}

# ---- session 1 ----
start env -u NO_COLOR || exit 1
case $(screen) in *"tcalc "*":help"*) ok ;; *) bad "banner" ;; esac

# A multi-line literal: the continuation prompt while the bracket is open.
line '[[1, 2],'
expect '  ...> '
line ' [3, 40]] / 2'
expect 'i64[2,2]'
case $(screen) in *"[[ 0,  1],"*"[ 1, 20]]  i64[2,2]"*) ok ;; *) bad "multi-line result" ;; esac

# An error, then going on.
line 'nope + 1'
expect 'error[undefined_name]: nope is not defined'
expect '  ^^^^'
line 'x = 6 * 7'
line 'x'
expect '42'
# Errors are coloured on a terminal when NO_COLOR is unset.
case $(colour_screen) in *"$(printf '\033[31m')error"*) ok ;; *) bad "no colour on a terminal" ;; esac

# Tab completes a function name with its parenthesis ...
keys 'reduce_s' Tab
expect 'tcalc> reduce_sum('
keys -l '[1, 2, 3, 4])'
keys Enter
expect 'tcalc> reduce_sum([1, 2, 3, 4])'
expect '10'
# ... a variable ...
line 'my_long_variable = 37'
settle
keys 'my_lo' Tab
keys -l ' + 1'
keys Enter
expect 'tcalc> my_long_variable + 1'
expect '38'
# ... and a session command.
keys ':he' Tab
keys -l 'abs'
keys Enter
expect 'tcalc> :help abs'
expect 'abs(x)'
# ... and the words a command takes.
keys ':set pre' Tab
keys -l '3'
keys Enter
expect 'tcalc> :set precision 3'
# The prompt shows another system's semantics (SPEC 19), and goes back.
line ':set semantics jax'
expect 'tcalc[jax]> '
line 'i32([5]) // 0'
expect '[-2]  i32[1]'
line ':set semantics tcalc'
settle || bad "the prompt did not come back to tcalc> "
line '1 / 3.0'
expect '0.333'
line ':set precision 0'

# History: Up recalls earlier lines.
line 'x + 100'
expect '142'
line '0'
keys Up Up
expect 'tcalc> x + 100'
keys Enter
expect '142' 2

# Ctrl-C clears the line being typed (and an open bracket).
errors=$(count 'error[')
keys -l 'garbage + ['
keys C-c
expect '^C'
line '1 + 1'
expect '2'
if [ "$(count 'error[')" = "$errors" ]; then ok; else bad "Ctrl-C did not clear the line"; fi
keys -l '[1,'
keys Enter
expect '  ...> ' 2
keys C-c
expect '^C' 2
line '3 * 3'
expect '9'

# Ctrl-C interrupts a running computation; the session and its variables survive.
line 'a = [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10]'
line 'b = [a, a, a, a, a, a, a, a, a, a]'
line 'c = [b, b, b, b, b, b, b, b, b, b]'
line 'd = [c, c, c, c, c, c, c, c, c, c]'
line 'e = [d, d, d, d, d, d, d, d, d, d]'
line 'f = [e, e, e, e, e, e, e, e, e, e]'
line 'g = [f, f, f, f, f, f, f, f, f, f]'
line 'shape(g)'
expect '[10, 10, 10, 10, 10, 10, 10]  i64[7]'
pid=$(tcalc_pid)
[ -n "$pid" ] && ok || bad "cannot find the pid of tcalc"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0; }
interrupted=0
for attempt in 1 2 3; do
  base=$(ticks)
  line ':time reduce_sum(exp(sin(g)) * cos(g) ** 2.5)'
  # wait until it is computing (10 ticks of CPU), then press Ctrl-C
  i=0
  while [ $(( $(ticks) - base )) -lt 10 ] && [ $i -lt $limit ]; do i=$((i + 1)); sleep 0.05; done
  keys C-c
  if wait_for 'error[interrupted]'; then interrupted=1; break; fi
  # it finished before the Ctrl-C: make the work larger and try again
  line 'g = [g, g]'
done
if [ $interrupted = 1 ]; then ok; else bad "Ctrl-C did not interrupt the computation"; fi
line 'x'
expect '42' 2
line ':vars'
expect 'g            f64['

# A block function typed over several lines shows the continuation prompt
# until its end, and can then be called (SPEC 10).
cont=$(count '  ...> ')
line 'def tri(n)'
expect '  ...> ' $((cont + 1))
line '  s = 0'
line '  for i in arange(n + 1) do s += i end'
line '  return s'
line 'end'
line 'tri(100)'
expect '5050'
# A block is one history entry: one Up recalls all of it, and it runs again.
line 'for k in [7001, 7002] do'
line '  print(k * 2)'
line 'end'
expect '14004'
keys Up
keys Enter
expect '14004' 2
expect '14002' 2
# Ctrl-C interrupts an endless while; its variable keeps the value it had.
errors=$(count 'error[interrupted]')
line 'spin = 0'
line 'while true do spin += 1 end'
sleep 0.5
keys C-c
expect 'error[interrupted]' $((errors + 1))
line 'spin > 0'
expect 'true'
line ':vars'
expect 'tri          function tri(n)'

# A syntax error on a line that starts a block opens no block (SPEC 18):
# the primary prompt comes back, and the session command on the next line
# runs (here :set overflow, which the next statement shows).
ovf=$(count 'error[integer_overflow]')
for bad_line in 'while = 1' 'for = 2' 'if = 3' 'def = 4' 'while x' 'for i in' 'def f(x) y' 'elif = 1' 'end = 2'; do
  errors=$(count 'error[syntax_error]')
  line "$bad_line"
  expect 'error[syntax_error]' $((errors + 1))
  if settle; then ok; else bad "no primary prompt after [$bad_line]"; fi
  line ':set overflow check'
  line 'i8(127) + i8(1)'
  ovf=$((ovf + 1))
  expect 'error[integer_overflow]' $ovf
  line ':set overflow wrap'
done
# An error inside a block waits for the block's end and is one error for
# it; nothing of the block is bound, and the next line reads afresh.
errors=$(count 'error[')
cont=$(count '  ...> ')
line 'def outer(x)'
line '  def inner(y) = y'
line '  return x'
expect '  ...> ' $((cont + 3))
line 'end'
expect 'error[syntax_error]: def is only allowed at top level' 1
if settle; then ok; else bad "no primary prompt after the nested def"; fi
if [ "$(count 'error[')" = $((errors + 1)) ]; then ok; else bad "the nested def gave more than one error"; fi
line ':vars'
expect 'tri          function tri(n)' 2
if [ "$(count 'function outer')" = 0 ] && [ "$(count 'function inner')" = 0 ]; then ok; else bad "a def with an error was bound"; fi

# Ctrl-D on an empty line leaves with status 0.
keys C-d
if wait_exit; then ok; else bad "Ctrl-D did not end the REPL"; fi
if [ "$(status)" = 0 ]; then ok; else bad "exit status [$(status)] after Ctrl-D"; fi

# The history file was written.
if [ -s "$hist" ]; then ok; else bad "no history file at $hist"; fi
if [ "$(ls -l "$hist" | cut -c1-10)" = "-rw-------" ]; then ok; else bad "history file mode $(ls -l "$hist" | cut -c1-10)"; fi
for want in 'x\040=\0406\040*\0407' 'reduce_sum([1,\0402,\0403,\0404])' ':help\040abs' 'def\040tri(n)\012'; do
  if grep -qF -- "$want" "$hist" 2>/dev/null; then ok; else bad "history lacks $want"; fi
done

# ---- session 2: the history is read back; NO_COLOR turns colour off ----
start NO_COLOR=1 || exit 1
keys Up
expect 'tcalc> :vars'
keys C-u
line 'nope'
expect 'error[undefined_name]'
case $(colour_screen) in *"$(printf '\033[31m')"*) bad "colour despite NO_COLOR" ;; *) ok ;; esac
line ':quit'
if wait_exit; then ok; else bad ":quit did not end the REPL"; fi
if [ "$(status)" = 0 ]; then ok; else bad "exit status [$(status)] after :quit"; fi

# ---- session 3: a NumPy user's first hour (issue 53), mistakes between the work ----
start NO_COLOR=1 || exit 1
line 'x = reshape(arange(12), (3, 4))'
line 'x[:, [0, 2]]'
expect 'i64[3,2]'
line 'x.foo'
expect 'error[syntax_error]: unknown attribute'
line 'x[[0, 2], [1, 3]]'
expect '[ 1, 11]  i64[2]'
line 'x[[true, false]]'
expect 'error[shape_mismatch]: a bool mask of shape [2]'
line 'print("shape =", x.T.shape, len(x))'
expect 'shape = [4, 3]  i64[2] 3'
line 'for i in arange(3) do'
expect '  ...> '
line '  x[i, i] += 100'
line 'end'
settle
line 'x[None, 1, [0, 1]]'
expect '[[  4, 105]]  i64[1,2]'
line 'x[1, 5] = 0'
expect 'error[index_out_of_bounds]: index 5 is out of bounds for axis 1 with size 4'
line ':help +'
expect 'add('
line 'sum(x, axis=(0, 1))'
expect '366'
line ':quit'
if wait_exit; then ok; else bad ":quit did not end the REPL (session 3)"; fi

echo "repl: $n checks, $fail failures"
[ "$fail" -eq 0 ]
