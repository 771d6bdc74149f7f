#!/usr/bin/env bats
# Attacks on header credentials and on the SNI check, from inside a kit box
# (issue 26). Each shows the attack working unprotected first: the same
# credential handed over as a variable (what kits did before the gateway),
# or the firewall off.
#
# Network: a namespace abgw-i$R ("inet") joined to the host's by a veth
# (198.19.98.1/30 here, .2 there) with HTTPS test hosts on 198.19.97.10
# (api.test) and 198.19.97.11 (other.test, a server that answers for any
# name, like a CDN front), their certificates from a test CA made here; a
# host route for 198.19.97.0/24 through the veth; slirp4netns carries the
# box there. Names abgw*, addresses from 198.19.96.0/20 only.

load helpers

setup() {
	requires root
	command -v slirp4netns >/dev/null || skip "needs slirp4netns"
	command -v openssl >/dev/null && command -v curl >/dev/null || skip "needs openssl and curl"
	setup_state_only
	GW_R=$(printf '%04x' $((RANDOM % 65536)))
	D=$TEST_DIR/gw
	BATS_TEST_DIRNAME_SAVED=$BATS_TEST_DIRNAME
	# the certificates and the echo server of the netfilter suite
	BATS_TEST_DIRNAME=$REPO_ROOT/tests/netfilter . "$REPO_ROOT/tests/netfilter/gateway-net.bash"
	BATS_TEST_DIRNAME=$BATS_TEST_DIRNAME_SAVED
	gw_certs "$D"
	NS=abgw-i$GW_R
	HV=abgw${GW_R}v
	ip netns add "$NS"
	defer ip netns del "$NS"
	ip link add "$HV" type veth peer name n0 netns "$NS"
	defer ip link del "$HV"
	ip addr add 198.19.98.1/30 dev "$HV"
	ip link set "$HV" up
	ip -n "$NS" addr add 198.19.98.2/30 dev n0
	ip -n "$NS" link set n0 up
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add 198.19.97.10/32 dev lo
	ip -n "$NS" addr add 198.19.97.11/32 dev lo
	ip -n "$NS" route add default via 198.19.98.1
	ip route add 198.19.97.0/24 via 198.19.98.2 dev "$HV"
	defer ip route del 198.19.97.0/24 via 198.19.98.2
	: >"$D/records.jsonl"
	ip netns exec "$NS" python3 "$REPO_ROOT/tests/netfilter/https-echo.py" --bind 198.19.97.10 --cert "$D/api.pem" \
		--key "$D/api.key" --record "$D/records.jsonl" --name api --ready "$D/r1" >/dev/null 2>&1 &
	defer kill $!
	ip netns exec "$NS" python3 "$REPO_ROOT/tests/netfilter/https-echo.py" --bind 198.19.97.11 --cert "$D/other.pem" \
		--key "$D/other.key" --record "$D/records.jsonl" --name other --ready "$D/r2" >/dev/null 2>&1 &
	defer kill $!
	local i
	for i in $(seq 100); do [ -e "$D/r1" ] && [ -e "$D/r2" ] && break; sleep 0.05; done
	export ABGW_SECRET="ghp_abgw${RANDOM}${RANDOM}${RANDOM}"
	export AGENTBOX_GATEWAY=${AGENTBOX_GATEWAY:-$REPO_ROOT/agentbox-gateway}
}

teardown() {
	teardown_bundle
}

# kit_file TO: a kit whose credential goes to TO (env or header)
kit_file() {
	local extra=""
	[ "$1" = header ] && extra=$'    to: header\n    hosts: [api.test]\n    header: "Authorization: Bearer {}"\n    env: GITHUB_TOKEN'
	[ "$1" = env ] && extra=$'    to: env'
	cat >"$TEST_DIR/kit-$1.yaml" <<EOF
rootfs: host
network:
  allow: [api.test, other.test, 198.19.97.10, 198.19.97.11]
  # these tests pin addresses (curl --resolve) and check the redirected
  # path; the box's HTTP proxy would look the names up itself (kit-proxy.bats)
  proxy: false
credentials:
  - name: GITHUB_TOKEN
    from: env:ABGW_SECRET
$extra
files:
  - path: /etc/abgw/test-ca.pem
    source: $D/ca.pem
upstream_ca: $D/ca.pem
EOF
	echo "$TEST_DIR/kit-$1.yaml"
}

# box KIT SCRIPT: run SCRIPT in a box of KIT
box() {
	run timeout 120 "$RUNTIME" --root "$ROOT" kit run "$1" -- sh -c "$2"
}

# the search an attacker in the box would run for the secret: every
# process's environment and command line, and every file it may read
# outside the host's read-only /usr
FIND_SECRET='
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do grep -l "$ABGW_NEEDLE" "$f" 2>/dev/null; done
grep -rl --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=dev "$ABGW_NEEDLE" / 2>/dev/null
echo searched'

@test "gateway: the secret is nowhere in the box (handed over as a variable, the agent reads it)" {
	# unprotected: the credential as a variable, as kits had it
	box "$(kit_file env)" "ABGW_NEEDLE=\$GITHUB_TOKEN; $FIND_SECRET"
	[ "$status" -eq 0 ]
	[[ "$output" == *"/environ"* ]] || unprotected_failed "a variable credential not found in the box's environment"
	# protected: a header credential; the search finds nothing, and the
	# variable holds a placeholder the agent may use as it likes
	# the needle goes in encoded, so that the script's own command line
	# (the box's pid 1) does not hold it
	local needle
	needle=$(printf %s "$ABGW_SECRET" | base64 -w0)
	box "$(kit_file header)" "ABGW_NEEDLE=\$(echo $needle | base64 -d); echo \"var=\$GITHUB_TOKEN\"; $FIND_SECRET; ls /run/agentbox /run/agentbox-kits 2>&1 | sed 's/^/ls: /' | head -3"
	[ "$status" -eq 0 ]
	[[ "$output" == *"var=agentbox-credential-placeholder-GITHUB_TOKEN"* ]]
	[[ "$output" == *searched* ]]
	! grep -q "/environ\|/cmdline\|^/" <<<"$(grep -v '^ls:' <<<"$output" | grep -v 'var=\|searched')" || fail "succeeded, must not: grep -q \"/environ\\|/cmdline\\|^/\" <<<\"\$(grep -v '^ls:' <<<..."
	[[ "$output" != *"$ABGW_SECRET"* ]]
}

@test "gateway: curl and python in the box reach the host with the credential, which the server gets" {
	box "$(kit_file header)" '
curl -sS --max-time 20 --resolve api.test:443:198.19.97.10 -H "Authorization: Bearer stolen-or-fake" https://api.test/curl -o /dev/null -w "curl %{http_code}\n"
sleep 2   # the sentry gives its inherited memory back after a quiet second: nothing of the check may go with it
python3 -c "
import socket, urllib.request
o = socket.getaddrinfo
socket.getaddrinfo = lambda h, *a, **k: o(\"198.19.97.10\" if h == \"api.test\" else h, *a, **k)
print(\"python\", urllib.request.urlopen(\"https://api.test/python\", timeout=20).status)"'
	[ "$status" -eq 0 ]
	[[ "$output" == *"curl 200"* ]] && [[ "$output" == *"python 200"* ]]
	[ "$(jq -r 'select(.path == "/curl") | .headers.authorization[0]' "$D/records.jsonl")" = "Bearer $ABGW_SECRET" ]
	[ "$(jq -r 'select(.path == "/python") | .headers.authorization[0]' "$D/records.jsonl")" = "Bearer $ABGW_SECRET" ]
	# the use is logged, by host and name, never the value
	[[ "$output" != *"$ABGW_SECRET"* ]]
}

@test "gateway: an allowed host without a credential arrives unchanged; the credential never goes there" {
	box "$(kit_file header)" '
curl -sS --max-time 20 --cacert /etc/abgw/test-ca.pem --resolve other.test:443:198.19.97.11 https://other.test/plain -o /dev/null -w "%{http_code}\n"
curl -sS --max-time 20 --cacert /etc/abgw/test-ca.pem --resolve other.test:443:198.19.97.11 -H "Authorization: Bearer own" https://other.test/own -o /dev/null -w "%{http_code}\n"'
	[ "$status" -eq 0 ]
	[ "$(jq -c 'select(.path == "/plain") | .headers | has("authorization")' "$D/records.jsonl")" = false ]
	[ "$(jq -r 'select(.path == "/own") | .headers.authorization[0]' "$D/records.jsonl")" = "Bearer own" ]
}

@test "gateway: a newcomer's two mistakes are explained: a host network.allow lacks, a private CA not given" {
	cat >"$TEST_DIR/kit-newcomer.yaml" <<EOF
rootfs: host
network:
  allow: [api.test, 198.19.97.10]
  proxy: false    # curl's --resolve pin: a proxy would look the name up itself
credentials:
  - name: GITHUB_TOKEN
    from: env:ABGW_SECRET
    to: header
    hosts: [api.test, uploads.test]
    header: "Authorization: Bearer {}"
EOF
	box "$TEST_DIR/kit-newcomer.yaml" 'curl -sS --max-time 20 --resolve api.test:443:198.19.97.10 https://api.test/newcomer -w "\n%{http_code}\n"'
	# the host it can never reach: one warning, before the box runs
	[ "$(grep -c 'warning: credential GITHUB_TOKEN: uploads.test is not allowed on TCP/443' <<<"$output")" = 1 ]
	if grep -q 'credential GITHUB_TOKEN: api.test is not allowed' <<<"$output"; then fail "a warning for an allowed host"; fi
	# the test CA is no upstream_ca here: the box reads why and what to do, not a reset
	[[ "$output" == *"the certificate of api.test could not be verified"*"upstream_ca"*$'\n502'* ]]
	# and the run's summary says it too
	grep -q '^  https 198\.19\.97\.10:443 (api\.test)  upstream-unverified: .*upstream_ca (agentbox-kit(5))' <<<"$output"
	! grep -q '"/newcomer"' "$D/records.jsonl" || fail "succeeded, must not: grep -q '\"/newcomer\"' \"\$D/records.jsonl\""
}

@test "SNI: an allowed address asked for a name not allowed (one server, many names) is refused and logged" {
	local probe='curl -sS --max-time 20 -k --resolve evil.test:443:198.19.97.11 https://evil.test/fronted -o /dev/null -w "%{http_code}\n"'
	# unprotected: the firewall off, the server answers for evil.test
	run timeout 120 "$RUNTIME" --root "$ROOT" --egress-allow all kit run "$(kit_file env)" -- sh -c "$probe"
	[[ "$output" == *200* ]] || unprotected_failed "the test host did not answer for evil.test"
	# protected: the address is allowed, the name is not
	box "$(kit_file env)" "$probe"
	[[ "$output" != *200* ]]
	[[ "$output" == *"tls  198.19.97.11:443 (evil.test)  not-allowed"* ]]
}

@test "gateway: the box cannot reach the gateway: not in its pid namespace, no socket of it, no redirect without a destination" {
	box "$(kit_file header)" '
n=0; for p in /proc/[0-9]*; do grep -qx agentbox-gatewa $p/comm 2>/dev/null && n=$((n+1)); done; echo "seen $n"
echo "unix $(grep -c gateway /proc/net/unix)"
curl -sS --max-time 5 -k https://127.0.0.1:61443/ -o /dev/null -w "direct %{http_code}\n" 2>/dev/null'
	[[ "$output" == *"seen 0"* ]]
	[[ "$output" == *"unix 0"* ]]
	[[ "$output" == *"direct 000"* ]]
}

@test "gateway: its memory is out of reach even of its own uid (a dumpable process of that uid is not)" {
	local kitf
	kitf=$(kit_file header)
	"$RUNTIME" --root "$ROOT" kit run "$kitf" -- sleep 30 >/dev/null 2>&1 &
	local runpid=$! gp="" i
	for i in $(seq 200); do
		gp=$(pgrep -f '^agentbox-gateway' | head -1 || true)
		[ -n "$gp" ] && break
		sleep 0.05
	done
	[ -n "$gp" ]
	# unprotected: a process of the same uid reads another's memory and environment
	ABGW_VICTIM=$ABGW_SECRET setpriv --reuid 65534 --regid 65534 --clear-groups sleep 30 &
	local victim=$!
	sleep 0.3
	run setpriv --reuid 65534 --regid 65534 --clear-groups cat "/proc/$victim/environ"
	kill "$victim"
	[[ "$output" == *"$ABGW_SECRET"* ]] || unprotected_failed "a same-uid process could not read a dumpable one's environment"
	# the gateway: not dumpable, so no one but root with CAP_SYS_PTRACE
	grep -q '^Uid:	65534' "/proc/$gp/status"
	run setpriv --reuid 65534 --regid 65534 --clear-groups cat "/proc/$gp/environ"
	[ "$status" -ne 0 ]
	run setpriv --reuid 65534 --regid 65534 --clear-groups cat "/proc/$gp/maps"
	[ "$status" -ne 0 ]
	kill "$runpid"
	wait "$runpid" || true
}

@test "gateway: killed from outside, the credential host fails closed while other hosts still work" {
	local kitf
	kitf=$(kit_file header)
	"$RUNTIME" --root "$ROOT" kit run "$kitf" -- sh -c '
curl -sS --max-time 20 --resolve api.test:443:198.19.97.10 https://api.test/first -o /dev/null -w "first %{http_code}\n"
sleep 3
curl -sS --max-time 10 --resolve api.test:443:198.19.97.10 https://api.test/after -o /dev/null -w "after %{http_code}\n"
curl -sS --max-time 10 --cacert /etc/abgw/test-ca.pem --resolve other.test:443:198.19.97.11 https://other.test/still -o /dev/null -w "other %{http_code}\n"' >"$TEST_DIR/out" 2>&1 &
	local runpid=$! i gp=""
	for i in $(seq 400); do
		grep -q first "$TEST_DIR/out" && break
		sleep 0.05
	done
	# this box's gateway (another run's on the machine is none of ours)
	gp=$(jq -r '.gatewayPid // empty' "$ROOT"/kit-*/state.json | head -1)
	[ -n "$gp" ] && [ "$gp" -gt 0 ]
	kill -9 "$gp"
	wait "$runpid" || true
	cat "$TEST_DIR/out"
	grep -q "first 200" "$TEST_DIR/out"      # it worked while the gateway ran
	grep -q "after 000" "$TEST_DIR/out"
	grep -q "other 200" "$TEST_DIR/out"
	! jq -e 'select(.path == "/after")' "$D/records.jsonl" || fail "succeeded, must not: jq -e 'select(.path == \"/after\")' \"\$D/records.jsonl\""
	grep -q "tls  198.19.97.10:443 (api.test)  gateway-unavailable" "$TEST_DIR/out"
}

# An engine's container (create/start, config.yaml's credentials): its own
# network namespace joined to the test hosts by a veth (198.19.99.0/30),
# the host's /usr and /etc/ssl bound in for curl and a CA bundle.
engine_bundle() {
	local saved=("${TEARDOWN_CMDS[@]}") saved_root=$ROOT saved_dir=$TEST_DIR
	setup_bundle
	TEARDOWN_CMDS=("${saved[@]}" "${TEARDOWN_CMDS[@]}")
	ln -s usr/lib "$BUNDLE/rootfs/lib"
	ln -s usr/lib64 "$BUNDLE/rootfs/lib64"
	mkdir -p "$BUNDLE/rootfs/etc/ssl"
	add_mount /usr bind /usr rbind ro
	add_mount /etc/ssl bind /etc/ssl rbind ro
	printf '%s\n' "$ABGW_SECRET" >"$TEST_DIR/github.secret"
	chmod 0600 "$TEST_DIR/github.secret"
	cat >"$TEST_DIR/agent.yaml" <<EOC
credentials:
  - name: GITHUB_TOKEN
    from: file:$TEST_DIR/github.secret
    to: header
    hosts: [api.test]
    header: "Authorization: Bearer {}"
    env: GITHUB_TOKEN
  - name: OTHER
    from: file:$TEST_DIR/github.secret
    to: header
    hosts: [other.test]
    header: "X-Key: {}"
gateway:
  upstream_ca: $D/ca.pem
EOC
	RUNTIME_ARGS=(--config "$TEST_DIR/agent.yaml" --credentials GITHUB_TOKEN --egress-allow api.test,198.19.97.10)
}

# the container's network, once it is created
engine_net() {
	local pid=$1
	ip link add "abgw${GW_R}c" netns "$NS" type veth peer name eth0 netns "$pid"
	ip -n "$NS" addr add 198.19.99.1/30 dev "abgw${GW_R}c"
	ip -n "$NS" link set "abgw${GW_R}c" up
	nsenter --net="/proc/$pid/ns/net" ip addr add 198.19.99.2/30 dev eth0
	nsenter --net="/proc/$pid/ns/net" ip link set eth0 up
	nsenter --net="/proc/$pid/ns/net" ip route add default via 198.19.99.1
}

@test "gateway: an engine's container gets config.yaml's credential through --credentials, and delete stops the gateway" {
	engine_bundle
	# two connections with the credential, two with a name not allowed (the
	# deny log: one record each, and the second counted as a repeat)
	set_args sh -c 'echo "var=$GITHUB_TOKEN"; for p in engine again; do /usr/bin/curl -sS --max-time 20 --resolve api.test:443:198.19.97.10 https://api.test/$p -o /dev/null -w "$p %{http_code}\n"; done
for p in 1 2; do /usr/bin/curl -sS --max-time 20 -k --resolve evil.test:443:198.19.97.10 https://evil.test/ -o /dev/null -w "evil %{http_code}\n"; done'
	create_container gw-engine
	[ "$status" -eq 0 ]
	local pid gp
	pid=$(state_field gw-engine .pid)
	gp=$(jq -r .gatewayPid "$ROOT/gw-engine/state.json")
	[ "$gp" -gt 0 ] && kill -0 "$gp"
	engine_net "$pid"
	runtime start gw-engine
	wait_for_status gw-engine stopped
	grep -q "var=agentbox-credential-placeholder-GITHUB_TOKEN" "$CT_STDOUT"
	grep -q "engine 200" "$CT_STDOUT" && grep -q "again 200" "$CT_STDOUT"
	[ "$(grep -c "evil 000" "$CT_STDOUT")" = 2 ]
	[ "$(jq -r 'select(.path == "/engine") | .headers.authorization[0]' "$D/records.jsonl")" = "Bearer $ABGW_SECRET" ]
	# the sentry writes its last records (the repeats) when the container ends
	wait_gone "$(jq -r .sentryPid "$ROOT/gw-engine/state.json")"
	local log=$ROOT/gw-engine/egress.log
	cat "$log" >&2
	jq -se 'map(select(.verdict == "credential" and .proto == "https" and .name == "api.test" and .credential == "GITHUB_TOKEN"
		and .dst == "198.19.97.10" and .port == 443)) | length == 2 and .[0].repeats == null and .[1].repeats == 1' "$log"
	jq -se 'map(select(.proto == "tls" and .name == "evil.test" and .reason == "not-allowed" and .dst == "198.19.97.10"))
		| length == 2 and .[0].repeats == null and .[1].repeats == 1' "$log"
	# and as agentbox egress log shows them
	runtime egress log gw-engine
	[ "$status" -eq 0 ]
	grep -Eq 'credential +https +198\.19\.97\.10:443 +api\.test +credential GITHUB_TOKEN$' <<<"$output"
	assert_output_matches 'credential +https +198\.19\.97\.10:443 +api\.test +credential GITHUB_TOKEN +\(1 more times, first [0-9T:.-]+Z, last [0-9T:.-]+Z\)'
	assert_output_matches 'deny +tls +198\.19\.97\.10:443 +evil\.test +not-allowed'
	! grep -rq "$ABGW_SECRET" "$ROOT/gw-engine/" || fail "succeeded, must not: grep -rq \"\$ABGW_SECRET\" \"\$ROOT/gw-engine/\""
	runtime delete gw-engine
	[ "$status" -eq 0 ]
	wait_gone "$gp" || fail "the gateway $gp outlived its container"
	assert_nothing_left
}

@test "gateway: an annotation may only narrow the runtime's credentials: a wider one is one clear error and leaves nothing" {
	engine_bundle
	# unprotected (the admin allowed annotations to choose): the workload takes OTHER
	update_config '.annotations["agentbox.credentials"] = "OTHER"'
	sed -i 's/^gateway:/gateway:\n  annotations_may_select: true/' "$TEST_DIR/agent.yaml"
	create_container gw-wide
	[ "$status" -eq 0 ] || unprotected_failed "an annotation could not choose a credential the admin let it"
	runtime delete --force gw-wide
	# protected (the default): refused with one line naming the annotation
	sed -i '/annotations_may_select/d' "$TEST_DIR/agent.yaml"
	create_container gw-narrow
	[ "$status" -eq 1 ]
	assert_one_error_line 'annotation agentbox.credentials: credential "OTHER" is not one this runtime gives: refused'
	assert_nothing_left
	! pgrep -f '^agentbox-gateway' >/dev/null || fail "succeeded, must not: pgrep -f '^agentbox-gateway' >/dev/null"
}

@test "gateway: header credentials in a network namespace another container polices are refused, not silently dropped" {
	engine_bundle
	# the namespace's owner: a container of the same policy without credentials
	local netns=abgw-shared$GW_R
	ip netns add "$netns"
	defer ip netns del "$netns"
	update_config '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)' \
		--arg p "/run/netns/$netns"
	set_args sleep 100
	RUNTIME_ARGS=(--config "$TEST_DIR/agent.yaml" --credentials none --egress-allow api.test,198.19.97.10)
	create_container gw-owner
	[ "$status" -eq 0 ] || fail "the namespace's owner: $output"
	# the joiner asks for a credential: its gateway would never see a connection
	update_config '.linux.cgroupsPath += "-joiner"'
	RUNTIME_ARGS=(--config "$TEST_DIR/agent.yaml" --credentials GITHUB_TOKEN --egress-allow api.test,198.19.97.10)
	create_container gw-joiner
	assert_failure 1
	assert_one_error_line "credential gateway: header credentials need a network namespace this container's own firewall polices; /run/netns/$netns is policed by another container's: refused"
	[ ! -e "$ROOT/gw-joiner" ] || fail "the refused container left its state"
	runtime delete --force gw-owner
}
