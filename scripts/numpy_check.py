"""Helpers shared by the scripts that check tcalc against NumPy
(scripts/linalg-numpy.sh, scripts/fn-numpy.sh): inputs handed over as .npy
files, and tcalc's JSON results read back as arrays."""
import json
import os
import subprocess
import sys
import numpy as np

DTYPES = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
          "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
          "f16": np.float16, "f32": np.float32, "f64": np.float64}


class Files:
    """arg(a): a tcalc expression for array a, a .npy file in tmp it loads."""
    def __init__(self, tmp):
        self.tmp, self.n = tmp, 0

    def arg(self, a):
        self.n += 1
        path = os.path.join(self.tmp, "a%d.npy" % self.n)
        np.save(path, np.ascontiguousarray(a))
        return 'load("%s")' % path


def as_array(out):
    """The array of one JSON result line ("nan", "inf" come as strings)."""
    conv = lambda v: float(v) if isinstance(v, str) else v
    def walk(d):
        return [walk(x) for x in d] if isinstance(d, list) else conv(d)
    return np.array(walk(out["data"]), dtype=DTYPES[out["dtype"]]).reshape(out["shape"])


def within(g, w, tol):
    """Finite float64 arrays g (got) and w (wanted): whether the largest
    difference, relative to w's largest magnitude, is at most tol."""
    if w.size == 0:
        return True, ""
    scale = max(float(np.max(np.abs(w))), 1e-300)
    err = float(np.max(np.abs(g - w))) / scale
    return err <= tol, "relative error %.3g > %.3g" % (err, tol)


def run_all(tcalc, stmts, cwd):
    """tcalc's JSON result of each statement, run in one process with -k;
    exits (status 1) when the results do not pair up with the statements."""
    p = subprocess.run([tcalc, "--json", "-k"], input="\n".join(stmts) + "\n", capture_output=True, text=True, cwd=cwd)
    outs = [json.loads(l) for l in p.stdout.splitlines()]
    if len(outs) != len(stmts):
        print("FAIL: %d statements, %d results" % (len(stmts), len(outs)))
        print(p.stderr[:2000])
        sys.exit(1)
    return outs
