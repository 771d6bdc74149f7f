#!/usr/bin/env bats
# Learn mode (agentbox-egress(7), LEARN MODE): kit run --learn runs a box
# with egress open through its sentry, which records what the box reaches;
# egress suggest prints the network.allow block that lets the same session
# run default-deny with nothing refused.
#
# One little internet for the whole file (setup_file): a netns joined
# to the host's by a veth (198.18.45.1/30 here, .2 there), routed by
# 198.18.45.64/26 and 198.18.45.128/26, and in it: a resolver on .80 (*.test),
# HTTPS hosts with a private CA on .65 registry.test (an npm registry: a
# packument and its tarball), .66 git.test (a repository served the dumb
# way), .67 api.test and a/b/c/d.cdn.test (JSON; api.test also over HTTPS on
# 8443 and plain HTTP on 8080); a UDP echo on .68:5000
# (udp.test); lookonly.test and stream.test on .69 (a test may listen
# there); a TCP greeting on
# .70:9000 with no name, and on .130:9000, outside the range the box's
# answers may point into (--egress-internal 198.18.45.64/26). inside.test
# points at 10.45.0.1. The runtime runs in a mount namespace whose
# /etc/resolv.conf names the resolver (slirp4netns forwards to it).

load helpers
load kit_helpers

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v slirp4netns >/dev/null && command -v dnsmasq >/dev/null && command -v socat >/dev/null &&
		command -v openssl >/dev/null || return 0
	export LRN=$BATS_FILE_TMPDIR/lrn LRN_HV=ablrn$(($$ % 100000))
	mkdir -p "$LRN/www" "$LRN/ca"
	exec 8>/run/agentbox-egress-learn-net.lock
	flock -w 60 8
	# a network namespace a process holds, not a name under /run/netns: on a
	# shared host, another's `ip netns` may hide that under a new mount
	unshare --net sleep infinity </dev/null >/dev/null 2>&1 3>&- 8>&- &
	echo $! >"$LRN/pids"
	export LRN_HOLD=$!
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(readlink /proc/$LRN_HOLD/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.02
	done
	ip link add "$LRN_HV" type veth peer name n0 netns "/proc/$LRN_HOLD/ns/net"
	ip addr add 198.18.45.1/30 dev "$LRN_HV"
	ip link set "$LRN_HV" up
	in_lrn ip addr add 198.18.45.2/30 dev n0
	in_lrn ip link set n0 up
	in_lrn ip link set lo up
	local a
	for a in 65 66 67 68 69 70 80 130; do in_lrn ip addr add "198.18.45.$a/32" dev lo; done
	ip route add 198.18.45.64/26 via 198.18.45.2 dev "$LRN_HV"
	ip route add 198.18.45.128/26 via 198.18.45.2 dev "$LRN_HV"
	learn_stubs >&2
	nsenter -t "$LRN_HOLD" -n dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root \
		--group=root --bind-interfaces --listen-address=198.18.45.80 --local=/test/ \
		--pid-file="$LRN/dnsmasq.pid" \
		--host-record=registry.test,198.18.45.65 --host-record=git.test,198.18.45.66 \
		--host-record=api.test,198.18.45.67 --host-record=a.cdn.test,198.18.45.67 \
		--host-record=b.cdn.test,198.18.45.67 --host-record=c.cdn.test,198.18.45.67 \
		--host-record=d.cdn.test,198.18.45.67 --host-record=stream.test,198.18.45.69 \
		--host-record=udp.test,198.18.45.68 --host-record=lookonly.test,198.18.45.69 \
		--host-record=inside.test,10.45.0.1 </dev/null >/dev/null 2>&1 3>&- 8>&- &
	echo $! >>"$LRN/pids"
	nsenter -t "$LRN_HOLD" -n python3 "$BATS_TEST_DIRNAME/learn_servers.py" --root "$LRN/www" \
		--cert "$LRN/ca/server.pem" --key "$LRN/ca/server.key" --ready "$LRN/ready" \
		--https 198.18.45.65 --https 198.18.45.66 --https 198.18.45.67 --https 198.18.45.67:8443 \
		--http 198.18.45.67:8080 --udp 198.18.45.68:5000 \
		--tcp 198.18.45.70:9000 --tcp 198.18.45.130:9000 </dev/null >/dev/null 2>&1 3>&- 8>&- &
	echo $! >>"$LRN/pids"
	echo "nameserver 198.18.45.80" >"$LRN/resolv.conf"
	cat >"$LRN/with-resolv" <<-EOF
		#!/bin/sh
		exec unshare -m sh -c 'mount --bind "\$0" /etc/resolv.conf && exec "\$@"' "$LRN/resolv.conf" "$RUNTIME" "\$@"
	EOF
	chmod +x "$LRN/with-resolv"
	for i in $(seq 100); do
		[ -e "$LRN/ready" ] && unshare -m sh -c "mount --bind $LRN/resolv.conf /etc/resolv.conf && getent hosts api.test" \
			>/dev/null 2>&1 && break
		sleep 0.1
	done
	export LRN_READY=1
}

teardown_file() {
	[ -n "${LRN:-}" ] || return 0
	kill $(cat "$LRN/pids" 2>/dev/null) 2>/dev/null || true
	ip route del 198.18.45.64/26 2>/dev/null || true
	ip route del 198.18.45.128/26 2>/dev/null || true
	ip link del "$LRN_HV" 2>/dev/null || true
}

# in_lrn CMD...: CMD in the little internet's network namespace
in_lrn() {
	nsenter -t "$LRN_HOLD" -n "$@"
}

# The CA and the hosts' certificate; an npm package and its packument, a git
# repository, an API's answer: files the HTTPS hosts serve.
learn_stubs() {
	local ca=$LRN/ca www=$LRN/www
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ablrn-ca -keyout "$ca/ca.key" -out "$ca/ca.pem"
	openssl req -newkey rsa:2048 -nodes -subj /CN=registry.test -keyout "$ca/server.key" -out "$ca/server.csr"
	printf 'subjectAltName=DNS:registry.test,DNS:git.test,DNS:api.test,DNS:a.cdn.test,DNS:b.cdn.test,DNS:c.cdn.test,DNS:d.cdn.test\n' \
		>"$ca/ext"
	openssl x509 -req -in "$ca/server.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" -CAcreateserial -days 2 \
		-extfile "$ca/ext" -out "$ca/server.pem"
	chmod 644 "$ca/ca.pem"
	mkdir -p "$LRN/pkg/package" "$www/tarballs" "$www/v1"
	echo '{"name":"ablrn-pkg","version":"1.0.0","main":"index.js"}' >"$LRN/pkg/package/package.json"
	echo 'module.exports = "ablrn";' >"$LRN/pkg/package/index.js"
	tar czf "$www/tarballs/ablrn-pkg-1.0.0.tgz" -C "$LRN/pkg" package
	local sha1 sha512
	sha1=$(sha1sum "$www/tarballs/ablrn-pkg-1.0.0.tgz" | cut -d' ' -f1)
	sha512=$(openssl dgst -sha512 -binary "$www/tarballs/ablrn-pkg-1.0.0.tgz" | base64 -w0)
	cat >"$www/ablrn-pkg" <<-EOF
		{"name":"ablrn-pkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"ablrn-pkg",
		"version":"1.0.0","main":"index.js","dist":{"tarball":"https://registry.test/tarballs/ablrn-pkg-1.0.0.tgz",
		"shasum":"$sha1","integrity":"sha512-$sha512"}}}}
	EOF
	echo '{"status":"ok"}' >"$www/v1/status"
	git init -q "$LRN/src"
	echo "learn" >"$LRN/src/README"
	git -C "$LRN/src" add README
	git -C "$LRN/src" -c user.name=t -c user.email=t@t commit -qm one
	git clone -q --bare "$LRN/src" "$www/repo.git"
	git -C "$www/repo.git" update-server-info
}

setup() {
	requires root agentbox
	[ -n "${LRN_READY:-}" ] || skip "needs slirp4netns, dnsmasq, socat and openssl"
	setup_state_only
	kit_setup_common
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chown 1000:1000 "$WS"
	export AGENTBOX_BOXES=$TEST_DIR/boxes
	# the test hosts are "benchmarking" addresses: answers may point there
	RUNTIME_ARGS=(--egress-internal 198.18.45.64/26)
}

teardown() {
	teardown_bundle
}

# krun ARGS...: agentbox (RUNTIME_ARGS first) with the little internet's resolver.
krun() {
	RUNTIME=$LRN/with-resolv runtime "$@"
}

# session_kit FILE [ALLOW-BLOCK]: the agent-like session: installs a package
# from the registry, clones a repository, calls the API (curl and python,
# over HTTPS on 443 and 8443, over plain HTTP on 8080), looks a name up,
# sends a UDP query. Each step prints its word when it worked; the first
# line says which proxy the clients were given. ALLOW-BLOCK: a network
# block (egress suggest's) to put in. With SESSION_PROXY=false the kit says
# network.proxy: false (no proxy, no variables: the clients connect
# themselves); else it keeps the default, the box's HTTP proxy, which npm,
# git, curl and Python all use.
session_kit() {
	{
		[ -z "${2:-}" ] || printf '%s\n' "$2"
		if [ "${SESSION_PROXY:-}" = false ]; then
			[ -n "${2:-}" ] && echo "  proxy: false" || printf 'network:\n  proxy: false\n'
		fi
		cat <<-EOF
			mounts: [{target: /ca, source: "$LRN/ca"}]
			env:
			  npm_config_cafile: /ca/ca.pem
			  npm_config_cache: /tmp/npm-cache
			  npm_config_update_notifier: "false"
			  GIT_SSL_CAINFO: /ca/ca.pem
			  SSL_CERT_FILE: /ca/ca.pem
			  CURL_CA_BUNDLE: /ca/ca.pem
			  HOME: /tmp
			command:
			  - sh
			  - -c
			  - |
			    echo "proxy=\${HTTPS_PROXY:-none} \${http_proxy:-none}"
			    cd /tmp && echo '{}' >package.json
			    npm install --no-audit --no-fund --registry https://registry.test/ ablrn-pkg >/dev/null 2>&1 &&
			      [ -f node_modules/ablrn-pkg/index.js ] && echo step-npm
			    git clone -q https://git.test/repo.git repo 2>/dev/null && [ -f repo/README ] && echo step-git
			    curl -sf https://api.test/v1/status | grep -q ok && echo step-curl
			    python3 -c 'import urllib.request; print(urllib.request.urlopen("https://api.test/v1/status").read().decode())' 2>/dev/null |
			      grep -q ok && echo step-python
			    curl -sf https://api.test:8443/v1/status | grep -q ok && echo step-tls8443
			    curl -sf http://api.test:8080/v1/status | grep -q ok && echo step-http
			    getent hosts lookonly.test >/dev/null && echo step-lookup
			    echo ping | socat -T3 - UDP:udp.test:5000 2>/dev/null | grep -q hello-udp && echo step-udp
			    sleep 0.2
		EOF
	} >"$TEST_DIR/$1"
}

assert_session_done() {
	local s
	for s in npm git curl python tls8443 http lookup udp; do
		grep -qx "step-$s" <<<"$stdout" || fail "step $s failed: $output"
	done
}

# assert_session_block BLOCK: egress suggest's allowlist for the session,
# whichever way its clients went: each host and port it reached, nothing else
assert_session_block() {
	local e
	for e in registry.test:443 git.test:443 api.test:443 api.test:8443 api.test:8080 udp.test:5000/udp; do
		grep -qx "    - $e" <<<"$1" || fail "no $e: $1"
	done
	grep -q '^    - lookonly.test  *# looked up only' <<<"$1" || fail "no lookup: $1"
	[ "$(grep -c '^    - ' <<<"$1")" = 7 ] || fail "more than the session reached: $1"
}

# learnt_api BOX: how the box's connections to api.test were recorded:
# "PORT VIA" lines, from its durable learn file
learnt_api() {
	jq -r 'select(.learn == "connect" and .name == "api.test") | "\(.port) \(.via)"' \
		"$AGENTBOX_LOG_DIR/$1/egress.learn" | sort -u | tr '\n' ' '
}

@test "kit run --learn: an agent-like session through the box's HTTP proxy (a kit's default); its suggestion, pasted, runs it default-deny with nothing refused" {
	session_kit learn.yaml
	# learn mode: egress open, loudly; a named box, kept for egress suggest
	krun kit run --learn --name ablrn1 --workspace "$WS" "$TEST_DIR/learn.yaml"
	assert_success
	assert_session_done
	assert_output_contains "proxy=http://127.0.0.1:61128 http://127.0.0.1:61128"
	[[ "$stderr" == *"LEARN MODE: the egress of box box-ablrn1 is OPEN"* ]] || fail "no warning: $stderr"
	[[ "$stderr" == *"the allowlist it calls for: agentbox egress suggest box-ablrn1"* ]] || fail "no summary: $stderr"
	refute_output_contains "egress refused"
	# the proxy recorded what it tunnelled and fetched itself; a tunnel to
	# 443 the SNI check recorded by its TLS name
	[ "$(learnt_api box-ablrn1)" = "443 tls 8080 proxy 8443 proxy " ] || fail "recorded: $(learnt_api box-ablrn1)"
	runtime kit ls
	assert_output_matches 'ablrn1 .* idle,learn'
	runtime kit ls --json
	jq -e '.[] | select(.name == "ablrn1") | .learn == true' <<<"$stdout" >/dev/null || fail "$stdout"

	# after the run (its state is gone): from the durable copy
	runtime egress suggest box-ablrn1
	assert_success
	local block
	block=$(grep -v '^#' <<<"$stdout")
	assert_session_block "$block"

	# pasted as the kit's allowlist: the same session, default-deny, through
	# the proxy again, nothing refused
	session_kit paste.yaml "$block"
	krun kit run --name ablrn2 --workspace "$WS" "$TEST_DIR/paste.yaml"
	assert_success
	assert_session_done
	assert_output_contains "proxy=http://127.0.0.1:61128"
	refute_output_contains "egress refused"
	refute_output_contains "LEARN MODE"
	runtime egress log --json box-ablrn2
	[ -z "$(jq -c 'select(.verdict == "deny")' <<<"$stdout")" ] || fail "refused: $stdout"

	# entries fewer: those steps are refused, by the proxy, and the log says
	# so (the test can fail)
	session_kit short.yaml "$(grep -v -e 'git.test' -e 'api.test:8080' <<<"$block")"
	krun kit run --name ablrn3 --workspace "$WS" "$TEST_DIR/short.yaml"
	refute_output_contains step-git
	refute_output_contains step-http
	assert_output_contains step-npm
	assert_output_contains step-tls8443
	runtime egress log --json box-ablrn3
	jq -se 'any(.[]; .verdict == "deny" and .proto == "proxy" and .name == "git.test")' <<<"$stdout" >/dev/null ||
		fail "$stdout"
	jq -se 'any(.[]; .verdict == "deny" and .proto == "proxy" and .name == "api.test" and .port == 8080)' \
		<<<"$stdout" >/dev/null || fail "$stdout"
	runtime kit rm ablrn1 ablrn2 ablrn3
	# its boxes' cgroups are gone (kit-* ones, which assert_kit_run_clean
	# compares, are other runs' on a shared host: this test made none)
	[ -z "$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -path '*/agentbox/box-ablrn*' 2>/dev/null)" ] ||
		fail "cgroups left: $(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -path '*/agentbox/box-ablrn*')"
	KIT_CGROUPS_BEFORE=$(kit_cgroups)
	assert_kit_run_clean
}

@test "kit run --learn with network.proxy: false: the clients connect themselves; the same suggestion runs the session default-deny" {
	SESSION_PROXY=false session_kit learn.yaml
	krun kit run --learn --name ablrn5 --workspace "$WS" "$TEST_DIR/learn.yaml"
	assert_success
	assert_session_done
	assert_output_contains "proxy=none none"
	# the learn log group recorded the connections, named by their lookups
	[ "$(learnt_api box-ablrn5)" = "443 tls 8080 dns 8443 dns " ] || fail "recorded: $(learnt_api box-ablrn5)"
	runtime egress suggest box-ablrn5
	assert_success
	local block
	block=$(grep -v '^#' <<<"$stdout")
	assert_session_block "$block"
	SESSION_PROXY=false session_kit paste.yaml "$block"
	krun kit run --name ablrn6 --workspace "$WS" "$TEST_DIR/paste.yaml"
	assert_success
	assert_session_done
	refute_output_contains "egress refused"
	runtime egress log --json box-ablrn6
	[ -z "$(jq -c 'select(.verdict == "deny")' <<<"$stdout")" ] || fail "refused: $stdout"
	runtime kit rm ablrn5 ablrn6
	[ -z "$(find /sys/fs/cgroup/ -mindepth 2 -maxdepth 4 -type d -path '*/agentbox/box-ablrn*' 2>/dev/null)" ] ||
		fail "cgroups left"
	KIT_CGROUPS_BEFORE=$(kit_cgroups)
	assert_kit_run_clean
}

@test "kit run --learn: loud while it runs; what stays closed, also to the proxy; a live deny of a name cuts its flows, the proxy's too; the suggestion's comments and --wildcards" {
	# sinks for long-lived connections of the box's: one its own, one the
	# box's HTTP proxy tunnels
	local port
	for port in 9100 9101; do
		nsenter -t "$LRN_HOLD" -n socat -u TCP-LISTEN:$port,bind=198.18.45.69,reuseaddr \
			OPEN:"$TEST_DIR/recv$port",creat,append </dev/null >/dev/null 2>&1 3>&- 8>&- &
		defer kill $!
	done
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(in_lrn ss -ltn | grep -c '198.18.45.69:910[01]')" = 2 ] && break
		sleep 0.05
	done
	kit odd.yaml <<-EOF
		network:
		  deny: [b.cdn.test]
		mounts: [{target: /ca, source: "$LRN/ca"}]
		env: {CURL_CA_BUNDLE: /ca/ca.pem}
		command:
		  - sh
		  - -c
		  - |
		    (i=0; while :; do echo line \$i; i=\$((i + 1)); sleep 0.1; done | socat - TCP:stream.test:9100) &
		    (i=0; while :; do echo line \$i; i=\$((i + 1)); sleep 0.1; done |
		      socat - PROXY:127.0.0.1:stream.test:9101,proxyport=61128; echo proxied-stream-ended) &
		    getent hosts inside.test || echo inside-withheld
		    getent hosts nope.test || echo nope-nxdomain
		    for h in a c d; do curl -sf https://\$h.cdn.test/v1/status >/dev/null && echo cdn-\$h; done
		    curl -sf https://b.cdn.test/v1/status >/dev/null || echo denied-refused
		    curl -sf --connect-to api.test:443:198.18.45.67:443 https://api.test/v1/status >/dev/null && echo sni-by-ip
		    socat -T2 - TCP:198.18.45.70:9000 </dev/null | grep -q hello-tcp && echo by-address
		    socat -T2 - TCP:198.18.45.130:9000,connect-timeout=2 </dev/null 2>/dev/null | grep -q hello-tcp ||
		      echo closed-refused
		    echo "proxy-closed \$(curl -s -o /dev/null -w '%{http_code}' http://198.18.45.130:9000/)"
		    echo waiting
		    while [ ! -e /workspace/go ]; do sleep 0.1; done
		    sed 's/^/refused-file /' /run/agentbox/refused
	EOF
	"$LRN/with-resolv" --root "$ROOT" "${RUNTIME_ARGS[@]}" kit run --learn --name ablrn4 --workspace "$WS" \
		"$TEST_DIR/odd.yaml" >"$TEST_DIR/out" 2>"$TEST_DIR/err" 3>&- 8>&- &
	local kitpid=$! a b
	defer kill $kitpid
	wait_for_line "$TEST_DIR/out" '^waiting$' 30
	# loud while it runs: egress show and kit ls say learn
	runtime egress show box-ablrn4
	assert_output_matches '^mode +learn'
	assert_output_matches $'\nproxy +http://127\\.0\\.0\\.1:61128 \\(what it lets through is recorded too\\)'
	runtime egress show --json box-ablrn4
	[ "$(jq -r '"\(.mode) \(.proxy)"' <<<"$stdout")" = "learn true" ] || fail "$stdout"
	runtime kit ls
	assert_output_matches 'ablrn4 .* running,learn'

	# a live deny of a name the box streams to: its flows end, the one the
	# proxy holds too, and the box's end of that one is closed
	for ((i = 0; i < 100; i++)); do
		[ "$({ cat "$TEST_DIR/recv9100" "$TEST_DIR/recv9101" | wc -l; } 2>/dev/null || echo 0)" -ge 6 ] && break
		sleep 0.1
	done
	for port in 9100 9101; do
		[ "$(wc -l <"$TEST_DIR/recv$port")" -ge 3 ] || fail "the stream to $port never carried anything"
	done
	! grep -qx proxied-stream-ended "$TEST_DIR/out" || fail "the proxied stream ended before the deny"
	runtime egress deny box-ablrn4 stream.test
	assert_success
	wait_for_line "$TEST_DIR/out" '^proxied-stream-ended$' 10
	sleep 0.5
	for port in 9100 9101; do
		a=$(wc -l <"$TEST_DIR/recv$port")
		sleep 1
		b=$(wc -l <"$TEST_DIR/recv$port")
		[ "$a" = "$b" ] || fail "still flowing to $port after the deny, in learn mode: $a then $b lines"
	done
	touch "$WS/go"
	wait $kitpid || fail "the run failed: $(cat "$TEST_DIR/err")"
	local out
	out=$(<"$TEST_DIR/out")
	for w in inside-withheld nope-nxdomain cdn-a cdn-c cdn-d denied-refused sni-by-ip by-address closed-refused \
		"proxy-closed 403"; do
		grep -qx "$w" <<<"$out" || fail "no $w: $out $(cat "$TEST_DIR/err")"
	done
	# what stayed closed is in the deny log, as in any box: the box's own
	# connections, and what it asked of the proxy (curl: HTTPS_PROXY)
	runtime egress log --json box-ablrn4
	jq -se 'any(.[]; .proto == "proxy" and .name == "b.cdn.test" and .reason == "denied")' <<<"$stdout" >/dev/null ||
		fail "$stdout"
	jq -se 'any(.[]; .proto == "tcp" and .dst == "198.18.45.130" and .port == 9000 and .reason == "internal-address")' \
		<<<"$stdout" >/dev/null || fail "$stdout"
	jq -se 'any(.[]; .proto == "proxy" and .dst == "198.18.45.130" and .port == 9000 and .reason == "internal-address")' \
		<<<"$stdout" >/dev/null || fail "$stdout"
	jq -se 'any(.[]; .dst == "198.18.45.69" and .port == 9100 and .reason == "denied")' <<<"$stdout" >/dev/null ||
		fail "the stream's packets after the deny are not refused: $stdout"
	# ... and in the box's refused file
	grep '^refused-file ' <<<"$out" | grep '"proto":"proxy"' | grep '"name":"b.cdn.test"' | grep -q '"reason":"denied"' ||
		fail "refused file: $out"
	grep '^refused-file ' <<<"$out" | grep '"proto":"proxy"' | grep '"dst":"198.18.45.130"' |
		grep -q '"reason":"internal-address"' || fail "refused file: $out"
	# kit run's closing words: the refusals, why and the fix, then what it learnt
	local err
	err=$(<"$TEST_DIR/err")
	[[ "$err" == *"proxy 198.18.45.130:9000  internal-address: its destination is an internal address [benchmarking]; open 198.18.0.0/15 with --egress-internal 198.18.0.0/15"* ]] ||
		fail "summary: $err"
	[[ "$err" == *"proxy b.cdn.test:443  denied: a deny entry matches"* ]] || fail "summary: $err"
	[[ "$err" == *'learn mode: "box-ablrn4" reached '*'agentbox egress suggest box-ablrn4'* ]] || fail "summary: $err"

	runtime egress suggest box-ablrn4
	assert_success
	for h in a c d; do
		assert_output_matches $'\n    - '$h$'\\.cdn\\.test:443\n'
	done
	assert_output_matches $'\n    - 198\\.18\\.45\\.67:443 +# by address \\(no lookup\\), TLS name api\\.test\n'
	assert_output_matches $'\n    - api\\.test:443\n'
	assert_output_matches $'\n    - 198\\.18\\.45\\.70:9000 +# by address: no name was looked up for it\n'
	assert_output_matches $'\n#   inside\\.test -> 10\\.45\\.0\\.1 \\(private\\)\n'
	assert_output_matches $'\n#   nope\\.test'
	refute_output_contains "- b.cdn.test"
	refute_output_contains "198.18.45.130"
	refute_output_contains "- inside.test"
	runtime egress suggest --wildcards box-ablrn4
	assert_output_matches $'\n    - "\\*\\.cdn\\.test:443" +# folds 3 names\n'
	refute_output_contains "- a.cdn.test"
	runtime egress suggest --json box-ablrn4
	jq -e '.inside[0].dst == "10.45.0.1" and (.no_such_name | index("nope.test"))' <<<"$stdout" >/dev/null ||
		fail "$stdout"

	# the closed host answers a box that opens its range: the rule, not the setup, refused it
	kit closed.yaml <<-'EOF'
		command: [sh, -c, 'socat -T2 - TCP:198.18.45.130:9000,connect-timeout=2 </dev/null']
	EOF
	RUNTIME_ARGS=(--egress-internal 198.18.45.0/24)
	krun kit run --learn "$TEST_DIR/closed.yaml"
	assert_success
	assert_output_contains hello-tcp
	runtime kit rm ablrn4
	assert_kit_run_clean
}

@test "--egress-mode learn, annotation agentbox.egress.mode: an engine container learns only where the admin allows it" {
	setup_bundle
	local config=$TEST_DIR/agent.yaml
	: >"$config"
	RUNTIME_ARGS=(--config "$config")
	set_args abtest pause ready
	# the workload asks for it: refused, in one line, unless the admin allows it
	update_config '.annotations["agentbox.egress.mode"] = "learn"'
	runtime create --bundle "$BUNDLE" lm1 </dev/null
	assert_failure
	assert_one_error_line "annotation agentbox\\.egress\\.mode=learn: learn mode opens egress, and .* does not allow it: refused"
	assert_nothing_left
	printf 'egress: {learn_allowed: true}\n' >"$config"
	run_container lm2 --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	assert_output_contains "LEARN MODE"
	runtime egress show lm2
	assert_output_matches '^mode +learn'
	local pid
	pid=$(jq -r .pid "$ROOT/lm2/state.json")
	nsenter --net=/proc/$pid/ns/net nft list chain inet agentbox learn_pass | grep -q 'log prefix "learn" group 173' ||
		fail "no learn chain: $(nsenter --net=/proc/$pid/ns/net nft list table inet agentbox)"
	runtime delete --force lm2
	# enforce is the default; anything else is one line
	update_config '.annotations["agentbox.egress.mode"] = "open"'
	runtime create --bundle "$BUNDLE" lm3 </dev/null
	assert_failure
	assert_one_error_line 'annotation agentbox\.egress\.mode: unknown mode "open" \(enforce or learn\)'
	# the admin's own flag (an engine's runtimeArgs) needs no permission
	update_config 'del(.annotations["agentbox.egress.mode"])'
	: >"$config"
	RUNTIME_ARGS=(--config "$config" --egress-mode learn)
	run_container lm4 --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime egress show --json lm4
	[ "$(jq -r .mode <<<"$stdout")" = learn ] || fail "$stdout"
	runtime delete --force lm4
	RUNTIME_ARGS=(--config "$config" --egress-mode bogus)
	runtime create --bundle "$BUNDLE" lm5 </dev/null
	assert_failure
	assert_one_error_line '--egress-mode: unknown mode "bogus" \(enforce or learn\)'
	assert_nothing_left
}
