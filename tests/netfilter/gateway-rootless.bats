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
	! jq -e 'select(.path == "/refused")' "$T/records.jsonl" >/dev/null || return 1    # a bare "! CMD" would not fail the test
	log_has '.proto == "tls" and .name == "other.test" and .dst == "198.19.100.10" and .port == 443 and .reason == "not-allowed"'
	# a second try is counted, not a second record
	run fetch other.test /refused-again
	[ "$output" = 000 ]
	[ "$(jq -s 'map(select(.proto == "tls" and .name == "other.test")) | length' "$T/deny.log")" = 1 ]
}

# gateway_driver WHERE PORT: the SNI proxy and the gateway (gateway-driver),
# run by `as_user` or `inside`, with a header credential for api.test
gateway_driver() {
	local where=$1 port=$2
	$where env AGENTBOX_GATEWAY="$GATEWAY" ABGW_SECRET="$ABGW_SECRET" "$GW_DRIVER" "$port" \
		"allow=api.test;deny=" "$T/log.jsonl" --ca-out "$T/boxca.pem" --upstream-ca "$T/certs/ca.pem" \
		--cred GITHUB_TOKEN api.test "Authorization: Bearer {}" ABGW_SECRET \
		</dev/null >"$T/driver.out" 2>"$T/driver.err" 3>&- &
	local i
	for i in $(seq 100); do
		grep -q ready "$T/driver.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$T/driver.out" || { cat "$T/driver.err" >&2; return 1; }
	GW_PID=$(awk '{print $2}' "$T/driver.out")
}

@test "rootless: the gateway a user starts holds nothing: a user namespace of its own, an empty root, not dumpable" {
	GW_DRIVER=$REPO_ROOT/tests/netfilter/gateway-driver GATEWAY=$REPO_ROOT/agentbox-gateway
	[ -x "$GW_DRIVER" ] || skip "build tests/netfilter/gateway-driver first"
	ABGW_SECRET="ghp_abgw$RANDOM$RANDOM"
	# started as the rootless runtime starts it: by the user, in the initial namespaces
	gateway_driver as_user 18443
	[ "$(stat -c %U "/proc/$GW_PID")" = "$USERNAME" ]
	grep -q '^CapEff:	0000000000000000' "/proc/$GW_PID/status"
	grep -q '^CapBnd:	0000000000000000' "/proc/$GW_PID/status"
	# its own user namespace (for the mount namespace of its empty root)
	[ "$(readlink "/proc/$GW_PID/ns/user")" != "$(readlink /proc/self/ns/user)" ]
	[ "$(ls "/proc/$GW_PID/root/" | wc -l)" -eq 0 ]
	# unprotected: a dumpable process of the user's is open to the user
	as_user env ABGW_VICTIM="$ABGW_SECRET" sleep 31 </dev/null >/dev/null 2>&1 3>&- &
	local victim="" i
	for i in $(seq 50); do
		victim=$(pgrep -u "$USERNAME" -f '^sleep 31$' || true)
		[ -n "$victim" ] && break
		sleep 0.05
	done
	run as_user cat "/proc/$victim/environ"
	kill "$victim"
	[[ "$output" == *"$ABGW_SECRET"* ]] || { echo "the user could not read its own process's environment" >&2; false; }
	# the gateway: not dumpable, so the user who started it reads nothing of it
	run as_user cat "/proc/$GW_PID/environ"
	[ "$status" -ne 0 ]
	run as_user cat "/proc/$GW_PID/mem"
	[ "$status" -ne 0 ]
}

@test "rootless: the SNI check hands a credential's host to a gateway without privileges, which puts the header in" {
	GW_DRIVER=$REPO_ROOT/tests/netfilter/gateway-driver GATEWAY=$REPO_ROOT/agentbox-gateway
	[ -x "$GW_DRIVER" ] || skip "build tests/netfilter/gateway-driver first"
	ABGW_SECRET="ghp_abgw$RANDOM$RANDOM"
	inside ip link set lo up
	inside ip addr add 198.19.100.10/32 dev lo
	inside python3 "$REPO_ROOT/tests/netfilter/https-echo.py" --bind 198.19.100.10 --cert "$T/certs/api.pem" \
		--key "$T/certs/api.key" --record "$T/records.jsonl" --name api --ready "$T/ready" \
		</dev/null >/dev/null 2>&1 3>&- &
	local i
	for i in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.05; done
	# everything in the user's namespaces: the proxy (its marked sockets need
	# CAP_NET_ADMIN there), the gateway it starts (root there, where nobody
	# is not mapped: a user namespace of its own, like a user's), the redirect
	gateway_driver inside 18443
	[ "$(readlink "/proc/$GW_PID/ns/user")" != "$(readlink "/proc/$HOLDER/ns/user")" ]
	grep -q '^CapEff:	0000000000000000' "/proc/$GW_PID/status"
	inside nft -f - <<EOF
table inet abgw {
	chain out {
		type nat hook output priority -100;
		meta mark != 0x0ab0d443 tcp dport 443 redirect to :18443
	}
}
EOF
	cat "$T/certs/ca.pem" "$T/boxca.pem" >"$T/bundle.pem"
	run inside curl -sS --max-time 10 --cacert "$T/bundle.pem" --resolve api.test:443:198.19.100.10 \
		-H "Authorization: Bearer placeholder" https://api.test/rootless
	[ "$status" -eq 0 ]
	[ "$(jq -r 'select(.path == "/rootless") | .headers.authorization[0]' "$T/records.jsonl")" = "Bearer $ABGW_SECRET" ]
	jq -se 'map(select(.verdict == "credential" and .name == "api.test" and .credential == "GITHUB_TOKEN")) | length == 1' \
		"$T/log.jsonl"
	! grep -q "$ABGW_SECRET" "$T/log.jsonl" || return 1    # a bare "! CMD" would not fail the test
}
