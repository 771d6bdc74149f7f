#!/usr/bin/env bats
# The SNI check for a runtime without privileges (issue 26 item 3, rootless):
# as in egress-rootless.bats, an unprivileged user owns a user namespace and
# the network namespace it made, installs the ruleset there and runs the
# sentry for it from its own (the initial) namespaces. The sentry's SNI
# listeners, the TCP/443 redirect, SO_ORIGINAL_DST and the netadmin helper's
# marked upstream sockets must all work with capabilities held only in that
# user namespace.
#
# Addresses: 198.19.100.10 on the user's own lo (from 198.19.96.0/20), an
# HTTPS test host there that answers for any name (its certificate names
# api.test and other.test). User: abgw-rl (made here, removed at the end).

bats_require_minimum_version 1.5.0

REPO_ROOT=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
DRIVER=${EGRESS_DRIVER:-$REPO_ROOT/tests/netfilter/egress-driver}
USERNAME=abgw-rl

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (to make the test user)"
	[ -x "$DRIVER" ] || skip "build the driver first: make tests/netfilter/egress-driver"
	for t in python3 openssl curl; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	[ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 1 ] ||
		skip "unprivileged user namespaces are off"
	if ! id "$USERNAME" >/dev/null 2>&1; then
		useradd --no-create-home --shell /bin/sh "$USERNAME"
		MADE_USER=1
	fi
	T=$(mktemp -d)
	chmod 0755 "$T"
	# the test CA and host certificates (gateway-net.bash)
	. "$REPO_ROOT/tests/netfilter/gateway-net.bash"
	gw_certs "$T/certs"
	chown -R "$USERNAME" "$T"
	# the user's namespaces, held by a process of its own
	runuser -u "$USERNAME" -- unshare --user --map-root-user --net sleep 100000 </dev/null >/dev/null 2>&1 3>&- &
	HOLD=$!
	local i
	for i in $(seq 50); do
		HOLDER=$(pgrep -u "$USERNAME" -x sleep | head -1)
		[ -n "$HOLDER" ] && [ "$(readlink /proc/$HOLDER/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	[ -n "$HOLDER" ]
}

teardown() {
	[ -n "${T:-}" ] || return 0
	local p
	for p in $(pgrep -u "$USERNAME" || true); do
		kill -9 "$p" 2>/dev/null || true
	done
	[ -z "${HOLD:-}" ] || wait "$HOLD" 2>/dev/null || true
	rm -rf "$T"
	if [ -n "${MADE_USER:-}" ]; then
		local i
		for i in $(seq 20); do
			userdel "$USERNAME" 2>/dev/null && break
			sleep 0.1
		done
	fi
}

# as_user CMD...: CMD as the unprivileged user, in the initial namespaces
as_user() { runuser -u "$USERNAME" -- "$@"; }

# inside CMD...: CMD as the user, root in its own user and network namespace
inside() { runuser -u "$USERNAME" -- nsenter -t "$HOLDER" -U -n --preserve-credentials "$@"; }

# fetch NAME PATH: HTTPS to the test host as NAME, the code curl got
fetch() {
	inside curl -sS --max-time 10 --cacert "$T/certs/ca.pem" --resolve "$1:443:198.19.100.10" \
		-o /dev/null -w '%{http_code}' "https://$1$2" 2>/dev/null
}

log_has() {
	local i
	for i in $(seq 30); do
		jq -se "map(select($1)) | length > 0" "$T/deny.log" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

@test "rootless: the SNI check runs in the user's namespaces and refuses a name not allowed" {
	inside ip link set lo up
	inside ip addr add 198.19.100.10/32 dev lo
	# the host answers for any name it is asked for (one server, many names)
	inside python3 "$REPO_ROOT/tests/netfilter/https-echo.py" --bind 198.19.100.10 --cert "$T/certs/other.pem" \
		--key "$T/certs/other.key" --record "$T/records.jsonl" --name other --ready "$T/ready" \
		</dev/null >/dev/null 2>&1 3>&- &
	local i
	for i in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.05; done
	[ -e "$T/ready" ]
	# unprotected (no ruleset): the address answers for other.test too
	run -0 fetch other.test /unprotected
	[ "$output" = 200 ] || { echo "the test host did not answer for other.test" >&2; false; }

	echo "nameserver 127.0.0.2" >"$T/resolv.conf"
	local policy="allow=api.test:443/tcp,198.19.100.10:443/tcp"
	run -0 as_user "$DRIVER" install "/proc/$HOLDER/ns/net" "$policy"
	# the redirect to the SNI check is there, in the user's namespace
	run -0 inside nft list chain inet agentbox dns
	[[ "$output" == *"redirect to :61443"* ]]
	run -0 as_user "$DRIVER" sentry "/proc/$HOLDER/ns/net" "$policy" "$T/resolv.conf" "$T/deny.log" "$HOLDER" 3>&-
	local sentry=$output
	[ "$(stat -c %U /proc/$sentry)" = "$USERNAME" ]
	# the sentry holds no capability; its netadmin helper (the marked
	# sockets) CAP_NET_ADMIN only, in the user's own user namespace
	grep -q '^CapEff:.*0000000000000000$' "/proc/$sentry/status"
	local p
	for p in $(pgrep -P "$sentry"); do
		[ "$(stat -c %U /proc/$p)" = "$USERNAME" ]
		grep -Eq '^CapEff:.*(0000000000000000|0000000000001000)$' "/proc/$p/status"
		[ "$(readlink /proc/$p/ns/user)" = "$(readlink /proc/$HOLDER/ns/user)" ] ||
			grep -q '^CapEff:.*0000000000000000$' "/proc/$p/status"
	done

	# an allowed name goes through (the helper's marked socket, the filter)
	run -0 fetch api.test /allowed
	[ "$output" = 200 ]
	jq -e 'select(.path == "/allowed")' "$T/records.jsonl" >/dev/null
	# the same address asked for another name: refused, logged by name
	run fetch other.test /refused
	[ "$output" = 000 ]
	! jq -e 'select(.path == "/refused")' "$T/records.jsonl" >/dev/null
	log_has '.proto == "tls" and .name == "other.test" and .dst == "198.19.100.10" and .port == 443 and .reason == "not-allowed"'
	# a second try is counted, not a second record
	run fetch other.test /refused-again
	[ "$output" = 000 ]
	[ "$(jq -s 'map(select(.proto == "tls" and .name == "other.test")) | length' "$T/deny.log")" = 1 ]
}
