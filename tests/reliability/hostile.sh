#!/bin/sh
# Hostile input (issue 7): deep nesting, huge lines, random bytes, NUL
# bytes, invalid UTF-8, literals beyond i64. Each gives error lines with
# the documented codes and the documented exit status, in bounded time,
# without a crash. Usage: tests/reliability/hostile.sh path/to/tcalc
. "$(dirname "$0")/lib.sh"

gen() { python3 -c "import sys; sys.stdout.buffer.write($2)" > "$TMP/$1"; }

# Nesting far beyond the parser's depth limit: an error, not a stack overflow.
gen parens "b'(' * 200000 + b'1' + b')' * 200000 + b'\n'"
expect parens_200k 3 "$TMP/parens" '"syntax_error".*nested too deeply'
gen brackets "b'[' * 200000 + b'1' + b']' * 200000 + b'\n'"
expect brackets_200k 3 "$TMP/brackets" '"syntax_error".*nested too deeply'
gen unclosed "b'(' * 200000 + b'\n'"
expect unclosed_200k 3 "$TMP/unclosed" '"syntax_error"'
gen unary "b'-' * 200000 + b'1\n'"
expect unary_200k 3 "$TMP/unary" '"syntax_error".*nested too deeply'
gen calls "b'sin(' * 200000 + b'1' + b')' * 200000 + b'\n'"
expect calls_200k 3 "$TMP/calls" '"syntax_error".*nested too deeply'
gen mixed "b'([-' * 70000 + b'1' + b'])' * 70000 + b'\n2\n'"
expect mixed_200k 3 "$TMP/mixed" '"data":2}'

# Just inside the limit the parser, the evaluator and the printers cope
# (this is what runs out of stack first under ASan).
gen deep_ok "b'sin(' * 999 + b'0' + b')' * 999 + b'\n' + b'-' * 999 + b'1\n' + b'(' * 999 + b'2' + b')' * 999 + b'\n' + b'[' * 16 + b'7' + b']' * 16 + b'\n' + b'[' * 999 + b']' * 999 + b'\n'"
expect deep_ok 1 "$TMP/deep_ok" '"shape":\[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\]' '"data":0.0}' '"data":-1}' '"data":2}' \
  '"bad_argument".*at most 16 dimensions'
gen dims17 "b'[' * 17 + b'7' + b']' * 17 + b'\n'"
expect dims_17 1 "$TMP/dims17" '"bad_argument".*at most 16 dimensions'

# Two million terms on one line.
gen terms "b'+'.join([b'1'] * 2000000) + b'\n'"
expect terms_2M 0 "$TMP/terms" '"data":2000000}'   # a left-associative chain is not nesting (SPEC 11)
# Blocks nested 300 000 deep (the parser recurses once per block) and a
# block left open 300 000 times.
gen blocks "b'if true then ' * 300000 + b'1' + b' end' * 300000 + b'\\n'"
expect blocks_300k 3 "$TMP/blocks" '"syntax_error".*blocks nested too deeply'
gen open_blocks "b'def f(x)\\n' + b'while false do\\n' * 300000"
expect open_blocks 3 "$TMP/open_blocks" '"syntax_error"'
gen list "b'reduce_sum([' + b','.join([b'1'] * 2000000) + b'])\n'"
expect list_2M 0 "$TMP/list" '"data":2000000}'
gen args "b'add(' + b','.join([b'1'] * 2000000) + b')\n'"
expect args_2M 1 "$TMP/args" '"bad_argument".*at most 2 arguments'
gen stmts "b'x = 1; ' * 300000 + b'x + 1\n'"
expect statements_300k 0 "$TMP/stmts" '"data":2}'
gen errors "b'1 + ; ' * 300000 + b'\n' + b'(\n' * 100000 + b'1 +\n' * 100000"
expect errors_300k 3 "$TMP/errors" '"column":1799999}'
count errors_300k_all 300001 '"syntax_error"'
gen spaces "b' ' * 10000000 + b'1\n'"
expect spaces_10M 0 "$TMP/spaces" '"data":1}'
gen name "b'x' * 1000000 + b'\n'"
expect name_1M 1 "$TMP/name" '"undefined_name"'
gen digits "b'1' * 1000000 + b'\n'"
expect digits_1M 1 "$TMP/digits" '"literal_overflow"'

# Megabytes of random bytes, and of random language tokens.
gen random "__import__('random').Random(7).randbytes(3 << 20)"
expect random_3M 3 "$TMP/random" '"syntax_error"'
# (random bytes mapped onto the alphabet by a table: a choice per byte in
# Python took 13 s of the suite on a busy machine)
gen tokens "__import__('random').Random(8).randbytes(1 << 20).translate(bytes(b'0123456789abxyz_+-*/%@&|^~!<>=()[],;:.#\" \n'[i % 42] for i in range(256)))"
expect tokens_1M '1|3' "$TMP/tokens" '"ok":false'

# NUL bytes and invalid UTF-8: errors that name them; comments may hold anything.
printf '1 +\000 2\n\000\000\n"a\000b"\n3\n' > "$TMP/nul"
expect nul_bytes 3 "$TMP/nul" '"message":"unexpected NUL byte"' '"message":"NUL byte in a string"' '"data":3}'
# a def whose comment holds a NUL: the function keeps its whole text (a copy that stopped at the
# NUL made the parser read past it, found by fuzz_stmt, and reported out_of_memory)
printf 'def f(x)  # a\000b\n  return x + 1\nend\nf(1)\n' > "$TMP/nuldef"
expect nul_in_def_comment 0 "$TMP/nuldef" '"data":2}'
printf '\377\376\n"\303\050"\ncast(1, "\303\251\377")\n:\377\n4 # \377\376 comment\n' > "$TMP/utf8"
expect invalid_utf8 3 "$TMP/utf8" '"message":"unexpected non-ASCII character"' \
  '"message":"invalid UTF-8 in a string"' '"message":"unknown command :\?' '"data":4}'

# Integer literals beyond i64.
printf '9223372036854775808\n-9223372036854775809\n99999999999999999999999999\n0x1_0000_0000_0000_0000\nreduce_sum([1], 99999999999999999999)\n-9223372036854775808\n' > "$TMP/big"
expect literal_beyond_i64 1 "$TMP/big" '"literal_overflow"' '"data":-9223372036854775808}'
count literal_overflow_lines 5 '"literal_overflow"'

# A float with more digits than any buffer keeps its exact value.
gen float "b'0.' + b'0' * 600 + b'1e700\n' + b'1' + b'0' * 600 + b'.0e-600\n'"
expect float_long 0 "$TMP/float" '"data":1e\+99}' '"data":1.0}'

# Hostile files: devices, pipes, directories, headers that lie, bytes that
# are not CSV, a full disk. Each is io_error, read without blocking.
python3 - "$TMP" <<'PY'
import random, struct, sys
tmp = sys.argv[1]
def npy(name, header, data=b""):
    h = header.encode()
    h += b" " * (64 - (10 + len(h) + 1) % 64) + b"\n"
    open(f"{tmp}/{name}", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data)
npy("huge.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000000000), }")
npy("short.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }", b"\0" * 80)
npy("dims.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (" + "1," * 100 + "), }")
open(f"{tmp}/hdr.npy", "wb").write(b"\x93NUMPY\x03\x00" + struct.pack("<I", 0xFFFFFFFF) + b"{")
open(f"{tmp}/rand.csv", "wb").write(random.Random(1).randbytes(100000))
with open(f"{tmp}/files.tc", "w") as f:
    for name in ["/dev/zero", tmp, f"{tmp}/huge.npy", f"{tmp}/short.npy", f"{tmp}/dims.npy", f"{tmp}/hdr.npy"]:
        f.write(f'load("{name}")\n')
    f.write(f'load_csv("{tmp}/rand.csv")\nsave("/dev/full", [1, 2])\nsave_csv("/dev/full", [1, 2])\n')
PY
# (a FIFO waits for its writer, and Ctrl-C ends the wait: tests/cli/run.sh)
expect files 1 "$TMP/files.tc" '"message":"load: .*/dev/zero.*: is not a regular file, pipe or FIFO"' \
  '"message":"load: .*is a directory"' 'huge.npy.*too large' 'short.npy.*truncated' 'dims.npy.*more than 16 dimensions' \
  'hdr.npy.*too large' 'rand.csv.*is not CSV text' '"save: .*/dev/full.*No space left' '"save_csv: .*/dev/full.*No space left'
count files_all_io_error 9 '"code":"io_error"'

# Printing views and empty tensors of many long axes is bounded: text mode
# summarises with fewer entries per axis, JSON mode needs a copy that does
# not fit (out_of_memory).
printf 'x = broadcast_to(arange(7), [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7])\nx\nones([23, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0])\nshape(x)\n' > "$TMP/views"
timeout "$LIMIT" "$BIN" --json -k < "$TMP/views" > "$TMP/json" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && valid_jsonl "$TMP/json" && grep -q '"out_of_memory".*printing this view needs a copy' "$TMP/json" \
   && grep -q '"data":\[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7\]' "$TMP/json"; then ok; else bad "views_16_axes (json): $(status_note $rc)"; head -c 300 "$TMP/json"; fi
timeout "$LIMIT" "$BIN" < "$TMP/views" > "$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'i64\[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7\]$' "$TMP/out" && grep -q 'f64\[23,4,5,6,7,8,9,10,11,12,13,14,15,16,0\]$' "$TMP/out" \
   && [ "$(wc -c < "$TMP/out")" -lt 4000000 ]; then ok; else bad "views_16_axes (text): $(status_note $rc), or not summarised"; head -c 300 "$TMP/out"; fi

# JSON input (SPEC 14): nesting 10^5 deep (arrays, objects, in a file and
# in from_json's text), a 1 GB file under a 256 MiB limit (refused before it
# is read: a sparse file), a text whose tensor is over the limit.
gen jdeep "b'[' * 100000 + b'1' + b']' * 100000"
gen jobj "b'{\"a\":' * 100000 + b'1' + b'}' * 100000"
gen jzeros "b'[' + b','.join([b'0'] * 60000) + b']'"
truncate -s 1G "$TMP/jbig"
gen jscript "b'load_json(\"$TMP/jdeep\")\nload_json(\"$TMP/jobj\")\nfrom_json(\'' + b'[' * 100000 + b'\')\n' + b':set max_memory 256M\nload_json(\"$TMP/jbig\")\n:set max_memory 200K\nload_json(\"$TMP/jzeros\")\nx = 1\nx\n'"
expect json_input 1 "$TMP/jscript" '"bad_argument".*nested more than 64 deep at line 1, column 65 ' \
  '"out_of_memory".*JSON file \(1073741824 bytes\) does not fit' '"out_of_memory","message":"load_json: [^"]*limit' '"data":1}'
count json_input_errors 5 '"ok":false'
# --arg: 10^5 open brackets (Linux allows 128 KiB in one argument, so a
# larger --arg never reaches tcalc), and a text over the limit.
timeout -k 5 "$LIMIT" "$BIN" -j --arg x "$(python3 -c "print('[' * 100000)")" -e x > "$TMP/json" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '"bad_argument","message":"--arg x: .*nested more than 64 deep' "$TMP/json"; then ok; else bad "arg_deep: $(status_note $rc)"; head -c 300 "$TMP/json"; fi
timeout -k 5 "$LIMIT" "$BIN" -j --max-memory 64K --arg x "$(cat "$TMP/jzeros")" -e x > "$TMP/json" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '"out_of_memory","message":"--arg x: .*larger than the memory limit' "$TMP/json"; then ok; else bad "arg_over_limit: $(status_note $rc)"; head -c 300 "$TMP/json"; fi

# .npz (SPEC 14): a real zip bomb (300 MB of zeros deflated to 300 KB)
# under a 256 MiB limit is out_of_memory before it is inflated; the same
# data declared as 128 bytes is out_of_memory once 256 MiB have inflated
# (into a scratch buffer, never all 300 MB);
# ../ and absolute names; an archive cut at every 97th byte.
python3 - "$TMP" <<'PY'
import struct, sys, zlib
tmp = sys.argv[1]
def npz(name, data, usize=None, crc=None):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    comp = c.compress(data) + c.flush()
    usize = len(data) if usize is None else usize
    crc = zlib.crc32(data) if crc is None else crc
    nm = name.encode()
    lh = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(comp), usize, len(nm), 0) + nm
    cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, crc, len(comp), usize, len(nm),
                     0, 0, 0, 0, 0, 0) + nm
    return lh + comp + cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(cd), len(lh) + len(comp), 0)
hdr = b"{'descr': '<f8', 'fortran_order': False, 'shape': (37500000,), }"
hdr = b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + hdr + b" " * (117 - len(hdr)) + b"\n"
small = b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + (b"{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }").ljust(117) + b"\n"
open(f"{tmp}/bomb.npz", "wb").write(npz("x.npy", hdr + bytes(300_000_000)))
open(f"{tmp}/bomb_lie.npz", "wb").write(npz("x.npy", small + bytes(300_000_000), len(small), zlib.crc32(small)))
open(f"{tmp}/dotdot.npz", "wb").write(npz("../../x.npy", small))
open(f"{tmp}/abs.npz", "wb").write(npz("/etc/x.npy", small))
good = npz("x.npy", small)
open(f"{tmp}/cuts.tc", "w").write("".join(f'load_npz("{tmp}/cut{i}.npz", "x")\n' for i in range(0, len(good), 7)))
for i in range(0, len(good), 7):
    open(f"{tmp}/cut{i}.npz", "wb").write(good[:i])
PY
printf ':set max_memory 256M\nload_npz("%s/bomb.npz", "x")\nload_npz("%s/bomb_lie.npz", "x")\nload_npz("%s/dotdot.npz", "x")\nload_npz("%s/abs.npz", "x")\n' \
  "$TMP" "$TMP" "$TMP" "$TMP" > "$TMP/npz.tc"
expect npz_bombs 1 "$TMP/npz.tc" '"out_of_memory".*inflates to 300000128 bytes, beyond the memory limit' \
  '"out_of_memory".*inflates to more than 268435[0-9]* bytes \(it declares 128\), beyond the memory limit' '"io_error".*dotdot.npz.*unsafe member name' '"io_error".*abs.npz.*unsafe member name'
expect npz_truncated 1 "$TMP/cuts.tc" '"io_error"'
count npz_truncated_all "$(grep -c . "$TMP/cuts.tc")" '"ok":false,"error":\{"code":"io_error"'

# load(path, mmap=true): a 2 GiB sparse .npy under a 256 MiB limit is
# reduced, sliced and indexed from the mapping; a file shorter than its
# header says is io_error before it is mapped (no SIGBUS).
python3 - "$TMP" <<'PY'
import struct, sys
tmp = sys.argv[1]
def npy(path, n, size):
    h = ("{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % n).encode().ljust(117) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + h)
        f.seek(size - 8)
        f.write(struct.pack("<d", 2.5))
npy(f"{tmp}/big.npy", 1 << 28, 128 + (8 << 28))
npy(f"{tmp}/short.npy", 1 << 20, 128 + (8 << 19))
PY
printf ':set max_memory 256M\nx = load("%s/big.npy", mmap=true)\nshape(x)\nreduce_sum(x)\nx[-2:]\nx[123456789]\nload("%s/big.npy")\nload("%s/short.npy", mmap=true)\n' \
  "$TMP" "$TMP" "$TMP" > "$TMP/mmap.tc"
expect mmap_big 1 "$TMP/mmap.tc" '"shape":\[1\],"data":\[268435456\]' '"data":2.5}' '"data":\[0.0,2.5\]' '"data":0.0}' \
  '"out_of_memory"' '"io_error".*short.npy.*truncated data: shape \[1048576\] of f64 needs 8388608 bytes, the file has 4194304'

# Every JSON outcome line says "ok", :caps too.
printf ':caps\n:help\n:vars\n:engine\n' > "$TMP/cmds"
expect commands_json 0 "$TMP/cmds" '^\{"ok":true,"type":"caps","engines":'
count commands_all_ok 4 '^\{"ok":true,'

finish
