#!/usr/bin/env bats
# A deny log a flood cannot drown (issue 22, hole 6). An agent that wants one
# attempt to go unnoticed hides it in a flood: before, 479,000 refused
# packets gave 83 records and the attempt that mattered was not among them.
# Unprotected (the firewall off) the attempt goes out and nothing records it;
# with the firewall it is refused and recorded whatever the flood, the
# flood's repeats are counted, and the log stays small.
# Range: 198.19.16.0/20, 2001:db8:1916::/48 (egress-helpers.bash).

load egress-helpers

setup() {
	egress_setup
}

teardown() {
	egress_teardown
}

# flood_then_try ID: 50,000 packets to one address, 300 ports of another, then
# the attempt that matters: one datagram to $HOST4.99:4444 (IPv4) and one to
# [$HOST6:99]:4444
flood_then_try() {
	box_exec "$1" netprobe flood-udp $HOST4.98 9 50000
	box_exec "$1" netprobe scan-udp $HOST6:98 20000 300
	box_exec "$1" netprobe send-udp - $HOST4.99 4444 "secret-$1"
	box_exec "$1" netprobe send-udp - $HOST6:99 4444 "secret6-$1"
}

@test "egress log: a flood does not hide the attempt that matters; repeats are counted" {
	host_addr $HOST4.98 $HOST4.99 $HOST6:98 $HOST6:99
	host_listen $HOST4.99 4444 60
	local listen4=$LISTEN_OUT
	host_listen $HOST6:99 4444 60
	local listen6=$LISTEN_OUT

	# unprotected: it goes out, and nothing says so
	RUNTIME_ARGS=(--egress-allow all)
	box_start open
	flood_then_try open
	heard "$listen4" secret-open || unprotected_failed "the attempt did not go out"
	heard "$listen6" secret6-open || unprotected_failed "the IPv6 attempt did not go out"
	[ -z "$(egress_log open)" ] || unprotected_failed "something logged it"
	box_stop open

	# agentbox: refused, and in the log at once, flood or not
	RUNTIME_ARGS=()
	box_start wall
	flood_then_try wall
	! heard "$listen4" secret-wall || fail "the attempt went out"
	log_has wall ".dst == \"$HOST4.99\" and .port == 4444 and .proto == \"udp\" and (has(\"repeats\") | not)"
	log_has wall ".dst == \"$HOST6:99\" and .port == 4444"
	# the flooded address: one first record, its repeats counted (at the
	# latest when the sentry writes what is left: at its end)
	runtime kill wall KILL
	local i
	for i in $(seq 50); do
		[ "$(egress_log wall | jq -s "[.[] | select(.dst == \"$HOST4.98\") | .repeats // 0] | add")" -ge 49999 ] &&
			break
		sleep 0.2
	done
	egress_log wall | jq -c "select(.dst == \"$HOST4.98\" or .verdict == \"summary\")" >&2
	[ "$(egress_log wall | jq -s "[.[] | select(.dst == \"$HOST4.98\" and (has(\"repeats\") | not))] | length")" = 1 ]
	local counted
	counted=$(egress_log wall | jq -s "([.[] | select(.dst == \"$HOST4.98\") | .repeats // 0] | add)
		+ ([.[] | select(.verdict == \"summary\") | (.uncounted_repeats // 0) + (.suppressed_repeats // 0)] | add // 0)")
	[ "$counted" -ge 49999 ] || fail "repeats counted: $counted of 49999"
	# every port scanned is there, or counted among what was left out
	local ports left
	ports=$(egress_log wall | jq -s "[.[] | select(.dst == \"$HOST6:98\") | .port] | unique | length")
	left=$(egress_log wall | jq -s '[.[] | select(.verdict == "summary") | (.suppressed // 0) + (.lost // 0)] | add // 0')
	[ $((ports + left)) -ge 300 ] || fail "scan: $ports ports recorded, $left left out"
	[ "$(egress_log wall | wc -l)" -lt 1000 ]
	# agentbox egress log shows the repeats
	runtime egress log wall
	[[ "$stdout" == *"$HOST4.98:9"*"more times"* ]]
}
