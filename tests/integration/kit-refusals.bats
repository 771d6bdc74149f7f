#!/usr/bin/env bats
# Refusals a box understands at once (agentbox-egress(7), REFUSALS): a kit's
# network.deny entries with reasons, the final DNS answer, the reset, and the
# read-only /run/agentbox/refused that lists them.
#
# A little internet of its own, after TESTING.md: netns "inet" joined to the
# host's by a veth (198.18.41.129/30 here, .130 there), a test server on
# 198.18.41.140 and .141 (port 8080) in it, and a host route for
# 198.18.41.136/29 through the veth; slirp4netns runs in the host's netns.

load helpers
load kit_helpers

setup() {
	requires root
	setup_state_only
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 1000:1000 "$WS"
	kit_setup_common
}

teardown() {
	teardown_bundle
}

setup_inet() {
	command -v slirp4netns >/dev/null || skip "needs slirp4netns"
	command -v socat >/dev/null || skip "needs socat"
	exec 8>/run/agentbox-kit-refusals-net.lock
	flock -w 60 8
	local r=$$
	NS=abk-rf-$r
	HV=abkrf$((r % 100000))
	ip netns add "$NS"
	defer ip netns del "$NS"
	ip link add "$HV" type veth peer name n0 netns "$NS"
	defer ip link del "$HV"
	ip addr add 198.18.41.129/30 dev "$HV"
	ip link set "$HV" up
	ip -n "$NS" addr add 198.18.41.130/30 dev n0
	ip -n "$NS" link set n0 up
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add 198.18.41.140/32 dev lo
	ip -n "$NS" addr add 198.18.41.141/32 dev lo
	ip route add 198.18.41.136/29 via 198.18.41.130 dev "$HV"
	defer ip route del 198.18.41.136/29 via 198.18.41.130
	ip netns exec "$NS" socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo hello-from-inet' \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	local i
	for i in $(seq 50); do
		socat -T2 - TCP:198.18.41.141:8080,connect-timeout=1 </dev/null 2>/dev/null | grep -q hello && break
		sleep 0.1
	done
}

@test "kit run: a deny entry's reason reaches the box: final DNS answer, reset, the refused file (read-only)" {
	setup_inet
	# the denied host answers without the policy: the rule is what refuses it
	run socat -T2 - TCP:198.18.41.141:8080,connect-timeout=1 </dev/null
	[ "$output" = hello-from-inet ]

	kit rf.yaml <<-'EOF'
		network:
		  allow: ["198.18.41.136/29"]
		  deny:
		    - {entry: pypi.test, reason: "use the internal mirror"}
		    - entry: "198.18.41.141"
		      reason: the test host is off limits
		    - plain.test
		command:
		  - sh
		  - -c
		  - |
		    getent hosts pypi.test; [ $? = 2 ] && echo dns-final
		    socat -T5 - TCP:198.18.41.141:8080,connect-timeout=4 </dev/null 2>&1 | grep -q "Connection refused" && echo tcp-reset
		    for i in $(seq 50); do grep -q 198.18.41.141 /run/agentbox/refused && break; sleep 0.1; done
		    cat /run/agentbox/refused
		    (echo forged >>/run/agentbox/refused) 2>/dev/null && echo wrote || echo read-only
		    grep -q ' /run/agentbox/refused .*ro,' /proc/self/mountinfo && echo mounted-ro
	EOF
	runtime kit run "$TEST_DIR/rf.yaml"
	assert_success
	assert_output_contains dns-final
	assert_output_contains tcp-reset
	assert_output_contains read-only
	assert_output_contains mounted-ro
	refute_output_contains wrote
	# glibc's final "not found" (2), not a temporary failure; the refused
	# file: JSON lines with the kit's reason and a sentence
	local lines
	lines=$(grep '^{' <<<"$stdout")
	jq -e -s 'any(.[]; .proto == "dns" and .name == "pypi.test" and .reason == "denied" and .note == "use the internal mirror")' <<<"$lines"
	jq -e -s 'any(.[]; .proto == "tcp" and .dst == "198.18.41.141" and .port == 8080 and .note == "the test host is off limits" and (.message | test("is denied: the test host is off limits")))' <<<"$lines"
	assert_kit_run_clean
}

@test "kit show and kit build carry a deny entry's reason; a bad one is one clear error" {
	kit rs.yaml <<-'EOF'
		network:
		  deny:
		    - {entry: pypi.test, reason: "use the internal mirror"}
		    - plain.test
		command: [true]
	EOF
	runtime kit show "$TEST_DIR/rs.yaml"
	assert_success
	assert_output_contains "entry: pypi.test"
	assert_output_contains "reason: use the internal mirror"
	assert_output_contains "- plain.test"
	runtime kit build "$TEST_DIR/rs.yaml" -o "$TEST_DIR/b"
	assert_success
	[ "$(jq -r '.annotations["agentbox.egress.reasons"]' "$TEST_DIR/b/config.json")" = "pypi.test=use the internal mirror" ]
	[ "$(jq -r '.annotations["agentbox.egress.deny"]' "$TEST_DIR/b/config.json")" = "pypi.test,plain.test" ]

	kit bad.yaml <<-'EOF'
		network:
		  deny:
		    - {entry: pypi.test}
		command: [true]
	EOF
	runtime kit show "$TEST_DIR/bad.yaml"
	assert_failure
	assert_one_error_line "network\\.deny\\[0\\]"
	assert_output_contains '"reason" is missing'
	kit bad2.yaml <<-'EOF'
		network:
		  deny:
		    - {entry: pypi.test, reason: x, why: y}
		command: [true]
	EOF
	runtime kit show "$TEST_DIR/bad2.yaml"
	assert_failure
	assert_output_contains "why"
}
