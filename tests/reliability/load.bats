#!/usr/bin/env bats
# Load, the CI size of tests/reliability/load.sh (which runs 100 concurrent
# lifecycles and 1,000 sequential runs by default): 100 containers at once
# against one --root, then 100 sequential runs with the host measured before
# and after.

load helpers

setup() {
	requires root agentbox
	ensure_abtest
}

@test "load: 100 containers created, started and deleted concurrently: no error, no deadlock, nothing left" {
	LOAD_TIMEOUT=300 run "$BATS_TEST_DIRNAME/load.sh" -q -p 100 -s 0
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"load: PASS"* ]]
}

@test "load: 100 sequential runs: no growth in files, memory, cgroups, mounts or namespaces" {
	run "$BATS_TEST_DIRNAME/load.sh" -q -p 0 -s 100
	echo "$output" >&2
	[ "$status" -eq 0 ]
	[[ "$output" == *"load: PASS"* ]]
}
