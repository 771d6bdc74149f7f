#!/usr/bin/env bats
# Allowed names that point inside (issue 22, hole 8). The owner of an allowed
# name chooses its answers: a public name may point at the box's loopback,
# the cloud metadata service, the LAN, the host (DNS rebinding). With the
# firewall off the box follows such a name anywhere; with it, an answer
# holding a special-purpose address (or one of the host's) is withheld unless
# the policy opens that range, and the log says which name pointed where.
#
# The test hosts' own range, 198.18.0.0/15, is such a range ("benchmarking"):
# what points there is withheld too, unless opened with --egress-internal.
# Range: 198.19.16.0/20, 2001:db8:1916::/48 (egress-helpers.bash).

load egress-helpers

setup() {
	egress_setup
	command -v dnsmasq >/dev/null || skip "needs dnsmasq"
	runtime_in_internet
	host_addr $HOST4.53 $HOST4.70 $HOST6:70
	host_dnsmasq $HOST4.53 inside.test=$HOST4.70 inside6.test=$HOST6:70 lo.test=127.0.0.1
	box_resolver $HOST4.53
}

teardown() {
	egress_teardown
}

# reaches ID ADDR: a datagram from box ID reaches a listener on ADDR:7777 (UDP
# may lose one: three tries)
reaches() {
	host_listen "$2" 7777 30
	local try
	for try in 1 2 3; do
		box_exec "$1" netprobe send-udp - "$2" 7777 "probe-$1-$try"
		heard "$LISTEN_OUT" "probe-$1-$try" && return 0
	done
	return 1
}

@test "egress rebind: an allowed name pointing inside opens nothing, and the log says where it pointed" {
	# unprotected: the names take the box where they point
	RUNTIME_ARGS=(--egress-allow all)
	box_start open
	box_exec open netprobe dns-query $HOST4.53 inside.test
	[[ "$stdout" == *"$HOST4.70"* ]] || unprotected_failed "inside.test did not resolve: $stdout"
	reaches open $HOST4.70 || unprotected_failed "$HOST4.70 did not answer"
	box_exec open netprobe dns-query $HOST4.53 inside6.test AAAA
	[[ "$stdout" == *"$HOST6:70"* ]] || unprotected_failed "inside6.test did not resolve: $stdout"
	box_exec open netprobe dns-query $HOST4.53 lo.test
	[[ "$stdout" == *"127.0.0.1"* ]] || unprotected_failed "lo.test did not resolve: $stdout"
	box_stop open

	# the names allowed, their ranges not: withheld, logged, unreachable
	RUNTIME_ARGS=(--egress-allow inside.test,inside6.test,lo.test)
	box_start wall
	box_exec wall netprobe dns-query $HOST4.53 inside.test
	[[ "$stdout" == "rcode=3" ]] || fail "inside.test: $stdout"
	box_exec wall netprobe dns-query $HOST4.53 inside6.test AAAA
	[[ "$stdout" == "rcode=3" ]] || fail "inside6.test: $stdout"
	box_exec wall netprobe dns-query $HOST4.53 lo.test
	[[ "$stdout" == "rcode=3" ]] || fail "lo.test: $stdout"
	! reaches wall $HOST4.70 || fail "$HOST4.70 was reached"
	log_has wall ".name == \"inside.test\" and .dst == \"$HOST4.70\" and .reason == \"internal-address\""
	log_has wall ".name == \"inside6.test\" and .dst == \"$HOST6:70\" and .reason == \"internal-address\""
	log_has wall '.name == "lo.test" and .dst == "127.0.0.1" and .reason == "internal-address"'
	box_stop wall

	# opened on purpose: that range only
	RUNTIME_ARGS=(--egress-allow inside.test,inside6.test --egress-internal $HOST4.64/26)
	box_start internal
	box_exec internal netprobe dns-query $HOST4.53 inside.test
	[[ "$stdout" == *"rcode=0"*"$HOST4.70"* ]] || fail "inside.test with its range internal: $stdout"
	reaches internal $HOST4.70
	box_exec internal netprobe dns-query $HOST4.53 inside6.test AAAA
	[[ "$stdout" == "rcode=3" ]] || fail "inside6.test, whose range is not internal: $stdout"
}
