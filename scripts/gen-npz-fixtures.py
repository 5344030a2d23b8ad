#!/usr/bin/python3
"""Writes the .npz test fixtures in tests/data/npz/ (run it with
/usr/bin/python3, which has numpy). Good archives come from np.savez and
np.savez_compressed, and one is written by hand with ZIP64 extra fields and
end records; the bad ones cover each class of archive load_npz must reject
(unsafe names, zip bombs, truncation, CRC and deflate corruption,
encryption, other methods).
Usage: scripts/gen-npz-fixtures.py [OUTDIR]   (default tests/data)"""
import io
import os
import struct
import sys
import zipfile
import zlib

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data")
d = os.path.join(out, "npz")
os.makedirs(d, exist_ok=True)


def npy(arr):
    b = io.BytesIO()
    np.lib.format.write_array(b, arr, allow_pickle=False)
    return b.getvalue()


def write(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def zip_by_hand(members, zip64=False, names=None):
    """A zip of (name, data, method) members; zip64 puts every size and
    offset in ZIP64 extra fields and writes the ZIP64 end records. Entries
    may carry (declared size, crc, flags) overrides."""
    body, cd = b"", b""
    for m in members:
        name, data, method = m[:3]
        over = m[3] if len(m) > 3 else {}
        comp = data
        if method == 8:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            comp = c.compress(data) + c.flush()
        comp = over.get("comp", comp)
        usize = over.get("usize", len(data))
        crc = over.get("crc", zlib.crc32(data))
        flags = over.get("flags", 0)
        nm = name.encode()
        off = len(body)
        cs, us, of = (0xFFFFFFFF,) * 3 if zip64 else (len(comp), usize, off)
        lextra = struct.pack("<HHQQ", 1, 16, usize, len(comp)) if zip64 else b""
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, flags, method, 0, 0x21, crc, cs, us, len(nm), len(lextra))
        body += nm + lextra + comp
        cextra = struct.pack("<HHQQQ", 1, 24, usize, len(comp), off) if zip64 else b""
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, flags, method, 0, 0x21, crc, cs, us, len(nm),
                          len(cextra), 0, 0, 0, 0, of)
        cd += nm + cextra
    n = len(members)
    end = b""
    if zip64:
        z64 = len(body) + len(cd)
        end += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), len(body))
        end += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
        end += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    else:
        end += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), len(body), 0)
    return body + cd + end


x = np.arange(6, dtype=np.int64).reshape(2, 3)
y = np.array([0.5, -0.0, np.inf], dtype=np.float32)
np.savez(os.path.join(d, "stored.npz"), x=x, y=y, b=np.array([True, False]), z=np.float64(2.5), e=np.zeros((0, 2), np.int16))
np.savez_compressed(os.path.join(d, "deflated.npz"), x=x, y=y, u=np.array([0, 255], np.uint8),
                    f=np.asfortranarray(np.arange(6, dtype=np.float16).reshape(2, 3)), h=np.zeros(10000))
write("zip64.npz", zip_by_hand([("x.npy", npy(x), 8), ("y.npy", npy(y), 0)], zip64=True))
np.savez(os.path.join(d, "empty_archive.npz"))

# ---- bad archives ----
good = npy(x)
write("bad_absolute.npz", zip_by_hand([("/tmp/x.npy", good, 0)]))
write("bad_dotdot.npz", zip_by_hand([("../x.npy", good, 0)]))
write("bad_dotdot_inner.npz", zip_by_hand([("a/../../x.npy", good, 0)]))
write("bad_drive.npz", zip_by_hand([("C:x.npy", good, 0)]))
# declares 2^40 bytes (ZIP64): out_of_memory before anything is inflated
write("bomb_declared.npz", zip_by_hand([("x.npy", good, 8, {"usize": 1 << 40})], zip64=True))
# declares 50 MB from a few bytes: beyond deflate's ratio
write("bomb_ratio.npz", zip_by_hand([("x.npy", good, 8, {"usize": 50_000_000})]))
# inflates to 1 MB more than the 128+48 bytes it declares
c = zlib.compressobj(9, zlib.DEFLATED, -15)
more = c.compress(good + bytes(1 << 20)) + c.flush()
write("bomb_more.npz", zip_by_hand([("x.npy", good, 8, {"comp": more, "usize": len(good), "crc": zlib.crc32(good)})]))
write("bad_less.npz", zip_by_hand([("x.npy", good, 8, {"usize": len(good) + 64})]))
stored = open(os.path.join(d, "stored.npz"), "rb").read()
write("bad_truncated_half.npz", stored[: len(stored) // 2])
write("bad_truncated_end.npz", stored[:-1])
write("bad_crc.npz", zip_by_hand([("x.npy", good, 0, {"crc": zlib.crc32(good) ^ 1})]))
c = zlib.compressobj(9, zlib.DEFLATED, -15)
deflated = bytearray(c.compress(good) + c.flush())
deflated[0] |= 0x06   # block type 3, which deflate reserves
write("bad_deflate.npz", zip_by_hand([("x.npy", good, 8, {"comp": bytes(deflated)})]))
write("bad_encrypted.npz", zip_by_hand([("x.npy", good, 0, {"flags": 1})]))
b = io.BytesIO()
with zipfile.ZipFile(b, "w", zipfile.ZIP_BZIP2) as z:
    z.writestr("x.npy", good)
write("bad_bzip2.npz", b.getvalue())
write("bad_not_zip.npz", b"PK\x03\x04 this is not a zip archive at all" * 3)
write("bad_member_not_npy.npz", zip_by_hand([("x.npy", b"hello, world", 0)]))
