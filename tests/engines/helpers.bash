#!/bin/bash
# helpers.bash — shared by the engine tests (docker.bats, podman.bats, containerd.bats).
#
# setup_file starts private engines with engines-up.sh (everything under one
# temp dir, see that script) and teardown_file stops them with engines-down.sh.
# A test skips, saying why, when its engine could not start on this machine.
#
# Environment:
#   AGENTBOX          the runtime under test (default: the repo's ./agentbox; the
#                     engines run a copy made at setup_file)
#   ENGINES_KEEP=1    leave the engines and their dir after the file (debugging)
#   ENGINE_TIMEOUT    seconds before one engine command is killed (default 90)

bats_require_minimum_version 1.5.0

ENGINES_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$ENGINES_TESTS/../.." && pwd)
ENGINE_TIMEOUT=${ENGINE_TIMEOUT:-90}

# ---------------------------------------------------------------- engines

# engines_setup_file ENGINE...: start them; the env of engines-up.sh is exported
# to every test of the file.
engines_setup_file() {
	[ "$(id -u)" = 0 ] || { export ENGINES_SKIP_ALL="engine tests need root"; return 0; }
	local dir
	dir=$(mktemp -d /tmp/abe.XXXXXX)
	export ENGINES_DIR=$dir
	"$ENGINES_TESTS/engines-up.sh" -d "$dir" "$@" >/dev/null 2>"$dir/up.stderr" || {
		export ENGINES_SKIP_ALL="engines-up.sh failed: $(tail -n 3 "$dir/up.stderr" | tr '\n' ' ')"
		return 0
	}
	set -a
	# shellcheck disable=SC1091
	source "$dir/env"
	set +a
}

engines_teardown_file() {
	[ -n "${ENGINES_DIR:-}" ] || return 0
	if [ -n "${ENGINES_KEEP:-}" ]; then
		echo "# ENGINES_KEEP: engines left running in $ENGINES_DIR (engines-down.sh $ENGINES_DIR)" >&3
		return 0
	fi
	"$ENGINES_TESTS/engines-down.sh" "$ENGINES_DIR"
}

# require_engine docker|podman|containerd|podman-rootless: skip this test unless it is up.
require_engine() {
	[ -z "${ENGINES_SKIP_ALL:-}" ] || skip "$ENGINES_SKIP_ALL"
	local up
	up=$(tr a-z- A-Z_ <<<"$1")
	local skipvar=${up}_SKIP okvar=${up}_OK
	[ -z "${!skipvar:-}" ] || skip "$1 is not available here: ${!skipvar}"
	[ -n "${!okvar:-}" ] || skip "$1 was not started"
}

# ---------------------------------------------------------------- commands

# The engines' CLIs, with a timeout so a hung engine fails a test, not the run.
# fd 3 (bats' own) is closed: a detached container must not hold it.
dk() { timeout -k 5 "$ENGINE_TIMEOUT" "${DOCKER:-/usr/bin/docker}" "$@" 3>&-; }
# (from the temp dir: conmon 2.1.6 writes an "oom" file into its cwd)
# (PODMAN_OPTS: the private storage, run and tmp dirs engines-up.sh chose)
# shellcheck disable=SC2086
pm() {
	(cd "$ENGINES_DIR" && exec timeout -k 5 "$ENGINE_TIMEOUT" podman $PODMAN_OPTS "$@" 3>&-)
}
c() { timeout -k 5 "$ENGINE_TIMEOUT" ctr --address "$CONTAINERD_ADDRESS" -n default "$@" 3>&-; }
# podman with netavark, in the podman host engines-up.sh made (PODMAN_NV_ENTER
# enters its namespaces; PODMAN_NV_OPTS: its private dirs, the backend pinned)
# shellcheck disable=SC2086
pmn() {
	(cd "$ENGINES_DIR" && exec timeout -k 5 "$ENGINE_TIMEOUT" $PODMAN_NV_ENTER podman $PODMAN_NV_OPTS "$@" 3>&-)
}

# in_tty CMD...: run CMD with a pseudo-terminal as its stdio (script(1)); the
# output has \r\n line ends and the exit status is CMD's.
in_tty() {
	local cmd
	cmd=$(printf '%q ' "$@")
	timeout -k 5 "$ENGINE_TIMEOUT" script -qec "$cmd" /dev/null </dev/null 3>&-
}

# strip_cr: remove \r, NULs and the "^@" a terminal echoes for a NUL.
strip_cr() { tr -d '\r\000' | sed 's/\^@//g'; }

# ---------------------------------------------------------------- checks

fail() {
	echo "$*" >&2
	return 1
}

assert_success() {
	[ "$status" -eq 0 ] || fail "expected success, got status $status: $output"
}
assert_status() {
	[ "$status" -eq "$1" ] || fail "expected status $1, got $status: $output"
}
assert_output_contains() {
	[[ "$output" == *"$1"* ]] || fail "output does not contain '$1': $output"
}
refute_output_contains() {
	[[ "$output" != *"$1"* ]] || fail "output contains '$1': $output"
}
assert_output_matches() {
	[[ "$output" =~ $1 ]] || fail "output does not match /$1/: $output"
}

# same_as_runc WHAT AGENTBOX-VALUE RUNC-VALUE: the outcome matches runc's.
same_as_runc() {
	[ "$2" = "$3" ] || fail "$1: agentbox gave '$2', runc gave '$3'"
}

# retry SECS CMD...: until CMD succeeds (every 0.1 s).
retry() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	"$@"
}

# cgroup_v1_file CONTROLLER PATH FILE: the host's cgroup v1 file for a
# container's cgroupsPath (e.g. /docker/ID), or nothing when not v1.
cgroup_v1_file() {
	local f=/sys/fs/cgroup/$1$2/$3
	[ -e "$f" ] && echo "$f"
}

# pids_of_cgroup PATH: pids in the container's cgroup (pids controller).
pids_of_cgroup() {
	cat "/sys/fs/cgroup/pids$1/cgroup.procs" 2>/dev/null || true
}

# no_cgroup_left PATH: no hierarchy still holds the container's cgroup dir.
no_cgroup_left() {
	local d left=()
	for d in /sys/fs/cgroup/*"$1"; do
		[ -d "$d" ] && left+=("$d")
	done
	[ ${#left[@]} -eq 0 ] || fail "cgroups left behind: ${left[*]}"
}

# runtime_state_gone ROOT ID: agentbox has no state for ID under ROOT.
runtime_state_gone() {
	[ ! -e "$1/$2" ] || fail "runtime state left behind: $1/$2"
	if "$AGENTBOX" --root "$1" state "$2" >/dev/null 2>&1; then
		fail "agentbox --root $1 state $2 still answers"
	fi
	return 0
}
