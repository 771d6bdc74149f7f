#!/usr/bin/env bats
# `delete --force` of a container whose state.json is damaged or gone (issue
# 34): it used to remove the state and report success while the container's
# processes ran on and its cgroups stayed, where nothing listed them any more.
# agentbox keeps what cleanup needs in a second record of its own
# (ROOT/ID/cleanup, runtime/state/state_record.h), falls back on the cgroup it
# names after the id, and where nothing identifies the container it fails and
# keeps the directory. Processes are known by pid and start time: a pid used
# again is never signalled. Names: abdd-*.

load helpers

setup() {
	requires root agentbox
	setup_bundle
	set_args abtest pause
}

teardown() {
	teardown_bundle
}

alive() { [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# cgroup_dirs PATH: the directories of cgroup PATH in every hierarchy
cgroup_dirs() {
	local h
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h${1#/}" ] && echo "$h${1#/}"
	done
	true
}

# end_by_hand PID CGROUP: what the test itself must end when nothing else can
end_by_hand() {
	local d p
	kill -9 "$1" 2>/dev/null || true
	for d in $(cgroup_dirs "$2"); do
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
	done
	wait_gone "$1" || true
	for d in $(cgroup_dirs "$2" | sort -r); do rmdir "$d" 2>/dev/null || true; done
}

@test "a damaged state.json: runc's delete --force leaves the container running; agentbox's ends its init, DNS sentry and cgroups from the cleanup record" {
	requires_runc
	local pid sentry damage id
	# runc: the container outlives its state
	mkdir -p "$TEST_DIR/runc-state"
	"$RUNC" --root "$TEST_DIR/runc-state" create --bundle "$BUNDLE" abdd-runc </dev/null >/dev/null 2>&1 3>&- ||
		fail "runc create failed"
	pid=$(jq -r .init_process_pid "$TEST_DIR/runc-state/abdd-runc/state.json")
	defer end_by_hand "$pid" "$CGROUP_PATH"
	echo garbage >"$TEST_DIR/runc-state/abdd-runc/state.json"
	"$RUNC" --root "$TEST_DIR/runc-state" delete --force abdd-runc >/dev/null 2>&1 3>&- || true
	alive "$pid" || unprotected_failed "runc's delete --force ended the container"
	end_by_hand "$pid" "$CGROUP_PATH"
	rm -rf "$TEST_DIR/runc-state/abdd-runc"

	for damage in garbage empty missing cut-before-cgroup; do
		id=abdd-$damage
		# the first with the built-in policy: a DNS sentry to end too
		if [ $damage = garbage ]; then agent_policy default; else agent_policy permissive; fi
		create_container $id
		assert_success
		pid=$(state_field $id .pid)
		sentry=$(jq -r '.sentryPid // 0' "$ROOT/$id/state.json")
		[ $damage != garbage ] || [ "$sentry" -gt 0 ] || fail "no DNS sentry to end"
		case $damage in
		garbage) head -c 300 /dev/urandom >"$ROOT/$id/state.json" ;;
		empty) : >"$ROOT/$id/state.json" ;;
		missing) rm "$ROOT/$id/state.json" ;;
		cut-before-cgroup) sed -i 's/,"cgroupMode".*//' "$ROOT/$id/state.json" ;;
		esac
		runtime delete --force $id
		assert_success
		assert_output_contains "cleanup record"
		[ ! -e "$ROOT/$id" ] || fail "$damage: the state dir is left"
		wait_gone "$pid" || fail "$damage: the init $pid runs on"
		[ "$sentry" = 0 ] || wait_gone "$sentry" || fail "$damage: the DNS sentry $sentry runs on"
		[ -z "$(cgroup_dirs "$CGROUP_PATH")" ] || fail "$damage: cgroups left: $(cgroup_dirs "$CGROUP_PATH")"
	done
}

@test "state.json and the cleanup record both damaged: the cgroup named after the id is found; with none, one error line and the directory is kept" {
	local pid
	# no cgroupsPath: agentbox names the cgroup /agentbox/ID
	update_config 'del(.linux.cgroupsPath)'
	create_container abdd-named
	assert_success
	pid=$(state_field abdd-named .pid)
	defer end_by_hand "$pid" /agentbox/abdd-named
	echo garbage >"$ROOT/abdd-named/state.json"
	echo garbage >"$ROOT/abdd-named/cleanup"
	runtime delete --force abdd-named
	assert_success
	assert_output_contains "found by its cgroup /agentbox/abdd-named alone"
	wait_gone "$pid" || fail "the init $pid runs on"
	[ -z "$(cgroup_dirs /agentbox/abdd-named)" ] || fail "cgroups left: $(cgroup_dirs /agentbox/abdd-named)"
	[ ! -e "$ROOT/abdd-named" ]

	# a cgroupsPath of the engine's own: nothing names the container any more
	update_config '.linux.cgroupsPath = $cg' --arg cg "$CGROUP_PATH"
	create_container abdd-lost
	assert_success
	pid=$(state_field abdd-lost .pid)
	defer end_by_hand "$pid" "$CGROUP_PATH"
	echo garbage >"$ROOT/abdd-lost/state.json"
	rm "$ROOT/abdd-lost/cleanup"
	runtime delete --force abdd-lost
	assert_failure 1
	assert_one_error_line "container \"abdd-lost\".*cleanup record.*cannot be identified; its state directory $ROOT/abdd-lost is kept"
	[ -d "$ROOT/abdd-lost" ] || fail "the state dir was removed"
	alive "$pid" || fail "something ended the init"
	end_by_hand "$pid" "$CGROUP_PATH"
	rm -rf "$ROOT/abdd-lost"
	# a create stopped before its first record made nothing: its empty
	# directory goes
	mkdir "$ROOT/abdd-empty"
	runtime delete --force abdd-empty
	assert_success
	[ ! -e "$ROOT/abdd-empty" ]
}

@test "a cleanup record naming a pid used again (another start time) signals nothing" {
	sleep 60 &
	local other=$! body
	defer kill "$other"
	mkdir -p "$ROOT/abdd-reuse"
	body=$(printf 'agentbox cleanup record 1\nid abdd-reuse\ninit %d 1\npidns own\ncgroup disabled -\nsentry %d 1\ngateway 0 0\n' \
		"$other" "$other")
	printf '%s\nsha256 %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$ROOT/abdd-reuse/cleanup"
	runtime delete --force abdd-reuse
	assert_success
	assert_output_contains "cleanup record"
	[ ! -e "$ROOT/abdd-reuse" ]
	alive "$other" || fail "a process with the recorded pid but another start time was signalled"
}
