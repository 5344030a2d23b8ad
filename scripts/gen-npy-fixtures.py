#!/usr/bin/python3
"""Writes the .npy and CSV test fixtures in tests/data/ with NumPy (run it
with /usr/bin/python3, which has numpy). The good files cover every dtype
tcalc shares with NumPy in both byte orders, C and Fortran order, 0-d and
empty arrays and format versions 1.0, 2.0 and 3.0; the bad files cover each
class of malformed file tcalc must reject with io_error.
Usage: scripts/gen-npy-fixtures.py [OUTDIR]   (default tests/data)"""
import os
import struct
import sys

import numpy as np
from numpy.lib import format as npf

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data")
npy = os.path.join(out, "npy")
csv = os.path.join(out, "csv")
os.makedirs(npy, exist_ok=True)
os.makedirs(csv, exist_ok=True)


def save(name, arr, version=None):
    with open(os.path.join(npy, name), "wb") as f:
        npf.write_array(f, arr, version=version, allow_pickle=False)


def raw(name, data):
    with open(os.path.join(npy, name), "wb") as f:
        f.write(data)


def header(d, version=(1, 0)):
    """A .npy prefix + header for the dict text d (padded as NumPy does)."""
    h = d.encode("latin1")
    pre = 10 if version[0] == 1 else 12
    pad = (64 - (pre + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    lenf = struct.pack("<H", len(h)) if version[0] == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes(version) + lenf + h


# ---- good files: every dtype, both byte orders, C and Fortran order ----
edge = {
    "b1": np.array([[True, False, True], [False, False, True]]),
    "i1": np.array([[-128, 127, -1], [0, 1, 42]], dtype="i1"),
    "i2": np.array([[-32768, 32767, -1], [0, 1, 4242]], dtype="i2"),
    "i4": np.array([[-2147483648, 2147483647, -1], [0, 1, 424242]], dtype="i4"),
    "i8": np.array([[-9223372036854775808, 9223372036854775807, -1], [0, 9007199254740993, 42]], dtype="i8"),
    "f2": np.array([[-0.0, 1.5, np.nan], [np.inf, -np.inf, 6.0e-8]], dtype="f2"),
    "f4": np.array([[-0.0, 1.5, np.nan], [np.inf, -np.inf, 1.0e-45]], dtype="f4"),
    "f8": np.array([[-0.0, 0.1, np.nan], [np.inf, -np.inf, 5e-324]], dtype="f8"),
}
for dt, a in edge.items():
    save(f"{dt}_le_c.npy", a.astype("<" + dt if dt != "b1" else "b1"))
    if dt not in ("b1", "i1"):
        save(f"{dt}_be_c.npy", a.astype(">" + dt))
    # Fortran order: the same values, stored column by column
    save(f"{dt}_le_f.npy", np.asfortranarray(a.astype("<" + dt if dt != "b1" else "b1")))

save("i4_be_f.npy", np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3)))
save("f8_f_3d.npy", np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4)))
save("f8_0d.npy", np.array(2.5))
save("i2_0d_be.npy", np.array(-7, dtype=">i2"))
save("f8_empty.npy", np.zeros((0,)))
save("i4_empty_2x0.npy", np.zeros((2, 0), dtype="i4"))
save("f4_empty_0x3_f.npy", np.asfortranarray(np.zeros((0, 3), dtype="f4")))
save("f8_v2.npy", np.array([1.0, -2.0, 3.5]), version=(2, 0))
save("i8_v3.npy", np.array([[1, 2], [3, 4]], dtype="i8"), version=(3, 0))

# ---- bad files: one per failure class ----
good = open(os.path.join(npy, "f8_v2.npy"), "rb").read()
f8_3 = header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }") + np.array([1.0, 2, 3]).tobytes()
raw("bad_magic.npy", b"\x93NUMPZ" + f8_3[6:])
raw("bad_empty.npy", b"")
raw("bad_short.npy", b"\x93NUMPY\x01")
raw("bad_version.npy", b"\x93NUMPY\x04\x00" + f8_3[8:])
raw("bad_minor.npy", b"\x93NUMPY\x01\x01" + f8_3[8:])
raw("bad_truncated.npy", f8_3[:-5])
raw("bad_trailing.npy", f8_3 + b"\x00" * 8)
raw("bad_header_len.npy", f8_3[:8] + struct.pack("<H", 60000) + f8_3[10:])
raw("bad_header_len_v2.npy", good[:8] + struct.pack("<I", 0xFFFFFFF0) + good[12:])
raw("bad_huge_shape.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }") + b"\0" * 16)
raw("bad_absurd_shape.npy",
    header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"))
raw("bad_dim_overflow.npy",
    header("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }"))
raw("bad_negative_dim.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }"))
raw("bad_too_many_dims.npy",
    header("{'descr': '<f8', 'fortran_order': False, 'shape': (" + "1, " * 17 + "), }") + b"\0" * 8)
raw("bad_dtype_complex.npy", header("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 16)
raw("bad_dtype_unsigned.npy", header("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 4)
raw("bad_dtype_string.npy", header("{'descr': '|S5', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 5)
raw("bad_dtype_garbage.npy", header("{'descr': 'garbage', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 8)
raw("bad_dtype_f3.npy", header("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 3)
raw("bad_dtype_structured.npy",
    header("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }") + b"\0" * 8)
raw("bad_not_dict.npy", header("hello, world") + b"\0" * 8)
raw("bad_missing_key.npy", header("{'descr': '<f8', 'fortran_order': False, }") + b"\0" * 8)
raw("bad_extra_key.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1, }") + b"\0" * 8)
raw("bad_duplicate_key.npy", header("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 8)
raw("bad_fortran_value.npy", header("{'descr': '<f8', 'fortran_order': maybe, 'shape': (1,), }") + b"\0" * 8)
raw("bad_shape_syntax.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (1 2), }") + b"\0" * 16)
raw("bad_non_ascii.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }").replace(b"shape", b"sh\xe9pe") + b"\0" * 8)
raw("bad_unterminated.npy", header("{'descr': '<f8', 'fortran_order': False, 'shape': (1,") + b"\0" * 8)

# ---- CSV ----
def text(name, s, mode="w"):
    with open(os.path.join(csv, name), "w", newline="") as f:
        f.write(s)

text("floats.csv", "# a comment line\n1.5, -2 ,3e2\n\n  nan,inf,-inf  # trailing comment\r\n-0.0,0.1,5e-324\n")
text("ints.csv", "1,2,3\n-9223372036854775808,9223372036854775807,0\n")
text("one_col.csv", "1\n2\n3\n")
text("one_row.csv", "1,2,3,4")
text("empty.csv", "")
text("comments_only.csv", "# nothing\n\n   \n")
text("bools.csv", "true,false\n1,0\nTrue,FALSE\n")
text("bad_ragged.csv", "1,2,3\n4,5\n")
text("bad_value.csv", "1,2\n3,x\n")
text("bad_empty_field.csv", "1,,2\n")
text("bad_trailing_comma.csv", "1,2,\n")
text("bad_int_float.csv", "1,2.5\n")
text("bad_int_range.csv", "1,300\n")
text("bad_long_field.csv", "1" * 200 + "\n")
with open(os.path.join(csv, "bad_binary.csv"), "wb") as f:
    f.write(b"1,2\n\x93\x00\x01,4\n")
print("wrote fixtures under", out)
