#!/usr/bin/env bats
# Signals out of the box (issue 22, hole 10): every process that enters a
# container starts a session of its own, so `kill -USR1 0` from inside reaches
# nothing of the caller's process group, with or without a terminal, by
# exec, run and create/start. The unprotected reference: the same process put
# into the container's namespaces by nsenter, which keeps the caller's group.
# Names: abfl-*.

load helpers
load ../helper/floor

setup() {
	requires root agentbox
	setup_bundle
	floor_config
	with_caps docker
	GOT=$TEST_DIR/got-usr1
}

teardown() {
	teardown_bundle
}

# as_group_leader CMD...: run CMD in a new process group whose leader, a shell,
# notes a SIGUSR1 in $GOT; waits for CMD.
as_group_leader() {
	setsid -w bash -c 'trap "echo got >> \"$0\"" USR1; "$@"; sleep 0.3; true' "$GOT" "$@" \
		</dev/null >"$TEST_DIR/leader.out" 2>&1 3>&-
}

@test "exec: kill(0) from an exec'd process does not reach the caller's process group (no terminal)" {
	set_args abtest pause ready
	run_container abfl-exec --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid
	pid=$(state_field abfl-exec .pid)
	# unprotected: nsenter keeps the caller's process group
	as_group_leader nsenter -t "$pid" -a sh -c 'kill -USR1 0'
	[ -s "$GOT" ] || unprotected_failed "nsenter: no signal reached the caller ($(cat "$TEST_DIR/leader.out"))"
	rm -f "$GOT"

	as_group_leader "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" exec abfl-exec sh -c 'trap "" USR1; kill -USR1 0; echo sent'
	grep -q sent "$TEST_DIR/leader.out" || fail "the exec did not run: $(cat "$TEST_DIR/leader.out")"
	[ ! -e "$GOT" ] || fail "kill(0) from exec reached the caller's process group"
	# and its session is its own
	runtime exec abfl-exec sh -c 'echo $$; cut -d" " -f6 /proc/$$/stat'
	assert_success
	[ "${lines[0]}" = "${lines[1]}" ] || fail "the exec'd process leads no session: $output"
}

@test "exec with a terminal, run and create/start: kill(0) from inside does not reach the caller" {
	requires tty
	set_args sh -c 'trap "" USR1; kill -USR1 0; echo sent'
	as_group_leader "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" run --bundle "$BUNDLE" abfl-run
	grep -q sent "$TEST_DIR/leader.out" || fail "run did not run it: $(cat "$TEST_DIR/leader.out")"
	[ ! -e "$GOT" ] || fail "kill(0) from run reached the caller"

	as_group_leader "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" create --bundle "$BUNDLE" abfl-create
	as_group_leader "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" start abfl-create
	wait_for_status abfl-create stopped
	[ ! -e "$GOT" ] || fail "kill(0) from create/start reached the caller"

	set_args abtest pause ready
	run_container abfl-tty --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	as_group_leader "$PYTHON" "$INTEGRATION_ROOT/ptyrun.py" "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" \
		exec -t abfl-tty sh -c 'trap "" USR1; kill -USR1 0; echo sent'
	grep -q sent "$TEST_DIR/leader.out" || fail "exec -t did not run: $(cat "$TEST_DIR/leader.out")"
	[ ! -e "$GOT" ] || fail "kill(0) from exec -t reached the caller"
}
