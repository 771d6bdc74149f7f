#!/usr/bin/env bats
# What a container with the egress firewall reads about its refusals
# (agentbox-egress(7), REFUSALS): /run/agentbox/refused, read-only, with the
# reasons of the bundle's agentbox.egress.reasons; nothing of it without a
# firewall. The resolver of resolv.conf (127.0.0.2) is never asked: refused
# names stay in the sentry.

load helpers

setup() {
	requires root agentbox
	setup_bundle
	agent_policy default
	echo "nameserver 127.0.0.2" >"$BUNDLE/rootfs/etc/resolv.conf"
}

teardown() {
	teardown_bundle
}

@test "egress: the refused file lists a refusal with its reason, and the container cannot write it" {
	RUNTIME_ARGS=(--egress-allow allowed.test --egress-deny denied.test)
	update_config '.annotations["agentbox.egress.reasons"] = "denied.test=ask the admin for access"'
	set_args sh -c 'nslookup denied.test 127.0.0.1 2>&1; nslookup other.test 127.0.0.1 2>&1
		cat /run/agentbox/refused
		(echo forged >>/run/agentbox/refused) 2>/dev/null && echo wrote || echo read-only
		rm -f /run/agentbox/refused 2>/dev/null && echo removed || echo kept'
	run_container rf1
	assert_success
	assert_output_contains "denied.test: NXDOMAIN"
	assert_output_contains read-only
	assert_output_contains kept
	refute_output_contains wrote
	local lines
	lines=$(grep '^{' <<<"$stdout")
	jq -e -s 'any(.[]; .proto == "dns" and .name == "denied.test" and .reason == "denied" and .note == "ask the admin for access" and (.message | test("denied.test is denied: ask the admin for access")))' <<<"$lines"
	jq -e -s 'any(.[]; .name == "other.test" and .reason == "not-allowed" and (has("note") | not))' <<<"$lines"
	# the host's copy in the state dir stays the sentry's alone
	assert_nothing_left
}

@test "egress: a reason for an entry the policy does not deny is one clear error; nothing left" {
	RUNTIME_ARGS=(--egress-allow allowed.test)
	update_config '.annotations["agentbox.egress.reasons"] = "allowed.test=no"'
	set_args abtest true
	run_container rf2
	assert_failure 1
	assert_one_error_line 'annotation agentbox\.egress\.reasons: entry "allowed\.test" is not a deny entry of the policy'
	assert_nothing_left
}

@test "egress: without the firewall the container sees no refused file" {
	RUNTIME_ARGS=(--egress-allow all)
	set_args sh -c 'test -e /run/agentbox/refused && echo present || echo absent'
	run_container rf3
	assert_success
	[ "$stdout" = absent ]
}
