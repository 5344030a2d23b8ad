#!/bin/sh
# Checks man/tcalc.1 against the program: it renders without a single groff
# warning, its FUNCTIONS section names every function of the registry (the
# list comes from the binary, which builds it from src/ops.def), and every
# EXAMPLES entry prints exactly what the page shows.
# Usage: scripts/check-man.sh path/to/tcalc
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
man=$(cd "$(dirname "$0")/.." && pwd)/man/tcalc.1
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
fail=0

# 1. groff, all warnings on, on the default device and on a terminal.
for dev in "" -Tutf8; do
  warnings=$(groff -man -ww -z $dev "$man" 2>&1)
  if [ -n "$warnings" ]; then
    echo "FAIL: groff -man -ww -z $dev man/tcalc.1:"
    echo "$warnings" | head -20
    fail=1
  fi
done

# 2 and 3 in Python: the function list and the examples.
"$bin" --list-functions > /dev/null || { echo "FAIL: $bin --list-functions"; exit 1; }
"$PY" - "$bin" "$man" <<'EOF' || fail=1
import os, re, subprocess, sys, tempfile

tcalc, man = sys.argv[1], sys.argv[2]
src = open(man, encoding="utf-8").read()

def section(name):
    m = re.search(r"^\.SH " + re.escape(name) + r"\s*$(.*?)(?=^\.SH |\Z)", src, re.M | re.S)
    if not m:
        print("FAIL: man/tcalc.1 has no .SH %s section" % name)
        sys.exit(1)
    return m.group(1)

failures = 0

# Every function of the registry is named in FUNCTIONS as a call, in bold:
# at the start of a .B/.BI/.BR line, or after \fB or \fP.
funcs = subprocess.run([tcalc, "--list-functions"], stdout=subprocess.PIPE, check=True,
                       universal_newlines=True).stdout.split()
body = section("FUNCTIONS")
missing = [f for f in funcs
           if not re.search(r'(?:\\f[BP]|^\.B[IR]?[ \t]+"?)' + re.escape(f) + r"\(", body, re.M)]
if missing:
    print("FAIL: FUNCTIONS in man/tcalc.1 lacks: " + " ".join(missing))
    failures += 1
if len(funcs) < 10:
    print("FAIL: --list-functions gave only %d names" % len(funcs))
    failures += 1

# EXAMPLES: in each .EX/.EE block, a line "$ command" (continued while it
# ends with a backslash) is followed by its expected output, up to the next
# (SCRIPTING's and PIPELINES' blocks are run the same way)
# "$ " line or the end of the block.
def unescape(line):
    line = line.replace("\\(aq", "'").replace("\\(dq", '"').replace("\\-", "-").replace("\\&", "")
    return line.replace("\\e", "\\")

examples = []
blocks = []
for name in ("SCRIPTING", "INTEGERS", "PIPELINES", "EXAMPLES"):
    blocks += re.findall(r"^\.EX\s*\n(.*?)^\.EE\s*$", section(name), re.M | re.S)
for block in blocks:
    lines = [unescape(l) for l in block.split("\n")[:-1]]
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            print("FAIL: EXAMPLES: output without a command: %r" % lines[i])
            failures += 1
            i += 1
            continue
        cmd = lines[i][2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd + "\n" + lines[i]   # sh joins the lines
        i += 1
        out = []
        while i < len(lines) and not lines[i].startswith("$ "):
            out.append(lines[i])
            i += 1
        examples.append((cmd, out))

env = dict(os.environ, NO_COLOR="1", PATH=os.path.dirname(tcalc) + os.pathsep + os.environ.get("PATH", ""))
env.pop("TCALC_HISTORY", None)
with tempfile.TemporaryDirectory() as tmp:
    for cmd, want in examples:
        got = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, cwd=tmp, env=env,
                             universal_newlines=True).stdout.split("\n")
        if got and got[-1] == "":
            got.pop()
        if got != want:
            failures += 1
            print("FAIL: EXAMPLES: $ %s" % cmd)
            print("  the page shows:\n    " + "\n    ".join(want))
            print("  tcalc printed:\n    " + "\n    ".join(got))
if not examples:
    print("FAIL: no examples found in EXAMPLES")
    failures += 1
print("man: %d functions named, %d examples run, %d failures" % (len(funcs), len(examples), failures))
sys.exit(1 if failures else 0)
EOF
exit $fail
