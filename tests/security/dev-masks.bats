#!/usr/bin/env bats
# A masked path bound to whatever /dev/null became (issue 34, class 4; the
# CVE-2025-31133 class). Masks used to bind "/dev/null" by its path in the
# container; with a /dev shared with another container (a volume), that
# container can swap null for a symlink to a procfs file between its creation
# and the masks, and the "masked" path becomes a window onto that file.
# agentbox opens the null device once, before the container's mounts exist,
# checks it is c 1:3 and binds every file mask from that handle.
# The "other container" is a createRuntime hook (run after the device nodes
# are made, before the masks): deterministic, as attacks/04 of issue 34.
# Also here: the device nodes bound into a container with a user namespace
# are nosuid and noexec (issue 36, 4b). Names: abdm-*.

load helpers
load ../helper/floor

KNOB=/proc/sys/kernel/printk_ratelimit

setup() {
	requires root agentbox
	setup_bundle
	[ -w "$KNOB" ] || skip "no $KNOB to aim at"
	KNOB_ORIG=$(cat "$KNOB")
	defer sh -c "echo $KNOB_ORIG >$KNOB"
	SHARED=$TEST_DIR/shared-dev
}

teardown() {
	teardown_bundle
}

knob_changed() { [ "$(cat "$KNOB")" != "$KNOB_ORIG" ]; }

# a fresh, empty shared /dev (the floor refuses a bind of a directory that
# holds device nodes: each run starts from an empty one)
fresh_shared() {
	rm -rf "$SHARED"
	mkdir -p "$SHARED"
	echo "$KNOB_ORIG" >"$KNOB"
}

@test "masks: the other container swaps the shared /dev/null for a link to a host knob: runc masks /proc/keys with the knob, the old paths make it writable; agentbox masks with the null device (and without the mount API)" {
	cat >"$TEST_DIR/swap.sh" <<-EOF
		#!/bin/sh
		rm -f "$SHARED/null" && ln -s /proc/sys/kernel/printk_ratelimit "$SHARED/null"
	EOF
	chmod +x "$TEST_DIR/swap.sh"
	update_config '.mounts |= map(if .destination == "/dev"
			then {destination: "/dev", type: "bind", source: $h, options: ["rbind", "nosuid"]} else . end)
		| .hooks.createRuntime = [{path: $p}]' --arg h "$SHARED" --arg p "$TEST_DIR/swap.sh"
	set_args sh -c 'echo $0 >/proc/keys; stat -c "%t:%T %F" /proc/keys; grep " /proc/keys " /proc/self/mountinfo' \
		$((KNOB_ORIG + 3))
	fresh_shared
	runc_run abdm-runc
	[[ "$output" == *" /sys/kernel/printk_ratelimit /proc/keys "* ]] ||
		unprotected_failed "runc's /proc/keys is not the knob: $output"
	fresh_shared
	requires test_hooks
	AGENTBOX_TEST_PROC_BY_PATH=1 run_container abdm-off
	knob_changed || unprotected_failed "the old paths left the knob at $(cat "$KNOB"): $output"

	floor_config
	local fb
	for fb in no yes; do
		fresh_shared
		if [ $fb = yes ]; then
			AGENTBOX_FORCE_FALLBACKS=1 run_container abdm-$fb
		else
			run_container abdm-$fb
		fi
		assert_success
		! knob_changed || fail "the knob is $(cat "$KNOB") (fallbacks: $fb): $output"
		[ "${lines[0]}" = "1:3 character special file" ] || fail "/proc/keys is not the null device (fallbacks: $fb): $output"
		[[ "$output" != *printk_ratelimit* ]] || fail "/proc/keys shows the knob (fallbacks: $fb): $output"
	done
}

@test "masks: linux.devices naming /dev/null another device: runc masks with that device; agentbox with the null device" {
	update_config '.linux.devices = [{path: "/dev/null", type: "c", major: 1, minor: 7, fileMode: 438}]'
	set_args sh -c 'stat -c %t:%T /dev/null /proc/keys'
	runc_run abdm-dev-runc
	assert_success
	[ "${lines[1]}" = 1:7 ] || unprotected_failed "runc's /proc/keys is $output"
	floor_config
	run_container abdm-dev
	assert_success
	[ "${lines[0]}" = 1:7 ] && [ "${lines[1]}" = 1:3 ] || fail "/dev/null, /proc/keys: $output"
}

@test "device nodes bound into a container with a user namespace are nosuid and noexec (runc's only nosuid)" {
	requires userns
	# the mapped root must reach the bundle (runc binds it from there)
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 200000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 200000, size: 65536}]'
	set_args sh -c 'for d in null zero full random urandom tty; do
		awk -v d=/dev/$d '\''$5 == d { print d, $6 }'\'' /proc/self/mountinfo; done'
	runc_run abdm-userns-runc
	assert_success
	[[ "$output" == */dev/null* ]] || unprotected_failed "runc: no bound /dev/null: $output"
	[[ "${lines[0]}" != *noexec* ]] || unprotected_failed "runc binds /dev/null noexec already: $output"
	run_container abdm-userns
	assert_success
	[ "${#lines[@]}" -eq 6 ] || fail "not six bound nodes: $output"
	local l
	for l in "${lines[@]}"; do
		[[ ",${l#* }," == *,nosuid,* && ",${l#* }," == *,noexec,* ]] || fail "not nosuid,noexec: $l"
	done
}
