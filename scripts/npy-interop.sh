#!/bin/sh
# .npy and CSV interoperability with real NumPy, both ways: files tcalc
# saves must load in NumPy with the same dtype, shape and bits, and files
# NumPy saves (random data, every shared dtype, both byte orders, C and
# Fortran order, format versions 1-3) must load in tcalc with the same
# values; arange and linspace must match NumPy's bit for bit. NumPy is
# looked for in $PYTHON (default /usr/bin/python3); without it the check is
# skipped, saying so, except under CI=true, where it fails. Usage: scripts/npy-interop.sh path/to/tcalc
set -u
label="npy interop"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
"$py" - "$bin" "$tmp" <<'PYEOF'
import json, subprocess, sys, os
import numpy as np

tcalc, tmp = sys.argv[1], sys.argv[2]
fails = 0
checks = 0

def run(stmts):
    p = subprocess.run([tcalc, "--json", "-k"], input=stmts, capture_output=True, text=True, cwd=tmp)
    return [json.loads(l) for l in p.stdout.splitlines()]

def same(a, b):
    """Equal dtype, shape and bits (NaNs compare by bits too)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()

def flatten(d):
    if isinstance(d, list):
        return [v for x in d for v in flatten(x)]
    return [d]

def values_match(arr, data):
    """arr equals tcalc's JSON data read in arr's dtype (NaN equal to NaN, signs of zeros kept)."""
    vals = flatten(data)
    if len(vals) != arr.size:
        return False
    if arr.dtype.kind == "f":
        want = np.array([float(v) for v in vals], dtype=np.float64).astype(arr.dtype)
    else:
        want = np.array(vals, dtype=arr.dtype)
    got = arr.reshape(-1).astype(arr.dtype.newbyteorder("="))
    if arr.dtype.kind == "f":
        return bool(np.array_equal(got, want, equal_nan=True) and (np.signbit(got) == np.signbit(want)).all())
    return bool(np.array_equal(got, want))

def check(ok, what):
    global fails, checks
    checks += 1
    if not ok:
        fails += 1
        print("FAIL", what)

names = {"bool": "?", "i8": "<i1", "i16": "<i2", "i32": "<i4", "i64": "<i8", "f16": "<f2", "f32": "<f4", "f64": "<f8",
         "u8": "|u1", "u16": "<u2", "u32": "<u4", "u64": "<u8"}

# ---- tcalc saves, NumPy loads ----
cases = {
    "a": ("f64", "[[-0.0, 0.1, nan], [inf, -inf, 5e-324]]"),
    "b": ("i8", "i8([[-128, 127], [-1, 0]])"),
    "c": ("i16", "i16([-32768, 32767, 7])"),
    "d": ("i32", "reshape(i32(arange(24)), [2, 3, 4])"),
    "e": ("i64", "[-9223372036854775808, 9223372036854775807, 9007199254740993]"),
    "f": ("f16", "f16([1.5, 65504.0, 6e-08, nan])"),
    "g": ("f32", "f32([0.1, -3.4e38, 1e-45])"),
    "h": ("bool", "[[true, false], [false, true]]"),
    "i": ("f64", "2.5"),                                   # 0-d
    "j": ("f64", "zeros([0, 3])"),                         # empty
    "k": ("i32", "transpose(reshape(i32(arange(6)), [2, 3]))"),  # a strided view
    "l": ("f64", "flip(arange(5.0))"),                     # negative strides
    "m": ("u8", "u8([[0, 255], [128, 1]])"),               # unsigned (SPEC 13)
    "n": ("u16", "u16([0, 65535, 7])"),
    "o": ("u32", "u32([0, 4294967295, 2147483648])"),
    "p": ("u64", "u64([0, 18446744073709551615, 9223372036854775808, 9007199254740993])"),
}
stmts = "".join(f"{n} = {e}\nsave(\"{n}.npy\", {n})\n{n}\n" for n, (_, e) in cases.items())
stmts += "".join(f"save_csv(\"{n}.csv\", {n})\n" for n in "abcefghklmnop")
outs = run(stmts)
check(len(outs) == len(cases), f"tcalc printed {len(outs)} results for {len(cases)} tensors: {outs[:2]}")
for (n, (dt, _)), o in zip(cases.items(), outs):
    path = os.path.join(tmp, n + ".npy")
    try:
        arr = np.load(path, allow_pickle=False)
    except Exception as e:
        check(False, f"NumPy cannot load tcalc's {n}.npy: {e}")
        continue
    check(arr.dtype == np.dtype(names[dt]), f"{n}.npy: dtype {arr.dtype}, want {dt}")
    check(list(arr.shape) == o["shape"], f"{n}.npy: shape {arr.shape}, tcalc says {o['shape']}")
    okv = values_match(arr, o["data"])
    check(okv, f"{n}.npy: values {arr.tolist()} tcalc printed {o['data']}")
    # the header is what NumPy itself would write (alignment, byte order)
    with open(path, "rb") as f:
        major, minor = np.lib.format.read_magic(f)
        shape, fortran, dtype = np.lib.format._read_array_header(f, (major, minor))
        check(f.tell() % 64 == 0 and not fortran, f"{n}.npy: data at {f.tell()}, fortran={fortran}")
    if n in "abcefghklmnop":
        rd = np.float64 if arr.dtype.kind == "f" else arr.dtype.newbyteorder("=")
        c = np.loadtxt(os.path.join(tmp, n + ".csv"), delimiter=",", dtype=rd, ndmin=2 if arr.ndim == 2 else 1)
        native = arr.astype(arr.dtype.newbyteorder("="))
        back = c.astype(native.dtype)   # CSV holds the shortest text that reads back in the dtype
        check(back.shape == arr.shape and np.array_equal(back, native, equal_nan=arr.dtype.kind == "f"),
              f"{n}.csv: NumPy reads {c.tolist()[:4]} for {arr.tolist()[:4]}")

# ---- NumPy saves, tcalc loads ----
rng = np.random.default_rng(20240607)
files = []
for dt in ["?", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "u1", "u2", "u4", "u8"]:
    for order in ["<", ">"]:
        for fortran in [False, True]:
            for shape in [(), (0,), (5,), (3, 4), (2, 3, 4), (0, 2)]:
                if dt in ("?", "i1", "u1") and order == ">":
                    continue
                kind = np.dtype(dt).kind
                if kind == "b":
                    a = rng.integers(0, 2, size=shape).astype("?")
                elif kind in "iu":
                    info = np.iinfo(dt)
                    a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
                else:
                    a = (rng.standard_normal(size=shape) * 1e3).astype(dt)
                a = a.astype(np.dtype(dt).newbyteorder(order) if kind != "b" else "?")
                if fortran:
                    a = np.asfortranarray(a)
                name = f"np_{len(files)}.npy"
                ver = [(1, 0), (2, 0), (3, 0)][len(files) % 3]
                with open(os.path.join(tmp, name), "wb") as f:
                    np.lib.format.write_array(f, a, version=ver)
                files.append((name, a))
outs = run("".join(f"load(\"{n}\")\n" for n, _ in files))
check(len(outs) == len(files), f"tcalc printed {len(outs)} results for {len(files)} files")
for (name, a), o in zip(files, outs):
    if not o.get("ok"):
        check(False, f"tcalc cannot load {name} ({a.dtype}, {a.shape}): {o}")
        continue
    okv = list(o["shape"]) == list(a.shape) and values_match(a, o["data"])
    check(okv, f"{name} ({a.dtype.str}, {a.shape}, fortran={np.isfortran(a)}): tcalc read {o['data']}")

# ---- .npz both ways, and mapped .npy (SPEC 14) ----
# NumPy's np.savez (stored) and np.savez_compressed (deflated) archives of
# every array above, read by load_npz; each .npy mapped (little-endian) or
# refused (big-endian: io_error); tcalc's save_npz read by np.load, member
# by member the same bits as tcalc's own .npy of the same tensor.
arrs = {f"a{i}": a for i, (_, a) in enumerate(files)}
np.savez(os.path.join(tmp, "np_stored.npz"), **arrs)
np.savez_compressed(os.path.join(tmp, "np_deflated.npz"), **arrs)
for arch in ["np_stored.npz", "np_deflated.npz"]:
    outs = run("".join(f"load_npz(\"{arch}\", \"{k}\")\n" for k in arrs))
    check(len(outs) == len(arrs), f"{arch}: tcalc printed {len(outs)} results for {len(arrs)} arrays")
    for (k, a), o in zip(arrs.items(), outs):
        ok = o.get("ok") and list(o["shape"]) == list(a.shape) and values_match(a, o["data"])
        check(ok, f"{arch} {k} ({a.dtype.str}, {a.shape}): tcalc read {o}")
outs = run("".join(f"load(\"{n}\", mmap=true)\n" for n, _ in files))
for (name, a), o in zip(files, outs):
    if a.dtype.byteorder == ">":
        check(not o.get("ok") and o["error"]["code"] == "io_error", f"mapped big-endian {name}: {o}")
    else:
        check(o.get("ok") and list(o["shape"]) == list(a.shape) and values_match(a, o["data"]),
              f"mapped {name} ({a.dtype.str}, {a.shape}): tcalc read {o}")
outs = run("".join(f"{n} = {e}\n" for n, (_, e) in cases.items()) +
           "save_npz(\"t.npz\", " + ", ".join(f"{n}={n}" for n in cases) + ")\n")
check(all(o.get("ok") for o in outs), f"save_npz failed: {[o for o in outs if not o.get('ok')][:1]}")
try:
    with np.load(os.path.join(tmp, "t.npz"), allow_pickle=False) as z:
        check(sorted(z.files) == sorted(cases), f"t.npz holds {z.files}")
        for n in cases:
            check(same(z[n], np.load(os.path.join(tmp, n + ".npy"))), f"t.npz {n}: {z[n]!r}")
except Exception as e:
    check(False, f"NumPy cannot load tcalc's t.npz: {e}")

# ---- numpy.savetxt's files, and spreadsheet CSV, read by load_csv as numpy.loadtxt reads them ----
# savetxt's defaults (space separated, %.18e), a delimiter, a header (a #
# comment), integer formats, CRLF line ends; then quoted values with
# commas and doubled quotes, empty cells (NaN), usecols and skiprows,
# compared with numpy.loadtxt's answer on the same file.
texts = []
for i, (shape, kw) in enumerate([((4, 3), {}), ((5,), {}), ((3, 4), {"delimiter": ","}), ((2, 5), {"header": "a b c d e"}),
                                  ((3, 3), {"fmt": "%d"}), ((3, 2), {"delimiter": ",", "newline": "\r\n"}),
                                  ((4, 2), {"delimiter": "\t", "fmt": "%.6g"}), ((1, 4), {"delimiter": ";"})]):
    a = np.round(rng.standard_normal(size=shape) * 1e3) if kw.get("fmt") == "%d" else rng.standard_normal(size=shape) * 1e3
    name = f"txt_{i}.txt"
    np.savetxt(os.path.join(tmp, name), a, **kw)
    want = np.loadtxt(os.path.join(tmp, name), delimiter=kw.get("delimiter"))
    texts.append((name, kw.get("delimiter"), want))
with open(os.path.join(tmp, "sheet.csv"), "w", newline="") as f:
    f.write('\ufeffname,x,y\r\n"Smith, J",1.5,-2\r\n"O""Neil",,3e2\r\n# note\r\n\r\n"Lee", 7 ,"8"\r\n')
sheet = np.array([[1.5, -2.0], [np.nan, 300.0], [7.0, 8.0]])
stmts = "".join(f"load_csv(\"{n}\")\n" + (f"load_csv(\"{n}\", delimiter=\"{d}\")\n" if d else "") for n, d, _ in texts)
stmts += 'load_csv("sheet.csv", skiprows=1, usecols=[1, 2])\nload_csv("sheet.csv", skiprows=1, usecols=-1)\n'
outs = run(stmts)
k = 0
for n, d, want in texts:
    for _ in range(2 if d else 1):
        o = outs[k] if k < len(outs) else {}
        k += 1
        if d == ";" and _ == 0:   # a ';' file without delimiter= is not comma or blank separated: refused
            check(not o.get("ok") and o["error"]["code"] == "io_error", f"{n} without delimiter: {o}")
            continue
        check(o.get("ok") and o["shape"] == list(want.shape) and values_match(want, o["data"]),
              f"{n} (delimiter {d!r}{', given' if _ else ''}): numpy.loadtxt {want.tolist()}, tcalc {o}")
for want in [sheet, sheet[:, 1]]:
    o = outs[k] if k < len(outs) else {}
    k += 1
    check(o.get("ok") and o["shape"] == list(want.shape) and values_match(want, o["data"]), f"sheet.csv: {o}")

# ---- arange and linspace match NumPy bit for bit ----
ranges = [("arange(10)", np.arange(10)), ("arange(-3, 17, 4)", np.arange(-3, 17, 4)),
          ("arange(5, -5, -3)", np.arange(5, -5, -3)), ("arange(0.1, 1.0, 0.1)", np.arange(0.1, 1.0, 0.1)),
          ("arange(1.5, -2.25, -0.3)", np.arange(1.5, -2.25, -0.3)), ("arange(0, 1, 0.125)", np.arange(0, 1, 0.125)),
          ("linspace(0, 1, 7)", np.linspace(0, 1, 7)), ("linspace(-2.5, 10.1, 50)", np.linspace(-2.5, 10.1, 50)),
          ("linspace(3, 3, 4)", np.linspace(3, 3, 4)), ("linspace(1e-3, 1e3, 11)", np.linspace(1e-3, 1e3, 11)),
          ("linspace(0, 1, 1)", np.linspace(0, 1, 1))]
outs = run("".join(f"save(\"r{i}.npy\", {e})\n" for i, (e, _) in enumerate(ranges)))
for i, (e, want) in enumerate(ranges):
    try:
        got = np.load(os.path.join(tmp, f"r{i}.npy"))
    except Exception as ex:
        check(False, f"{e}: {ex} {outs}")
        continue
    check(same(got, want), f"{e}: tcalc {got.tolist()} NumPy {want.tolist()}")

print(f"npy interop: {checks} checks, {fails} failures (NumPy {np.__version__})")
sys.exit(1 if fails else 0)
PYEOF
