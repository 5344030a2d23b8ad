#!/usr/bin/env python3
"""After a statement that fails to parse, the next line is read as in a
fresh session (SPEC 18): a differential test of the line reader.

usage: fresh.py TCALC [--full] [--seed N]

Each bad line B (every reserved word in a dozen wrong places, headers cut
short, and random token sequences) is run alone in a fresh tcalc (-k
--json); where B is a finished statement that failed (its output is one
error, and not a bracket or block left open at the end of the input), the
lines after it must read as in a fresh session. So every such B is then
run followed by PROBE (session commands, a block, an overflow check), all
of them one after the other in ONE process, and the outcome must be each
B's own error followed by PROBE's outcome in a fresh session, line for
line (error lines moved by the lines before them). A B that leaves a
bracket open is left out: the next line continues it (SPEC 2). PROBE ends as the
session began (:clear, the settings put back). The sample (default) is
some 500 lines; --full about 10 times as many random ones.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

_ap = argparse.ArgumentParser(description="the line reader after a failed statement, against a fresh session")
_ap.add_argument("tcalc", nargs="?", default="build/tcalc")
_ap.add_argument("--full", action="store_true", help="ten times the random lines")
_ap.add_argument("--seed", type=int, default=47)
_args = _ap.parse_args()
TCALC, FULL, SEED = _args.tcalc, _args.full, _args.seed

KEYWORDS = ["def", "if", "then", "elif", "else", "end", "while", "do", "for", "in", "break",
            "continue", "return", "none"]
PROBE = """:set overflow check
i8(127) + i8(1)
:set overflow wrap
probe_v = 2
if probe_v > 1 then
  print(probe_v * 10)
end
def probe_f(a) = a + 1
probe_f(probe_v)
:vars
:set precision 3
1.0 / 3
:set precision 0
:clear
"""


def systematic():
    lines = []
    for kw in KEYWORDS:
        for tail in ["", " = 1", " x", " 1", " x y", " = = 1", " [1, 2]", " (", " )", " then", " do", " end",
                     " x then", " x do", " x = 1", " + 1", " ,"]:
            lines.append(kw + tail)
        lines += ["x = " + kw, "f(" + kw + ")", "[" + kw + "]", "1 + " + kw, kw + "(1)", "x." + kw]
    lines += ["while x", "while x y do", "while = do", "while x do do", "for i", "for i in", "for 1 in x do",
              "for i in x", "for i x do", "for end in x do", "if x", "if x y then", "if then", "if x else",
              "def f", "def f x", "def f(x) y", "def f(x) =", "def (x)", "def f(1)", "def f(x, x)",
              "def f(x=1, y)", "def if(x) = x", "def f(end) = 1", "elif x then", "else x", "x = end",
              "y = while", "x = 1 +", "x ==", "@", "1 2", "x = = 1", "1 = x", "f(x) = 1", "(x) = 1",
              "x +== 1", "x ** ** 2", "'open", "12abc", "1__0", "$", "x = [1, 2", "x = (1 + ]", "]",
              "a < b < c", "x > 1 & x < 5", "while true do y = = 1 end",
              "if true then 1 else = 2 end", "for i in [1] do break = 1 end"]
    return lines


VOCAB = KEYWORDS + ["x", "f", "i", "y", "1", "2.5", "=", "+", "-", "*", "==", "~", "(", ")", "[", "]", ",",
                    ":", "'s'", "+=", "..."]


def random_lines(n, rng):
    out = []
    for _ in range(n):
        k = rng.randint(1, 7)
        out.append(" ".join(rng.choice(VOCAB) for _ in range(k)))
    return out


def run(text):
    """tcalc's JSON outcome lines for text; None if it ran too long."""
    try:
        p = subprocess.run([TCALC, "-k", "--json"], input=text, capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode < 0 or p.stderr:
        sys.exit("fresh: tcalc failed (status %d) on %r: %s" % (p.returncode, text[:200], p.stderr[:400]))
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def brackets_open(b):
    """Brackets left open at the end of b, counted as the lexer does (a line
    that ends inside one continues on the next, error or not: SPEC 2)."""
    depth, quote = 0, None
    for c in b:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
    return depth > 0


def finished_failure(b, out):
    """B alone gave one error, and not the input ending inside a bracket or block."""
    if brackets_open(b) or out is None or len(out) != 1 or out[0].get("ok") is not False:
        return False
    return "is never closed" not in out[0]["error"]["message"]


def moved(outs, lines):
    """outcomes with their error lines moved down by lines"""
    res = []
    for o in outs:
        o = json.loads(json.dumps(o))
        if o.get("ok") is False and "line" in o["error"]:
            o["error"]["line"] += lines
        res.append(o)
    return res


def main():
    rng = random.Random(SEED)
    cands = systematic() + random_lines(4000 if FULL else 400, rng)
    probe_out = run(PROBE)
    if not probe_out or any(o.get("ok") is False and o["error"]["code"] != "integer_overflow" for o in probe_out):
        sys.exit("fresh: the probe itself does not run as expected: %s" % probe_out)
    bad = []
    for b in dict.fromkeys(cands):
        out = run(b + "\n")
        if finished_failure(b, out):
            bad.append((b, out))
    text, want, at = [], [], 0
    probe_lines = PROBE.count("\n")
    for b, out in bad:
        text.append(b + "\n" + PROBE)
        want += moved(out, at)
        want += moved(probe_out, at + 1)
        at += 1 + probe_lines
    got = run("".join(text))
    if got is None:
        sys.exit("fresh: the combined run did not finish")
    fails = 0
    if got != want:
        # find the first bad line whose outcome differs
        i = 0
        while i < min(len(got), len(want)) and got[i] == want[i]:
            i += 1
        pos, line_of = 0, None
        for b, out in bad:
            n = len(out) + len(probe_out)
            if pos + n > i:
                line_of = b
                break
            pos += n
        print("FAIL: after the bad line %r the outcome differs from a fresh session's" % line_of)
        print("  want: %s" % (json.dumps(want[i]) if i < len(want) else "(nothing)"))
        print("  got:  %s" % (json.dumps(got[i]) if i < len(got) else "(nothing)"))
        fails = 1
    print("reader: %d bad lines tried, %d finished failures each followed by the probe, %d failures"
          % (len(dict.fromkeys(cands)), len(bad), fails))
    sys.exit(1 if fails else 0)


main()
