#!/bin/sh
# The REPL's history file cannot clobber anything (issue 20): tcalc runs in
# a tmux pane with TCALC_HISTORY naming a FIFO, a device (a copy of
# /dev/zero), a symbolic link, a file that is not libedit history, a
# history larger than 1 MiB, /dev/null and nothing; each time the prompt
# must come (a FIFO must not hang the start), a statement must run, the
# file must be left exactly as it was (contents, mode, kind), and a warning
# is printed once where the file is refused. A history file that tcalc did
# not create keeps its mode; one it creates is 0600.
# Usage: tests/reliability/history.sh path/to/tcalc
. "$(dirname "$0")/lib.sh"
need_tmux history
# one tmux server per session, so that a new one never meets a server that is ending
sock="$TMP/tmux.0"
trap 'for s in "$TMP"/tmux.*; do tmux -S "$s" kill-server 2>/dev/null; done; rm -rf "$TMP"' EXIT
# session NAME ENV...: a REPL with ENV (env(1) assignments); runs 40 + 2,
# then :quit. Sets $shown to the screen. Fails NAME if no prompt or no 42.
session() {
  name=$1
  shift
  tm kill-server 2>/dev/null
  sock="$TMP/tmux.$name"
  mkdir -p "$TMP/home"
  tm new-session -d -s t -x 200 -y 50 "cd $TMP && env $* NO_COLOR=1 $BIN -q; echo EXITED \$?; sleep 600"
  if ! wait_screen '^tcalc> '; then bad "$name: no prompt (start-up hung?)"; screen | grep -v '^$' | tail -5; return 1; fi
  tm send-keys -t t -l '40 + 2'
  tm send-keys -t t Enter
  if ! wait_screen '^42$'; then bad "$name: the statement did not run"; screen | grep -v '^$' | tail -5; return 1; fi
  tm send-keys -t t -l ':quit'
  tm send-keys -t t Enter
  if ! wait_screen '^EXITED 0$'; then bad "$name: did not exit with status 0"; screen | grep -v '^$' | tail -5; return 1; fi
  shown=$(screen)
  return 0
}
# warned NAME PATTERN: exactly one history warning, matching PATTERN.
warned() {
  n=$(echo "$shown" | grep -c 'history')
  if [ "$n" -eq 1 ] && echo "$shown" | grep -q "$2"; then ok
  else bad "$1: wanted one warning matching '$2'"; echo "$shown" | grep -v '^$' | tail -5; fi
}
quiet() {
  if echo "$shown" | grep -q 'history'; then bad "$1: a history warning"; echo "$shown" | grep 'history'; else ok; fi
}
# same NAME FILE BEFORE: `ls -l` and checksum of FILE unchanged.
fingerprint() { echo "$(ls -ld "$1" | cut -d' ' -f1,5) $( [ -f "$1" ] && [ ! -L "$1" ] && md5sum < "$1")"; }
same() { if [ "$(fingerprint "$2")" = "$3" ]; then ok; else bad "$1: $2 changed: $3 -> $(fingerprint "$2")"; fi; }

# A FIFO: opening it for reading must not wait for a writer.
mkfifo "$TMP/fifo"
before=$(fingerprint "$TMP/fifo")
if session fifo TCALC_HISTORY="$TMP/fifo"; then warned fifo 'not a regular file'; same fifo "$TMP/fifo" "$before"; fi

# A device that never ends (a copy of /dev/zero): not read at all.
if mknod "$TMP/zero" c 1 5 2> /dev/null; then
  chmod 0666 "$TMP/zero"
  before=$(fingerprint "$TMP/zero")
  if session device TCALC_HISTORY="$TMP/zero"; then warned device 'not a regular file'; same device "$TMP/zero" "$before"; fi
else
  echo "  device: skipped (mknod is not permitted here)"
fi

# /dev/null and an empty TCALC_HISTORY: no history, no warning, and
# /dev/null keeps its mode (tcalc once left it 0600).
before=$(fingerprint /dev/null)
if session devnull TCALC_HISTORY=/dev/null HOME="$TMP/home"; then quiet devnull; same devnull /dev/null "$before"; fi
[ "$(fingerprint /dev/null)" = "$before" ] || chmod 0666 /dev/null   # undo what a faulty build did
if session empty_var TCALC_HISTORY= HOME="$TMP/home"; then
  quiet empty_var
  if [ -e "$TMP/home/.tcalc_history" ]; then bad "empty_var: wrote ~/.tcalc_history"; else ok; fi
fi

# HOME empty (and no TCALC_HISTORY): no default history file at all.
root_hist=$( [ -e /.tcalc_history ] && echo yes || echo no)
if session empty_home -u TCALC_HISTORY HOME=; then
  quiet empty_home
  if [ "$root_hist" = no ] && [ -e /.tcalc_history ]; then bad "empty_home: created /.tcalc_history"; rm -f /.tcalc_history; else ok; fi
fi

# A symbolic link: never followed, its target untouched.
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$TMP/passwd"
chmod 0644 "$TMP/passwd"
ln -s "$TMP/passwd" "$TMP/link"
before=$(fingerprint "$TMP/passwd")
if session symlink TCALC_HISTORY="$TMP/link"; then
  warned symlink 'symbolic link'
  same symlink "$TMP/passwd" "$before"
  if [ -L "$TMP/link" ]; then ok; else bad "symlink: the link was replaced"; fi
fi

# A foreign regular file (2000 lines that are not libedit history).
seq 1 2000 > "$TMP/notes"
chmod 0644 "$TMP/notes"
before=$(fingerprint "$TMP/notes")
if session foreign TCALC_HISTORY="$TMP/notes"; then warned foreign 'does not hold libedit history'; same foreign "$TMP/notes" "$before"; fi

# A libedit history larger than 1 MiB: not read, left as it is.
{ echo _HiStOrY_V2_; yes 1+1 | head -n 400000; } > "$TMP/big"
before=$(fingerprint "$TMP/big")
if session big TCALC_HISTORY="$TMP/big"; then warned big 'larger than 1 MiB'; same big "$TMP/big" "$before"; fi

# libedit history that tcalc did not create: used, extended, mode kept.
printf '_HiStOrY_V2_\nzeros(3)\n' > "$TMP/shared"
chmod 0640 "$TMP/shared"
if session shared TCALC_HISTORY="$TMP/shared"; then
  quiet shared
  if [ "$(ls -l "$TMP/shared" | cut -c1-10)" = "-rw-r-----" ]; then ok; else bad "shared: mode changed to $(ls -l "$TMP/shared" | cut -c1-10)"; fi
  if grep -q 'zeros(3)' "$TMP/shared" && grep -q '40\\040+\\0402\|40 + 2' "$TMP/shared"; then ok; else bad "shared: history not kept and extended"; cat "$TMP/shared"; fi
fi

# A new file: created 0600, and no temporary file is left beside it.
mkdir -p "$TMP/new"
if session new TCALC_HISTORY="$TMP/new/hist" && session new2 TCALC_HISTORY="$TMP/new/hist"; then
  quiet new
  if [ "$(ls -l "$TMP/new/hist" 2>/dev/null | cut -c1-10)" = "-rw-------" ]; then ok; else bad "new: $(ls -l "$TMP/new/hist" 2>&1)"; fi
  if [ "$(ls -A "$TMP/new" | wc -l)" -eq 1 ]; then ok; else bad "new: files left: $(ls -A "$TMP/new")"; fi
fi
tm kill-server 2>/dev/null
finish
