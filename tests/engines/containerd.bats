#!/usr/bin/env bats
# containerd 1.6 (ctr, io.containerd.runc.v2 shim) driving agentbox, end to end.
#
# A private containerd (engines-up.sh) whose config has a CRI runtime handler
# "agentbox" (runtime_type io.containerd.runc.v2, options.BinaryName = the
# runtime): what a Kubernetes RuntimeClass with handler: agentbox selects.
# `ctr run --runc-binary` makes the same shim calls without CRI.

load helpers

setup_file() {
	engines_setup_file containerd
}

teardown_file() {
	engines_teardown_file
}

setup() {
	require_engine containerd
	IMG=docker.io/library/$TEST_IMAGE
}

teardown() {
	[ -n "${CONTAINERD_ADDRESS:-}" ] || return 0
	local t
	for t in $(c tasks ls -q 2>/dev/null); do
		c tasks kill -a -s KILL "$t" >/dev/null 2>&1 || true
		c tasks delete -f "$t" >/dev/null 2>&1 || true
	done
	for t in $(c containers ls -q 2>/dev/null); do
		c containers delete "$t" >/dev/null 2>&1 || true
	done
}

# ctr run with agentbox (ca) or runc (cr); state of either under a root in the temp dir
ca() {
	c run --runc-binary "$AGENTBOX" --runc-root "$CONTAINERD_RUNC_ROOT" --fifo-dir "$CONTAINERD_FIFO_DIR" "$@"
}
cr() {
	c run --runc-root "$CONTAINERD_RUNC_ROOT" --fifo-dir "$CONTAINERD_FIFO_DIR" "$@"
}
RT_ROOT() { echo "$CONTAINERD_RUNC_ROOT/default"; }

@test "containerd: the CRI runtime handler agentbox is accepted" {
	run c plugins ls
	assert_success
	assert_output_matches 'io\.containerd\.grpc\.v1[[:space:]]+cri[[:space:]]+linux/amd64[[:space:]]+ok'
	run timeout 30 containerd --config "$CONTAINERD_CONFIG" config dump
	assert_success
	assert_output_contains '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentbox]'
	assert_output_contains "BinaryName = \"$AGENTBOX\""
	assert_output_matches 'runtime_type = "io\.containerd\.runc\.v2"'
	# and the running daemon loaded it (the CRI plugin logs its config at start)
	run grep -o 'agentbox:{Type:io.containerd.runc.v2 [^}]*BinaryName:[^ ]*' "$ENGINES_DIR/containerd.log"
	assert_success
	assert_output_contains "BinaryName:$AGENTBOX"
}

@test "ctr run --runc-binary agentbox: output and exit code, like runc" {
	local r out=() st=()
	for r in ca cr; do
		run $r --rm "$IMG" ctr-plain-$r sh -c 'echo out; exit 3'
		out+=("$output")
		st+=("$status")
	done
	[ "${st[0]}" = 3 ] || fail "agentbox: exit ${st[0]}: ${out[0]}"
	[ "${out[0]}" = out ] || fail "agentbox output: ${out[0]}"
	same_as_runc "exit status" "${st[0]}" "${st[1]}"
	same_as_runc "output" "${out[0]}" "${out[1]}"
	# ctr's config: root "rootfs" relative to the bundle, noNewPrivileges, 1024 files
	run ca --rm "$IMG" ctr-plain2 sh -c 'abtest rlimit NOFILE; abtest caps | grep NoNewPrivs'
	assert_success
	assert_output_contains "1024 1024"
	assert_output_contains $'NoNewPrivs:\t1'
}

@test "ctr run --tty: a terminal, and the exit code" {
	run in_tty ctr --address "$CONTAINERD_ADDRESS" -n default run --rm --tty \
		--runc-binary "$AGENTBOX" --runc-root "$CONTAINERD_RUNC_ROOT" --fifo-dir "$CONTAINERD_FIFO_DIR" \
		"$IMG" ctr-tty sh -c 'tty; abtest isatty 0; exit 4'
	assert_status 4
	output=$(strip_cr <<<"$output")
	assert_output_matches '/dev/pts/[0-9]+'
	assert_output_contains yes
}

@test "ctr task exec, ps, pause/resume, kill and delete" {
	run ca -d "$IMG" ctr-task sh -c 'trap "exit 42" TERM; while true; do sleep 0.1; done'
	assert_success
	retry 10 bash -c "timeout 20 ctr --address $CONTAINERD_ADDRESS -n default tasks ls | grep -q 'ctr-task.*RUNNING'"
	# exec: output and exit code; with a terminal too
	run c tasks exec --exec-id e1 --fifo-dir "$CONTAINERD_FIFO_DIR" ctr-task sh -c 'echo inside; exit 5'
	assert_status 5
	[ "$output" = inside ] || fail "exec output: $output"
	run in_tty ctr --address "$CONTAINERD_ADDRESS" -n default tasks exec --tty --exec-id e2 \
		--fifo-dir "$CONTAINERD_FIFO_DIR" ctr-task sh -c 'abtest isatty 0; exit 6'
	assert_status 6
	assert_output_contains yes
	# ps: host pids of the container (runtime ps --format json)
	run c tasks ps ctr-task
	assert_success
	local pid
	pid=$(c tasks ls | awk '$1 == "ctr-task" { print $2 }')
	assert_output_contains "$pid"
	# pause / resume
	run c tasks pause ctr-task
	assert_success
	[ "$(c tasks ls | awk '$1 == "ctr-task" { print $3 }')" = PAUSED ]
	run c tasks resume ctr-task
	assert_success
	[ "$(c tasks ls | awk '$1 == "ctr-task" { print $3 }')" = RUNNING ]
	# the runtime's own view, in the root the shim gave it
	run "$AGENTBOX" --root "$(RT_ROOT)" state ctr-task
	assert_success
	assert_output_contains '"status": "running"'
	# kill (SIGTERM, handled) and delete: exit 42, nothing left
	run c tasks kill ctr-task
	assert_success
	retry 10 bash -c "timeout 20 ctr --address $CONTAINERD_ADDRESS -n default tasks ls | grep -q 'ctr-task.*STOPPED'"
	run c tasks delete ctr-task
	assert_success
	assert_output_contains "42"
	run c containers delete ctr-task
	assert_success
	runtime_state_gone "$(RT_ROOT)" ctr-task
	[ ! -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status" || fail "init $pid survived"
}

@test "ctr task kill -s KILL --all, then delete" {
	run ca -d "$IMG" ctr-kill sh -c 'sleep 1001 & sleep 1002 & wait'
	assert_success
	retry 10 bash -c "[ \$(timeout 20 ctr --address $CONTAINERD_ADDRESS -n default tasks ps ctr-kill | tail -n +2 | wc -l) -ge 3 ]"
	local pids
	pids=$(c tasks ps ctr-kill | awk 'NR > 1 { print $1 }')
	run c tasks kill -a -s KILL ctr-kill
	assert_success
	retry 10 bash -c "timeout 20 ctr --address $CONTAINERD_ADDRESS -n default tasks ls | grep -q 'ctr-kill.*STOPPED'"
	run c tasks delete ctr-kill
	assert_success
	local p
	for p in $pids; do
		retry 5 bash -c "[ ! -d /proc/$p ] || grep -q '^State:.*Z' /proc/$p/status" || fail "pid $p survived kill --all"
	done
	c containers delete ctr-kill
	runtime_state_gone "$(RT_ROOT)" ctr-kill
}
