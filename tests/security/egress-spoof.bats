#!/usr/bin/env bats
# Forged source addresses (issue 22, hole 1). An unprivileged process may bind
# or choose any source address (IP_FREEBIND, IPV6_FREEBIND, IP_PKTINFO,
# IPV6_PKTINFO: no capability needed). A datagram "from" a refused host to the
# box's own address makes conntrack record a flow that host started; the box's
# "reply" then passes as established. The box may send nothing whose source
# is not one of its own addresses.
#
# IPv4 refuses a foreign source at route lookup unless the socket has
# IP_TRANSPARENT or IP_HDRINCL (CAP_NET_ADMIN / CAP_NET_RAW, which the floor
# drops while the firewall is on), so the probes below could not work there
# even unprotected: they run over IPv6. The ruleset's check covers both
# families (a source that is not local in the box's netns is refused).
#
# Range: 198.19.16.0/20, 2001:db8:1916::/48 (egress-helpers.bash).

load egress-helpers

setup() {
	egress_setup
}

teardown() {
	egress_teardown
}

# hijack ID OWN PEER PORT: the conntrack trick from inside box ID; a listener
# on PEER:PORT in the internet namespace records what reaches it
hijack() {
	host_listen "$3" "$4" 6
	box_exec "$1" netprobe ct-hijack "$2" "$3" "$4" "secret-$1"
}

@test "egress spoof: a datagram forged from a refused host to the box's own address opens no way out" {
	host_addr $HOST6:11
	local fam=6 own=$NET6:2 peer=$HOST6:11
	# unprotected: the forged datagram arrives, "from" the refused host, and
	# the reply reaches it
	RUNTIME_ARGS=(--egress-allow all)
	box_start open$fam
	hijack open$fam $own $peer 7$fam$fam$fam
	[[ "$stdout" == *"forged datagram arrived"* ]] || unprotected_failed "the forged datagram did not arrive: $stdout"
	heard "$LISTEN_OUT" "secret-open$fam" || unprotected_failed "the reply did not reach $peer"
	box_stop open$fam

	# agentbox's default: the forged datagram never leaves, the reply is
	# refused like any packet to a refused host, and the log says why
	RUNTIME_ARGS=()
	box_start wall$fam
	hijack wall$fam $own $peer 8$fam$fam$fam
	[[ "$stdout" != *"forged datagram arrived"* ]] || fail "the forged datagram arrived: $stdout"
	! heard "$LISTEN_OUT" "secret-wall$fam" || fail "the reply reached the refused host $peer"
	log_has wall$fam ".reason == \"spoofed-source\" and .dst == \"$own\""
	log_has wall$fam ".reason == \"not-allowed\" and .dst == \"$peer\""
	box_stop wall$fam
}

@test "egress spoof: a source chosen per message (IPV6_PKTINFO) or bound freely (IPV6_FREEBIND) never leaves, even to an allowed host" {
	host_addr $HOST6:12
	local fam=6 dst=$HOST6:12 fake=$NET6:99
	RUNTIME_ARGS=(--egress-allow all)
	box_start open$fam
	host_listen $dst 5353 8
	box_exec open$fam netprobe send-pktinfo $fake $dst 5353 pktinfo-open$fam
	heard "$LISTEN_OUT" "pktinfo-open$fam" || unprotected_failed "nothing from $fake reached $dst"
	grep -q "^from $fake " "$LISTEN_OUT" || unprotected_failed "the source was not $fake: $(cat "$LISTEN_OUT")"
	box_exec open$fam netprobe send-udp $fake $dst 5353 freebind-open$fam
	heard "$LISTEN_OUT" "freebind-open$fam" || unprotected_failed "the freely bound source did not reach $dst"
	box_stop open$fam

	# the destination is allowed: only the forged source stops it
	RUNTIME_ARGS=(--egress-allow "$dst")
	box_start wall$fam
	host_listen $dst 5354 8
	box_exec wall$fam netprobe send-pktinfo $fake $dst 5354 pktinfo-wall$fam
	box_exec wall$fam netprobe send-udp $fake $dst 5354 freebind-wall$fam
	box_exec wall$fam netprobe send-udp - $dst 5354 honest-wall$fam
	heard "$LISTEN_OUT" "honest-wall$fam" || fail "the box's own address did not reach the allowed $dst"
	! grep -q -e "pktinfo-wall$fam" -e "freebind-wall$fam" "$LISTEN_OUT" || fail "a forged source reached $dst: $(cat "$LISTEN_OUT")"
	log_has wall$fam ".reason == \"spoofed-source\" and .dst == \"$dst\""
	box_stop wall$fam
}

@test "egress spoof: over loopback, a forged source reaches no listener of the box" {
	# the way in for conntrack: to our own address over lo, "from" anyone
	local fam=6 own=$NET6:2 fake=$NET6:77 mode
	for mode in open wall; do
		if [ $mode = open ]; then RUNTIME_ARGS=(--egress-allow all); else RUNTIME_ARGS=(); fi
		box_start $mode$fam
		runtime exec --detach $mode$fam sh -c "netprobe listen-udp $own 6000 4 >/dev/shm/heard 2>&1"
		sleep 0.3
		box_exec $mode$fam netprobe send-pktinfo $fake $own 6000 loop-$mode$fam
		sleep 0.5
		box_exec $mode$fam cat /dev/shm/heard
		if [ $mode = open ]; then
			[[ "$stdout" == *"from $fake "*"loop-open$fam"* ]] || unprotected_failed "the forged datagram did not arrive over lo: $stdout"
		else
			[[ "$stdout" != *"loop-wall$fam"* ]] || fail "a forged datagram arrived over lo: $stdout"
		fi
		box_stop $mode$fam
	done
}
