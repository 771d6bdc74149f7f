#!/usr/bin/env python3
"""phases.py TRACE... — the phases of `agentbox run` from `strace -f -tt -T -o TRACE`.

Finds marker syscalls of the runtime process, its container init and its DNS
sentry and prints the time between consecutive markers. strace slows every
syscall down (several µs each, more on a loaded VM), so syscall-heavy phases
are inflated; use the proportions, and bench/profile.sh's ablation for costs.
Markers that are not in the trace (another code version, a feature off) are
skipped and their phase merges into the next one. With several traces, each
phase's median over them is shown.
"""
import statistics
import re
import sys
from datetime import datetime

LINE = re.compile(r"^(\d+)\s+(\d\d:\d\d:\d\d\.\d+)\s+(.*)$")
DUR = re.compile(r"<(\d+\.\d+)>\s*$")


def ts(s):
    t = datetime.strptime(s, "%H:%M:%S.%f")
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6


def phases(path):
    ev = []
    for l in open(path):
        m = LINE.match(l)
        if m:
            # a marker counts when its syscall returns: start + <duration> when
            # strace shows both on one line
            d = DUR.search(m.group(3))
            t = ts(m.group(2)) + (float(d.group(1)) if d and "resumed>" not in m.group(3) else 0)
            ev.append((int(m.group(1)), t, m.group(3)))
    if not ev:
        sys.exit(f"{path}: no strace -f -tt lines")
    ev[0] = (ev[0][0], ts(LINE.match(open(path).readline()).group(2)), ev[0][2])
    parent = ev[0][0]
    init = sentry = None
    for pid, t, s in ev:
        if pid == parent and "CLONE_NEWNS" in s and ("clone(" in s or "clone3(" in s):
            m = re.search(r"= (\d+)", s)
            init = int(m.group(1)) if m else None
            break
    seen_pipe = False
    for pid, t, s in ev:
        if pid == parent and s.startswith("pipe2("):
            seen_pipe = True
        elif seen_pipe and pid == parent and s.startswith("clone(") and "= " in s:
            sentry = int(re.search(r"= (\d+)", s).group(1))
            break

    # (label of the phase that ENDS at this marker, predicate)
    markers = [
        ("exec, dynamic linking (7 libraries), CLI", lambda p, s: p == parent and "config.json" in s and s.startswith("openat")),
        ("config.json parse, policy, built-in profile parse", lambda p, s: p == parent and s.startswith("seccomp(")),
        ("seccomp compile (libseccomp) + export to memfd", lambda p, s: p == parent and s.startswith("mkdir") and "0711" in s),
        ("state dir + lock", lambda p, s: p == parent and s.startswith('statfs("/sys/fs/cgroup"')),
        ("cgroups: detect layout, mkdir per hierarchy, device rules", lambda p, s: p == parent and s.startswith("socketpair(")),
        ("clone into new namespaces (pid, net, mnt, uts, ipc)", lambda p, s: p == parent and "CLONE_NEWNS" in s),
        ("cgroup join (cgroup.procs per hierarchy)", lambda p, s: p == parent and "NETLINK_NETFILTER" in s),
        ("nftables ruleset: one batch, an ack per message", lambda p, s: p == parent and s.startswith("sendmsg(3")),
        ("init: mounts, pivot_root, masked paths, caps, seccomp load (runtime waits)", lambda p, s: p == parent and s.startswith("pipe2(")),
        ("DNS sentry: fork, netns, sockets, nft set, helper fork, cap drop → ready", lambda p, s: p == parent and '"1"' in s and ("read(" in s or "read resumed" in s)),
        ("(bookkeeping)", lambda p, s: p == parent and "state.json.tmp" in s and s.startswith("openat")),
        ("state.json write + fsync + rename", lambda p, s: p == parent and s.startswith("renameat")),
        ("start: release the init, execve", lambda p, s: p == init and s.startswith("execve(")),
        ("container process: /bin/true", lambda p, s: p == init and s.startswith("+++ exited")),
        ("teardown: reap, stop sentry, rmdir cgroups, remove state, exit", lambda p, s: p == parent and s.startswith("+++ exited")),
    ]
    t0 = ev[0][1]
    prev = t0
    rows = {}
    i = 0
    for label, pred in markers:
        for j in range(i, len(ev)):
            p, t, s = ev[j]
            if pred(p, s):
                rows[label] = t - prev
                prev, i = t, j + 1
                break
    return rows, prev - t0, [m[0] for m in markers]


def main():
    runs = [phases(p) for p in sys.argv[1:]]
    labels = [l for l in runs[0][2] if any(l in r[0] for r in runs)]
    total = statistics.median(r[1] for r in runs)
    print(f"# phases of `agentbox run`, median of {len(runs)} strace -f -tt -T trace(s); "
          f"total {total * 1e3:.1f} ms under strace")
    print("| phase | ms | share |")
    print("| --- | ---: | ---: |")
    for l in labels:
        d = statistics.median(r[0].get(l, 0.0) for r in runs)
        print(f"| {l} | {d * 1e3:.1f} | {100 * d / total:.0f}% |")


if __name__ == "__main__":
    main()
