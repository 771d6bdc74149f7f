#!/bin/bash
# egress-helpers.bash: a little internet for the egress probes
# (tests/security/egress-*.bats), in network namespaces of their own.
#
#   box (the container's netns, made by the runtime)   netns of $HPID ("internet")
#   eth0 198.19.16.2/24, 2001:db8:1916::2/64  <-veth->  198.19.16.1, 2001:db8:1916::1
#        default routes via .1 / ::1                     hosts on lo: 198.19.17.X and
#                                                        2001:db8:1916:1::X (host_addr)
#
# Addresses: 198.19.16.0/20 and 2001:db8:1916::/48 only (this suite's range);
# nothing is routed anywhere else. Veths are named abnw*. The internet
# namespace is held by a process of ours (not pinned under /run/netns, where a
# concurrent `ip netns add` elsewhere may stack a new mount over the pins).
# Every "blocked" check aims at a host that answers the same check unprotected.
#
# The box runs `abtest pause ready` from a copy of the fixture rootfs with
# tests/helper/netprobe in it; `box_exec ID CMD...` runs CMD in it.

# shellcheck source=helpers.bash
. "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"

NP=$REPO_ROOT/tests/helper/netprobe
NET4=198.19.16      # the box's link
NET6=2001:db8:1916:
HOST4=198.19.17     # the hosts behind the gateway
HOST6=2001:db8:1916:1:

# egress_setup: the bundle (with netprobe) and the "internet" namespace (held by $HPID).
egress_setup() {
	requires root agentbox
	for tool in jq ip nft; do
		command -v $tool >/dev/null || skip "needs $tool"
	done
	if [ ! -x "$NP" ] || [ "$NP.c" -nt "$NP" ]; then
		make -s -C "$REPO_ROOT" tests/helper/netprobe >&2 || fail "cannot build netprobe"
	fi
	setup_bundle
	cp "$NP" "$BUNDLE/rootfs/bin/netprobe"
	set_args abtest pause ready
	R=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
	unshare --net sleep 100000 </dev/null >/dev/null 2>&1 3>&- &
	HPID=$!
	defer kill -9 "$HPID"
	local i
	for i in $(seq 50); do
		[ "$(readlink /proc/$HPID/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.02
	done
	in_h ip link set lo up
	NVETH=0
}

# in_h CMD...: CMD in the internet namespace
in_h() {
	nsenter -t "$HPID" -n "$@"
}

egress_teardown() {
	# what runs in the internet namespace goes before it does
	if [ -n "${HPID:-}" ]; then
		local self pid
		self=$(readlink /proc/$HPID/ns/net 2>/dev/null)
		for pid in $(ls /proc | grep -E '^[0-9]+$'); do
			[ "$pid" != "$HPID" ] && [ "$(readlink /proc/$pid/ns/net 2>/dev/null)" = "$self" ] &&
				kill -9 "$pid" 2>/dev/null
		done
	fi
	teardown_bundle
}

# host_addr ADDR...: give the internet namespace these addresses (on lo: the
# gateway routes to them)
host_addr() {
	local a
	for a in "$@"; do
		case $a in
		*:*) in_h ip addr add "$a/128" dev lo nodad ;;
		*) in_h ip addr add "$a/32" dev lo ;;
		esac
	done
}

# box_start ID [RUNTIME FLAGS...]: run the bundle detached (abtest pause) with
# RUNTIME_ARGS as they are, wire its netns to the internet namespace, and set BOX_PID.
box_start() {
	local id=$1
	shift
	run_container "$id" --detach "$@"
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	BOX_PID=$(state_field "$id" .pid)
	NVETH=$((NVETH + 1))
	local peer=abnw$R$NVETH
	# made inside the namespaces: no interface in the host's
	ip link add eth0 netns "$BOX_PID" type veth peer name "$peer" netns "$HPID"
	nsenter -t "$BOX_PID" -n ip addr add $NET4.2/24 dev eth0
	nsenter -t "$BOX_PID" -n ip addr add $NET6:2/64 dev eth0 nodad
	nsenter -t "$BOX_PID" -n ip link set eth0 up
	nsenter -t "$BOX_PID" -n ip route add default via $NET4.1
	nsenter -t "$BOX_PID" -n ip -6 route add default via $NET6:1
	in_h ip addr add $NET4.1/24 dev "$peer"
	in_h ip addr add $NET6:1/64 dev "$peer" nodad
	in_h ip link set "$peer" up
}

# box_stop ID: delete it (and its veth with its netns)
box_stop() {
	runtime kill "$1" KILL
	runtime delete --force "$1"
}

# box_exec ID CMD...: like `runtime exec`, output in $stdout
box_exec() {
	local id=$1
	shift
	runtime exec "$id" "$@"
}

# host_listen ADDR PORT SECONDS: a UDP listener in the internet namespace; LISTEN_OUT names the file
# its lines go to ("from PEER PORT: TEXT")
host_listen() {
	LISTEN_OUT=$TEST_DIR/listen-$1-$2.out
	in_h "$NP" listen-udp "$@" >"$LISTEN_OUT" 2>&1 3>&- &
	wait_for_line "$LISTEN_OUT" '^listening$'
}

# heard FILE TEXT: the listener's file has a datagram with TEXT (it keeps
# listening: poll up to 3 s)
heard() {
	local i
	for i in $(seq 30); do
		grep -q ": $2\$" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# egress_log ID: the box's deny log, JSON lines
egress_log() {
	cat "$ROOT/$1/egress.log" 2>/dev/null
}

# log_has ID 'JQ CONDITION': within 3 s some record of ID's deny log satisfies it
log_has() {
	local i
	for i in $(seq 30); do
		egress_log "$1" | jq -s -e "any(.[]; $2)" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "no deny log record of $1 with: $2" >&2
	egress_log "$1" >&2
	return 1
}

# runtime_in_internet: from now on the runtime runs in the internet namespace
# (where the sentry's net helper then asks upstream resolvers, as it would in
# the host's), with $TEST_DIR/host-resolv.conf as its /etc/resolv.conf
runtime_in_internet() {
	local real=$RUNTIME
	: >"$TEST_DIR/host-resolv.conf"
	cat >"$TEST_DIR/rt-in-internet" <<-EOF2
		#!/bin/sh
		exec nsenter -t $HPID -n -- unshare -m -- sh -c 'mount --bind "\$0" /etc/resolv.conf && exec "\$@"' \
			"$TEST_DIR/host-resolv.conf" "$real" "\$@"
	EOF2
	chmod +x "$TEST_DIR/rt-in-internet"
	RUNTIME=$TEST_DIR/rt-in-internet
}

# box_resolver ADDR: the box's /etc/resolv.conf names ADDR
box_resolver() {
	echo "nameserver $1" >"$BUNDLE/rootfs/etc/resolv.conf"
}

# host_dnsmasq ADDR NAME=IP...: a resolver in the internet namespace
host_dnsmasq() {
	local addr=$1 rec
	shift
	local args=()
	for rec in "$@"; do args+=(--host-record="${rec%%=*},${rec#*=},600"); done
	in_h dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root --group=root \
		--bind-interfaces --listen-address="$addr" --log-queries --log-facility="$TEST_DIR/dnsmasq.log" \
		"${args[@]}" </dev/null >/dev/null 2>&1 3>&- &
	local i
	for i in $(seq 50); do
		grep -q "started" "$TEST_DIR/dnsmasq.log" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "dnsmasq did not start"
}
