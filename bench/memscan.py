#!/usr/bin/env python3
"""memscan.py ROOT LIST_JSON — memory of a runtime's running containers, in one pass.

LIST_JSON is `RUNTIME --root ROOT list --format json` (runc/crun/agentbox alike):
the containers' init pids. For agentbox, ROOT/ID/state.json also names the DNS
sentry (sentryPid); its helper processes are the sentry's children. Prints one
JSON object: counts and kB sums of VmRSS, RssAnon and PSS for the inits and for
the sentries with their helpers.
"""
import json
import os
import sys


def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for l in f:
                k, _, v = l.partition(":")
                if k in ("VmRSS", "RssAnon", "VmHWM"):
                    out[k] = int(v.split()[0])
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for l in f:
                if l.startswith("Pss:"):
                    out["Pss"] = int(l.split()[1])
    except OSError:
        return None
    return out


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def main():
    root, listing = sys.argv[1], sys.argv[2]
    try:
        cs = json.load(open(listing)) or []
    except (OSError, ValueError):
        cs = []
    r = {"containers": len(cs), "running": 0, "inits": 0, "init_rss_kb_sum": 0, "init_anon_kb_sum": 0,
         "init_pss_kb_sum": 0, "sentries": 0, "sentry_procs": 0, "sentry_rss_kb_sum": 0,
         "sentry_anon_kb_sum": 0, "sentry_pss_kb_sum": 0}
    for c in cs:
        if c.get("status") == "running":
            r["running"] += 1
        s = status(c.get("pid", 0)) if c.get("pid") else None
        if s:
            r["inits"] += 1
            r["init_rss_kb_sum"] += s.get("VmRSS", 0)
            r["init_anon_kb_sum"] += s.get("RssAnon", 0)
            r["init_pss_kb_sum"] += s.get("Pss", 0)
        try:
            st = json.load(open(os.path.join(root, c["id"], "state.json")))
        except (OSError, ValueError, KeyError):
            continue
        sp = st.get("sentryPid")
        if not sp or not status(sp):
            continue
        r["sentries"] += 1
        for p in [sp] + children(sp):
            s = status(p)
            if s:
                r["sentry_procs"] += 1
                r["sentry_rss_kb_sum"] += s.get("VmRSS", 0)
                r["sentry_anon_kb_sum"] += s.get("RssAnon", 0)
                r["sentry_pss_kb_sum"] += s.get("Pss", 0)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
