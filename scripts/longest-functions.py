#!/usr/bin/env python3
"""The longest C functions, by lines from the line that names the function
to its closing brace (as ctags --fields=+ne counts). Usage:
  scripts/longest-functions.py [-n N] [DIR_OR_FILE ...]   (default: src repl backend, top 10)
A directory is read whole, its subdirectories too: every .c, .h, .cu and .cuh.
A function starts at a top-level line holding "name(" whose body's "{" opens
brace depth 1; comments, strings, character literals and preprocessor lines are skipped."""
import os
import re
import sys


def strip(text):
    """text with comments, strings and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(path):
    text = open(path, encoding='utf-8', errors='replace').read()
    lines, raw = strip(text).split('\n'), text.split('\n')
    depth, paren, head, start = 0, 0, None, None
    name_re = re.compile(r'([A-Za-z_]\w*)\s*\(')
    in_directive = False
    for no, line in enumerate(lines, 1):
        directive = in_directive or line.lstrip().startswith('#')
        # a macro's continuation, read on the raw line: a comment inside the
        # macro ends its lines with the backslash too
        in_directive = directive and raw[no - 1].rstrip().endswith('\\')
        if directive:   # preprocessor lines, continuations included
            continue
        for col, ch in enumerate(line):
            # the last name( at top level before the body names the function
            # (not a macro's use on a line before it, as TC_FOR_ALL(K_SORT, _))
            if depth == 0 and paren == 0 and ch == '(':
                m = None
                for m in name_re.finditer(line[:col + 1]):
                    pass
                if m and m.end() == col + 1 and m.group(1) not in ('if', 'while', 'for', 'switch', 'return', 'sizeof'):
                    head, start = m.group(1), no
            if ch == '(':
                paren += 1
            elif ch == ')':
                paren -= 1
            elif ch == ';' and depth == 0 and paren == 0:
                head = None
            elif ch == '{':
                depth += 1
                if depth == 1 and head is None:
                    start = None   # a struct, enum or initializer
            elif ch == '}':
                depth -= 1
                if depth == 0 and head is not None and start is not None:
                    yield no - start + 1, head, path
                    head = start = None
                elif depth == 0:
                    head = None


# what the build compiles: C and CUDA sources and the headers they include
SOURCES = ('.c', '.h', '.cu', '.cuh')


def main(argv):
    top, paths = 10, []
    args = iter(argv)
    for a in args:
        if a == '-n':
            top = int(next(args))
        else:
            paths.append(a)
    files = []
    for p in paths or ['src', 'repl', 'backend']:
        if os.path.isdir(p):
            for d, _, names in sorted(os.walk(p)):
                files += sorted(os.path.join(d, f) for f in names if f.endswith(SOURCES))
        else:
            files.append(p)
    found = sorted((f for path in files for f in functions(path)), key=lambda f: (-f[0], f[1]))
    for n, name, path in found[:top]:
        print(f'{n:5d}  {name}  {path}')


if __name__ == '__main__':
    main(sys.argv[1:])
