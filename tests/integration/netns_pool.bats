#!/usr/bin/env bats
# The pool of network namespaces made ahead of time (runtime/egress/netns_pool.h,
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

@test "netns pool: the filler starts only once the runtime has exited, and fills the pool in place, without an exec" {
	command -v strace >/dev/null || skip "needs strace"
	set_args abtest true
	local trace=$TEST_DIR/strace rt fill
	# strace -f follows the filler too, and returns once it is done (under
	# ptrace LeakSanitizer refuses to run: off for this one)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		timeout 60 strace -f -q -e trace=execve,unshare -e signal=none -o "$trace" \
		"$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" run --bundle "$BUNDLE" st >/dev/null 2>&1 3>&- ||
		fail "run under strace failed: $(tail -5 "$trace")"
	rt=$(awk 'NR == 1 { print $1 }' "$trace")
	rt=$(grep -nE "^$rt +[+]{3} exited" "$trace" | cut -d: -f1)
	# its first work: the namespace it makes (in place), or its exec
	fill=$(grep -nE 'unshare\(CLONE_NEWNET\)|__netns-pool-fill' "$trace" | head -1 | cut -d: -f1)
	[ -n "$rt" ] && [ -n "$fill" ] || fail "no exit of the runtime or no filler: $(cat "$trace")"
	(( fill > rt )) || fail "the filler began (line $fill) before the runtime's exit (line $rt): $(cat "$trace")"
	# the sanitizers' builds exec it (their runtime is shut down by then)
	if [ -z "${AGENTBOX_SANITIZED:-}" ]; then
		! grep -q '__netns-pool-fill' "$trace" || fail "the filler was exec'd: $(cat "$trace")"
	fi
	[ $(($(pool_inodes | wc -l) + $(pool_fw_names | wc -l))) -ge 1 ] || fail "nothing in the pool: $(ls -la "$POOL")"
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

# The inodes of the firewalled namespaces in the pool, one a line.
fw_inodes() {
	local f
	for f in $(pool_fw_names); do stat -L -c %i "$POOL/$f"; done
	true
}

# fill_pool_with FLAGS...: one run with those runtime flags (an egress
# policy), then two firewalled namespaces of that policy in the pool.
fill_pool_with() {
	pool_fw_clear
	RUNTIME_ARGS=("$@")
	set_args abtest true
	run_container "warm$RANDOM"
	assert_success
	wait_pool_fw 2
}

# run_from_pool ID: a detached container that must take one of the pool's
# firewalled namespaces; its init's pid into PID
run_from_pool() {
	local pooled ino
	pooled=$(fw_inodes)
	set_args abtest pause ready
	run_container "$1" --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	PID=$(state_field "$1" .pid)
	ino=$(stat -L -c %i "/proc/$PID/ns/net")
	grep -qx "$ino" <<<"$pooled" || fail "the namespace $ino of $1 is not a firewalled one of the pool: $pooled"
}

# the container's ruleset, without the comment that names its owner
rules_of() {
	nsenter --net="/proc/$(state_field "$1" .pid)/ns/net" nft list ruleset | grep -v 'comment "agentbox egress '
}

@test "netns pool: a policy's namespaces come with its ruleset: a create with that policy takes one, the same rules as it would install" {
	local policy=(--egress-allow "198.18.91.0/24,pool.example.test,198.18.90.7:5432/tcp" --egress-deny "198.18.91.9")
	fill_pool_with "${policy[@]}"
	run_from_pool ct
	local pid=$PID token
	! fw_inodes | grep -qx "$(stat -L -c %i "/proc/$pid/ns/net")" || fail "the namespace is still in the pool while a container uses it"
	# its table names the pool token, which the state records
	token=$(jq -r .egressToken "$ROOT/ct/state.json")
	[[ $token =~ ^[0-9a-f]{16}$ ]] || fail "no pool token in the state: $token"
	nsenter --net="/proc/$pid/ns/net" nft list table inet agentbox | grep -qF "comment \"agentbox egress @$token\"" ||
		fail "the table does not name the token $token"
	# lo up with its addresses, the sentry serving
	nsenter --net="/proc/$pid/ns/net" ip -o addr show lo | grep -q 'inet 127.0.0.1/8'
	kill -0 "$(jq -r .sentryPid "$ROOT/ct/state.json")"
	# the same rules as a container that installs its own (no pool)
	printf 'runtime: {netns_pool: 0}\n' >"$CONFIG"
	RUNTIME_ARGS=(--config "$CONFIG" "${policy[@]}")
	run_container own --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	nsenter --net="/proc/$(state_field own .pid)/ns/net" nft list table inet agentbox | grep -qF 'comment "agentbox egress own"'
	[ "$(rules_of ct)" = "$(rules_of own)" ] || fail "pooled and installed rulesets differ: $(diff <(rules_of ct) <(rules_of own))"
	[ -n "$(rules_of ct | grep '198.18.91.0/24')" ]
	runtime delete --force ct
	runtime delete --force own
	assert_nothing_left
}

@test "netns pool: a ruleset from the pool enforces the policy: the allowed host answers, another that answers does not, and its refusal is logged" {
	command -v socat >/dev/null || skip "needs socat"
	fill_pool_with --egress-allow "198.18.97.1:8080/tcp"
	run_from_pool ct
	local pid=$PID ns=abpool$$
	# a test host with two addresses, both answering on 8080, reached over a
	# veth pair whose other end is in the container's namespace
	ip netns add "$ns"
	defer ip netns delete "$ns"
	ip -n "$ns" link add abp1 type veth peer name abp0 netns "/proc/$pid/ns/net"
	ip -n "$ns" addr add 198.18.97.1/24 dev abp1
	ip -n "$ns" addr add 198.18.97.3/24 dev abp1
	ip -n "$ns" link set abp1 up
	ip -n "$ns" link set lo up
	nsenter --net="/proc/$pid/ns/net" ip addr add 198.18.97.2/24 dev abp0
	nsenter --net="/proc/$pid/ns/net" ip link set abp0 up
	ip netns exec "$ns" socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo hello-from-pool' </dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	# both addresses answer where no ruleset is in the way
	local i
	for i in $(seq 50); do
		ip netns exec "$ns" socat -T2 - TCP:198.18.97.3:8080,connect-timeout=1 </dev/null 2>/dev/null | grep -q hello && break
		sleep 0.1
	done
	[ "$(ip netns exec "$ns" socat -T2 - TCP:198.18.97.1:8080,connect-timeout=1 </dev/null)" = hello-from-pool ]
	[ "$(ip netns exec "$ns" socat -T2 - TCP:198.18.97.3:8080,connect-timeout=1 </dev/null)" = hello-from-pool ]
	runtime exec ct sh -c 'nc -w 3 198.18.97.1 8080 </dev/null'
	assert_success
	[ "$stdout" = hello-from-pool ]
	runtime exec ct sh -c 'nc -w 1 198.18.97.3 8080 </dev/null; echo rc=$?'
	[[ "$stdout" != *hello* && "$stdout" == *rc=1* ]] || fail "the address not allowed answered: $stdout"
	for ((i = 0; i < 50; i++)); do
		runtime egress log --json ct
		[[ "$stdout" == *198.18.97.3* ]] && break
		sleep 0.1
	done
	jq -se 'map(select(.dst == "198.18.97.3" and .port == 8080 and .proto == "tcp")) | length > 0' <<<"$stdout" >/dev/null ||
		fail "the refusal is not in the log: $stdout"
	runtime delete --force ct
	assert_nothing_left
}

@test "netns pool: another policy, a container without a firewall, or another build never get a namespace with a ruleset made for a policy" {
	fill_pool_with --egress-allow "198.18.92.0/24"
	local pooled
	pooled=$(fw_inodes)
	set_args abtest pause ready
	# the same policy, but another build of the runtime (here: a copy, another inode)
	cp "$RUNTIME" "$TEST_DIR/agentbox-copy"
	RUNTIME_ARGS=(--egress-allow "198.18.92.0/24")
	local real=$RUNTIME
	RUNTIME=$TEST_DIR/agentbox-copy
	run_container copy --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	RUNTIME=$real
	# another policy: a namespace of its own (or a pristine one), its own rules
	RUNTIME_ARGS=(--egress-allow "198.18.93.0/24")
	run_container other --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	# the firewall off (the permissive config)
	RUNTIME_ARGS=(--config "$AGENT_CONFIG_PERMISSIVE")
	run_container open --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local id ino
	for id in other open copy; do
		ino=$(stat -L -c %i "/proc/$(state_field "$id" .pid)/ns/net")
		! grep -qx "$ino" <<<"$pooled" || fail "$id got a namespace the pool had filled for another policy"
		[ "$(jq -r '.egressToken // empty' "$ROOT/$id/state.json")" = "" ] || fail "$id records a pool token"
	done
	nsenter --net="/proc/$(state_field other .pid)/ns/net" nft list table inet agentbox >"$TEST_DIR/other.nft"
	grep -qF 'comment "agentbox egress other"' "$TEST_DIR/other.nft"
	grep -q '198.18.93.0/24' "$TEST_DIR/other.nft" && ! grep -q '198.18.92.0/24' "$TEST_DIR/other.nft"
	[ -z "$(nsenter --net="/proc/$(state_field open .pid)/ns/net" nft list ruleset)" ] || fail "a ruleset where the firewall is off"
	nsenter --net="/proc/$(state_field copy .pid)/ns/net" nft list table inet agentbox | grep -qF 'comment "agentbox egress copy"'
	for id in other open copy; do runtime delete --force "$id"; done
	assert_nothing_left
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
