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

@test "egress: an engine container gets the box's HTTP proxy and its variables only when an annotation asks" {
	RUNTIME_ARGS=(--egress-allow allowed.test)
	set_args sh -c 'env | grep -i _proxy= | sort; wget -q -O /dev/null http://registry.test/x 2>&1; true'
	run_container px1
	assert_success
	# off by default: it changes what clients do
	refute_output_contains "_proxy="
	refute_output_contains "agentbox egress policy"
	update_config '.annotations["agentbox.egress.proxy"] = "true"'
	run_container px2
	assert_success
	assert_output_contains "http_proxy=http://127.0.0.1:61128"
	assert_output_contains "HTTPS_PROXY=http://127.0.0.1:61128"
	assert_output_contains "no_proxy=localhost,127.0.0.1,::1"
	# busybox wget through it: the refusal's words
	assert_output_contains "403 Forbidden (agentbox egress policy: registry.test port 80/tcp is not on the allowlist)"
	# exec's processes get them too (the state says so, not today's config)
	set_args sleep 60
	run_container px-exec --detach
	assert_success
	runtime exec px-exec sh -c 'env | grep -ci _proxy='
	[ "$stdout" = 7 ] || fail "exec's proxy variables: $output"
	runtime delete --force px-exec
	# an engine's own proxy is kept
	update_config '.process.env += ["http_proxy=http://corp.test:3128"]'
	set_args sh -c 'env | grep -ci _proxy='
	run_container px3
	assert_success
	[ "$stdout" = 1 ]
	update_config '.annotations["agentbox.egress.proxy"] = "yes"'
	run_container px4
	assert_failure 1
	assert_one_error_line 'annotation agentbox\.egress\.proxy: "yes" is neither true nor false'
	assert_nothing_left
}
