#!/usr/bin/env python3
"""Runs a generated 1000-statement script through `tcalc --json -k` and reads
every line back with a strict JSON parser (SPEC 6.2): RFC 8259 only (no NaN or
Infinity constants, no duplicate keys, no raw control characters, UTF-8), one
line per statement, the schema of success and error objects, integers exact,
and the same bytes on a second run.  Usage: strict.py path/to/tcalc"""
import json
import random
import subprocess
import sys

DTYPES = ["bool", "i8", "i16", "i32", "i64", "bf16", "f16", "f32", "f64"]
INT_RANGE = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
CODES = {"syntax_error", "undefined_name", "unknown_function", "bad_argument",
         "literal_overflow", "dtype_unsupported", "shape_mismatch", "invalid_axis",
         "division_by_zero", "negative_exponent", "index_out_of_bounds",
         "empty_reduction", "out_of_memory", "engine_unavailable", "io_error",
         "interrupted"}


def reject_constant(name):
    raise ValueError("non-standard JSON constant " + name)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % keys)
    return dict(pairs)


def strict_loads(text):
    return json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates)


def generate(rng):
    """(statement, check) pairs; check(obj) raises on a wrong answer."""
    out = []

    def exact_int(v, dt):
        def check(o):
            assert o["ok"] and o["dtype"] == dt and o["shape"] == [] and o["data"] == v, (o, v)
            assert type(o["data"]) is int
        return check

    def code(c):
        def check(o):
            assert not o["ok"] and o["error"]["code"] == c, (o, c)
        return check

    def ok_dtype(dt):
        def check(o):
            assert o["ok"] and o.get("dtype") == dt, (o, dt)
        return check

    def any_ok(o):
        pass

    gens = []

    def gen(f):
        gens.append(f)
        return f

    @gen
    def int_literal():
        v = rng.choice([rng.randrange(-2**63, 2**63), -2**63, 2**63 - 1, 2**53 + 1,
                        -(2**53 + 1), 0, rng.randrange(-1000, 1000)])
        text = rng.choice([str(v), "%d" % v if v >= 0 else "-%d" % -v])
        return "%s" % text, exact_int(v, "i64")

    @gen
    def typed_extreme():
        dt = rng.choice(list(INT_RANGE))
        bits = INT_RANGE[dt]
        v = rng.choice([-2**(bits - 1), 2**(bits - 1) - 1, 0, -1])
        return "%s(%d)" % (dt, v), exact_int(v, dt)

    @gen
    def wrap():
        dt = rng.choice(list(INT_RANGE))
        bits = INT_RANGE[dt]
        a = rng.randrange(-2**(bits - 1), 2**(bits - 1))
        b = rng.randrange(-2**(bits - 1), 2**(bits - 1))
        r = (a * b) % 2**bits
        if r >= 2**(bits - 1):
            r -= 2**bits
        return "%s(%d) * %s(%d)" % (dt, a, dt, b), exact_int(r, dt)

    @gen
    def floats():
        dt = rng.choice(["bf16", "f16", "f32", "f64"])
        vals = [rng.choice(["nan", "inf", "-inf", "0.1", "-0.0", "1e300", "5e-324", "65504",
                            "1e-8", "3.14159", str(rng.uniform(-1e6, 1e6))]) for _ in range(rng.randrange(0, 6))]
        return "%s([%s])" % (dt, ", ".join(vals)), ok_dtype(dt)

    @gen
    def nested():
        rows, cols = rng.randrange(1, 4), rng.randrange(0, 4)
        lit = "[" + ", ".join("[" + ", ".join(str(rng.randrange(-99, 99)) for _ in range(cols)) + "]"
                              for _ in range(rows)) + "]"
        def check(o, rows=rows, cols=cols):
            assert o["ok"] and o["shape"] == [rows, cols] and len(o["data"]) == rows
        return lit + " * " + rng.choice(["1", "2", "1.5", "-1"]), check

    @gen
    def bools():
        return rng.choice(["[true, false] & [true, true]", "true", "!false", "[1, 2] < [2, 1]",
                           "isnan([nan, 1.0])", "any([false])"]), ok_dtype("bool")

    @gen
    def errors():
        return rng.choice([
            ("[1, 2] / [1, 0]", code("division_by_zero")),
            ("1 +", code("syntax_error")),
            ("[[1], [2, 3]]", code("syntax_error")),
            ("nope", code("undefined_name")),
            ("nope(1)", code("unknown_function")),
            ("sum([1], bogus=1)", code("bad_argument")),
            ("99999999999999999999", code("literal_overflow")),
            ("1.5 & 1", code("dtype_unsupported")),
            ("[1, 2] + [1, 2, 3]", code("shape_mismatch")),
            ("sum([1], 3)", code("invalid_axis")),
            ("2 ** -1", code("negative_exponent")),
            ("reduce_max([])", code("empty_reduction")),
            (":bogus", code("bad_argument")),
        ])

    @gen
    def strings():
        # messages and string values with quotes, backslashes, control
        # characters, non-ASCII and invalid UTF-8 must come out escaped and valid
        s = rng.choice(['"tab\\there"', '"quote\\"d"', '"back\\\\slash"', '"caf\u00e9"', '"\x01ctl"',
                        '"nul"', '"\u65e5\u672c"'])
        return "cast(1, %s)" % s, code("bad_argument")

    @gen
    def info():
        return rng.choice(["dtype(f16([1]))", "dtype(1)", "dtype(true)"]), lambda o: None

    @gen
    def reductions():
        dt = rng.choice(DTYPES[1:])
        return "reduce_sum(%s([[1, 2], [3, 4]]), %d)" % (dt, rng.choice([0, 1, -1])), ok_dtype(dt)

    @gen
    def casts():
        src = rng.choice(["[nan, inf, -inf, 3e9, -0.5]", "[300, -300, 65535]", "[true, false]"])
        dt = rng.choice(DTYPES)
        return "%s(%s)" % (dt, src), ok_dtype(dt)

    for _ in range(1000):
        out.append(rng.choice(gens)())
    return out


def check_schema(o):
    assert isinstance(o, dict) and o.get("ok") in (True, False), o
    if o["ok"]:
        if "type" in o:
            assert o["type"] == "string" and list(o) == ["ok", "type", "value"], o
            assert isinstance(o["value"], str)
        else:
            assert list(o) == ["ok", "dtype", "shape", "data"], o
            assert o["dtype"] in DTYPES and all(type(d) is int and d >= 0 for d in o["shape"])

            def walk(d, depth):
                if depth == len(o["shape"]):
                    if o["dtype"] == "bool":
                        assert type(d) is bool, d
                    elif o["dtype"] in INT_RANGE:
                        bits = INT_RANGE[o["dtype"]]
                        assert type(d) is int and -2**(bits - 1) <= d < 2**(bits - 1), d
                    else:
                        assert type(d) is float or d in ("nan", "inf", "-inf"), d
                    return
                assert isinstance(d, list) and len(d) == o["shape"][depth], (d, o["shape"])
                for x in d:
                    walk(x, depth + 1)
            walk(o["data"], 0)
    else:
        assert list(o) == ["ok", "error"], o
        e = o["error"]
        allowed = ["code", "message", "op", "dtype", "engine", "line", "column", "index"]
        assert list(e)[:2] == ["code", "message"], e
        assert [k for k in allowed if k in e] == list(e), e       # known keys, in order
        assert e["code"] in CODES, e
        assert isinstance(e["message"], str) and e["message"], e
        if "line" in e:
            assert type(e["line"]) is int and e["line"] >= 1 and type(e["column"]) is int and e["column"] >= 1, e
        if "index" in e:
            assert all(type(i) is int for i in e["index"]), e


def main():
    tcalc = sys.argv[1] if len(sys.argv) > 1 else "build/tcalc"
    rng = random.Random(20240229)
    cases = generate(rng)
    script = "".join(stmt + "\n" for stmt, _ in cases).encode("utf-8")
    runs = []
    for _ in range(2):
        p = subprocess.run([tcalc, "--json", "-k"], input=script, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
        runs.append(p)
    p = runs[0]
    failures = 0
    if p.stderr:
        print("FAIL: stderr is not empty in JSON mode:", p.stderr[:200])
        failures += 1
    if p.returncode not in (1, 3):
        print("FAIL: exit status %d (errors were expected)" % p.returncode)
        failures += 1
    if runs[1].stdout != p.stdout:
        print("FAIL: a second run gave different bytes")
        failures += 1
    text = p.stdout.decode("utf-8")           # strict: raises on invalid UTF-8
    if not text.endswith("\n"):
        print("FAIL: output does not end with a newline")
        failures += 1
    lines = text.split("\n")[:-1]
    if len(lines) != len(cases):
        print("FAIL: %d lines for %d statements" % (len(lines), len(cases)))
        return 1
    for i, (line, (stmt, check)) in enumerate(zip(lines, cases)):
        try:
            o = strict_loads(line)
            check_schema(o)
            check(o)
            if not o["ok"] and "line" in o["error"]:
                assert o["error"]["line"] == i + 1, ("line number", o["error"]["line"], i + 1)
        except Exception as ex:  # report and go on
            failures += 1
            if failures <= 10:
                print("FAIL: statement %d: %s\n  got: %s\n  why: %r" % (i + 1, stmt, line[:300], ex))
    print("json: %d statements, %d lines parsed strictly, %d failures" % (len(cases), len(lines), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
