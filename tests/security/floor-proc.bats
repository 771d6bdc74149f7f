#!/usr/bin/env bats
# The kernel's knobs (issue 22, holes 5 and 11): /proc/sys and its kin stay
# read-only and the floor's masked paths masked whatever the engine's lists
# say (docker --security-opt systempaths=unconfined sends none), /sys is
# read-only, --no-pivot is refused, and a fresh procfs (in a nested user
# namespace, with the agent seccomp profile off) cannot undo the masks.
# The "write" probes write kernel.core_pattern's own value back: proof of
# write access that changes nothing on the host. Names: abfl-*.

load helpers
load ../helper/floor

setup() {
	requires root agentbox
	setup_bundle
	floor_config
	with_caps docker
	update_config '.root.readonly = false'
}

teardown() {
	teardown_bundle
}

# write_back DIR: write DIR/sys/kernel/core_pattern's value back; WROTE or the error.
WRITE_BACK='v=$(cat "$1/sys/kernel/core_pattern") && { printf "%s\n" "$v" > "$1/sys/kernel/core_pattern" && echo WROTE; } 2>&1'

@test "proc: with empty maskedPaths and readonlyPaths /proc/sys stays read-only and the floor's masks stay; runc writes core_pattern (runc's and Docker's capabilities)" {
	local caps
	for caps in runc docker; do
		with_caps $caps
		update_config '.linux.maskedPaths = [] | .linux.readonlyPaths = []'
		set_args sh -c "set -- /proc; $WRITE_BACK; wc -c < /proc/timer_list;
			for p in /proc/sys /proc/sysrq-trigger /proc/irq /proc/bus /proc/fs; do
				[ -e \$p ] || { echo \$p ro; continue; }   # this kernel has none
				awk -v p=\$p '\$5 == p { split(\$6, o, \",\"); print p, o[1] }' /proc/self/mountinfo; done"
		runc_run abfl-proc-runc-$caps
		assert_success
		[ "${lines[0]}" = WROTE ] || unprotected_failed "runc: $output"
		[ "${lines[1]}" -gt 0 ] || unprotected_failed "runc: /proc/timer_list is empty: $output"

		floor_config 'floor: {readonly_paths: [], masked_paths: []}'
		run_container abfl-proc-relaxed-$caps
		assert_success
		[ "${lines[0]}" = WROTE ] || unprotected_failed "relaxed: $output"

		floor_config
		run_container abfl-proc-$caps
		assert_success
		[[ "${lines[0]}" == *"Read-only file system"* ]] || fail "core_pattern was writable: $output"
		[ "${lines[1]}" = 0 ] || fail "/proc/timer_list is not masked: $output"
		[ "${lines[2]}" = "/proc/sys ro" ] && [ "${lines[3]}" = "/proc/sysrq-trigger ro" ] &&
			[ "${lines[4]}" = "/proc/irq ro" ] && [ "${lines[5]}" = "/proc/bus ro" ] &&
			[ "${lines[6]}" = "/proc/fs ro" ] || fail "not all read-only: $output"
	done
}

@test "proc: the same through exec: an exec'd process cannot write core_pattern either" {
	update_config '.linux.maskedPaths = [] | .linux.readonlyPaths = []'
	set_args abtest pause ready
	run_container abfl-proc-exec --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime exec abfl-proc-exec sh -c "set -- /proc; $WRITE_BACK; true"
	assert_success
	[[ "$stdout" == *"Read-only file system"* ]] || fail "core_pattern was writable: $output"
}

@test "sys: /sys is mounted read-only whatever its options say; runc mounts it read-write" {
	update_config '.mounts |= map(if .type == "sysfs" then .options -= ["ro"] else . end)'
	set_args sh -c "awk '\$5 == \"/sys\" { split(\$6, o, \",\"); print o[1] }' /proc/self/mountinfo"
	runc_run abfl-sys-runc
	assert_success
	[ "$stdout" = rw ] || unprotected_failed "runc: $output"
	run_container abfl-sys
	assert_success
	[ "$stdout" = ro ] || fail "/sys is $output"
}

@test "no-pivot: refused; relaxed, the host's procfs is detached first, so a nested user namespace mounts no fresh, unmasked procfs" {
	requires userns
	local attack="unshare -U -r -m -p -f sh -c 'mount -t proc proc /mnt 2>&1 && { set -- /mnt; $WRITE_BACK; }'"
	# unprotected: a chroot without pivot_root that keeps the host's /proc in
	# its mount namespace, as --no-pivot did (runc is no reference: its
	# --no-pivot detaches the host's procfs and sysfs too)
	# and a container /proc with a mask over a file, as the container's has
	printf '%s\n' "$attack" >"$BUNDLE/rootfs/abfl-attack.sh"
	local r=$BUNDLE/rootfs
	run unshare -m sh -c "mount --make-rprivate / && mount --bind '$r' '$r' && mount -t proc proc '$r/proc' &&
		mount --bind /dev/null '$r/proc/timer_list' && cd '$r' && mount --move . / && chroot . /bin/sh /abfl-attack.sh"
	rm -f "$BUNDLE/rootfs/abfl-attack.sh"
	[[ "$output" == *WROTE* ]] || unprotected_failed "a chroot keeping the host's /proc: $output"

	set_args sh -c "$attack"
	update_config 'del(.linux.seccomp)'
	RUNTIME_ARGS+=(--seccomp-profile none)
	run_container abfl-np --no-pivot
	assert_failure 1
	assert_one_error_line "floor: --no-pivot is refused: .*floor\.refuse_no_pivot"
	assert_nothing_left

	floor_config 'floor: {refuse_no_pivot: false}'
	RUNTIME_ARGS+=(--seccomp-profile none)
	run_container abfl-np-relaxed --no-pivot
	[[ "$output" != *WROTE* ]] || fail "relaxed --no-pivot let a fresh procfs write: $output"
	assert_output_contains "mount: permission denied"

	# pivot_root (the default): the container's procfs has locked mounts over
	# /proc/sys and the masks, so the kernel refuses a fresh one
	floor_config
	RUNTIME_ARGS+=(--seccomp-profile none)
	run_container abfl-pivot
	[[ "$output" != *WROTE* ]] || fail "a fresh procfs undid the floor: $output"
	assert_output_contains "mount: permission denied"
}

@test "proc: a procfs elsewhere than /proc, or a bind of the host's /proc or /sys, is refused; runc shows it unmasked" {
	update_config '.mounts += [{destination: "/hostproc", type: "proc", source: "proc"}]'
	set_args sh -c "set -- /hostproc; $WRITE_BACK"
	runc_run abfl-proc2-runc
	assert_success
	[ "$stdout" = WROTE ] || unprotected_failed "runc: $output"
	run_container abfl-proc2
	assert_failure 1
	assert_one_error_line "floor: mounts\[[0-9]+\]: a proc file system at /hostproc would be unmasked"
	assert_nothing_left
	update_config 'del(.mounts[-1])'
	local src
	for src in /proc /proc/sys /sys; do
		add_mount /hostproc bind "$src" rbind
		run_container abfl-procbind
		assert_failure 1
		assert_one_error_line "floor: mounts\[[0-9]+\] binds $src, the host's /(proc|sys), which would show what the floor masks"
		assert_nothing_left
		update_config 'del(.mounts[-1])'
	done
}
