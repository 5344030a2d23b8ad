#!/usr/bin/env python3
"""Differential test of `tcalc --semantics numpy|torch` against NumPy and
PyTorch themselves (SPEC 19).

Usage: semantics-diff.py --system numpy|torch [--cases N] [--seed S]
                         [--verbose] [--tcalc BIN]

One generator for both systems writes N statements; all of them go through
ONE `tcalc --json -k --semantics S` process (one statement a line, one JSON
result a line) and each is computed again by the system itself (the oracle).
Cases: every binary operator + - * / // % ** and the comparisons < == over
dtype pairs (the dtypes S lacks included: they must be dtype_unsupported),
weak Python scalar literals on either side (0 2 300 70000 1099511627776 2.5
-1), 0-d strong tensors against 1-d and 0-d ones, edge values (MIN, MAX, -1,
zero divisors, MIN // -1, negative exponents, +-0.0, halves, NaN, inf),
sum/prod/mean, x[i] and take(x, idx) with negative and out-of-range indices,
matmul, bare list literals and float constructors (S's default float).

Compared: ok/error, then the error code, or the dtype, shape, values
(exactly, the sign of zero included; float `**` and float sum/prod/mean
within ULP_TOL ulps of the result dtype: the order in which a reduction
adds is no part of SPEC 19, while an overflow to inf or a NaN still must
match) and the set of warnings (NumPy's
RuntimeWarnings; PyTorch warns of none of these).  Failures are printed
grouped by category with one example each and a total; --verbose lists
every failing statement.  Exit status 1 when any case fails.

The oracles:
- numpy: NumPy 1.24 in NEP 50 mode (np._set_promotion_state("weak")), which
  emulates NumPy 2's promotion.  One NumPy 2 rule 1.24 lacks is emulated
  here: a comparison (< ==) of an integer array with a Python int outside
  its dtype's range compares the exact values (NumPy 2.0); 1.24 raises
  OverflowError (<) or returns a lone False with a DeprecationWarning (==).
- torch: PyTorch (1.13 in Debian 12) in a child process (this script with
  --worker torch), one thread.  Integer // and % with a -1 divisor run in a
  forked grandchild: PyTorch's CPU kernels die with SIGFPE on MIN // -1 and
  MIN % -1 (i32 and i64; i8 and i16 are computed in int and wrap), and such a
  case expects tcalc's undefined_behavior.  A worker that dies anyway is
  restarted and its case counts as a crash too.  PyTorch has no u16/u32/u64
  (1.13 at all; 2.3+ only as limited "shell" dtypes, which SPEC 19 treats as
  missing): any case with one expects dtype_unsupported.  matmul cases use
  only dtypes whose CPU kernels 1.13 and 2.x agree on (integers, bool, f32,
  f64; f16/bf16 matmul on CPU arrived in 2.x).

Exceptions map to tcalc error codes (first match wins):
  the case names a dtype S lacks (numpy bf16; torch u16 u32 u64) -> dtype_unsupported
  SIGFPE / any crash of the oracle                 -> undefined_behavior
  OverflowError; torch "Overflow when unpacking long", "value cannot be
    converted to type ... without overflow"        -> literal_overflow
  ZeroDivisionError; torch RuntimeError "ZeroDivisionError" -> division_by_zero
  "Integers to negative integer powers are not allowed" -> negative_exponent
  IndexError                                      -> index_out_of_bounds
  NumPy's "boolean subtract ... is not supported", UFuncTypeError (no loop
    for these dtypes), torch "not implemented for 'X'", "Subtraction, the
    `-` operator, with a bool tensor is not supported", mean's "could not
    infer output dtype", matmul's "expected scalar type X but found Y" (no
    promotion in torch's matmul)                  -> dtype_unsupported
    (the operator exists in S, only not for these dtypes)
  "unsupported operand type", AttributeError (S has no such operator or
    function at all)                              -> op_unsupported
  anything else: "unmapped:<Exception>: <message>", which fails loudly.

Skipped (counted, not failures): under PyTorch 1.x, a case whose oracle
says a CPU kernel is "not implemented for 'Half'" or 'BFloat16' (prod of
f16/bf16): PyTorch 2, which SPEC 19 follows, has more of them.
"""
import argparse, json, math, os, random, signal, struct, subprocess, sys, time, warnings

DTYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
MISSING = {"numpy": {"bf16"}, "torch": {"u16", "u32", "u64"}}
OPS = ["+", "-", "*", "/", "//", "%", "**", "<", "=="]
LITERALS = [0, 2, 300, 70000, 1099511627776, 2.5, -1]
REDS = ["sum", "prod", "mean"]
ULP_TOL = 4


def irange(dt):
    bits = int(dt[1:])
    if dt[0] == "u":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def packed_round(fmt, x):
    """x rounded through struct format fmt ("f": f32, "e": f16); an overflow is an infinity."""
    if not math.isfinite(x):
        return x
    try:
        return struct.unpack(fmt, struct.pack(fmt, x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f32_round(x):
    return packed_round("f", x)


def bf16_round(x):
    """x (a float64) rounded to nearest even bf16, as a float."""
    if not math.isfinite(x):
        return x
    b = struct.unpack("I", struct.pack("f", f32_round(x)))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("f", struct.pack("I", b))[0]


def f16_round(x):
    return packed_round("e", x)


ROUND = {"f16": f16_round, "bf16": bf16_round, "f32": f32_round, "f64": lambda x: x}
FMAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308}
FTINY = {"f16": 6.103515625e-05, "bf16": 1.1754943508222875e-38, "f32": 1.1754943508222875e-38, "f64": 2.2250738585072014e-308}
MANT = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}


def ulp(dt, x):
    if x == 0 or not math.isfinite(x):
        return FTINY[dt] * 2.0 ** -MANT[dt]
    e = math.frexp(abs(x))[1] - 1
    return max(2.0 ** (e - MANT[dt]), FTINY[dt] * 2.0 ** -MANT[dt])


# ----------------------------------------------------------------------------
# Generation.  A case is a JSON-able dict; an operand is {"t": dtype, "v":
# values, "d0": 0-d?}, {"lit": value} or {"list": values}.

class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.cycles = {}

    def cycle(self, name, items):
        """Items in a shuffled order, each once before any repeats."""
        c = self.cycles.get(name)
        if not c:
            c = list(items)
            self.rng.shuffle(c)
            self.cycles[name] = c
        return c.pop()

    def value(self, dt):
        r = self.rng.random()
        if dt == "bool":
            return int(r < 0.5)
        if dt in INTS:
            lo, hi = irange(dt)
            if r < 0.12: return 0
            if r < 0.22: return lo
            if r < 0.32: return hi
            if r < 0.44 and lo < 0: return -1
            if r < 0.5: return 1
            if r < 0.6: return self.rng.randint(lo, hi)
            return self.rng.randint(max(lo, -100), min(hi, 100))
        rd = ROUND[dt]
        if r < 0.06: return 0.0
        if r < 0.11: return -0.0
        if r < 0.2: return self.rng.choice([0.5, 2.5, -2.5, 1.5, -0.5, 3.5])
        if r < 0.25: return self.rng.choice([-1.0, 1.0, 2.0])
        if r < 0.29: return math.nan
        if r < 0.34: return self.rng.choice([math.inf, -math.inf])
        if r < 0.38: return self.rng.choice([FMAX[dt], -FMAX[dt]])
        if r < 0.41: return FTINY[dt]
        if r < 0.6: return float(self.rng.randint(-50, 50))
        return rd(self.rng.uniform(-100, 100))

    def tensor(self, dt, n=None, d0=False):
        if d0:
            return {"t": dt, "v": self.value(dt), "d0": True}
        if n is None:
            n = self.rng.choice([0, 1, 2, 3, 3, 4, 4, 5])
        return {"t": dt, "v": [self.value(dt) for _ in range(n)]}

    def exponent_fix(self, case):
        """Keep most integer powers' exponents small (some stay negative)."""
        b = case["b"]
        if case["op"] == "**" and "t" in b and b["t"] in INTS + ["bool"]:
            lo, hi = irange(b["t"]) if b["t"] != "bool" else (0, 1)
            def small(v):
                return v if self.rng.random() < 0.2 else max(lo, min(hi, self.rng.randint(-2, 9)))
            b["v"] = small(b["v"]) if b.get("d0") else [small(v) for v in b["v"]]

    def case(self, system):
        r = self.rng.random()
        dts = DTYPES
        if r < 0.04:                         # MIN // -1 and zero divisors, in either order
            da = self.cycle("edge", ["i8", "i16", "i32", "i64", "i32", "i64"])
            db = da if self.rng.random() < 0.7 else self.rng.choice(INTS + ["bool"])
            op = self.rng.choice(["//", "%", "/", "//", "%"])
            n = self.rng.randint(1, 4)
            a = [self.value(da) for _ in range(n)]
            b = [self.rng.choice([1, 2, 3, 7]) for _ in range(n)]
            slots = self.rng.sample(range(n), min(n, self.rng.choice([1, 2])))
            for j, i in enumerate(slots):
                if j == 0 or self.rng.random() < 0.5:
                    a[i], b[i] = irange(da)[0], -1
                else:
                    b[i] = 0
            if db == "bool" or irange(db)[0] == 0:
                b = [max(v, 0) if db != "bool" else min(abs(v), 1) for v in b]
            ta = {"t": da, "v": a}
            form = self.rng.random()
            if form < 0.2 and -1 in b:
                return {"k": "bin", "op": op, "a": ta, "b": {"lit": -1}}
            if form < 0.35:
                return {"k": "bin", "op": op, "a": {"t": da, "v": a[0], "d0": True},
                        "b": {"t": db, "v": b[0], "d0": True}}
            return {"k": "bin", "op": op, "a": ta, "b": {"t": db, "v": b}}
        if r < 0.42:                         # tensor op tensor
            da, db = self.cycle("pair", [(a, b) for a in dts for b in dts])
            op = self.cycle("op", OPS)
            n = self.rng.choice([0, 1, 2, 3, 4, 5])
            na, nb = n, n
            if n and self.rng.random() < 0.2:
                if self.rng.random() < 0.5: na = 1
                else: nb = 1
            c = {"k": "bin", "op": op, "a": self.tensor(da, na), "b": self.tensor(db, nb)}
            self.exponent_fix(c)
            return c
        if r < 0.64:                         # tensor op weak literal, either side
            dt, lit, side = self.cycle("lit", [(d, l, s) for d in dts for l in LITERALS for s in "lr"])
            op = self.cycle("litop", OPS)
            t = self.tensor(dt, self.rng.choice([1, 2, 3]), d0=self.rng.random() < 0.15)
            return {"k": "bin", "op": op, "a": t, "b": {"lit": lit}} if side == "l" else \
                   {"k": "bin", "op": op, "a": {"lit": lit}, "b": t}
        if r < 0.74:                         # 0-d strong tensor against 1-d / 0-d
            da, db = self.cycle("pair0", [(a, b) for a in dts for b in dts])
            op = self.cycle("op0", OPS)
            both = self.rng.random() < 0.25
            a = self.tensor(da, self.rng.choice([1, 2, 3]), d0=both)
            b = self.tensor(db, d0=True)
            c = {"k": "bin", "op": op, "a": a, "b": b} if self.rng.random() < 0.5 else \
                {"k": "bin", "op": op, "a": b, "b": a}
            self.exponent_fix(c)
            return c
        if r < 0.84:                         # reductions
            dt = self.cycle("red", dts)
            return {"k": "red", "f": self.cycle("redf", REDS), "x": self.tensor(dt)}
        if r < 0.93:                         # indexing and take
            dt = self.rng.choice(dts)
            n = self.rng.choice([1, 2, 3, 4])
            x = self.tensor(dt, n)
            idx = lambda: self.rng.randint(-n - 2, n + 1)
            if self.rng.random() < 0.5:
                return {"k": "index", "x": x, "i": idx()}
            return {"k": "take", "x": x, "idx": [idx() for _ in range(self.rng.choice([1, 2, 3]))]}
        if r < 0.97:                         # matmul
            da = self.rng.choice(INTS + ["bool", "f32", "f64"])
            db = da if self.rng.random() < 0.7 else self.rng.choice(INTS + ["bool", "f32", "f64"])
            m, k, p = (self.rng.randint(1, 3) for _ in range(3))
            def mat(dt, rows, cols):
                return {"t": dt, "v": [[self.value(dt) if dt in INTS and self.rng.random() < 0.3
                                        else (self.rng.randint(-9, 9) if dt not in ("bool", "u8", "u16", "u32", "u64")
                                              else self.rng.randint(0, 1 if dt == "bool" else 9))
                                        for _ in range(cols)] for _ in range(rows)]}
            a, b = mat(da, m, k), mat(db, k, p)
            for o in (a, b):
                if o["t"] in FLOATS:
                    o["v"] = [[float(v) for v in row] for row in o["v"]]
            return {"k": "matmul", "a": a, "b": b}
        # bare list literals and float constructors: S's default dtypes
        r = self.rng.random()
        kind = self.rng.choice(["f", "i", "b"])
        vals = {"f": [self.rng.choice([1.5, -2.0, 0.5, 3.25]) for _ in range(2)],
                "i": [self.rng.randint(-5, 5) for _ in range(2)], "b": [True, False]}[kind]
        if r < 0.3:
            return {"k": "ctor", "f": self.rng.choice(["zeros", "ones"]), "n": self.rng.randint(1, 3)}
        if r < 0.5:
            return {"k": "bin", "op": "+", "a": {"list": vals}, "b": {"lit": self.rng.choice([1, 2.5])}}
        if r < 0.65:
            return {"k": "list", "x": {"list": vals}}
        dt = self.rng.choice(dts)
        return {"k": "bin", "op": self.rng.choice(["+", "*", "/"]), "a": {"list": vals}, "b": self.tensor(dt, 2)}


# ----------------------------------------------------------------------------
# tcalc spelling

def vtext(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def ltext(v):
    if isinstance(v, list):
        return "[" + ", ".join(ltext(x) for x in v) + "]"
    return vtext(v)


def otext(o):
    if "lit" in o:
        s = vtext(o["lit"])
        return "(%s)" % s if s.startswith("-") else s
    if "list" in o:
        return ltext(o["list"])
    return "%s(%s)" % (o["t"], ltext(o["v"]))


def stmt(c):
    k = c["k"]
    if k == "bin":
        return "%s %s %s" % (otext(c["a"]), c["op"], otext(c["b"]))
    if k == "red":
        return "%s(%s)" % (c["f"], otext(c["x"]))
    if k == "index":
        return "%s[%d]" % (otext(c["x"]), c["i"])
    if k == "take":
        return "take(%s, %s)" % (otext(c["x"]), ltext(c["idx"]))
    if k == "matmul":
        return "%s @ %s" % (otext(c["a"]), otext(c["b"]))
    if k == "ctor":
        return "%s(%d)" % (c["f"], c["n"])
    if k == "list":
        return otext(c["x"])
    raise ValueError(k)


def dtypes_of(c):
    return {o["t"] for key in ("a", "b", "x") for o in [c.get(key)] if o and "t" in o}


# ----------------------------------------------------------------------------
# Oracles.  Each returns {"ok":true,"dtype","shape","data" (flat, floats as
# Python floats),"warnings"} or {"ok":false,"code","msg"}.

def map_exception(e):
    m = str(e)
    n = type(e).__name__
    if isinstance(e, OverflowError) or "Overflow when unpacking long" in m or "without overflow" in m:
        return "literal_overflow"
    if isinstance(e, ZeroDivisionError) or "ZeroDivisionError" in m:
        return "division_by_zero"
    if "negative integer powers" in m:
        return "negative_exponent"
    if isinstance(e, IndexError):
        return "index_out_of_bounds"
    if ("boolean subtract" in m or n == "UFuncTypeError" or "did not contain a loop" in m
            or "not implemented for" in m or ("operator, with" in m and "not supported" in m)
            or "could not infer output dtype" in m or "not supported for the input types" in m
            or "expected scalar type" in m):
        return "dtype_unsupported"
    if isinstance(e, AttributeError) or "unsupported operand type" in m:
        return "op_unsupported"
    return "unmapped:%s: %s" % (n, m[:120])


def apply_op(op, a, b):
    if op == "+": return a + b
    if op == "-": return a - b
    if op == "*": return a * b
    if op == "/": return a / b
    if op == "//": return a // b
    if op == "%": return a % b
    if op == "**": return a ** b
    if op == "<": return a < b
    if op == "==": return a == b
    raise ValueError(op)


class NumpyOracle:
    name = "numpy"

    def __init__(self):
        import numpy as np
        self.np = np
        np._set_promotion_state("weak")
        self.D = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
                  "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
                  "f16": np.float16, "f32": np.float32, "f64": np.float64}
        self.N = {np.dtype(v): k for k, v in self.D.items()}
        self.version = "NumPy %s (NEP 50 weak promotion)" % np.__version__

    def operand(self, o):
        np = self.np
        if "lit" in o:
            return o["lit"]
        if "list" in o:
            return np.array(o["list"])
        return np.array(o["v"], self.D[o["t"]])

    def compute(self, c):
        np = self.np
        k = c["k"]
        if k == "bin":
            a, b = self.operand(c["a"]), self.operand(c["b"])
            op = c["op"]
            if op in ("<", "==") and self.wide_compare(a, b):
                x, lit, flip = (a, b, False) if isinstance(b, int) else (b, a, True)
                f = (lambda u, v: u < v) if op == "<" else (lambda u, v: u == v)
                vals = [f(lit, int(v)) if flip else f(int(v), lit) for v in x.ravel().tolist()]
                return np.array(vals, np.bool_).reshape(x.shape)
            if op == "**":   # not a ** b: ndarray.__pow__'s fast paths for an exponent of
                return np.power(a, b)   # 2 (square) ignore promotion (bool(1) ** 2 is i8)
            return apply_op(op, a, b)
        if k == "red":
            return {"sum": np.sum, "prod": np.prod, "mean": np.mean}[c["f"]](self.operand(c["x"]))
        if k == "index":
            return self.operand(c["x"])[c["i"]]
        if k == "take":
            return np.take(self.operand(c["x"]), np.array(c["idx"], np.int64), axis=0)
        if k == "matmul":
            return self.operand(c["a"]) @ self.operand(c["b"])
        if k == "ctor":
            return {"zeros": np.zeros, "ones": np.ones}[c["f"]](c["n"])
        if k == "list":
            return self.operand(c["x"])
        raise ValueError(k)

    def wide_compare(self, a, b):
        """NumPy 2 compares integer arrays with out-of-range Python ints exactly."""
        np = self.np
        for x, y in ((a, b), (b, a)):
            if isinstance(y, int) and not isinstance(y, bool) and isinstance(x, np.ndarray) \
                    and x.dtype.kind in "iu":
                info = np.iinfo(x.dtype)
                if not info.min <= y <= info.max:
                    return True
        return False

    def run(self, c):
        np = self.np
        if dtypes_of(c) & MISSING["numpy"]:
            return {"ok": False, "code": "dtype_unsupported", "msg": "NumPy has no bf16", "missing": True}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = np.asarray(self.compute(c))
            except Exception as e:
                return {"ok": False, "code": map_exception(e), "msg": "%s: %s" % (type(e).__name__, e)}
        ws = sorted({str(x.message) for x in w if issubclass(x.category, RuntimeWarning)})
        dt = self.N.get(r.dtype)
        if dt is None:
            return {"ok": False, "code": "unmapped:dtype %s" % r.dtype, "msg": str(r)}
        data = [bool(v) if dt == "bool" else int(v) if dt in INTS else float(v) for v in r.ravel().tolist()]
        return {"ok": True, "dtype": dt, "shape": list(r.shape), "data": data, "warnings": ws}


class TorchOracle:
    """The parent's side: a worker process, restarted when it dies."""
    name = "torch"

    def __init__(self, script):
        self.script = script
        self.proc = None
        self.restarts = 0
        self.start()
        self.version = "PyTorch " + self.call({"k": "version"})["version"]

    def start(self):
        self.proc = subprocess.Popen([sys.executable, self.script, "--worker", "torch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def call(self, c):
        self.proc.stdin.write(json.dumps(c) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            self.restarts += 1
            self.start()
            return {"ok": False, "code": "undefined_behavior", "msg": "the torch worker died (status %s)" % rc}
        return json.loads(line)

    def run(self, c):
        if dtypes_of(c) & MISSING["torch"]:
            return {"ok": False, "code": "dtype_unsupported", "msg": "PyTorch has no u16/u32/u64", "missing": True}
        return self.call(c)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def torch_worker():
    import torch
    torch.set_num_threads(1)
    D = {"bool": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
         "u8": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
         "f64": torch.float64}
    N = {v: k for k, v in D.items()}

    def operand(o):
        if "lit" in o:
            return o["lit"]
        if "list" in o:
            return torch.tensor(o["list"])
        return torch.tensor(o["v"], dtype=D[o["t"]])

    def compute(c):
        k = c["k"]
        if k == "bin":
            return apply_op(c["op"], operand(c["a"]), operand(c["b"]))
        if k == "red":
            return getattr(operand(c["x"]), c["f"])()
        if k == "index":
            return operand(c["x"])[c["i"]]
        if k == "take":
            return torch.take(operand(c["x"]), torch.tensor(c["idx"], dtype=torch.int64))
        if k == "matmul":
            return operand(c["a"]) @ operand(c["b"])
        if k == "ctor":
            return getattr(torch, c["f"])(c["n"])
        if k == "list":
            return operand(c["x"])
        raise ValueError(k)

    def run(c):
        try:
            r = compute(c)
        except Exception as e:
            return {"ok": False, "code": map_exception(e), "msg": "%s: %s" % (type(e).__name__, e)}
        dt = N.get(r.dtype)
        if dt is None:
            return {"ok": False, "code": "unmapped:dtype %s" % r.dtype, "msg": ""}
        flat = r.reshape(-1)
        if dt in FLOATS:
            flat = flat.to(torch.float64)
        data = flat.tolist()
        return {"ok": True, "dtype": dt, "shape": list(r.shape), "data": data, "warnings": []}

    def risky(c):
        """Integer // or % with a -1 among the divisors: may be SIGFPE."""
        if c["k"] != "bin" or c["op"] not in ("//", "%"):
            return False
        b = c["b"]
        vals = [b["lit"]] if "lit" in b else b["list"] if "list" in b else \
            [b["v"]] if b.get("d0") else b["v"]
        return -1 in vals

    def forked(c):
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            with os.fdopen(wr, "w") as f:
                f.write(json.dumps(run(c)))
            os._exit(0)
        os.close(wr)
        with os.fdopen(rd) as f:
            text = f.read()
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st):
            return {"ok": False, "code": "undefined_behavior",
                    "msg": "PyTorch died with signal %d (%s)" % (os.WTERMSIG(st), signal.Signals(os.WTERMSIG(st)).name)}
        return json.loads(text)

    for line in sys.stdin:
        c = json.loads(line)
        if c["k"] == "version":
            res = {"version": torch.__version__}
        else:
            res = forked(c) if risky(c) else run(c)
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


# ----------------------------------------------------------------------------
# Comparison and grouping

def tc_value(v, dt):
    if dt == "bool":
        return bool(v)
    if dt in INTS:
        return int(v)
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v.lower().replace("infinity", "inf")]
    return ROUND.get(dt, lambda x: x)(float(v))


def flatten(d):
    if isinstance(d, list):
        out = []
        for x in d:
            out.extend(flatten(x))
        return out
    return [d]


def same_float(x, y, dt, tol):
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if tol:
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= ULP_TOL * ulp(dt, y)
    return x == y and math.copysign(1, x) == math.copysign(1, y)


def opnd_sig(o):
    if "lit" in o:
        return "lit(%s)" % vtext(o["lit"])
    if "list" in o:
        return "list[%s]" % ("float" if any(isinstance(v, float) for v in o["list"]) else
                             "bool" if all(isinstance(v, bool) for v in o["list"]) else "int")
    return o["t"] + ("(0-d)" if o.get("d0") else "")


def subject(c):
    """A case's signature for grouping, and its operator (listed per group)."""
    k = c["k"]
    if k == "bin":
        a, b = c["a"], c["b"]
        kind = "literal" if "lit" in a or "lit" in b else "list-literal" if "list" in a or "list" in b \
            else "0-d" if a.get("d0") or b.get("d0") else "binary"
        return kind, "%s OP %s" % (opnd_sig(a), opnd_sig(b)), c["op"]
    if k == "red":
        return "reduction", "%s(%s)" % (c["f"], c["x"]["t"]), ""
    if k in ("index", "take"):
        return k, "%s of %s" % (k, c["x"]["t"]), ""
    if k == "matmul":
        return "matmul", "%s @ %s" % (c["a"]["t"], c["b"]["t"]), ""
    if k == "ctor":
        return "constructor", c["f"], ""
    return "list-literal", opnd_sig(c["x"]), ""


def short(res):
    if not res.get("ok"):
        return "error %s" % (res.get("code") or res.get("error", {}).get("code"))
    data = res["data"]
    if res["shape"] == [] and isinstance(data, list) and len(data) == 1:
        data = data[0]
    txt = json.dumps(data).replace("NaN", '"nan"').replace("-Infinity", '"-inf"').replace("Infinity", '"inf"')
    if len(txt) > 80:
        txt = txt[:77] + "..."
    w = (" warnings %s" % res["warnings"]) if res.get("warnings") else ""
    return "%s %s %s%s" % (res["dtype"], res["shape"], txt, w)


def compare(c, out, want, system):
    """None when tcalc's out matches the oracle's want, else (category, detail)."""
    if out.get("ok") and out.get("semantics") != system:
        return "semantics tag", "no \"semantics\":\"%s\"" % system
    if not want["ok"]:
        if out.get("ok"):
            return "no error", "tcalc answers, %s %s" % (system, want["code"])
        code = out.get("error", {}).get("code")
        if code != want["code"]:
            return "error code", "tcalc %s, %s %s" % (code, system, want["code"])
        return None
    if not out.get("ok"):
        return "error", "tcalc %s, %s %s" % (out.get("error", {}).get("code"), system, want["dtype"])
    if out["dtype"] != want["dtype"]:
        return "dtype", "tcalc %s, %s %s" % (out["dtype"], system, want["dtype"])
    if list(out["shape"]) != want["shape"]:
        return "shape", "tcalc %s, %s %s" % (out["shape"], system, want["shape"])
    dt = want["dtype"]
    got = [tc_value(v, dt) for v in flatten(out["data"])]
    if len(got) != len(want["data"]):
        return "values", "element count"
    if dt in FLOATS:
        # float matmul: BLAS sums in its own order (and may fuse multiply-adds)
        tol = (c["k"] == "bin" and c["op"] == "**") or c["k"] in ("red", "matmul")
        ok = all(same_float(x, y, dt, tol) for x, y in zip(got, want["data"]))
    else:
        ok = got == want["data"]
    if not ok:
        return "values", "differ"
    tw = sorted(set(out.get("warnings", [])))
    if tw != want["warnings"]:
        return "warnings", "tcalc %s, %s %s" % (tw, system, want["warnings"])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--system", choices=["numpy", "torch"])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--tcalc", default="build/tcalc")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--worker", choices=["torch"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return torch_worker()
    if not args.system:
        ap.error("--system is required")
    t0 = time.time()
    system = args.system
    gen = Gen(args.seed)
    cases = [gen.case(system) for _ in range(args.cases)]
    stmts = [stmt(c) for c in cases]
    p = subprocess.run([args.tcalc, "--json", "-k", "--semantics", system],
                       input="\n".join(stmts) + "\n", capture_output=True, text=True)
    outs = []
    for line in p.stdout.splitlines():
        try:
            outs.append(json.loads(line))
        except ValueError:
            outs.append({"ok": False, "error": {"code": "bad-json: " + line[:60]}})
    if len(outs) != len(cases):
        print("semantics %s: FAIL: tcalc gave %d results for %d statements (exit %d): %s"
              % (system, len(outs), len(cases), p.returncode, p.stderr[-400:]))
        return 1
    oracle = NumpyOracle() if system == "numpy" else TorchOracle(os.path.abspath(__file__))
    groups = {}
    nfail = nskip = 0
    for c, s, out in zip(cases, stmts, outs):
        want = oracle.run(c)
        if system == "torch" and oracle.version.startswith("PyTorch 1.") and not want["ok"] and \
                ("for 'Half'" in want.get("msg", "") or "for 'BFloat16'" in want.get("msg", "")):
            nskip += 1
            continue
        diff = compare(c, out, want, system)
        if diff is None:
            continue
        nfail += 1
        kind, subj, op = subject(c)
        cat, detail = diff
        if want.get("missing") and out.get("ok"):
            kind, detail = "any", "tcalc answers, %s has no %s (dtype_unsupported)" % (
                system, "/".join(sorted(dtypes_of(c) & MISSING[system])))
        g = groups.setdefault((cat, kind, detail), {"n": 0, "members": {}, "ex": (s, out, want)})
        g["n"] += 1
        g["members"].setdefault(subj, set()).add(op)
        if args.verbose:
            print("FAIL %s\n     tcalc: %s\n     %s: %s%s" % (s, short(out), system, short(want),
                                                            "  (%s)" % want["msg"] if want.get("msg") else ""))
    if hasattr(oracle, "close"):
        oracle.close()
    cats = ["error", "no error", "error code", "dtype", "shape", "values", "warnings", "semantics tag"]
    order = sorted(groups.items(), key=lambda kv: (cats.index(kv[0][0]), kv[0][1], -kv[1]["n"], kv[0][2]))
    for (cat, kind, detail), g in order:
        mem = sorted(g["members"].items(), key=lambda m: (-len(m[1]), m[0]))
        def mtext(m):
            subj, ops = m
            ops = [o for o in OPS if o in ops]
            return subj.replace("OP", "{%s}" % " ".join(ops) if len(ops) > 1 else ops[0]) if ops else subj
        shown = ", ".join(mtext(m) for m in mem[:12]) + (", ... (%d more)" % (len(mem) - 12) if len(mem) > 12 else "")
        s, out, want = g["ex"]
        print("%s / %s%s (%d case%s)" % (cat, kind, ": " + detail if detail else "", g["n"], "" if g["n"] == 1 else "s"))
        print("    in: %s" % shown)
        print("    e.g. %s\n         tcalc: %s\n         %s: %s%s"
              % (s, short(out), system, short(want), "  (%s)" % want["msg"] if want.get("msg") else ""))
    extra = (", %d worker restart(s)" % oracle.restarts) if getattr(oracle, "restarts", 0) else ""
    skipped = (", %d skipped: PyTorch 1.x lacks the f16/bf16 kernel" % nskip) if nskip else ""
    print("semantics %s vs %s: %d cases, %d failures in %d groups%s (%s, seed %d, %.1f s%s)"
          % (system, system, len(cases), nfail, len(groups), skipped, oracle.version, args.seed,
             time.time() - t0, extra))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
