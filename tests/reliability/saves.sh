#!/bin/sh
# save and save_csv replace a file whole or not at all (issue 20): the new
# file is written beside the old one and renamed over it. Checked here: no
# temporary file is ever left behind; a replaced file keeps its mode; a
# symbolic link is replaced by the new file and its target left alone; on a
# full disk (a small tmpfs, when this test may mount one) the save fails
# with io_error and the old file is intact, also through a symbolic link;
# SIGINT during a large save is `interrupted` within 0.5 s and SIGTERM
# kills tcalc, and either way the old file is intact and the temporary
# file gone.
# Usage: tests/reliability/saves.sh path/to/tcalc
. "$(dirname "$0")/lib.sh"
sum() { md5sum < "$1" | cut -d' ' -f1; }
# leftovers DIR NAME: no .tcalc-save-* file in DIR
leftovers() {
  if ls -A "$1" | grep -q '^\.tcalc-save-'; then bad "$2: temporary file left: $(ls -A "$1" | grep '^\.tcalc-save-')"; else ok; fi
}
# tc ARGS...: tcalc in JSON mode, bounded; sets $rc and $out
tc() {
  out=$(timeout -k 5 "$LIMIT" "$BIN" --json "$@" 2> "$TMP/err")
  rc=$?
}

# ---- plain saves: replaced whole, mode kept, nothing left over ----
d="$TMP/plain"
mkdir -p "$d"
tc -e "save(\"$d/a.npy\", arange(10))" -e "save_csv(\"$d/a.csv\", arange(10))"
if [ "$rc" -eq 0 ] && [ -s "$d/a.npy" ] && [ -s "$d/a.csv" ]; then ok; else bad "plain: $(status_note $rc) $out"; fi
chmod 0640 "$d/a.npy" "$d/a.csv"
tc -e "save(\"$d/a.npy\", arange(20))" -e "save_csv(\"$d/a.csv\", arange(20))" -e "shape(load(\"$d/a.npy\"))" -e "shape(load_csv(\"$d/a.csv\"))"
if [ "$rc" -eq 0 ] && [ "$(echo "$out" | grep -c '"data":\[20\]')" -eq 2 ]; then ok; else bad "replace: $(status_note $rc) $out"; fi
if [ "$(ls -l "$d/a.npy" | cut -c1-10)$(ls -l "$d/a.csv" | cut -c1-10)" = "-rw-r------rw-r-----" ]; then ok
else bad "replace: modes not kept: $(ls -l "$d")"; fi
leftovers "$d" plain

# ---- a symbolic link: replaced by the new file, its target untouched ----
echo 'precious' > "$d/target"
ln -s "$d/target" "$d/link.npy"
tc -e "save(\"$d/link.npy\", arange(3))"
if [ "$rc" -eq 0 ] && [ ! -L "$d/link.npy" ] && [ "$(cat "$d/target")" = precious ]; then ok
else bad "symlink: $(status_note $rc) $(ls -l "$d")"; fi
leftovers "$d" symlink

# ---- a device is written in place ----
tc -e 'save("/dev/null", arange(3))'
if [ "$rc" -eq 0 ] && [ -c /dev/null ]; then ok; else bad "device: $(status_note $rc) $out"; fi

# ---- a full disk ----
m="$TMP/mnt"
mkdir -p "$m"
if mount -t tmpfs -o size=256k tcalc-test "$m" 2> /dev/null; then
  trap 'umount "$m" 2>/dev/null; rm -rf "$TMP"' EXIT
  tc -e "save(\"$m/data.npy\", arange(1000))" -e "save_csv(\"$m/data.csv\", arange(1000))"
  old_npy=$(sum "$m/data.npy") old_csv=$(sum "$m/data.csv")
  echo 'precious' > "$m/target"
  ln -s "$m/target" "$m/link.npy"
  for stmt in "save(\"$m/data.npy\", arange(100000))" "save_csv(\"$m/data.csv\", arange(100000))" \
              "save(\"$m/link.npy\", arange(100000))"; do
    tc -e "$stmt"
    if [ "$rc" -eq 1 ] && echo "$out" | grep -q '"code":"io_error".*No space left'; then ok
    else bad "full disk: $stmt: $(status_note $rc) $out"; fi
  done
  if [ "$(sum "$m/data.npy")" = "$old_npy" ] && [ "$(sum "$m/data.csv")" = "$old_csv" ]; then ok
  else bad "full disk: the old file changed"; fi
  if [ -L "$m/link.npy" ] && [ "$(cat "$m/target")" = precious ]; then ok; else bad "full disk: the link or its target changed"; fi
  leftovers "$m" full_disk
  umount "$m"
else
  echo "  full disk: skipped (cannot mount a tmpfs here; needs root)"
fi

# ---- signals during a large save (800 MB) ----
# signal NAME SIG: starts the save, waits for its temporary file to grow,
# sends SIG; prints "STATUS MS" (MS: from the signal to the exit).
d="$TMP/sig"
mkdir -p "$d"
echo 'old contents' > "$d/big.npy"
old=$(sum "$d/big.npy")
signal() {
  python3 - "$BIN" "$d" "$2" <<'PY'
import os, signal, subprocess, sys, time
bin, d, sig = sys.argv[1], sys.argv[2], getattr(signal, sys.argv[3])
p = subprocess.Popen([bin, "--json", "-e", "x = zeros([100000000])", "-e", f'save("{d}/big.npy", x)'],
                     stdout=open(f"{d}/../out", "wb"), stderr=open(f"{d}/../err", "wb"))
deadline = time.monotonic() + 120
while p.poll() is None and time.monotonic() < deadline:
    tmp = [f for f in os.listdir(d) if f.startswith(".tcalc-save-")]
    if tmp and os.stat(os.path.join(d, tmp[0])).st_size > (50 << 20):
        break
    time.sleep(0.002)
t0 = time.monotonic()
p.send_signal(sig)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill(); p.wait(); rc = 124
print(rc if rc >= 0 else 128 - rc, int((time.monotonic() - t0) * 1000))
PY
}
r=$(signal sigint SIGINT)
rc=${r% *} ms=${r#* }
if [ "$rc" -eq 1 ] && grep -q '"code":"interrupted"' "$TMP/out" && [ "$ms" -le 500 ]; then ok
else bad "SIGINT during save: status $rc after $ms ms: $(head -c 300 "$TMP/out")"; fi
if [ "$(sum "$d/big.npy")" = "$old" ]; then ok; else bad "SIGINT during save: the old file changed"; fi
leftovers "$d" sigint
r=$(signal sigterm SIGTERM)
rc=${r% *}
if [ "$rc" -eq 143 ]; then ok; else bad "SIGTERM during save: status $rc, wanted 143 (killed by SIGTERM)"; fi
if [ "$(sum "$d/big.npy")" = "$old" ]; then ok; else bad "SIGTERM during save: the old file changed"; fi
leftovers "$d" sigterm
finish
