#!/usr/bin/python3
"""Side by side: $ABCF_RESULTS/crun-runc/results.tsv vs crun-agentbox/results.tsv
(ABCF_TSV_runc / ABCF_TSV_agentbox name other files). Prints totals and every
case that passes on runc and not on agentbox (and the reverse). A case run
more than once counts with its last result."""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
results = os.environ.get('ABCF_RESULTS', os.path.join(os.environ.get('ABCF_WORK', os.path.join(here, 'work')), 'results'))
def load(rt):
    d = {}
    for line in open(os.environ.get('ABCF_TSV_' + rt, os.path.join(results, 'crun-' + rt, 'results.tsv'))):
        f = line.rstrip('\n').split('\t')
        d[(f[0], f[1])] = (f[2], f[4] if len(f) > 4 else '')
    return d
a, r = load('agentbox'), load('runc')
for name, d in (('runc', r), ('agentbox', a)):
    c = {}
    for v, _ in d.values():
        c[v] = c.get(v, 0) + 1
    print(name, len(d), ' '.join('%s=%d' % kv for kv in sorted(c.items())))
print('\npass on runc, not on agentbox:')
for k in sorted(r):
    if r[k][0] == 'pass' and a.get(k, ('missing',))[0] != 'pass':
        print('  %-22s %-45s %s %s' % (k[0], k[1], a.get(k, ('missing', ''))[0], a.get(k, ('', ''))[1]))
print('\npass on agentbox, not on runc:')
for k in sorted(a):
    if a[k][0] == 'pass' and r.get(k, ('missing',))[0] != 'pass':
        print('  %-22s %-45s %s %s' % (k[0], k[1], r.get(k, ('missing', ''))[0], r.get(k, ('', ''))[1]))
print('\nleaks on agentbox:')
for k in sorted(a):
    if a[k][1]:
        print('  %-22s %-45s %s' % (k[0], k[1], a[k][1]))
