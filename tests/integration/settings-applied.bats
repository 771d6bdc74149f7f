#!/usr/bin/env bats
# Settings are applied as written or refused with one line naming them, never
# accepted and dropped (issue 22, hole 12): rootfsPropagation "unbindable",
# options a bind mount cannot take, Intel RDT, personality flags.

load helpers

setup() {
	requires root agentbox
	setup_bundle
}

teardown() {
	teardown_bundle
}

@test "rootfsPropagation unbindable and shared are applied to the container's root" {
	set_args sh -c 'awk "\$5 == \"/\" { print \$7 }" /proc/self/mountinfo'
	update_config '.linux.rootfsPropagation = "unbindable"'
	run_container ct-unbindable
	assert_success
	[ "$stdout" = unbindable ] || fail "root is $output"
	update_config '.linux.rootfsPropagation = "shared"'
	run_container ct-shared
	assert_success
	[[ "$stdout" == shared:* ]] || fail "root is $output"
}

@test "what cannot be applied is refused with one line; nothing left" {
	local edit
	for edit in '.linux.intelRdt = {closID: "guaranteed_group"}' \
		'.linux.personality = {domain: "LINUX", flags: ["ADDR_NO_RANDOMIZE"]}'; do
		cp "$BUNDLE/config.json" "$TEST_DIR/config.saved"
		update_config "$edit"
		run_container ct-refused
		assert_failure 1
		assert_one_error_line "(linux\.intelRdt\.closID: Intel RDT|linux\.personality\.flags\[0\]: unknown personality flag)"
		assert_nothing_left
		cp "$TEST_DIR/config.saved" "$BUNDLE/config.json"
	done
}
