#!/bin/bash
# runc v1.1.5's integration suite (runc/tests/integration) with RUNC pointing at
# agentbox (permissive config) or at runc itself.
# usage: run-runc-integration.sh agentbox|runc [FILE.bats...] [-- bats args]
# TAP in $ABCF_RESULTS/runc-int-<rt>.tap; compare-runc.sh sets the two side by side.
set -u
. "$(dirname "$0")/env.sh"
rt=${1:?usage: run-runc-integration.sh agentbox|runc [FILE.bats...] [-- bats args]}
shift
case $rt in
agentbox) export RUNC=$ABCF_DIR/bin/agentbox-permissive ;;
runc)     RUNC=$(command -v "${ABCF_RUNC:-runc}"); export RUNC ;;
*) echo "unknown runtime $rt" >&2; exit 2 ;;
esac
files=() extra=()
while [ $# -gt 0 ]; do
	[ "$1" = -- ] && { shift; extra=("$@"); break; }
	files+=("tests/integration/$1"); shift
done
[ ${#files[@]} -gt 0 ] || files=(tests/integration)
mkdir -p "$ABCF_RESULTS"
out=$ABCF_RESULTS/runc-int-$rt.tap
cd "$ABCF_WORK/runc" || { echo "no $ABCF_WORK/runc: run fetch.sh first" >&2; exit 1; }
# No BATS_TEST_TIMEOUT: its watcher is a background job of the test, and the
# tests that `wait` for their own jobs (events.bats) would wait for it too.
# A watchdog instead kills a runtime call of this suite hung over 120 s (an old
# agentbox into a frozen cgroup did), thawing its cgroup first; each goes to
# $out.hangs. update.bats' own recvtty outlives a failing case and holds bats'
# output pipe: it goes after 60 s.
: >"$out.hangs"
(
	while sleep 10; do
		for p in $(pgrep -f -- "--root /tmp/bats-run-[^ ]*/runc\.[^ /]*/state"); do
			[ "$(ps -o etimes= -p "$p" | tr -d ' ')" -gt 120 ] 2>/dev/null || continue
			echo "$(date +%T) $(tr '\0' ' ' <"/proc/$p/cmdline")" >>"$out.hangs"
			for c in $(pgrep -P "$p"); do
				fz=$(awk -F: '$2 == "freezer" {print $3}' "/proc/$c/cgroup")
				[ -n "$fz" ] && echo THAWED >"/sys/fs/cgroup/freezer$fz/freezer.state" 2>/dev/null
			done
			kill "$p"
		done
		for p in $(pgrep -f -- "--pid-file /tmp/bats-run-[^ ]*/runc-tmp-recvtty\."); do
			[ "$(ps -o etimes= -p "$p" | tr -d ' ')" -gt 60 ] 2>/dev/null && kill "$p"
		done
	done
) &
watchdog=$!
# under a pseudo-terminal, as runc's CI runs it: the foreground cases with
# terminal: true open /dev/tty
printf -v cmd '%q ' bats -T --tap "${extra[@]}" "${files[@]}"
script -qefc "$cmd > $(printf %q "$out") 2>&1" /dev/null </dev/null >/dev/null
kill "$watchdog"
ok=$(grep -c '^ok' "$out"); skip=$(grep -c '^ok .*# skip' "$out")
echo "pass=$((ok - skip)) skip=$skip fail=$(grep -c '^not ok' "$out")  -> $out"
