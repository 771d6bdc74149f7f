#!/usr/bin/env bats
# Forged answers (issue 22, hole 2). A resolver's answer decides what the box
# may reach, so nothing the box does may change what the sentry believes. A
# DNS client whose socket lives in the box can be fed answers "from" the
# resolver by any process there: it sees the socket's port in /proc/net/udp,
# sends from the resolver's address (IPV6_FREEBIND, no capability; or from a
# loopback resolver's address, which is the box's own) and tries every id.
# Shown working against such a client with the firewall off. With the
# firewall, the sentry asks from where the box cannot reach (the runtime's
# netns) or over TCP (a resolver at the box's own address), with random ids:
# whatever the forger sprays, the forged address is never opened. (A client
# in the box may still fool itself: its answers are the box's business, the
# ruleset is not.)
#
# The runtime runs in the internet namespace here: that is the namespace the
# sentry's net helper stays in, as it stays in the host's.
# Range: 198.19.16.0/20, 2001:db8:1916::/48 (egress-helpers.bash).

load egress-helpers

setup() {
	egress_setup
	command -v dnsmasq >/dev/null || skip "needs dnsmasq"
	runtime_in_internet
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

# opened ADDR: the sentry put ADDR into a set of the box's ruleset
opened() {
	nsenter -t "$BOX_PID" -n nft list table inet agentbox | grep -qw "$1"
}

@test "egress dns: forged answers from the resolver's address fool a client in the box, never the sentry (IPv6)" {
	local sink=$HOST6:54 good=$HOST6:10 evil=$HOST6:66
	host_addr "$sink" "$good" "$evil"
	# a resolver that never answers: any answer is forged
	host_listen "$sink" 53 90

	# unprotected: the box's client believes the forger, and goes there
	box_resolver "$sink"
	RUNTIME_ARGS=(--egress-allow all)
	box_start open
	runtime exec --detach open netprobe dns-forge "$sink" pay.test "$evil" 8
	box_exec open netprobe dns-query "$sink" pay.test AAAA 6000
	[[ "$stdout" == *"$evil"* ]] || unprotected_failed "the client did not take the forged answer: $stdout"
	reaches open "$evil" || unprotected_failed "the forged address did not answer"
	box_stop open

	# agentbox: the sentry asks from the runtime's netns; the box has no socket
	# of it to aim at, and the forged address is never opened
	RUNTIME_ARGS=(--egress-allow pay.test --egress-internal "$HOST6:0/112")
	box_start wall
	runtime exec --detach wall netprobe dns-forge "$sink" pay.test "$evil" 8
	box_exec wall netprobe dns-query "$sink" pay.test AAAA 6000
	! opened "$evil" || fail "the forged address was opened"
	! reaches wall "$evil" || fail "the box reached the forged address"
	box_stop wall
}

@test "egress dns: with a resolver that answers, the sentry's answer is the resolver's, whatever is sprayed (IPv6)" {
	local real=$HOST6:53 good=$HOST6:10 evil=$HOST6:66
	host_addr "$real" "$good" "$evil"
	host_dnsmasq "$real" pay.test=$good
	box_resolver "$real"
	RUNTIME_ARGS=(--egress-allow pay.test --egress-internal "$HOST6:0/112")
	box_start wall
	runtime exec --detach wall netprobe dns-forge "$real" pay.test "$evil" 6
	local i
	for i in 1 2 3 4 5; do
		box_exec wall netprobe dns-query "$real" pay.test AAAA 6000
	done
	opened "$good" || fail "the resolver's answer was not applied"
	! opened "$evil" || fail "the forged address was opened"
	reaches wall "$good"
	! reaches wall "$evil" || fail "the box reached the forged address"
}

@test "egress dns: a loopback resolver (Docker's 127.0.0.11) is asked over TCP: UDP from its address is anyone's, the sentry takes none" {
	host_addr $HOST4.10 $HOST4.66 $HOST4.53 $HOST4.54
	host_dnsmasq $HOST4.53 pay.test=$HOST4.10
	# the runtime's own resolver: where the sentry asks what Docker's forwards
	echo "nameserver $HOST4.53" >"$TEST_DIR/host-resolv.conf"
	# a resolver that never answers: Docker's forwards there, unprotected
	host_listen $HOST4.54 53 90
	box_resolver 127.0.0.11

	# unprotected: a UDP client asking a loopback resolver takes what any
	# process of the box sends from that address (it is the box's own)
	RUNTIME_ARGS=(--egress-allow all)
	box_start open
	runtime exec --detach open netprobe dns-forge 127.0.0.11 pay.test $HOST4.66 8
	box_exec open netprobe dns-query 127.0.0.11 pay.test A 6000
	[[ "$stdout" == *"$HOST4.66"* ]] || unprotected_failed "the client did not take the forged answer: $stdout"
	reaches open $HOST4.66 || unprotected_failed "the forged address did not answer"
	box_stop open

	# agentbox, with Docker's setup in the box's netns: a resolver on
	# 127.0.0.11 at a port of its own behind DNAT, forwarding from the box
	RUNTIME_ARGS=(--egress-allow pay.test --egress-internal "$HOST4.0/24")
	box_start wall
	nsenter -t "$BOX_PID" -n nft -f - <<-'EOF'
		table ip abnw_docker {
			chain out {
				type nat hook output priority -100; policy accept;
				ip daddr 127.0.0.11 udp dport 53 dnat to 127.0.0.11:5353
				ip daddr 127.0.0.11 tcp dport 53 dnat to 127.0.0.11:5353
			}
			chain post {
				type nat hook postrouting priority 100; policy accept;
				ip saddr 127.0.0.11 udp sport 5353 snat to :53
				ip saddr 127.0.0.11 tcp sport 5353 snat to :53
			}
		}
	EOF
	nsenter -t "$BOX_PID" -n dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root \
		--group=root --bind-interfaces --listen-address=127.0.0.11 --port=5353 --server=$HOST4.54 \
		</dev/null >/dev/null 2>&1 3>&- &
	local dns=$!
	sleep 0.5
	runtime exec --detach wall netprobe dns-forge 127.0.0.11 pay.test $HOST4.66 8
	box_exec wall netprobe dns-query 127.0.0.11 pay.test A 6000
	# Docker's forward came back to the sentry, which asked the runtime's
	# resolver: the real answer is in the ruleset, the forged one is not
	local i
	for i in $(seq 30); do opened $HOST4.10 && break; sleep 0.2; done
	opened $HOST4.10 || fail "the real answer was not applied"
	! opened $HOST4.66 || fail "the forged address was opened"
	! reaches wall $HOST4.66 || fail "the box reached the forged address"
	kill "$dns"
}
