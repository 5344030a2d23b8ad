#!/bin/sh
# Differential test of indexing against NumPy 1.24 (SPEC 5.5, 18): random
# shapes (1 to 4 axes, some of length 0) and random subscripts mixing
# integers, slices, '...', None, index tensors on any axis (1-D and 2-D,
# several at once, next to each other or apart) and bool masks over one or
# two axes, read (x[...]) and written (x[...] = v, x[...] += v, with v a
# scalar or a tensor broadcast to the selection, with and without a second
# name holding x). Every case must give NumPy's shape and values exactly,
# or fail where NumPy raises (and then leave the tensor unchanged). One
# divergence is by design: an index outside its axis is an error even where
# the selection is empty (NumPy 1.24 lets some pass, deprecated), so a case
# with such an index may fail where NumPy gives an empty result.
# Usage: scripts/index-numpy.sh path/to/tcalc [CASES]   (default 2400)
set -u
label="indexing vs numpy"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
"$py" - "$bin" "$tmp" "$(cd "$(dirname "$0")" && pwd)" "${2:-2400}" <<'PYEOF'
import sys, random, warnings, json, subprocess
import numpy as np
warnings.simplefilter("error")   # NumPy's deprecated leniencies raise, as tcalc does

tcalc, tmp, ncases = sys.argv[1], sys.argv[2], int(sys.argv[4])
sys.path.insert(0, sys.argv[3])
from numpy_check import as_array
rng = random.Random(20261207)

def lit(a):
    """A Python/tcalc literal of a nested list of ints or bools."""
    return repr(a.tolist() if isinstance(a, np.ndarray) else a)

def index_array(n, oob):
    shape = rng.choice([(0,), (1,), (2,), (3,), (2, 2), (1, 3), (3, 1)])
    if n == 0 and not oob[0]:
        shape = (0,)
    lo, hi = -n, n - 1
    a = np.array([rng.randint(lo, hi) if n else 0 for _ in range(int(np.prod(shape)))], dtype=np.int64).reshape(shape)
    if a.size and rng.random() < 0.04:
        a.flat[rng.randrange(a.size)] = rng.choice([n, n + 2, -n - 1])
        oob[0] = True
    oob[0] |= n == 0 and a.size > 0
    return a

def mask(shape):
    m = np.array([rng.random() < 0.5 for _ in range(int(np.prod(shape)))], dtype=bool).reshape(shape)
    if rng.random() < 0.05 and len(shape):   # a wrong shape
        s = list(shape)
        s[rng.randrange(len(s))] += 1
        m = np.ones(s, dtype=bool)
    return m

def slice_text():
    b = lambda: "" if rng.random() < 0.4 else str(rng.randint(-5, 5))
    s = b() + ":" + b()
    if rng.random() < 0.4:
        s += ":" + rng.choice(["", "1", "2", "3", "-1", "-2"])
    return s

def items_for(shape, axes, oob):
    """Items consuming the axes listed in axes (in order)."""
    out, i = [], 0
    while i < len(axes):
        n = shape[axes[i]]
        r = rng.random()
        if r < 0.25:
            k = rng.randint(-n, n - 1) if n else 0
            if rng.random() < 0.03 or n == 0:
                k = rng.choice([n, -n - 1])
                oob[0] = True
            out.append(str(k))
        elif r < 0.5:
            out.append(slice_text())
        elif r < 0.8:
            out.append(lit(index_array(n, oob)))
        else:
            # a 2-D mask over two axes (not empty: its literal [] would be 1-D)
            m = 2 if i + 1 < len(axes) and axes[i + 1] == axes[i] + 1 and n and shape[axes[i + 1]] \
                and rng.random() < 0.3 else 1
            out.append(lit(mask(tuple(shape[a] for a in axes[i:i + m]))))
            i += m
            continue
        i += 1
    return out

def subscript(shape):
    nd, oob = len(shape), [False]
    if rng.random() < 0.3:   # with '...' in the middle
        a = rng.randint(0, nd)
        b = rng.randint(0, nd - a)
        items = items_for(shape, list(range(a)), oob) + ["..."] + items_for(shape, list(range(nd - b, nd)), oob)
    else:
        k = rng.randint(1, nd)
        items = items_for(shape, list(range(k)), oob)
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        items.insert(rng.randint(0, len(items)), "None")
    if rng.random() < 0.03:
        items.insert(rng.randint(0, len(items)), rng.choice(["True", "False"]))
    return ", ".join(items), oob[0]

def numpy_value(sel_shape):
    """A value for an assignment: a scalar or a tensor broadcasting to sel_shape (now and then not)."""
    size = int(np.prod(sel_shape)) if sel_shape else 1
    r = rng.random()
    if r < 0.4 or size == 0 or not sel_shape:
        return rng.randint(-99, 99)
    if r < 0.7:
        shape = sel_shape
    elif r < 0.85:
        shape = sel_shape[-1:]
    elif r < 0.95:
        shape = tuple(1 if rng.random() < 0.5 else s for s in sel_shape)
    else:
        shape = tuple(s + 1 for s in sel_shape)   # does not broadcast
    return np.array([rng.randint(-99, 99) for _ in range(int(np.prod(shape)))], dtype=np.int64).reshape(shape)

stmts, cases = [], []
for c in range(ncases):
    nd = rng.choice([1, 2, 2, 3, 3, 4])
    shape = tuple(rng.choice([0] + [1, 2, 3, 4] * 6) for _ in range(nd))
    size = int(np.prod(shape))
    make = "reshape(arange(%d), %s)" % (size, list(shape))
    x = np.arange(size, dtype=np.int64).reshape(shape)
    sub, oob = subscript(shape)
    try:
        want = np.asarray(eval("x[%s]" % sub))
        sel = want.shape
    except Exception:
        want, sel = None, ()
    kind = rng.choice(["get", "get", "set", "add"])
    if kind == "get":
        stmts.append("%s[%s]" % (make, sub))
        cases.append(("get", sub, shape, want, oob))
        continue
    v = numpy_value(sel)
    y = x.copy()
    try:
        if kind == "set":
            exec("y[%s] = v" % sub)
        else:
            exec("y[%s] += v" % sub)
        ok = True
    except Exception:
        ok, y = False, x.copy()
    alias = rng.random() < 0.25
    stmts.append("y = " + make)
    if alias:
        stmts.append("z = y")
    stmts.append("y[%s] %s= %s" % (sub, "" if kind == "set" else "+", lit(v)))
    stmts.append("y")
    if alias:
        stmts.append("z")
    cases.append((kind, "%s with %s" % (sub, lit(v)), shape, (ok, y, x if alias else None), oob))

p = subprocess.run([tcalc, "--json", "-k"], input="\n".join(stmts) + "\n", capture_output=True, text=True, cwd=tmp)
outs = [json.loads(l) for l in p.stdout.splitlines()]
pos, fails, checks, lenient = 0, 0, 0, 0

def same(out, want):
    if not out.get("ok"):
        return False
    got = as_array(out)
    return got.shape == want.shape and np.array_equal(got, want)

def report(kind, what, shape, msg):
    global fails
    fails += 1
    if fails <= 20:
        print("FAIL %s x[%s] on shape %s: %s" % (kind, what, list(shape), msg))

for kind, what, shape, want, oob in cases:
    checks += 1
    if pos >= len(outs):
        report(kind, what, shape, "no output left")
        break
    if kind == "get":
        out = outs[pos]; pos += 1
        if want is None:
            if out.get("ok"):
                report(kind, what, shape, "NumPy raises, tcalc gives %s" % json.dumps(out)[:200])
        elif not out.get("ok") and oob and want.size == 0 and out["error"]["code"] == "index_out_of_bounds":
            lenient += 1
        elif not same(out, want):
            report(kind, what, shape, "want %s %s, got %s" % (list(want.shape), want.tolist(), json.dumps(out)[:300]))
        continue
    ok, y, z = want
    out = err = outs[pos]
    failed = not out.get("ok")
    if failed:
        pos += 1
        out = outs[pos] if pos < len(outs) else {}
    pos += 1
    if z is not None:
        zo = outs[pos] if pos < len(outs) else {}
        pos += 1
        if not same(zo, z):
            report(kind, what, shape, "the other name changed: %s" % json.dumps(zo)[:300])
            continue
    if ok and failed and oob and err["error"]["code"] == "index_out_of_bounds" \
            and np.array_equal(y, np.arange(y.size).reshape(y.shape)):
        lenient += 1   # NumPy let an out-of-range index pass on an empty selection
        continue
    if ok == failed:
        report(kind, what, shape, "NumPy %s, tcalc %s" % ("assigns" if ok else "raises", "fails" if failed else "assigns"))
    elif not same(out, y):
        report(kind, what, shape, "want %s, got %s" % (y.tolist(), json.dumps(out)[:300]))

if pos != len(outs):
    print("FAIL: %d results read of %d" % (pos, len(outs)))
    fails += 1
print("%s: %d cases, %d failed (%d where NumPy passes an out-of-range index on an empty selection)"
      % ("indexing vs numpy", checks, fails, lenient))
sys.exit(1 if fails else 0)
PYEOF
