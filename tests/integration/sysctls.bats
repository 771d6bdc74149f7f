#!/usr/bin/env bats
# net.* sysctls in a network namespace joined by path — how Podman (its
# default network: a namespace it made, then CNI or slirp4netns), Kubernetes
# pods and kit run give a container its network. Podman's stock
# containers.conf sets net.ipv4.ping_group_range for every container. The
# sysctl is applied where the namespace is the container's to police, and
# refused where it would change a namespace shared with a container of another
# policy, or the host's. Namespaces are named abrl-*.

load helpers

setup() {
	requires root
	setup_bundle
	NS=abrl-sys-$$-${TEST_DIR##*.}
	ip netns add "$NS"
	defer ip netns delete "$NS"
	set_args abtest sysctl net.ipv4.ping_group_range
}

teardown() {
	teardown_bundle
}

# join_netns PATH: the config's network namespace is joined by path.
join_netns() {
	update_config '(.linux.namespaces[] | select(.type == "network")) |= {type: "network", path: $p}' --arg p "$1"
}

ping_range_of_ns() {
	ip netns exec "$NS" cat /proc/sys/net/ipv4/ping_group_range | tr -s '\t ' ' '
}

@test "sysctls: net.* in a namespace made for the container (Podman's default network), firewall off and on" {
	join_netns "/run/netns/$NS"
	update_config '.linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}'
	run_container c1
	assert_success
	[ "$(tr -s '\t ' ' ' <<<"$stdout")" = "0 0" ] || fail "in the container: $stdout"
	[ "$(ping_range_of_ns)" = "0 0" ]
	if is_agentbox; then
		# with the firewall on: the container polices this namespace, so it may set it
		update_config '.linux.sysctl = {"net.ipv4.ping_group_range": "0 1000"}'
		RUNTIME_ARGS+=(--egress-allow 198.19.64.1)
		run_container c2
		assert_success
		[ "$(ping_range_of_ns)" = "0 1000" ]
	fi
}

# bats test_tags=agentbox-only
@test "sysctls: a pod's members share the namespace and the policy: their net.* sysctls apply" {
	requires agentbox
	RUNTIME_ARGS+=(--egress-allow 198.19.64.1)
	join_netns "/run/netns/$NS"
	update_config '.linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}'
	set_args abtest pause ready
	run_container infra --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	# the member: the same policy, the same stock sysctl
	set_args abtest sysctl net.ipv4.ping_group_range
	run_container member
	assert_success
	[ "$(tr -s '\t ' ' ' <<<"$stdout")" = "0 0" ] || fail "$stdout"
}

# bats test_tags=agentbox-only
@test "sysctls: net.* in the namespace of a container of another policy is refused, the namespace untouched" {
	requires agentbox
	local before
	before=$(ping_range_of_ns)
	RUNTIME_ARGS+=(--egress-allow 198.19.64.1)
	join_netns "/run/netns/$NS"
	set_args abtest pause ready
	run_container owner --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	# --network container:owner, narrower policy, and a sysctl that would change
	# the owner's namespace too
	RUNTIME_ARGS=(--config "$AGENT_CONFIG_PERMISSIVE" --egress-allow 198.19.64.1:443)
	update_config '.linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}'
	set_args abtest true
	run_container joiner
	assert_failure 1
	assert_one_error_line "linux.sysctl: \"net.ipv4.ping_group_range\" would change the network namespace /run/netns/$NS, which container owner polices with another egress policy: refused"
	[ "$(ping_range_of_ns)" = "$before" ]
	runtime state joiner
	assert_failure
	[ ! -e "$ROOT/joiner" ]
	# the same joiner without the sysctl is let in (its narrower policy does not apply)
	update_config 'del(.linux.sysctl)'
	run_container joiner
	assert_success
}

# bats test_tags=agentbox-only
@test "sysctls: net.* in the runtime's own network namespace joined by path is refused (floor relaxed), the host untouched" {
	requires agentbox
	local host_fwd
	host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	join_netns "/proc/$$/ns/net"
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": $v}' --arg v "$((1 - host_fwd))"
	run_container c1
	assert_failure 1
	assert_one_error_line "linux.sysctl: \"net.ipv4.ip_forward\": the network namespace /proc/$$/ns/net is the runtime's own \\(the host's\\): refused"
	[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_fwd" ]
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "sysctls: an IPC sysctl with a joined IPC namespace is still refused" {
	requires agentbox
	update_config '(.linux.namespaces[] | select(.type == "ipc")) |= {type: "ipc", path: "/proc/self/ns/ipc"}
		| .linux.sysctl = {"kernel.shmmax": "123456789"}'
	run_container c1
	assert_failure 1
	assert_one_error_line 'linux.sysctl: "kernel.shmmax" needs a new ipc namespace of the container.s own'
	assert_nothing_left
}
