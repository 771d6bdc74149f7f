#!/bin/bash
# helpers.bash — shared setup for agentbox's integration tests, after runc's.
#
# Every test gets a fresh bundle ($BUNDLE: a copy of the fixture rootfs plus a
# config.json from `$RUNTIME spec`) and its own state dir ($ROOT). `runtime`
# runs the runtime under test with `--root $ROOT`; teardown force-deletes what
# `list` shows and fails the test if a cgroup or a container process is left.
#
# Environment:
#   RUNTIME                the runtime binary (default: the repo's ./agentbox)
#   AGENTBOX_TEST_ROOTFS   where to build/cache the fixture rootfs
#                          (default: once per bats run, under $BATS_RUN_TMPDIR)
#   AGENTBOX_FIXTURES      the engines' payloads (default: tests/data/engine-fixtures)
#   RUNTIME_TIMEOUT        seconds before a hung runtime call is killed (default 60)

bats_require_minimum_version 1.5.0

INTEGRATION_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(git -C "$INTEGRATION_ROOT" rev-parse --show-toplevel 2>/dev/null ||
	{ cd "$INTEGRATION_ROOT/../.." && pwd; })
FIXTURES_DIR=${AGENTBOX_FIXTURES:-$REPO_ROOT/tests/data/engine-fixtures}
ABTEST=$REPO_ROOT/tests/helper/abtest
BUSYBOX=${AGENTBOX_TEST_BUSYBOX:-/bin/busybox}
RUNTIME_TIMEOUT=${RUNTIME_TIMEOUT:-60}
# Debian's python3 starts in 0.1 s; a pyenv shim can take 0.5 s
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3 || echo python3)}

# The runtime under test, as an absolute path.
RUNTIME=${RUNTIME:-$REPO_ROOT/agentbox}
# agentbox's agent policy (floor, firewall) would change what config.json means;
# the tests of OCI semantics relax it (policy.bats tests it with the defaults).
AGENT_CONFIG_PERMISSIVE=$REPO_ROOT/tests/data/agent-config/permissive.yaml
case $RUNTIME in
/*) ;;
*/*) RUNTIME=$(realpath -m "$RUNTIME") ;;
*) RUNTIME=$(command -v "$RUNTIME" || echo "$RUNTIME") ;;
esac

# ---------------------------------------------------------------- fixtures

# Build tests/helper/abtest if it is missing or older than its source.
ensure_abtest() {
	if [ ! -x "$ABTEST" ] || [ "$ABTEST.c" -nt "$ABTEST" ]; then
		(
			flock 9
			if [ ! -x "$ABTEST" ] || [ "$ABTEST.c" -nt "$ABTEST" ]; then
				make -s -C "$REPO_ROOT" tests/helper/abtest >&2
			fi
		) 9>"$BATS_RUN_TMPDIR/abtest.lock"
	fi
}

# build_rootfs DIR: busybox (every applet as a symlink), abtest, /etc basics.
build_rootfs() {
	local d=$1 app
	mkdir -p "$d"/{bin,sbin,etc,proc,sys,dev,tmp,root,mnt,run,var/tmp,usr/bin}
	chmod 1777 "$d/tmp" "$d/var/tmp"
	cp "$BUSYBOX" "$d/bin/busybox"
	cp "$ABTEST" "$d/bin/abtest"
	# one process for ~270 symlinks (forks are slow on a loaded 2-core box)
	"$d/bin/busybox" --list | "$PYTHON" -c '
import os, sys
d = sys.argv[1]
for app in sys.stdin.read().split():
    p = os.path.join(d, app)
    if not os.path.lexists(p):
        os.symlink("busybox", p)
' "$d/bin"
	cat >"$d/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		abuser:x:1000:1000:test user:/tmp:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	EOF
	cat >"$d/etc/group" <<-'EOF'
		root:x:0:
		tty:x:5:
		abgroup:x:1000:abuser
		nogroup:x:65534:
	EOF
	echo "127.0.0.1 localhost" >"$d/etc/hosts"
}

# Build the fixture rootfs once per run (or reuse $AGENTBOX_TEST_ROOTFS when
# its stamp matches busybox and abtest). Sets TEST_ROOTFS.
ensure_rootfs() {
	ensure_abtest
	TEST_ROOTFS=${AGENTBOX_TEST_ROOTFS:-$BATS_RUN_TMPDIR/rootfs}
	local stamp
	stamp=$(cat "$BUSYBOX" "$ABTEST" | sha256sum | cut -c1-16)
	[ "$(cat "$TEST_ROOTFS.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	(
		flock 9
		if [ "$(cat "$TEST_ROOTFS.stamp" 2>/dev/null)" != "$stamp" ]; then
			rm -rf "$TEST_ROOTFS.new" "$TEST_ROOTFS"
			build_rootfs "$TEST_ROOTFS.new"
			mv "$TEST_ROOTFS.new" "$TEST_ROOTFS"
			echo "$stamp" >"$TEST_ROOTFS.stamp"
		fi
	) 9>"$TEST_ROOTFS.lock"
}

# ---------------------------------------------------------------- bundles

# setup_bundle: fresh $TEST_DIR with $BUNDLE (rootfs + config.json) and $ROOT.
# The rootfs is a real copy, not hard links, so a test (or a buggy runtime)
# writing into it can never change the cached fixture.
setup_bundle() {
	ensure_rootfs
	agent_policy permissive
	TEST_DIR=$(mktemp -d "$BATS_RUN_TMPDIR/t.XXXXXX")
	BUNDLE=$TEST_DIR/bundle
	ROOT=$TEST_DIR/state
	# the durable egress log of a test build goes here, not to /var/log/agentbox
	export AGENTBOX_LOG_DIR=$TEST_DIR/egress-logs
	TEARDOWN_CMDS=()
	RT_CALLS=0
	mkdir -p "$BUNDLE" "$ROOT"
	cp -a "$TEST_ROOTFS" "$BUNDLE/rootfs"
	(cd "$BUNDLE" && "$RUNTIME" spec) >&2 ||
		fail "'$RUNTIME spec' failed: cannot build a bundle"
	# a cgroup name unique to this test, so leftovers can be found
	CGROUP_NAME=abtest-${TEST_DIR##*.}-$$
	CGROUP_PATH=/$CGROUP_NAME
	update_config '.process.terminal = false
		| .process.args = ["abtest", "true"]
		| .linux.cgroupsPath = $cg' --arg cg "$CGROUP_PATH"
}

# agent_policy permissive|default: which agent policy agentbox runs with (no-op for
# other runtimes).
agent_policy() {
	RUNTIME_ARGS=()
	if [ "$1" = permissive ] && is_agentbox; then
		RUNTIME_ARGS=(--config "$AGENT_CONFIG_PERMISSIVE")
	fi
}

# setup_state_only: $TEST_DIR and $ROOT, no bundle (CLI-only tests).
setup_state_only() {
	RUNTIME_ARGS=()
	TEST_DIR=$(mktemp -d "$BATS_RUN_TMPDIR/t.XXXXXX")
	ROOT=$TEST_DIR/state
	export AGENTBOX_LOG_DIR=$TEST_DIR/egress-logs
	BUNDLE= CGROUP_NAME=
	TEARDOWN_CMDS=()
	RT_CALLS=0
	mkdir -p "$ROOT"
}

# update_config FILTER [JQ-ARGS...]: edit $BUNDLE/config.json in place.
update_config() {
	local filter=$1 out
	shift
	out=$(jq "$filter" "$BUNDLE/config.json" "$@") ||
		fail "update_config: jq failed on: $filter"
	printf '%s\n' "$out" >"$BUNDLE/config.json"
}

# Sets JQ_ARRAY to a jq expression for the array of ARG... and JQ_ARGS to the
# --arg options it needs. (jq 1.6 parses options even after --args, so "-c"
# could not be passed that way.) PREFIX keeps several arrays apart.
_jq_array() {
	local prefix=$1 i=0 a refs=()
	shift
	for a in "$@"; do
		JQ_ARGS+=(--arg "$prefix$i" "$a")
		refs+=("\$$prefix$i")
		i=$((i + 1))
	done
	JQ_ARRAY="[$(IFS=,; echo "${refs[*]}")]"
}

# json_array ARG...: print a JSON array of strings.
json_array() {
	local JQ_ARGS=() JQ_ARRAY
	_jq_array a "$@"
	jq -nc "$JQ_ARRAY" "${JQ_ARGS[@]}"
}

# set_args ARG...: process.args.
set_args() {
	local JQ_ARGS=() JQ_ARRAY
	_jq_array a "$@"
	update_config ".process.args = $JQ_ARRAY" "${JQ_ARGS[@]}"
}

# add_mount DEST TYPE SOURCE [OPTION...]
add_mount() {
	local JQ_ARGS=() JQ_ARRAY dest=$1 type=$2 src=$3
	shift 3
	_jq_array o "$@"
	update_config ".mounts += [{destination: \$d, type: \$t, source: \$s, options: $JQ_ARRAY}]" \
		--arg d "$dest" --arg t "$type" --arg s "$src" "${JQ_ARGS[@]}"
}

# defer CMD...: run CMD at teardown (last registered runs first).
defer() {
	TEARDOWN_CMDS+=("$(printf '%q ' "$@")")
}

# Pids of processes running this test's copy of abtest or busybox: the
# rootfs is a private copy, so its inodes identify this test's containers.
bundle_pids() {
	[ -d "${BUNDLE:-}/rootfs/bin" ] || return 0
	local want
	want=$(stat -c '%d:%i' "$BUNDLE/rootfs/bin/abtest" "$BUNDLE/rootfs/bin/busybox")
	stat -L -c '%d:%i %n' /proc/[0-9]*/exe 2>/dev/null |
		awk -v want="$want" 'BEGIN { n = split(want, w, "\n"); for (i = 1; i <= n; i++) ok[w[i]] = 1 }
			ok[$1] { split($2, p, "/"); print p[3] }' || true
}

# Cgroup dirs (any hierarchy) named after this test's cgroup.
leftover_cgroups() {
	[ -n "${CGROUP_NAME:-}" ] || return 0
	find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -name "$CGROUP_NAME" 2>/dev/null || true
}

# wait_gone PID...: wait up to 5 s for the processes to disappear.
wait_gone() {
	local i p alive
	for ((i = 0; i < 250; i++)); do
		alive=
		for p in "$@"; do
			[ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && alive=1
		done
		[ -z "$alive" ] && return 0
		sleep 0.02
	done
	return 1
}

teardown_bundle() {
	[ -n "${TEST_DIR:-}" ] || return 0
	local id problems=() i pids cg
	local ids
	ids=$({ "$RUNTIME" --root "$ROOT" list -q 2>/dev/null || true
		ls -1 "$ROOT" 2>/dev/null || true; } | sort -u)
	for id in $ids; do
		timeout 20 "$RUNTIME" --root "$ROOT" kill "$id" KILL >/dev/null 2>&1 3>&- || true
		timeout 20 "$RUNTIME" --root "$ROOT" delete --force "$id" >/dev/null 2>&1 3>&- || true
	done
	for ((i = ${#TEARDOWN_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${TEARDOWN_CMDS[i]}" >/dev/null 2>&1 3>&- || true
	done
	# nothing of the container may outlive delete --force
	pids=$(bundle_pids)
	if [ -n "$pids" ] && ! wait_gone $pids; then
		problems+=("container processes left after delete --force: $pids")
		kill -9 $pids 2>/dev/null || true
	fi
	for cg in $(leftover_cgroups); do
		problems+=("cgroup left behind: $cg")
		rmdir "$cg" 2>/dev/null || true
	done
	rm -rf "$TEST_DIR" 2>/dev/null || { sleep 0.2; rm -rf "$TEST_DIR" || true; }
	TEST_DIR=
	if ((${#problems[@]})); then
		printf 'teardown: %s\n' "${problems[@]}" >&2
		return 1
	fi
}

# ---------------------------------------------------------------- running

# runtime ARGS...: run "$RUNTIME --root $ROOT ARGS" like bats' `run`: sets
# status, output (stdout, then stderr), lines, stdout, stderr, stderr_lines.
# The runtime's stdio are files, never bats' pipes, so a detached container
# cannot keep a `run` waiting; what it prints later is in $RT_STDOUT/$RT_STDERR
# (the files of this call). fd 3 (bats' own) is closed.
runtime() {
	RT_CALLS=$((RT_CALLS + 1))
	RT_STDOUT=$TEST_DIR/rt.$RT_CALLS.stdout
	RT_STDERR=$TEST_DIR/rt.$RT_CALLS.stderr
	status=0
	timeout -k 5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" "$@" \
		>"$RT_STDOUT" 2>"$RT_STDERR" 3>&- || status=$?
	_rt_collect "$RUNTIME --root $ROOT ${RUNTIME_ARGS[*]} $*"
}

# runtime_at DIR ARGS...: like runtime, with DIR as the runtime's cwd.
runtime_at() {
	local dir=$1
	shift
	RT_CALLS=$((RT_CALLS + 1))
	RT_STDOUT=$TEST_DIR/rt.$RT_CALLS.stdout
	RT_STDERR=$TEST_DIR/rt.$RT_CALLS.stderr
	status=0
	(cd "$dir" && exec timeout -k 5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" "$@" \
		>"$RT_STDOUT" 2>"$RT_STDERR" 3>&-) || status=$?
	_rt_collect "(cd $dir) $RUNTIME --root $ROOT $*"
}

# runtime_raw ARGS...: the runtime without --root (global-flag tests).
runtime_raw() {
	RT_CALLS=$((RT_CALLS + 1))
	RT_STDOUT=$TEST_DIR/rt.$RT_CALLS.stdout
	RT_STDERR=$TEST_DIR/rt.$RT_CALLS.stderr
	status=0
	timeout -k 5 "$RUNTIME_TIMEOUT" "$RUNTIME" "$@" \
		>"$RT_STDOUT" 2>"$RT_STDERR" 3>&- </dev/null || status=$?
	_rt_collect "$RUNTIME $*"
}

_rt_collect() {
	stdout=$(<"$RT_STDOUT")
	stderr=$(<"$RT_STDERR")
	output=$stdout
	if [ -n "$stderr" ]; then
		output+=${output:+$'\n'}$stderr
	fi
	lines=() stderr_lines=()
	[ -z "$output" ] || mapfile -t lines <<<"$output"
	[ -z "$stderr" ] || mapfile -t stderr_lines <<<"$stderr"
	# shown by bats only when the test fails
	{
		echo "\$ $1"
		echo "status=$status"
		[ -z "$output" ] || printf '%s\n' "$output"
	} >&2
}

# run_container ID [RUNTIME-RUN-FLAGS...]: `runtime run` with the bundle.
run_container() {
	local id=$1
	shift
	runtime run --bundle "$BUNDLE" "$@" "$id"
}

# create_container ID [FLAGS...]: `runtime create`; container output goes to
# $CT_STDOUT/$CT_STDERR.
create_container() {
	local id=$1
	shift
	runtime create --bundle "$BUNDLE" "$@" "$id" </dev/null
	CT_STDOUT=$RT_STDOUT CT_STDERR=$RT_STDERR
}

# pool_fw_names: the firewalled entries of the netns pool (runtime/egress/netns_pool.h)
# that pin a namespace, one name a line.
pool_fw_names() {
	local f
	for f in /run/agentbox-netns/fw-*; do
		[ "$(stat -f -c %T "$f" 2>/dev/null)" = nsfs ] && echo "${f##*/}"
	done
	true
}

# pool_fw_clear: no firewalled entries in the pool (a cache: what a test
# finds there afterwards was made for it), once no filler is at work.
pool_fw_clear() {
	local i f
	for ((i = 0; i < 250; i++)); do
		pgrep -f -- '__netns-pool-fill' >/dev/null || break
		sleep 0.02
	done
	for f in /run/agentbox-netns/fw-*; do
		[ -e "$f" ] || continue
		umount "$f" 2>/dev/null
		rm -f "$f"
	done
}

# wait_pool_fw N: up to 10 s for N firewalled entries in the pool and for
# the filler to be done.
wait_pool_fw() {
	local i n=0
	for ((i = 0; i < 500; i++)); do
		n=$(pool_fw_names | grep -c . || true)
		[ "$n" -ge "$1" ] && ! pgrep -f -- '__netns-pool-fill' >/dev/null && return 0
		sleep 0.02
	done
	fail "the pool holds $n firewalled entries, not $1: $(ls -la /run/agentbox-netns 2>&1)"
}

# state_field ID JQ-PATH: one field of `state ID`.
state_field() {
	"$RUNTIME" --root "$ROOT" state "$1" 3>&- | jq -r "$2"
}

# wait_for_status ID STATUS [SECONDS]: poll `state` until it shows STATUS.
wait_for_status() {
	local id=$1 want=$2 secs=${3:-10} i got=
	for ((i = 0; i < secs * 50; i++)); do
		got=$("$RUNTIME" --root "$ROOT" state "$id" 2>/dev/null 3>&- | jq -r .status 2>/dev/null) || got=
		[ "$got" = "$want" ] && return 0
		sleep 0.02
	done
	echo "wait_for_status: $id is '${got:-<no state>}', not '$want' after ${secs}s" >&2
	return 1
}

# wait_for_file FILE [SECONDS]: poll until FILE exists and is not empty.
wait_for_file() {
	local f=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 50; i++)); do
		[ -s "$f" ] && return 0
		sleep 0.02
	done
	echo "wait_for_file: $f did not appear in ${secs}s" >&2
	return 1
}

# wait_for_line FILE REGEX [SECONDS]: poll until a line of FILE matches.
wait_for_line() {
	local f=$1 re=$2 secs=${3:-10} i
	for ((i = 0; i < secs * 50; i++)); do
		grep -qE -- "$re" "$f" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "wait_for_line: no line matching '$re' in $f after ${secs}s:" >&2
	cat "$f" >&2 2>/dev/null || true
	return 1
}

# ---------------------------------------------------------------- checks

fail() {
	echo "$*" >&2
	return 1
}

# is_agentbox: the runtime under test is agentbox (not runc or another).
# (asked once per bats run: every test is its own process)
is_agentbox() {
	if [ -z "${RUNTIME_NAME:-}" ]; then
		local cache=$BATS_RUN_TMPDIR/runtime-name.$(printf '%s' "$RUNTIME" | cksum | cut -d' ' -f1)
		RUNTIME_NAME=$(cat "$cache" 2>/dev/null) || true
		if [ -z "$RUNTIME_NAME" ]; then
			RUNTIME_NAME=$("$RUNTIME" --version 2>/dev/null 3>&- | awk 'NR == 1 { print $1 }') || true
			RUNTIME_NAME=${RUNTIME_NAME:-unknown}
			[ "$RUNTIME_NAME" = unknown ] || echo "$RUNTIME_NAME" >"$cache"
		fi
	fi
	[ "$RUNTIME_NAME" = agentbox ]
}

# requires FEATURE...: skip the test, saying why, unless each is available.
requires() {
	local f
	for f in "$@"; do
		case $f in
		root)
			[ "$(id -u)" = 0 ] || skip "needs root"
			;;
		agentbox)
			is_agentbox || skip "checks agentbox's own behaviour; runtime under test is ${RUNTIME_NAME}"
			;;
		cgroups_v1)
			[ -e /sys/fs/cgroup/memory/cgroup.procs ] || skip "needs cgroup v1 (hybrid or legacy) hierarchies"
			;;
		cgroups_v2)
			[ -e /sys/fs/cgroup/cgroup.controllers ] || skip "needs a pure cgroup v2 host (this one is not)"
			;;
		cgroups_unified)
			[ -e /sys/fs/cgroup/unified/cgroup.procs ] || [ -e /sys/fs/cgroup/cgroup.controllers ] ||
				skip "needs a cgroup2 mount"
			;;
		tty)
			command -v python3 >/dev/null || skip "needs python3 for the pty helpers"
			;;
		userns)
			[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
				skip "user namespaces are disabled (user.max_user_namespaces=0)"
			;;
		timens)
			[ -e /proc/self/ns/time ] || skip "kernel without time namespaces"
			;;
		cc)
			command -v cc >/dev/null || skip "needs a C compiler"
			;;
		test_hooks)
			"$RUNTIME" --version 2>/dev/null | grep -q '^build: test hooks' ||
				skip "needs a test build of the runtime (make TEST_HOOKS=yes): fault hooks"
			;;
		*)
			fail "requires: unknown feature '$f'"
			;;
		esac
	done
}

# assert_success / assert_failure [STATUS] on $status.
assert_success() {
	[ "$status" -eq 0 ] || fail "expected success, got status $status: $output"
}
assert_failure() {
	if [ $# -gt 0 ]; then
		[ "$status" -eq "$1" ] || fail "expected status $1, got $status: $output"
	else
		[ "$status" -ne 0 ] || fail "expected failure, got status 0: $output"
	fi
}

# assert_output_contains TEXT / assert_output_matches ERE (on $output)
assert_output_contains() {
	[[ "$output" == *"$1"* ]] || fail "output does not contain '$1': $output"
}
assert_output_matches() {
	[[ "$output" =~ $1 ]] || fail "output does not match /$1/: $output"
}
refute_output_contains() {
	[[ "$output" != *"$1"* ]] || fail "output contains '$1': $output"
}

# assert_one_error_line ERE: stderr is exactly one line, "agentbox: ...",
# matching ERE (the error convention of engine-contract.md and DESIGN.md).
assert_one_error_line() {
	[ "${#stderr_lines[@]}" -eq 1 ] ||
		fail "expected exactly one line on stderr, got ${#stderr_lines[@]}: $stderr"
	[[ "$stderr" == "agentbox: "* ]] || fail "stderr does not start with 'agentbox: ': $stderr"
	[[ "$stderr" =~ $1 ]] || fail "stderr does not match /$1/: $stderr"
}

# assert_nothing_left: no state entry under $ROOT, no container process, no cgroup.
assert_nothing_left() {
	local left pids cgs
	# dot entries are caches (the compiled seccomp programs), not containers
	left=$(ls -A "$ROOT" 2>/dev/null | grep -v -e '\.lock$' -e '^\.' || true)
	[ -z "$left" ] || fail "state dir $ROOT still holds: $left"
	"$RUNTIME" --root "$ROOT" list -q 2>/dev/null 3>&- | grep . && fail "list still shows containers"
	pids=$(bundle_pids)
	[ -z "$pids" ] || wait_gone $pids || fail "container processes left: $pids"
	cgs=$(leftover_cgroups)
	[ -z "$cgs" ] || fail "cgroups left: $cgs"
}

# host_ns KIND: the host's (this shell's) namespace link for KIND.
host_ns() {
	readlink "/proc/self/ns/$1"
}

# ns_of OUTPUT KIND: the namespace link of KIND from `abtest ns` output.
ns_of() {
	awk -v k="$2" '$1 == k { print $2 }' <<<"$1"
}

# runtime_sha256: checksum of the runtime binary.
runtime_sha256() {
	sha256sum "$(realpath "$RUNTIME")" | cut -d' ' -f1
}

# ---------------------------------------------------------------- terminals

# start_recvtty [INPUT]: the console socket receiver in the background.
start_recvtty() {
	CONSOLE_SOCKET=$TEST_DIR/tty.sock
	TTY_OUT=$TEST_DIR/tty.out
	local input=()
	[ $# -eq 0 ] || input=(--input "$1")
	"$PYTHON" "$INTEGRATION_ROOT/recvtty.py" "${input[@]}" --timeout 20 \
		"$CONSOLE_SOCKET" "$TTY_OUT" </dev/null >"$TEST_DIR/recvtty.log" 2>&1 3>&- &
	RECVTTY_PID=$!
	defer kill "$RECVTTY_PID"
	local i
	for ((i = 0; i < 250; i++)); do
		[ -S "$CONSOLE_SOCKET" ] && return 0
		sleep 0.02
	done
	fail "recvtty did not start: $(cat "$TEST_DIR/recvtty.log")"
}

# tty_output: what the receiver read from the master, without \r
tty_output() {
	tr -d '\r' <"$TTY_OUT"
}
