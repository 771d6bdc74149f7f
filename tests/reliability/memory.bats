#!/usr/bin/env bats
# The runtime's own memory while it waits, measured on the plain build (the
# integration suite runs against the ASan build, whose allocator and shadow
# memory alone are larger than what is measured here).

load helpers

setup() {
	requires root agentbox
	setup_bundle
}

teardown() {
	teardown_bundle
}

# bats test_tags=agentbox-only
@test "run: the runtime waiting for a long-running program gives back what create touched" {
	requires agentbox
	set_args abtest pause ready
	local out=$TEST_DIR/memrun.out rss0 rss i
	timeout -k 5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" memrun \
		>"$out" 2>&1 </dev/null 3>&- &
	local rt=$!
	defer kill -9 $rt
	wait_for_line "$out" '^ready$'
	# timeout's child is the runtime
	local ab
	ab=$(pgrep -P $rt)
	rss0=$(awk '/^VmRSS:/ { print $2 }' /proc/$ab/status)
	echo "runtime VmRSS at the program's start: $rss0 kB" >&2
	# what creating the container touched is resident while it starts
	[ "$rss0" -ge 1536 ] || fail "runtime VmRSS $rss0 kB: nothing to give back"
	for ((i = 0; i < 250; i++)); do
		rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$ab/status)
		[ "$rss" -lt 1024 ] && break
		sleep 0.02
	done
	echo "runtime VmRSS later: $rss kB" >&2
	[ "$rss" -lt 1024 ] || fail "runtime VmRSS still $rss kB"
	# and it still does its work: the signal goes on, the exit status comes back
	kill -TERM $ab
	local st=0
	wait $rt || st=$?
	[ "$st" -eq 143 ] || [ "$st" -eq 0 ] || fail "exit status $st"
	grep -q "got signal 15" "$out" || fail "no signal forwarded: $(cat "$out")"
	[ ! -e "$ROOT/memrun" ] || fail "state of memrun left behind"
}
