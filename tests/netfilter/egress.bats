#!/usr/bin/env bats
# The egress firewall end to end, on a little internet of our own:
#
#   netns abx-c<R> ("container")          netns abx-h<R> (test hosts)
#   eth0 198.18.42.2/24  <--- veth --->   veth0 198.18.42.1 (dnsmasq), .10-.53
#        2001:db8:42::2/64                      2001:db8:42::1, ::10-::53
#
# Every address is in 198.18.0.0/15 or 2001:db8::/32 and lives in a namespace
# this file creates; nothing is routed anywhere else (no default route exists).
# A "blocked" check always aims at a host that answers the same check before
# the policy goes in, so a broken rule shows as a failure, not as a leak.
#
# Needs root, dnsmasq, socat, nft, jq, and the driver built by
# `make tests/netfilter/egress-driver` (or EGRESS_DRIVER=path).

bats_require_minimum_version 1.5.0

REPO_ROOT=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
DRIVER=${EGRESS_DRIVER:-$REPO_ROOT/tests/netfilter/egress-driver}

NET4=198.18.42
NET6=2001:db8:42:

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$DRIVER" ] || skip "build the driver first: make tests/netfilter/egress-driver"
	for tool in dnsmasq socat nft jq; do
		command -v $tool >/dev/null || skip "needs $tool"
	done
	R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	C=abx-c$R
	H=abx-h$R
	T=$BATS_TEST_TMPDIR
	ip netns add "$C"
	ip netns add "$H"
	ip -n "$C" link set lo up
	ip -n "$H" link set lo up
	# created inside the namespaces: no interface name in the host's namespace
	ip link add eth0 netns "$C" type veth peer name veth0 netns "$H"
	ip -n "$C" addr add $NET4.2/24 dev eth0
	ip -n "$C" addr add $NET6:2/64 dev eth0 nodad
	ip -n "$H" addr add $NET4.1/24 dev veth0
	ip -n "$H" addr add $NET6:1/64 dev veth0 nodad
	for i in 10 11 12 13 14 15 16 17 18 19 20 53; do
		ip -n "$H" addr add $NET4.$i/24 dev veth0
		ip -n "$H" addr add $NET6:$i/64 dev veth0 nodad
	done
	ip -n "$C" link set eth0 up
	ip -n "$H" link set veth0 up

	# the test hosts: "hello" on 80, 443, 853 and 8443, an echo server on 7
	for port in 80 443 853 8443; do
		bg_host hello$port socat TCP6-LISTEN:$port,fork,reuseaddr,ipv6only=0 SYSTEM:'echo hello'
	done
	bg_host echo socat TCP6-LISTEN:7,fork,reuseaddr,ipv6only=0 EXEC:cat
	# another DNS server the container must not reach: it only records what arrives
	bg_host rogue-udp socat -u UDP4-RECV:53,bind=$NET4.53 OPEN:"$T/rogue.bytes",creat,append
	bg_host rogue-tcp socat -u TCP4-LISTEN:53,bind=$NET4.53,fork,reuseaddr OPEN:"$T/rogue.bytes",creat,append
	bg_host dnsmasq dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root --group=root \
		--bind-interfaces --listen-address=$NET4.1 --listen-address=$NET6:1 \
		--log-queries --log-facility="$T/dnsmasq.log" \
		--host-record=allowed.test,$NET4.10,$NET6:10,600 \
		--host-record=blocked.test,$NET4.11,$NET6:11,600 \
		--host-record=short.test,$NET4.12,2 \
		--host-record=one.wild.test,$NET4.13,600 \
		--host-record=a.b.c.wild.test,$NET4.15,600 \
		--host-record=wild.test,$NET4.17,600 \
		--host-record=edge.cdn.test,$NET4.14,$NET6:14,600 \
		--cname=www.cname.test,mid.cname.test,edge.cdn.test,600 \
		--host-record=port.test,$NET4.16,600 \
		--host-record=ads.deny.test,$NET4.18,600 \
		--host-record=www.deny.test,$NET4.19,600 \
		--host-record=long.test,$NET4.20,7200 \
		--host-record=rebind.test,127.0.0.1,::1,600 \
		--host-record=meta.test,169.254.169.254,600 \
		--host-record=lan.test,10.1.2.3,fd00::3,600 \
		--host-record=mixed.test,$NET4.10,127.0.0.2,600 \
		$(for i in $(seq 100 139); do echo "--host-record=big.test,$NET4.$i,600"; done)
	echo "nameserver $NET4.1" >"$T/resolv.conf"
	# the container's init: the sentry lives as long as it does
	ip netns exec "$C" sleep 100000 3>&- &
	echo $! >"$T/init.pid"
	disown
	wait_for "dnsmasq up" ip netns exec "$C" "$DRIVER" resolve $NET4.1 allowed.test
	wait_for "web host up" can_connect $NET4.10 80
}

teardown() {
	[ -n "${C:-}" ] || return 0
	# everything we started lives in one of the two namespaces
	for ns in "$C" "$H"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -9 "$pid" 2>/dev/null || true
		done
	done
	for pidfile in "$T"/*.pid; do
		[ -f "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null || true
	done
	ip netns del "$C" 2>/dev/null || true
	ip netns del "$H" 2>/dev/null || true
	rm -rf "/etc/netns/$C"
	! ip netns list | grep -q -e "$C" -e "$H" || return 1    # a bare "! CMD" would not fail the test
}

# ---------------------------------------------------------------- helpers

bg_host() {
	local name=$1
	shift
	ip netns exec "$H" "$@" </dev/null >"$T/$name.out" 2>&1 3>&- &
	echo $! >"$T/$name.pid"
	disown   # teardown kills it; no job-control chatter
}

wait_for() {
	local what=$1 i
	shift
	for i in $(seq 50); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "timed out waiting for: $what" >&2
	return 1
}

# refute CMD...: fails when CMD succeeds (bash's set -e ignores a bare "! CMD")
refute() {
	if "$@"; then
		echo "unexpectedly succeeded: $*" >&2
		return 1
	fi
}

# log_has 'JQ CONDITION': some record of the deny log satisfies it
log_has() {
	jq -s -e "any(.[]; $1)" "$T/deny.log" >/dev/null || {
		echo "no deny log record with: $1" >&2
		cat "$T/deny.log" >&2
		return 1
	}
}

# host:port in socat's syntax
sockaddr() { case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac; }

# can_connect ADDR PORT: a TCP connection from the container gets "hello"
can_connect() {
	ip netns exec "$C" timeout 6 socat -T2 - "TCP:$(sockaddr "$1" "$2"),connect-timeout=2" </dev/null 2>/dev/null |
		grep -q hello
}

# resolve NAME [A|AAAA] [tcp]: asks the resolver from resolv.conf, as the container
resolve() {
	ip netns exec "$C" "$DRIVER" resolve $NET4.1 "$@"
}

# install_policy POLICY: the test hosts live in 198.18.0.0/15 ("benchmarking",
# special-purpose): answers may point there only because the policy says so
install_policy() {
	local policy=$1
	[[ "$policy" == *internal=* ]] || policy="$policy;internal=198.18.0.0/15,2001:db8::/32"
	echo "$policy" >"$T/policy"
	"$DRIVER" install "/run/netns/$C" "$policy"
}

# start_sentry [driver options]: the sentry for the installed policy; its pid in $T/sentry.pid
start_sentry() {
	local pid
	pid=$(${SENTRY_NETNS:+ip netns exec "$SENTRY_NETNS"} "$DRIVER" sentry "/run/netns/$C" "$(cat "$T/policy")" \
		"${RESOLV:-$T/resolv.conf}" "$T/deny.log" "$(cat "$T/init.pid")" "$@" 3>&-) ||
		{ cat "$T/deny.log.stderr" >&2; return 1; }
	echo "$pid" >"$T/sentry.pid"
}

# recorder ADDR NAME=IP...: a resolver in the hosts' netns that logs each query
# ("PROTO SRC SPORT ID NAME") to $T/recorder.log
recorder() {
	local addr=$1
	shift
	bg_host recorder python3 "$REPO_ROOT/tests/netfilter/recording_resolver.py" "$addr" "$T/recorder.log" "$@"
	wait_for "recorder up" grep -q ready "$T/recorder.out"
}

policy_and_sentry() {
	install_policy "$1"
	shift
	start_sentry "$@"
}

# helper_pids: the sentry's helpers (the netadmin one in the box's netns, the
# net one in ours)
helper_pids() { pgrep -P "$(cat "$T/sentry.pid")" | tr '\n' ' '; }

# helper_in NETNS_PID: the sentry's helper whose netns is that of NETNS_PID
helper_in() {
	local p
	for p in $(helper_pids); do
		if [ "$(readlink /proc/$p/ns/net)" = "$(readlink /proc/$1/ns/net)" ]; then echo "$p"; fi
	done
}

# ---------------------------------------------------------------- tests

@test "without a policy every test host answers (the baseline the other tests rely on)" {
	for a in $NET4.10 $NET6:10 $NET4.11 $NET6:11 $NET4.16 $NET4.18 $NET4.20 $NET4.53; do
		can_connect $a 80
	done
	can_connect $NET4.10 853
	run -0 resolve blocked.test
	[ "${lines[0]}" = NOERROR ]
}

@test "an allowed name resolves and connects over IPv4 and IPv6" {
	policy_and_sentry "allow=allowed.test"
	run -0 resolve allowed.test
	[ "${lines[0]}" = NOERROR ]
	[[ "${lines[1]}" == "$NET4.10 "* ]]
	run -0 resolve allowed.test AAAA
	[[ "${lines[1]}" == "$NET6:10 "* ]]
	can_connect $NET4.10 80
	can_connect $NET6:10 80
	# the way programs do it: glibc's resolver from resolv.conf, then connect by name
	mkdir -p "/etc/netns/$C"
	cp "$T/resolv.conf" "/etc/netns/$C/resolv.conf"
	run -0 ip netns exec "$C" timeout 6 socat -T2 - TCP4:allowed.test:80,connect-timeout=2 </dev/null
	[ "$output" = hello ]
	run -0 ip netns exec "$C" timeout 6 socat -T2 - TCP6:allowed.test:80,connect-timeout=2 </dev/null
	[ "$output" = hello ]
}

@test "a sentry started while lo is down still answers redirected queries from the resolver's address" {
	# kit run's slirp4netns brings lo up only after create: a listener bound on a
	# down lo answered from the client's own address, and glibc dropped that
	ip -n "$C" link set lo down
	policy_and_sentry "allow=allowed.test"
	ip -n "$C" link show lo | grep -q '[<,]UP[,>]'
	mkdir -p "/etc/netns/$C"
	cp "$T/resolv.conf" "/etc/netns/$C/resolv.conf"
	run -0 ip netns exec "$C" timeout 10 getent ahostsv4 allowed.test
	[[ "$output" == "$NET4.10 "* ]]
	# an IPv6 resolver lands on the ::1 listener, which needs lo up as well
	echo "nameserver $NET6:1" >"/etc/netns/$C/resolv.conf"
	run -0 ip netns exec "$C" timeout 10 getent hosts allowed.test
	[[ "$output" == "$NET6:10 "* ]]
}

@test "a name not allowed does not resolve and its address does not connect" {
	can_connect $NET4.11 80
	can_connect $NET6:11 80
	policy_and_sentry "allow=allowed.test"
	run -0 resolve blocked.test
	[ "${lines[0]}" = NXDOMAIN ]
	[ "${#lines[@]}" = 1 ]
	run -0 resolve blocked.test AAAA tcp
	[ "${lines[0]}" = NXDOMAIN ]
	refute can_connect $NET4.11 80
	refute can_connect $NET6:11 80
	# the refused name never reached the upstream
	refute grep -q "query.*blocked.test" "$T/dnsmasq.log"
}

@test "a direct IP that is not allowed does not connect" {
	can_connect $NET4.20 80
	can_connect $NET6:20 80
	policy_and_sentry "allow=allowed.test"
	refute can_connect $NET4.20 80
	refute can_connect $NET6:20 80
	refute can_connect $NET4.10 80   # not resolved yet: not allowed either
	resolve allowed.test >/dev/null
	can_connect $NET4.10 80
}

@test "name:port allows that port only" {
	can_connect $NET4.16 443
	run -0 ip netns exec "$C" "$DRIVER" hold $NET4.16 7 0
	[ "$output" = ok ]
	policy_and_sentry "allow=port.test:80"
	run -0 resolve port.test
	[ "${lines[0]}" = NOERROR ]
	can_connect $NET4.16 80
	refute can_connect $NET4.16 443
	run ip netns exec "$C" "$DRIVER" hold $NET4.16 7 0
	[ "$output" = "connect failed" ]
	run -0 ip netns exec "$C" nft list set inet agentbox dns_allow_v4_port
	[[ "$output" == *"$NET4.16 . tcp . 80"* ]]
	[[ "$output" == *"$NET4.16 . udp . 80"* ]]
}

@test "CIDR entries, with and without port, IPv4 and IPv6" {
	policy_and_sentry "allow=$NET4.8/29,[$NET6:16]:8443/tcp,$NET6:18/127"
	can_connect $NET4.10 80          # in 198.18.42.8/29
	can_connect $NET4.15 8443
	refute can_connect $NET4.16 80        # just outside
	can_connect $NET6:16 8443
	refute can_connect $NET6:16 80
	# TCP/443 is for TLS only: plain text there meets the SNI check (and is refused)
	run ip netns exec "$C" socat -T2 - TCP:$NET4.15:443,connect-timeout=2 <<<"plain text"
	[[ "$output" != *hello* ]]
	sleep 0.3
	log_has '.proto == "tls" and .dst == "198.18.42.15" and .port == 443 and .reason == "not-tls"'
	can_connect $NET6:18 80
	can_connect $NET6:19 80
	refute can_connect $NET6:20 80
	# no DNS needed for any of that, and a name still needs an entry
	run -0 resolve allowed.test
	[ "${lines[0]}" = NXDOMAIN ]
}

@test "deny beats allow: CIDR inside CIDR, name inside wildcard, port on an allowed name" {
	policy_and_sentry "allow=$NET4.0/24,*.deny.test,allowed.test;deny=$NET4.11,ads.deny.test,allowed.test:443"
	can_connect $NET4.10 80
	refute can_connect $NET4.11 80
	run -0 resolve www.deny.test
	[ "${lines[0]}" = NOERROR ]
	run -0 resolve ads.deny.test
	[ "${lines[0]}" = NXDOMAIN ]
	# a name's deny entry covers the addresses its answers carried
	run -0 resolve allowed.test AAAA
	[ "${lines[0]}" = NOERROR ]
	run -0 resolve allowed.test A
	can_connect $NET6:10 80
	refute can_connect $NET6:10 443
	can_connect $NET4.10 80
	refute can_connect $NET4.10 443
}

@test "a wildcard matches one or more labels, never the apex" {
	can_connect $NET4.17 80
	policy_and_sentry "allow=*.wild.test"
	run -0 resolve one.wild.test
	[ "${lines[0]}" = NOERROR ]
	run -0 resolve a.b.c.wild.test
	[ "${lines[0]}" = NOERROR ]
	[[ "${lines[1]}" == "$NET4.15 "* ]]
	run -0 resolve wild.test
	[ "${lines[0]}" = NXDOMAIN ]
	can_connect $NET4.13 80
	can_connect $NET4.15 80
	refute can_connect $NET4.17 80
}

@test "a CNAME chain to a target that is not listed follows the allowed name" {
	can_connect $NET4.14 80
	policy_and_sentry "allow=www.cname.test"
	run -0 resolve www.cname.test
	[ "${lines[0]}" = NOERROR ]
	[[ "$output" == *"$NET4.14 "* ]]
	can_connect $NET4.14 80
	run -0 resolve www.cname.test AAAA
	can_connect $NET6:14 80
	# asked for directly, the target is not allowed
	run -0 resolve edge.cdn.test
	[ "${lines[0]}" = NXDOMAIN ]
}

@test "a CNAME into a denied name is refused" {
	policy_and_sentry "allow=www.cname.test;deny=edge.cdn.test"
	run -0 resolve www.cname.test
	[ "${lines[0]}" = NXDOMAIN ]
	refute can_connect $NET4.14 80
	log_has '.proto == "dns" and .name == "edge.cdn.test" and .reason == "denied"'
}

@test "answers that point inside are withheld unless the policy opens that range; the log says which name pointed where" {
	policy_and_sentry "allow=rebind.test,meta.test,lan.test,mixed.test,allowed.test;internal=2001:db8::/32"
	run -0 resolve rebind.test
	[ "${lines[0]}" = NXDOMAIN ]
	run -0 resolve rebind.test AAAA
	[ "${lines[0]}" = NXDOMAIN ]
	run -0 resolve meta.test
	[ "${lines[0]}" = NXDOMAIN ]
	run -0 resolve lan.test AAAA
	[ "${lines[0]}" = NXDOMAIN ]
	# one address inside spoils the whole answer: the other is not opened either
	run -0 resolve mixed.test
	[ "${lines[0]}" = NXDOMAIN ]
	refute can_connect $NET4.10 80
	# the test hosts are "benchmarking" addresses: their v4 answers too, unless opened
	run -0 resolve allowed.test
	[ "${lines[0]}" = NXDOMAIN ]
	run -0 resolve allowed.test AAAA
	[ "${lines[0]}" = NOERROR ]
	can_connect $NET6:10 80
	sleep 0.3
	log_has '.proto == "dns" and .name == "rebind.test" and .dst == "127.0.0.1" and .reason == "internal-address"'
	log_has '.name == "rebind.test" and .dst == "::1"'
	log_has '.name == "meta.test" and .dst == "169.254.169.254"'
	log_has '.name == "lan.test" and .dst == "fd00::3"'
	log_has '.name == "mixed.test" and .dst == "127.0.0.2"'
	log_has '.name == "allowed.test" and .dst == "198.18.42.10"'
	# opened on purpose: an internal range, or a CIDR allow entry for every port
	"$DRIVER" remove "/run/netns/$C"
	kill "$(cat "$T/sentry.pid")"
	policy_and_sentry "allow=lan.test,10.1.2.0/24,rebind.test,allowed.test,198.18.42.10:80;internal=::1"
	run -0 resolve lan.test
	[ "${lines[0]}" = NOERROR ]
	[[ "${lines[1]}" == "10.1.2.3 "* ]]
	run -0 resolve rebind.test AAAA
	[ "${lines[0]}" = NOERROR ]
	run -0 resolve rebind.test
	[ "${lines[0]}" = NXDOMAIN ]
	run -0 resolve allowed.test
	[ "${lines[0]}" = NXDOMAIN ]
}

@test "an upstream behind a gateway is asked from the runtime's netns, out of the box's reach, with a random id and port per query" {
	# the resolver sits behind the hosts' router: the box reaches it through a
	# gateway, the sentry's runtime (its driver, run in the hosts' netns) directly
	ip -n "$H" addr add 198.18.43.53/32 dev lo
	ip -n "$C" route add 198.18.43.0/24 via $NET4.1
	recorder 198.18.43.53 allowed.test=$NET4.10 allowed.test=$NET6:10
	echo "nameserver 198.18.43.53" >"$T/up.conf"
	SENTRY_NETNS=$H RESOLV=$T/up.conf policy_and_sentry "allow=allowed.test"
	local i
	for i in 1 2 3 4 5; do
		run -0 resolve allowed.test
		[ "${lines[0]}" = NOERROR ]
		[[ "${lines[1]}" == "$NET4.10 "* ]]
	done
	run -0 resolve allowed.test AAAA tcp
	[[ "${lines[1]}" == "$NET6:10 "* ]]
	can_connect $NET4.10 80
	cat "$T/recorder.log"
	# from the runtime's side, never from the box's address
	[ "$(wc -l <"$T/recorder.log")" -ge 6 ]
	refute grep -q " $NET4.2 " "$T/recorder.log"
	# a new port and a new random id for each query
	[ "$(awk '{ print $3 }' "$T/recorder.log" | sort -u | wc -l)" -ge 5 ]
	[ "$(awk '{ print $4 }' "$T/recorder.log" | sort -u | wc -l)" -ge 5 ]
	# the box sees no socket talking to the resolver (198.18.43.53:53 in hex)
	run -0 ip netns exec "$C" awk '$3 == "352B12C6:0035"' /proc/net/udp /proc/net/tcp
	[ -z "$output" ]
}

# docker_resolver SERVER DNSMASQ-OPTION...: Docker's setup in the box's netns:
# a resolver on 127.0.0.11 at a port of its own, DNAT'd from port 53 (and its
# answers SNAT'd back), which serves the names of the network's containers
# (db.net.test) and forwards the rest, from the box's netns, to SERVER
docker_resolver() {
	local server=$1
	shift
	ip netns exec "$C" nft -f - <<-'EOF'
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
	ip netns exec "$C" dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root --group=root \
		--bind-interfaces --listen-address=127.0.0.11 --port=5353 --server="$server" "$@" \
		--log-queries --log-facility="$T/docker-dns.log" --host-record=db.net.test,$NET4.30,600 \
		</dev/null >/dev/null 2>&1 3>&- &
	echo $! >"$T/docker-dns.pid"
	disown   # teardown kills it; no job-control chatter
	echo "nameserver 127.0.0.11" >"$T/docker.conf"
}

@test "Docker's embedded resolver: outside names resolve through it once, its own names work, nothing loops" {
	docker_resolver $NET4.1
	echo "nameserver $NET4.1" >"$T/host.conf"
	SENTRY_NETNS=$H RESOLV=$T/docker.conf policy_and_sentry "allow=allowed.test,db.net.test" --host-resolv "$T/host.conf"
	wait_for "docker's resolver" ip netns exec "$C" "$DRIVER" resolve 127.0.0.11 db.net.test
	: >"$T/dnsmasq.log.mark"
	local before
	before=$(grep -c "query\[A\] allowed.test" "$T/dnsmasq.log" || true)
	run -0 resolve allowed.test
	[ "${lines[0]}" = NOERROR ]
	[[ "${lines[1]}" == "$NET4.10 "* ]]
	can_connect $NET4.10 80
	# the outside name went through Docker's resolver, and to the host's once
	grep -q "query\[A\] allowed.test from 127.0.0.1" "$T/docker-dns.log"
	[ "$(grep -c "query\[A\] allowed.test" "$T/dnsmasq.log")" = $((before + 1)) ]
	# a name Docker serves itself (another container): no forward at all
	run -0 resolve db.net.test
	[ "${lines[0]}" = NOERROR ]
	[[ "${lines[1]}" == "$NET4.30 "* ]]
	refute grep -q "db.net.test" "$T/dnsmasq.log"
	# refused names reach neither
	run -0 resolve blocked.test
	[ "${lines[0]}" = NXDOMAIN ]
	refute grep -q blocked.test "$T/docker-dns.log"
	# the box may not use Docker's resolver behind the sentry's back
	run ip netns exec "$C" "$DRIVER" resolve 127.0.0.11 db.net.test
	[ "${lines[0]}" = NOERROR ]   # redirected to the sentry, which asks it
	run ip netns exec "$C" sh -c 'printf x | timeout 3 socat -T1 - UDP4:127.0.0.11:5353'
	[[ "$output" == *"Operation not permitted"* ]]
}

@test "Docker's embedded resolver: a forward asks the server Docker chose of its own, from outside the box; one the box names is never asked; nothing loops" {
	# Docker's servers (its --dns): the hosts' dnsmasq first, then a split
	# resolver behind the hosts' router that alone knows split.test and
	# answers slowly (a question stays in flight meanwhile), then the box's
	# own address (--dns with the container's address)
	ip -n "$H" addr add 198.18.43.54/32 dev lo
	ip -n "$C" route add 198.18.43.0/24 via $NET4.1
	recorder 198.18.43.54 delay=1.5 split.test=$NET4.10
	printf 'nameserver %s\n' $NET4.1 198.18.43.54 $NET4.2 >"$T/forward.conf"
	# unprotected, the box's query to a server of its choice reaches it
	timeout 2 ip netns exec "$C" "$DRIVER" resolve $NET4.53 split.test A tcp || true
	[ -s "$T/rogue.bytes" ]
	: >"$T/rogue.bytes"
	# Docker's resolver as Docker forwards (from the box's netns, over the
	# protocol it was asked by): split.test to the split resolver, a name to
	# the box's own address, one to its own 127.0.0.11
	ip netns exec "$C" python3 "$REPO_ROOT/tests/netfilter/recording_resolver.py" 127.0.0.11 "$T/docker.log" \
		db.net.test=$NET4.30 forward=198.18.43.54 forward:own.split.test=$NET4.2 forward:lo.split.test=127.0.0.11 \
		</dev/null >"$T/docker-dns.out" 2>&1 3>&- &
	echo $! >"$T/docker-dns.pid"
	disown
	# (a python start-up on a loaded host may take longer than wait_for's 5 s)
	local i
	for i in $(seq 150); do
		grep -q ready "$T/docker-dns.out" && break
		sleep 0.1
	done
	grep -q ready "$T/docker-dns.out" || { cat "$T/docker-dns.out"; false; }
	echo "nameserver 127.0.0.11" >"$T/docker.conf"
	SENTRY_NETNS=$H RESOLV=$T/docker.conf policy_and_sentry "allow=*.split.test,split.test,db.net.test" \
		--forward-resolv "$T/forward.conf"
	# the name only the split resolver knows resolves: the sentry asked the
	# server the forward was addressed to, not the first of Docker's list
	ip netns exec "$C" "$DRIVER" resolve $NET4.1 split.test A >"$T/split.out" 2>&1 3>&- &
	local split=$!
	wait_for "the forward in flight" grep -q split.test "$T/recorder.log"
	# meanwhile the box asks the same question of a server of its choosing:
	# Docker's list is asked instead (its first, the hosts' dnsmasq, which
	# knows no such name), never the box's choice
	run ip netns exec "$C" "$DRIVER" resolve $NET4.53 split.test A tcp
	[ "${lines[0]}" = REFUSED ]
	grep -q "query\[A\] split.test" "$T/dnsmasq.log"
	[ ! -s "$T/rogue.bytes" ]
	wait $split
	[ "$(head -n 1 "$T/split.out")" = NOERROR ] || { cat "$T/split.out"; false; }
	[[ "$(sed -n 2p "$T/split.out")" == "$NET4.10 "* ]]
	can_connect $NET4.10 80
	# asked once, from the runtime's netns: never from the box's address
	cat "$T/recorder.log"
	[ "$(grep -c split.test "$T/recorder.log")" = 1 ]
	refute grep -q " $NET4.2 " "$T/recorder.log"
	# a forward to the box's own address would come back to the sentry: it
	# fails at once (a server failure, not a time-out)
	run ip netns exec "$C" "$DRIVER" resolve $NET4.1 own.split.test A
	[ "${lines[0]}" = SERVFAIL ]
	# one to 127.0.0.11, not in Docker's list, goes to that list, not back
	run ip netns exec "$C" "$DRIVER" resolve $NET4.1 lo.split.test A
	[ "${lines[0]}" = REFUSED ]
	[ "$(grep -c lo.split.test "$T/docker.log")" = 1 ]
	# and the sentry serves on
	run -0 resolve db.net.test
	[ "${lines[0]}" = NOERROR ]
}

@test "after a short TTL new connections fail while an open one survives" {
	# record TTL 2, clamped up to 4 s: margin for a loaded machine
	policy_and_sentry "allow=short.test" --ttl-min 4
	run -0 resolve short.test
	[[ "${lines[1]}" == "$NET4.12 ttl=2" ]]
	ip netns exec "$C" "$DRIVER" hold $NET4.12 7 8 >"$T/hold.out" 2>&1 3>&- &
	local hold=$!
	can_connect $NET4.12 80
	sleep 5.5
	refute can_connect $NET4.12 80
	wait $hold
	[ "$(cat "$T/hold.out")" = ok ]
	# a fresh answer brings the address back
	resolve short.test >/dev/null
	can_connect $NET4.12 80
}

@test "TTLs are clamped: short ones to 30 s in the set, long ones to 3600 s in the answer" {
	policy_and_sentry "allow=short.test,long.test"
	resolve short.test >/dev/null
	run -0 ip netns exec "$C" nft list set inet agentbox dns_allow_v4
	[[ "$output" == *"$NET4.12 timeout 30s"* ]]
	run -0 resolve long.test
	[ "${lines[1]}" = "$NET4.20 ttl=3600" ]
	run -0 ip netns exec "$C" nft list set inet agentbox dns_allow_v4
	[[ "$output" == *"$NET4.20 timeout 1h"* ]]
}

@test "a truncated UDP answer is fetched again over TCP, and every address gets its element" {
	policy_and_sentry "allow=big.test"
	# 40 A records do not fit the 512 bytes of a query without EDNS
	run -0 resolve big.test
	[ "${lines[0]}" = "NOERROR TC" ]
	run -0 ip netns exec "$C" nft list set inet agentbox dns_allow_v4
	for i in $(seq 100 139); do
		[[ "$output" == *"$NET4.$i "* ]] || { echo "missing $NET4.$i"; false; }
	done
	run -0 resolve big.test A tcp
	[ "${lines[0]}" = NOERROR ]
	[ "${#lines[@]}" = 41 ]
}

@test "a dynamic set holds a bounded number of live elements; a refresh takes no new place, an expired one frees its place" {
	# bound 40: short.test's one address, then big.test's 40 do not fit
	policy_and_sentry "allow=short.test,big.test" --ttl-min 3 --set-elems-max 40
	run -0 resolve short.test
	[ "${lines[0]}" = NOERROR ]
	run -0 resolve big.test A tcp
	[ "${lines[0]}" = SERVFAIL ]
	run -0 ip netns exec "$C" nft list set inet agentbox dns_allow_v4
	[ "$(grep -o "$NET4\.[0-9]*" <<<"$output" | sort -u | wc -l)" = 40 ]
	# the kernel holds no bound of its own (the helper keeps it): no size
	[[ "$output" != *"size "* ]]
	grep -q 'dns_allow_v4 is full (40 live elements)' "$T/deny.log.stderr"
	# a known address is refreshed at the bound
	run -0 resolve short.test
	[ "${lines[0]}" = NOERROR ]
	# once short.test's element expired (3 s), big.test's last address fits
	sleep 3.5
	run -0 resolve big.test A tcp
	[ "${lines[0]}" = NOERROR ]
	run -0 ip netns exec "$C" nft list set inet agentbox dns_allow_v4
	for i in $(seq 100 139); do
		[[ "$output" == *"$NET4.$i "* ]] || { echo "missing $NET4.$i"; false; }
	done
	[[ "$output" != *"$NET4.12 "* ]]
}

@test "DNS to another resolver goes to the sentry; DNS-over-TLS is dropped" {
	# without a policy the rogue resolver gets the query (no answer: it only records)
	run ip netns exec "$C" "$DRIVER" resolve $NET4.53 allowed.test
	wait_for "rogue got bytes" test -s "$T/rogue.bytes"
	: >"$T/rogue.bytes"
	# its address is even allowed: the port rules must hold on their own
	policy_and_sentry "allow=allowed.test,$NET4.53"
	run -0 ip netns exec "$C" "$DRIVER" resolve $NET4.53 allowed.test
	[ "${lines[0]}" = NOERROR ]
	run -0 ip netns exec "$C" "$DRIVER" resolve $NET4.53 blocked.test A tcp
	[ "${lines[0]}" = NXDOMAIN ]
	run -0 ip netns exec "$C" "$DRIVER" resolve $NET4.53 allowed.test A tcp
	[ "${lines[0]}" = NOERROR ]
	refute can_connect $NET4.53 853
	can_connect $NET4.53 80
	sleep 0.5
	[ ! -s "$T/rogue.bytes" ]
	log_has '.proto == "tcp" and .port == 853 and .reason == "dns-bypass"'
}

@test "a raw socket cannot bypass the policy" {
	ip netns exec "$C" busybox ping -c1 -W2 $NET4.20
	ip netns exec "$C" busybox ping -c1 -W2 $NET6:20
	policy_and_sentry "allow=$NET4.10"
	refute ip netns exec "$C" busybox ping -c1 -W2 $NET4.20
	refute ip netns exec "$C" busybox ping -c1 -W2 $NET6:20
	ip netns exec "$C" busybox ping -c1 -W2 $NET4.10
	log_has '.proto == "icmp" and .dst == "198.18.42.20"'
	log_has '.proto == "icmpv6" and .dst == "2001:db8:42::20"'
}

@test "killing the sentry fails closed" {
	policy_and_sentry "allow=short.test,allowed.test" --ttl-min 3
	resolve short.test >/dev/null
	can_connect $NET4.12 80
	local helper
	helper=$(helper_pids)
	kill -9 "$(cat "$T/sentry.pid")"
	[ "$(wc -w <<<"$helper")" = 2 ]
	wait_for "helpers gone" bash -c "! kill -0 $helper 2>/dev/null"
	# nobody answers DNS any more, and nothing reaches the real resolver
	run resolve allowed.test
	[ "$status" -ne 0 ]
	run resolve allowed.test A tcp
	[ "$status" -ne 0 ]
	sleep 3.5
	refute can_connect $NET4.12 80
	refute can_connect $NET4.10 80
}

@test "a flood cannot hide a new destination: each one recorded, repeats counted, what was left out said" {
	local np=$REPO_ROOT/tests/helper/netprobe
	[ -x "$np" ] || make -s -C "$REPO_ROOT" tests/helper/netprobe
	policy_and_sentry "allow=allowed.test"
	# 60,000 packets to one refused destination, 400 to as many ports of
	# another address (more than the ruleset's dedup sets hold), then the
	# attempt that matters
	ip netns exec "$C" "$np" flood-udp $NET4.20 9 60000
	ip netns exec "$C" "$np" scan-udp $NET4.18 20000 400
	refute can_connect $NET4.19 443
	# the attempt is in the log at once
	wait_for "the new destination record" jq -e -s 'any(.[]; .dst == "198.18.42.19" and .port == 443)' "$T/deny.log" || { cat "$T/deny.log"; ip netns exec "$C" nft list chain inet agentbox refused; false; }
	# the end: the sentry writes what is left, and says what it could not
	sleep 0.3
	kill "$(cat "$T/init.pid")"
	wait_for "the sentry's end" bash -c "! kill -0 $(cat "$T/sentry.pid") 2>/dev/null"
	# one first record of the flooded destination, its repeats counted
	jq -c . "$T/deny.log" | grep -c '"198.18.42.20"' >&2 || true
	[ "$(jq -s '[.[] | select(.dst == "198.18.42.20" and .port == 9 and (has("repeats") | not))] | length' "$T/deny.log")" = 1 ]
	local counted
	counted=$(jq -s '([.[] | select(.dst == "198.18.42.20" and .port == 9) | .repeats // 0] | add)
		+ ([.[] | select(.verdict == "summary") | (.uncounted_repeats // 0) + (.suppressed_repeats // 0)] | add // 0)' "$T/deny.log")
	echo "repeats counted: $counted" >&2
	[ "$counted" -ge 59999 ]
	# every port of the scan has a record, or is among those the summary says were left out
	local ports left
	ports=$(jq -s '[.[] | select(.dst == "198.18.42.18") | .port] | unique | length' "$T/deny.log")
	left=$(jq -s '[.[] | select(.verdict == "summary") | (.suppressed // 0) + (.lost // 0)] | add // 0' "$T/deny.log")
	echo "scan: $ports ports recorded, $left records left out" >&2
	[ $((ports + left)) -ge 400 ]
	# and the log stayed within its rate: far fewer lines than packets
	[ "$(wc -l <"$T/deny.log")" -lt 1000 ]
}

@test "denied attempts appear in the deny log" {
	policy_and_sentry "allow=allowed.test:80"
	resolve blocked.test >/dev/null
	resolve allowed.test >/dev/null
	refute can_connect $NET4.20 80
	refute can_connect $NET4.10 443
	sleep 0.3
	cat "$T/deny.log"
	log_has '.verdict == "deny" and .proto == "dns" and .name == "blocked.test" and .container == "test"'
	log_has '.proto == "tcp" and .dst == "198.18.42.20" and .port == 80 and (has("name") | not)'
	# the address came from an allowed lookup: the record names it
	log_has '.proto == "tcp" and .dst == "198.18.42.10" and .port == 443 and .name == "allowed.test"'
	log_has '.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")'
	# every line is one JSON object
	[ "$(jq -c . "$T/deny.log" | wc -l)" = "$(wc -l <"$T/deny.log")" ]
}

@test "log-only mode logs denied packets without serving DNS" {
	policy_and_sentry "allow=$NET4.10" --log-only
	refute can_connect $NET4.20 80
	run resolve allowed.test
	[ "$status" -ne 0 ]
	sleep 0.3
	log_has '.proto == "tcp" and .dst == "198.18.42.20"'
}

@test "the sentry exits with the container init (pidfd, and the /proc fallback)" {
	for mode in "" --no-pidfd; do
		ip netns exec "$C" sleep 100000 3>&- &
		local init=$!
		install_policy "allow=allowed.test"
		pid=$("$DRIVER" sentry "/run/netns/$C" "allow=allowed.test" "$T/resolv.conf" "$T/deny.log" $init $mode 3>&-)
		local helper
		helper=$(pgrep -P "$pid" | tr '\n' ' ')
		kill -0 "$pid"
		kill "$init"
		wait_for "sentry gone ($mode)" bash -c "! kill -0 $pid 2>/dev/null || grep -q '^State:.*Z' /proc/$pid/status"
		wait_for "helpers gone ($mode)" bash -c "for h in $helper; do ! kill -0 \$h 2>/dev/null || exit 1; done"
	done
}

@test "the sentry keeps no capability, its netadmin helper only CAP_NET_ADMIN, its net helper none, all in an empty root under 1 MiB" {
	policy_and_sentry "allow=allowed.test"
	resolve allowed.test >/dev/null
	local s h n
	s=$(cat "$T/sentry.pid")
	h=$(helper_in "$(cat "$T/init.pid")")
	n=$(helper_in $$)
	[ -n "$h" ] && [ -n "$n" ] && [ "$h" != "$n" ]
	grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/$s/status
	grep -q '^CapPrm:[[:space:]]*0000000000000000$' /proc/$s/status
	grep -q '^CapBnd:[[:space:]]*0000000000000000$' /proc/$s/status
	grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$s/status
	grep -q '^CapEff:[[:space:]]*0000000000001000$' /proc/$h/status   # bit 12: CAP_NET_ADMIN
	grep -q '^CapBnd:[[:space:]]*0000000000001000$' /proc/$h/status
	grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/$n/status
	grep -q '^CapBnd:[[:space:]]*0000000000000000$' /proc/$n/status
	grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$n/status
	[ -z "$(ls -A /proc/$s/root/)" ]
	[ -z "$(ls -A /proc/$h/root/)" ]
	[ -z "$(ls -A /proc/$n/root/)" ]
	resolve blocked.test >/dev/null
	resolve allowed.test AAAA tcp >/dev/null
	# what serving touched goes back after a second of quiet
	sleep 1.5
	for p in $s $h $n; do
		rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$p/status)
		echo "pid $p VmRSS $rss kB"
		[ "$rss" -lt 1024 ]
	done
	# a quiet helper waits without a page of libc's code resident (its idle
	# loop calls no libc function between giving pages back and sleeping);
	# looked at for a few seconds, in case a loaded host is slow to release
	local kb
	for p in $h $n; do
		for _ in $(seq 25); do
			kb=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { code = ($2 ~ /x/ && $6 ~ /\/libc\.so/) }
				code && /^Rss:/ { kb += $2 } END { print kb + 0 }' /proc/$p/smaps)
			[ "$kb" -eq 0 ] && break
			sleep 0.2
		done
		echo "pid $p: $kb kB of libc's code resident"
		[ "$kb" -eq 0 ]
	done
	# no file of the host stays open but the deny log
	run -0 ls -l /proc/$s/fd/
	refute grep -v -e socket: -e anon_inode -e /dev/null -e deny.log -e '^total' <<<"$output"
}

@test "a policy that allows no domain name and no TCP/443 runs no privileged helper, and still refuses and logs" {
	# (TCP/443 needs the helper: the SNI check's connections carry a mark)
	policy_and_sentry "allow=$NET4.10:80;deny=blocked.test"
	local s
	s=$(cat "$T/sentry.pid")
	# the sentry is ready when the driver returns: a helper would exist by now
	run pgrep -P "$s"
	[ "$status" -ne 0 ] || { echo "the sentry forked a helper: $output"; false; }
	run -0 resolve allowed.test
	[ "${lines[0]}" = NXDOMAIN ]
	refute can_connect $NET4.20 80
	can_connect $NET4.10 80
	sleep 0.3
	log_has '.proto == "dns" and .name == "allowed.test" and .verdict == "deny"'
	log_has '.proto == "tcp" and .dst == "198.18.42.20" and .port == 80'
	grep -q '^CapEff:[[:space:]]*0000000000000000$' /proc/$s/status
}

@test "a netlink socket opened before dropping capabilities cannot change the ruleset" {
	install_policy "allow=allowed.test"
	run -0 ip netns exec "$C" "$DRIVER" capcheck
	[ "$output" = "add element after dropping capabilities: Operation not permitted" ]
}

@test "install replaces the ruleset atomically, remove is idempotent" {
	install_policy "allow=$NET4.10"
	can_connect $NET4.10 80
	install_policy "allow=$NET4.20"
	refute can_connect $NET4.10 80
	can_connect $NET4.20 80
	[ "$(ip netns exec "$C" nft list tables)" = "table inet agentbox" ]
	"$DRIVER" remove "/run/netns/$C"
	"$DRIVER" remove "/run/netns/$C"
	[ -z "$(ip netns exec "$C" nft list tables)" ]
	can_connect $NET4.10 80
	# a batch the kernel refuses half way changes nothing, and the error names the object
	install_policy "allow=$NET4.10"
	before=$(ip netns exec "$C" nft list ruleset)
	run -0 ip netns exec "$C" "$DRIVER" badbatch
	[ "$output" = "add set bogus: Invalid argument" ]
	[ "$(ip netns exec "$C" nft list ruleset)" = "$before" ]
	can_connect $NET4.10 80
	"$DRIVER" remove "/run/netns/$C"
	# a bad entry is an error before anything is sent
	run -1 "$DRIVER" install "/run/netns/$C" "allow=foo:70000"
	[ "$output" = 'egress-driver: policy allow: entry "foo:70000": port 70000 out of range' ]
	[ -z "$(ip netns exec "$C" nft list tables)" ]
}
