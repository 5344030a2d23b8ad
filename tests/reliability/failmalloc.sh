#!/bin/sh
# Every allocation is checked (issue 7): a script runs once for each
# allocation it makes, with that one allocation failing (an LD_PRELOAD
# shim, failmalloc.c). Each run must end normally; in JSON mode it prints
# what the run without failures printed up to an out_of_memory error. Needs a build without sanitizers (their allocator cannot be
# preloaded over). Usage: tests/reliability/failmalloc.sh TCALC FAILMALLOC.so
. "$(dirname "$0")/lib.sh"
SHIM=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")

cat > "$TMP/script.tc" <<'TC'
x = [1, 2, 3]
y = reshape(arange(12), [3, 4])
y * 2.5
sum(y, 0)
[x, x]
z = x / [1, 0, 1]
y[1:, ::2]
:vars
:help sum
cast(x, "f16")
"text"
take(x, [2, 0], mode="clip")
1 +
where(x > 1, x, -x)
f32(rand([2000], seed=3))[1995:]
x[1] = 7
x
:set
save("$TMP/a.npy", y)
load("$TMP/a.npy")[2]
save_csv("$TMP/a.csv", y)
shape(load_csv("$TMP/a.csv"))
:clear x
q = [[1, 2], [3, 4]]
q[0, :] = [9, 8]
concat([q, q], axis=1)
nope(1)
TC
sed -i "s|\$TMP|$TMP|g" "$TMP/script.tc"

# Without the CUDA plugin: since the CUDA engine claims rows, :help sum
# asks it, which loads the plugin, and the CUDA runtime linked into it
# (NVIDIA's static initialiser, run by dlopen) crashes on an allocation
# refused there, which no code of tcalc's sees (see the man page, LIMITS).
export TCALC_CUDA_LIB=/nonexistent/libtcalc-cuda.so
for mode in --json --text; do
  m=$mode
  [ "$mode" = --text ] && m=
  timeout "$LIMIT" "$BIN" -k $m < "$TMP/script.tc" > "$TMP/want" 2>&1
  echo $? > "$TMP/want.rc"
  # env, so that only tcalc has the shim (not timeout)
  timeout "$LIMIT" env FAILMALLOC_COUNT="$TMP/count" LD_PRELOAD="$SHIM" "$BIN" -k $m < "$TMP/script.tc" > "$TMP/got" 2>&1
  if ! cmp -s "$TMP/want" "$TMP/got"; then bad "failmalloc $mode: the shim changes the output"; continue; fi
  n=$(cat "$TMP/count")
  i=1
  while [ "$i" -le "$n" ]; do
    timeout "$LIMIT" env FAILMALLOC_N=$i LD_PRELOAD="$SHIM" "$BIN" -k $m < "$TMP/script.tc" > "$TMP/got.$i" 2>&1
    echo $? > "$TMP/rc.$i"
    i=$((i + 1))
  done
  if python3 - "$TMP" "$n" "$mode" <<'PY'
import json, sys
tmp, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = open(f"{tmp}/want", "rb").read().splitlines()
want_rc = int(open(f"{tmp}/want.rc").read())
oom = (b'"code":"out_of_memory"', b"error[out_of_memory]", b"tcalc: out of memory", b"Cannot allocate memory")
failed = 0
for i in range(1, n + 1):
    got = open(f"{tmp}/got.{i}", "rb").read().splitlines()
    rc = int(open(f"{tmp}/rc.{i}").read())
    saw_oom = any(o in line for line in got for o in oom)
    why = None
    if rc != want_rc and not (saw_oom and rc in (1, 2)):
        why = f"exit {rc}, wanted {want_rc}" + (" (or 1 with out_of_memory)" if not saw_oom else "")
    elif mode == "--json":
        # Up to the first difference the output is the same; the first line
        # that differs is an out_of_memory error (what follows may differ
        # too: a variable whose assignment failed is undefined later).
        for k in range(max(len(got), len(want))):
            w = want[k] if k < len(want) else b""
            g = got[k] if k < len(got) else b""
            if w == g:
                continue
            if not any(o in g for o in oom):
                why = f"line {k + 1}: {g[:160]!r}, wanted {w[:160]!r}"
            break
        for g in got:
            try:
                json.loads(g)
            except ValueError:
                if not g.startswith(b"tcalc: "):   # a message on stderr
                    why = f"not JSON: {g[:160]!r}"
    if why:
        failed += 1
        if failed <= 10:
            print(f"FAIL failmalloc {mode}: allocation {i} of {n} failing: {why}")
sys.exit(1 if failed else 0)
PY
  then ok; else bad "failmalloc $mode: see above"; fi
  echo "  failmalloc $mode: $n allocations, each made to fail once"
done
finish
