#!/bin/bash
# Every runtime-tools validation case against one runtime, one at a time.
# usage: run-runtime-tools.sh agentbox|runc [CASE...]
# Writes $ABCF_RESULTS/runtime-tools-<rt>/<case>.tap and summary.txt (one line a
# case with its exit status); summarize-runtime-tools.sh puts both runtimes side
# by side.
set -u
. "$(dirname "$0")/env.sh"
rt=${1:?usage: run-runtime-tools.sh agentbox|runc [CASE...]}
shift
case $rt in
agentbox) runtime=$ABCF_DIR/bin/agentbox-permissive ;;
runc)     runtime=$ABCF_DIR/bin/runc-rooted ;;
*) echo "unknown runtime $rt" >&2; exit 2 ;;
esac
export ABCF_ROOT=/run/abcf-rt-$rt
out=$ABCF_RESULTS/runtime-tools-$rt
mkdir -p "$out"
cd "$ABCF_WORK/runtime-tools" || { echo "no $ABCF_WORK/runtime-tools: run fetch.sh first" >&2; exit 1; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=($(ls validation | while read -r c; do [ -x "validation/$c/$c.t" ] && echo "$c"; done))
[ $# -gt 0 ] || : >"$out/summary.txt"
for c in "${cases[@]}"; do
	RUNTIME=$runtime timeout 120 "validation/$c/$c.t" >"$out/$c.tap" 2>&1
	rc=$?
	sed -i "/^$c /d" "$out/summary.txt" 2>/dev/null
	printf '%-36s rc=%s\n' "$c" "$rc" | tee -a "$out/summary.txt"
	# a runtime without a mount namespace (runc, linux_ns_itype) leaves mounts
	grep ' /tmp/ocitest' /proc/self/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null
done
