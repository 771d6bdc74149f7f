#!/bin/bash
# The README's main job: a sandboxed command from an example kit, with its egress
# policy shown working. It builds a tiny private "internet" first — a network
# namespace with two web servers on test addresses (198.18.0.0/15, never routed
# anywhere else) — runs kits/demo.yaml allowing only one of them, and removes
# everything it made.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
agentbox=$top/agentbox
[ "$(id -u)" = 0 ] || { echo "demo: run as root (namespaces, cgroups, nftables)" >&2; exit 1; }
[ -x "$agentbox" ] || { echo "demo: build first: make" >&2; exit 1; }

ns=abdemo-$$
veth=abdemo$$
work=$(mktemp -d /tmp/agentbox-demo.XXXXXX)
allowed=198.18.201.10 refused=198.18.201.11
# the demo leaves no netfilter hook anchor behind that was not there before
. "$top/scripts/host-pins.sh"

cleanup() {
	set +e
	[ -n "${servers:-}" ] && kill $servers 2>/dev/null
	ip route del 198.18.201.0/24 2>/dev/null
	ip link del "$veth" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
	host_pins_cleanup
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a private test network: $ns with web servers on $allowed and $refused"
ip netns add "$ns"
ip link add "$veth" type veth peer name eth0 netns "$ns"
ip addr add 198.18.200.1/30 dev "$veth"
ip link set "$veth" up
ip -n "$ns" addr add 198.18.200.2/30 dev eth0
ip -n "$ns" addr add "$allowed/32" dev lo
ip -n "$ns" addr add "$refused/32" dev lo
ip -n "$ns" link set lo up
ip -n "$ns" link set eth0 up
ip -n "$ns" route add default via 198.18.200.1
ip route add 198.18.201.0/24 via 198.18.200.2
for who in allowed refused; do
	mkdir -p "$work/$who"
	echo "hello from the $who server" >"$work/$who/index.html"
done
ip netns exec "$ns" busybox httpd -f -p "$allowed:8080" -h "$work/allowed" &
servers=$!
ip netns exec "$ns" busybox httpd -f -p "$refused:8080" -h "$work/refused" &
servers="$servers $!"
sleep 0.3
# the private internet's names: a resolver beside the servers, and a resolv.conf
# naming it that only the box's runtime sees (its own mount namespace below)
ip -n "$ns" addr add 198.18.201.53/32 dev lo
ip netns exec "$ns" dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground \
	--user=root --group=root --bind-interfaces --listen-address=198.18.201.53 --local=/test/ \
	--host-record=web.test,$allowed,60 --host-record=other.test,$refused,60 </dev/null >/dev/null 2>&1 &
servers="$servers $!"
echo "nameserver 198.18.201.53" >"$work/resolv.conf"
sleep 0.3
# a plain HTTP GET with bash alone, inside and outside the box
fetch() { exec 3<>"/dev/tcp/$1/8080" && printf 'GET / HTTP/1.0\r\nHost: %s\r\n\r\n' "$1" >&3 && tail -n 1 <&3; }
echo "without a sandbox, both answer:"
for ip in $allowed $refused; do
	printf '  %s: ' "$ip"
	timeout 5 bash -c "$(declare -f fetch); fetch $ip"
done

step "agentbox --egress-internal 198.18.201.0/24 kit run --allow web.test:8080 kits/demo.yaml"
cat "$top/kits/demo.yaml"
echo
# inside: web.test by name (allowed), other.test by name (its name is refused by
# the DNS sentry) and by address (the firewall drops it)
inside="$(declare -f fetch); refused=$refused"'
	echo "inside the box as $(id -un), on $(uname -n):"
	printf "  web.test resolves to: %s\n" "$(getent hosts web.test | cut -d" " -f1)"
	printf "  web.test:8080: "; timeout 5 bash -c "$(declare -f fetch); fetch web.test" || echo "FAILED"
	printf "  other.test resolves to: %s\n" "$(getent hosts other.test | cut -d" " -f1 || true)"
	printf "  other.test:8080: "; timeout 3 bash -c "$(declare -f fetch); fetch other.test" 2>/dev/null && echo "REACHED (should not)" || echo "blocked"
	printf "  %s:8080 (other.test by address): " "$refused"
	timeout 3 bash -c "$(declare -f fetch); fetch $refused" 2>/dev/null && echo "REACHED (should not)" || echo "blocked"
'
# the test addresses are special-purpose ones: a name answering with one opens
# nothing unless that range is named internal (agentbox-egress(7))
set +e
unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$work/resolv.conf" \
	"$agentbox" --egress-internal 198.18.201.0/24 kit run --allow web.test:8080 \
	"$top/kits/demo.yaml" -- bash -c "$inside"
rc=$?
set -e
step "done: the command exited with status $rc; the refused attempts are listed above"
exit $rc
