#!/usr/bin/env python3
"""Every row of repl/spellings.def (other tools' names for tcalc's
functions, suggested for an unknown name) is checked:

- its name is unknown to tcalc, and calling it suggests its ours (with the
  note, where the row has one);
- its ours is one of tcalc's functions (:help NAME answers);
- a NumPy row without a note means what NumPy's function means: both are
  computed on the same inputs (i32, i64, u8 and f64 vectors, and pairs of
  them for the binary functions, without zero divisors or values outside a
  function's domain) and must give the same dtype and the same values (to
  a few ulps for floats); a dtype name must name the same dtype. A row
  whose meaning differs (divide: NumPy's is true division, div truncates
  integers) fails this check without its note.

usage: tests/cli/spellings.py path/to/tcalc
"""
import json
import os
import re
import subprocess
import sys

TCALC = sys.argv[1] if len(sys.argv) > 1 else "build/tcalc"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROWS = re.findall(r'X\("([^"]*)", "([^"]*)", "([^"]*)", "([^"]*)"\)',
                  open(os.path.join(ROOT, "repl", "spellings.def")).read())
DT = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
      "uint32": "u32", "uint64": "u64", "float16": "f16", "float32": "f32", "float64": "f64", "bool": "bool"}


def run(*stmts):
    p = subprocess.run([TCALC, "--json", "-k"] + [a for s in stmts for a in ("-e", s)],
                       capture_output=True, text=True, timeout=60)
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


fails = []


def bad(msg):
    fails.append(msg)
    print("FAIL " + msg)


try:
    import numpy as np
except ImportError:
    np = None
    if os.environ.get("CI") == "true":
        sys.exit("spellings: NumPy is missing (scripts/install-deps.sh installs python3-numpy)")

INPUTS = {   # dtype: values (a function's domain may take a part of them)
    "i32": [-7, -3, -1, 0, 1, 2, 5, 7], "i64": [-9, -2, 0, 1, 3, 8, 11, 100], "u8": [0, 1, 2, 3, 7, 100, 200, 255],
    "f64": [-2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 3.5],
}
RIGHT = {"i32": [2, -2, 3, 1, -1, 4, -3, 2], "i64": [3, -3, 2, 1, -1, 5, 2, -7], "u8": [1, 2, 3, 1, 2, 9, 7, 3],
         "f64": [1.5, -0.5, 2.0, 0.5, -2.0, 4.0, 0.25, -1.0, 3.0]}


def literal(vals, dt):
    return "%s([%s])" % (dt, ", ".join(repr(float(v)) if dt[0] == "f" else str(v) for v in vals))


def compare(name, ours, f, args_np, args_tc):
    with np.errstate(all="ignore"):
        try:
            want = f(*args_np)
            if np.asarray(want).dtype.kind == "f" and all(a.dtype.kind in "iu" for a in args_np):
                # integers compute in f64 here (SPEC 4.3); NumPy picks the
                # smallest float that holds them (u8 -> f16): compare values
                want = f(*[a.astype(np.float64) for a in args_np])
        except (TypeError, ValueError):
            return None   # NumPy refuses these operands: nothing to compare
    got = run("%s(%s)" % (ours, ", ".join(args_tc)))
    if len(got) != 1 or not got[0].get("ok"):
        if not np.all(np.isfinite(np.asarray(want, dtype=float))):
            return None   # outside the domain (NumPy's nan or inf where tcalc refuses)
        return "%s(%s) failed: %s" % (ours, ", ".join(args_tc), got)
    g = got[0]
    wdt = DT.get(np.asarray(want).dtype.name)
    if g["dtype"] != wdt:
        return "%s gives %s where NumPy's %s gives %s, on %s" % (ours, g["dtype"], name, wdt, ", ".join(args_tc))
    vals = g["data"] if isinstance(g["data"], list) else [g["data"]]
    data = np.array([float("nan") if v == "nan" else float(v.replace("inf", "1e999")) if isinstance(v, str) else v
                     for v in vals], dtype=float)
    w = np.asarray(want, dtype=float)
    if not np.allclose(data, w, rtol=1e-14, atol=0, equal_nan=True):
        return "%s gives %s where NumPy's %s gives %s, on %s" % (ours, list(data), name, list(w), ", ".join(args_tc))
    return None


def same_meaning(name, ours):
    """None when NumPy's name and tcalc's ours agree (or cannot be
    compared), else why not"""
    if name in DT or name in ("double", "single", "half"):
        want = np.dtype(name).name
        got = run("dtype(%s(1))" % ours)
        return None if got and got[0].get("value") == DT[want] else "%s is %s, %s gives %s" % (name, want, ours, got)
    f = getattr(np, name, None)
    if f is None:
        return "numpy has no %s" % name
    if name == "concatenate":
        a, b = INPUTS["i32"], RIGHT["i32"]
        return compare(name, ours, lambda x, y: np.concatenate([x, y]), (np.array(a, np.int32), np.array(b, np.int32)),
                       ("[%s, %s]" % (literal(a, "i32"), literal(b, "i32")),))
    nin = f.nin if isinstance(f, np.ufunc) else 1
    for dt in ("i32", "i64", "u8", "f64"):
        npdt = {"i32": np.int32, "i64": np.int64, "u8": np.uint8, "f64": np.float64}[dt]
        a = INPUTS[dt]
        if name in ("arcsin", "arccos"):
            a = [v for v in a if -1 <= v <= 1]
        if nin == 1:
            why = compare(name, ours, f, (np.array(a, npdt),), (literal(a, dt),))
        else:
            b = RIGHT[dt]
            if name in ("left_shift", "right_shift"):
                b = [abs(int(v)) % 7 for v in b]
            if name == "power":
                b = [abs(v) % 4 for v in b]
            n = min(len(a), len(b))
            why = compare(name, ours, f, (np.array(a[:n], npdt), np.array(b[:n], npdt)),
                          (literal(a[:n], dt), literal(b[:n], dt)))
        if why:
            return why
    return None


for name, ours, tool, note in ROWS:
    got = run(":help " + ours)
    if not got or not got[0].get("ok"):
        bad("%s: its suggestion %s is no tcalc function" % (name, ours))
        continue
    got = run("%s(1)" % name)
    err = got[0].get("error", {}) if got else {}
    want = "did you mean %s?" % ours + (" " + note if note else "")
    if err.get("code") != "unknown_function" or want not in err.get("message", ""):
        bad("%s: %s, where unknown_function with \"%s\" was wanted" % (name, got, want))
        continue
    if tool == "numpy" and not note and np is not None:
        why = same_meaning(name, ours)
        if why:
            bad("%s -> %s: not the same meaning: %s" % (name, ours, why))
print("spellings: %d rows, %d failures%s" % (len(ROWS), len(fails), "" if np is not None else " (NumPy missing: "
                                                                     "meanings not compared)"))
sys.exit(1 if fails else 0)
