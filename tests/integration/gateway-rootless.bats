#!/usr/bin/env bats
# Header credentials in a rootless container (issue 26, rootless mode): the
# runtime run by an unprivileged user starts the box's credential gateway
# (as that user, in a user namespace of its own, with an empty root), puts
# its CA into the box's trust store, and the box's sentry, in the user's
# namespaces, hands the credential host's connection to it. The server gets
# the header; the box, the state and the log never hold the secret.
#
# setup_file makes the user abgw-rs$$ with a subuid/subgid range of its own
# and teardown_file removes it. Network: a namespace abgw-rn$$ with an HTTPS
# test host on 198.19.101.10 (its lo), wired to the container by a veth
# (198.19.101.2/24 in the box). Names abgw*, addresses from 198.19.96.0/20.

load helpers

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v useradd >/dev/null || return 0
	export GR_USER=abgw-rs$$
	export GR_SUBID=$((2110000000 + ($$ % 100) * 65536))
	useradd -m -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 -s /bin/sh "$GR_USER" >&2 || { GR_USER=; return 0; }
	usermod --add-subuids "$GR_SUBID-$((GR_SUBID + 65535))" --add-subgids "$GR_SUBID-$((GR_SUBID + 65535))" \
		"$GR_USER" >&2
	export GR_UID GR_HOME GR_BIN
	GR_UID=$(id -u "$GR_USER")
	GR_HOME=$(getent passwd "$GR_USER" | cut -d: -f6)
	# copies the user may run, the gateway beside the runtime (where it looks)
	GR_BIN=$(mktemp -d /tmp/abgw-rsb.XXXXXX)
	chmod 755 "$GR_BIN"
	cp "$RUNTIME" "$GR_BIN/agentbox"
	cp "${AGENTBOX_GATEWAY:-$REPO_ROOT/agentbox-gateway}" "$GR_BIN/agentbox-gateway" 2>/dev/null || true
	chmod 755 "$GR_BIN"/*
	export GR_XDG=/run/user/$GR_UID GR_MADE_RUN_USER=
	[ -d /run/user ] || GR_MADE_RUN_USER=1
	mkdir -p "$GR_XDG"
	chown "$GR_USER:" "$GR_XDG"
	chmod 700 "$GR_XDG"
}

teardown_file() {
	[ -n "${GR_USER:-}" ] || return 0
	local pids
	pids=$(ps -o pid= -u "$GR_USER" 2>/dev/null || true)
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	userdel -r "$GR_USER" 2>/dev/null || userdel -r -f "$GR_USER" 2>/dev/null || true
	rm -rf "$GR_XDG" "$GR_BIN"
	[ -z "$GR_MADE_RUN_USER" ] || rmdir /run/user 2>/dev/null || true
}

setup() {
	requires root userns agentbox
	[ -n "${GR_USER:-}" ] || skip "no test user (needs root and useradd)"
	[ -x "$GR_BIN/agentbox-gateway" ] || skip "build agentbox-gateway first (make all)"
	for t in openssl curl python3 jq; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	setup_bundle
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	rm -f "$BUNDLE/config.json"
	chown -R "$GR_USER:" "$BUNDLE"
	as_user sh -c "cd '$BUNDLE' && '$GR_BIN/agentbox' spec --rootless" || fail "spec --rootless as $GR_USER"
	# curl and a CA bundle from the host
	ln -s usr/lib "$BUNDLE/rootfs/lib"
	ln -s usr/lib64 "$BUNDLE/rootfs/lib64"
	mkdir -p "$BUNDLE/rootfs/usr" "$BUNDLE/rootfs/etc/ssl"
	update_config '.process.terminal = false'
	add_mount /usr bind /usr rbind ro
	add_mount /etc/ssl bind /etc/ssl rbind ro
	chown -R "$GR_USER:" "$BUNDLE"
	ROOT=$TEST_DIR/grstate
	mkdir -p "$ROOT"
	chown "$GR_USER:" "$ROOT"
	# the test host: a certificate from a test CA the gateway is told to trust
	BATS_TEST_DIRNAME=$REPO_ROOT/tests/netfilter . "$REPO_ROOT/tests/netfilter/gateway-net.bash"
	gw_certs "$TEST_DIR/certs"
	chmod -R a+rX "$TEST_DIR/certs"
	GR_NET=abgw-rn$$-${TEST_DIR##*.}
	ip netns add "$GR_NET"
	defer ip netns delete "$GR_NET"
	ip -n "$GR_NET" link set lo up
	ip -n "$GR_NET" addr add 198.19.101.10/32 dev lo
	ip netns exec "$GR_NET" python3 "$REPO_ROOT/tests/netfilter/https-echo.py" --bind 198.19.101.10 \
		--cert "$TEST_DIR/certs/api.pem" --key "$TEST_DIR/certs/api.key" --record "$TEST_DIR/records.jsonl" \
		--name api --ready "$TEST_DIR/ready" </dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	local i
	for i in $(seq 100); do [ -e "$TEST_DIR/ready" ] && break; sleep 0.05; done
	GR_SECRET="ghp_abgw$RANDOM$RANDOM$RANDOM"
	printf '%s\n' "$GR_SECRET" >"$TEST_DIR/github.secret"
	chmod 0600 "$TEST_DIR/github.secret"
	chown "$GR_USER:" "$TEST_DIR/github.secret"
	cat >"$TEST_DIR/agent.yaml" <<EOC
credentials:
  - name: GITHUB_TOKEN
    from: file:$TEST_DIR/github.secret
    to: header
    hosts: [api.test]
    header: "Authorization: Bearer {}"
    env: GITHUB_TOKEN
gateway:
  upstream_ca: $TEST_DIR/certs/ca.pem
EOC
	chmod a+r "$TEST_DIR/agent.yaml"
}

teardown() {
	local id
	for id in $(ls -1 "${ROOT:-/nonexistent}" 2>/dev/null | grep -v '^\.'); do
		as_user "$GR_BIN/agentbox" --root "$ROOT" delete --force "$id" >/dev/null 2>&1 || true
	done
	teardown_bundle
}

as_user() {
	runuser -u "$GR_USER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$GR_HOME" USER="$GR_USER" \
		XDG_RUNTIME_DIR="$GR_XDG" "$@"
}

# gr ARGS...: the runtime as the user, with the credential and the policy
gr() {
	(cd "$BUNDLE" && timeout -k 5 60 runuser -u "$GR_USER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$GR_HOME" USER="$GR_USER" XDG_RUNTIME_DIR="$GR_XDG" "$GR_BIN/agentbox" --root "$ROOT" \
		--config "$TEST_DIR/agent.yaml" --credentials GITHUB_TOKEN --egress-allow api.test,198.19.101.10 "$@" \
		3>&- </dev/null)
}

@test "rootless: a header credential reaches the server through a gateway the user started; the box never holds it" {
	set_args sh -c 'echo "var=$GITHUB_TOKEN"; /usr/bin/curl -sS --max-time 20 --resolve api.test:443:198.19.101.10 -H "Authorization: Bearer fake" https://api.test/rootless -o /dev/null -w "rootless %{http_code}\n"; grep -rl "$0" /etc /proc/[0-9]*/environ 2>/dev/null; echo searched' "$GR_SECRET"
	chown "$GR_USER:" "$BUNDLE/config.json"
	# the program's output goes where create's did
	gr create gr1 >"$TEST_DIR/ct.out" 2>"$TEST_DIR/ct.err" || fail "create: $(cat "$TEST_DIR/ct.err")"
	local pid gp sp
	pid=$(jq -r .pid "$ROOT/gr1/state.json")
	gp=$(jq -r .gatewayPid "$ROOT/gr1/state.json")
	sp=$(jq -r .sentryPid "$ROOT/gr1/state.json")
	# the gateway: the user's, in a user namespace of its own, no capability
	[ "$gp" -gt 0 ] && [ "$(stat -c %U "/proc/$gp")" = "$GR_USER" ]
	[ "$(readlink "/proc/$gp/ns/user")" != "$(readlink /proc/self/ns/user)" ]
	[ "$(readlink "/proc/$gp/ns/user")" != "$(readlink "/proc/$pid/ns/user")" ]
	grep -q '^CapEff:	0000000000000000' "/proc/$gp/status"
	[ "$(ls "/proc/$gp/root/" | wc -l)" -eq 0 ]
	# the box's network
	local veth=abgw${$}r
	ip link add "$veth" netns "$GR_NET" type veth peer name "${veth}c" netns "/proc/$pid/ns/net"
	ip -n "$GR_NET" link set "$veth" up
	ip -n "$GR_NET" route replace 198.19.101.2/32 dev "$veth"
	nsenter -t "$pid" -n ip addr add 198.19.101.2/24 dev "${veth}c"
	nsenter -t "$pid" -n ip link set "${veth}c" up
	run gr start gr1
	[ "$status" -eq 0 ] || fail "start: $output"
	local i
	for i in $(seq 500); do
		[ "$(jq -r .status <<<"$(as_user "$GR_BIN/agentbox" --root "$ROOT" state gr1)")" = stopped ] && break
		sleep 0.02
	done
	wait_gone "$sp"
	local out
	out=$(cat "$TEST_DIR/ct.out")
	[[ "$out" == *"var=agentbox-credential-placeholder-GITHUB_TOKEN"* ]] || fail "$out"
	[[ "$out" == *"rootless 200"* ]] || fail "$out"
	# the search for the secret in the box's files and environments found nothing
	[ "$(sed -n '/rootless 200/,/searched/p' <<<"$out" | wc -l)" = 2 ] || fail "$out"
	[ "$(jq -r 'select(.path == "/rootless") | .headers.authorization[0]' "$TEST_DIR/records.jsonl")" = "Bearer $GR_SECRET" ]
	jq -se 'map(select(.verdict == "credential" and .name == "api.test" and .credential == "GITHUB_TOKEN")) | length == 1' \
		"$ROOT/gr1/egress.log"
	! grep -rq "$GR_SECRET" "$ROOT/gr1/" || fail "succeeded, must not: grep -rq \"\$GR_SECRET\" \"\$ROOT/gr1/\""
	run gr delete gr1
	[ "$status" -eq 0 ]
	wait_gone "$gp" || fail "the gateway $gp outlived its container"
}
