#!/bin/bash
# Every suite against each runtime named, one after the other (the suites use
# fixed cgroup paths). usage: run-all.sh [-s SUITES] RUNTIME...
# SUITES: a comma list of rt,crun,runc (default all three).
. "$(dirname "$0")/env.sh"
suites=rt,crun,runc
[ "${1:-}" = -s ] && { suites=$2; shift 2; }
mkdir -p "$ABCF_RESULTS"
for rt in "$@"; do
	[[ ,$suites, == *,rt,* ]] && "$ABCF_DIR/run-runtime-tools.sh" "$rt" >"$ABCF_RESULTS/rt-$rt.log" 2>&1
	[[ ,$suites, == *,crun,* ]] && "$ABCF_DIR/run-crun-tests.py" "$rt" >"$ABCF_RESULTS/crun-$rt.log" 2>&1
	[[ ,$suites, == *,runc,* ]] && "$ABCF_DIR/run-runc-integration.sh" "$rt" >"$ABCF_RESULTS/runc-int-$rt.log" 2>&1
done
[[ ,$suites, == *,rt,* ]] && "$ABCF_DIR/summarize-runtime-tools.sh"
[[ ,$suites, == *,crun,* ]] && "$ABCF_DIR/compare-crun.py"
[[ ,$suites, == *,runc,* ]] && "$ABCF_DIR/compare-runc.sh"
