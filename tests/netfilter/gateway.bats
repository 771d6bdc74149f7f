#!/usr/bin/env bats
# The SNI check and the credential gateway, through their driver
# (gateway-driver: the sentry's SNI proxy and agentbox-gateway, started as
# the runtime starts it) on the little internet of gateway-net.bash. TCP/443
# of the "box" namespace is redirected to the driver as the ruleset does.
#
# Needs root, python3, openssl, curl, nghttpd (nghttp2-server), jq, and
# `make tests/netfilter/gateway-driver`.

load gateway-net

setup_file() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	for t in openssl curl nghttpd jq python3; do
		command -v "$t" >/dev/null || skip "needs $t"
	done
	[ -x "$GW_DRIVER" ] || skip "build tests/netfilter/gateway-driver first"
	export GW_D=$BATS_FILE_TMPDIR/net
	gw_certs "$GW_D"
	gw_net_up
	mkdir -p "/etc/netns/abgw-b$GW_R"
	printf '198.19.96.10 api.test\n198.19.96.11 other.test evil.test\n198.19.96.12 h2.test\n198.19.96.13 rogue.test\n' \
		>"/etc/netns/abgw-b$GW_R/hosts"
	gw_servers_up "$GW_D"
	gw_redirect 8443
	export AGENTBOX_GATEWAY=${AGENTBOX_GATEWAY:-$BATS_TEST_DIRNAME/../../agentbox-gateway}
}

teardown_file() {
	gw_net_down
	[ -n "${GW_R:-}" ] && rm -rf "/etc/netns/abgw-b$GW_R"
}

setup() {
	T=$BATS_TEST_TMPDIR
	export GH_SECRET="ghp_abgw$RANDOM$RANDOM"
}

teardown() {
	[ -n "${DRIVER_PID:-}" ] && kill "$DRIVER_PID" 2>/dev/null && wait "$DRIVER_PID" 2>/dev/null
	true
}

# start_driver POLICY [driver options]: the proxy (and the gateway, with --cred)
start_driver() {
	local policy=$1
	shift
	# ip netns exec execs the driver: $! is the driver
	ip netns exec "abgw-b$GW_R" "$GW_DRIVER" 8443 "$policy" "$T/log.jsonl" --ca-out "$T/boxca.pem" "$@" \
		>"$T/driver.out" 2>"$T/driver.err" &
	DRIVER_PID=$!
	local i
	for i in $(seq 100); do
		grep -q ready "$T/driver.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$T/driver.out" || { cat "$T/driver.err" >&2; return 1; }
	cat "$GW_D/ca.pem" >"$T/bundle.pem"
	[ -s "$T/boxca.pem" ] && cat "$T/boxca.pem" >>"$T/bundle.pem"
	true
}

with_cred() {
	start_driver "allow=api.test,other.test,h2.test,198.19.96.13;deny=" --upstream-ca "$GW_D/ca.pem" \
		--cred GITHUB_TOKEN api.test,h2.test "Authorization: Bearer {}" GH_SECRET "$@"
}

box_curl() { gw_box curl -sS --max-time 20 --cacert "$T/bundle.pem" "$@"; }
last_record() { tail -n 1 "$GW_D/records.jsonl"; }
log_has() { jq -se "map(select($1)) | length > 0" "$T/log.jsonl" >/dev/null; }

@test "curl over HTTP/1.1 gets the credential's header in place of its own" {
	with_cred
	run box_curl -H "Authorization: Bearer placeholder" https://api.test/one
	[ "$status" -eq 0 ]
	run last_record
	[ "$(jq -c '.headers.authorization' <<<"$output")" = "[\"Bearer $GH_SECRET\"]" ]
	[ "$(jq -r '.server' <<<"$output")" = api ]
	# the box's CA is name-constrained to the credential's hosts
	openssl x509 -in "$T/boxca.pem" -noout -text | grep -A3 'Name Constraints' | grep -q 'DNS:api.test'
	log_has '.verdict == "credential" and .name == "api.test" and .credential == "GITHUB_TOKEN"'
	! grep -q "$GH_SECRET" "$T/log.jsonl" || return 1    # a bare "! CMD" would not fail the test
}

@test "python urllib and IPv6 get it too; keep-alive requests each carry it" {
	with_cred
	gw_box env SSL_CERT_FILE="$T/bundle.pem" python3 -c '
import urllib.request
for p in ("/py1", "/py2"):
    urllib.request.urlopen("https://api.test" + p, timeout=10).read()'
	[ "$(grep -c "\"Bearer $GH_SECRET\"" "$GW_D/records.jsonl")" -ge 2 ]
	run box_curl --resolve "api.test:443:[2001:db8:1996::10]" https://api.test/v6a https://api.test/v6b -o /dev/null -o /dev/null
	[ "$status" -eq 0 ]
	[ "$(tail -n 2 "$GW_D/records.jsonl" | jq -r '.server + " " + .headers.authorization[0]' | sort -u)" = "api6 Bearer $GH_SECRET" ]
}

@test "HTTP/2 (ALPN h2 end to end) gets it, as a never-indexed header; 40 streams at once work" {
	with_cred
	: >"$GW_D/h2.log"
	run box_curl --http2 -w '%{http_version}' -o /dev/null https://h2.test/index.html
	[ "$status" -eq 0 ] && [ "$output" = 2 ]
	grep -a "recv (stream_id=1, sensitive) authorization: Bearer $GH_SECRET" "$GW_D/h2.log"
	run box_curl --http2 --parallel --parallel-max 40 $(for i in $(seq 40); do echo "https://h2.test/index.html -o /dev/null"; done) -w '%{http_code}\n'
	[ "$status" -eq 0 ]
	[ "$(grep -c '^200$' <<<"$output")" -eq 40 ]
}

@test "large uploads stream through whole: 50 MB with Content-Length and chunked, 5 MB over HTTP/2" {
	with_cred
	head -c 50000000 /dev/urandom >"$T/big"
	local sha
	sha=$(sha256sum "$T/big" | cut -d' ' -f1)
	run box_curl --data-binary @"$T/big" https://api.test/up
	[ "$(jq -r '.body_len, .body_sha256' <<<"$output" | paste -sd' ')" = "50000000 $sha" ]
	run box_curl -H 'Transfer-Encoding: chunked' --data-binary @"$T/big" https://api.test/upc
	[ "$(jq -r '.body_len, .body_sha256' <<<"$output" | paste -sd' ')" = "50000000 $sha" ]
	: >"$GW_D/h2.log"
	head -c 5000000 /dev/urandom >"$T/mid"
	run box_curl --http2 --data-binary @"$T/mid" -o /dev/null -w '%{http_version}' https://h2.test/index.html
	[ "$output" = 2 ]
	[ "$(grep -a 'recv DATA' "$GW_D/h2.log" | sed 's/.*length=\([0-9]*\).*/\1/' | paste -sd+ | bc)" -eq 5000000 ]
}

@test "a WebSocket upgrade becomes a tunnel once the server says 101" {
	with_cred
	run gw_box python3 - "$T/bundle.pem" <<'EOF'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
s = ctx.wrap_socket(socket.create_connection(("198.19.96.10", 443), timeout=10), server_hostname="api.test")
s.sendall(b"GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
print(buf.split(b"\r\n")[0].decode())
msg = bytes(range(256)) * 4096          # 1 MiB of frames, any bytes
s.sendall(msg)
got = buf.split(b"\r\n\r\n", 1)[1]
while len(got) < len(msg):
    got += s.recv(65536)
print("echoed" if got == msg else "mismatch")
EOF
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "HTTP/1.1 101 Switching Protocols" ]
	[ "${lines[1]}" = echoed ]
	jq -e 'select(.path == "/ws") | .headers.authorization == ["Bearer '"$GH_SECRET"'"]' "$GW_D/records.jsonl"
}

@test "an allowed host without a credential arrives unchanged, spliced, never terminated" {
	with_cred
	run box_curl --cacert "$GW_D/ca.pem" -H 'Authorization: Bearer mine' https://other.test/plain
	[ "$status" -eq 0 ]
	[ "$(last_record | jq -c '[.server, .headers.authorization]')" = '["other",["Bearer mine"]]' ]
	# the box saw the real server's certificate, not one of its own CA
	run gw_box bash -c "openssl s_client -connect other.test:443 -servername other.test </dev/null 2>/dev/null | openssl x509 -noout -issuer"
	[[ "$output" == *"abgw test CA"* ]]
}

@test "a request for another name on a terminated connection is refused (421), without the credential" {
	with_cred
	local before
	before=$(wc -l <"$GW_D/records.jsonl")
	run box_curl -H 'Host: other.test' https://api.test/fronted
	[[ "$output" == *"refused by the agentbox credential gateway"* ]]
	[ "$(wc -l <"$GW_D/records.jsonl")" -eq "$before" ]
	log_has '.verdict == "deny" and .reason == "host-mismatch" and .detail == "other.test"'
	run box_curl --http2 -H 'Host: other.test' -w '%{http_code}' -o /dev/null https://h2.test/index.html
	[ "$output" = 421 ]
}

@test "the SNI check: a name not allowed is refused and logged by name; no name only for a CIDR-allowed address" {
	start_driver "allow=api.test,198.19.96.13;deny="
	# the same server answers for evil.test when nothing checks (no redirect)
	run gw_box ip netns exec "abgw-b$GW_R" true
	run box_curl --cacert "$GW_D/ca.pem" --resolve other.test:443:198.19.96.11 https://other.test/
	[ "$status" -ne 0 ]
	log_has '.reason == "not-allowed" and .name == "other.test" and .dst == "198.19.96.11" and .port == 443'
	run box_curl -k https://198.19.96.11/nameless
	[ "$status" -ne 0 ]
	log_has '.reason == "no-name" and .dst == "198.19.96.11" and (has("name") | not)'
	run box_curl -k https://198.19.96.13/cidr
	[ "$status" -eq 0 ]
	# a name on a CIDR-allowed address must still be an allowed name
	run box_curl -k --resolve rogue.test:443:198.19.96.13 https://rogue.test/
	[ "$status" -ne 0 ]
	log_has '.reason == "not-allowed" and .name == "rogue.test"'
	# not TLS at all on 443
	run gw_box bash -c 'exec 3<>/dev/tcp/198.19.96.13/443; printf "GET / HTTP/1.0\r\n\r\n" >&3; cat <&3'
	log_has '.reason == "not-tls"'
}

@test "the SNI check: a deny entry refuses a name a wildcard allows, logged as denied" {
	start_driver "allow=*.test;deny=other.test"
	# one server (198.19.96.11) with a certificate for both names
	run box_curl --cacert "$GW_D/ca.pem" --resolve api.test:443:198.19.96.11 https://api.test/wild -o /dev/null -w '%{http_code}'
	[ "$output" = 200 ]
	run box_curl --cacert "$GW_D/ca.pem" --resolve other.test:443:198.19.96.11 https://other.test/denied
	[ "$status" -ne 0 ]
	! jq -e 'select(.path == "/denied")' "$GW_D/records.jsonl" >/dev/null || return 1    # a bare "! CMD" would not fail the test
	log_has '.proto == "tls" and .reason == "denied" and .name == "other.test" and .dst == "198.19.96.11"'
}

@test "the real server is verified: a credential host answering with another CA's certificate gets nothing" {
	with_cred
	run box_curl --resolve api.test:443:198.19.96.13 -w '\n%{http_code}' https://api.test/stolen
	if grep -q '"/stolen"' "$GW_D/records.jsonl"; then echo "the request reached the server" >&2; false; fi
	# the box is told why, and what to do (where a reset told it nothing)
	[[ "$output" == *$'\n502' ]]
	[[ "$output" == *"the certificate of api.test could not be verified"*"give its certificate authority to upstream_ca in the kit"* ]]
	log_has '.reason == "upstream-unverified" and .name == "api.test" and (.detail | test("upstream_ca"))'
	# a server that is not there: the same, with the connection's error
	run box_curl --resolve api.test:443:198.19.96.1 -w '\n%{http_code}' https://api.test/nobody
	[[ "$output" == *"api.test (198.19.96.1) could not be reached: Connection refused"*$'\n502' ]]
	log_has '.reason == "upstream-connect" and .detail == "Connection refused"'
}

@test "the gateway gone (killed, or never reachable), credential hosts fail closed and others still work" {
	with_cred
	kill -9 "$(awk '{print $2}' "$T/driver.out")"
	run box_curl https://api.test/after
	[ "$status" -ne 0 ]
	log_has '.reason == "gateway-unavailable" and .name == "api.test"'
	run box_curl --cacert "$GW_D/ca.pem" https://other.test/still -o /dev/null -w '%{http_code}'
	[ "$output" = 200 ]
}

@test "the gateway holds no capability, is not dumpable, runs as nobody in an empty root, the secret in no file" {
	with_cred
	local gp
	gp=$(awk '{print $2}' "$T/driver.out")
	grep -q '^CapEff:	0000000000000000' "/proc/$gp/status"
	grep -q '^CapBnd:	0000000000000000' "/proc/$gp/status"
	grep -q '^Uid:	65534	65534	65534	65534' "/proc/$gp/status"
	[ "$(stat -c %U "/proc/$gp/mem")" = root ]           # not dumpable: root owns its files
	[ "$(ls "/proc/$gp/root/" | wc -l)" -eq 0 ]
	! tr '\0' '\n' <"/proc/$gp/environ" 2>/dev/null | grep -q "$GH_SECRET" || return 1    # a bare "! CMD" would not fail the test
	! tr '\0' ' ' <"/proc/$gp/cmdline" | grep -q "$GH_SECRET" || return 1    # a bare "! CMD" would not fail the test
	# no file open but the host's trust bundle, read-only (read again when an
	# issuer is first asked for: tls.c): its records for the deny log go to
	# the sentry (here the driver) on the hand-off socket, its only one
	# besides epoll's
	local fds
	fds=$(ls -l "/proc/$gp/fd/")
	grep -q 'socket:' <<<"$fds"
	! grep -v -e 'socket:' -e 'anon_inode:' -e '/dev/null' -e '^total' -e '^lr-x.* /etc/ssl/certs/ca-certificates\.crt$' <<<"$fds" || return 1    # a bare "! CMD" would not fail the test
	# nobody may ptrace it, even its own uid
	run setpriv --reuid 65534 --regid 65534 --clear-groups cat "/proc/$gp/mem"
	[ "$status" -ne 0 ]
}
