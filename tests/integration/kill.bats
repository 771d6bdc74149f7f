#!/usr/bin/env bats
# kill: signals by number and name, --all, and the errors engines rely on.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# start_pause ID: a running container whose init waits for a signal and
# reports it ("got signal N") on its stdout, $CT_STDOUT.
start_pause() {
	set_args abtest pause ready
	run_container "$1" --detach
	assert_success
	CT_STDOUT=$RT_STDOUT
	wait_for_status "$1" running
	wait_for_line "$CT_STDOUT" '^ready$'
}

@test "kill ID 15: by number" {
	start_pause ct
	runtime kill ct 15
	assert_success
	wait_for_status ct stopped
	wait_for_line "$CT_STDOUT" '^got signal 15$'
}

@test "kill ID SIGTERM and kill ID TERM: by name, with and without SIG" {
	start_pause a
	runtime kill a SIGTERM
	assert_success
	wait_for_status a stopped
	wait_for_line "$CT_STDOUT" '^got signal 15$'

	start_pause b
	runtime kill b TERM
	assert_success
	wait_for_status b stopped
	wait_for_line "$CT_STDOUT" '^got signal 15$'
}

@test "kill ID: the default signal is SIGTERM" {
	start_pause ct
	runtime kill ct
	assert_success
	wait_for_status ct stopped
	wait_for_line "$CT_STDOUT" '^got signal 15$'
}

@test "kill ID USR1 / 10 / SIGHUP: other signals reach the process" {
	start_pause a
	runtime kill a USR1
	assert_success
	wait_for_line "$CT_STDOUT" '^got signal 10$'

	start_pause b
	runtime kill b 1
	assert_success
	wait_for_line "$CT_STDOUT" '^got signal 1$'
}

@test "kill ID 9: SIGKILL stops even a process that handles TERM" {
	start_pause ct
	local pid
	pid=$(state_field ct .pid)
	runtime kill ct 9
	assert_success
	wait_for_status ct stopped
	wait_gone "$pid"
	! grep -q 'got signal' "$CT_STDOUT" || fail "succeeded, must not: grep -q 'got signal' \"\$CT_STDOUT\""
}

@test "kill ID KILL of a created container stops it before it ever runs" {
	set_args abtest echo should-not-run
	create_container ct
	assert_success
	runtime kill ct KILL
	assert_success
	wait_for_status ct stopped
	runtime delete ct
	assert_success
	! grep -q should-not-run "$CT_STDOUT" || fail "succeeded, must not: grep -q should-not-run \"\$CT_STDOUT\""
	assert_nothing_left
}

@test "kill of a stopped container: exit 1, 'container not running'" {
	set_args abtest true
	create_container ct
	runtime start ct
	assert_success
	wait_for_status ct stopped

	runtime kill ct 15
	assert_failure 1
	assert_output_contains "container not running"
}

@test "kill with a bad signal is an error and the container keeps running" {
	start_pause ct
	runtime kill ct SIGNOPE
	assert_failure 1
	runtime kill ct 99999
	assert_failure 1
	wait_for_status ct running
	! grep -q 'got signal' "$CT_STDOUT" || fail "succeeded, must not: grep -q 'got signal' \"\$CT_STDOUT\""
}

@test "kill ID 0 checks the init is alive; kill --all ID 0 also after it stopped" {
	# runc's kill.bats: "kill -a test_busybox 0" after the container stopped
	start_pause ct
	runtime kill ct 0
	assert_success
	wait_for_status ct running
	runtime kill ct KILL
	assert_success
	wait_for_status ct stopped
	runtime kill ct 0
	assert_failure 1
	assert_output_contains "container not running"
	runtime kill --all ct 0
	assert_success
}

@test "kill --all ID 9: every process of the container dies" {
	set_args sh -c 'abtest pause & abtest pause & exec abtest pause ready'
	run_container ct --detach
	assert_success
	wait_for_status ct running
	wait_for_line "$RT_STDOUT" '^ready$'
	local pids
	pids=$(bundle_pids)
	[ "$(wc -w <<<"$pids")" -ge 3 ]

	runtime kill --all ct 9
	assert_success
	wait_gone $pids
	wait_for_status ct stopped
}

@test "kill --all works after init has exited, killing what is left" {
	# without a pid namespace, init's children survive its exit
	update_config 'del(.linux.namespaces[] | select(.type == "pid"))'
	set_args sh -c 'abtest pause </dev/null >/dev/null 2>&1 & echo started'
	run_container ct --detach
	assert_success
	wait_for_status ct stopped
	local pids i
	for ((i = 0; i < 250; i++)); do
		pids=$(bundle_pids)
		[ -n "$pids" ] && break
		sleep 0.02
	done
	[ -n "$pids" ]

	runtime kill --all ct 9
	assert_success
	wait_gone $pids
}

@test "run in the foreground forwards SIGTERM to the container's process" {
	set_args abtest pause ready
	local out=$TEST_DIR/fg.out rc=0
	"$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" ct </dev/null >"$out" 2>&1 3>&- &
	local rtpid=$!
	wait_for_line "$out" '^ready$'
	kill -TERM "$rtpid"
	wait "$rtpid" || rc=$?
	cat "$out" >&2
	grep -qx 'got signal 15' "$out"
	# the process handled it and exited 0: so does run
	[ "$rc" -eq 0 ]
}
