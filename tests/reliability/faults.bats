#!/usr/bin/env bats
# Faults: the runtime killed at every step of create, an init that dies before
# start, a damaged state file, a full disk under --root, a recycled pid. After
# each, `delete --force` (or the failing command itself) leaves nothing: no
# state dir, cgroup, mount, network namespace (and with it the nft table),
# sentry or container process.

load helpers

setup() {
	requires root agentbox
	setup_bundle
	# the built-in agent policy: firewall and DNS sentry in force
	agent_policy default
	set_args abtest pause
}

teardown() {
	teardown_bundle
}

# create_killed_at N [ID]: create with AGENTBOX_FAULT_STOP_AT=N; the runtime must
# die of SIGKILL at that step (status 137).
create_killed_at() {
	requires test_hooks
	local n=$1 id=${2:-f$1}
	AGENTBOX_FAULT_STOP_AT=$n create_container "$id"
	[ "$status" -eq 137 ] || fail "create with AGENTBOX_FAULT_STOP_AT=$n: expected death by SIGKILL (137), got $status: $output"
}

# kill_create_at N: the whole check for one step
kill_create_at() {
	local n=$1 ns
	create_killed_at "$n"
	ns=$(container_netns)
	runtime delete --force "f$n"
	assert_success
	assert_host_clean $ns
	# the id is free again
	create_container "f$n"
	assert_success
}

@test "fault: create killed after reading the config (1): delete --force leaves nothing" {
	kill_create_at 1
}

@test "fault: create killed after resolving the policy (2): delete --force leaves nothing" {
	kill_create_at 2
}

@test "fault: create killed after creating the state dir (3): delete --force leaves nothing" {
	kill_create_at 3
}

@test "fault: create killed after creating the cgroup (4): delete --force leaves nothing" {
	kill_create_at 4
}

@test "fault: create killed after cloning the init (5): delete --force leaves nothing" {
	kill_create_at 5
}

@test "fault: create killed after installing the firewall (6): delete --force leaves nothing" {
	kill_create_at 6
}

@test "fault: create killed after the init is ready (7): delete --force leaves nothing" {
	kill_create_at 7
}

@test "fault: create killed after starting the DNS sentry (8): delete --force leaves nothing" {
	kill_create_at 8
}

@test "fault: create killed after writing the state (9): delete --force leaves nothing" {
	kill_create_at 9
}

@test "fault: create killed after writing the pid file (10): delete --force leaves nothing" {
	kill_create_at 10
}

@test "fault: a killed create shows up in state and list, and a plain delete cleans it" {
	requires test_hooks
	create_killed_at 7 half
	runtime state half
	assert_success
	[ "$(jq -r .status <<<"$stdout")" = created ]
	runtime list -q
	assert_output_contains half
	runtime delete --force half
	assert_success
	create_killed_at 4 early
	runtime state early
	assert_success
	[ "$(jq -r .status <<<"$stdout")" = stopped ]
	runtime delete early
	assert_success
	assert_host_clean
}

@test "fault: run killed at each step after the clone leaves nothing after delete --force" {
	requires test_hooks
	local n ns
	for n in 5 7 8; do
		AGENTBOX_FAULT_STOP_AT=$n runtime run --bundle "$BUNDLE" "r$n" </dev/null
		[ "$status" -eq 137 ] || fail "run with AGENTBOX_FAULT_STOP_AT=$n: status $status: $output"
		ns=$(container_netns)
		runtime delete --force "r$n"
		assert_success
		assert_host_clean $ns
	done
}

@test "fault: the init killed between create and start: stopped, start fails clearly, delete cleans up" {
	create_container ct
	assert_success
	local pid ns
	pid=$(state_field ct .pid)
	ns=$(stat -L -c %i "/proc/$pid/ns/net")
	kill -9 "$pid"
	wait_for_status ct stopped
	runtime start ct
	assert_failure 1
	assert_one_error_line 'container "ct"|stopped'
	runtime delete ct
	assert_success
	assert_host_clean "$ns"
}

@test "fault: a truncated state file: a clear error naming it, and delete --force cleans up" {
	create_container ct
	assert_success
	local pid ns size
	pid=$(state_field ct .pid)
	ns=$(stat -L -c %i "/proc/$pid/ns/net")
	size=$(stat -c %s "$ROOT/ct/state.json")
	truncate -s $((size / 2)) "$ROOT/ct/state.json"
	runtime state ct
	assert_failure 1
	assert_one_error_line 'container "ct".*state'
	assert_output_contains "$ROOT/ct/state.json"
	runtime start ct
	assert_failure 1
	assert_output_contains "$ROOT/ct/state.json"
	runtime delete --force ct
	assert_success
	assert_host_clean "$ns"
}

@test "fault: a state file of garbage: a clear error naming it, and delete --force ends the container from its cleanup record" {
	create_container ct
	assert_success
	local pid ns
	pid=$(state_field ct .pid)
	ns=$(stat -L -c %i "/proc/$pid/ns/net")
	head -c 300 /dev/urandom >"$ROOT/ct/state.json"
	runtime state ct
	assert_failure 1
	assert_one_error_line 'container "ct".*state'
	assert_output_contains "$ROOT/ct/state.json"
	runtime kill ct KILL
	assert_failure 1
	kill -0 "$pid"   # nothing was signalled on the strength of garbage
	# the second record, kept apart from state.json, still names the init
	# and the cgroups (tests/security/delete-damaged.bats has the rest)
	runtime delete --force ct
	assert_success
	assert_output_contains "cleanup record"
	[ ! -e "$ROOT/ct" ]
	wait_gone "$pid" || fail "the init $pid still runs"
	assert_host_clean "$ns"
}

# small_root OPTIONS: a tiny tmpfs as this test's --root.
small_root() {
	local small=$TEST_DIR/small
	mkdir -p "$small"
	mount -t tmpfs -o "$1" tmpfs "$small"
	defer umount -l "$small"
	TEST_OWN_MOUNTS+=("$small")
	ROOT=$small/state
	mkdir -p "$ROOT"
}

@test "fault: a full disk under --root (no inode left): create fails clearly and leaves nothing" {
	small_root size=64k,nr_inodes=16
	local i
	for ((i = 0; i < 32; i++)); do touch "$ROOT/../fill$i" 2>/dev/null || break; done
	create_container full
	assert_failure 1
	assert_one_error_line 'full.*No space left on device'
	assert_host_clean
}

@test "fault: a full disk when the state is written: create fails clearly and leaves nothing" {
	# room for directories and the fifo, none for the contents of state.json
	small_root size=4k
	head -c 8192 /dev/zero >"$ROOT/../fill" 2>/dev/null || true
	create_container full
	assert_failure 1
	assert_one_error_line 'No space left on device'
	assert_host_clean
}

@test "fault: a pid reused by another process: kill and delete never signal it" {
	create_container ct
	assert_success
	local pid ns
	pid=$(state_field ct .pid)
	ns=$(stat -L -c %i "/proc/$pid/ns/net")
	# an unrelated process, and the state pointing at it
	sleep 300 &
	local victim=$!
	defer kill -9 "$victim"
	kill -9 "$pid"
	wait_for_status ct stopped
	jq --argjson p "$victim" '.pid = $p' "$ROOT/ct/state.json" >"$TEST_DIR/st" && cp "$TEST_DIR/st" "$ROOT/ct/state.json"
	runtime state ct
	assert_success
	[ "$(jq -r .status <<<"$stdout")" = stopped ]
	runtime kill ct KILL
	assert_failure 1
	assert_output_contains 'not running'
	kill -0 "$victim"
	runtime delete --force ct
	assert_success
	kill -0 "$victim"
	[ "$(awk '{print $3}' /proc/$victim/stat)" != Z ]
	assert_host_clean "$ns"
}
