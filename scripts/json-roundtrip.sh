#!/bin/sh
# tcalc's JSON output read back (SPEC 14) is the identical tensor, bit for
# bit, in every dtype: random bit patterns and edge values (-0.0,
# subnormals, MIN/MAX, infinities, NaN) written by NumPy as .npy, loaded,
# printed with -j, read back with load_json, with --arg (a 2000-value
# slice: one argument holds at most 128 KiB) and with from_json (a few
# values), then saved and compared with NumPy, byte for byte. NaN has no
# sign or payload in the output ("nan"): it reads back as the dtype's quiet
# NaN, so NaN positions are compared as NaN. bf16 (which NumPy lacks) goes
# through f32 values that bf16 holds exactly.
# Usage: scripts/json-roundtrip.sh path/to/tcalc
set -u
label="json round trip"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
"$py" - "$bin" "$tmp" <<'PY'
import os, subprocess, sys
import numpy as np
tcalc, tmp = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(19)
N = 20000
fails = checks = 0

def run(*args):
    p = subprocess.run([tcalc, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp)
    return p.returncode, p.stdout.decode(), p.stderr.decode()

def sample(np_dt):
    dt = np.dtype(np_dt)
    if dt.kind == 'b':
        return rng.integers(0, 2, N).astype(bool)
    if dt.kind in 'iu':
        ii = np.iinfo(dt)
        edge = np.array([ii.min, ii.max, 0, ii.max // 2 + 1, 1, ii.min + 1, ii.max - 1]
                        + ([-1] if dt.kind == 'i' else []), dtype=dt)
        return np.concatenate([edge, rng.integers(ii.min, ii.max, N, dtype=dt, endpoint=True)])
    fi = np.finfo(dt)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    bits = rng.integers(0, np.iinfo(u).max, N, dtype=u, endpoint=True).view(dt)
    edge = np.array([0.0, -0.0, fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, -fi.tiny,
                     fi.tiny - fi.smallest_subnormal, fi.max, -fi.max, fi.eps, np.inf, -np.inf, np.nan,
                     0.1, 1 / 3, 1.0, -1.0], dtype=dt)
    return np.concatenate([edge, bits])

def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return "dtype/shape %s%s vs %s%s" % (a.dtype, a.shape, b.dtype, b.shape)
    if a.dtype.kind == 'f':
        na, nb = np.isnan(a), np.isnan(b)
        if (na != nb).any():
            return "NaN at different places"
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
        bad = np.nonzero((a.view(u) != b.view(u)) & ~na)[0]
    else:
        bad = np.nonzero(a != b)[0]
    return "%d values differ, first at %d: %r vs %r" % (len(bad), bad[0], a[bad[0]], b[bad[0]]) if len(bad) else None

def check(what, ok, detail=""):
    global fails, checks
    checks += 1
    if not ok:
        fails += 1
        print("FAIL %s %s" % (what, detail))

for name, np_dt, cast in [("bool", "?", ""), ("i8", "i1", ""), ("i16", "i2", ""), ("i32", "i4", ""),
                          ("i64", "i8", ""), ("u8", "u1", ""), ("u16", "u2", ""), ("u32", "u4", ""),
                          ("u64", "u8", ""), ("f16", "f2", ""), ("f32", "f4", ""), ("f64", "f8", ""),
                          ("bf16", "f4", "bf16")]:
    x = sample(np_dt)
    if cast == "bf16":   # f32 values with the low 16 bits zero are exactly bf16
        x = (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    x = x.reshape(-1, 1) if name == "i16" else x   # a 2-D case too
    np.save(os.path.join(tmp, "in.npy"), x)
    small = x[:2000]
    np.save(os.path.join(tmp, "small.npy"), small)
    conv = (lambda e: "bf16(%s)" % e) if cast else (lambda e: e)
    back = (lambda e: "f32(%s)" % e) if cast else (lambda e: e)
    rc, out, err = run("-j", "-e", conv('load("in.npy")'))
    check(name + ": print", rc == 0 and out.count("\n") == 1, err[:200] + out[:200])
    with open(os.path.join(tmp, "x.json"), "w") as f:
        f.write(out)
    rc, _, err = run("-e", 'save("back.npy", %s)' % back('load_json("x.json")'))
    check(name + ": load_json", rc == 0, err[:300])
    if rc == 0:
        d = same(x, np.load(os.path.join(tmp, "back.npy")))
        check(name + ": load_json bits", d is None, d)
    rc, out, err = run("-j", "-e", conv('load("small.npy")'))
    rc, _, err = run("--arg", "y", out, "-e", 'save("back.npy", %s)' % back("y"))
    check(name + ": --arg", rc == 0, err[:300])
    if rc == 0:
        d = same(small, np.load(os.path.join(tmp, "back.npy")))
        check(name + ": --arg bits", d is None, d)
    # from_json on a statement: tcalc's output for the edge values, quoted
    rc, out, err = run("-j", "-e", conv('load("small.npy")[0:17]'))
    lit = out.strip().replace("\\", "\\\\").replace("'", "\\'")
    rc, _, err = run("-e", "save(\"back.npy\", %s)" % back("from_json('%s')" % lit))
    check(name + ": from_json", rc == 0, err[:300])
    if rc == 0:
        d = same(small[:17], np.load(os.path.join(tmp, "back.npy")))
        check(name + ": from_json bits", d is None, d)
print("json round trip: %d checks, %d failures" % (checks, fails))
sys.exit(1 if fails else 0)
PY
