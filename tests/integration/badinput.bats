#!/usr/bin/env bats
# Bad input: every case exits 1 and leaves nothing behind (no state entry,
# cgroup or process). The agentbox-only twin of each case checks the message:
# exactly one line on stderr, "agentbox: ...", naming the JSON path or the
# argument, and the same message as the last level=error line of --log.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# Each bad_* function breaks the bundle and sets:
#   BAD_ID    the container id to create (default ct)
#   BAD_ARGS  extra create flags
#   BAD_RE    an ERE the agentbox message must match
BAD_ID=ct
BAD_ARGS=()

# check_bad CASE: create fails with status 1 and leaves nothing behind.
check_bad() {
	"$1"
	runtime create --bundle "$BUNDLE" "${BAD_ARGS[@]}" "$BAD_ID" </dev/null
	assert_failure 1
	[ -n "$stderr" ] || fail "no error message on stderr"
	assert_nothing_left
	# the same with run
	runtime run --bundle "$BUNDLE" "${BAD_ARGS[@]}" "$BAD_ID" </dev/null
	assert_failure 1
	assert_nothing_left
}

# check_bad_message CASE: agentbox's one clear line, on stderr and in --log.
check_bad_message() {
	requires agentbox
	"$1"
	local log=$TEST_DIR/log.json
	runtime --log "$log" --log-format json create --bundle "$BUNDLE" "${BAD_ARGS[@]}" "$BAD_ID" </dev/null
	assert_failure 1
	assert_one_error_line "$BAD_RE"
	local msg
	msg=$(jq -r 'select(.level == "error") | .msg' "$log" | tail -n1)
	[[ "$msg" =~ $BAD_RE ]] || fail "last error in --log does not match /$BAD_RE/: $msg"
	# stderr is "agentbox: " + the logged message
	[ "$stderr" = "agentbox: $msg" ] || fail "stderr and --log differ: '$stderr' vs '$msg'"
	assert_nothing_left
}

# ---------------------------------------------------------------- cases

bad_malformed_json() {
	printf '{"ociVersion": "1.0.2", "process": {"args": ["abtest" "true"]}}\n' >"$BUNDLE/config.json"
	BAD_RE='config\.json'
}

bad_truncated_json() {
	local full
	full=$(cat "$BUNDLE/config.json")
	printf '%s' "${full:0:$((${#full} / 2))}" >"$BUNDLE/config.json"
	BAD_RE='config\.json'
}

bad_empty_config() {
	: >"$BUNDLE/config.json"
	BAD_RE='config\.json'
}

bad_not_an_object() {
	echo '["a", "b"]' >"$BUNDLE/config.json"
	BAD_RE='config\.json'
}

bad_args_wrong_type() {
	update_config '.process.args = "abtest true"'
	BAD_RE='config\.json: process\.args'
}

bad_args_empty() {
	update_config '.process.args = []'
	BAD_RE='process\.args'
}

bad_uid_wrong_type() {
	update_config '.process.user.uid = "0"'
	BAD_RE='config\.json: process\.user\.uid'
}

bad_namespace_type() {
	update_config '.linux.namespaces[0].type = "foo"'
	BAD_RE='config\.json: linux\.namespaces\[0\]\.type: unknown namespace type "foo"$'
}

bad_namespace_duplicate() {
	update_config '.linux.namespaces += [{type: "pid"}]'
	BAD_RE='linux\.namespaces\[[0-9]+\]'
}

bad_rlimit_type() {
	update_config '.process.rlimits = [{type: "RLIMIT_FOO", soft: 1, hard: 1}]'
	BAD_RE='process\.rlimits\[0\]\.type.*RLIMIT_FOO'
}

bad_missing_rootfs() {
	update_config '.root.path = "no-such-rootfs"'
	BAD_RE='no-such-rootfs'
}

# an engine's root file system that is not mounted (an empty directory)
bad_empty_rootfs() {
	mkdir "$BUNDLE/empty"
	update_config '.root.path = "empty" | .process.args = ["sh", "-c", "true"]'
	BAD_RE='exec: "sh": executable file not found in \$PATH: the root file system holds none of its directories \(is root\.path mounted, or filled\?\)'
}

bad_missing_config() {
	rm "$BUNDLE/config.json"
	BAD_RE='config\.json'
}

bad_missing_bundle() {
	BUNDLE=$TEST_DIR/no-such-bundle
	BAD_RE='no-such-bundle'
}

bad_bind_source_missing() {
	add_mount /mnt/x bind "$TEST_DIR/no-such-source" rbind
	BAD_RE='no-such-source'
}

bad_pid_file_dir_missing() {
	BAD_ARGS=(--pid-file "$TEST_DIR/no-such-dir/pid")
	BAD_RE='no-such-dir'
}

bad_id_slash() {
	BAD_ID=a/b
	BAD_RE='a/b'
}

bad_id_dotdot() {
	BAD_ID=..
	BAD_RE='"\.\."'
}

bad_id_empty() {
	BAD_ID=
	BAD_RE='id'
}

# ---------------------------------------------------------------- tests

@test "bad input: malformed JSON" { check_bad bad_malformed_json; }
# bats test_tags=agentbox-only
@test "bad input message: malformed JSON" { check_bad_message bad_malformed_json; }

@test "bad input: truncated JSON" { check_bad bad_truncated_json; }
# bats test_tags=agentbox-only
@test "bad input message: truncated JSON" { check_bad_message bad_truncated_json; }

@test "bad input: empty config.json" { check_bad bad_empty_config; }
# bats test_tags=agentbox-only
@test "bad input message: empty config.json" { check_bad_message bad_empty_config; }

@test "bad input: config.json is not an object" { check_bad bad_not_an_object; }
# bats test_tags=agentbox-only
@test "bad input message: config.json is not an object" { check_bad_message bad_not_an_object; }

@test "bad input: process.args is a string" { check_bad bad_args_wrong_type; }
# bats test_tags=agentbox-only
@test "bad input message: process.args is a string" { check_bad_message bad_args_wrong_type; }

@test "bad input: process.args is empty" { check_bad bad_args_empty; }
# bats test_tags=agentbox-only
@test "bad input message: process.args is empty" { check_bad_message bad_args_empty; }

@test "bad input: process.user.uid is a string" { check_bad bad_uid_wrong_type; }
# bats test_tags=agentbox-only
@test "bad input message: process.user.uid is a string" { check_bad_message bad_uid_wrong_type; }

@test "bad input: unknown namespace type" { check_bad bad_namespace_type; }
# bats test_tags=agentbox-only
@test "bad input message: unknown namespace type" { check_bad_message bad_namespace_type; }

@test "bad input: a namespace type given twice" { check_bad bad_namespace_duplicate; }
# bats test_tags=agentbox-only
@test "bad input message: a namespace type given twice" { check_bad_message bad_namespace_duplicate; }

@test "bad input: unknown rlimit type" { check_bad bad_rlimit_type; }
# bats test_tags=agentbox-only
@test "bad input message: unknown rlimit type" { check_bad_message bad_rlimit_type; }

@test "bad input: root.path is an empty directory (not mounted)" { check_bad bad_empty_rootfs; }
# bats test_tags=agentbox-only
@test "bad input message: root.path is an empty directory, named as such" { check_bad_message bad_empty_rootfs; }
@test "bad input: root.path does not exist" { check_bad bad_missing_rootfs; }
# bats test_tags=agentbox-only
@test "bad input message: root.path does not exist" { check_bad_message bad_missing_rootfs; }

@test "bad input: no config.json in the bundle" { check_bad bad_missing_config; }
# bats test_tags=agentbox-only
@test "bad input message: no config.json in the bundle" { check_bad_message bad_missing_config; }

@test "bad input: the bundle does not exist" { check_bad bad_missing_bundle; }
# bats test_tags=agentbox-only
@test "bad input message: the bundle does not exist" { check_bad_message bad_missing_bundle; }

@test "bad input: a bind mount source that does not exist" { check_bad bad_bind_source_missing; }
# bats test_tags=agentbox-only
@test "bad input message: a bind mount source that does not exist" { check_bad_message bad_bind_source_missing; }

@test "bad input: --pid-file in a directory that does not exist" { check_bad bad_pid_file_dir_missing; }
# bats test_tags=agentbox-only
@test "bad input message: --pid-file in a directory that does not exist" { check_bad_message bad_pid_file_dir_missing; }

@test "bad input: id with a slash" { check_bad bad_id_slash; }
# bats test_tags=agentbox-only
@test "bad input message: id with a slash" { check_bad_message bad_id_slash; }

@test "bad input: id '..'" { check_bad bad_id_dotdot; }
# bats test_tags=agentbox-only
@test "bad input message: id '..'" { check_bad_message bad_id_dotdot; }

@test "bad input: empty id" { check_bad bad_id_empty; }

# bats test_tags=agentbox-only
@test "bad input message: duplicate id names the id" {
	requires agentbox
	create_container ct
	assert_success
	runtime create --bundle "$BUNDLE" ct </dev/null
	assert_failure 1
	assert_one_error_line 'container "ct" already exists'
	[ "$(state_field ct .status)" = created ]
}

# bats test_tags=agentbox-only
@test "bad input message: missing container, 'container \"ID\" does not exist'" {
	requires agentbox
	local cmd
	for cmd in state start delete "kill" pause resume ps; do
		runtime $cmd nosuch
		assert_failure 1
		assert_one_error_line '^agentbox: container "nosuch" does not exist$'
	done
}

# bats test_tags=agentbox-only
@test "unknown fields are errors naming the JSON path (agentbox is strict)" {
	# runtime-spec asks runtimes to ignore unknown properties; agentbox refuses
	# them on purpose: a misspelled "readonlyPaths" must not silently open a hole.
	# (runc ignores them, hence the tag.)
	requires agentbox
	update_config '.process."x-unknown" = true'
	set_args abtest echo accepted
	run_container ct
	assert_failure 1
	assert_one_error_line 'config\.json: process\.x-unknown: unknown field'
	[[ "$stdout" != *accepted* ]]
	assert_nothing_left
}

@test "bad command line: missing id, extra arguments, unknown flag of create" {
	runtime create --bundle "$BUNDLE"
	assert_failure 1
	runtime create --bundle "$BUNDLE" ct extra-arg
	assert_failure 1
	runtime create --bundle "$BUNDLE" --no-such-flag ct
	assert_failure 1
	runtime state
	assert_failure 1
	assert_nothing_left
}
