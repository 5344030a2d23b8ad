#!/bin/sh
# Differential test of --semantics numpy against NumPy itself (SPEC 19):
# random integer tensors of every integer dtype, with zero divisors and
# MIN / -1 planted, under /, //, % (the operators) and as 0-d scalars; each
# case must give NumPy's dtype, values (bit for bit: true division as
# NumPy's f64) and RuntimeWarnings, in the result's "warnings"; and sum,
# prod, cumsum, nansum and mean of integers and bools (NumPy's i64/u64/f64
# result dtypes, wrapping values).
# Usage: scripts/semantics-numpy.sh path/to/tcalc [CASES]   (default 600)
set -u
label="semantics numpy vs numpy"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
"$py" - "$bin" "${2:-600}" <<'PYEOF'
import sys, random, warnings, json, subprocess, math
import numpy as np

tcalc, ncases = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261207)
DTYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
OPS = ["/", "//", "%"]
REDS = {"sum": np.sum, "prod": np.prod, "cumsum": np.cumsum, "nansum": np.nansum, "mean": np.mean}

def values(dt, n):
    info = np.iinfo(NP[dt])
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.2: out.append(0)
        elif r < 0.3: out.append(int(info.min))
        elif r < 0.4 and info.min < 0: out.append(-1)
        elif r < 0.5: out.append(int(info.max))
        else: out.append(rng.randint(max(int(info.min), -1000), min(int(info.max), 1000)))
    return out

cases, stmts = [], []
for _ in range(ncases):
    dt = rng.choice(DTYPES)
    op = rng.choice(OPS)
    if rng.random() < 0.3:   # a reduction of a vector
        f = rng.choice(sorted(REDS))
        n = rng.choice([1, 2, 5]) if f == "mean" else rng.choice([0, 1, 2, 5])
        if rng.random() < 0.15:
            a = [rng.random() < 0.5 for _ in range(n)]
            stmts.append("%s(bool(%s))" % (f, [int(v) for v in a]))
            cases.append(("bool", f, np.array(a, np.bool_), None))
        else:
            a = values(dt, n)
            stmts.append("%s(%s(%s))" % (f, dt, a))
            cases.append((dt, f, np.array(a, NP[dt]), None))
        continue
    n = rng.choice([0, 1, 3, 6])
    shape = rng.choice([None, (n,)])
    if shape is None:
        a, b = values(dt, 1)[0], values(dt, 1)[0]
        stmts.append("%s(%d) %s %s(%d)" % (dt, a, op, dt, b))
        cases.append((dt, op, np.array(a, NP[dt]), np.array(b, NP[dt])))
    else:
        a, b = values(dt, n), values(dt, n)
        stmts.append("%s(%s) %s %s(%s)" % (dt, a, op, dt, b))
        cases.append((dt, op, np.array(a, NP[dt]), np.array(b, NP[dt])))
p = subprocess.run([tcalc, "--json", "-k", "--semantics", "numpy"], input="\n".join(stmts) + "\n",
                   capture_output=True, text=True)
outs = [json.loads(l) for l in p.stdout.splitlines()]
fails = 0
if len(outs) != len(cases):
    print("FAIL: %d outputs for %d statements: %s" % (len(outs), len(cases), p.stderr[-400:]))
    sys.exit(1)
NAMES = {"bool": np.bool_, "f64": np.float64, **NP}
for (dt, op, a, b), stmt, out in zip(cases, stmts, outs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        want = REDS[op](a) if op in REDS else {"/": np.true_divide, "//": np.floor_divide, "%": np.remainder}[op](a, b)
        want = np.asarray(want)
    wmsgs = []
    for x in w:
        m = str(x.message)
        if m not in wmsgs: wmsgs.append(m)
    msg = None
    if not out.get("ok"):
        msg = "error %s" % json.dumps(out)[:200]
    elif out.get("semantics") != "numpy":
        msg = "no \"semantics\":\"numpy\" in %s" % json.dumps(out)[:200]
    elif out["dtype"] != {np.dtype(v): k for k, v in NAMES.items()}.get(want.dtype):
        msg = "dtype %s, NumPy %s" % (out["dtype"], want.dtype)
    else:
        got = np.array(out["data"], dtype=want.dtype) if want.dtype.kind != "f" else \
              np.array([float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf").replace("NaN", "nan"))
                        for v in np.ravel(out["data"])], dtype=np.float64).reshape(want.shape)
        if want.dtype.kind == "f":
            same = got.shape == want.shape and all((math.isnan(x) and math.isnan(y)) or x == y
                                                   for x, y in zip(got.ravel(), want.ravel()))
        else:
            same = got.shape == want.shape and np.array_equal(got, want)
        if not same:
            msg = "values %s, NumPy %s" % (out["data"], want.tolist())
        elif out.get("warnings", []) != wmsgs:
            msg = "warnings %s, NumPy %s" % (out.get("warnings", []), wmsgs)
    if msg:
        fails += 1
        if fails <= 10: print("FAIL %s: %s" % (stmt, msg))
print("%s: %d cases, %d failures (NumPy %s)" % ("semantics numpy vs numpy", len(cases), fails, np.__version__))
sys.exit(1 if fails else 0)
PYEOF
