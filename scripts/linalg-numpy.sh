#!/bin/sh
# Differential test of einsum and linear algebra against NumPy 1.24 on
# random inputs (fixed seed), and of the exact integer det against Python's
# fractions. Tolerances (relative to the largest magnitude of the expected
# result): einsum exact for integers, 1e-12 (f64) and 1e-5 (f32) for floats;
# solve, inv, det, cholesky, eigvalsh, svdvals, pinv, norm 1e-9 (f64) and
# 1e-3 (f32) on well-conditioned matrices (cond below about 100);
# matrix_rank exact on matrices of a constructed rank. NumPy is looked for
# in $PYTHON (default /usr/bin/python3); without it the check is skipped,
# saying so, except under CI=true, where it fails.
# Usage: scripts/linalg-numpy.sh path/to/tcalc
set -u
label="linalg vs numpy"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
"$py" - "$bin" "$tmp" "$(cd "$(dirname "$0")" && pwd)" <<'PYEOF'
import sys, os
from fractions import Fraction
import numpy as np
import warnings
warnings.filterwarnings("ignore")   # NumPy's own f32 det of 30 x 30 overflows to inf, as ours

tcalc, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from numpy_check import Files, as_array, run_all, within
arg = Files(tmp).arg   # a tcalc expression for an array: a .npy file it loads
rng = np.random.default_rng(20261130)
fails = checks = 0
stmts, expect = [], []   # one statement each; expect: (kind, value, tol, what)

def add(stmt, want, tol, what):
    stmts.append(stmt)
    expect.append((want, tol, what))

def close(got, want, tol):
    want = np.asarray(want)
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    if tol == 0:
        ok = got.dtype == want.dtype and np.array_equal(got, want)
        return ok, "dtype %s want %s" % (got.dtype, want.dtype) if not ok else ""
    if got.size == 0:
        return True, ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    inf = np.isinf(w)
    if not np.array_equal(np.isinf(g), inf) or not np.array_equal(g[inf], w[inf]):
        return False, "infinities differ"
    g, w = g[~inf], w[~inf]
    return within(g, w, tol)

# ---- einsum ----
def ein(spec, shapes, dt, tol):
    if np.dtype(dt).kind == "i":
        ops = [rng.integers(-50, 50, s).astype(dt) for s in shapes]
    else:
        ops = [rng.standard_normal(s).astype(dt) for s in shapes]
    want = np.einsum(spec, *ops)
    add('einsum("%s", %s)' % (spec, ", ".join(arg(o) for o in ops)), np.asarray(want), tol,
        "einsum %s %s %s" % (spec, shapes, dt))

cases = [
    ("ij,jk->ik", [(5, 7), (7, 3)]), ("ij,jk", [(4, 4), (4, 6)]), ("bij,bjk->bik", [(6, 5, 4), (6, 4, 3)]),
    ("ii->i", [(6, 6)]), ("ii", [(5, 5)]), ("ij->ji", [(3, 5)]), ("ijk->kji", [(2, 3, 4)]),
    ("i,i", [(9,), (9,)]), ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(1, 3, 2, 4), (5, 1, 4, 2)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("iij->j", [(3, 3, 4)]), ("ba", [(3, 2)]), ("Ab,bA", [(3, 4), (4, 3)]), ("i...->...", [(4, 2, 3)]),
    ("ij->", [(4, 5)]), ("ijk,ikl->jl", [(3, 4, 2), (3, 2, 5)]), ("ii,jj->ij", [(3, 3), (2, 2)]),
    ("i,i,i->", [(7,), (7,), (7,)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("...i,...i->...", [(2, 3, 4), (3, 4)]), ("ijkl->lkji", [(2, 1, 3, 2)]), ("ij,kl->ijkl", [(2, 2), (3, 1)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]), ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
]
for spec, shapes in cases:
    ein(spec, shapes, np.float64, 1e-12)
    ein(spec, shapes, np.float32, 1e-5)
    ein(spec, shapes, np.int32, 0)
    ein(spec, shapes, np.int64, 0)
# integers wrap as in NumPy
a = rng.integers(-2**31, 2**31, (4, 6)).astype(np.int32)
b = rng.integers(-2**31, 2**31, (6, 3)).astype(np.int32)
add('einsum("ij,jk->ik", %s, %s)' % (arg(a), arg(b)), np.einsum("ij,jk->ik", a, b), 0, "einsum wrapping i32")

# ---- linear algebra ----
def well(n, batch=(), dt=np.float64):
    a = rng.standard_normal(batch + (n, n)) + n * np.eye(n)
    return a.astype(dt)

for dt, tol in ((np.float64, 1e-9), (np.float32, 1e-3)):
    for n, batch in ((1, ()), (3, ()), (8, ()), (4, (3,)), (3, (2, 2)), (30, ())):
        a = well(n, batch, dt)
        b = rng.standard_normal(batch + (n,)).astype(dt)
        bm = rng.standard_normal(batch + (n, 2)).astype(dt)
        what = "%s n=%d batch=%s" % (np.dtype(dt).name, n, batch)
        add("solve(%s, %s)" % (arg(a), arg(b)), np.linalg.solve(a, b), tol, "solve vector " + what)
        add("solve(%s, %s)" % (arg(a), arg(bm)), np.linalg.solve(a, bm), tol, "solve matrix " + what)
        add("inv(%s)" % arg(a), np.linalg.inv(a), tol, "inv " + what)
        add("det(%s)" % arg(a), np.linalg.det(a), tol, "det " + what)
        s = (a @ np.swapaxes(a, -1, -2) + np.eye(n, dtype=dt)).astype(dt)
        add("cholesky(%s)" % arg(s), np.linalg.cholesky(s), tol, "cholesky " + what)
        add("eigvalsh(%s)" % arg(s), np.linalg.eigvalsh(s), tol, "eigvalsh " + what)
        r = rng.standard_normal(batch + (n, n + 2)).astype(dt)
        add("svdvals(%s)" % arg(r), np.linalg.svd(r, compute_uv=False), tol, "svdvals " + what)
        add("pinv(%s)" % arg(r), np.linalg.pinv(r), tol * 10, "pinv " + what)
        add("matrix_rank(%s)" % arg(a), np.linalg.matrix_rank(a), 0, "matrix_rank " + what)
    # a rank-deficient matrix: rank k by construction
    for k in (1, 2, 4):
        m = (rng.standard_normal((6, k)) @ rng.standard_normal((k, 5))).astype(dt)
        add("matrix_rank(%s)" % arg(m), np.linalg.matrix_rank(m), 0, "matrix_rank rank %d %s" % (k, np.dtype(dt).name))
    x = rng.standard_normal((4, 5)).astype(dt)
    v = rng.standard_normal(7).astype(dt)
    for o, ostr in ((None, "none"), (1, "1"), (2, "2"), (np.inf, "inf"), (-np.inf, "-inf"), (0, "0"), (3, "3"), (0.5, "0.5")):
        add("norm(%s, %s)" % (arg(v), ostr), np.linalg.norm(v, o), tol, "norm vector ord %s" % ostr)
        add("norm(%s, %s, axis=1)" % (arg(x), ostr), np.linalg.norm(x, o, axis=1), tol, "norm axis=1 ord %s" % ostr)
    for o, ostr in ((None, "none"), ("fro", '"fro"'), ("nuc", '"nuc"'), (1, "1"), (-1, "-1"), (2, "2"), (-2, "-2"),
                    (np.inf, "inf"), (-np.inf, "-inf")):
        add("norm(%s, %s)" % (arg(x), ostr), np.linalg.norm(x, o), tol, "norm matrix ord %s" % ostr)
        t = rng.standard_normal((3, 4, 2)).astype(dt)
        add("norm(%s, %s, axis=[2, 0])" % (arg(t), ostr), np.linalg.norm(t, o, axis=(2, 0)), tol,
            "norm axis=[2, 0] ord %s" % ostr)
        add("norm(%s, %s, axis=[0, 1], keepdims=true)" % (arg(t), ostr), np.linalg.norm(t, o, axis=(0, 1), keepdims=True),
            tol, "norm keepdims ord %s" % ostr)

# ---- exact integer det against fractions ----
def exact_det(m):
    a = [[Fraction(int(v)) for v in row] for row in m]
    n, d = len(a), Fraction(1)
    for k in range(n):
        p = next((r for r in range(k, n) if a[r][k] != 0), None)
        if p is None:
            return 0
        if p != k:
            a[k], a[p] = a[p], a[k]
            d = -d
        d *= a[k][k]
        for i in range(k + 1, n):
            f = a[i][k] / a[k][k]
            for j in range(k, n):
                a[i][j] -= f * a[k][j]
    return int(d)

int_cases = []
for n in range(1, 13):
    for lim in (3, 10, 1000):
        for _ in range(3):
            int_cases.append(rng.integers(-lim, lim + 1, (n, n)))
# singular ones, and ones whose exact det does not fit i64
int_cases.append(np.array([[1, 2, 3], [2, 4, 6], [7, 8, 9]]))
int_cases.append(np.diag([2**31, 2**31, 4]))
int_cases.append(rng.integers(-10**6, 10**6, (12, 12)))
# 20 x 20, unit lower times upper with an exact det of 63**10 (about 1e18): NumPy's float det rounds it
L = np.tril(rng.integers(-1, 2, (20, 20)), -1) + np.eye(20, dtype=np.int64)
U = np.triu(rng.integers(-1, 2, (20, 20)), 1) + np.diag([7] * 10 + [9] * 10)
int_cases.append(L @ U)
big = exact_det((L @ U).tolist())
if not (2**56 < abs(big) < 2**63) or float(np.linalg.det((L @ U).astype(np.float64))) == big:
    print("FAIL: the 20 x 20 case should have an exact det NumPy rounds (%d)" % big)
    fails += 1
rounded = 0
for m in int_cases:
    m = m.astype(np.int64)
    want = exact_det(m.tolist())
    fits = -2**63 <= want < 2**63
    stmts.append("det(%s)" % arg(m))
    expect.append((("det", want, fits, m.shape[0]), None, "exact det %dx%d" % m.shape))
    if fits and float(np.linalg.det(m.astype(np.float64))) != want:
        rounded += 1

outs = run_all(tcalc, stmts, tmp)
overflow_seen = overflow_fits = 0
for s, out, (want, tol, what) in zip(stmts, outs, expect):
    checks += 1
    if isinstance(want, tuple) and want[0] == "det":
        _, exact, fits, n = want
        if out["ok"]:
            ok = out["dtype"] == "i64" and int(out["data"]) == exact
            msg = "got %s, want %d" % (out.get("data"), exact)
        else:
            # overflow only where the exact value (or, allowed, an intermediate minor) leaves i64
            ok = out["error"]["code"] == "integer_overflow" and (not fits or n >= 3)
            overflow_seen += 1
            overflow_fits += fits
            msg = "error %s (exact %d fits: %s)" % (out["error"]["code"], exact, fits)
        if not ok:
            fails += 1
            print("FAIL", what, msg)
        continue
    if not out["ok"]:
        fails += 1
        print("FAIL", what, out["error"]["message"])
        continue
    ok, msg = close(as_array(out), want, tol)
    if not ok:
        fails += 1
        print("FAIL", what, msg)
print("linalg vs numpy: %d checks, %d failures (NumPy %s; %d exact dets NumPy rounds; %d integer_overflow, "
      "%d of them from an intermediate minor)" % (checks, fails, np.__version__, rounded, overflow_seen, overflow_fits))
sys.exit(1 if fails else 0)
PYEOF
