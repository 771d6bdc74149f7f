#!/usr/bin/env bats
# hooks: the six kinds, the state on their stdin, where they run, failures
# and timeouts.

load helpers

setup() {
	requires root
	setup_bundle
	HOOK_DIR=$TEST_DIR/hooks
	mkdir -p "$HOOK_DIR"
	# the container sees the same dir at /hookout
	add_mount /hookout bind "$HOOK_DIR" rbind rw
	update_config '.root.readonly = false'
	# one script, on the host and in the rootfs: records stdin (the state),
	# its namespaces, args and env under KIND.*, and appends KIND to order.
	# On the host (and before pivot_root) $HOOK_DIR exists; in the container
	# only /hookout does.
	cat >"$TEST_DIR/hook.sh" <<-EOF
		#!/bin/sh
		kind=\$1
		out=$HOOK_DIR
		[ -d "\$out" ] || out=/hookout
		cat >"\$out/\$kind.json"
		readlink /proc/self/ns/mnt >"\$out/\$kind.mnt"
		echo "\$@" >"\$out/\$kind.args"
		env >"\$out/\$kind.env"
		echo "\$kind" >>"\$out/order"
	EOF
	chmod 755 "$TEST_DIR/hook.sh"
	cp "$TEST_DIR/hook.sh" "$BUNDLE/rootfs/hook.sh"
	HOST_HOOK=$TEST_DIR/hook.sh
}

teardown() {
	teardown_bundle
}

# hook_entry PATH KIND: a hook running PATH with KIND as $1
hook_entry() {
	jq -nc --arg p "$1" --arg k "$2" '{path: $p, args: ["hook.sh", $k], env: ["HOOKVAR=from-config", "PATH=/usr/bin:/bin"]}'
}

# all_hooks: every kind, startContainer with the in-container path
all_hooks() {
	update_config '.hooks = {
		prestart: [$pre], createRuntime: [$cr], createContainer: [$cc],
		startContainer: [$sc], poststart: [$ps], poststop: [$pst]}' \
		--argjson pre "$(hook_entry "$HOST_HOOK" prestart)" \
		--argjson cr "$(hook_entry "$HOST_HOOK" createRuntime)" \
		--argjson cc "$(hook_entry "$HOST_HOOK" createContainer)" \
		--argjson sc "$(hook_entry /hook.sh startContainer)" \
		--argjson ps "$(hook_entry "$HOST_HOOK" poststart)" \
		--argjson pst "$(hook_entry "$HOST_HOOK" poststop)"
}

@test "hooks: all six run, in order, each with the state on stdin" {
	all_hooks
	set_args abtest pause ready
	create_container ct
	assert_success
	local pid
	pid=$(state_field ct .pid)
	[ -s "$HOOK_DIR/prestart.json" ]
	[ -s "$HOOK_DIR/createRuntime.json" ]
	[ -s "$HOOK_DIR/createContainer.json" ]
	[ ! -e "$HOOK_DIR/startContainer.json" ]

	runtime start ct
	assert_success
	wait_for_line "$CT_STDOUT" '^ready$'
	[ -s "$HOOK_DIR/startContainer.json" ]
	wait_for_file "$HOOK_DIR/poststart.json"
	[ ! -e "$HOOK_DIR/poststop.json" ]

	runtime kill ct KILL
	wait_for_status ct stopped
	runtime delete ct
	assert_success
	wait_for_file "$HOOK_DIR/poststop.json"

	local kind
	for kind in prestart createRuntime createContainer startContainer poststart poststop; do
		[ "$(jq -r .id "$HOOK_DIR/$kind.json")" = ct ] || fail "$kind: wrong id"
		[ "$(jq -r .bundle "$HOOK_DIR/$kind.json")" = "$BUNDLE" ] || fail "$kind: wrong bundle"
		[ -n "$(jq -r .ociVersion "$HOOK_DIR/$kind.json")" ] || fail "$kind: no ociVersion"
	done
	for kind in prestart createRuntime poststart; do
		[ "$(jq -r .pid "$HOOK_DIR/$kind.json")" = "$pid" ] || fail "$kind: pid is not the init's"
	done
	# hooks inside the container may see the init's pid in its own pid ns (runc: 1)
	for kind in createContainer startContainer; do
		[[ "$(jq -r .pid "$HOOK_DIR/$kind.json")" =~ ^($pid|1)$ ]] || fail "$kind: pid is not the init's"
	done
	for kind in prestart createRuntime createContainer; do
		[ "$(jq -r .status "$HOOK_DIR/$kind.json")" = creating ] || fail "$kind: status is not creating"
	done
	[ "$(jq -r .status "$HOOK_DIR/startContainer.json")" = created ]
	# runc reports created here; running is as right (the process has started)
	[[ "$(jq -r .status "$HOOK_DIR/poststart.json")" =~ ^(created|running)$ ]]
	[ "$(jq -r .status "$HOOK_DIR/poststop.json")" = stopped ]

	# the order of the lifecycle
	local order
	order=$(tr '\n' ' ' <"$HOOK_DIR/order")
	# (startContainer vs poststart: see the agentbox-only test below)
	[[ "$order" =~ createRuntime.*createContainer.*startContainer.*poststop ]] ||
		fail "hooks ran in the order: $order"
	[[ "$order" =~ createContainer.*poststart.*poststop ]] || fail "hooks ran in the order: $order"
	[[ "$order" =~ prestart.*startContainer ]] || fail "hooks ran in the order: $order"
}

# bats test_tags=agentbox-only
@test "hooks: startContainer runs before poststart" {
	# The spec orders them: startContainer before the user's program is
	# executed, poststart after. runc 1.1.5 runs them concurrently (poststart
	# in `runc start`, startContainer in the init), so it often fails this.
	requires agentbox
	all_hooks
	set_args abtest pause
	create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_file "$HOOK_DIR/poststart.json"
	local order
	order=$(grep -E '^(startContainer|poststart)$' "$HOOK_DIR/order" | tr '\n' ' ')
	[ "$order" = "startContainer poststart " ] || fail "order: $order"
}

@test "hooks: prestart, createRuntime, poststart, poststop run in the host's mount ns; createContainer, startContainer in the container's" {
	all_hooks
	set_args abtest pause ready
	create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_line "$CT_STDOUT" '^ready$'
	wait_for_file "$HOOK_DIR/poststart.mnt"
	local ct_mnt host_mnt
	ct_mnt=$(readlink "/proc/$(state_field ct .pid)/ns/mnt")
	host_mnt=$(host_ns mnt)
	runtime delete --force ct
	wait_for_file "$HOOK_DIR/poststop.mnt"

	local kind
	for kind in prestart createRuntime poststart poststop; do
		[ "$(cat "$HOOK_DIR/$kind.mnt")" = "$host_mnt" ] || fail "$kind did not run in the host's mount ns"
	done
	for kind in createContainer startContainer; do
		[ "$(cat "$HOOK_DIR/$kind.mnt")" = "$ct_mnt" ] || fail "$kind did not run in the container's mount ns"
	done
}

@test "hooks: args and env come from the config, not from the runtime's env" {
	update_config '.hooks.createRuntime = [{path: $p, args: ["hook.sh", "createRuntime", "extra arg"],
		env: ["HOOKVAR=from-config"]}]' --arg p "$HOST_HOOK"
	AB_HOST_SECRET=leaked create_container ct
	assert_success
	[ "$(cat "$HOOK_DIR/createRuntime.args")" = "createRuntime extra arg" ]
	grep -qx HOOKVAR=from-config "$HOOK_DIR/createRuntime.env"
	! grep -q AB_HOST_SECRET "$HOOK_DIR/createRuntime.env" || fail "succeeded, must not: grep -q AB_HOST_SECRET \"\$HOOK_DIR/createRuntime.env\""
}

@test "hooks: several hooks of one kind run in the order given" {
	update_config '.hooks.prestart = [
		{path: "/bin/sh", args: ["sh", "-c", "echo first >>\($d)/seq"]},
		{path: "/bin/sh", args: ["sh", "-c", "echo second >>\($d)/seq"]},
		{path: "/bin/sh", args: ["sh", "-c", "echo third >>\($d)/seq"]}]' --arg d "$HOOK_DIR"
	create_container ct
	assert_success
	[ "$(tr '\n' ' ' <"$HOOK_DIR/seq")" = "first second third " ]
}

@test "hooks: createContainer runs with the rootfs as its working directory, as runc's" {
	# runc's hooks.bats binds a library at ./lib/... from such a hook
	update_config '.hooks.createContainer = [{path: "/bin/sh",
		args: ["sh", "-c", "pwd >\($d)/cc.cwd && echo made >./made-by-hook"]}]' --arg d "$HOOK_DIR"
	set_args cat /made-by-hook
	run_container ct
	assert_success
	[ "$stdout" = made ] || fail "$output"
	[ "$(cat "$HOOK_DIR/cc.cwd")" = "$(realpath "$BUNDLE/rootfs")" ] || fail "cwd: $(cat "$HOOK_DIR/cc.cwd")"
}

@test "hooks: a failing prestart hook fails create and leaves nothing behind" {
	update_config '.hooks.prestart = [{path: "/bin/sh", args: ["sh", "-c", "echo hook-failed >&2; exit 3"]}]'
	set_args abtest echo must-not-run
	create_container ct
	assert_failure 1
	assert_nothing_left
	! grep -q must-not-run "$CT_STDOUT" || fail "succeeded, must not: grep -q must-not-run \"\$CT_STDOUT\""
}

@test "hooks: a failing createRuntime hook fails create and leaves nothing behind" {
	update_config '.hooks.createRuntime = [{path: "/bin/false", args: ["false"]}]'
	create_container ct
	assert_failure 1
	assert_nothing_left
}

@test "hooks: a missing hook binary fails create and leaves nothing behind" {
	update_config '.hooks.createRuntime = [{path: "/nonexistent/hook", args: ["hook"]}]'
	create_container ct
	assert_failure 1
	assert_nothing_left
}

@test "hooks: a hook that outlives its timeout is killed and create fails" {
	update_config '.hooks.createRuntime = [{path: "/bin/sh",
		args: ["sh", "-c", "echo $$ >\($d)/slow.pid; exec sleep 30"], timeout: 1}]' --arg d "$HOOK_DIR"
	local t0=$SECONDS
	create_container ct
	assert_failure 1
	# well before the hook's own 30 s
	[ $((SECONDS - t0)) -lt 15 ]
	[ -s "$HOOK_DIR/slow.pid" ]
	wait_gone "$(cat "$HOOK_DIR/slow.pid")" || fail "the timed-out hook is still running"
	assert_nothing_left
}

@test "hooks: poststop runs on delete --force of a running container" {
	update_config '.hooks.poststop = [$h]' --argjson h "$(hook_entry "$HOST_HOOK" poststop)"
	set_args abtest pause
	run_container ct --detach
	assert_success
	wait_for_status ct running
	runtime delete --force ct
	assert_success
	wait_for_file "$HOOK_DIR/poststop.json"
	[ "$(jq -r .id "$HOOK_DIR/poststop.json")" = ct ]
}

@test "hooks: a failing poststop hook does not stop delete" {
	update_config '.hooks.poststop = [{path: "/bin/false", args: ["false"]}]'
	create_container ct
	assert_success
	runtime delete --force ct
	runtime state ct
	assert_failure 1
	assert_nothing_left
}

@test "hooks: a hook without env gets the runtime's environment, env: [] an empty one" {
	# runc and crun hand such a hook their own environment (crun's
	# test-hook-env-inherit); hooks count on PATH and the engine's variables
	update_config '.hooks.prestart = [{path: $p, args: ["hook.sh", "prestart"]}]
		| .hooks.createRuntime = [{path: $p, args: ["hook.sh", "createRuntime"], env: []}]' \
		--arg p "$HOST_HOOK"
	AB_HOOK_PROBE=from-runtime create_container ct
	assert_success
	grep -qx AB_HOOK_PROBE=from-runtime "$HOOK_DIR/prestart.env" ||
		fail "prestart without env did not get the runtime's environment: $(cat "$HOOK_DIR/prestart.env")"
	! grep -q AB_HOOK_PROBE "$HOOK_DIR/createRuntime.env" || fail "env: [] is not an empty environment"
}

@test "hooks: createContainer and startContainer hooks without env do not get the runtime's environment" {
	# they run in the container's namespaces: the host's environment stays out
	update_config '.hooks.createContainer = [{path: $p, args: ["hook.sh", "createContainer"]}]
		| .hooks.startContainer = [{path: "/hook.sh", args: ["hook.sh", "startContainer"]}]' \
		--arg p "$HOST_HOOK"
	AB_HOOK_PROBE=from-runtime create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_file "$HOOK_DIR/startContainer.env"
	! grep -q AB_HOOK_PROBE "$HOOK_DIR/createContainer.env" "$HOOK_DIR/startContainer.env" ||
		fail "the runtime's environment reached a hook in the container's namespaces"
}

@test "hooks: a failing poststart hook stops and deletes the container" {
	# runtime-spec 1.3: "generate an error, stop the container, and continue the
	# lifecycle at step 12" (crun's test-poststart-fail-deletes-container).
	# runc 1.1.5 runs poststart hooks during create and fails there; agentbox
	# creates, and start fails
	update_config '.hooks.poststart = [{path: "/bin/false", args: ["false"]}]'
	set_args abtest pause
	create_container ct
	if [ "$status" -eq 0 ]; then
		runtime start ct
		assert_failure 1
	fi
	runtime state ct
	assert_failure 1
	assert_nothing_left
}

@test "hooks: run with a failing poststart hook exits 1 and leaves nothing, also detached" {
	update_config '.hooks.poststart = [{path: "/bin/false", args: ["false"]}]'
	set_args abtest pause
	run_container ct </dev/null
	assert_failure 1
	assert_nothing_left
	run_container ct2 --detach </dev/null
	assert_failure 1
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "hooks: after a failing poststart hook the later ones do not run, the program is killed, poststop hooks run" {
	requires agentbox
	update_config '.hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "echo poststart1 >>\($d)/seq"]},
			{path: "/bin/false", args: ["false"]},
			{path: "/bin/sh", args: ["sh", "-c", "echo poststart3 >>\($d)/seq"]}]
		| .hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "echo poststop >>\($d)/seq"]}]' \
		--arg d "$HOOK_DIR"
	set_args abtest pause
	create_container ct
	assert_success
	local pid
	pid=$(state_field ct .pid)
	runtime start ct
	assert_failure 1
	assert_one_error_line 'poststart hook 1: hook /bin/false exited with status 1'
	wait_gone "$pid" || fail "the program is still running"
	[ "$(tr '\n' ' ' <"$HOOK_DIR/seq")" = "poststart1 poststop " ] || fail "hooks ran: $(cat "$HOOK_DIR/seq")"
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "hooks: a failing poststop hook warns and the remaining ones still run" {
	# runtime-spec, lifecycle: "the runtime MUST log a warning, but the remaining
	# hooks and lifecycle continue as if the hook had succeeded" (the conformance
	# suite's poststop_fail; runc 1.1.5 stops at the first)
	requires agentbox
	update_config '.hooks.poststop = [{path: "/bin/false", args: ["false"]},
			{path: "/bin/sh", args: ["sh", "-c", "echo poststop >>\($d)/seq"]}]' --arg d "$HOOK_DIR"
	set_args abtest pause
	create_container ct
	assert_success
	runtime start ct
	assert_success
	runtime delete --force ct
	assert_success
	assert_output_contains "warning: poststop hook 0: hook /bin/false exited with status 1"
	[ "$(cat "$HOOK_DIR/seq")" = poststop ]
	assert_nothing_left
}

@test "hooks: the hook's state has the container's annotations" {
	update_config '.annotations = {"org.example.k": "v"}
		| .hooks.createRuntime = [$h]' --argjson h "$(hook_entry "$HOST_HOOK" createRuntime)"
	create_container ct
	assert_success
	[ "$(jq -r '.annotations["org.example.k"]' "$HOOK_DIR/createRuntime.json")" = v ]
}
