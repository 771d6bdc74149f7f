"""samephases.py NAME=TRACE... — the same phases of `agentbox run` and of the
same-work floor (bench/samework.c), from `perf trace -T -f -e
brk,mkdir,clone,clone3,pivot_root,execve,exit_group -o TRACE`.

Both do the bundle's work in the same order, so the same markers cut both
traces: the runtime's first brk (its start, after the exec), its first
mkdir of a cgroup directory (mode 0755), its clone of the container's init
(the process that calls pivot_root), the init's pivot_root, its execve of
the program, the program's exit_group, the runtime's exit_group. Only these
syscalls are traced (a filter in the kernel), so the other syscalls of a
phase pay nothing. Each phase's time is the median over the traces of one
NAME; the last columns are each NAME's extra over the floor (samework).
"""
import re
import statistics
import sys
from collections import defaultdict

# "  1351380.723 ( 1.153 ms): agentbox/17685 clone(clone_flags: ...) = 17686 (agentbox)"
LINE = re.compile(r"^\s*(\d+\.\d+)\s+\(\s*([\d.]*)\s*(?:ms)?\s*\):\s+(.*?)/(\d+)\s+(.*)$")
RET = re.compile(r"\)\s+=\s+(\d+)")

PHASES = [
    "start: config.json, (agentbox: CLI, policy, seccomp cache, state, cgroup layout)",
    "cgroup directories, cpuset, device rules, (agentbox: pooled netns, state) -> clone",
    "clone -> pivot_root: cgroup join, namespaces, mounts, /dev (agentbox's runtime meanwhile: nft, sentry)",
    "pivot_root -> program exec: masked/read-only paths, hostname, caps (agentbox: seccomp, start)",
    "the program (/bin/true)",
    "teardown: reap, (agentbox: sentry stop, pool refill, state), rmdir cgroups, exit",
]


def parse(path):
    ev = []
    with open(path) as f:
        for l in f:
            m = LINE.match(l)
            if not m:
                continue
            t = float(m.group(1))
            d = float(m.group(2)) if m.group(2) else 0.0
            ev.append((int(m.group(4)), t, t + d, m.group(5)))
    return ev


def cut(path):
    ev = parse(path)
    if not ev:
        sys.exit(f"{path}: no perf trace lines")
    parent = next(p for p, _, _, s in ev if s.startswith("brk("))
    init = next((p for p, _, _, s in ev if s.startswith("pivot_root(")), None)
    if init is None:
        sys.exit(f"{path}: no pivot_root")
    markers = [
        (lambda p, s: p == parent and s.startswith("brk("), "start"),
        (lambda p, s: p == parent and s.startswith("mkdir(") and "IRUGO|IXUGO|IWUSR" in s, "start"),
        (lambda p, s: p == parent and s.startswith("clone") and RET.search(s) and
         int(RET.search(s).group(1)) == init, "start"),
        (lambda p, s: p == init and s.startswith("pivot_root("), "end"),
        (lambda p, s: p == init and s.startswith("execve("), "end"),
        (lambda p, s: p == init and s.startswith("exit_group("), "start"),
        (lambda p, s: p == parent and s.startswith("exit_group("), "start"),
    ]
    times, k = [], 0
    for pid, start, end, s in ev:
        if k < len(markers) and markers[k][0](pid, s):
            times.append(start if markers[k][1] == "start" else end)
            k += 1
    if k < len(markers):
        sys.exit(f"{path}: marker {k + 1} not found")
    durs = [(times[i + 1] - times[i]) / 1e3 for i in range(len(PHASES))]
    return durs, (times[-1] - times[0]) / 1e3


def main():
    by = defaultdict(list)
    for a in sys.argv[1:]:
        name, path = a.split("=", 1)
        by[name].append(cut(path))
    names = list(by)
    med = {}
    for n in names:
        runs = by[n]
        med[n] = ([statistics.median(r[0][i] for r in runs) for i in range(len(PHASES))],
                  statistics.median(r[1] for r in runs))
    floor = "samework" if "samework" in med else None
    print(f"# the same phases, medians of {', '.join(f'{len(by[n])} {n}' for n in names)} "
          "perf trace runs (ms, from the runtime's first brk to its exit_group)")
    print("")
    extra = [n for n in names if n != floor] if floor else []
    print("| phase | " + " | ".join(f"{n} ms" for n in names) + "".join(f" | {n} − {floor}" for n in extra) + " |")
    print("| --- |" + " ---: |" * (len(names) + len(extra)))
    for i, label in enumerate(PHASES):
        row = " | ".join(f"{med[n][0][i] * 1e3:.2f}" for n in names)
        row += "".join(f" | {(med[n][0][i] - med[floor][0][i]) * 1e3:+.2f}" for n in extra)
        print(f"| {label} | {row} |")
    row = " | ".join(f"{med[n][1] * 1e3:.2f}" for n in names)
    row += "".join(f" | {(med[n][1] - med[floor][1]) * 1e3:+.2f}" for n in extra)
    print(f"| total (the phases' sum; the medians of the phases need not add up to it) | {row} |")


if __name__ == "__main__":
    main()
