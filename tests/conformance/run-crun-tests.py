#!/usr/bin/python3
"""Run crun's python tests (crun/tests/test_*.py) one case at a time against
agentbox or runc (through bin/crun-compat), each with a timeout, and sweep
what a case leaves behind (processes and cgroups named after the suite's
container ids, test-tmp*), recording it as a leak.

usage: run-crun-tests.py agentbox|runc [test_file.py[:case]...]
Writes $ABCF_RESULTS/crun-<rt>/results.tsv (file, case, verdict, seconds,
leak; a rerun of a case appends, the last line counts) and
$ABCF_RESULTS/crun-<rt>/<file>.<case>.log for each case. Paths come from
env.sh's variables (ABCF_WORK, ABCF_RESULTS, ABCF_AGENTBOX)."""
import glob, os, signal, subprocess, sys, time

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
abcf_work = os.environ.get('ABCF_WORK', os.path.join(here, 'work'))
results = os.environ.get('ABCF_RESULTS', os.path.join(abcf_work, 'results'))
os.environ.setdefault('ABCF_AGENTBOX', os.path.join(repo, 'agentbox'))
os.environ.setdefault('ABCF_CONFIG', os.path.join(here, 'permissive.yaml'))
tests_dir = os.path.join(abcf_work, 'crun', 'tests')
if len(sys.argv) < 2 or sys.argv[1] not in ('agentbox', 'runc'):
    sys.exit(__doc__)
if not os.path.isdir(tests_dir):
    sys.exit('no %s: run fetch.sh first' % tests_dir)
rt = sys.argv[1]
out_dir = os.path.join(results, 'crun-' + rt)
work = os.path.join(abcf_work, 'run', 'crun-' + rt)
os.makedirs(out_dir, exist_ok=True)
os.makedirs(work, exist_ok=True)
env = dict(os.environ, PYTHONPATH=os.path.join(here, 'pyshim') + ':' + tests_dir,
           ABCF_TARGET=rt, OCI_RUNTIME=os.path.join(here, 'bin', 'crun-compat'),
           INIT=os.path.join(abcf_work, 'bin', 'crun-init'))
env.pop('RUN_TESTS', None)
TIMEOUT = int(os.environ.get('ABCF_CASE_TIMEOUT', '120'))


def cases_of(f):
    code = ('import sys, importlib; m = importlib.import_module(sys.argv[1]); '
            'print("\\n".join(getattr(m, "all_tests", {})))')
    r = subprocess.run([sys.executable, '-c', code, f[:-3]], env=env, cwd=work,
                       capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if l]


def leftovers():
    """(cgroup dirs, pids) named after the suite's container ids"""
    cgs = sorted(set(sum((glob.glob('/sys/fs/cgroup/' + '*/' * d + n) for d in (1, 2, 3)
                          for n in ('test-tmp*', 'test-v1-exec-cgroup-*')), []))
                 | set(glob.glob('/sys/fs/cgroup/freezer/frozen')))
    pids = []
    for p in glob.glob('/proc/[0-9]*/cgroup'):
        try:
            if 'test-tmp' in open(p).read():
                pid = int(p.split('/')[2])
                state = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()[0]
                if pid != os.getpid() and state != 'Z':
                    pids.append(pid)
        except OSError:
            pass
    return cgs, pids


def cmdline(pid):
    try:
        return '%d:%s' % (pid, open('/proc/%d/cmdline' % pid).read().replace('\0', ' ').strip())
    except OSError:
        return str(pid)


def sweep():
    cgs, pids = leftovers()
    fz = '/sys/fs/cgroup/freezer/frozen'
    for d in [c for c in cgs if 'freezer' in c] + ([fz] if os.path.isdir(fz) else []):
        try:
            open(os.path.join(d, 'freezer.state'), 'w').write('THAWED')
        except OSError:
            pass
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.2 if pids else 0)
    for c in cgs:
        for root, dirs, _ in sorted(os.walk(c, topdown=False)):
            try:
                os.rmdir(root)
            except OSError:
                pass
    return cgs, pids


selection = sys.argv[2:] or sorted(os.path.basename(p) for p in glob.glob(os.path.join(tests_dir, 'test_*.py')))
tsv = open(os.path.join(out_dir, 'results.tsv'), 'a')
for sel in selection:
    f, _, only = sel.partition(':')
    for case in ([only] if only else cases_of(f)):
        t0 = time.time()
        log = os.path.join(out_dir, '%s.%s.log' % (f[:-3], case))
        with open(log, 'w') as lf:
            proc = subprocess.Popen([sys.executable, os.path.join(tests_dir, f)], env=dict(env, RUN_TESTS=case),
                                    cwd=work, stdout=subprocess.PIPE, stderr=lf, text=True,
                                    start_new_session=True)
            try:
                tap, _ = proc.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                # the case and the runtime it started (a hung run) go together
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                tap = 'not ok 1 - %s # TIMEOUT after %d s\n' % (case, TIMEOUT)
            lf.write('\n--- TAP ---\n' + tap)
        if 'TIMEOUT' in tap:
            verdict = 'timeout'
        elif '\nnot ok' in '\n' + tap:
            verdict = 'fail'
        elif '#SKIP' in tap:
            verdict = 'skip'
        elif '\nok' in '\n' + tap:
            verdict = 'pass'
        else:
            verdict = 'error'
        cgs, pids = sweep()
        leak = ('cgroups=%d pids=%s' % (len(cgs), ','.join(cmdline(p) for p in pids))) if cgs or pids else ''
        line = '%s\t%s\t%s\t%.1f\t%s' % (f, case, verdict, time.time() - t0, leak)
        print(line, flush=True)
        tsv.write(line + '\n')
        tsv.flush()
