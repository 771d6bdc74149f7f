#!/bin/bash
# load.sh — agentbox under load, as root:
#   1. N containers (default 100) created, started and deleted concurrently
#      against one --root: every command succeeds, nothing deadlocks (bounded
#      wait), nothing is left (state, processes, cgroups, mounts);
#   2. M sequential `run`s (default 1000): no growth on the host in open files,
#      memory (slab), cgroups, mounts or network namespaces, measured before and
#      after (after a warm-up, so one-time caches do not count).
# Every container has agentbox's default agent policy in force: its own network
# namespace with the nftables firewall, and a DNS sentry.
#
# Usage: tests/reliability/load.sh [-p N] [-s M] [-q]
#   -p N   concurrent containers (0 skips the phase)      default 100
#   -s M   sequential runs (0 skips the phase)             default 1000
#   -q     quiet: only the verdict lines and failures
# Environment: RUNTIME (default: the repo's ./agentbox), LOAD_TIMEOUT (seconds
# the concurrent phase may take before it counts as a deadlock, default 600),
# LOAD_TOLERANCE (host-wide growth allowed per sequential run, as a fraction:
# default 0.5 — a leak of one file, cgroup, mount or namespace per run exceeds
# it; noise from other work on the host stays below it).
# Exit status 0 when every check holds; the last line says PASS or FAIL.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
RUNTIME=${RUNTIME:-$top/agentbox}
parallel=100 sequential=1000 quiet=
while getopts "p:s:q" o; do
	case $o in
	p) parallel=$OPTARG ;;
	s) sequential=$OPTARG ;;
	q) quiet=1 ;;
	*) sed -n '2,22p' "$0"; exit 2 ;;
	esac
done
timeout_s=${LOAD_TIMEOUT:-600}
tolerance=${LOAD_TOLERANCE:-0.5}
[ "$(id -u)" = 0 ] || { echo "load.sh: needs root" >&2; exit 2; }
[ -x "$RUNTIME" ] || { echo "load.sh: no runtime at $RUNTIME (make)" >&2; exit 2; }
for t in jq busybox; do command -v $t >/dev/null || { echo "load.sh: needs $t" >&2; exit 2; }; done
[ -x "$top/tests/helper/abtest" ] || make -s -C "$top" tests/helper/abtest || exit 2

say() { [ -n "$quiet" ] || echo "$@"; }
failures=()
check() { # check WHAT OK?  (OK? is 0 for pass)
	if [ "$2" -eq 0 ]; then say "  ok   $1"; else echo "  FAIL $1"; failures+=("$1"); fi
}

work=$(mktemp -d /tmp/agentbox-load.XXXXXX)
root=$work/state
prefix=abload$$-
cleanup() {
	local id
	for id in $(ls "$root" 2>/dev/null); do
		timeout 30 "$RUNTIME" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the bundle: busybox + abtest, default agent policy with a DNS sentry ----
bundle=$work/bundle
mkdir -p "$bundle/rootfs"/{bin,etc,proc,sys,dev,tmp}
cp "$(command -v busybox)" "$bundle/rootfs/bin/busybox"
cp "$top/tests/helper/abtest" "$bundle/rootfs/bin/abtest"
ln -s busybox "$bundle/rootfs/bin/sh"
# an upstream on the container's own loopback: the sentry serves DNS, nothing
# ever leaves the namespace
echo "nameserver 127.0.0.53" >"$bundle/rootfs/etc/resolv.conf"
(cd "$bundle" && "$RUNTIME" spec) || exit 2
cfg=$(jq '.process.terminal = false | .process.args = ["abtest", "true"] | del(.linux.cgroupsPath)' "$bundle/config.json") &&
	printf '%s\n' "$cfg" >"$bundle/config.json"
agentcfg=$work/agent.yaml
printf 'egress:\n  enforce: true\n  allow: [example.test, "*.example.test:443"]\n' >"$agentcfg"
rt() { "$RUNTIME" --root "$root" --config "$agentcfg" "$@"; }

# ---- what the host holds ----
# (the sentry and an init that has not exec'd yet are forks of the runtime: their
# command line still names this --root)
runtime_procs() { pgrep -c -f -- "--root $root( |\$)"; }
our_cgroups() { find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -name "$prefix*" 2>/dev/null | wc -l; }
our_mounts() { grep -cF "$work" /proc/self/mountinfo; }
state_entries() { ls "$root" 2>/dev/null | wc -l; }
metric() {
	case $1 in
	files) awk '{print $1}' /proc/sys/fs/file-nr ;;
	slab_kb) awk '$1 == "Slab:" {print $2}' /proc/meminfo ;;
	cgroups) find /sys/fs/cgroup/ -mindepth 1 -type d 2>/dev/null | wc -l ;;
	mounts) wc -l </proc/self/mountinfo ;;
	netns) awk '$1 == "net_namespace" {print $2}' /proc/slabinfo ;;
	procs) ls /proc | grep -c '^[0-9]' ;;
	esac
}
METRICS="files slab_kb cgroups mounts netns procs"
# the checks that must come out exactly zero
assert_nothing_left() {
	local what=$1 i
	# the sentry and dying inits go a moment after delete returns
	for ((i = 0; i < 100; i++)); do [ "$(runtime_procs)" -eq 0 ] && break; sleep 0.05; done
	check "$what: no state entry left ($(state_entries))" "$(state_entries)"
	check "$what: no runtime or container process left ($(runtime_procs))" "$(runtime_procs)"
	check "$what: no cgroup left ($(our_cgroups))" "$(our_cgroups)"
	check "$what: no mount left ($(our_mounts))" "$(our_mounts)"
}

# ---- 1. concurrent ----
if [ "$parallel" -gt 0 ]; then
	say "== $parallel containers created, started and deleted concurrently (one --root)"
	res=$work/results
	mkdir -p "$res"
	lifecycle() { # one container: create, start, wait for exit, delete
		local id=$prefix$1 r=0 i st
		rt create --bundle "$bundle" "$id" </dev/null >"$res/$1.out" 2>&1 || r=1
		[ $r -eq 0 ] && { rt start "$id" >>"$res/$1.out" 2>&1 || r=2; }
		if [ $r -eq 0 ]; then
			for ((i = 0; i < 600; i++)); do
				st=$(rt state "$id" 2>>"$res/$1.out" | jq -r .status) || st=
				[ "$st" = stopped ] && break
				sleep 0.1
			done
			[ "$st" = stopped ] || r=3
		fi
		rt delete --force "$id" >>"$res/$1.out" 2>&1 || r=$((r ? r : 4))
		echo $r >"$res/$1.status"
	}
	start=$(date +%s.%N)
	pids=()
	for ((n = 0; n < parallel; n++)); do
		lifecycle "$n" &
		pids+=($!)
	done
	deadline=$(($(date +%s) + timeout_s))
	while :; do
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
		[ $alive -eq 0 ] && break
		if [ "$(date +%s)" -ge $deadline ]; then
			echo "  FAIL deadlock? $alive of $parallel lifecycles still running after ${timeout_s}s:"
			ps -o pid,stat,etime,args --ppid "$$" | head -20
			pgrep -a -f -- "--root $root" | head -20
			failures+=("concurrent: finished in time")
			kill "${pids[@]}" 2>/dev/null
			break
		fi
		sleep 0.2
	done
	wait 2>/dev/null
	elapsed=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
	bad=0
	for ((n = 0; n < parallel; n++)); do
		s=$(cat "$res/$n.status" 2>/dev/null || echo 9)
		if [ "$s" != 0 ]; then
			bad=$((bad + 1))
			[ $bad -le 5 ] && { echo "  container $prefix$n: step $s failed:"; sed 's/^/    /' "$res/$n.out" | head -5; }
		fi
	done
	check "concurrent: $((parallel - bad)) of $parallel lifecycles succeeded (in ${elapsed}s)" "$bad"
	assert_nothing_left concurrent
fi

# ---- 2. sequential ----
if [ "$sequential" -gt 0 ]; then
	say "== $sequential sequential runs"
	# warm-up: caches (seccomp programs, page cache, slabs) settle first
	for ((n = 0; n < 10; n++)); do rt run --bundle "$bundle" "${prefix}w$n" </dev/null >/dev/null 2>&1; done
	sleep 1
	declare -A before after
	for m in $METRICS; do before[$m]=$(metric $m); done
	start=$(date +%s.%N)
	bad=0
	for ((n = 0; n < sequential; n++)); do
		if ! out=$(rt run --bundle "$bundle" "${prefix}s$n" </dev/null 2>&1); then
			bad=$((bad + 1))
			[ $bad -le 5 ] && echo "  run ${prefix}s$n failed: $out"
		fi
		[ -n "$quiet" ] || [ $(((n + 1) % 100)) -ne 0 ] || echo "   $((n + 1)) runs"
	done
	elapsed=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
	# namespaces and sockets of the last containers are freed asynchronously
	sleep 2
	for m in $METRICS; do after[$m]=$(metric $m); done
	check "sequential: $((sequential - bad)) of $sequential runs succeeded (in ${elapsed}s)" "$bad"
	assert_nothing_left sequential
	allowed=$(echo "$sequential * $tolerance / 1" | bc)
	say "  host before -> after (growth allowed: $allowed; slab: $((allowed * 16)) kB)"
	for m in $METRICS; do
		d=$((after[$m] - before[$m]))
		limit=$allowed
		[ "$m" = slab_kb ] && limit=$((allowed * 16))
		[ "$m" = procs ] && limit=$((allowed / 5 + 20))
		check "$(printf '%-8s %8s -> %8s  (%+d)' "$m" "${before[$m]}" "${after[$m]}" "$d")" $((d > limit))
	done
fi

if [ ${#failures[@]} -eq 0 ]; then
	echo "load: PASS"
else
	echo "load: FAIL (${#failures[@]}): ${failures[*]}"
	exit 1
fi
