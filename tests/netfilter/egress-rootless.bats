#!/usr/bin/env bats
# The egress firewall for a runtime without privileges (issue 22 hole 7, the
# mechanism rootless mode uses): an unprivileged user owns a user namespace
# and the network namespace it made; from its own (the initial) user and
# network namespace it installs the ruleset there and runs the DNS sentry for
# it. Entering needs the user namespace first, and from there nothing could
# go back to the runtime's netns (EPERM): the work is done by children that
# never come back, and the sentry stays.
#
# Addresses: loopback only, inside the user's namespace. User: abnw-rl
# (made here, removed at the end).

bats_require_minimum_version 1.5.0

REPO_ROOT=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)
DRIVER=${EGRESS_DRIVER:-$REPO_ROOT/tests/netfilter/egress-driver}
USERNAME=abnw-rl

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (to make the test user)"
	[ -x "$DRIVER" ] || skip "build the driver first: make tests/netfilter/egress-driver"
	command -v python3 >/dev/null || skip "needs python3"
	[ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 1 ] ||
		skip "unprivileged user namespaces are off"
	if ! id "$USERNAME" >/dev/null 2>&1; then
		useradd --no-create-home --shell /bin/sh "$USERNAME"
		MADE_USER=1
	fi
	T=$(mktemp -d)
	chown "$USERNAME" "$T"
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

@test "rootless: an unprivileged user polices a network namespace its user namespace owns" {
	# the user holds no capability where it runs
	run -0 as_user grep '^CapEff' /proc/self/status
	[[ "$output" == *"0000000000000000" ]]
	# setns into its own netns straight away is refused: only from its user namespace
	run as_user nsenter -t "$HOLDER" -n true
	[ "$status" -ne 0 ]

	inside ip link set lo up
	inside ip addr add 127.0.0.2/8 dev lo
	inside python3 "$REPO_ROOT/tests/netfilter/recording_resolver.py" 127.0.0.2 "$T/rec.log" allowed.test=198.19.16.10 \
		</dev/null >"$T/rec.out" 2>&1 3>&- &
	local i
	for i in $(seq 50); do grep -q ready "$T/rec.out" && break; sleep 0.1; done
	echo "nameserver 127.0.0.2" >"$T/resolv.conf"
	local policy="allow=allowed.test;internal=198.19.16.0/20"

	# the ruleset, from the user's side
	run -0 as_user "$DRIVER" install "/proc/$HOLDER/ns/net" "$policy"
	run -0 inside nft list table inet agentbox
	[[ "$output" == *'comment "agentbox egress test"'* ]]
	# the sentry: the user's too
	run -0 as_user "$DRIVER" sentry "/proc/$HOLDER/ns/net" "$policy" "$T/resolv.conf" "$T/deny.log" "$HOLDER" 3>&-
	local sentry=$output
	[ "$(stat -c %U /proc/$sentry)" = "$USERNAME" ]
	run -0 inside "$DRIVER" resolve 127.0.0.1 allowed.test
	[ "${lines[0]}" = NOERROR ]
	[[ "${lines[1]}" == "198.19.16.10 "* ]]
	# the helper added the answer to the set
	run -0 inside nft list set inet agentbox dns_allow_v4
	[[ "$output" == *"198.19.16.10"* ]]
	run -0 inside "$DRIVER" resolve 127.0.0.1 blocked.test
	[ "${lines[0]}" = NXDOMAIN ]
	for i in $(seq 30); do grep -q blocked.test "$T/deny.log" 2>/dev/null && break; sleep 0.1; done
	grep -q '"name":"blocked.test","reason":"not-allowed"' "$T/deny.log"
	# the loopback resolver was asked over TCP only
	grep -q "^tcp .* allowed.test$" "$T/rec.log"
	! grep -q "^udp " "$T/rec.log" || return 1    # a bare "! CMD" would not fail the test
	# and away again
	run -0 as_user "$DRIVER" remove "/proc/$HOLDER/ns/net"
	run -0 inside nft list tables
	[ -z "$output" ]
}

@test "rootless: a namespace the user cannot enter is a clear error, not a crash" {
	# root's own network namespace: the user holds no capability there
	run as_user "$DRIVER" install /proc/1/ns/net "allow=allowed.test"
	[ "$status" -eq 1 ]
	[[ "$output" == "egress-driver: install egress ruleset: enter the container network namespace"* ]] ||
	[[ "$output" == "egress-driver: open /proc/1/ns/net: Permission denied" ]]
	[ "$(echo "$output" | wc -l)" = 1 ]
	run as_user "$DRIVER" install "/proc/self/ns/net" "allow=allowed.test"
	[ "$status" -eq 1 ]
	[[ "$output" == "egress-driver: install egress ruleset: enter the container network namespace"* ]]
}
