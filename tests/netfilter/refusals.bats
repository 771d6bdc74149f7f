#!/usr/bin/env bats
# Refusals an agent understands at once (issue 25): a refused name gets a
# final answer (NXDOMAIN) with an extended DNS error saying why, a refused
# connection fails at once (TCP reset, ICMP administratively prohibited), and
# the refused file lists what was refused, with the kit's reason.
#
#   netns abr-c<R> ("container")          netns abr-h<R> (test hosts)
#   eth0 198.18.41.2/24  <--- veth --->   veth0 198.18.41.1 (dnsmasq), .10-.12
#        2001:db8:41::2/64                      2001:db8:41::1, ::10-::12
#
# Only addresses of 198.18.41.0/24 and 2001:db8:41::/48, in namespaces this
# file creates. Needs root, dnsmasq, socat, jq, python3 and the driver
# (`make tests/netfilter/egress-driver`).

bats_require_minimum_version 1.5.0

REPO_ROOT=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
DRIVER=${EGRESS_DRIVER:-$REPO_ROOT/tests/netfilter/egress-driver}
ASK=$REPO_ROOT/tests/netfilter/dns_ask.py

NET4=198.18.41
NET6=2001:db8:41:

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$DRIVER" ] || skip "build the driver first: make tests/netfilter/egress-driver"
	for tool in dnsmasq socat jq python3 getent nft; do
		command -v $tool >/dev/null || skip "needs $tool"
	done
	R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	C=abr-c$R
	H=abr-h$R
	T=$BATS_TEST_TMPDIR
	ip netns add "$C"
	ip netns add "$H"
	ip -n "$C" link set lo up
	ip -n "$H" link set lo up
	ip link add eth0 netns "$C" type veth peer name veth0 netns "$H"
	ip -n "$C" addr add $NET4.2/24 dev eth0
	ip -n "$C" addr add $NET6:2/64 dev eth0 nodad
	ip -n "$H" addr add $NET4.1/24 dev veth0
	ip -n "$H" addr add $NET6:1/64 dev veth0 nodad
	for i in 10 11 12; do
		ip -n "$H" addr add $NET4.$i/24 dev veth0
		ip -n "$H" addr add $NET6:$i/64 dev veth0 nodad
	done
	ip -n "$C" link set eth0 up
	ip -n "$H" link set veth0 up
	# "hello" on TCP/80, an echo on UDP/7
	bg_host hello socat TCP6-LISTEN:80,fork,reuseaddr,ipv6only=0 SYSTEM:'echo hello'
	# bound to the host's address: a reply must come from the address asked
	bg_host udpecho python3 -c '
import select, socket
socks = []
for fam, addr in ((socket.AF_INET, "198.18.41.11"), (socket.AF_INET6, "2001:db8:41::11")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((addr, 7))
    socks.append(s)
while True:
    for s in select.select(socks, [], [])[0]:
        data, peer = s.recvfrom(2048)
        s.sendto(data, peer)'

	bg_host dnsmasq dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root --group=root \
		--bind-interfaces --listen-address=$NET4.1 --log-queries --log-facility="$T/dnsmasq.log" \
		--host-record=allowed.test,$NET4.10,$NET6:10,600 \
		--host-record=pypi.test,$NET4.11,$NET6:11,600 \
		--host-record=other.test,$NET4.12,$NET6:12,600 \
		--cname=www.cname.test,pypi.test
	echo "nameserver $NET4.1" >"$T/resolv.conf"
	ip netns exec "$C" sleep 100000 3>&- &
	echo $! >"$T/init.pid"
	disown
	wait_for "dnsmasq up" ip netns exec "$C" "$DRIVER" resolve $NET4.1 allowed.test
	wait_for "web host up" tcp_probe $NET4.11
	wait_for "udp echo up" udp_probe $NET4.11
}

teardown() {
	[ -n "${C:-}" ] || return 0
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

bg_host() {
	local name=$1
	shift
	ip netns exec "$H" "$@" </dev/null >"$T/$name.out" 2>&1 3>&- &
	echo $! >"$T/$name.pid"
	disown
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

# probe ARGS: what a socket in the container met, one word (python3 in the
# container's netns; the timeout only bounds a broken test)
probe() {
	ip netns exec "$C" python3 - "$@" <<'PY'
import errno, socket, sys
kind, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
try:
    if kind == "tcp":
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((addr, port))
        print("reply:" + s.recv(100).decode().strip())
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(10)
        s.connect((addr, port))
        try:
            s.send(b"ping")
        except OSError as e:
            # refused at the sender: and the ICMP error is the socket's next one
            try:
                s.recv(100)
                err = "none"
            except OSError as e2:
                err = errno.errorcode.get(e2.errno, str(e2.errno)) if e2.errno else "timeout"
            print(errno.errorcode.get(e.errno, str(e.errno)) + "," + err)
            sys.exit(0)
        print("reply:" + s.recv(100).decode())
except socket.timeout:
    print("timeout")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}

tcp_probe() { [ "$(probe tcp "$1" 80)" = reply:hello ]; }
udp_probe() { [ "$(probe udp "$1" 7)" = reply:ping ]; }

# the policy and its sentry; reasons from $T/reasons when there is one
policy_and_sentry() {
	local policy="$1;internal=198.18.0.0/15,2001:db8::/32"
	"$DRIVER" install "/run/netns/$C" "$policy"
	local pid
	pid=$("$DRIVER" sentry "/run/netns/$C" "$policy" "$T/resolv.conf" "$T/deny.log" "$(cat "$T/init.pid")" \
		${REASONS:+--reasons "$REASONS"} --refused "$T/refused" 3>&-) ||
		{ cat "$T/deny.log.stderr" >&2; return 1; }
	echo "$pid" >"$T/sentry.pid"
}

ask() { ip netns exec "$C" python3 "$ASK" "$@"; }

# ---------------------------------------------------------------- tests

@test "a refused name gets NXDOMAIN with an extended DNS error that says why, never an address" {
	run -0 ask $NET4.1 pypi.test edns
	[ "$(jq .answers <<<"$output")" = 1 ]
	local asked
	asked=$(grep -c "query\[.*\] pypi.test from" "$T/dnsmasq.log")
	[ "$asked" -ge 1 ]
	printf '%s\n' 'pypi.test=use the internal mirror' >"$T/reasons"
	REASONS=$T/reasons policy_and_sentry "allow=allowed.test,other.test,www.cname.test;deny=pypi.test"
	# denied by an entry with a reason: Blocked (15), the reason in the text
	for how in "" "AAAA" "tcp" "AAAA tcp"; do
		run -0 ask $NET4.1 pypi.test $how edns
		[ "$(jq -c '[.rcode, .answers, .ede[0].code]' <<<"$output")" = "[3,0,15]" ]
		[[ "$(jq -r '.ede[0].text' <<<"$output")" == *"pypi.test is denied: use the internal mirror"* ]]
	done
	# an allowed name whose CNAME leads into the denied one: Blocked, and says so
	run -0 ask $NET4.1 www.cname.test edns
	[ "$(jq -c '[.rcode, .answers, .ede[0].code]' <<<"$output")" = "[3,0,15]" ]
	[[ "$(jq -r '.ede[0].text' <<<"$output")" == *"www.cname.test leads to pypi.test, which is denied: use the internal mirror"* ]]
	# not on the allowlist: Prohibited (18)
	run -0 ask $NET4.1 unknown.test edns
	[ "$(jq -c '[.rcode, .answers, .ede[0].code]' <<<"$output")" = "[3,0,18]" ]
	[[ "$(jq -r '.ede[0].text' <<<"$output")" == *"unknown.test is not on the allowlist"* ]]
	# a name with bytes no host name has: refused too, and the text stays UTF-8
	run -0 ask $NET4.1 $'caf\xe9.test' edns
	[ "$(jq -c '[.rcode, .answers, .ede[0].code]' <<<"$output")" = "[3,0,18]" ]
	[[ "$(jq -r '.ede[0].text' <<<"$output")" == *"caf?.test is not on the allowlist"* ]]
	# a client without EDNS gets no OPT record (RFC 6891), the same final rcode
	run -0 ask $NET4.1 pypi.test
	[ "$(jq -c '[.rcode, .answers, .opt]' <<<"$output")" = "[3,0,false]" ]
	# the refused names never reached the upstream (only the CNAME's owner did)
	[ "$(grep -c "query\[.*\] pypi.test from" "$T/dnsmasq.log")" = "$asked" ]
	# an allowed name still resolves
	run -0 ask $NET4.1 allowed.test edns
	[ "$(jq -c '[.rcode, .answers]' <<<"$output")" = "[0,1]" ]
}

@test "glibc's getaddrinfo takes a refused name as final: EAI_NONAME, one query, no retries" {
	mkdir -p "/etc/netns/$C"
	printf 'nameserver %s\nsearch corp.test\noptions attempts:3 edns0\n' $NET4.1 >"/etc/netns/$C/resolv.conf"
	policy_and_sentry "allow=allowed.test;deny=pypi.test"
	run -0 ip netns exec "$C" python3 -c '
import socket
try:
    socket.getaddrinfo("pypi.test", 443)
    print("resolved")
except socket.gaierror as e:
    print({socket.EAI_NONAME: "EAI_NONAME", socket.EAI_AGAIN: "EAI_AGAIN"}.get(e.errno, e.errno))'
	[ "$output" = EAI_NONAME ]
	run -2 ip netns exec "$C" getent hosts pypi.test
	# asked once per lookup and record type (A, AAAA): REFUSED made glibc ask
	# again for every attempt; the search suffix is a name of its own
	# the container's end: the sentry writes the repeats it counted, and exits
	kill -9 "$(cat "$T/init.pid")"
	wait_for "sentry gone" bash -c "! kill -0 $(cat "$T/sentry.pid")"
	cat "$T/deny.log" >&2
	run -0 jq -s '[.[] | select(.name == "pypi.test") | 1 + (.repeats // 0)] | add' "$T/deny.log"
	# two lookups (python, getent), A and AAAA each: 4, and a resend or two
	# (glibc asks again when two answers cross); REFUSED made it 12: 3 attempts each
	echo "queries for pypi.test: $output" >&2
	[ "$output" -le 8 ]
	jq -s -e 'any(.[]; .name == "pypi.test.corp.test")' "$T/deny.log"
}

@test "a refused TCP connection is reset at once, IPv4 and IPv6" {
	# the host answers without the policy: the rule is what refuses it
	[ "$(probe tcp $NET4.11 80)" = reply:hello ]
	[ "$(probe tcp $NET6:11 80)" = reply:hello ]
	policy_and_sentry "allow=allowed.test;deny=$NET6:11"
	[ "$(probe tcp $NET4.11 80)" = ECONNREFUSED ]
	[ "$(probe tcp $NET6:11 80)" = ECONNREFUSED ]
	# still in the deny log, with the reason
	sleep 0.3
	jq -s -e 'any(.[]; .dst == "198.18.41.11" and .port == 80 and .reason == "not-allowed")' "$T/deny.log"
	jq -s -e 'any(.[]; .dst == "2001:db8:41::11" and .reason == "denied")' "$T/deny.log"
}

@test "a refused UDP datagram gets an ICMP administratively-prohibited error, not silence" {
	[ "$(probe udp $NET4.11 7)" = reply:ping ]
	[ "$(probe udp $NET6:11 7)" = reply:ping ]
	policy_and_sentry "allow=allowed.test"
	# the send fails at once (EPERM), and the ICMP "communication
	# administratively prohibited" is the socket's next error: EHOSTUNREACH,
	# ICMPv6's EACCES
	[ "$(probe udp $NET4.11 7)" = EPERM,EHOSTUNREACH ]
	[ "$(probe udp $NET6:11 7)" = EPERM,EACCES ]
}

@test "an ICMP error never goes to a forged source outside the box" {
	# the hosts' side counts ICMPv6 errors toward the forged source
	ip netns exec "$H" nft -f - <<-EOF
		table inet abr {
			counter errors { }
			chain input {
				type filter hook input priority 0;
				ip6 daddr $NET6:12 icmpv6 type destination-unreachable counter name errors
			}
		}
	EOF
	# the forged source is even an allowed destination: only chain refused_answer's
	# first rule keeps the error from going there
	local policy="allow=allowed.test,$NET6:12"
	policy_and_sentry "$policy"
	# unprotected: without that rule, a datagram from a socket bound with
	# IPV6_FREEBIND to the hosts' address makes an error that reaches them
	local handle
	handle=$(ip netns exec "$C" nft -a list chain inet agentbox refused_answer | awk '/meta mark 0x0ab0e003 drop/ { print $NF }')
	[ -n "$handle" ]
	ip netns exec "$C" nft delete rule inet agentbox refused_answer handle "$handle"
	forge() {
		ip netns exec "$C" python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.setsockopt(socket.IPPROTO_IPV6, 78, 1)
s.bind(("2001:db8:41::12", 0))
try:
    s.sendto(b"x", ("2001:db8:41::11", 7)); print("sent")
except OSError as e: print(e.errno)'
	}
	[ "$(forge)" = 1 ]   # EPERM: refused all the same
	wait_for "the error reached the hosts" bash -c \
		"ip netns exec $H nft list counter inet abr errors | grep -qv 'packets 0 '"
	# the ruleset as installed: the forged source gets nothing
	"$DRIVER" install "/run/netns/$C" "$policy;internal=198.18.0.0/15,2001:db8::/32"
	local before
	before=$(ip netns exec "$H" nft list counter inet abr errors | grep -o 'packets [0-9]*')
	[ "$(forge)" = 1 ]
	# while the box's own address gets its error (which the counter would see)
	[ "$(probe udp $NET6:11 7)" = EPERM,EACCES ]
	sleep 0.3
	jq -s -e 'any(.[]; .reason == "spoofed-source")' "$T/deny.log"
	[ "$(ip netns exec "$H" nft list counter inet abr errors | grep -o 'packets [0-9]*')" = "$before" ]
}

@test "the refused file lists each refusal once, with the kit's reason and a sentence to show" {
	printf '%s\n' 'pypi.test=use the internal mirror' "$NET4.12:80/tcp=the test host is off limits" >"$T/reasons"
	REASONS=$T/reasons policy_and_sentry "allow=allowed.test;deny=pypi.test,$NET4.12:80/tcp"
	ask $NET4.1 pypi.test >/dev/null
	ask $NET4.1 pypi.test >/dev/null
	ask $NET4.1 unknown.test >/dev/null
	ask $NET4.1 $'caf\xe9.test' >/dev/null
	[ "$(probe tcp $NET4.12 80)" = ECONNREFUSED ]
	sleep 0.3
	cat "$T/refused" >&2
	run -0 jq -s -c '[.[] | select(.name == "pypi.test")] | length' "$T/refused"
	[ "$output" = 1 ]
	jq -e -s 'any(.[]; .proto == "dns" and .name == "pypi.test" and .reason == "denied" and .note == "use the internal mirror" and (.message | test("pypi.test is denied: use the internal mirror")) and (.time | length > 0))' "$T/refused"
	jq -e -s 'any(.[]; .name == "unknown.test" and .reason == "not-allowed")' "$T/refused"
	# valid UTF-8 JSON whatever the box asked (jq reads it all)
	jq -e -s 'any(.[]; .name == "caf?.test")' "$T/refused"
	iconv -f UTF-8 -t UTF-8 "$T/refused" >/dev/null
	jq -e -s 'any(.[]; .proto == "tcp" and .dst == "198.18.41.12" and .port == 80 and .note == "the test host is off limits")' "$T/refused"
}

@test "reasons name deny entries only: any other line is refused with one clear error" {
	printf '%s\n' 'allowed.test=not a deny entry' >"$T/reasons"
	run -1 "$DRIVER" sentry "/run/netns/$C" "allow=allowed.test" "$T/resolv.conf" "$T/deny.log" 1 --reasons "$T/reasons"
	[[ "$output" == *'entry "allowed.test" is not a deny entry of the policy'* ]]
	printf 'pypi.test=a\tb\n' >"$T/reasons"
	run -1 "$DRIVER" sentry "/run/netns/$C" "deny=pypi.test" "$T/resolv.conf" "$T/deny.log" 1 --reasons "$T/reasons"
	[[ "$output" == *"without control characters"* ]]
}
