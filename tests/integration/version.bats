#!/usr/bin/env bats
# --version, --help, global flags, unknown flags and commands, features.

load helpers

setup() {
	setup_state_only
}

teardown() {
	teardown_bundle
}

@test "--version: 'NAME version X', then commit: and spec: lines" {
	runtime_raw --version
	assert_success
	[[ "${lines[0]}" =~ ^[a-z][a-z0-9_-]*\ version\ [0-9][^\ ]*$ ]]
	[[ "$stdout" =~ (^|$'\n')commit:\ [^$'\n']+ ]]
	[[ "$stdout" =~ (^|$'\n')spec:\ [0-9]+\.[0-9]+\.[0-9]+ ]]
	# the short form prints the same
	local long=$stdout
	runtime_raw -v
	assert_success
	[ "$stdout" = "$long" ]
}

# bats test_tags=agentbox-only
@test "--version: the name is agentbox (dockerd and podman parse it)" {
	requires agentbox
	runtime_raw --version
	assert_success
	[[ "${lines[0]}" =~ ^agentbox\ version\ [0-9]+\.[0-9]+\.[0-9]+ ]]
}

@test "--help: usage with every command and global flag" {
	runtime_raw --help
	assert_success
	local cmd flag
	for cmd in create start run state list kill delete spec features exec pause resume update ps events; do
		[[ "$stdout" =~ (^|[[:space:]])$cmd[[:space:]] ]] || fail "--help does not list '$cmd'"
	done
	for flag in --root --log --log-format --debug; do
		[[ "$stdout" == *"$flag"* ]] || fail "--help does not list '$flag'"
	done
}

@test "an unknown global flag is an error naming the flag, not ignored" {
	runtime_raw --bogus-flag list
	assert_failure 1
	[[ "$stderr" == *bogus-flag* ]]
	[ -z "$stdout" ] || [[ "$stdout" != *"ID"*"STATUS"* ]]
}

@test "an unknown command is an error naming the command" {
	runtime_raw --root "$ROOT" frobnicate
	assert_failure
	[[ "$stderr" == *frobnicate* ]]
}

# bats test_tags=agentbox-only
@test "unknown flag and unknown command: exit 1 and one 'agentbox: ' line" {
	requires agentbox
	runtime_raw --root "$ROOT" frobnicate
	assert_failure 1
	assert_one_error_line 'frobnicate'

	runtime_raw --bogus-flag list
	assert_failure 1
	assert_one_error_line 'bogus-flag'

	runtime_raw --root "$ROOT" list --bogus-list-flag
	assert_failure 1
	assert_one_error_line 'bogus-list-flag'
}

@test "global flags before the command: --debug, --log, --log-format json" {
	runtime --debug --log "$TEST_DIR/log.json" --log-format json list -q
	assert_success
	# --log-format=value spelling, as conmon passes it
	runtime --log-format=json --log="$TEST_DIR/log2.json" list -q
	assert_success
}

@test "--log FILE --log-format json: a failure writes a level=error JSON line there and to stderr" {
	runtime --log "$TEST_DIR/log.json" --log-format json state nosuch
	assert_failure 1
	[[ "$stderr" == *"does not exist"* ]]
	[ -s "$TEST_DIR/log.json" ]
	# every line is a JSON object; the last error names the problem
	jq -e . "$TEST_DIR/log.json" >/dev/null
	local msg
	msg=$(jq -r 'select(.level == "error") | .msg' "$TEST_DIR/log.json" | tail -n1)
	[[ "$msg" == *"does not exist"* ]]
	[ "$(jq -r 'select(.level == "error") | .time' "$TEST_DIR/log.json" | tail -n1)" != null ]
}

# bats test_tags=agentbox-only
@test "--log with the default text format: the error line is in the file" {
	requires agentbox
	runtime --log "$TEST_DIR/log.txt" state nosuch
	assert_failure 1
	grep -q 'does not exist' "$TEST_DIR/log.txt"
}

# bats test_tags=agentbox-only
@test "--cgroup-manager disabled is accepted (podman --cgroups=disabled)" {
	requires agentbox
	runtime --cgroup-manager disabled list -q
	assert_success
}

@test "without --root the runtime uses its default state dir" {
	runtime_raw list -q
	assert_success
}

@test "features: JSON with OCI versions, the six hook kinds and mount options" {
	runtime_raw features
	assert_success
	jq -e . <<<"$stdout" >/dev/null
	[[ "$(jq -r .ociVersionMin <<<"$stdout")" =~ ^1\.[0-9]+\.[0-9]+ ]]
	[[ "$(jq -r .ociVersionMax <<<"$stdout")" =~ ^1\.[0-9]+\.[0-9]+ ]]
	[ "$(jq -r '.hooks | sort | join(",")' <<<"$stdout")" = \
		"createContainer,createRuntime,poststart,poststop,prestart,startContainer" ]
	jq -e '.mountOptions | index("rbind") and index("ro") and index("nosuid")' <<<"$stdout" >/dev/null
	jq -e '.linux.namespaces | index("pid") and index("network") and index("user")' <<<"$stdout" >/dev/null
	# AppArmor profiles are applied (or refused where the host has none); SELinux labels are not
	if is_agentbox; then
		[ "$(jq -r '.linux.apparmor.enabled, .linux.selinux.enabled' <<<"$stdout" | tr '\n' ' ')" = "true false " ]
		# id-mapped mounts and runtime-spec 1.3's memory policy are supported
		[ "$(jq -r .linux.mountExtensions.idmap.enabled <<<"$stdout")" = true ]
		jq -e '.linux.memoryPolicy | (.modes | index("MPOL_BIND") and index("MPOL_WEIGHTED_INTERLEAVE")) and (.flags | index("MPOL_F_STATIC_NODES"))' <<<"$stdout" >/dev/null
	fi
}
