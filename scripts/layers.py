#!/usr/bin/env python3
"""The shape of the tree, checked (docs/ARCHITECTURE.md): the code folders'
arrows point only down the layers, no files call or include each other in a
circle, and no source file is over 1,000 lines. A module is a .c with its .h;
an arrow is an #include "x.h" or a call from one object into another (nm).
Run after `make` (it reads the objects). Prints TAP; exit 1 on a failure.
  scripts/layers.py [--verbose]"""
import collections, glob, os, re, subprocess, sys

ORDER = ['lib', 'netfilter', 'oci', 'seccomp-profiles', 'runtime']
MAX_LINES = 1000
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
verbose = '--verbose' in sys.argv

def modules_of(folder):
    return sorted({f[:-2] for f in glob.glob(f'{folder}/*.[ch]')})

defs, undefs = {}, collections.defaultdict(set)
for d in ORDER:
    for c in glob.glob(f'{d}/*.c'):
        o = c[:-2] + '.o'
        if not os.path.exists(o):
            continue
        for line in subprocess.run(['nm', o], capture_output=True, text=True).stdout.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRC':
                defs.setdefault(p[2], o[:-2])
            elif len(p) == 2 and p[0] == 'U':
                undefs[o[:-2]].add(p[1])

graph = collections.defaultdict(set)
for m, syms in undefs.items():
    for s in syms:
        if s in defs and defs[s] != m:
            graph[m].add(defs[s])
for d in ORDER:
    for f in glob.glob(f'{d}/*.[ch]'):
        for h in re.findall(r'#include "([^"/]+)\.h"', open(f, errors='replace').read()):
            for d2 in ORDER:
                if os.path.exists(f'{d2}/{h}.h'):
                    if f'{d2}/{h}' != f[:-2]:
                        graph[f[:-2]].add(f'{d2}/{h}')
                    break

n = 0
failed = False
def tap(good, what, detail=()):
    global n, failed
    n += 1
    print(('ok' if good else 'not ok'), n, what)
    for line in detail:
        print('#', line)
    failed |= not good

up = sorted(f'{a} -> {b}' for a, bs in graph.items() for b in bs
            if ORDER.index(b.split('/')[0]) > ORDER.index(a.split('/')[0]))
tap(not up, 'no arrow points up the layers (' + ' <- '.join(ORDER) + ')', up)

index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(100000)
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); on.add(v)
    for w in graph.get(v, ()):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(' <-> '.join(sorted(comp)))
for v in list(graph):
    if v not in index:
        strong(v)
tap(not sccs, 'no circle of files', sccs)

big = []
for d in ORDER + ['netfilter/gateway']:
    for f in glob.glob(f'{d}/*.[ch]'):
        lines = sum(1 for _ in open(f, errors='replace'))
        if lines > MAX_LINES:
            big.append(f'{f}: {lines} lines')
tap(not big, f'no source file over {MAX_LINES} lines', big)

if verbose:
    arrows = collections.Counter((a.split('/')[0], b.split('/')[0]) for a, bs in graph.items() for b in bs
                                 if a.split('/')[0] != b.split('/')[0])
    for (a, b), k in sorted(arrows.items()):
        print(f'# {a} -> {b}: {k}')
print(f'1..{n}')
sys.exit(1 if failed else 0)
