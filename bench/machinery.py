#!/usr/bin/env python3
"""machinery.py PROGRAM -- CMD... — the resident memory of a sandbox's machinery.

Starts CMD (a sandbox running PROGRAM, e.g. `agentbox kit run -- sleep 6` or
`srt sleep 6`), waits until a process named PROGRAM runs among its
descendants, lets it settle (SETTLE_S, default 2 s: the DNS sentry gives back
what it inherited after its first quiet second), then sums VmRSS and PSS of
every descendant of CMD that is not PROGRAM: for agentbox the `kit run`
process, slirp4netns (or pasta), the DNS sentry and its helper; for srt its
node process, bwrap, socat and the proxies. Then waits for CMD to end and
prints one JSON object:
  {"ok", "total_rss_kb", "total_pss_kb", "procs": [{"pid","comm","rss_kb","pss_kb"}], "status"}
(ok false, with "why", when PROGRAM never showed within 10 s.)
"""
import json
import os
import subprocess
import sys
import time


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        # comm may hold blanks and parentheses: the fields follow the last ")"
        rest = s[s.rindex(")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(d))
    return kids


def descendants(root):
    kids, out, todo = children_map(), [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def field_kb(path, name):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: machinery.py PROGRAM -- CMD...")
    program, cmd = sys.argv[1], sys.argv[3:]
    settle = float(os.environ.get("SETTLE_S", "2"))
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    res = {"ok": False}
    t0 = time.monotonic()
    while time.monotonic() - t0 < 10 and p.poll() is None:
        if any(comm(d) == program for d in descendants(p.pid)[1:]):
            break
        time.sleep(0.02)
    else:
        res["why"] = f"{program} never ran (status {p.poll()})"
    if "why" not in res:
        time.sleep(settle)
        procs = []
        for d in descendants(p.pid):
            c = comm(d)
            if c is None or c == program:
                continue
            rss = field_kb(f"/proc/{d}/status", "VmRSS")
            pss = field_kb(f"/proc/{d}/smaps_rollup", "Pss")
            if rss is None:
                continue
            procs.append({"pid": d, "comm": c, "rss_kb": rss, "pss_kb": pss or 0})
        res = {"ok": True, "total_rss_kb": sum(x["rss_kb"] for x in procs),
               "total_pss_kb": sum(x["pss_kb"] for x in procs), "procs": procs}
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    res["status"] = p.returncode
    if p.returncode and err:
        res["stderr"] = err.decode(errors="replace")[-300:]
    print(json.dumps(res))


if __name__ == "__main__":
    main()
