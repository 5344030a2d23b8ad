#!/usr/bin/env python3
# Writes tests/golden/overflow_scans.tc (cumsum, cumprod and einsum on MIN/MAX edges of every integer
# dtype, under check and saturate) and checks tcalc's JSON output for it against exact Python integers:
# under check the error and the first overflowing index, under saturate the clamped exact values.
# Usage: scripts/gen-overflow-scans.py tests/golden/overflow_scans.tc build/tcalc
# (then scripts/update-golden.sh overflow_scans). Needs NumPy (object arrays only).
import json, subprocess, sys, itertools
DT = [('i8',8,True),('i16',16,True),('i32',32,True),('i64',64,True),('u8',8,False),('u16',16,False),('u32',32,False),('u64',64,False)]
def rng(b,s): return (-(1<<(b-1)), (1<<(b-1))-1) if s else (0,(1<<b)-1)
def lit(d,x):  # nested list literal
    if isinstance(x,list): return '['+', '.join(lit(d,e) for e in x)+']'
    return str(x)
def flat(x):
    return [e for r in x for e in flat(r)] if isinstance(x,list) else [x]
def shape(x):
    return [len(x)]+shape(x[0]) if isinstance(x,list) else []
import numpy as np
def scan(x, axis, prod):
    a = np.array(x, dtype=object)
    if axis is None: a = a.reshape(-1); axis = 0
    out = np.empty_like(a)
    a2 = np.moveaxis(a, axis, -1); o2 = np.moveaxis(out, axis, -1)
    for idx in np.ndindex(a2.shape[:-1]):
        acc = 1 if prod else 0
        for j in range(a2.shape[-1]):
            acc = acc*a2[idx+(j,)] if prod else acc+a2[idx+(j,)]
            o2[idx+(j,)] = acc
    return out
def ein(spec, ops):
    arrs = [np.array(o, dtype=object) for o in ops]
    ins, outs = spec.split('->')
    ins = ins.split(',')
    if '...' in spec:   # only '...X' with one broadcast dim here
        ins = [t.replace('...', 'Z') for t in ins]; outs = outs.replace('...', 'Z')
    size = {}
    for t, a in zip(ins, arrs):
        for c, n in zip(t, a.shape): size[c] = n
    summed = sorted(set(''.join(ins)) - set(outs))
    res = np.empty([size[c] for c in outs], dtype=object)
    for oi in np.ndindex(res.shape):
        tot = 0
        for si in itertools.product(*[range(size[c]) for c in summed]):
            env = dict(zip(outs, oi)); env.update(zip(summed, si))
            p = 1
            for t, a in zip(ins, arrs): p *= a[tuple(env[c] for c in t)]
            tot += p
        res[oi] = tot
    return res
cases = []  # (dtype, text, exact ndarray)
for d,b,s in DT:
    L,H = rng(b,s)
    def add(text, val): cases.append((d,b,s,text,np.array(val,dtype=object)))
    def cs(x, axis=None, prod=False):
        f = 'cumprod' if prod else 'cumsum'
        t = f'{f}({d}({lit(d,x)}))' if axis is None else f'{f}({d}({lit(d,x)}), axis={axis})'
        add(t, scan(x, axis, prod))
    def es(spec, *ops):
        add(f'einsum("{spec}", ' + ', '.join(f'{d}({lit(d,o)})' for o in ops) + ')', ein(spec, ops))
    cs([H, 0, 1, L])
    cs([[0, H], [H, 1], [1, 0]], 0)
    cs([[H, 1], [1, 1]], 1)
    cs([[H, 1], [1, 1]], -1)
    cs([2, H, 1], prod=True)
    cs([[H, 2], [2, 1]], 0, True)
    cs([H, H, 0], prod=True)
    if s:
        cs([H, 1, -2]); cs([L, -1, 2]); cs([L, -1, -1], prod=True)
    es('i,i->', [H, 1], [1, 1])
    es('ij,jk->ik', [[1, 1], [H, 1]], [[1], [1]])
    es('ij->j', [[1, H], [1, 1]])
    es('ii->', [[H, 0], [0, 1]])
    es('i,i,i->', [H, 1], [H, 1], [0, 1])
    es('ij,jk->ik', [[1, 2], [3, 4]], [[5, 6], [7, 8]])
    es('...i,...i->...', [[H, 0], [1, 1]], [[1, 1], [H, 1]])
    if s:
        es('i,i,i->', [H], [H], [-1])
        es('i->', [L, -1])
        es('i,i,i->', [H, H], [H, H], [1, -1])
with open(sys.argv[1], 'w') as f:
    f.write('# SPEC 13: scans and einsum under the overflow policy: each output element is judged by its exact\n'
            '# value (a running sum or product, a sum of products), not by the order of operations.\n')
    for pol in ('check', 'saturate'):
        f.write(f':set overflow {pol}\n')
        cur = None
        for d,b,s,t,v in cases:
            if d != cur: f.write(f'# {d} under {pol}\n'); cur = d
            f.write(t + '\n')
    f.write(':set overflow wrap\n')
# check the JSON output
out = subprocess.run([sys.argv[2], '--json', '-k'], stdin=open(sys.argv[1]), capture_output=True, text=True).stdout.splitlines()
res = [json.loads(l) for l in out]
res = [r for r in res if r.get('type') != 'settings']
bad = 0
k = 0
for pol in ('check', 'saturate'):
    for d,b,s,t,v in cases:
        r = res[k]; k += 1
        L,H = rng(b,s)
        fl = list(v.reshape(-1))
        over = [i for i,e in enumerate(fl) if not (L <= e <= H)]
        if pol == 'check' and over:
            idx = list(np.unravel_index(over[0], v.shape)) if v.ndim else []
            ok = not r['ok'] and r['error']['code'] == 'integer_overflow' and r['error'].get('index', []) == [int(i) for i in idx]
        else:
            exp = [min(max(e, L), H) for e in fl]
            got = r.get('data')
            got = flat(got) if isinstance(got, list) else [got]
            ok = r['ok'] and [int(g) for g in got] == exp and r['dtype'] == d
        if not ok: bad += 1; print('MISMATCH', pol, t, r, file=sys.stderr)
print(f'{k} lines checked, {bad} mismatches')
sys.exit(1 if bad else 0)
