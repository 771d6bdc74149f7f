#!/usr/bin/env python3
"""The shape of the tree, checked (docs/ARCHITECTURE.md). The Makefile names
the code's folders (FOLDERS) and what each may use (USES_folder); this checks
that every arrow between folders is one of those, that the folders stand one
way (no circle of folders), that no files call or include each other in a
circle, that no source file is over 1,000 lines and no function over 100. A module is a .c with its
.h; an arrow is an #include "x.h" or a call from one object into another (nm).
Run after `make` (it reads the objects). Prints TAP; exit 1 on a failure.
  scripts/layers.py [--verbose]"""
import collections, glob, os, re, subprocess, sys

MAX_LINES = 1000
MAX_FUNCTION = 100
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
verbose = '--verbose' in sys.argv


def makefile_folders():
    """FOLDERS and USES_* from the Makefile (continuation lines joined)."""
    text = re.sub(r'\\\n', ' ', open('Makefile').read())
    folders = re.search(r'^FOLDERS\s*:=(.*)$', text, re.M).group(1).split()
    uses = {f: set() for f in folders}
    for name, value in re.findall(r'^USES_(\S+)\s*:=(.*)$', text, re.M):
        uses[name] = set(value.split())
    return folders, uses


FOLDERS, USES = makefile_folders()
# the objects linked into agentbox; the gateway is its own executable
BINARIES = {'netfilter/gateway': 'agentbox-gateway'}


def folder_of(module):
    return os.path.dirname(module)


def objects_graph():
    """Call arrows between modules from the objects' symbols, per binary."""
    graph = collections.defaultdict(set)
    groups = collections.defaultdict(list)
    for d in FOLDERS:
        groups[BINARIES.get(d, 'agentbox')].append(d)
    # the gateway links a few of netfilter/policy and lib too
    groups['agentbox-gateway'] += ['lib', 'netfilter/policy']
    for folders in groups.values():
        defs, undefs = {}, collections.defaultdict(set)
        for d in folders:
            for c in glob.glob(f'{d}/*.c'):
                o = c[:-2] + '.o'
                if not os.path.exists(o):
                    continue
                out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
                for line in out.splitlines():
                    p = line.split()
                    if len(p) == 3 and p[1] in 'TDBRC':
                        defs.setdefault(p[2], o[:-2])
                    elif len(p) == 2 and p[0] == 'U':
                        undefs[o[:-2]].add(p[1])
        for m, syms in undefs.items():
            for s in syms:
                if s in defs and defs[s] != m:
                    graph[m].add(defs[s])
    return graph


def include_arrows(graph):
    """Include arrows: a quoted header is looked up in the including folder,
    then along its include path, as the compiler does."""
    headers = collections.defaultdict(list)
    for d in FOLDERS:
        for h in glob.glob(f'{d}/*.h'):
            headers[os.path.basename(h)].append(d)
    closure = {}

    def reach(f):
        if f not in closure:
            closure[f] = {f}
            for u in USES.get(f, ()):
                closure[f] |= reach(u)
        return closure[f]
    for d in FOLDERS:
        for f in glob.glob(f'{d}/*.[ch]'):
            for h in re.findall(r'#include "([^"/]+)\.h"', open(f, errors='replace').read()):
                homes = headers.get(h + '.h', [])
                home = d if d in homes else next((x for x in homes if x in reach(d)),
                                                 homes[0] if homes else None)
                if home and f'{home}/{h}' != f[:-2]:
                    graph[f[:-2]].add(f'{home}/{h}')


n = 0
failed = False


def tap(good, what, detail=()):
    global n, failed
    n += 1
    print(('ok' if good else 'not ok'), n, what)
    for line in detail:
        print('#', line)
    failed |= not good


def strongly_connected(graph):
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(' <-> '.join(sorted(comp)))
    for v in list(graph):
        if v not in index:
            strong(v)
    return sccs


graph = objects_graph()
include_arrows(graph)

unknown = sorted(f for f in USES if f not in FOLDERS or not os.path.isdir(f))
missing = sorted(d for top in ('lib', 'netfilter', 'oci', 'seccomp-profiles', 'runtime')
                 for d in [top] + [x[:-1] for x in glob.glob(f'{top}/*/')]
                 if glob.glob(f'{d}/*.[ch]') and d not in FOLDERS)
tap(not unknown and not missing, 'every code folder is named in the Makefile',
    [f'USES_{f} names no code folder' for f in unknown] +
    [f'{d} holds code but is not in FOLDERS' for d in missing])

wrong = sorted(f'{a} -> {b}' for a, bs in graph.items() for b in bs
               if folder_of(a) != folder_of(b) and folder_of(b) not in USES.get(folder_of(a), ()))
tap(not wrong, 'every arrow between folders is one the Makefile allows (USES_*)', wrong)

folder_graph = collections.defaultdict(set, {f: set(u) for f, u in USES.items()})
tap(not strongly_connected(folder_graph), 'no circle of folders', strongly_connected(folder_graph))

sccs = strongly_connected(graph)
tap(not sccs, 'no circle of files', sccs)

big = []
for d in FOLDERS:
    for f in glob.glob(f'{d}/*.[ch]'):
        lines = sum(1 for _ in open(f, errors='replace'))
        if lines > MAX_LINES:
            big.append(f'{f}: {lines} lines')
tap(not big, f'no source file over {MAX_LINES} lines', big)

def long_functions(path):
    """Functions over MAX_FUNCTION lines, from the line that names one to its
    closing brace: the house style opens and closes a function's body with a
    brace in the first column."""
    lines = open(path, errors='replace').read().split('\n')
    found, start = [], None
    for i, line in enumerate(lines):
        if line == '{' and start is None:
            j = i - 1   # back over a wrapped parameter list to the name's line
            while j > 0 and not re.match(r'^[A-Za-z_].*\(', lines[j]) and lines[j - 1].strip():
                j -= 1
            start = j
        elif line.startswith('}') and start is not None:
            if i - start + 1 > MAX_FUNCTION:
                names = [m for m in re.findall(r'([A-Za-z_]\w*)\s*\(', lines[start])
                         if m != '__attribute__']
                found.append(f'{path}:{start + 1}: {names[0] if names else "?"}: {i - start + 1} lines')
            start = None
    return found


long = [f for d in FOLDERS for c in sorted(glob.glob(f'{d}/*.c')) for f in long_functions(c)]
tap(not long, f'no function over {MAX_FUNCTION} lines', long)

if verbose:
    arrows = collections.Counter((folder_of(a), folder_of(b)) for a, bs in graph.items() for b in bs
                                 if folder_of(a) != folder_of(b))
    for (a, b), k in sorted(arrows.items()):
        print(f'# {a} -> {b}: {k}')
print(f'1..{n}')
sys.exit(1 if failed else 0)
