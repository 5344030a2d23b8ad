#!/bin/sh
# Command-line behaviour of tcalc (SPEC 1, 6, 7, 8): modes, options, exit
# statuses, output streams, colour, the capability table, :help and :time.
# Usage: tests/cli/run.sh path/to/tcalc
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
export NO_COLOR=1
unset TCALC_HISTORY
n=0 fail=0

ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; }
# check NAME EXPECTED ACTUAL
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: expected [$2], got [$3]"; fi; }
# run ARGS... : runs tcalc with stdin from $tmp/in; sets $out, $err, $rc
run() {
  "$bin" "$@" < "$tmp/in" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
input() { printf '%s\n' "$@" > "$tmp/in"; }

# ---- the issue's "done when" examples ----
input '[1,2,3] / [1,0,1]'
run --json
check "json division by zero: exit" 1 "$rc"
check "json division by zero: one line" 1 "$(wc -l < "$tmp/out")"
check "json division by zero: stderr empty" "" "$err"
$PY -c '
import json, sys
e = json.loads(sys.stdin.read())["error"]
assert e["code"] == "division_by_zero" and e["index"] == [1], e
' < "$tmp/out" && ok || bad "json division by zero: code and index"
input '1 +'
run
check "syntax error exits 3" 3 "$rc"
input ''
run --no-such-option
check "unknown option exits 2" 2 "$rc"
case $err in *"unknown option '--no-such-option'"*) ok ;; *) bad "unknown option message: $err" ;; esac
run -Z
check "unknown short option exits 2" 2 "$rc"
run --precision
check "option without its value exits 2" 2 "$rc"
run --precision 99
check "bad --precision exits 2" 2 "$rc"
run --engine tpu
check "unknown engine exits 2" 2 "$rc"
run --max-memory lots
check "bad --max-memory exits 2" 2 "$rc"

# ---- SPEC 6.1 and 6.2 examples, verbatim ----
"$bin" -j -e 'a = [1, 2, 3, 4]' -e 'a / [1, 1, 0, 1]' > "$tmp/out" 2>&1
check "SPEC 6.2 error example" \
  '{"ok":false,"error":{"code":"division_by_zero","message":"div: integer divisor is zero at index [2]","op":"div","dtype":"i64","engine":"cpu","line":1,"column":3,"index":[2]}}' \
  "$(cat "$tmp/out")"
"$bin" -e 'a = [1, 2, 3, 4]' -e 'a / [1, 1, 0, 1]' > "$tmp/out" 2> "$tmp/err"
check "SPEC 6.1 error example: stdout" "" "$(cat "$tmp/out")"
printf '%s\n' 'error[division_by_zero]: div: integer divisor is zero at index [2] (i64, cpu)' \
  '  a / [1, 1, 0, 1]' '    ^' > "$tmp/want"
cmp -s "$tmp/want" "$tmp/err" && ok || bad "SPEC 6.1 error example: $(cat "$tmp/err")"
check "SPEC 6.1 text example" "$(printf '[[ 0,  1],\n [ 1, 20]]  i64[2,2]')" "$("$bin" -e '[[1, 2], [3, 40]] / 2')"
check "SPEC 6.2 success example" '{"ok":true,"dtype":"i64","shape":[4],"data":[-3,3,3,-3]}' \
  "$("$bin" -j -e '[-7, -7, 7, 7] / [2, -2, 2, -2]')"
check "SPEC 6.2 string example" '{"ok":true,"type":"string","value":"i32"}' "$("$bin" -j -e 'dtype(i32(1))')"

# ---- modes ----
check "-e repeated" "$(printf '2\n6')" "$("$bin" -e 'x = 2' -e 'x' -e 'x * 3')"
check "-e with ; and newlines" "$(printf '1\n2\n3')" "$("$bin" -e "$(printf '1; 2\n3')")"
printf 'y = 5\n' > a.tc
printf 'y * 2\n' > b.tc
check "files run in one session" 10 "$("$bin" a.tc b.tc)"
input 'y + 1'
run a.tc -
check "- reads stdin among files" 6 "$out"
input '1' '2'
run
check "batch from stdin: no prompt, no banner" "$(printf '1\n2')" "$out"
run -q
check "-q in batch changes nothing" "$(printf '1\n2')" "$out"
: > "$tmp/in"
run
check "empty input: exit 0" 0 "$rc"
check "empty input: no output" "" "$out$err"
run nonexistent.tc
check "unreadable file exits 2" 2 "$rc"
case $err in *"cannot read nonexistent.tc"*) ok ;; *) bad "unreadable file message: $err" ;; esac
mkdir adir
run adir
check "a directory as FILE exits 2" 2 "$rc"
run nonexistent.tc a.tc
check "stops at the unreadable file" "" "$out"
printf 'y\n' > c.tc
run -k nonexistent.tc a.tc c.tc
check "-k goes on after an unreadable file: exit" 2 "$rc"
check "-k goes on after an unreadable file: output" 5 "$out"

# ---- stop at the first error unless -k; exit status by the first failure ----
input '1' 'nope' '2' '1 +' '3'
run
check "stops at the first error: output" 1 "$out"
check "stops at the first error: exit" 1 "$rc"
run -k
check "-k: output" "$(printf '1\n2\n3')" "$out"
check "-k: exit status of the first failure (runtime)" 1 "$rc"
input '1 +' 'nope'
run -k
check "-k: exit status of the first failure (syntax)" 3 "$rc"
input '1; nope; 2'
run
check "stops within a line too" 1 "$out"
check "-e stops at the first error" 1 "$("$bin" -e '1' -e 'nope' -e '2' 2>/dev/null)"

# ---- output streams ----
input '1' 'nope' '2'
run -k
check "text: results on stdout" "$(printf '1\n2')" "$out"
case $err in "error[undefined_name]: nope is not defined"*) ok ;; *) bad "text: error on stderr: $err" ;; esac
case $err in *"--> <stdin>:2:1"*) ok ;; *) bad "text: error location: $err" ;; esac
run -k --json
check "json: stderr empty" "" "$err"
check "json: one line per statement" 3 "$(wc -l < "$tmp/out")"
case $err$out in *"$(printf '\033')"*) bad "colour with NO_COLOR set" ;; *) ok ;; esac
env -u NO_COLOR "$bin" -e 'nope' > /dev/null 2> "$tmp/err"
case $(cat "$tmp/err") in *"$(printf '\033')"*) bad "colour when stderr is not a terminal" ;; *) ok ;; esac

# ---- options ----
check "--version" "tcalc" "$("$bin" --version | head -1 | cut -d' ' -f1)"
# the second line names the build's engines, as --caps lists them
case $("$bin" --version | sed -n 2p) in
  "engines: cpu"|"engines: cpu cuda") ok ;;
  *) bad "--version: no 'engines: cpu[ cuda]' line: $("$bin" --version | tr '\n' '|')" ;;
esac
"$bin" --help > "$tmp/out" 2>&1
check "--help exits 0" 0 $?
case $(cat "$tmp/out") in *"usage: tcalc"*"--json"*"--keep-going"*) ok ;; *) bad "--help text" ;; esac
check "--precision" "0.333" "$("$bin" --precision 3 -e '1 / 3.0')"
check "--precision 0 is the shortest" "0.3333333333333333" "$("$bin" --precision 0 -e '1 / 3.0')"
big='a = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]; b = [a, a, a, a, a, a, a, a, a, a]; c = [b, b, b, b, b, b, b, b, b, b]; [c, c]'
check "summarised over 1000 elements (2 + 12 + 72 lines with ...)" 86 "$("$bin" -e "$big" | grep -c '\.\.\.')"
check "--full prints every element" 2000 "$("$bin" --full -e "$big" | tr -cs '0-9\n' ' ' | wc -w | awk '{print $1 - 5}')"
check "json is never summarised" 2000 "$("$bin" -j -e "$big" | $PY -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(sum(len(r) for a in d for b in a for r in b))')"
check "--max-memory" out_of_memory "$("$bin" -j --max-memory 1K -e '[0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128] * 2' | $PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')"
check "options after operands" 10 "$("$bin" a.tc -k b.tc)"

# ---- engines ----
if "$bin" --caps --json | $PY -c 'import json,sys; c=json.load(sys.stdin); sys.exit(0 if any(o["dtypes"]["cuda"] for o in c["ops"]) else 1)'; then
  echo "note: this build has CUDA support; engine_unavailable checks skipped"
else
  "$bin" --engine cuda -j -e '1' > "$tmp/out" 2>&1
  check "--engine cuda without CUDA: exit 1" 1 $?
  check "--engine cuda without CUDA: code" engine_unavailable "$($PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])' < "$tmp/out")"
  check "--engine auto falls back to cpu" cpu "$("$bin" --engine auto -e ':engine')"
  check ":engine cuda without CUDA" engine_unavailable "$("$bin" -j -e ':engine cuda' | $PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')"
fi

# The CUDA engine is a plugin (libtcalc-cuda.so) loaded only when asked for:
# a start on the CPU engine maps nothing of it.
LD_DEBUG=files "$bin" -e '1 + 1' > /dev/null 2> "$tmp/ld"
check "a cpu start does not load the CUDA plugin" 0 "$(grep -c 'libtcalc-cuda' "$tmp/ld")"
TCALC_CUDA_LIB=/nonexistent/libtcalc-cuda.so "$bin" --engine cuda -e '1' > "$tmp/out" 2> "$tmp/err"
check "--engine cuda with no plugin: exit 1" 1 $?
case $(cat "$tmp/err") in
  *"engine cuda: this build of tcalc has no cuda engine"*|*"engine cuda: cannot load its plugin: /nonexistent/libtcalc-cuda.so: "*) ok ;;
  *) bad "--engine cuda with no plugin: $(cat "$tmp/err")" ;;
esac
check "--engine auto with no plugin: cpu" cpu "$(TCALC_CUDA_LIB=/nonexistent/libtcalc-cuda.so "$bin" --engine auto -e ':engine')"

# ---- --semantics (SPEC 19): the option, the environment, their errors ----
"$bin" --semantics python -e 1 > /dev/null 2> "$tmp/err"
check "--semantics python: usage error" 2 $?
case $(cat "$tmp/err") in *"--semantics must be tcalc, numpy, jax, torch or tenferro, not 'python'"*) ok ;; *) bad "--semantics python: $(cat "$tmp/err")" ;; esac
TCALC_SEMANTICS=perl "$bin" -e 1 > /dev/null 2>&1
check "TCALC_SEMANTICS=perl: usage error" 2 $?
check "TCALC_SEMANTICS=jax: in force" "semantics   jax" "$(TCALC_SEMANTICS=jax "$bin" -e ':set' | grep semantics)"
check "--semantics wins over TCALC_SEMANTICS" "[0]  i32[1]" "$(TCALC_SEMANTICS=jax "$bin" --semantics numpy -e 'i32([5]) // 0' 2>/dev/null)"
check "a warning goes to stderr, not stdout" "warning: divide by zero encountered in floor_divide" \
  "$("$bin" --semantics numpy -e 'i32([5]) // 0' 2>&1 >/dev/null)"
check "warnings keep exit status 0" 0 "$("$bin" --semantics numpy -e 'i32([5]) // 0' >/dev/null 2>&1; echo $?)"
check "--caps names the semantics" "Semantics in force: torch." "$("$bin" --semantics torch --caps | sed -n 2p)"

# ---- --caps (SPEC 7) ----
"$bin" --list-functions > funcs
"$bin" --caps --json > caps.json
check "--caps --json is one line" 1 "$(wc -l < caps.json)"
$PY - funcs caps.json <<'EOF' && ok || bad "--caps --json structure"
import json, sys
funcs = open(sys.argv[1]).read().split()
caps = json.load(open(sys.argv[2]))
assert list(caps) == ["engines", "ops", "semantics"], list(caps)
assert caps["semantics"] == "tcalc", caps["semantics"]   # the semantics in force (SPEC 19)
assert caps["engines"] == ["cpu", "cuda"], caps["engines"]
dtypes = ["bool", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64", "u8", "u16", "u32", "u64"]
names = [o["op"] for o in caps["ops"]]
assert len(names) == len(set(names))
for o in caps["ops"]:
    assert list(o) == ["op", "dtypes"] and list(o["dtypes"]) == ["cpu", "cuda"], o
    for e, ds in o["dtypes"].items():
        assert ds == [d for d in dtypes if d in ds], (o["op"], e, ds)   # table order, no repeats
    assert o["op"] in funcs
for op in ("add", "div", "reduce_sum", "cast", "where"):
    assert op in names, op
    assert o["dtypes"]["cpu"], op
div = next(o for o in caps["ops"] if o["op"] == "div")
assert div["dtypes"]["cpu"] == dtypes[1:], div
EOF
"$bin" --caps > caps.txt
check "--caps exits 0" 0 $?
missing=""
for op in $($PY -c 'import json,sys; print(" ".join(o["op"] for o in json.load(open("caps.json"))["ops"]))'); do
  grep -q "^$op " caps.txt || missing="$missing $op"
done
check "--caps text lists every op" "" "$missing"
check ":caps is --caps" "$(cat caps.txt)" "$("$bin" -e ':caps')"

# ---- :help (SPEC 2.3, 8): every function listed and described ----
"$bin" -e ':help' > help.txt
missing=""
for f in $(cat funcs); do
  grep -qw -- "$f" help.txt || missing="$missing $f"
  "$bin" -e ":help $f" > one.txt 2>&1 || missing="$missing :help-$f"
  grep -q '(' one.txt || missing="$missing :help-$f-signature"
done
check ":help lists and describes every function" "" "$missing"
case $("$bin" -e ':help div') in *"div(a, b)"*"operator: a / b"*"truncate toward zero"*"cpu"*"i8"*) ok ;; *) bad ":help div" ;; esac
case $("$bin" -e ':help sum') in *"another name for reduce_sum"*"axis=none"*) ok ;; *) bad ":help sum" ;; esac
case $("$bin" -e ':help i32') in *"i32(x)"*"cast"*) ok ;; *) bad ":help i32" ;; esac
"$bin" -e ':help nosuch' > /dev/null 2>&1
check ":help of an unknown name exits 1" 1 $?
$PY -c 'import json,sys; o=json.load(sys.stdin); assert o["ok"] and o["type"] == "help" and "reduce_sum" in o["text"]' \
  < "$("$bin" -j -e ':help' > help.json; echo help.json)" && ok || bad ":help in JSON"

# ---- :time (SPEC 8) ----
line=$("$bin" -j -e ':time [1, 2, 3] * 2')
echo "$line" | grep -Eq '^\{"ok":true,"type":"time","median_s":[0-9.e+-]+,"runs":[0-9]+,"engine":"cpu"\}$' && ok || bad ":time JSON form: $line"
echo "$line" | $PY -c 'import json,sys; o=json.load(sys.stdin); assert o["runs"] >= 5 and o["median_s"] > 0' && ok || bad ":time runs"
case $("$bin" -e ':time 1 + 1') in "median "*" over "*" runs (cpu)") ok ;; *) bad ":time text form" ;; esac
"$bin" -j -e ':time 1 / 0' > "$tmp/out"
check ":time of a failing statement exits 1" 1 $?
check ":time error column points into the command" 9 "$($PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["column"])' < "$tmp/out")"
"$bin" -e ':time' > /dev/null 2>&1
check ":time without a statement" 1 $?

# ---- reading pipes, FIFOs and standard input ("-") (issue 53) ----
check "load_json(\"-\") from a pipe" 3 "$(echo '[1, 2]' | "$bin" -e 'sum(load_json("-"))')"
check "load_csv(\"-\") from a pipe" "10.0" "$(printf '1,2\n3,4\n' | "$bin" -e 'sum(load_csv("-"))')"
"$bin" -e 'save("'"$tmp"'/p.npy", [1.5, 2])'
check "load(\"-\") of .npy from a pipe" "[1.5, 2.0]  f64[2]" "$(cat "$tmp/p.npy" | "$bin" -e 'load("-")')"
check "load(\"-\", mmap=true) from a pipe" "[1.5, 2.0]  f64[2]" "$(cat "$tmp/p.npy" | "$bin" -e 'load("-", mmap=true)')"
check "/dev/stdin from a pipe" "[10]  i64[1]" "$(echo '[5]' | "$bin" -e 'load_json("/dev/stdin") * 2')"
mkfifo "$tmp/fifo"
(echo '[7, 8]' > "$tmp/fifo" &)
check "a FIFO" "[7, 8]  i64[2]" "$("$bin" -e 'load_json("'"$tmp"'/fifo")')"
timeout -s INT 1 "$bin" -e 'load_json("'"$tmp"'/fifo")' > /dev/null 2> "$tmp/err"
grep -q 'interrupted while waiting for a writer' "$tmp/err" && ok || bad "Ctrl-C ends the wait for a FIFO's writer: $(cat "$tmp/err")"
echo 'load_json("-")' | "$bin" > /dev/null 2> "$tmp/err"
check "\"-\" while the statements come from stdin: a failed statement" 1 $?
grep -q 'standard input holds the statements' "$tmp/err" && ok || bad "\"-\" with statements on stdin: message"
(head -c 3000000 /dev/zero | tr '\0' '1' > "$tmp/fifo" &)
"$bin" -e ':set max_memory 1M' -e 'load_csv("'"$tmp"'/fifo")' > /dev/null 2> "$tmp/err"
grep -q 'out_of_memory.*memory limit' "$tmp/err" && ok || bad "an endless pipe stops at the memory limit: $(cat "$tmp/err")"

# ---- robustness: nothing typed crashes or hangs ----
printf '1 +\0 2\n[1, 2\0]\n:help \0\n' > "$tmp/in"
run -k
[ "$rc" -le 3 ] && ok || bad "NUL bytes: exit $rc"
$PY -c 'print("(" * 5000 + "1" + ")" * 5000)' > "$tmp/in"
run
check "deep nesting is a syntax error" 3 "$rc"
$PY -c 'print("[" * 5000 + "1" + "]" * 5000)' > "$tmp/in"
run -j
[ "$rc" -le 3 ] && ok || bad "deep list nesting: exit $rc"
$PY -c 'print("-" * 100000 + "1")' > "$tmp/in"
run
[ "$rc" -le 3 ] && ok || bad "long prefix chain: exit $rc"
$PY -c 'print("[" + ", ".join(str(i) for i in range(200000)) + "]")' > "$tmp/in"
run -j
check "a 200000-element literal" 0 "$rc"
printf '\377\376 + 1\n:foo\377\n' > "$tmp/in"
run -k -j
$PY -c '
import json, sys
for l in open(sys.argv[1], encoding="utf-8"): json.loads(l)
' "$tmp/out" && ok || bad "invalid UTF-8 input gives valid JSON"

# ---- output errors ----
if [ -w /dev/full ]; then
  "$bin" -e '1' > /dev/full 2> "$tmp/err"
  check "write error exits 2" 2 $?
  case $(cat "$tmp/err") in *"cannot write output"*) ok ;; *) bad "write error message: $(cat "$tmp/err")" ;; esac
fi
# A closed pipe ends the run without a signal.
$PY -c 'print("\n".join(["[1, 2, 3]"] * 100000))' > "$tmp/in"
st=$( { "$bin" < "$tmp/in"; echo $? > "$tmp/st"; } | head -1 > /dev/null; cat "$tmp/st")
case $st in 0|2) ok ;; *) bad "closed pipe: exit $st (a signal?)" ;; esac

# --help, -h, --version, --caps and --caps --json write through the same
# path as results (issue 20): a closed pipe is status 2 without a word, not
# death by SIGPIPE (141); a full disk is status 2 and "cannot write output".
for mode in --help -h --version --caps "--caps --json"; do
  # shellcheck disable=SC2086
  st=$($PY -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)   # the reader is gone before tcalc writes
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
print(p.returncode if p.returncode >= 0 else 128 - p.returncode, len(p.stderr))
' "$bin" $mode)
  check "$mode to a closed pipe" "2 0" "$st"
  if [ -w /dev/full ]; then
    # shellcheck disable=SC2086
    "$bin" $mode > /dev/full 2> "$tmp/err"
    check "$mode to a full disk: status" 2 $?
    case $(cat "$tmp/err") in *"cannot write output"*) ok ;; *) bad "$mode to a full disk: message [$(cat "$tmp/err")]" ;; esac
  fi
done

# ---- one strict size parser: --max-memory and :set max_memory ----
for v in nan NaN inf 0x1p4 0x10 1.9999 1.5 1e3 " 5" +5 -5 0 "" 9223372036854775808 1K5 G 1.G .5G 99999999999999999999; do
  "$bin" --max-memory "$v" -e 1 > /dev/null 2>&1
  check "--max-memory '$v' is refused" 2 $?
  case $v in *" "*|"") continue ;; esac   # a command's words are split at blanks
  check ":set max_memory '$v' is refused" bad_argument "$("$bin" -j -e ":set max_memory $v" | $PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])' 2>&1)"
done
for pair in 9007199254740993:9007199254740993 9223372036854775807:9223372036854775807 1.5K:1536 2G:2147483648 \
            64k:65536 1KiB:1024 512MB:536870912 0.5T:549755813888 1.0000000001G:1073741824 100:100; do
  v=${pair%%:*} want=${pair#*:}
  got=$("$bin" -j --max-memory "$v" -e ':set' | $PY -c 'import json,sys; print(json.load(sys.stdin)["max_memory"])' 2>&1)
  check "--max-memory $v" "$want" "$got"
  got=$("$bin" -j -e ":set max_memory $v" -e ':set' | tail -n 1 | $PY -c 'import json,sys; print(json.load(sys.stdin)["max_memory"])' 2>&1)
  check ":set max_memory $v" "$want" "$got"
done

# ---- string escapes: \n \t \\ \" \' \xHH; any other is a syntax error ----
check "escapes \\x69\\x33\\x32" 'i32' "$("$bin" -j -e 'dtype(cast(1, "\x69\x33\x32"))' | $PY -c 'import json,sys; print(json.load(sys.stdin)["value"])')"
$PY - "$bin" <<'PY' && ok || bad "escapes \\\" \\' \\\\ \\n \\t in a string"
import json, subprocess, sys
stmt = r"""cast(1, "a\"b\x27c\\d\ne\tf\'g")"""
out = subprocess.run([sys.argv[1], "-j", "-e", stmt], capture_output=True, text=True).stdout
m = json.loads(out)["error"]["message"]
# the dtype is quoted back with control characters shown as ?
assert 'unknown dtype "a"b\'c\\d?e?f\'g"' in m, m
PY
for bad_escape in '"\x00a"' '"\q"' '"\x8f"' '"\x4"' '"a\0"' '"\u0041"'; do
  "$bin" -e "cast(1, $bad_escape)" > /dev/null 2> "$tmp/err"
  check "string $bad_escape: status" 3 $?
  case $(head -n 1 "$tmp/err") in "error[syntax_error]: unknown escape"*) ok ;; *) bad "string $bad_escape: $(head -n 1 "$tmp/err")" ;; esac
done

# ---- stack's errors name stack ----
"$bin" -e 'x = zeros([1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1])' -e 'stack([x, x])' > /dev/null 2> "$tmp/err"
case $(head -n 1 "$tmp/err") in "error[bad_argument]: stack: "*) ok ;; *) bad "stack of 16-D tensors: $(head -n 1 "$tmp/err")" ;; esac

# ---- CSV numbers: decimal in every dtype ----
for v in 0x10 0x1p3 infinity 1e 1.2.3 --1 "1;2" 1_000; do
  printf '%s\n' "$v" > "$tmp/h.csv"
  for dt in f64 f32 i64; do
    check "load_csv '$v' as $dt" io_error "$("$bin" -j -e "load_csv(\"h.csv\", dtype=\"$dt\")" | $PY -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')"
  done
done
printf '1.5e3, -.5, +2., inf, -INF, NaN, 7\n' > "$tmp/h.csv"
check "load_csv decimals" '[1500.0,-0.5,2.0,"inf","-inf","nan",7.0]' "$("$bin" -j -e 'load_csv("h.csv")' | $PY -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["data"], separators=(",",":")))')"

# ---- mean of integers reads them in place: no f64 copy of the input ----
check "mean of a 10^9-element i64 tensor under a 10G limit" '{"ok":true,"dtype":"f64","shape":[],"data":5.0}' \
  "$("$bin" -j --max-memory 10G -e 'mean(broadcast_to(5, [1000000000]))')"
check "mean of integers has the bits of the mean of their f64 copy" "true true true true" \
  "$("$bin" -e 'x = i64(randn([3000001], seed=3) * 1e12)' -e 'y = i16(randn([7, 300001], seed=3) * 1000)' \
     -e 'mean(x) == mean(f64(x))' -e 'all(mean(y, axis=1) == mean(f64(y), axis=1))' \
     -e 'all(mean(y, axis=0) == mean(f64(y), axis=0))' -e 'mean(y > 0) == mean(f64(y > 0))' | tr '\n' ' ' | sed 's/ $//')"
check "mean of i8 is exact" '{"ok":true,"dtype":"f64","shape":[],"data":-1.5}' "$("$bin" -j -e 'mean(i8([-128, 125]))')"

# SPEC 13: check and saturate judge each element's exact result, so the answer and the first overflowing
# index are the same for every thread count (46341^2 is the first square above the i32 maximum)
cat > "$tmp/ovf.tc" <<'TCEOF'
a = i32(arange(400000))
:set overflow check
a * a
reduce_sum(reshape(a * 8, [400, 1000]), 1)
reduce_sum(reshape(a, [400, 1000]), 0)
i16(a)
:set overflow saturate
reduce_sum(a * a)
reduce_sum(reshape(a * a, [1000, 400]), 0)
i64(reshape(a, [400, 1000])) @ i64(reshape(a, [1000, 400])) * 1000000
:set overflow check
cumsum(a * 8)
cumsum(reshape(a, [1000, 400]) * 100, 0)
b = i64(reshape(a[:40000], [200, 200]))
einsum("ij,jk->ik", b, b * 100000000)
:set overflow saturate
cumsum(reshape(a * 4000, [1000, 400]), 0)
einsum("ij,jk->ik", b, b * 100000000)
einsum("ij,jk->ik", b, b)
:set overflow check
i8(a)
reduce_sum(-(a * 5000 - 2147483647))
:set overflow saturate
reduce_sum(i64(i8(a)))
TCEOF
for t in 1 2 4; do TCALC_THREADS=$t "$bin" --json -k "$tmp/ovf.tc" > "$tmp/ovf$t.out" 2>/dev/null; done
check "overflow check: the same for 1 and 2 threads" "" "$(cmp "$tmp/ovf1.out" "$tmp/ovf2.out" 2>&1)"
check "overflow check: the same for 1 and 4 threads" "" "$(cmp "$tmp/ovf1.out" "$tmp/ovf4.out" 2>&1)"
check "overflow check: first index of a * a" '"index":[46341]' "$(sed -n 1p "$tmp/ovf1.out" | grep -o '"index":\[[0-9]*\]')"
check "overflow check: first row whose sum overflows" '"index":[268]' "$(sed -n 2p "$tmp/ovf1.out" | grep -o '"index":\[[0-9]*\]')"
check "overflow saturate: sums clamp" '2147483647' "$(sed -n 5p "$tmp/ovf1.out" | grep -o '"data":[0-9]*' | cut -d: -f2)"
check "overflow check: first running sum over the i32 maximum" '"index":[23170]' "$(sed -n 8p "$tmp/ovf1.out" | grep -o '"index":\[[0-9]*\]')"
check "overflow check: first running sum over it along axis 0" '"index":[327, 73]' "$(sed -n 9p "$tmp/ovf1.out" | grep -o '"index":\[[0-9, ]*\]')"
check "overflow check: first element a cast cannot hold" '"index":[128]' "$(sed -n 14p "$tmp/ovf1.out" | grep -o '"index":\[[0-9, ]*\]')"
check "overflow check: first einsum output over the i64 maximum" '"index":[115, 36]' "$(sed -n 10p "$tmp/ovf1.out" | grep -o '"index":\[[0-9, ]*\]')"

# ---- list literals of numbers are read packed (one array, no node per
# element); with a parenthesised element the same list is read element by
# element. Both must give the same tensor, bit for bit, for random lists:
# ints, floats, mixed, '-' before a number, nested rows, i64's extremes,
# inf and nan, and the same text inside a def and a loop ----
out=$($PY - "$bin" <<'PYEOF'
import random, re, subprocess, sys
rng = random.Random(7)
def num():
    r = rng.random()
    if r < 0.3: return str(rng.randint(-10**6, 10**6))
    if r < 0.6: return repr(rng.uniform(-1e6, 1e6))
    if r < 0.7: return rng.choice(["-9223372036854775808", "9223372036854775807", "inf", "-inf", "nan", "-0.0", "0",
                                   "1e308", "5e-324", "1_000", "-1e-320", "- 5"])
    return repr(rng.random() * 10 ** rng.randint(-300, 300))
lines = []
for k in range(300):
    shape = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    def build(d):
        if d == len(shape): return num()
        return "[" + ", ".join(build(d + 1) for _ in range(shape[d])) + "]"
    text = build(0)
    lines += [text, re.sub(r"^(\[+)([^,\]]+)", r"\1(\2)", text, count=1)]
p = subprocess.run([sys.argv[1], "--json", "-k"], input="\n".join(lines) + "\n", capture_output=True, text=True)
outs = p.stdout.splitlines()
bad = [(lines[i], outs[i], outs[i + 1]) for i in range(0, len(outs) - 1, 2) if outs[i] != outs[i + 1] or '"ok":false' in outs[i]]
print(len(lines) // 2, len(outs) // 2, len(bad), bad[:1])
PYEOF
)
check "packed list literals read as element by element" "300 300 0 []" "$out"
out=$(printf 'def f() = [1.5, -2, 3]\nf() + f()\nfor i in [1, 2] do print([i, 0.5, -1]) end\n' | "$bin" 2>&1)
check "packed list literal in a def and a loop" "[ 3.0, -4.0,  6.0]  f64[3] [ 1.0,  0.5, -1.0]  f64[3] [ 2.0,  0.5, -1.0]  f64[3]" "$(printf '%s\n' "$out" | tr '\n' ' ' | sed 's/ $//')"

echo "cli: $n checks, $fail failures"
[ "$fail" -eq 0 ]
