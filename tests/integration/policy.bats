#!/usr/bin/env bats
# The agent policy with agentbox's built-in defaults: the hardening floor, the stacked
# seccomp profile and the egress firewall — each refusal, and the config key that
# relaxes it.

load helpers

setup() {
	requires root agentbox
	setup_bundle
	agent_policy default
	CT_N=0
	cp "$REPO_ROOT/tests/helper/prober" "$BUNDLE/rootfs/bin/prober" 2>/dev/null ||
		{ make -C "$REPO_ROOT" -s tests/helper/prober >&2 && cp "$REPO_ROOT/tests/helper/prober" "$BUNDLE/rootfs/bin/prober"; }
	CONFIG=$TEST_DIR/agent.yaml
}

teardown() {
	teardown_bundle
}

in_container() {
	CT_N=$((CT_N + 1))
	set_args "$@"
	run_container "ct$CT_N"
}

# write_config YAML: an agent config for this test, used with --config
write_config() {
	printf '%s\n' "$1" >"$CONFIG"
	RUNTIME_ARGS=(--config "$CONFIG")
}

@test "floor: a privileged capability is refused, naming the key that relaxes it; nothing left" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'floor: privileged containers are refused: process\.capabilities has CAP_SYS_ADMIN.*floor\.allow_capabilities'
	assert_nothing_left
}

@test "floor: floor.allow_capabilities lets that capability through" {
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
	write_config 'floor: {allow_capabilities: [CAP_SYS_ADMIN]}'
	in_container abtest caps
	assert_success
	# CAP_SYS_ADMIN is bit 21
	local bnd
	bnd=$(awk '$1 == "CapBnd:" { print $2 }' <<<"$stdout")
	(((0x$bnd >> 21) & 1))
}

@test "floor: the host's network namespace is refused; relaxed by the config" {
	update_config '.linux.namespaces |= map(select(.type != "network"))'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'network namespace'
	assert_nothing_left
	write_config 'egress: {enforce: false}
floor: {refuse_host_network: false}'
	in_container abtest true
	assert_success
}

@test "floor: the host's PID namespace is refused; relaxed by floor.refuse_host_pid" {
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	in_container abtest true
	assert_failure 1
	assert_one_error_line "floor: the host's PID namespace is refused.*floor\.refuse_host_pid"
	assert_nothing_left
	write_config 'floor: {refuse_host_pid: false}'
	in_container abtest true
	assert_success
}

@test "floor: a device rule allowing every device is refused" {
	update_config '.linux.resources.devices += [{allow: true, type: "a", access: "rwm"}]'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'floor: host devices are refused: linux\.resources\.devices\[[0-9]+\].*floor\.refuse_host_devices'
	assert_nothing_left
}

@test "floor: a block device in linux.devices is refused" {
	update_config '.linux.devices = [{path: "/dev/xvda", type: "b", major: 202, minor: 0}]'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'floor: host devices are refused: linux\.devices\[0\] is the block device /dev/xvda'
}

@test "floor: noNewPrivileges is forced; floor.force_no_new_privileges: false leaves it as written" {
	update_config '.process.noNewPrivileges = false'
	in_container abtest caps
	assert_success
	[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' <<<"$stdout")" = 1 ]
	write_config 'floor: {force_no_new_privileges: false}'
	in_container abtest caps
	assert_success
	[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' <<<"$stdout")" = 0 ]
}

@test "floor: extra masked paths hide /proc/kallsyms; masked_paths: [] does not" {
	in_container sh -c 'wc -c </proc/kallsyms'
	assert_success
	[ "$stdout" -eq 0 ]
	write_config 'floor: {masked_paths: []}'
	in_container sh -c 'wc -c </proc/kallsyms'
	assert_success
	[ "$stdout" -gt 0 ]
}

@test "config: an unknown key is an error with file, line and column; nothing left" {
	write_config 'floor:
  refuse_privileged: true
  refuse_everything: true'
	in_container abtest true
	assert_failure 1
	assert_one_error_line "agent\.yaml:3:3: floor\.refuse_everything: unknown field"
	assert_nothing_left
}

@test "config: a wrong type is an error naming the key" {
	write_config 'egress: {enforce: maybe}'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'agent\.yaml:1:.*egress\.enforce'
}

@test "config: egress.hook_anchor takes only a boolean" {
	write_config 'egress: {hook_anchor: sometimes}'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'agent\.yaml:1:.*egress\.hook_anchor'
	assert_nothing_left
}

@test "config: --config FILE that does not exist is an error" {
	RUNTIME_ARGS=(--config "$TEST_DIR/nope.yaml")
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'nope\.yaml'
	assert_nothing_left
}

@test "seccomp: the agent profile is stacked by default; --seccomp-profile none removes it" {
	in_container prober io_uring_setup
	assert_success
	[ "$stdout" = "io_uring_setup errno=1 (EPERM)" ]
	RUNTIME_ARGS=(--seccomp-profile none)
	in_container prober io_uring_setup
	assert_success
	[[ "$stdout" == "io_uring_setup errno=14 (EFAULT)" ]]
}

@test "seccomp: the engine's own profile still applies under the agent profile (stricter wins)" {
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["getpid"], action: "SCMP_ACT_ERRNO", errnoRet: 13}]}'
	in_container prober getpid io_uring_setup
	assert_success
	[ "${lines[0]}" = "getpid errno=13 (EACCES)" ]
	[ "${lines[1]}" = "io_uring_setup errno=1 (EPERM)" ]
}

@test "seccomp: an annotation may not weaken the profile, and says how to" {
	update_config '.annotations["agentbox.seccomp.profile"] = "none"'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'agentbox\.seccomp\.profile=none would weaken.*--seccomp-profile'
	assert_nothing_left
}

@test "egress: by default a container gets the firewall table and a DNS sentry, gone after delete" {
	set_args abtest pause ready
	run_container eg --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid sentry
	pid=$(state_field eg .pid)
	sentry=$(jq -r .sentryPid "$ROOT/eg/state.json")
	[ "$sentry" -gt 0 ]
	kill -0 "$sentry"
	nsenter -t "$pid" -n nft list table inet agentbox >"$TEST_DIR/rules"
	grep -q 'policy drop' "$TEST_DIR/rules"
	# the container cannot change its rules: no CAP_NET_ADMIN, no CAP_NET_RAW
	runtime exec eg abtest caps
	local eff
	eff=$(awk '$1 == "CapEff:" { print $2 }' <<<"$stdout")
	(((0x$eff >> 12) & 1 == 0)) && (((0x$eff >> 13) & 1 == 0))
	runtime delete --force eg
	assert_success
	# gone, or a zombie of a parent that does not reap: no longer running either way
	local st
	st=$(awk '{ print $3 }' "/proc/$sentry/stat" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = Z ]
}

ANCHOR=/run/agentbox-netfilter/anchor
anchor_pinned() { [ "$(stat -f -c %T "$ANCHOR" 2>/dev/null)" = nsfs ]; }

@test "egress: the hook anchor: pinned once, holds the ruleset's hooks and no working interface" {
	in_container abtest true
	assert_success
	anchor_pinned || fail "no network namespace pinned at $ANCHOR"
	local ino
	ino=$(stat -L -c %i "$ANCHOR")
	nsenter --net="$ANCHOR" nft list chain inet agentbox output | grep -q 'type filter hook output'
	nsenter --net="$ANCHOR" nft list chain inet agentbox dns | grep -q 'type nat hook output'
	# only lo, and it is down: nothing can ever send from there
	[ "$(nsenter --net="$ANCHOR" ip -o link | wc -l)" -eq 1 ]
	! nsenter --net="$ANCHOR" ip -o link show lo | grep -q '<[^>]*,UP' || fail "succeeded, must not: nsenter --net=\"\$ANCHOR\" ip -o link show lo | grep -q '<[^..."
	in_container abtest true
	assert_success
	[ "$(stat -L -c %i "$ANCHOR")" = "$ino" ] || fail "a second anchor was pinned"
	[ "$(grep -c " $ANCHOR " /proc/self/mountinfo)" -eq 1 ]
}

@test "egress: hook_anchor false makes no anchor; the next policed container pins it again" {
	if anchor_pinned; then umount "$ANCHOR"; fi
	write_config 'egress: {hook_anchor: false}'
	in_container abtest true
	assert_success
	! anchor_pinned || fail "an anchor was pinned with egress.hook_anchor: false"
	RUNTIME_ARGS=()
	in_container abtest true
	assert_success
	anchor_pinned || fail "no anchor pinned again after it was unmounted"
}

@test "egress: the DNS sentry's listeners are bound before the program starts: a lookup at once is answered" {
	requires test_hooks
	# run does not wait for the sentry to serve: the runtime binds its sockets
	# in the container's netns first, and the first queries wait in them.
	# The upstream is never asked (the name is refused); on lo it is routable.
	echo "nameserver 127.0.0.2" >"$BUNDLE/rootfs/etc/resolv.conf"
	RUNTIME_ARGS=(--egress-allow "allowed.test")
	# a sentry that takes a second to start serving (test-only delay)
	export AGENTBOX_FAULT_SENTRY_DELAY_MS=1000
	in_container sh -c 'cat /proc/net/udp /proc/net/tcp; nslookup denied.test'
	# 127.0.0.1:53, UDP and TCP (the TCP one listening: state 0A)
	assert_output_contains ' 0100007F:0035 00000000:0000 07 '
	assert_output_contains ' 0100007F:0035 00000000:0000 0A '
	# refused by the sentry itself, not "connection refused" from an empty port
	assert_output_contains "denied.test: NXDOMAIN"
}

@test "egress: a DNS sentry that fails once the program runs takes the container down, run and run -d; nothing left" {
	requires test_hooks
	# run no longer waits for the sentry before the start: its failure comes
	# later and must still end the run with one line and no container
	export AGENTBOX_FAULT_SENTRY_FAIL=1
	in_container abtest pause
	assert_failure 1
	assert_one_error_line 'DNS sentry did not start.*injected by AGENTBOX_FAULT_SENTRY_FAIL'
	assert_nothing_left
	set_args abtest pause
	run_container dd --detach
	assert_failure 1
	assert_one_error_line 'DNS sentry did not start.*injected by AGENTBOX_FAULT_SENTRY_FAIL'
	assert_nothing_left
}

@test "egress: a resolv.conf naming the sentry's own address is refused by create and run at once; nothing left" {
	# the sentry would forward every lookup to itself: refused before any
	# program runs, not left to the sentry to find out
	echo "nameserver 127.0.0.1" >"$BUNDLE/rootfs/etc/resolv.conf"
	set_args abtest pause
	create_container own
	assert_failure 1
	assert_one_error_line "the upstream resolver is the sentry's own address \\(.*/etc/resolv\\.conf\\)"
	assert_nothing_left
	in_container abtest true
	assert_failure 1
	assert_one_error_line "the upstream resolver is the sentry's own address"
	assert_nothing_left
}

@test "egress: create does not wait for the DNS sentry; start does, and fails with the sentry's error" {
	requires test_hooks
	# create returns once the sentry is forked; the sentry says ready (or why
	# not) in the state directory, and start reads that before the program may
	# run. A sentry that takes a second (test-only delay) has not spoken yet
	# when create returns.
	set_args abtest pause
	AGENTBOX_FAULT_SENTRY_DELAY_MS=1000 create_container slow
	assert_success
	[ -f "$ROOT/slow/sentry.status" ] || fail "no sentry.status after create"
	[ ! -s "$ROOT/slow/sentry.status" ] || fail "create waited for the sentry: $(cat "$ROOT/slow/sentry.status")"
	runtime start slow
	assert_success
	[ "$(cat "$ROOT/slow/sentry.status")" = 1 ] || fail "start returned before the sentry served"
	[ "$(state_field slow .status)" = running ] || fail "not running after start"
	runtime delete --force slow
	assert_success
	# a sentry that fails: create succeeds, start fails with its reason, and
	# the program never ran
	set_args abtest pause
	AGENTBOX_FAULT_SENTRY_FAIL=1 create_container broken
	assert_success
	runtime start broken
	assert_failure 1
	assert_one_error_line 'DNS sentry did not start: a failure injected by AGENTBOX_FAULT_SENTRY_FAIL'
	[ "$(state_field broken .status)" = created ] || fail "the program ran although its sentry failed"
	runtime delete broken
	assert_success
	# a sentry killed while start waits for it: start says so at once
	AGENTBOX_FAULT_SENTRY_DELAY_MS=5000 create_container killed
	assert_success
	local sentry
	sentry=$(jq -r .sentryPid "$ROOT/killed/state.json")
	[ "$sentry" -gt 0 ]
	(sleep 0.3; kill -9 "$sentry") &
	runtime start killed
	assert_failure 1
	assert_one_error_line 'the DNS sentry exited before it served'
	[ "$(state_field killed .status)" = created ] || fail "the program ran without its sentry"
	runtime delete killed
	assert_success
	assert_nothing_left
}

@test "egress: an annotation may only narrow the allowlist" {
	update_config '.annotations["agentbox.egress.allow"] = "example.com"'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'annotation agentbox\.egress\.allow: entry "example\.com" is not within the runtime.s allowlist'
	assert_nothing_left
	RUNTIME_ARGS=(--egress-allow "example.com,other.example")
	set_args abtest pause
	run_container narrow --detach
	assert_success
	[ "$(jq -r .egressPolicy "$ROOT/narrow/state.json")" = "allow=example.com;deny=" ]
}

@test "egress: a malformed entry names the entry and its source; nothing left" {
	RUNTIME_ARGS=(--egress-allow "example.com:70000")
	in_container abtest true
	assert_failure 1
	assert_one_error_line '--egress-allow.*example\.com:70000'
	assert_nothing_left
}

@test "egress: an entry written as a URL is refused from every source, naming the entry to write; nothing left" {
	local want='an entry is a host name or address, not a URL: write pypi\.org:443$'
	RUNTIME_ARGS=(--egress-allow "https://pypi.org")
	in_container abtest true
	assert_failure 1
	assert_one_error_line "^agentbox: --egress-allow: entry \"https://pypi\.org\": $want"
	assert_nothing_left
	write_config $'egress:\n  allow: [pypi.org:443]'
	update_config '.annotations["agentbox.egress.allow"] = "https://pypi.org/simple/"'
	in_container abtest true
	assert_failure 1
	assert_one_error_line 'annotation agentbox\.egress\.allow: entry "https://pypi\.org/simple/": .*write pypi\.org:443 \(the firewall allows hosts and ports, not paths\)$'
	assert_nothing_left
	write_config $'egress:\n  allow: [https://pypi.org]'
	update_config 'del(.annotations)'
	in_container abtest true
	assert_failure 1
	assert_one_error_line "$want"
	assert_nothing_left
	# a running container's live change, and a kit's entries
	RUNTIME_ARGS=(--egress-allow example.com)
	set_args abtest pause
	run_container live --detach
	assert_success
	runtime egress allow live http://example.com/
	assert_failure 1
	assert_one_error_line 'entry "http://example\.com/": an entry is a host name or address, not a URL: write example\.com:80$'
	[ "$(jq -r .egressPolicy "$ROOT/live/state.json")" = "allow=example.com;deny=" ]
	printf 'rootfs: host\nnetwork:\n  allow: [https://pypi.org]\n' >"$TEST_DIR/url.yaml"
	runtime kit show "$TEST_DIR/url.yaml"
	assert_failure 1
	assert_one_error_line "url\.yaml.*entry \"https://pypi\.org\": $want"
	RUNTIME_ARGS=()
	runtime kit run --allow https://pypi.org -- true
	assert_failure 1
	assert_one_error_line "entry \"https://pypi\.org\": $want"
}

@test "egress: the DNS sentry and its helper stay under 1 MiB resident once they have served queries" {
	command -v dnsmasq >/dev/null || skip "needs dnsmasq"
	[ -z "${AGENTBOX_SANITIZED:-}" ] || skip "an ASan build: its allocator alone is bigger than the 1 MiB budget (the plain build is measured by tests/netfilter)"
	echo "nameserver 198.18.77.53" >"$BUNDLE/rootfs/etc/resolv.conf"
	# 198.18.77.10 is a "benchmarking" address: answers may point there only
	# when the range is opened
	RUNTIME_ARGS=(--egress-allow "allowed.test" --egress-internal 198.18.77.0/24)
	set_args abtest pause ready
	run_container eg --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid sentry helper
	pid=$(state_field eg .pid)
	sentry=$(jq -r .sentryPid "$ROOT/eg/state.json")
	helper=$(pgrep -P "$sentry")
	# the upstream resolver lives in the container's netns, on an address of its own
	nsenter -t "$pid" -n ip addr add 198.18.77.53/32 dev lo
	nsenter -t "$pid" -n dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root \
		--group=root --bind-interfaces --listen-address=198.18.77.53 --local=/test/ \
		--host-record=allowed.test,198.18.77.10,600 </dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	local i
	for i in 1 2 3; do
		runtime exec eg nslookup allowed.test
		[[ "$stdout" == *"198.18.77.10"* ]] || { sleep 0.2; continue; }
		runtime exec eg nslookup denied.test
		assert_output_contains "denied.test: NXDOMAIN"
	done
	runtime exec eg nslookup allowed.test
	assert_output_contains 198.18.77.10
	# an element went in: the helper worked
	nsenter -t "$pid" -n nft list set inet agentbox dns_allow_v4 | grep -q 198.18.77.10
	# memory goes back once the sentry has been quiet for a second
	sleep 1.5
	local p rss
	for p in $sentry $helper; do
		rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$p/status)
		echo "pid $p VmRSS $rss kB" >&2
		[ "$rss" -lt 1024 ] || fail "pid $p: VmRSS $rss kB"
	done
}

@test "egress log: a refused connection is recorded and shown" {
	set_args abtest pause ready
	run_container eg --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid
	pid=$(state_field eg .pid)
	# a veth pair inside the container's netns: the packet has a route, meets the
	# firewall, and could never leave the netns anyway
	nsenter -t "$pid" -n ip link add abv0 type veth peer name abv1
	nsenter -t "$pid" -n ip addr add 198.18.77.1/24 dev abv0
	nsenter -t "$pid" -n ip link set abv0 up
	nsenter -t "$pid" -n ip link set abv1 up
	runtime exec eg sh -c 'nc -w 1 198.18.77.9 8080 </dev/null; echo rc=$?'
	[[ "$stdout" == *"rc=1"* ]]
	local i
	for ((i = 0; i < 50; i++)); do
		runtime egress log --json eg
		[[ "$stdout" == *198.18.77.9* ]] && break
		sleep 0.1
	done
	jq -se 'map(select(.dst == "198.18.77.9" and .port == 8080 and .proto == "tcp")) | length > 0' <<<"$stdout" >/dev/null
	runtime egress log eg
	assert_success
	[[ "$stdout" == *"198.18.77.9:8080"* ]]
}

# join_netns_of ID: the bundle's container joins ID's network namespace (a pod's
# pause container, docker --network container:ID)
join_netns_of() {
	local pid
	pid=$(state_field "$1" .pid)
	update_config '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)' \
		--arg p "/proc/$pid/ns/net"
	JOINED=/proc/$pid/ns/net
}

# run_alone ID [FLAGS...]: run_container in a cgroup of its own (the bundle's is
# shared, and a failed create empties the cgroup it made)
run_alone() {
	update_config '.linux.cgroupsPath = $cg' --arg cg "$CGROUP_PATH-$1"
	run_container "$@"
}

@test "egress: a container joining the netns of one whose ruleset came from the pool: the owner is found by the pool token its state records" {
	pool_fw_clear
	RUNTIME_ARGS=(--egress-allow "198.18.78.0/24")
	set_args abtest true
	run_alone warm
	assert_success
	wait_pool_fw 2
	set_args abtest pause
	run_alone own --detach
	assert_success
	local token
	token=$(jq -r .egressToken "$ROOT/own/state.json")
	[[ $token =~ ^[0-9a-f]{16}$ ]] || fail "the owner took no firewalled namespace from the pool: $token"
	join_netns_of own
	nsenter --net="$JOINED" nft list table inet agentbox | grep -qF "comment \"agentbox egress @$token\""
	# the same policy: shared
	run_alone same --detach
	assert_success
	[ "$(jq -r .egressPolicy "$ROOT/same/state.json")" = "shared:$JOINED" ]
	# wider: refused, naming the owner found by its token
	RUNTIME_ARGS=(--egress-allow "198.18.78.0/24,other.test")
	run_alone wide --detach
	assert_failure 1
	assert_one_error_line "policed by container own, whose policy does not allow \"other\\.test\": refused"
	[ ! -e "$ROOT/wide" ]
	# a token no state records: refused as a ruleset of no live container
	runtime delete --force same
	jq '.egressToken = "0000000000000000"' "$ROOT/own/state.json" >"$TEST_DIR/s" && cat "$TEST_DIR/s" >"$ROOT/own/state.json"
	RUNTIME_ARGS=(--egress-allow "198.18.78.0/24")
	run_alone orphan --detach
	assert_failure 1
	assert_one_error_line "has an agentbox ruleset of no live container under .*pool token \"$token\".*: refused"
	runtime delete --force own
	[ -z "$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -name "$CGROUP_NAME-*")" ]
}

# routed_netns: the container joins a netns of its own with a route to
# 198.18.77.0/24 (a veth pair inside it), so a packet there meets the firewall
routed_netns() {
	local ns=ablog$$
	ip netns add "$ns"
	defer ip netns delete "$ns"
	ip -n "$ns" link add abv0 type veth peer name abv1
	ip -n "$ns" addr add 198.18.77.1/24 dev abv0
	ip -n "$ns" link set abv0 up
	ip -n "$ns" link set abv1 up
	update_config '(.linux.namespaces[] | select(.type == "network")) .path = "/run/netns/'"$ns"'"'
}

# assert_logged DST PORT: `egress log --json eg` holds a tcp record for DST:PORT
assert_logged() {
	runtime egress log --json eg
	assert_success
	jq -se --arg d "$1" --argjson p "$2" 'map(select(.dst == $d and .port == $p and .proto == "tcp")) | length > 0' \
		<<<"$stdout" >/dev/null || fail "not in the log: $stdout"
}

@test "egress log: a connection refused at once, while the sentry still starts, is logged all the same" {
	requires test_hooks
	# the runtime opens the sentry's log socket before the program runs; the
	# sentry (delayed 1 s here) reads what queued there
	routed_netns
	export AGENTBOX_FAULT_SENTRY_DELAY_MS=1000
	# one SYN only (nc is killed before TCP sends it again), while the sentry
	# cannot read yet
	set_args sh -c 'nc -w 5 198.18.77.9 8080 </dev/null & sleep 0.2; kill $!; sleep 1.5'
	run_container eg --keep
	assert_logged 198.18.77.9 8080
	runtime delete eg
	assert_success
}

@test "egress log: a connection refused just before the program ends is logged before run returns" {
	requires test_hooks
	# the program is gone long before its sentry (delayed 0.6 s) reads: the
	# sentry still logs what queued, and run waits for that
	routed_netns
	export AGENTBOX_FAULT_SENTRY_DELAY_MS=600
	set_args sh -c 'nc -w 5 198.18.77.9 8081 </dev/null & sleep 0.1; kill $!'
	run_container eg --keep
	assert_logged 198.18.77.9 8081
	runtime delete eg
	assert_success
}

@test "egress: a foreground run forks its DNS sentry only when needed: a lookup, or 100 ms of running" {
	echo "nameserver 127.0.0.2" >"$BUNDLE/rootfs/etc/resolv.conf"
	RUNTIME_ARGS=(--egress-allow "allowed.test")
	sentry_of() { jq -r '.sentryPid // 0' "$ROOT/$1/state.json"; }
	# done at once, nothing asked: no sentry at all
	set_args abtest true
	run_container quick --keep
	assert_success
	[ "$(sentry_of quick)" = 0 ] || fail "a sentry was forked for a program that needed none"
	# a lookup at once: answered by a sentry forked for it
	set_args nslookup denied.test
	run_container asks --keep
	assert_output_contains "denied.test: NXDOMAIN"
	[ "$(sentry_of asks)" -gt 0 ]
	# quiet but longer: it comes anyway
	set_args sh -c 'sleep 0.5'
	run_container slow --keep
	assert_success
	[ "$(sentry_of slow)" -gt 0 ]
	local id
	for id in quick asks slow; do runtime delete "$id"; done
	assert_nothing_left
}

@test "egress: a loopback resolver of resolv.conf is guarded from the program's first packet" {
	requires test_hooks
	# Docker's 127.0.0.11: only the sentry may reach it, on any port; the
	# runtime puts the guard in before the start, not the (here delayed) sentry.
	# Another loopback address, not a resolver, is the control: lo is up and
	# the listeners answer.
	echo "nameserver 127.0.0.11" >"$BUNDLE/rootfs/etc/resolv.conf"
	export AGENTBOX_FAULT_SENTRY_DELAY_MS=1000
	RUNTIME_ARGS=(--egress-allow "allowed.test")
	# the listeners are waited for, not slept on: a loaded host (the ASan
	# build beside other work) can take longer than any fixed pause
	set_args sh -c 'cd /dev/shm; nc -l -p 5353 >resolver & nc -l -p 5354 >other &
		for i in $(seq 100); do [ "$(netstat -ltn | grep -c ":535[34] ")" = 2 ] && break; sleep 0.05; done
		echo leaked | nc -w 1 127.0.0.11 5353; echo reached | nc -w 1 127.0.0.12 5354
		sleep 0.1; cat resolver other; echo end'
	run_container guarded
	assert_output_contains end
	assert_output_contains reached
	[[ "$stdout" != *leaked* ]] || fail "reached the loopback resolver: $stdout"
	assert_nothing_left
}

@test "egress: a container joining a policed netns: the same policy or a narrower one (warned), never a wider one" {
	local owner_args=(--egress-allow "198.18.77.0/24,*.web.test" --egress-deny "198.18.77.9:443")
	RUNTIME_ARGS=("${owner_args[@]}")
	set_args abtest pause
	run_alone own --detach
	assert_success
	local sentry rules
	sentry=$(jq -r .sentryPid "$ROOT/own/state.json")
	join_netns_of own
	rules=$(nsenter --net="$JOINED" nft list ruleset)
	[[ "$rules" == *'comment "agentbox egress own"'* ]]

	# the same policy: shared without a word
	run_alone same --detach
	assert_success
	[ -z "$stderr" ]
	[ "$(jq -r .egressPolicy "$ROOT/same/state.json")" = "shared:$JOINED" ]
	[ "$(jq -r '.sentryPid // 0' "$ROOT/same/state.json")" = 0 ]

	# narrower: accepted, with a warning that the owner's rules apply
	RUNTIME_ARGS=(--egress-allow "198.18.77.0/25,api.web.test" --egress-deny "198.18.77.9:443")
	run_alone narrow --detach
	assert_success
	[[ "$stderr" == *"container narrow joins the network namespace $JOINED of container own and gets its egress rules"*"narrower policy does not apply"* ]]
	[ "$(jq -r .egressPolicy "$ROOT/narrow/state.json")" = "shared:$JOINED" ]

	# wider, three ways: each refused in one line naming the owner and the entry
	RUNTIME_ARGS=(--egress-allow "198.18.77.0/24,*.web.test,other.test" --egress-deny "198.18.77.9:443")
	run_alone wide1 --detach
	assert_failure 1
	assert_one_error_line "policed by container own, whose policy does not allow \"other\\.test\": refused"
	RUNTIME_ARGS=(--egress-allow "198.18.77.0/24")
	run_alone wide2 --detach
	assert_failure 1
	assert_one_error_line "policed by container own, which denies \"198\\.18\\.77\\.9:443\" and this container does not: refused"
	RUNTIME_ARGS=(--egress-allow all)
	run_alone wide3 --detach
	assert_failure 1
	assert_one_error_line "policed by container own and this container's firewall is off.*: refused"
	# nothing of them is left: no state, no process, the owner's rules and sentry as they were
	for id in wide1 wide2 wide3; do
		[ ! -e "$ROOT/$id" ] || fail "state of $id left"
	done
	[ "$(ls "$ROOT" | grep -v '\.lock$' | sort | tr '\n' ' ')" = "narrow own same " ]
	[ "$(nsenter --net="$JOINED" nft list ruleset)" = "$rules" ]
	kill -0 "$sentry"
	for id in narrow same own; do
		runtime delete --force "$id"
	done
	[ -z "$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -name "$CGROUP_NAME-*")" ]
}
