#!/usr/bin/env bats
# The durable egress log (agentbox-egress(7), "The durable log"): a container's
# refused attempts kept after delete, bounded per container and as a whole,
# out of the box's reach. The test build writes it to $AGENTBOX_LOG_DIR (a dir
# of the test's own, helpers.bash). Addresses: 198.18.40.0/24, only on a veth
# pair inside a network namespace the test makes (no packet leaves it).

load helpers

setup() {
	requires root agentbox test_hooks
	setup_bundle
	agent_policy default
	CONFIG=$TEST_DIR/agent.yaml
}

teardown() {
	teardown_bundle
}

# routed_netns: the container joins a netns of its own with a route to
# 198.18.40.0/24 (a veth pair inside it), so a packet there meets the firewall
routed_netns() {
	local ns=abdeny$$
	ip netns add "$ns"
	defer ip netns delete "$ns"
	ip -n "$ns" link add abd0 type veth peer name abd1
	ip -n "$ns" addr add 198.18.40.1/24 dev abd0
	ip -n "$ns" link set abd0 up
	ip -n "$ns" link set abd1 up
	update_config '(.linux.namespaces[] | select(.type == "network")) .path = "/run/netns/'"$ns"'"'
}

# log_dir ID: the container's durable log directory
log_dir() { echo "$AGENTBOX_LOG_DIR/$1"; }

@test "deny log: the refused attempts are read after delete, as they were while it ran" {
	routed_netns
	set_args sh -c 'nc -w 1 198.18.40.9 8080 </dev/null; echo rc=$?'
	run_container dl1 --keep
	assert_success
	assert_output_contains "rc=1"
	runtime egress log dl1
	assert_success
	local before=$stdout
	[[ "$before" == *"198.18.40.9:8080"* ]] || fail "not logged while the state is there: $before"
	runtime delete dl1
	assert_success
	[ ! -e "$ROOT/dl1" ]
	# the same lines, from the durable log
	runtime egress log dl1
	assert_success
	[ "$stdout" = "$before" ] || fail "after delete: $stdout"
	runtime egress log --json dl1
	jq -se 'map(select(.dst == "198.18.40.9" and .port == 8080 and .proto == "tcp" and .container == "dl1")) | length == 1' \
		<<<"$stdout" >/dev/null || fail "json: $stdout"
	# any --root finds it: the log does not live with the state
	RUNTIME_ARGS+=(--root "$TEST_DIR/elsewhere")
	runtime egress log dl1
	assert_success
	assert_output_contains "198.18.40.9:8080"
	# the root's alone: a directory 0700, files 0600
	[ "$(stat -c '%u %a' "$AGENTBOX_LOG_DIR" "$(log_dir dl1)" "$(log_dir dl1)/egress.log" | tr '\n' ' ')" = "0 700 0 700 0 600 " ]
}

@test "deny log: a foreground run's records outlive the state run removes" {
	routed_netns
	set_args sh -c 'nc -w 1 198.18.40.10 443 </dev/null; true'
	run_container dl2
	assert_success
	[ ! -e "$ROOT/dl2" ]
	runtime egress log dl2
	assert_success
	assert_output_contains "198.18.40.10:443"
}

@test "deny log: no state and no log: one clear line" {
	runtime egress log nosuch
	assert_failure 1
	assert_one_error_line "egress log: container \"nosuch\" does not exist, and .*egress-logs holds no log of it"
}

@test "deny log: rotation keeps a container's log within twice log.max_bytes, the newest records kept" {
	routed_netns
	printf 'log: {max_bytes: 4096}\n' >"$CONFIG"
	RUNTIME_ARGS=(--config "$CONFIG")
	# 120 destinations, a record each (about 130 bytes): four times the cap
	set_args sh -c 'for p in $(seq 1001 1120); do nc -w 1 198.18.40.11 $p </dev/null & done; wait; true'
	run_container dl3
	assert_success
	local d
	d=$(log_dir dl3)
	[ -s "$d/egress.log.1" ] || fail "never rotated: $(ls -l "$d")"
	local a b
	a=$(stat -c %s "$d/egress.log") b=$(stat -c %s "$d/egress.log.1")
	# a file goes past the cap by at most its last line
	((a <= 4096 + 512 && b <= 4096 + 512)) || fail "sizes $a $b"
	runtime egress log --json dl3
	assert_success
	local n
	n=$(jq -s 'map(select(.dst == "198.18.40.11")) | length' <<<"$stdout")
	((n > 10 && n < 120)) || fail "$n records kept"
	# the rotated file is read first: times never go back
	jq -se 'map(.time) | . == sort' <<<"$stdout" >/dev/null || fail "out of order: $stdout"
	# the last destination tried is among them
	runtime egress log dl3
	[[ "$stdout" == *"198.18.40.11:"* ]]
}

@test "deny log: past log.max_total the least recently written logs go, never one in use" {
	routed_netns
	printf 'log: {max_total: 65536}\n' >"$CONFIG"
	RUNTIME_ARGS=(--config "$CONFIG")
	local n
	mkdir -p -m 0700 "$AGENTBOX_LOG_DIR"
	# four old logs of 30 KB, oldest first; the oldest is held (its sentry lives)
	for n in 1 2 3 4; do
		mkdir -m 0700 "$AGENTBOX_LOG_DIR/old$n"
		head -c 30000 /dev/zero >"$AGENTBOX_LOG_DIR/old$n/egress.log"
		touch -d "-$((10 - n)) hours" "$AGENTBOX_LOG_DIR/old$n/egress.log" "$AGENTBOX_LOG_DIR/old$n"
	done
	flock -s "$AGENTBOX_LOG_DIR/old1" sleep 60 &
	local holder=$!
	defer kill "$holder"
	sleep 0.2
	set_args sh -c 'nc -w 1 198.18.40.12 80 </dev/null; true'
	run_container dl4
	assert_success
	# 120 KB: old2 and old3 go (old1 is held), then it is within 64 KiB
	[ -d "$AGENTBOX_LOG_DIR/old1" ] || fail "a log in use was removed"
	[ ! -e "$AGENTBOX_LOG_DIR/old2" ] && [ ! -e "$AGENTBOX_LOG_DIR/old3" ] || fail "$(ls "$AGENTBOX_LOG_DIR")"
	[ -d "$AGENTBOX_LOG_DIR/old4" ] && [ -d "$AGENTBOX_LOG_DIR/dl4" ] || fail "$(ls "$AGENTBOX_LOG_DIR")"
}

@test "deny log: past 10,000 logs the empty ones go first, not an old one with records" {
	routed_netns
	mkdir -p -m 0700 "$AGENTBOX_LOG_DIR"
	# the oldest log holds a record; 10,000 younger ones are empty (runs that
	# were refused nothing)
	mkdir -m 0700 "$AGENTBOX_LOG_DIR/kept"
	echo '{"verdict":"deny"}' >"$AGENTBOX_LOG_DIR/kept/egress.log"
	touch -d "-10 hours" "$AGENTBOX_LOG_DIR/kept/egress.log" "$AGENTBOX_LOG_DIR/kept"
	(cd "$AGENTBOX_LOG_DIR" && mkdir -m 0700 e{1..10000})
	touch -d "-1 hour" "$AGENTBOX_LOG_DIR"/e*
	rm -f "$AGENTBOX_LOG_DIR/.pruned"
	set_args true
	run_container dl5
	assert_success
	[ -s "$AGENTBOX_LOG_DIR/kept/egress.log" ] || fail "the log with a record was removed"
	local left
	left=$(find "$AGENTBOX_LOG_DIR" -mindepth 1 -maxdepth 1 -type d | wc -l)
	# 10,002 with the new one's: two empty ones went, and only two
	[ "$left" -eq 10000 ] || fail "$left logs left"
}

@test "deny log: the box cannot reach its log (it can when the host hands it over)" {
	# unprotected: the box's log directory bind-mounted into it, a record forged
	mkdir -p -m 0700 "$AGENTBOX_LOG_DIR/dl5-exposed"
	add_mount /mnt/log bind "$AGENTBOX_LOG_DIR/dl5-exposed" rbind rw
	set_args sh -c 'echo "{\"verdict\":\"forged\"}" >>/mnt/log/egress.log && echo wrote'
	run_container dl5-exposed
	assert_output_contains wrote
	runtime egress log --json dl5-exposed
	assert_output_contains forged
	# as it runs: nothing in the box's file system is the log, no process of
	# the box holds it, and the attempt lands in it all the same
	update_config '.mounts |= map(select(.destination != "/mnt/log"))'
	routed_netns
	set_args sh -c 'nc -w 1 198.18.40.13 22 </dev/null
		find / -xdev -name "egress.log*" 2>/dev/null | sed "s/^/found /"
		ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c "egress" | sed "s/^/fds /"
		echo "{\"verdict\":\"forged\"}" >>/var/log/agentbox/dl5/egress.log 2>/dev/null || echo refused'
	run_container dl5
	assert_success
	refute_output_contains found
	assert_output_contains "fds 0"
	assert_output_contains refused
	runtime egress log --json dl5
	assert_success
	assert_output_contains '"dst":"198.18.40.13"'
	refute_output_contains forged
}

@test "deny log: a run that fails leaves no log behind" {
	requires test_hooks
	routed_netns
	export AGENTBOX_FAULT_SENTRY_FAIL=1
	set_args abtest pause
	run_container dl6
	assert_failure 1
	assert_one_error_line 'injected by AGENTBOX_FAULT_SENTRY_FAIL'
	run_container dl7 --detach
	assert_failure 1
	[ ! -e "$(log_dir dl6)" ] && [ ! -e "$(log_dir dl7)" ] || fail "left: $(ls -la "$AGENTBOX_LOG_DIR")"
}

@test "deny log: log.dir, log.max_bytes, log.max_total and egress.live_may_widen are checked; nothing left" {
	local bad
	for bad in 'log: {dir: relative/path}' 'log: {max_bytes: 100}' 'log: {max_total: lots}' 'log: {rotate: yes}' \
		'egress: {live_may_widen: maybe}'; do
		printf '%s\n' "$bad" >"$CONFIG"
		RUNTIME_ARGS=(--config "$CONFIG")
		set_args abtest true
		run_container dl8
		assert_failure 1
		assert_one_error_line 'agent\.yaml:1:.*(log\.dir|log\.max_bytes|log\.max_total|rotate|egress\.live_may_widen)'
		assert_nothing_left
	done
	# a log directory others may write to is refused, naming it
	printf 'log: {dir: %s}\n' "$TEST_DIR/open-logs" >"$CONFIG"
	mkdir -m 0777 "$TEST_DIR/open-logs"
	unset AGENTBOX_LOG_DIR
	run_container dl8
	assert_failure 1
	assert_one_error_line "open-logs is not the runtime user's alone \(owner 0, mode 777\): refused"
	assert_nothing_left
}
