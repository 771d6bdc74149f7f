#!/usr/bin/env bats
# spec: the default config.json.

load helpers

setup() {
	setup_state_only
	SPEC_DIR=$TEST_DIR/specdir
	mkdir -p "$SPEC_DIR"
}

teardown() {
	teardown_bundle
}

@test "spec writes a valid config.json in the cwd" {
	runtime_at "$SPEC_DIR" spec
	assert_success
	local c=$SPEC_DIR/config.json
	[ -s "$c" ]
	jq -e . "$c" >/dev/null
	[[ "$(jq -r .ociVersion "$c")" =~ ^1\.[0-9]+\.[0-9]+ ]]
	[ "$(jq -r .root.path "$c")" = rootfs ]
	[ "$(jq -r '.process.args | length' "$c")" -gt 0 ]
	[ "$(jq -r .process.cwd "$c")" = / ]
	# the namespaces every runc-style default has
	local ns
	for ns in pid network ipc uts mount; do
		jq -e --arg ns "$ns" '.linux.namespaces | map(.type) | index($ns)' "$c" >/dev/null ||
			fail "default spec lacks the $ns namespace"
	done
	jq -e '.mounts | map(.destination) | index("/proc") and index("/dev") and index("/sys")' "$c" >/dev/null
}

@test "spec: no cgroup namespace on a cgroup v1 or hybrid host, as runc's template" {
	# this host is hybrid (v1 controllers, cgroup2 at /sys/fs/cgroup/unified):
	# tools in the container expect the host's cgroup paths there
	[ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] || skip "the host is pure cgroup v2"
	runtime_at "$SPEC_DIR" spec
	assert_success
	[ "$(jq -c '[.linux.namespaces[].type] | index("cgroup")' "$SPEC_DIR/config.json")" = null ]
}

@test "spec: a cgroup namespace on a pure cgroup v2 host" {
	# the cgroup2 mount seen as the whole host (a test build's hook)
	requires test_hooks
	[ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] || skip "no cgroup2 mount"
	AGENTBOX_CGROUP_ROOT=/sys/fs/cgroup/unified runtime_at "$SPEC_DIR" spec
	assert_success
	jq -e '[.linux.namespaces[].type] | index("cgroup")' "$SPEC_DIR/config.json" >/dev/null
}

@test "spec and kit build share the standard mounts and hidden paths" {
	runtime_at "$SPEC_DIR" spec
	assert_success
	local kit=$TEST_DIR/k.yaml bundle=$TEST_DIR/kb
	printf 'name: k\nrootfs: host\ncommand: [true]\n' >"$kit"
	runtime kit build "$kit" -o "$bundle"
	assert_success
	local q='.mounts[0:7], .linux.maskedPaths, .linux.readonlyPaths'
	[ "$(jq -c "$q" "$SPEC_DIR/config.json")" = "$(jq -c "$q" "$bundle/config.json")" ] ||
		fail "spec and kit build differ: $(diff <(jq -c "$q" "$SPEC_DIR/config.json") <(jq -c "$q" "$bundle/config.json"))"
}

@test "spec refuses to overwrite an existing config.json" {
	echo '{"keep": "me"}' >"$SPEC_DIR/config.json"
	runtime_at "$SPEC_DIR" spec
	assert_failure 1
	[[ "$stderr" == *config.json* ]]
	[ "$(cat "$SPEC_DIR/config.json")" = '{"keep": "me"}' ]
}

@test "spec --bundle DIR writes DIR/config.json, not the cwd" {
	runtime_at "$TEST_DIR" spec --bundle "$SPEC_DIR"
	assert_success
	[ -s "$SPEC_DIR/config.json" ]
	[ ! -e "$TEST_DIR/config.json" ]
	jq -e . "$SPEC_DIR/config.json" >/dev/null
}

@test "spec: the default config runs a container (with a tty off)" {
	requires root
	setup_bundle
	# setup_bundle made config.json with spec; only terminal, args, cgroupsPath changed
	set_args abtest echo spec-ok
	run_container ct
	assert_success
	[ "$stdout" = spec-ok ]
}
