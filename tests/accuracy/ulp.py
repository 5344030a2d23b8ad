#!/usr/bin/env python3
"""Differential accuracy test of tcalc's f32/f64 math functions against
mpmath at 160 bits.

usage: ulp.py TCALC [--full] [--seed N]

Inputs per dtype: special values (0, -0, inf, NaN, the smallest and
largest subnormals and normals, the edges of each function's domain and
overflow), random bit patterns over every finite value, and random values
in the ranges where each function does its work. tcalc computes each
function of each input vector (load, save as .npy); every result is
compared with the exact value: the error in ulps of the exact value's
binade (subnormal spacing below the normal range). A result must be within
1.0 ulp, and special values (NaN, inf, the sign of zero where the exact
result is zero) must match exactly. The sample (default) is a few thousand
inputs per function and dtype; --full is about 50 times as many.
pow and atan2 are checked on pairs: special values against each other
(C99's table, taken from the C library), random bit patterns, and ranges
where they do their work.
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

import mpmath

mpmath.mp.prec = 160

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
TCALC = ARGS[0] if ARGS else "build/tcalc"
FULL = "--full" in sys.argv
SEED = 17
for a in sys.argv[1:]:
    if a.startswith("--seed="):
        SEED = int(a.split("=")[1])
RANDOM_BITS = 2000 * (50 if FULL else 1)   # random bit patterns per dtype
RANDOM_RANGE = 300 * (50 if FULL else 1)   # random values per range per function

# dtype: (struct code, significand bits p, min exponent, max exponent)
DT = {"f32": ("f", 24, -126, 127), "f64": ("d", 53, -1022, 1023)}


def from_bits(dt, u):
    code = DT[dt][0]
    return struct.unpack("<" + code, struct.pack("<" + ("I" if code == "f" else "Q"), u))[0]


def to_dt(dt, x):
    """x rounded to dt (f32 values beyond its range become inf)."""
    if dt == "f64" or not math.isfinite(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def mp_rsqrt(x): return 1 / mpmath.sqrt(x)


# sin, cos and tan: every argument range, small to huge (backend/cpu/vtrig.c
# reduces |x| up to 2^30 one way, above it with 2/pi's bits: +-2^31 straddles
# the bound)
TRIG_RANGES = [(-1, 1), (-10, 10), (-100, 100), (-1e4, 1e4), (-1e6, 1e6), (-2.0 ** 31, 2.0 ** 31), (-1e22, 1e22),
               (-1e300, 1e300)]

# name: (mpmath function, domain test on the exact input, ranges of interest)
FUNCS = {
    "exp": (mpmath.exp, None, [(-750, 750), (-105, 90), (-1, 1)]),
    "expm1": (mpmath.expm1, None, [(-40, 710), (-1e-5, 1e-5), (-1, 1), (-95, 95), (-0.4, 0.4)]),
    "log": (mpmath.log, "pos", [(0, 10), (0.5, 2), (0.96, 1.07), (0.7, 0.76), (1.4, 1.5)]),
    "log2": (mpmath.log2 if hasattr(mpmath, "log2") else (lambda x: mpmath.log(x, 2)), "pos",
             [(0, 10), (0.5, 2), (0.96, 1.07), (0.7, 0.76), (1.4, 1.5)]),
    "log10": (mpmath.log10, "pos", [(0, 10), (0.5, 2), (0.96, 1.07), (0.7, 0.76), (1.4, 1.5)]),
    "log1p": (mpmath.log1p, "gt-1", [(-1, 1), (-1e-5, 1e-5), (0, 1e6), (-0.02, 0.04), (-1e-15, 1e-15),
                                     (1e307, 1.7e308), (-4e-9, 4e-9)]),
    "sqrt": (mpmath.sqrt, "nonneg", [(0, 10)]),
    "rsqrt": (mp_rsqrt, "pos", [(0, 10), (1e-300, 1e-290)]),
    "cbrt": (lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), None, [(-10, 10), (-1e-3, 1e-3), (-1e6, 1e6)]),
    "sin": (mpmath.sin, None, TRIG_RANGES),
    "cos": (mpmath.cos, None, TRIG_RANGES),
    "tan": (mpmath.tan, None, TRIG_RANGES),
    "asin": (mpmath.asin, "unit", [(-1, 1), (0.45, 0.55), (-0.55, -0.45), (0.999, 1), (-1, -0.999)]),
    "acos": (mpmath.acos, "unit", [(-1, 1), (0.45, 0.55), (-0.55, -0.45), (0.999, 1), (-1, -0.999)]),
    "atan": (mpmath.atan, None, [(-10, 10), (-1e10, 1e10), (-1.1, -0.9), (0.02, 0.05), (25, 40), (0.35, 0.5),
                                 (2, 3)]),
    "sinh": (mpmath.sinh, None, [(-5, 5), (-712, 712), (-90, 90), (-0.5, 0.5), (85, 101)]),
    "cosh": (mpmath.cosh, None, [(-5, 5), (-712, 712), (-90, 90), (-0.5, 0.5), (-101, -85)]),
    "tanh": (mpmath.tanh, None, [(-5, 5), (-20, 20), (-0.01, 0.01), (-0.4, 0.4), (8.5, 10)]),
    "erf": (mpmath.erf, None, [(-6, 6), (-0.01, 0.01)]),
    "sigmoid": (lambda x: 1 / (1 + mpmath.exp(-x)), None, [(-5, 5), (-120, 120), (-750, 40), (-0.01, 0.01)]),
}


def special_values(dt):
    _, p, emin, emax = DT[dt]
    tiny = 2.0 ** (emin - p + 1)
    big = (2 - 2.0 ** (1 - p)) * 2.0 ** emax
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 2.0, tiny, -tiny,
            2.0 ** emin - tiny, 2.0 ** emin, -2.0 ** emin, big, -big, math.pi, -math.pi, math.pi / 2,
            math.pi / 4, 1e-8, -1e-8, 3.0, 10.0, 100.0, 1e10, 1e22, 5.319372648326541e+255, -1e300,
            0.9999999, -0.9999999, 1.0000001, 709.0, 709.78, 709.79, 710.0, 710.47, 710.48, -709.5, -710.47,
            -745.1, -745.2, -708.4, 88.0, 88.7, 88.73, 89.0, 89.4, 89.42, -88.0, -89.4, -103.9, -87.3,
            6.0, -6.0, 5.9, 0.25, 1e-300, 1e-310]
    return [to_dt(dt, v) for v in vals]


def inputs(dt, name, rng):
    xs = special_values(dt)
    nbits = 32 if dt == "f32" else 64
    for _ in range(RANDOM_BITS):
        v = from_bits(dt, rng.getrandbits(nbits))
        if math.isfinite(v):
            xs.append(v)
    for _ in range(RANDOM_BITS // 20):   # subnormals, and tiny values around them
        v = from_bits(dt, rng.getrandbits(nbits - 9 if dt == "f32" else nbits - 12) | (rng.getrandbits(1) << (nbits - 1)))
        xs.append(v)
        xs.append(to_dt(dt, math.copysign(2.0 ** rng.uniform(-149 if dt == "f32" else -1074, -10), rng.random() - 0.5)))
    for lo, hi in FUNCS[name][2]:
        for _ in range(RANDOM_RANGE):
            xs.append(to_dt(dt, rng.uniform(lo, hi)))
    if name in ("sin", "cos", "tan"):
        xs += trig_hard(dt, rng)
    return xs


def trig_hard(dt, rng):
    """The dtype's numbers nearest k pi/2 (the reduction's cancellation) for k
    up to some 10^6, 2^30 and 10^15, and magnitudes spread evenly over every
    exponent of the dtype (most of them huge)."""
    _, p, emin, emax = DT[dt]
    xs = []
    for top in (10 ** 6, 2 ** 30, 10 ** 15):
        for _ in range(RANDOM_RANGE // 3):
            x = to_dt(dt, float(rng.randint(1, top) * mpmath.pi / 2))
            xs += [x, -x]
    for _ in range(RANDOM_RANGE):
        xs.append(to_dt(dt, math.ldexp(rng.uniform(1, 2), rng.randint(emin, emax)) * rng.choice((1, -1))))
    return xs


def write_npy(path, dt, xs):
    code = DT[dt][0]
    hdr = "{'descr': '<%s', 'fortran_order': False, 'shape': (%d,), }" % ("f4" if code == "f" else "f8", len(xs))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(xs), code), *xs))


def read_npy(path, dt):
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    code = DT[dt][0]
    n = len(body) // struct.calcsize(code)
    return list(struct.unpack("<%d%s" % (n, code), body))


# functions with f(-0) = -0: an exact zero result takes the sign of x
ODD = {"sin", "tan", "asin", "atan", "sinh", "tanh", "erf", "expm1", "log1p", "cbrt", "sqrt"}


def ulp_error(dt, got, x, name):
    """The error of got in ulps, or None when it is right exactly; inf when a
    special value is wrong."""
    _, p, emin, emax = DT[dt]
    fn, domain, _ = FUNCS[name]
    if math.isnan(x):
        return None if math.isnan(got) else math.inf
    if domain == "pos" and x < 0 or domain == "nonneg" and x < 0 and x != 0 or \
       domain == "unit" and abs(x) > 1 or domain == "gt-1" and x < -1:
        return None if math.isnan(got) else math.inf
    try:
        ref = fn(mpmath.mpf(x))
    except (ValueError, ZeroDivisionError):
        return None if math.isnan(got) or math.isinf(got) else math.inf
    if isinstance(ref, mpmath.mpc) or mpmath.isnan(ref):
        return None if math.isnan(got) else math.inf
    return ref_error(dt, got, ref, math.copysign(1, x) if name in ODD else 1.0)


def ref_error(dt, got, ref, zero_sign):
    """The error of got in ulps against the exact value ref (an mpf, inf
    or 0), None when right exactly; an exact zero must have zero_sign."""
    _, p, emin, emax = DT[dt]
    if mpmath.isinf(ref):
        return None if got == float(ref) else math.inf
    if ref == 0:
        return None if got == 0 and math.copysign(1, got) == zero_sign else math.inf
    if math.isnan(got):
        return math.inf
    e = int(mpmath.floor(mpmath.log(abs(ref), 2)))
    if abs(ref) >= mpmath.mpf(2) ** e * 2:  # log rounding
        e += 1
    if abs(ref) < mpmath.mpf(2) ** e:
        e -= 1
    e = max(e, emin)
    ulp = mpmath.mpf(2) ** (e - p + 1)
    if e > emax:   # the exact value is beyond the largest finite one
        big = (2 - 2.0 ** (1 - p)) * 2.0 ** emax
        if math.isinf(got) and (got > 0) == (ref > 0):
            return None
        ulp = mpmath.mpf(2) ** (emax - p + 1)
        return float(abs(mpmath.mpf(got) - ref) / ulp) if math.isfinite(got) and abs(got) == big else math.inf
    if math.isinf(got):
        return float(abs(mpmath.mpf(2) ** (emax + 1) * (1 if got > 0 else -1) - ref) / ulp)
    return float(abs(mpmath.mpf(got) - ref) / ulp)


# pow(x, y): pairs of special values, random bit patterns, and ranges where
# the result is finite; the reference is mpmath's x ** y for finite nonzero
# x (NaN for x < 0 and y not an integer), and C99's table (the C library's
# pow, through ctypes) for zeros, infinities and NaN.
def pow_inputs(dt, rng):
    sp = [to_dt(dt, v) for v in [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
                                 -3.0, 0.25, 1e-3, 10.0, -10.0, 1e10, 1e-10, 1.5, -1.5, 1e300, 1e-300, 1e-310]]
    pairs = [(x, y) for x in sp for y in sp]
    nbits = 32 if dt == "f32" else 64
    n = RANDOM_BITS // 2
    for _ in range(n):
        x, y = from_bits(dt, rng.getrandbits(nbits - 1)), from_bits(dt, rng.getrandbits(nbits))
        if math.isfinite(x) and math.isfinite(y):
            pairs.append((x, y))
    big = 38 if dt == "f32" else 300
    for _ in range(n):
        x = to_dt(dt, 10 ** rng.uniform(-big / 4, big / 4))
        pairs.append((x, to_dt(dt, rng.uniform(-big, big) / max(abs(math.log10(x)), 1))))
        pairs.append((to_dt(dt, rng.uniform(0, 10)), to_dt(dt, rng.uniform(-40, 40))))
        pairs.append((to_dt(dt, 1 + rng.uniform(-1e-3, 1e-3)), to_dt(dt, rng.uniform(-1e5, 1e5))))
        pairs.append((to_dt(dt, -rng.uniform(0.1, 100)), float(rng.randint(-60, 60))))
    # results in the top binade and below the normal range
    _, p, emin, emax = DT[dt]
    top = (2 - 2.0 ** (1 - p)) * 2.0 ** emax
    pairs += [(top, 1.0), (-top, 1.0), (top, to_dt(dt, 0.9999999)), (2.0 ** emin, 1.0), (2.0 ** (emin - p + 1), 1.0)]
    for _ in range(n // 4):
        y = to_dt(dt, rng.uniform(1, 60))
        pairs.append((to_dt(dt, math.exp((math.log(top) - rng.uniform(0, 1e-4)) / y)), y))
        pairs.append((to_dt(dt, math.exp((emin - rng.uniform(0, p)) * math.log(2) / y)), y))
        # y log x on each side of the f64 kernel's bounds (-660 and 708, and
        # between them), and x about the smallest normal
        t = rng.choice([rng.uniform(700, 712), rng.uniform(-712, -650)]) * (1 if dt == "f64" else 0.125)
        pairs.append((to_dt(dt, math.exp(t / y)), y))
        pairs.append((to_dt(dt, 2.0 ** emin * rng.uniform(0.5, 2)), to_dt(dt, rng.uniform(-0.7, 0.7))))
    return pairs


def c_libm(name):
    """The C library's double function name(double, double), through ctypes."""
    import ctypes
    import ctypes.util
    f = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_double, ctypes.c_double]
    return f


def pow_error(dt, got, x, y, cpow):
    if not (math.isfinite(x) and math.isfinite(y)) or x == 0 or math.isnan(x) or math.isnan(y):
        want = cpow(x, y)   # the C99 table: exact in both dtypes
        if math.isnan(want):
            return None if math.isnan(got) else math.inf
        return None if got == want and math.copysign(1, got) == math.copysign(1, want) else math.inf
    if x < 0 and y != math.floor(y):
        return None if math.isnan(got) else math.inf
    ref = mpmath.power(abs(mpmath.mpf(x)), mpmath.mpf(y))
    neg = x < 0 and int(y) % 2 == 1
    return ref_error(dt, got, -ref if neg else ref, -1.0 if neg else 1.0)


# atan2(y, x): pairs of special values (zeros, infinities and NaN against
# each other and against finite values: C99's table, taken from the C
# library, where the result is a zero, and the exact multiple of pi/4
# otherwise), random bit patterns, and ranges: near the axes and the
# diagonals, and results that underflow.
def atan2_inputs(dt, rng):
    sp = [to_dt(dt, v) for v in [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -3.0, 1e-30, 1e30, 1e-310,
                                 -1e300]]
    pairs = [(y, x) for y in sp for x in sp]
    nbits = 32 if dt == "f32" else 64
    n = RANDOM_BITS // 2
    for _ in range(n):
        y, x = from_bits(dt, rng.getrandbits(nbits)), from_bits(dt, rng.getrandbits(nbits))
        if math.isfinite(x) and math.isfinite(y):
            pairs.append((y, x))
    big = 38 if dt == "f32" else 300
    for _ in range(n):
        pairs.append((to_dt(dt, rng.uniform(-10, 10)), to_dt(dt, rng.uniform(-10, 10))))
        x = to_dt(dt, rng.uniform(-100, 100))
        pairs.append((to_dt(dt, x * (1 + rng.uniform(-1e-3, 1e-3)) * rng.choice([1, -1])), x))
        pairs.append((to_dt(dt, rng.uniform(-1e-3, 1e-3) * x), x))
        pairs.append((to_dt(dt, 10 ** rng.uniform(-big, -big / 2)), to_dt(dt, rng.choice([1, -1]) * 10 ** rng.uniform(big / 2, big))))
        # about the f64 kernel's bounds: the smaller magnitude near 2^-969,
        # the larger near 2^1020
        pairs.append((to_dt(dt, 2.0 ** -969 * rng.uniform(0.5, 2)), to_dt(dt, rng.uniform(-1, 1) * 2.0 ** rng.uniform(-969, 0))))
        pairs.append((to_dt(dt, rng.choice([1, -1]) * 2.0 ** 1020 * rng.uniform(0.5, 2)), to_dt(dt, rng.uniform(-1, 1) * 1e300)))
    return pairs


def atan2_error(dt, got, y, x, catan2):
    if math.isnan(x) or math.isnan(y):
        return None if math.isnan(got) else math.inf
    if math.isinf(x) or math.isinf(y) or x == 0 or y == 0:
        want = catan2(y, x)
        if want == 0:
            return None if got == 0 and math.copysign(1, got) == math.copysign(1, want) else math.inf
        ref = round(want / (math.pi / 4)) * mpmath.pi / 4
    else:
        ref = mpmath.atan2(mpmath.mpf(y), mpmath.mpf(x))
    return ref_error(dt, got, ref, math.copysign(1, y))


PAIRS = {"pow": (pow_inputs, pow_error), "atan2": (atan2_inputs, atan2_error)}


def main():
    rng = random.Random(SEED)
    tmp = tempfile.mkdtemp(prefix="tcalc-ulp-")
    script = []
    cases = {}
    for name in FUNCS:
        for dt in DT:
            xs = inputs(dt, name, rng)
            cases[(name, dt)] = xs
            xp = os.path.join(tmp, "x_%s_%s.npy" % (name, dt))
            write_npy(xp, dt, xs)
            script.append('save("%s", %s(load("%s")))' % (os.path.join(tmp, "y_%s_%s.npy" % (name, dt)), name, xp))
    for name, (gen, _) in PAIRS.items():
        for dt in DT:
            pairs = gen(dt, rng)
            cases[(name, dt)] = pairs
            xp, yp = [os.path.join(tmp, "%s_%s_%s.npy" % (v, name, dt)) for v in "ab"]
            write_npy(xp, dt, [a for a, _ in pairs])
            write_npy(yp, dt, [b for _, b in pairs])
            script.append('save("%s", %s(load("%s"), load("%s")))' % (os.path.join(tmp, "y_%s_%s.npy" % (name, dt)), name,
                                                                   xp, yp))
    p = subprocess.run([TCALC], input="\n".join(script) + "\n", capture_output=True, text=True)
    if p.returncode != 0 or p.stderr.strip():
        sys.exit("ulp: tcalc failed: %s %s" % (p.stdout[-400:], p.stderr[-400:]))
    worst_all = 0.0
    bad = []
    cfn = {name: c_libm(name) for name in PAIRS}
    print("%-7s %-4s %8s %10s  %s" % ("func", "type", "inputs", "max ulp", "worst input"))
    for (name, dt), xs in cases.items():
        ys = read_npy(os.path.join(tmp, "y_%s_%s.npy" % (name, dt)), dt)
        if len(ys) != len(xs):
            sys.exit("ulp: %s %s: %d results for %d inputs" % (name, dt, len(ys), len(xs)))
        worst, wx, wy = 0.0, None, None
        for x, y in zip(xs, ys):
            err = PAIRS[name][1](dt, y, x[0], x[1], cfn[name]) if name in PAIRS else ulp_error(dt, y, x, name)
            if err is not None and err > worst:
                worst, wx, wy = err, x, y
        worst_all = max(worst_all, worst)
        print("%-7s %-4s %8d %10.3f  %s" % (name, dt, len(xs), worst,
                                            "" if wx is None else "%r -> %r" % (wx, wy)))
        if worst > 1.0:
            bad.append("%s %s: %.3f ulp at %r (got %r)" % (name, dt, worst, wx, wy))
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    if bad:
        print("ulp: over 1.0 ulp:\n  " + "\n  ".join(bad))
        sys.exit(1)
    print("ulp: every function within %.3f ulp (limit 1.0)" % worst_all)


main()
