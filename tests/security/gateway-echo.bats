#!/usr/bin/env bats
# The credential gateway must never give the secret back (issue 34, 5): a
# credential host that echoes the request (TRACE, an echo endpoint, an
# error quoting the token, a redirect carrying it, in any encoding an echo
# uses) would hand the box the secret the gateway keeps from it.
#
# Each attack runs twice from the same box: as uid 4242, whose TCP/443 goes
# to a gateway unguarded (gateway-driver with AGENTBOX_GATEWAY_UNPROTECTED,
# a test build's switch: the gateway as it was, requests and responses
# passed as they came), where it must WORK; then as root, through the
# gateway as shipped, where it must not. The test host is leaky-https.py
# (HTTP/1.1, and HTTP/2 when python3-h2 is installed).
#
# Network: two network namespaces held by processes of ours, the box's
# (198.18.43.2) and the hosts' (198.18.43.10 api.test, the credential's
# host; 198.18.43.11 other.test, allowed without a credential), joined by
# the veth abech$R; addresses from 198.18.43.0/24 only. Needs root, python3, openssl, curl, jq, nft and
# `make tests/netfilter/gateway-driver TEST_HOOKS=yes`.

load helpers

setup_file() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	for t in openssl curl jq python3 nft setpriv; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	command -v /usr/bin/python3 >/dev/null || skip "needs /usr/bin/python3 (a client uid 4242 may run)"
	export GW_DRIVER=${GW_DRIVER:-$BATS_TEST_DIRNAME/../netfilter/gateway-driver}
	[ -x "$GW_DRIVER" ] || skip "build tests/netfilter/gateway-driver first"
	# the unguarded reference is a test build's switch (lib/test_hooks.h)
	grep -qa AGENTBOX_FAULT_ "$GW_DRIVER" ||
		skip "needs a TEST_HOOKS=yes build of tests/netfilter/gateway-driver (the unguarded reference)"
	export AGENTBOX_GATEWAY=${AGENTBOX_GATEWAY:-$BATS_TEST_DIRNAME/../../agentbox-gateway}
	export E=$BATS_FILE_TMPDIR/echo
	mkdir -p "$E"
	chmod 0755 "$BATS_FILE_TMPDIR" "$E"
	# the certificates of the netfilter suite's test internet
	(BATS_TEST_DIRNAME=$BATS_TEST_DIRNAME/../netfilter && . "$BATS_TEST_DIRNAME/gateway-net.bash" && gw_certs "$E")
	# python3-h2 makes the host speak HTTP/2 too (Debian's module, not pyenv's)
	PY=python3
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import h2' 2>/dev/null; then PY=$p; break; fi
	done
	export R=$(printf '%04x' $((RANDOM % 65536)))
	# the namespaces are held by processes of ours, not pinned under
	# /run/netns (where a concurrent `ip netns add` may stack a mount over
	# the pins): the box's and the hosts'
	: >"$E/pids"
	unshare --net sleep 100000 </dev/null >/dev/null 2>&1 3>&- &
	export BPID=$!
	unshare --net sleep 100000 </dev/null >/dev/null 2>&1 3>&- &
	export HPID=$!
	echo "$BPID $HPID" >>"$E/pids"
	local i
	for i in $(seq 50); do
		[ "$(readlink /proc/$BPID/ns/net)" != "$(readlink /proc/self/ns/net)" ] &&
			[ "$(readlink /proc/$HPID/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.02
	done
	ip link add "abech${R}b" netns "$BPID" type veth peer name "abech${R}h" netns "$HPID"
	in_box ip link set lo up
	in_hosts ip link set lo up
	in_box ip addr add 198.18.43.2/24 dev "abech${R}b"
	in_box ip link set "abech${R}b" up
	for a in 1 10 11; do in_hosts ip addr add "198.18.43.$a/24" dev "abech${R}h"; done
	in_hosts ip link set "abech${R}h" up
	: >"$E/records.jsonl"
	local s
	for s in api:10 other:11; do
		# nsenter execs the server: $! is the server itself
		in_hosts "$PY" "$BATS_TEST_DIRNAME/leaky-https.py" --bind "198.18.43.${s#*:}" \
			--cert "$E/${s%%:*}.pem" --key "$E/${s%%:*}.key" --record "$E/records.jsonl" \
			--ready "$E/ready.${s%%:*}" >/dev/null 2>&1 &
		echo $! >>"$E/pids"
	done
	# TCP/443 to the drivers: uid 4242's to the unguarded one
	in_box nft -f - <<EOF
table inet abech {
	chain out {
		type nat hook output priority -100;
		meta mark 0x0ab0d443 accept
		meta skuid 4242 tcp dport 443 redirect to :8444
		tcp dport 443 redirect to :8443
	}
}
EOF
	export GH_SECRET="ghp_c3e${RANDOM}x${RANDOM}_Qz9k+${RANDOM}/w"
	local d port
	for d in guarded:8443 unguarded:8444; do
		port=${d#*:}
		d=${d%%:*}
		mkdir -p "$E/$d"
		# shellcheck disable=SC2046
		in_box env $([ "$d" = unguarded ] && echo AGENTBOX_GATEWAY_UNPROTECTED=1) \
			"$GW_DRIVER" "$port" "allow=api.test,other.test;deny=" "$E/$d/log.jsonl" --ca-out "$E/$d/boxca.pem" \
			--upstream-ca "$E/ca.pem" --cred GITHUB_TOKEN api.test "Authorization: Bearer {}" GH_SECRET \
			>"$E/$d/driver.out" 2>"$E/$d/driver.err" &
		echo $! >>"$E/pids"
	done
	local i
	for i in $(seq 100); do
		[ -e "$E/ready.api" ] && [ -e "$E/ready.other" ] && grep -q ready "$E/guarded/driver.out" &&
			grep -q ready "$E/unguarded/driver.out" && break
		sleep 0.1
	done
	grep -q ready "$E/guarded/driver.out" && grep -q ready "$E/unguarded/driver.out" && [ -e "$E/ready.api" ] ||
		{ cat "$E"/*/driver.err >&2; return 1; }
	# the trust bundle, where uid 4242 reads it too
	export PUB
	PUB=$(mktemp -d /tmp/abech.XXXXXX)
	chmod 0755 "$PUB"
	cat "$E/ca.pem" "$E/guarded/boxca.pem" "$E/unguarded/boxca.pem" >"$PUB/bundle.pem"
	chmod 0644 "$PUB/bundle.pem"
	grep -q h2 "$E/ready.api" && export H2=1 || export H2=
}

teardown_file() {
	[ -n "${R:-}" ] || return 0
	local pid ns nss=""
	# everything in the two namespaces (the drivers' gateways among them),
	# then their holders: the namespaces and the veth go with them
	for pid in "$BPID" "$HPID"; do
		nss+=" $(readlink "/proc/$pid/ns/net" 2>/dev/null)"
	done
	for pid in $(ls /proc | grep -E '^[0-9]+$'); do
		ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || continue
		[[ " $nss " == *" $ns "* ]] && [ "$pid" != "$BPID" ] && [ "$pid" != "$HPID" ] && kill -9 "$pid" 2>/dev/null
	done
	for pid in $(cat "$E/pids" 2>/dev/null); do
		kill -9 "$pid" 2>/dev/null || true
	done
	rm -rf "${PUB:-/nonexistent}"
}

# CMD in the box's namespace, in the hosts'
in_box() { nsenter -t "$BPID" -n "$@"; }
in_hosts() { nsenter -t "$HPID" -n "$@"; }

# curl from the box: through the gateway as shipped, or unguarded (uid 4242)
RESOLVE=(--resolve api.test:443:198.18.43.10 --resolve other.test:443:198.18.43.11)
guarded() {
	in_box curl -sS --max-time 20 "${RESOLVE[@]}" --cacert "$PUB/bundle.pem" -H "Authorization: Bearer placeholder" \
		"$@" 2>&1
}
unguarded() {
	in_box setpriv --reuid 4242 --regid 4242 --clear-groups curl -sS --max-time 20 "${RESOLVE[@]}" \
		--cacert "$PUB/bundle.pem" -H "Authorization: Bearer placeholder" "$@" 2>&1
}
# python from the box, the same two ways
BOXPY=/usr/bin/python3
py_guarded() { in_box "$BOXPY" - "$PUB/bundle.pem" "$@"; }
py_unguarded() { in_box setpriv --reuid 4242 --regid 4242 --clear-groups "$BOXPY" - "$PUB/bundle.pem" "$@"; }

# Whatever an attacker would undo: the text itself and its decodings (JSON,
# HTML, percent, base64 in both alphabets, of every base64-looking run and
# of the whole); the secret found in any is a leak. With "parts", the input
# is curl's answers to several URLs, each ended by "=== URL": the URLs whose
# answer leaks are printed.
REVEAL='
import base64, html, json, os, re, sys, urllib.parse
def reveal(t):
    out = [t, html.unescape(t), urllib.parse.unquote(t)]
    try:
        out.append(json.dumps(json.loads(t), ensure_ascii=False))
    except Exception:
        pass
    if "\\" in t:
        out.append(t.encode().decode("unicode_escape", "replace"))
    for r in re.findall(r"[A-Za-z0-9+/_=\-\s]{8,}", t) + [t]:
        r = "".join(r.split())
        for alt in (r, r.replace("-", "+").replace("_", "/")):
            for k in range(4):
                try:
                    out.append(base64.b64decode(alt[k:] + "===").decode("latin-1"))
                except Exception:
                    pass
    return os.environ["GH_SECRET"] in "\n".join(out)
text = sys.stdin.buffer.read().decode("latin-1")
if sys.argv[1:] == ["parts"]:
    pieces = re.split(r"\n=== (\S+)\n", text)
    for body, url in zip(pieces[0::2], pieces[1::2]):
        if reveal(body):
            print(url)
else:
    sys.exit(0 if reveal(text) else 1)
'
leaks() { python3 -c "$REVEAL" <<<"$1"; }
# the URLs of several fetched by one curl whose answers leak
leaking() { python3 -c "$REVEAL" parts <<<"$1"; }
log_has() { jq -se "map(select($1)) | length > 0" "$E/guarded/log.jsonl" >/dev/null; }
# refute CMD...: fail when CMD succeeds (a bare `! CMD` never stops a bats test)
refute() {
	if "$@"; then
		fail "should not hold: $*"
	fi
}
needs_h2() { [ -n "$H2" ] || skip "needs python3-h2 for an HTTP/2 test host"; }

@test "an echo endpoint (GET /headers): unguarded the box reads the secret; the gateway masks it and logs" {
	run unguarded --http1.1 https://api.test/headers
	leaks "$output" || unprotected_failed "GET /headers: $output"
	run guarded --http1.1 https://api.test/headers
	refute leaks "$output"
	# still the server's JSON, the token masked in place
	[ "$(jq -r '.headers.authorization' <<<"$output")" = "Bearer $(printf '%*s' ${#GH_SECRET} '' | tr ' ' '*')" ]
	log_has '.verdict == "deny" and .reason == "secret-in-response" and .name == "api.test" and (.detail | test("body"))'
	refute grep -qF "$GH_SECRET" "$E/guarded/log.jsonl"
}

@test "the same over HTTP/2: headers, DATA in 3-byte frames, DATA split across writes" {
	needs_h2
	local urls=(https://api.test/headers https://api.test/chunked https://api.test/split)
	run unguarded --http2 -w '\n=== %{http_version}:%{url_effective}\n' "${urls[@]}"
	[ "$(leaking "$output" | grep -c '^2:')" = 3 ] || unprotected_failed "h2: $output"
	run guarded --http2 -w '\n=== %{http_version}:%{url_effective}\n' "${urls[@]}"
	[ "$(grep -c '^=== 2:' <<<"$output")" = 3 ]
	[ -z "$(leaking "$output")" ]
	[ "$(grep -c '"Bearer \*\*\*\*' <<<"$output")" = 3 ]
}

@test "TRACE and TRACK are refused (405) before the server; so is OPTIONS with Max-Forwards" {
	run unguarded --http1.1 -X TRACE https://api.test/trace-u
	leaks "$output" || unprotected_failed "TRACE: $output"
	local m
	for m in TRACE TRACK; do
		run guarded --http1.1 -X "$m" -w '\n%{http_code}' "https://api.test/${m,,}-g"
		[[ "$output" == *$'\n405' ]]
		[[ "$output" == *"$m to api.test: it gives the request back"* ]]
		refute leaks "$output"
	done
	run guarded --http1.1 -X OPTIONS -H 'Max-Forwards: 0' -w '\n%{http_code}' https://api.test/options-g
	[[ "$output" == *$'\n405' ]]
	# none of them reached the server
	refute jq -e 'select(.path | test("-g$"))' "$E/records.jsonl" >/dev/null
	log_has '.reason == "method" and .detail == "TRACE"'
	log_has '.reason == "method" and .detail == "TRACK"'
	if [ -n "$H2" ]; then
		# HTTP/2 takes any method: TRACK (and trace, for servers that fold case) reach the server unguarded
		run unguarded --http2 -X TRACK https://api.test/track-u
		leaks "$output" || unprotected_failed "h2 TRACK: $output"
		for m in TRACK trace; do
			run guarded --http2 -X "$m" -w '\n%{http_code}' "https://api.test/h2-$m-g"
			[[ "$output" == *$'\n405' ]]
			refute leaks "$output"
		done
		refute jq -e 'select(.path | test("-g$"))' "$E/records.jsonl" >/dev/null
	fi
}

@test "the secret in response headers (HEAD: X-Echo, Set-Cookie, WWW-Authenticate, Link) and a redirect's Location" {
	run unguarded --http1.1 -I https://api.test/headers
	leaks "$output" || unprotected_failed "HEAD: $output"
	run guarded --http1.1 -I https://api.test/headers
	refute leaks "$output"
	[[ "$output" == *"x-echo-authorization: Bearer ****"* ]] && [[ "$output" == *"set-cookie: seen=Bearer ****"* ]]
	log_has '.reason == "secret-in-response" and (.detail | test("head"))'
	run unguarded --http1.1 -D - -o /dev/null https://api.test/redirect
	leaks "$output" || unprotected_failed "Location: $output"
	run guarded --http1.1 -D - -o /dev/null https://api.test/redirect
	refute leaks "$output"
	grep -qi '^location: https://other.test/landing?auth=Bearer%20\*\*\*' <<<"$output"
	# the box follows it: other.test (no credential) gets the mask, not the secret
	run guarded --http1.1 -L https://api.test/redirect
	[ "$(jq -r 'select(.path | startswith("/landing")) | .path' "$E/records.jsonl" | tail -n 1 | grep -c '\*\*\*')" = 1 ]
	refute grep -qF "$GH_SECRET" <<<"$(jq -c 'select(.path | startswith("/landing"))' "$E/records.jsonl" | tail -n 1)"
	if [ -n "$H2" ]; then
		run unguarded --http2 -I https://api.test/headers
		leaks "$output" || unprotected_failed "h2 HEAD: $output"
		run guarded --http2 -I https://api.test/headers
		refute leaks "$output"
		[[ "$output" == *"www-authenticate: Bearer error"* ]]
	fi
}

@test "bodies an echo writes otherwise: 401, base64 (standard, URL-safe, wrapped), JSON and HTML escapes, percent, 3-byte chunks, split writes" {
	local p urls=()
	for p in 401 b64 b64url b64wrap escaped html percent chunked split; do urls+=("https://api.test/$p"); done
	run unguarded --http1.1 -w '\n=== %{url_effective}\n' "${urls[@]}"
	[ "$(leaking "$output" | wc -l)" = ${#urls[@]} ] || unprotected_failed "these did not leak: $(leaking "$output")"
	run guarded --http1.1 -w '\n=== %{url_effective}\n' "${urls[@]}"
	[ "$(grep -c '^=== ' <<<"$output")" = ${#urls[@]} ]
	[ -z "$(leaking "$output")" ] || fail "leaked: $(leaking "$output")"
	log_has '.reason == "secret-in-response"'
}

@test "compressed bodies: the gateway asks for identity, and a server that compresses anyway gets a 502" {
	run unguarded --http1.1 --compressed https://api.test/gzip
	leaks "$output" || unprotected_failed "gzip: $output"
	[ "$(jq -r 'select(.path == "/gzip") | .headers["accept-encoding"]' "$E/records.jsonl" | tail -n 1)" != identity ]
	run guarded --http1.1 --compressed https://api.test/gzip
	refute leaks "$output"
	[ "$(jq -r 'select(.path == "/gzip") | .headers["accept-encoding"]' "$E/records.jsonl" | tail -n 1)" = identity ]
	run unguarded --http1.1 --compressed https://api.test/gzip-always
	leaks "$output" || unprotected_failed "gzip whatever asked: $output"
	run guarded --http1.1 --compressed -w '\n%{http_code}' https://api.test/gzip-always
	[[ "$output" == *$'\n502' ]]
	grep -qi "api.test answered with Content-Encoding: gzip, which the gateway cannot check" <<<"$output"
	log_has '.reason == "unreadable-response" and (.detail | ascii_downcase) == "content-encoding: gzip"'
	if [ -n "$H2" ]; then
		run guarded --http2 --compressed -w '\n%{http_code}' https://api.test/gzip-always
		[[ "$output" == *$'\n502' ]]
		refute leaks "$output"
	fi
}

@test "Range cannot take the secret out in pieces: the gateway does not pass it on" {
	# where the token is in /headers, from the unguarded answer
	local full off n i pieces=""
	full=$(unguarded --http1.1 https://api.test/headers)
	off=$(python3 -c 'import sys; print(sys.argv[1].find(sys.argv[2]))' "$full" "$GH_SECRET")
	[ "$off" -gt 0 ] || unprotected_failed "no token in /headers"
	n=${#GH_SECRET}
	# four bytes at a time, one connection: no piece is the secret, all of them are
	local ranges=(-r "$off-$((off + 3))" https://api.test/headers)
	for ((i = off + 4; i < off + n; i += 4)); do
		ranges+=(--next --http1.1 "${RESOLVE[@]}" --cacert "$PUB/bundle.pem" -r "$i-$((i + 3))" https://api.test/headers)
	done
	pieces=$(unguarded --http1.1 "${ranges[@]}")
	[[ "$pieces" == "$GH_SECRET"* ]] || unprotected_failed "Range pieces: $pieces"
	pieces=$(guarded --http1.1 "${ranges[@]}")
	refute leaks "$pieces"
	[ "$(jq -r 'select(.path == "/headers") | .headers.range // "none"' "$E/records.jsonl" | tail -n 1)" = none ]
}

@test "a trailer and a WebSocket tunnel that echo the request: masked" {
	local client='
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
s = ctx.wrap_socket(socket.create_connection(("198.18.43.10", 443), timeout=10), server_hostname="api.test")
extra = b"Upgrade: websocket\r\nConnection: Upgrade\r\n" if sys.argv[2] == "/ws" else b""
s.sendall(b"GET " + sys.argv[2].encode() + b" HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer placeholder\r\n" + extra + b"\r\n")
data = b""
try:
    while True:
        d = s.recv(65536)
        data += d
        if not d or (sys.argv[2] == "/trailer" and data.endswith(b"\r\n\r\n") and b"\r\n0\r\n" in data):
            break
except Exception:
    pass
sys.stdout.write(data.decode("latin-1"))'
	local p
	for p in /trailer /ws; do
		run py_unguarded "$p" <<<"$client"
		leaks "$output" || unprotected_failed "$p: $output"
		run py_guarded "$p" <<<"$client"
		refute leaks "$output"
		[[ "$output" == *"Bearer ****"* ]]
	done
}

@test "an upgrade to another protocol (h2c: HPACK-coded headers the scan cannot read) is refused" {
	"$BOXPY" -c 'import hpack' 2>/dev/null || skip "needs python3-hpack (python3-h2) for the h2c host"
	local client='
import hpack, socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
s = ctx.wrap_socket(socket.create_connection(("198.18.43.10", 443), timeout=10), server_hostname="api.test")
s.sendall(b"GET /h2c-" + sys.argv[2].encode() + b" HTTP/1.1\r\nHost: api.test\r\nUpgrade: h2c\r\n"
          b"Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
data = b""
while True:
    try:
        d = s.recv(65536)
    except Exception:
        break
    if not d:
        break
    data += d
head, _, rest = data.partition(b"\r\n\r\n")
print(head.decode("latin-1"))
if head.startswith(b"HTTP/1.1 101"):
    print(hpack.Decoder().decode(rest))
else:
    print(rest.decode("latin-1"))'
	run py_unguarded u <<<"$client"
	leaks "$output" || unprotected_failed "h2c: $output"
	run py_guarded g <<<"$client"
	[[ "$output" == "HTTP/1.1 400 Bad Request"* ]]
	[[ "$output" == *"Upgrade: h2c to api.test: only WebSocket upgrades are passed on"* ]]
	refute leaks "$output"
	refute grep -q '"/h2c-g"' "$E/records.jsonl"
	log_has '.reason == "upgrade" and .detail == "h2c"'
}

@test "what an API legitimately echoes stays usable (masked, valid JSON), and a streaming answer is not held back" {
	run guarded --http1.1 https://api.test/introspect
	[ "$(jq -r '.active, .scope' <<<"$output" | paste -sd' ')" = "true repo" ]
	[[ "$(jq -r .token <<<"$output")" =~ ^\*+$ ]]
	# the first event reaches the box while the server still waits to send the second
	local v gate pid i
	for v in --http1.1 ${H2:+--http2}; do
		gate=$E/gate.$RANDOM
		in_box curl -sS -N "$v" --max-time 20 "${RESOLVE[@]}" --cacert "$PUB/bundle.pem" "https://api.test/sse?gate=$gate" \
			>"$E/sse.out" 2>&1 &
		pid=$!
		for i in $(seq 200); do
			grep -q 'data: first' "$E/sse.out" && break
			sleep 0.05
		done
		grep -q 'data: first' "$E/sse.out" || fail "$v: the first event was held back"
		refute grep -q 'data: second' "$E/sse.out"
		touch "$gate"
		wait "$pid"
		grep -q 'data: second' "$E/sse.out"
	done
}
