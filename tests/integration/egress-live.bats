#!/usr/bin/env bats
# egress allow / egress deny: a running box's policy changed at once
# (agentbox-egress(8)). The little internet: the box joins netns ablive$$,
# whose resolver (dnsmasq, 198.18.40.53 on its lo) answers live.test and
# other.test with 198.18.40.9, a web server in a second netns behind a veth
# pair. Addresses: 198.18.40.0/24 only.

load helpers

setup() {
	requires root agentbox
	command -v dnsmasq >/dev/null || skip "needs dnsmasq"
	setup_bundle
	agent_policy default
	CONFIG=$TEST_DIR/agent.yaml
	: >"$CONFIG"
	local ns=ablive$$ srv=ablsrv$$
	ip netns add "$ns"
	defer ip netns delete "$ns"
	ip netns add "$srv"
	defer ip netns delete "$srv"
	ip -n "$ns" link set lo up
	ip -n "$ns" link add abl0 type veth peer name abl1 netns "$srv"
	ip -n "$ns" addr add 198.18.40.1/24 dev abl0
	ip -n "$ns" link set abl0 up
	ip -n "$srv" addr add 198.18.40.9/24 dev abl1
	ip -n "$srv" link set abl1 up
	ip -n "$srv" link set lo up
	ip -n "$ns" addr add 198.18.40.53/32 dev lo
	ip netns exec "$ns" dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root \
		--group=root --bind-interfaces --listen-address=198.18.40.53 --local=/test/ \
		--host-record=live.test,198.18.40.9,600 --host-record=other.test,198.18.40.9,600 \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	mkdir -p "$TEST_DIR/www"
	echo hello-live >"$TEST_DIR/www/index.html"
	ip netns exec "$srv" busybox httpd -f -p 198.18.40.9:8080 -h "$TEST_DIR/www" </dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	echo "nameserver 198.18.40.53" >"$BUNDLE/rootfs/etc/resolv.conf"
	update_config '(.linux.namespaces[] | select(.type == "network")) .path = "/run/netns/'"$ns"'"'
	# answers may point into the test range only when it is opened
	RUNTIME_ARGS=(--config "$CONFIG" --egress-internal 198.18.40.0/24)
}

teardown() {
	teardown_bundle
}

# start_box ID: a detached box that waits
start_box() {
	set_args abtest pause ready
	run_container "$1" --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
}

# fetch ID HOST: the page on HOST:8080, or "failed" (busybox's nc: its
# wget crashes in this rootfs)
fetch() {
	runtime exec "$1" sh -c "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 $2 8080 2>/dev/null | grep hello || echo failed"
}

egress_policy() { jq -r .egressPolicy "$ROOT/$1/state.json"; }
ruleset() { nsenter --net=/run/netns/ablive$$ nft list table inet agentbox | grep -v expires; }

@test "egress allow: a name allowed mid-run resolves and connects at once; egress deny closes it again at once" {
	printf 'egress: {live_may_widen: true}\n' >"$CONFIG"
	RUNTIME_ARGS+=(--egress-allow other.test)
	start_box lv
	# the server answers a name the policy allows: the setup works
	fetch lv other.test
	assert_output_contains hello-live
	fetch lv live.test
	assert_output_contains failed
	runtime exec lv nslookup live.test
	assert_output_contains NXDOMAIN
	runtime egress show lv
	refute_output_contains live.test
	runtime egress allow lv live.test
	assert_success
	[ -z "$output" ]
	runtime egress show lv
	assert_output_matches '^allow +other\.test'
	assert_output_matches $'\nallow +live\.test'
	assert_output_matches $'\ninternal +198\.18\.40\.0/24'
	runtime egress show --json lv
	[ "$(jq -c .allow <<<"$stdout")" = '["other.test","live.test"]' ] || fail "$stdout"
	# what the sentry learnt stays: other.test's address, carried into the new ruleset
	nsenter --net=/run/netns/ablive$$ nft list set inet agentbox dns_allow_v4 | grep -q 198.18.40.9 ||
		fail "the learnt address was lost"
	fetch lv live.test
	assert_output_contains hello-live
	[[ "$(egress_policy lv)" == *live.test* ]] || fail "not in the state: $(egress_policy lv)"
	runtime egress deny lv live.test other.test
	assert_success
	# refused at once: the lookup, and the address learnt before
	runtime exec lv nslookup live.test
	assert_output_contains NXDOMAIN
	fetch lv 198.18.40.9
	assert_output_contains failed
	refute_output_contains hello-live
	[[ "$(egress_policy lv)" == *"deny=live.test,other.test"* ]] || fail "$(egress_policy lv)"
	# both changes are on the record, while it runs and after delete
	runtime egress log lv
	assert_output_matches 'policy allow live\.test'
	assert_output_matches 'policy deny live\.test,other\.test'
	runtime delete --force lv
	runtime egress log --json lv
	jq -se 'map(select(.verdict == "policy")) | map(.change) == ["allow", "deny"]' <<<"$stdout" >/dev/null ||
		fail "after delete: $stdout"
}

@test "egress allow: an engine-run container's policy may only narrow unless the config says otherwise" {
	RUNTIME_ARGS+=(--egress-allow '*.test')
	update_config '.annotations["agentbox.egress.allow"] = "other.test"'
	start_box en
	local before
	before=$(ruleset)
	fetch en live.test
	assert_output_contains failed
	# beyond the runtime's allowlist: refused, nothing changed
	runtime egress allow en 198.18.40.9:8080
	assert_failure 1
	assert_one_error_line 'egress allow: entry "198\.18\.40\.9:8080" is not within the runtime.s allowlist for container "en": refused .*egress\.live_may_widen'
	[ "$(ruleset)" = "$before" ] || fail "the ruleset changed"
	[ "$(egress_policy en)" = "allow=other.test;deny=;internal=198.18.40.0/24" ] ||
		fail "$(egress_policy en)"
	fetch en 198.18.40.9
	assert_output_contains failed
	# within it (the annotation narrowed it to other.test): allowed
	runtime egress allow en live.test
	assert_success
	fetch en live.test
	assert_output_contains hello-live
	# the admin lets live changes widen: allowed
	printf 'egress: {live_may_widen: true}\n' >"$CONFIG"
	runtime egress allow en 198.18.40.9:8080
	assert_success
	runtime exec en sh -c 'nc -w 3 198.18.40.9 8080 </dev/null >/dev/null && echo connected'
	assert_output_contains connected
}

@test "egress allow/deny: a bad entry or a wrong container: one line, exit 1, nothing changed" {
	RUNTIME_ARGS+=(--egress-allow other.test)
	start_box bad
	local before policy
	before=$(ruleset)
	policy=$(egress_policy bad)
	runtime egress allow bad live.test 'not a name!'
	assert_failure 1
	assert_one_error_line 'egress allow: entry "not a name!": invalid character'
	runtime egress deny bad all
	assert_failure 1
	assert_one_error_line '"all" is not an entry'
	runtime egress allow bad
	assert_failure 1
	assert_one_error_line 'expected a container ID and at least one entry'
	runtime egress allow nosuch live.test
	assert_failure 1
	assert_one_error_line 'container "nosuch" does not exist'
	[ "$(ruleset)" = "$before" ] || fail "the ruleset changed"
	[ "$(egress_policy bad)" = "$policy" ]
	runtime egress log bad
	refute_output_contains policy
	# a stopped container has nothing to change
	runtime kill bad KILL
	wait_for_status bad stopped
	runtime egress deny bad other.test
	assert_failure 1
	assert_one_error_line 'is not running with its DNS sentry'
}

@test "egress allow: a named kit box is its user's: widened while it runs; kit ls --json gives its id" {
	export AGENTBOX_BOXES=$TEST_DIR/boxes
	cp -a "$TEST_ROOTFS" "$TEST_DIR/base"
	cat >"$TEST_DIR/live.yaml" <<-EOF
		name: ablive-kit
		rootfs: $TEST_DIR/base
		user: "0:0"
		network:
		  allow: ["198.18.40.9:8080"]
		command: [sh, -c, 'echo started; sleep 60']
	EOF
	RUNTIME_ARGS=()
	"$RUNTIME" --root "$ROOT" kit run --name ablk "$TEST_DIR/live.yaml" >"$TEST_DIR/kit.out" 2>&1 3>&- &
	local kitpid=$!
	defer kill $kitpid
	wait_for_line "$TEST_DIR/kit.out" '^started$'
	[ "$(jq -r .egressMayWiden "$ROOT/box-ablk/state.json")" = true ]
	runtime kit ls --json
	[ "$(jq -r '.[] | select(.name == "ablk") | .id' <<<"$stdout")" = box-ablk ]
	# beyond the kit's allowlist, with no config saying so: a kit box may
	runtime egress allow box-ablk 198.18.40.10:8080 live.test
	assert_success
	[[ "$(egress_policy box-ablk)" == "allow=198.18.40.9:8080,198.18.40.10:8080,live.test;"* ]] ||
		fail "$(egress_policy box-ablk)"
	runtime egress log box-ablk
	assert_output_matches 'policy allow 198\.18\.40\.10:8080,live\.test'
	runtime kill box-ablk KILL
	wait $kitpid || true
}

@test "egress deny: an established connection to a denied address ends too" {
	command -v socat >/dev/null || skip "needs socat"
	# a server on 198.18.40.9:9000 that appends what it gets to a host file
	ip netns exec ablsrv$$ socat -u TCP-LISTEN:9000,bind=198.18.40.9,reuseaddr OPEN:"$TEST_DIR/recv",creat,append \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	RUNTIME_ARGS+=(--egress-allow 198.18.40.9:9000)
	start_box ct
	"$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" exec ct sh -c \
		'i=0; while true; do echo line $i; i=$((i + 1)); sleep 0.1; done | nc 198.18.40.9 9000' \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	local i a b
	for ((i = 0; i < 100; i++)); do
		[ "$({ wc -l <"$TEST_DIR/recv"; } 2>/dev/null || echo 0)" -ge 3 ] && break
		sleep 0.1
	done
	[ "$(wc -l <"$TEST_DIR/recv")" -ge 3 ] || fail "the connection never carried anything"
	runtime egress deny ct 198.18.40.0/24
	assert_success
	# the flow is refused from its next packet on: nothing more arrives
	sleep 0.5
	a=$(wc -l <"$TEST_DIR/recv")
	sleep 1
	b=$(wc -l <"$TEST_DIR/recv")
	[ "$a" = "$b" ] || fail "still flowing after the deny: $a then $b lines"
	runtime egress log --json ct
	jq -se 'map(select(.dst == "198.18.40.9" and .port == 9000 and .reason == "denied")) | length > 0' \
		<<<"$stdout" >/dev/null || fail "the refused packets are not logged: $stdout"
}

@test "egress deny: an established connection to a denied name's addresses ends too" {
	command -v socat >/dev/null || skip "needs socat"
	ip netns exec ablsrv$$ socat -u TCP-LISTEN:9000,bind=198.18.40.9,reuseaddr OPEN:"$TEST_DIR/recv",creat,append \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	RUNTIME_ARGS+=(--egress-allow live.test:9000,other.test)
	start_box cn
	# by name: the box looked it up, the sentry learnt its address
	"$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" exec cn sh -c \
		'i=0; while true; do echo line $i; i=$((i + 1)); sleep 0.1; done | nc live.test 9000' \
		</dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	local i a b
	for ((i = 0; i < 100; i++)); do
		[ "$({ wc -l <"$TEST_DIR/recv"; } 2>/dev/null || echo 0)" -ge 3 ] && break
		sleep 0.1
	done
	[ "$(wc -l <"$TEST_DIR/recv")" -ge 3 ] || fail "the connection never carried anything"
	# a deny of another name cuts nothing: the flow goes on
	runtime egress deny cn other.test
	assert_success
	a=$(wc -l <"$TEST_DIR/recv")
	sleep 1
	b=$(wc -l <"$TEST_DIR/recv")
	[ "$b" -gt "$a" ] || fail "cut by a deny of another name: $a then $b lines"
	runtime egress deny cn live.test:9000
	assert_success
	# the flow is refused from its next packet on: nothing more arrives
	sleep 0.5
	a=$(wc -l <"$TEST_DIR/recv")
	sleep 1
	b=$(wc -l <"$TEST_DIR/recv")
	[ "$a" = "$b" ] || fail "still flowing after the deny: $a then $b lines"
	runtime egress log --json cn
	jq -se 'map(select(.dst == "198.18.40.9" and .port == 9000 and .verdict == "deny")) | length > 0' \
		<<<"$stdout" >/dev/null || fail "the refused packets are not logged: $stdout"
}

@test "egress log: a record of repeats carries the time of its first and last refusal, not of its write" {
	printf 'egress: {live_may_widen: true}\n' >"$CONFIG"
	start_box rp
	# refused five times, then allowed: the repeats are written later (at
	# the next flush, here the end), after the policy record
	runtime exec rp sh -c 'for i in 1 2 3 4 5; do nslookup -type=a live.test 198.18.40.53 >/dev/null 2>&1; done'
	runtime egress allow rp live.test
	assert_success
	runtime kill rp KILL
	local i
	for ((i = 0; i < 100; i++)); do
		jq -e 'select(.repeats)' "$ROOT/rp/egress.log" >/dev/null 2>&1 && break
		sleep 0.1
	done
	runtime egress log --json rp
	local policy_time rec
	policy_time=$(jq -r 'select(.verdict == "policy") | .time' <<<"$stdout")
	rec=$(jq -c 'select(.name == "live.test" and .repeats)' <<<"$stdout")
	[ -n "$policy_time" ] && [ -n "$rec" ] || fail "no policy record or no repeats: $stdout"
	# written after the policy record, about refusals made before it
	[ "$(jq -r .time <<<"$rec")" = "$(jq -r .first <<<"$rec")" ] || fail "time is not the first refusal: $rec"
	[[ "$(jq -r .last <<<"$rec")" < "$policy_time" ]] || fail "the last refusal is after the allow: $rec, $policy_time"
	[[ "$(jq -r .first <<<"$rec")" < "$(jq -r .last <<<"$rec")" ]] || fail "first is not before last: $rec"
	runtime egress log rp
	assert_output_matches "live\.test +not-allowed +\([0-9]+ more times, first 20[0-9T:.-]+Z, last 20[0-9T:.-]+Z\)"
}
