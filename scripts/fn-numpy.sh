#!/bin/sh
# Differential test of the everyday functions of SPEC 12 (scans, sorting,
# counting, statistics, comparison, building, ML helpers) against NumPy 1.24
# (and round(x, decimals)) on random inputs (fixed seed) in i32, i64, f32 and f64, with NaN, -0.0 and
# ties mixed into the floats. Exact for integers, orders, counts and
# selections (sort, argsort both ways: stable, NaN last ascending and first
# descending, also on rows of 200 000 that take the sort's split into groups;
# unique; searchsorted; topk; median/quantile's chosen elements; the
# dtypes of median, quantile and percentile for each method; the nan forms
# of the statistics, scans and reduce_prod, with slices of NaN alone);
# sums and transcendentals within 1e-12 (f64) or 2e-5 (f32) of the largest
# expected magnitude. NumPy is looked for in $PYTHON (default
# /usr/bin/python3); without it the check is skipped, saying so, except under
# CI=true, where it fails. Usage: scripts/fn-numpy.sh path/to/tcalc
set -u
label="everyday functions vs numpy"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
"$py" - "$bin" "$tmp" "$(cd "$(dirname "$0")" && pwd)" <<'PYEOF'
import math, os, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")

tcalc, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from numpy_check import Files, as_array, run_all, within
arg = Files(tmp).arg
rng = np.random.default_rng(20261130)
stmts, expect = [], []
exact_dtype = set()   # the statements whose dtype must be NumPy's exactly

def add(stmt, want, tol, what):
    stmts.append(stmt)
    expect.append((np.asarray(want), tol, what))

def close(got, want, tol, zeros=True):
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    if got.dtype.kind != want.dtype.kind and not (got.dtype.kind in "iu" and want.dtype.kind in "iu"):
        return False, "dtype %s, want %s" % (got.dtype, want.dtype)
    if got.size == 0:
        return True, ""
    if tol == 0 or want.dtype.kind in "biu":
        ok = np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
        if ok and zeros and want.dtype.kind == "f":   # -0.0 and 0.0 too
            ok = np.array_equal(np.signbit(got), np.signbit(want))
        return ok, "" if ok else "values differ:\n got  %s\n want %s" % (got.ravel()[:12], want.ravel()[:12])
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w)
    if not np.array_equal(np.isnan(g), nan):
        return False, "NaNs differ"
    g, w = g[~nan], w[~nan]
    inf = np.isinf(w)
    if not np.array_equal(g[inf], w[inf]) or not np.array_equal(np.isinf(g), inf):
        return False, "infinities differ"
    g, w = g[~inf], w[~inf]
    return within(g, w, tol)

def data(dt, shape, specials=True):
    if np.dtype(dt).kind == "i":
        return rng.integers(-20, 20, shape).astype(dt)
    a = np.round(rng.standard_normal(shape) * 8, 1).astype(dt)   # ties
    if specials and a.size > 4:
        f = a.reshape(-1)
        for v in (np.nan, -0.0, 0.0, np.nan):
            f[rng.integers(0, f.size)] = v
    return a

def tol_of(dt):
    return 1e-12 if dt == np.float64 else 2e-5

def desc_order(a):
    """Stable descending order, NaN first, -0.0 == 0.0 (Python's sort is stable)."""
    return sorted(range(len(a)), key=lambda i: (0 if math.isnan(a[i]) else 1, -float(a[i])))

DTS = [np.int32, np.int64, np.float32, np.float64]
for dt in DTS:
    flt = np.dtype(dt).kind == "f"
    name = np.dtype(dt).name
    for shape in [(1,), (37,), (1000,), (5, 7), (3, 4, 6)]:
        x = data(dt, shape)
        X = arg(x)
        xs = "%s %s" % (name, shape)
        # scans
        for ax in [None] + list(range(-1, len(shape))):
            a = "" if ax is None else ", axis=%d" % ax
            add("cumsum(%s%s)" % (X, a), np.cumsum(x, axis=ax).astype(dt), tol_of(dt) if flt else 0, "cumsum " + xs + a)
            add("cummax(%s%s)" % (X, a), np.maximum.accumulate(x.ravel() if ax is None else x, axis=0 if ax is None else ax), 0, "cummax " + xs + a)
            add("cummin(%s%s)" % (X, a), np.minimum.accumulate(x.ravel() if ax is None else x, axis=0 if ax is None else ax), 0, "cummin " + xs + a)
        small = (x % 3 if not flt else np.where(np.isnan(x), x, np.round(x / 8, 0))).astype(dt)
        add("cumprod(%s, axis=-1)" % arg(small), np.cumprod(small, axis=-1).astype(dt), tol_of(dt) if flt else 0, "cumprod " + xs)
        for n in (1, 2):
            add("diff(%s, n=%d)" % (X, n), np.diff(x, n=n), 0, "diff %s n=%d" % (xs, n))
        # sorting
        for ax in range(-1, len(shape)):
            add("sort(%s, axis=%d)" % (X, ax), np.sort(x, axis=ax, kind="stable"), 0, "sort %s axis %d" % (xs, ax))
            add("argsort(%s, axis=%d)" % (X, ax), np.argsort(x, axis=ax, kind="stable"), 0, "argsort %s axis %d" % (xs, ax))
        if len(shape) == 1:
            o = desc_order(list(x))
            add("argsort(%s, descending=true)" % X, np.array(o, dtype=np.int64), 0, "argsort descending " + xs)
            add("sort(%s, descending=true)" % X, x[o], 0, "sort descending " + xs)
            k = min(5, shape[0])
            add("topk(%s, %d)" % (X, k), x[o[:k]], 0, "topk " + xs)
            add("argtopk(%s, %d)" % (X, k), np.array(o[:k], dtype=np.int64), 0, "argtopk " + xs)
            s = np.sort(x)
            v = data(dt, (50,))
            for side in ("left", "right"):
                add('searchsorted(%s, %s, side="%s")' % (arg(s), arg(v), side), np.searchsorted(s, v, side=side), 0,
                    "searchsorted %s %s" % (xs, side))
        u, cnt = np.unique(x, return_counts=True)
        add("unique(%s)" % X, u, 0, "unique " + xs)
        add("unique_counts(%s)" % X, cnt.astype(np.int64), 0, "unique_counts " + xs)
        # counting
        add("argwhere(%s)" % X, np.argwhere(x), 0, "argwhere " + xs)
        add("count_nonzero(%s)" % X, np.count_nonzero(x), 0, "count_nonzero " + xs)
        if not flt:
            b = np.abs(x.ravel())
            add("bincount(%s, minlength=30)" % arg(b), np.bincount(b, minlength=30), 0, "bincount " + xs)
        fin = data(dt, shape, specials=False)
        for bins in (1, 7, 10):
            add("histogram(%s, bins=%d)" % (arg(fin), bins), np.histogram(fin, bins=bins)[0], 0, "histogram %s bins %d" % (xs, bins))
        add("histogram(%s, bins=5, lo=-3, hi=4.5)" % arg(fin), np.histogram(fin, bins=5, range=(-3, 4.5))[0], 0, "histogram range " + xs)
        # statistics (finite data; NaN rows are checked in the golden tests)
        F = arg(fin)
        for ax in [None] + list(range(-1, len(shape))):
            a = "" if ax is None else ", axis=%d" % ax
            n = fin.size if ax is None else shape[ax]
            for ddof in (0, 1):
                if ddof < n:
                    add("var(%s%s, ddof=%d)" % (F, a, ddof), np.var(fin, axis=ax, ddof=ddof), tol_of(dt) * 10, "var %s%s ddof %d" % (xs, a, ddof))
                    add("std(%s%s, ddof=%d)" % (F, a, ddof), np.std(fin, axis=ax, ddof=ddof), tol_of(dt) * 10, "std %s%s ddof %d" % (xs, a, ddof))
            # NumPy's dtypes too: the selecting methods keep x's, the others give f64
            exact_dtype.add(len(stmts))
            add("median(%s%s)" % (F, a), np.median(fin, axis=ax), tol_of(dt), "median %s%s" % (xs, a))
            for m in ("linear", "lower", "higher", "nearest", "midpoint"):
                q = [0.0, 0.1, 0.5, 0.73, 1.0]
                exact_dtype.add(len(stmts))
                add('quantile(%s, %s%s, method="%s")' % (F, q, a, m), np.quantile(fin, q, axis=ax, method=m), tol_of(dt),
                    "quantile %s%s %s" % (xs, a, m))
            exact_dtype.add(len(stmts))
            add("percentile(%s, [25, 50]%s)" % (F, a), np.percentile(fin, [25, 50], axis=ax), tol_of(dt), "percentile %s%s" % (xs, a))
            exact_dtype.add(len(stmts))
            add('percentile(%s, [25, 50]%s, method="nearest")' % (F, a), np.percentile(fin, [25, 50], axis=ax, method="nearest"),
                0, "percentile nearest %s%s" % (xs, a))
        for f, nf in (("nansum", np.nansum), ("nanmean", np.nanmean), ("nanmax", np.nanmax), ("nanmin", np.nanmin),
                      ("nanargmax", np.nanargmax), ("nanargmin", np.nanargmin)):
            ax = len(shape) - 1
            ok_rows = not flt or not np.isnan(x).all(axis=ax).any()
            if ok_rows:
                want = nf(x, axis=ax)
                if f == "nanmean" and not flt:
                    want = want.astype(np.float64)
                add("%s(%s, axis=%d)" % (f, X, ax), want, tol_of(dt) if f in ("nansum", "nanmean") and flt else 0, "%s %s" % (f, xs))
        # the other nan forms, on x with NaN and (floats) a slice of NaN
        # alone along the last axis; an axis list too
        xn = x.copy()
        if flt and len(shape) > 1:
            xn[(0,) * (len(shape) - 1)] = np.nan
        XN = arg(xn)
        for ax in [None] + list(range(-1, len(shape))) + ([[0, -1]] if len(shape) > 2 else []):
            a = "" if ax is None else ", axis=%s" % ax
            npax = tuple(ax) if isinstance(ax, list) else ax
            n = xn.size if ax is None else int(np.prod([shape[i] for i in np.atleast_1d(ax)]))
            exact_dtype.add(len(stmts))
            add("nanmedian(%s%s)" % (XN, a), np.nanmedian(xn, axis=npax), tol_of(dt), "nanmedian %s%s" % (xs, a))
            # NumPy applies its 1-D function along an axis and takes the
            # dtype of the first slice's answer: x's when that slice is NaN
            # alone, else f64 for linear and midpoint (as tcalc, always)
            f64 = lambda w: w.astype(np.float64) if w.dtype.kind == "f" else w
            for m in ("linear", "lower", "higher", "nearest", "midpoint"):
                q = [0.0, 0.1, 0.5, 0.73, 1.0]
                sel = m in ("lower", "higher", "nearest")
                exact_dtype.add(len(stmts))
                want = np.nanquantile(xn, q, axis=npax, method=m)
                add('nanquantile(%s, %s%s, method="%s")' % (XN, q, a, m), want if sel else f64(want), 0 if sel else tol_of(dt),
                    "nanquantile %s%s %s" % (xs, a, m))
            exact_dtype.add(len(stmts))
            add("nanpercentile(%s, [25, 50]%s)" % (XN, a), f64(np.nanpercentile(xn, [25, 50], axis=npax)), tol_of(dt),
                "nanpercentile %s%s" % (xs, a))
            for ddof in (0, 1, 2):
                if flt or ddof < n:   # integers with ddof >= n: NumPy's inf, tcalc's NaN
                    for f, nf in (("nanvar", np.nanvar), ("nanstd", np.nanstd)):
                        exact_dtype.add(len(stmts))
                        add("%s(%s%s, ddof=%d)" % (f, XN, a, ddof), nf(xn, axis=npax, ddof=ddof), tol_of(dt) * 10,
                            "%s %s%s ddof %d" % (f, xs, a, ddof))
            sm = (xn % 3 if not flt else np.where(np.isnan(xn), xn, np.round(xn / 8, 0))).astype(dt)
            add("nanprod(%s%s)" % (arg(sm), a), np.nanprod(sm, axis=npax), tol_of(dt) if flt else 0, "nanprod %s%s" % (xs, a))
            if not isinstance(ax, list):
                add("nancumsum(%s%s)" % (XN, a), np.nancumsum(xn, axis=ax).astype(dt), tol_of(dt) if flt else 0,
                    "nancumsum %s%s" % (xs, a))
                add("nancumprod(%s%s)" % (arg(sm), a), np.nancumprod(sm, axis=ax).astype(dt), tol_of(dt) if flt else 0,
                    "nancumprod %s%s" % (xs, a))
        # comparison
        y = x.copy()
        if flt:
            y.reshape(-1)[::3] *= 1 + 1e-6
            y.reshape(-1)[1::5] += 1
        else:
            y.reshape(-1)[::4] += 1
        Y = arg(y)
        for en in ("false", "true"):
            add("isclose(%s, %s, equal_nan=%s)" % (X, Y, en), np.isclose(x, y, equal_nan=en == "true"), 0, "isclose " + xs)
        add("isclose(%s, %s, rtol=1e-3, atol=0.5)" % (X, Y), np.isclose(x, y, rtol=1e-3, atol=0.5), 0, "isclose tol " + xs)
        add("allclose(%s, %s)" % (X, Y), np.allclose(x, y), 0, "allclose " + xs)
        add("allclose(%s, %s, equal_nan=true)" % (X, X), np.allclose(x, x, equal_nan=True), 0, "allclose self " + xs)
        add("array_equal(%s, %s)" % (X, Y), np.array_equal(x, y), 0, "array_equal " + xs)
        add("array_equal(%s, %s)" % (F, F), np.array_equal(fin, fin), 0, "array_equal self " + xs)
        for f in ("logical_and", "logical_or", "logical_xor"):
            add("%s(%s, %s)" % (f, X, Y), getattr(np, f)(x, y), 0, "%s %s" % (f, xs))
        # ML helpers (the reference computed in f64 as SciPy does, rounded)
        xf = fin.astype(np.float64)
        for ax in range(-1, len(shape)):
            m = np.max(xf, axis=ax, keepdims=True)
            e = np.exp(xf - m)
            sm = e / e.sum(axis=ax, keepdims=True)
            lsm = xf - m - np.log(e.sum(axis=ax, keepdims=True))
            rd = dt if flt else np.float64
            add("softmax(%s, axis=%d)" % (F, ax), sm.astype(rd), tol_of(dt) * 4, "softmax %s axis %d" % (xs, ax))
            add("log_softmax(%s, axis=%d)" % (F, ax), lsm.astype(rd), tol_of(dt) * 4, "log_softmax %s axis %d" % (xs, ax))
        rd = dt if flt else np.float64
        add("sigmoid(%s)" % F, (1 / (1 + np.exp(-xf))).astype(rd), tol_of(dt) * 4, "sigmoid " + xs)
        add("relu(%s)" % F, np.maximum(fin, 0).astype(dt) + (0 if not flt else dt(0)), 0, "relu " + xs)
        for dd in (-1, 1, 2):   # round(x, decimals), NumPy's around
            add("round(%s, %d)" % (X, dd), np.round(x, dd), 0, "round %s %d" % (xs, dd))
        # building
        add("zeros_like(%s)" % X, np.zeros_like(x), 0, "zeros_like " + xs)
        add("ones_like(%s)" % X, np.ones_like(x), 0, "ones_like " + xs)
        add("full_like(%s, 7)" % X, np.full_like(x, 7), 0, "full_like " + xs)
        add("repeat(%s, 3)" % X, np.repeat(x, 3), 0, "repeat " + xs)
        add("repeat(%s, 2, axis=-1)" % X, np.repeat(x, 2, axis=-1), 0, "repeat axis " + xs)
        for reps in ([2], [2, 3], [1, 2, 1, 2]):
            add("tile(%s, %s)" % (X, reps), np.tile(x, reps), 0, "tile %s %s" % (xs, reps))
        add("pad(%s, [1, 2], value=5)" % X, np.pad(x, (1, 2), constant_values=5), 0, "pad " + xs)
        w = [int(v) for v in rng.integers(0, 3, 2 * len(shape))]
        add("pad(%s, %s)" % (X, w), np.pad(x, [(w[2 * i], w[2 * i + 1]) for i in range(len(shape))]), 0, "pad per axis " + xs)
        pw = [[w[2 * i], w[2 * i + 1]] for i in range(len(shape))]   # NumPy's own pad_width forms
        add("pad(%s, %s)" % (X, pw), np.pad(x, pw), 0, "pad nested " + xs)
        add("pad(%s, %s)" % (X, [[v] for v in w[:len(shape)]]), np.pad(x, [[v] for v in w[:len(shape)]]), 0,
            "pad [[n]] per axis " + xs)
        if x.size:   # modes other than constant cannot extend an empty axis
            for mode in ("edge", "reflect", "symmetric", "wrap"):
                add("pad(%s, %s, mode=\"%s\")" % (X, pw, mode), np.pad(x, pw, mode=mode), 0, "pad %s %s" % (mode, xs))
                add("pad(%s, 7, mode=\"%s\")" % (X, mode), np.pad(x, 7, mode=mode), 0, "pad %s 7 %s" % (mode, xs))
        for sh in (0, 3, -7):
            add("roll(%s, %d)" % (X, sh), np.roll(x, sh), 0, "roll %s %d" % (xs, sh))
            add("roll(%s, %d, axis=-1)" % (X, sh), np.roll(x, sh, axis=-1), 0, "roll axis %s %d" % (xs, sh))

# Rows long enough for the sort's split into groups (and its tasks): the
# results go through .npy files, as JSON they would be large.
saved = {}
def add_saved(expr, want, what):
    path = os.path.join(tmp, "r%d.npy" % len(stmts))
    saved[len(stmts)] = path
    add('save("%s", %s); 0' % (path, expr), want, 0, what)

LONG = 200000
for dt, make in [(np.float32, lambda: data(np.float32, (LONG,))),
                 (np.float64, lambda: data(np.float64, (LONG,))),
                 (np.float32, lambda: rng.standard_normal(LONG).astype(np.float32)),
                 (np.int32, lambda: rng.integers(-1000, 1001, LONG).astype(np.int32)),
                 (np.int64, lambda: rng.integers(-2 ** 63, 2 ** 63 - 1, LONG, dtype=np.int64, endpoint=True)),
                 (np.uint16, lambda: rng.integers(0, 2 ** 16, LONG).astype(np.uint16))]:
    x = make()
    if dt == np.float32:
        x[rng.integers(0, LONG, 300)] = np.nan
        x[rng.integers(0, LONG, 300)] = -0.0
        x[rng.integers(0, LONG, 300)] = 0.0
    X = arg(x)
    xs = "%s long" % np.dtype(dt).name
    o = np.array(desc_order(list(x)), dtype=np.int64)
    add_saved("sort(%s)" % X, np.sort(x, kind="stable"), "sort " + xs)
    add_saved("argsort(%s)" % X, np.argsort(x, kind="stable"), "argsort " + xs)
    add_saved("sort(%s, descending=true)" % X, x[o], "sort descending " + xs)
    add_saved("argsort(%s, descending=true)" % X, o, "argsort descending " + xs)
# Rows whose keys span few bits, all on one side of zero (a radix sort
# that sorts too few of the bits gets them wrong): medium rows sorted
# whole, and one past the in-cache size (2^16 keys of 8 bytes).
for dt, n, lo, hi in [(np.int64, 3000, 1000, 3000), (np.int32, 3000, -3000, -1000),
                      (np.float64, 3000, 1, 500), (np.int64, 70000, 5000, 9000), (np.float64, 70000, -900, -100)]:
    x = rng.integers(lo, hi, n).astype(dt)
    X = arg(x)
    xs = "%s %d in [%d, %d)" % (np.dtype(dt).name, n, lo, hi)
    o = np.array(desc_order(list(x)), dtype=np.int64)
    add_saved("sort(%s)" % X, np.sort(x, kind="stable"), "sort " + xs)
    add_saved("argsort(%s)" % X, np.argsort(x, kind="stable"), "argsort " + xs)
    add_saved("argsort(%s, descending=true)" % X, o, "argsort descending " + xs)
    add_saved("unique(%s)" % X, np.unique(x), "unique " + xs)
x = data(np.float32, (2, 3 * LONG // 4))
add_saved("sort(%s)" % arg(x), np.sort(x, axis=-1, kind="stable"), "sort f32 long rows")
add_saved("argsort(%s, axis=0)" % arg(x), np.argsort(x, axis=0, kind="stable"), "argsort f32 long axis 0")

outs = run_all(tcalc, stmts, tmp)
fails = 0
for i, (s, out, (want, tol, what)) in enumerate(zip(stmts, outs, expect)):
    if not out["ok"]:
        fails += 1
        print("FAIL", what, out["error"]["message"])
        continue
    # unique, quantile, percentile and their nan forms keep one of -0.0
    # and 0.0: NumPy's unstable sort or partition decides which
    got = np.load(saved[i]) if i in saved else as_array(out)
    ok, msg = close(got, want, tol, not what.startswith(("unique ", "quantile ", "percentile ", "nanmedian ", "nanquantile ",
                                                        "nanpercentile ")))
    if ok and i in exact_dtype and got.dtype != want.dtype:
        ok, msg = False, "dtype %s, NumPy's %s" % (got.dtype, want.dtype)
    if not ok:
        fails += 1
        if fails <= 30:
            print("FAIL", what, msg)
print("everyday functions vs numpy: %d checks, %d failures (NumPy %s)" % (len(stmts), fails, np.__version__))
sys.exit(1 if fails else 0)
PYEOF
