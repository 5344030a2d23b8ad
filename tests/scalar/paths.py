#!/usr/bin/env python3
"""The short paths for scalars (issue 14) against the general path.

Scalar statements take short paths: a 0-d op on the CPU engine without
broadcasting or views (src/api.c), x OP= e written into x's own storage,
a chain's temporary reused, a for loop's variable stepped along its tensor
instead of made anew, a bool condition read directly. TCALC_SCALAR_FAST=0
turns all of them off. This script generates scalar statements -- every
binary operator and function of the BIN and CMP families, over every pair
of dtypes, on edge values (MIN, MAX, -1, 0, NaN, -0.0, inf, subnormals),
with weak literals on either side, under each overflow policy, as
expressions, chains, compound assignments (of a name and of one element,
x[i] OP= e) and loops -- runs them through
both paths in text and JSON modes, and requires the same bytes on standard
output and standard error, and the same exit status.

usage: tests/scalar/paths.py path/to/tcalc [--quick]
"""
import itertools
import os
import subprocess
import sys
import tempfile

TCALC = sys.argv[1] if len(sys.argv) > 1 else "build/tcalc"
QUICK = "--quick" in sys.argv
TMP = tempfile.mkdtemp(prefix="tcalc-paths-")

DTYPES = ["bool", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "u8", "u16", "u32", "u64"]
OPS = ["+", "-", "*", "/", "%", "//", "**", "&", "|", "<<", ">>", "==", "!=", "<", "<=", ">", ">="]
FNS = ["mod", "maximum", "minimum", "atan2", "hypot", "bitwise_xor", "xor", "logical_and", "logical_or",
       "logical_xor"]


def edges(dt):
    """Edge values of a dtype, as expressions that make a 0-d tensor of it."""
    if dt == "bool":
        return ["true", "false"]
    if dt[0] in "iu":
        bits = int(dt[1:])
        if dt[0] == "i":
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            vals = [lo, lo + 1, -2, -1, 0, 1, 2, 3, 7, hi - 1, hi]
        else:
            hi = (1 << bits) - 1
            vals = [0, 1, 2, 3, 7, 1 << (bits - 1), hi - 1, hi]
        return ["%s(%d)" % (dt, v) for v in vals]
    big = {"bf16": "3.3895313892515355e38", "f16": "65504.0", "f32": "3.4028234663852886e38",
           "f64": "1.7976931348623157e308"}[dt]
    tiny = {"bf16": "9.183549615799121e-41", "f16": "5.960464477539063e-08", "f32": "1.401298464324817e-45",
            "f64": "5e-324"}[dt]
    vals = ["0.0", "-0.0", "1.0", "-1.0", "0.5", "-2.5", "3.0", "7.0", "inf", "-inf", "nan", big, "-" + big, tiny]
    return ["%s(%s)" % (dt, v) for v in vals]


# weak literals: ints (small, large, negative, above the i64 maximum), floats, bools
WEAK = ["0", "1", "-1", "2", "3", "127", "128", "255", "256", "-129", "65535", "2147483648", "-9223372036854775808",
        "9223372036854775807", "18446744073709551615", "0.0", "-0.0", "2.5", "-1.5", "1e300", "nan", "inf", "true",
        "false"]

POLICIES = ["wrap", "check", "saturate"]
COMPOUND = ["+", "-", "*", "/", "%", "//", "**", "^", "@"]   # the operators of x OP= e


def few(vals, k):
    """k values spread over the list, its ends always among them."""
    if len(vals) <= k:
        return vals
    step = (len(vals) - 1) / (k - 1)
    return [vals[round(i * step)] for i in range(k)]


def apply(op, a, b):
    return "%s(%s, %s)" % (op, a, b) if op in FNS else "%s %s %s" % (a, op, b)


def statements():
    out = []
    nsame = 5 if QUICK else 11
    nmix = 3 if QUICK else 4
    ops = OPS + FNS
    for policy in POLICIES:
        out.append(":set overflow " + policy)
        # the same dtype on both sides, variables holding edge values
        for dt in DTYPES:
            vals = few(edges(dt), nsame)
            for i, v in enumerate(vals):
                out.append("v%d = %s" % (i, v))
            for op in ops:
                for i, j in itertools.product(range(len(vals)), repeat=2):
                    out.append(apply(op, "v%d" % i, "v%d" % j))
        # every pair of dtypes, a few values each
        for da, db in itertools.product(DTYPES, repeat=2):
            if da == db:
                continue
            va, vb = few(edges(da), nmix), few(edges(db), nmix)
            for i, v in enumerate(va):
                out.append("a%d = %s" % (i, v))
            for i, v in enumerate(vb):
                out.append("b%d = %s" % (i, v))
            for op in ops:
                for i, j in itertools.product(range(len(va)), range(len(vb))):
                    out.append(apply(op, "a%d" % i, "b%d" % j))
        # weak literals against each dtype, on either side, and against each other
        for dt in DTYPES:
            vals = few(edges(dt), 3)
            for i, v in enumerate(vals):
                out.append("w%d = %s" % (i, v))
            for op in ops:
                for lit in (WEAK if not QUICK else WEAK[::3]):
                    for i in range(len(vals)):
                        out.append(apply(op, "w%d" % i, lit))
                        out.append(apply(op, lit, "w%d" % i))
        for op in ops:
            for la, lb in itertools.product(WEAK[::2] if not QUICK else WEAK[::5], repeat=2):
                e = apply(op, la, lb)
                out.append(e)
                out.append("i8(0) + (%s)" % e)   # is the result still weak?
    return out


def programs():
    """Compound assignments (in place when nothing else holds the value),
    chains, loops and conditions, under each policy."""
    out = []
    for policy in POLICIES:
        out.append(":set overflow " + policy)
        for dt in DTYPES:
            vals = few(edges(dt), 5 if QUICK else 8)
            for op in COMPOUND:
                for v, w in itertools.product(vals, vals[:4]):
                    # x OP= e: in place, kept weak or not, and when another name holds the value
                    out.append("s = %s; s %s= %s; s" % (v, op, w))
                    out.append("s = %s; t = s; s %s= %s; [s, t]" % (v, op, w))
                    out.append("s = %s; s %s= 1; s %s= 2; s" % (v, op, op))
                    out.append("k = 1; k %s= %s; k" % (op, w))
                    out.append("s = %s; s = s %s %s; u = s; s = s %s (s %s 1); [s, u]" % (v, op, w, op, op))
                    # chains: the temporary is reused
                    out.append("%s %s %s %s 1 %s %s" % (v, op, w, op, op, v))
            # loops: the loop variable stepped in place, the condition read directly
            bare = [e[len(dt) + 1:-1] if e.startswith(dt + "(") else e for e in vals]
            out.append("x = %s([%s])" % (dt, ", ".join(bare)))
            # x[i] OP= e: one element updated where it is, or (another dtype, a shared tensor) anew
            for op in COMPOUND:
                for w in vals[:4]:
                    out.append("e = %s([%s]); j = 1; e[0] %s= %s; e[-1] %s= %s; e[j] %s= 1; e" %
                               (dt, ", ".join(bare), op, w, op, w, op))
                out.append("e = x; e[1] %s= 2; e[9] %s= 1; [e, x]" % (op, op))
            for op in COMPOUND[:-1]:
                out.append("s = x[0]; for i in x do s %s= i end; s" % op)
                out.append("s = 0; for i in x do s %s= i end; s" % op)
                out.append("s = 1.5; for i in x do s = s %s i end; s" % op)
                out.append("n = 0; for i in x do if i > x[1] then n += 1 end end; n")
                out.append("n = 0; for b in x != x[1] do if b then n += 1 elif not_equal(b, true) then n -= 7 end end; n")
                out.append("for i in x do j = i; i %s= 1; print(j, i) end" % op)
            # values that another name (or a view's tensor) still holds are never written over
            out.append("prev = x[0]; for i in x do print(prev, i); prev = i end")
            out.append("k = 0; for i in x do if k == 0 then first = i end; k += 1 end; [first, i]")
            out.append("for i in x do s = x[1]; s += i; s *= 2; print(s, x[1]) end")
            out.append("y = x; s = y[0]; for i in x do s -= i end; [s, y[0], x[0]]")
            out.append("y = x; for i in y do y[1] = y[0]; y[0] += i; print(i) end; [y, x]")
            out.append("m = reshape(%s(arange(6)), [3, 2]); for r in m do print(r) end" % dt)
            out.append("for r in reshape(%s(arange(0)), [3, 0]) do print(r) end" % dt)
            out.append("k = 0; while k < %s(3) do k += 1 end; k" % dt)
            out.append("k = %s; while k do k = false end; k" % vals[0])
            out.append("if %s then 1 else 2 end" % vals[-1])
        # a value mapped read-only from a file (load(path, mmap=true)) is never written in place
        out.append('save("%s/z.npy", i16(300)); s = load("%s/z.npy", mmap=true); s += 1; s = s * 2; [s]' % (TMP, TMP))
        out.append('for i in load("%s/z.npy", mmap=true) + [0, 1] do i += 1; print(i) end' % TMP)
        # errors inside loops keep the variables (and their place in the loop)
        out.append("s = i8(100); for i in [1, 2, 3] do s += i8(20) end; s")
        out.append("s = 0; for i in [1, 0, 2] do s += 6 // i end; s")
        out.append("s = u8(1); for i in u8([3, 2, 1]) do s -= i end; s")
        out.append("s = 1; for i in [1, 2] do s += u64(3) end; s")
        out.append("s = i8(1); for i in [1, 2] do s += 300 end; s")
    return out


def run(lines, env, json):
    p = subprocess.run([TCALC, "-k"] + (["--json"] if json else []), input="\n".join(lines) + "\n",
                       capture_output=True, text=True, env=env)
    return p.returncode, p.stdout.replace(TMP, "TMP"), p.stderr.replace(TMP, "TMP")


def main():
    fast = dict(os.environ)
    fast.pop("TCALC_SCALAR_FAST", None)
    slow = dict(fast, TCALC_SCALAR_FAST="0")
    failures = 0
    total = 0
    for name, lines in (("statements", statements()), ("programs", programs())):
        total += sum(1 for l in lines if not l.startswith(":"))
        for json in (False, True):
            a, b = run(lines, fast, json), run(lines, slow, json)
            mode = "json" if json else "text"
            if a == b:
                continue
            failures += 1
            print("FAIL %s (%s): the short paths differ from the general path" % (name, mode))
            if a[0] != b[0]:
                print("  exit status %d, general path %d" % (a[0], b[0]))
            for what, x, y in (("stdout", a[1], b[1]), ("stderr", a[2], b[2])):
                xl, yl = x.splitlines(), y.splitlines()
                for k, (u, v) in enumerate(itertools.zip_longest(xl, yl)):
                    if u != v:
                        print("  %s line %d:\n    short:   %s\n    general: %s" % (what, k + 1, u, v))
                        break
    # the paths must have been exercised: the outputs hold results, not only errors
    rc, out, _ = run(statements()[:2000], fast, True)
    oks = out.count('"ok":true')
    if oks < 500:
        failures += 1
        print("FAIL: only %d of the first statements gave a result" % oks)
    print("scalar paths: %d statements and programs, text and JSON, %d failures" % (total, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        import shutil
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)
