#!/usr/bin/env bats
# create / start / state / list / delete / run: the container lifecycle.

load helpers

setup() {
	requires root
	setup_bundle
	# /sync: a host dir the container can watch, so tests never need to sleep
	SYNC_DIR=$TEST_DIR/sync
	mkdir -p "$SYNC_DIR"
	add_mount /sync bind "$SYNC_DIR" rbind rw
}

teardown() {
	teardown_bundle
}

# the container's process waits until the test creates /sync/go
wait_for_go() {
	set_args sh -c 'while [ ! -e /sync/go ]; do sleep 0.02; done; echo released'
}

@test "create: state is created, with id, pid, bundle and an init that waits" {
	create_container ct --pid-file "$TEST_DIR/pid"
	assert_success

	runtime state ct
	assert_success
	[ "$(jq -r .id <<<"$stdout")" = ct ]
	[ "$(jq -r .status <<<"$stdout")" = created ]
	[ "$(jq -r .bundle <<<"$stdout")" = "$BUNDLE" ]
	[ -n "$(jq -r .ociVersion <<<"$stdout")" ]
	local pid
	pid=$(jq -r .pid <<<"$stdout")
	[ "$pid" -gt 1 ]
	[ -d "/proc/$pid" ]
	# the user's program has not run yet
	[ ! -s "$CT_STDOUT" ]
}

@test "create --pid-file writes the init's host pid, the same as state's" {
	create_container ct --pid-file "$TEST_DIR/ct.pid"
	assert_success
	[ -s "$TEST_DIR/ct.pid" ]
	local pid
	pid=$(cat "$TEST_DIR/ct.pid")
	[[ "$pid" =~ ^[0-9]+$ ]]
	[ "$pid" = "$(state_field ct .pid)" ]
	[ -d "/proc/$pid" ]
}

@test "start: created -> running -> stopped when the process exits" {
	wait_for_go
	create_container ct
	assert_success
	wait_for_status ct created

	runtime start ct
	assert_success
	wait_for_status ct running

	touch "$SYNC_DIR/go"
	wait_for_status ct stopped
	wait_for_line "$CT_STDOUT" '^released$'
}

@test "start: a second start of a running container fails" {
	wait_for_go
	create_container ct
	runtime start ct
	assert_success
	wait_for_status ct running
	runtime start ct
	assert_failure
	# and the container is still running
	wait_for_status ct running
}

@test "delete: a stopped container is gone, with its state and cgroup" {
	create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped

	runtime delete ct
	assert_success
	runtime state ct
	assert_failure 1
	assert_output_contains "does not exist"
	assert_nothing_left
}

@test "delete: a created (never started) container is removed and its init killed" {
	create_container ct
	assert_success
	local pid
	pid=$(state_field ct .pid)
	[ -d "/proc/$pid" ]

	runtime delete ct
	assert_success
	wait_gone "$pid"
	assert_nothing_left
	# the program never ran
	[ ! -s "$CT_STDOUT" ]
}

@test "delete: a running container without --force is refused and keeps running" {
	wait_for_go
	run_container ct --detach
	assert_success
	wait_for_status ct running

	runtime delete ct
	assert_failure
	wait_for_status ct running
	[ -d "/proc/$(state_field ct .pid)" ]
}

@test "delete --force: a running container is killed and gone, no process left" {
	set_args abtest pause
	run_container ct --detach
	assert_success
	wait_for_status ct running
	local pid
	pid=$(state_field ct .pid)

	runtime delete --force ct
	assert_success
	wait_gone "$pid"
	runtime state ct
	assert_failure 1
	assert_nothing_left
}

@test "delete --force: a container with several processes leaves none behind" {
	set_args sh -c 'abtest pause & abtest pause & abtest pause'
	run_container ct --detach
	assert_success
	wait_for_status ct running
	# wait for the three processes (sh execs the last one)
	local i
	for ((i = 0; i < 250; i++)); do
		[ "$(bundle_pids | wc -l)" -ge 3 ] && break
		sleep 0.02
	done
	[ "$(bundle_pids | wc -l)" -ge 3 ]

	runtime delete --force ct
	assert_success
	assert_nothing_left
}

@test "run: exit status of the container process is the runtime's" {
	set_args abtest true
	run_container ct0
	assert_success

	set_args sh -c 'exit 7'
	run_container ct7
	assert_failure 7

	set_args abtest false
	run_container ct1
	assert_failure 1

	# `run` removes the container when it exits
	runtime list -q
	assert_success
	[ -z "$stdout" ]
}

@test "run: a process killed by a signal gives 128+signal" {
	# in the host pid namespace sh is not an init, so it can die of SIGKILL
	update_config 'del(.linux.namespaces[] | select(.type == "pid"))'
	set_args sh -c 'kill -9 $$'
	run_container ct
	assert_failure 137
}

@test "run: output of the container reaches the runtime's stdout" {
	set_args abtest echo hello from the container
	run_container ct
	assert_success
	[ "$stdout" = "hello from the container" ]
}

@test "run --detach: returns while the process runs; state shows running" {
	wait_for_go
	run_container ct --detach
	assert_success
	wait_for_status ct running

	touch "$SYNC_DIR/go"
	wait_for_status ct stopped
	wait_for_line "$RT_STDOUT" '^released$'
}

@test "run --detach --pid-file writes the pid of the running process" {
	set_args abtest pause
	run_container ct --detach --pid-file "$TEST_DIR/pid"
	assert_success
	[ "$(cat "$TEST_DIR/pid")" = "$(state_field ct .pid)" ]
	grep -q abtest "/proc/$(cat "$TEST_DIR/pid")/cmdline"
}

@test "list -q and list --format json show every container" {
	create_container one
	assert_success
	create_container two
	assert_success

	runtime list -q
	assert_success
	[ "$(sort <<<"$stdout" | tr '\n' ' ')" = "one two " ]

	runtime list --format json
	assert_success
	[ "$(jq -r 'map(.id) | sort | join(" ")' <<<"$stdout")" = "one two" ]
	[ "$(jq -r 'map(.status) | unique | join(" ")' <<<"$stdout")" = created ]
	[ "$(jq -r '.[] | select(.id == "one") | .pid' <<<"$stdout")" = "$(state_field one .pid)" ]
	[ "$(jq -r '.[0].bundle' <<<"$stdout")" = "$BUNDLE" ]
}

# bats test_tags=agentbox-only
@test "--json: list, ps, state, features and events take agentbox's one spelling for machine-readable output" {
	requires agentbox
	create_container one
	assert_success
	runtime list --format json
	assert_success
	local want=$stdout
	runtime list --json
	assert_success
	[ "$stdout" = "$want" ]
	runtime ps --format json one
	assert_success
	want=$stdout
	runtime ps --json one
	assert_success
	[ "$stdout" = "$want" ]
	[ "$(jq -r '.[0]' <<<"$stdout")" = "$(state_field one .pid)" ]
	# JSON is all these print: --json changes nothing, and is no error
	runtime state one
	want=$stdout
	runtime state --json one
	assert_success
	[ "$stdout" = "$want" ]
	runtime features
	want=$stdout
	runtime features --json
	assert_success
	[ "$stdout" = "$want" ]
	runtime events --json --stats one
	assert_success
	[ "$(jq -r .type <<<"$stdout")" = stats ]
}

@test "list: empty state dir lists nothing, in both formats" {
	runtime list -q
	assert_success
	[ -z "$stdout" ]
	runtime list --format json
	assert_success
	# runc prints null for an empty list; [] is as good
	[[ "$stdout" == "null" || "$(jq length <<<"$stdout")" == 0 ]]
}

@test "state/delete/kill of a missing container: exit 1, 'does not exist'" {
	runtime state nosuch
	assert_failure 1
	assert_output_contains "does not exist"

	runtime delete nosuch
	assert_failure 1
	assert_output_contains "does not exist"

	runtime kill nosuch 15
	assert_failure 1
	assert_output_contains "does not exist"

	runtime start nosuch
	assert_failure 1
	assert_output_contains "does not exist"
}

@test "delete --force of a missing container exits 0 (cleanup runs it twice)" {
	runtime delete --force nosuch
	assert_success

	create_container ct
	runtime delete --force ct
	assert_success
	runtime delete --force ct
	assert_success
}

@test "create: a duplicate id is refused and the first container is untouched" {
	create_container ct --pid-file "$TEST_DIR/pid1"
	assert_success
	local pid
	pid=$(cat "$TEST_DIR/pid1")

	create_container ct --pid-file "$TEST_DIR/pid2"
	assert_failure 1
	assert_output_contains "exists"
	[ ! -e "$TEST_DIR/pid2" ]

	[ "$(state_field ct .status)" = created ]
	[ "$(state_field ct .pid)" = "$pid" ]
	[ -d "/proc/$pid" ]
	# and it still starts
	runtime start ct
	assert_success
	wait_for_status ct stopped
}

@test "run: a duplicate id is refused while the first runs" {
	set_args abtest pause
	run_container ct --detach
	assert_success
	local pid
	pid=$(state_field ct .pid)

	set_args abtest echo second
	run_container ct
	assert_failure 1
	[[ "$stdout" != *second* ]]
	[ "$(state_field ct .pid)" = "$pid" ]
	wait_for_status ct running
}

@test "create: ids with '/' or '..' are refused and create nothing" {
	local id
	for id in "a/b" ".." "../escape" "x/../../escape" "/abs"; do
		create_container "$id"
		assert_failure 1
	done
	[ ! -e "$TEST_DIR/escape" ]
	[ ! -e "$ROOT/a" ]
	assert_nothing_left
}

@test "run: --bundle works from any cwd (engines never rely on cwd)" {
	set_args abtest pwd
	runtime_at / run --bundle "$BUNDLE" ct
	assert_success
	[ "$stdout" = / ]
}

@test "create: without --bundle the cwd is the bundle" {
	create_container_cwd() { runtime_at "$BUNDLE" create ct </dev/null; }
	create_container_cwd
	assert_success
	[ "$(state_field ct .bundle)" = "$BUNDLE" ]
}
