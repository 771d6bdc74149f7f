#!/usr/bin/env bats
# The pool of network namespaces made ahead of time (runtime/netns_pool.h,
# agentbox-config(5) runtime.netns_pool): filled after a create, taken by the
# next, never shared, left alone when turned off or for a user namespace.
# bats file_tags=agentbox-only

load helpers

POOL=/run/agentbox-netns

setup() {
	requires root agentbox
	setup_bundle
	CONFIG=$TEST_DIR/agent.yaml
}

teardown() {
	teardown_bundle
}

write_config() {
	printf '%s\n' "$1" >"$CONFIG"
	RUNTIME_ARGS=(--config "$CONFIG")
}

# The inodes of the namespaces pinned in the pool, one a line.
pool_inodes() {
	local f
	for f in "$POOL"/ns-*; do
		[ "$(stat -f -c %T "$f" 2>/dev/null)" = nsfs ] && stat -L -c %i "$f"
	done
	true
}

# wait_pool N: up to 5 s for the filler to pin N namespaces (it runs at nice 19).
wait_pool() {
	local i
	for ((i = 0; i < 250; i++)); do
		[ "$(pool_inodes | wc -l)" -ge "$1" ] && return 0
		sleep 0.02
	done
	fail "the pool holds $(pool_inodes | wc -l) namespaces, not $1: $(ls -la "$POOL" 2>&1)"
}

# wait_filler_done: no filler at work (so that the pool stays as it is).
wait_filler_done() {
	local i
	for ((i = 0; i < 250; i++)); do
		pgrep -f -- '__netns-pool-fill' >/dev/null || return 0
		sleep 0.02
	done
	fail "a pool filler is still running"
}

# fill_pool: one run, then the pool full (2, the default) and its filler done.
fill_pool() {
	set_args abtest true
	run_container warm
	assert_success
	wait_pool 2
	wait_filler_done
}

@test "netns pool: a run fills it; the next container joins a pooled namespace, which leaves the pool" {
	fill_pool
	local pooled
	pooled=$(pool_inodes)
	[ "$(stat -c '%U %a' "$POOL")" = "root 700" ]

	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid ino
	pid=$(state_field ct .pid)
	ino=$(stat -L -c %i "/proc/$pid/ns/net")
	grep -qx "$ino" <<<"$pooled" || fail "the container's namespace $ino is not one the pool held: $pooled"
	[ "$ino" != "$(stat -L -c %i /proc/self/ns/net)" ]
	# taken out before use: nothing pins it in the pool any more
	wait_filler_done
	! pool_inodes | grep -qx "$ino" || fail "namespace $ino is still in the pool while a container uses it"
	# its own loopback, up, as with a namespace of its own
	runtime exec ct cat /sys/class/net/lo/operstate
	assert_success
	[ "$stdout" = unknown ] || [ "$stdout" = up ]
	runtime delete --force ct
	assert_success
	assert_nothing_left
}

@test "netns pool: two containers at once never share a namespace" {
	set_args abtest pause ready
	local ids=(a b c) pids=() i
	for i in "${ids[@]}"; do
		run_container "$i" --detach
		assert_success
		wait_for_line "$RT_STDOUT" '^ready$'
		pids+=("$(state_field "$i" .pid)")
	done
	local inos
	inos=$(for i in "${pids[@]}"; do stat -L -c %i "/proc/$i/ns/net"; done)
	[ "$(sort -u <<<"$inos" | wc -l)" -eq 3 ] || fail "shared network namespaces: $inos"
	for i in "${ids[@]}"; do runtime delete --force "$i"; done
	assert_nothing_left
}

@test "netns pool: eight creates at once, four times the pool: eight namespaces, none still pooled" {
	fill_pool
	update_config '.process.args = ["abtest", "sleep", "30"]'
	local i pids=() inos
	for i in 1 2 3 4 5 6 7 8; do
		"$RUNTIME" --root "$ROOT" run -d --bundle "$BUNDLE" "p$i" </dev/null >/dev/null 2>"$TEST_DIR/p$i.err" 3>&- &
	done
	wait
	for i in 1 2 3 4 5 6 7 8; do
		pids+=("$(state_field "p$i" .pid)") || fail "p$i: $(cat "$TEST_DIR/p$i.err")"
	done
	inos=$(for i in "${pids[@]}"; do stat -L -c %i "/proc/$i/ns/net"; done)
	[ "$(sort -u <<<"$inos" | wc -l)" -eq 8 ] || fail "shared network namespaces: $inos"
	wait_filler_done
	for i in $inos; do
		! pool_inodes | grep -qx "$i" || fail "namespace $i is in use and still pooled"
	done
	for i in 1 2 3 4 5 6 7 8; do runtime delete --force "p$i"; done
	assert_nothing_left
}

@test "netns pool: runtime.netns_pool 0 takes nothing from the pool and adds nothing" {
	fill_pool
	local before
	before=$(ls "$POOL" | grep '^ns-')
	write_config 'runtime: {netns_pool: 0}'
	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local ino
	ino=$(stat -L -c %i "/proc/$(state_field ct .pid)/ns/net")
	! pool_inodes | grep -qx "$ino" || fail "the container runs in a namespace that is still pooled"
	sleep 0.2
	[ "$(ls "$POOL" | grep '^ns-')" = "$before" ] || fail "the pool changed: $before -> $(ls "$POOL")"
	! pgrep -f -- '__netns-pool-fill' >/dev/null || fail "a filler was started"
	runtime delete --force ct
}

@test "netns pool: a container with a new user namespace makes its own network namespace" {
	requires userns
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	fill_pool
	local before
	before=$(pool_inodes)
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
	set_args abtest pause ready
	run_container ctu --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	[ "$(pool_inodes)" = "$before" ] || fail "a user-namespaced container took from the pool"
	runtime delete --force ctu
}

@test "config: runtime.netns_pool takes 0 to 16 only, and unknown runtime keys are errors" {
	write_config 'runtime: {netns_pool: 17}'
	set_args abtest true
	run_container ct
	assert_failure 1
	assert_one_error_line 'agent\.yaml:1:.*runtime\.netns_pool'
	assert_nothing_left
	write_config 'runtime: {netns_pools: 2}'
	run_container ct
	assert_failure 1
	assert_one_error_line 'agent\.yaml:1:.*netns_pools'
	assert_nothing_left
}
