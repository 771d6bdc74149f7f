#!/usr/bin/env bats
# Host devices (issue 22, hole 4). The target: a loop device of this test
# (a file holding a marker, attached with losetup), so that reading "the host's
# disk" reads only our own bytes; and /dev/kmsg, written into the host's kernel
# log. Every container gets a device cgroup, deny-all first; block devices are
# refused in every form; character devices come from an allowlist
# (floor.allow_devices adds more). Names: abfl-*.

load helpers
load ../helper/floor

setup() {
	requires root agentbox
	setup_bundle
	floor_config
	with_caps docker
	update_config '.root.readonly = false'
	MARKER=abfl-disk-$RANDOM$RANDOM
	echo "$MARKER" >"$TEST_DIR/disk.img"
	truncate -s 1M "$TEST_DIR/disk.img"
	LOOP=$(losetup -f --show "$TEST_DIR/disk.img") || skip "no loop device to attach"
	defer losetup -d "$LOOP"
	LOOP_MAJ=$((0x$(stat -c %t "$LOOP")))
	LOOP_MIN=$((0x$(stat -c %T "$LOOP")))
}

teardown() {
	teardown_bundle
}

# The attack: make a node for the loop device (CAP_MKNOD, Docker's default)
# and read it.
read_disk_args() {
	set_args sh -c "mknod /tmp/disk b $LOOP_MAJ $LOOP_MIN 2>&1; head -c 64 /tmp/disk 2>&1 | head -1"
}

@test "devices: with no device rules at all a node for a host disk is made but cannot be read" {
	read_disk_args
	update_config 'del(.linux.resources.devices)'
	# unprotected: no device cgroup (cgroups off) and the floor relaxed
	floor_config 'floor: {refuse_host_devices: false}'
	RUNTIME_ARGS+=(--cgroup-manager disabled)
	run_container abfl-dev-nocg
	assert_success
	[[ "$stdout" == *"$MARKER"* ]] || unprotected_failed "no device cgroup: $output"

	floor_config
	run_container abfl-dev-norules
	assert_success
	[[ "$stdout" != *"$MARKER"* ]] || fail "the host disk was read: $output"
	assert_output_contains "Operation not permitted"
	# the same from a process exec'd into a running box
	set_args abtest pause ready
	run_container abfl-dev-exec --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime exec abfl-dev-exec sh -c "mknod /tmp/disk2 b $LOOP_MAJ $LOOP_MIN 2>&1; head -c 64 /tmp/disk2 2>&1 | head -1"
	assert_success
	[[ "$stdout" != *"$MARKER"* ]] || fail "exec read the host disk: $output"
	assert_output_contains "Operation not permitted"
	runtime delete --force abfl-dev-exec
}

@test "devices: without a device cgroup (--cgroup-manager disabled) the floor makes every mount nodev: made or found nodes open nothing" {
	# a node the image brings, beside the one the attacker makes
	mknod "$BUNDLE/rootfs/disk-in-image" b "$LOOP_MAJ" "$LOOP_MIN"
	chmod 666 "$BUNDLE/rootfs/disk-in-image"
	set_args sh -c "mknod /tmp/disk b $LOOP_MAJ $LOOP_MIN 2>&1; head -c 64 /tmp/disk 2>&1 | head -1; head -c 64 /disk-in-image 2>&1 | head -1; echo x >/dev/null && head -c 4 /dev/zero | wc -c"
	update_config 'del(.linux.resources.devices)'
	floor_config 'floor: {refuse_host_devices: false}'
	RUNTIME_ARGS+=(--cgroup-manager disabled)
	run_container abfl-nodev-off
	assert_success
	[[ "$stdout" == *"$MARKER"* ]] || unprotected_failed "no device cgroup, floor relaxed: $output"

	floor_config
	RUNTIME_ARGS+=(--cgroup-manager disabled)
	run_container abfl-nodev
	assert_success
	[[ "$stdout" != *"$MARKER"* ]] || fail "the host disk was read: $output"
	assert_output_contains "Permission denied"
	# the standard nodes still work (bound from the host's)
	[ "$(tail -n 1 <<<"$stdout")" = 4 ] || fail "/dev/null or /dev/zero broken: $output"
	# and a process exec'd into the box is held the same way
	set_args abtest pause ready
	run_container abfl-nodev-exec --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime exec abfl-nodev-exec sh -c "mknod /dev/disk2 b $LOOP_MAJ $LOOP_MIN 2>&1; head -c 64 /dev/disk2 2>&1 | head -1; head -c 64 /disk-in-image 2>&1 | head -1"
	[[ "$stdout" != *"$MARKER"* ]] || fail "exec read the host disk: $output"
	runtime delete --force abfl-nodev-exec
}

@test "devices: rules that cover a block device, wildcards included, are refused; runc obeys them" {
	read_disk_args
	update_config '.linux.resources.devices += [{allow: true, type: "b", major: $m, access: "rwm"}]' \
		--argjson m "$LOOP_MAJ"
	runc_run abfl-dev-runc
	assert_success
	[[ "$stdout" == *"$MARKER"* ]] || unprotected_failed "runc: $output"

	local rule i=0
	for rule in "{allow: true, type: \"b\", major: $LOOP_MAJ, access: \"rwm\"}" \
		"{allow: true, type: \"b\", major: $LOOP_MAJ, minor: $LOOP_MIN, access: \"r\"}" \
		'{allow: true, type: "b", access: "rw"}' '{allow: true, access: "rwm"}' \
		'{allow: true, type: "a", major: 7, minor: 0, access: "r"}'; do
		i=$((i + 1))
		update_config ".linux.resources.devices = [{allow: false, access: \"rwm\"}, $rule]"
		run_container "abfl-dev-rule$i"
		assert_failure 1
		assert_one_error_line "floor: host devices are refused: linux\.resources\.devices\[1\] allows .*block devices \(b [0-9*]+:[0-9*]+\).*floor\.allow_devices.*floor\.refuse_host_devices"
		assert_nothing_left
	done
	# mknod alone opens nothing: the standard "b *:* m" passes
	update_config '.linux.resources.devices = [{allow: false, access: "rwm"}, {allow: true, type: "b", access: "m"}]'
	run_container abfl-dev-m
	assert_success
	[[ "$stdout" != *"$MARKER"* ]] || fail "the host disk was read: $output"
}

@test "devices: a bind mount of a host block device node is refused; runc reads through it" {
	set_args sh -c "head -c 64 /mnt/disk | head -1"
	add_mount /mnt/disk bind "$LOOP" bind
	update_config '.linux.resources.devices += [{allow: true, type: "b", major: $m, minor: $n, access: "rwm"}]' \
		--argjson m "$LOOP_MAJ" --argjson n "$LOOP_MIN"
	runc_run abfl-bind-runc
	assert_success
	[[ "$stdout" == *"$MARKER"* ]] || unprotected_failed "runc: $output"

	update_config 'del(.linux.resources.devices[-1])'
	run_container abfl-bind
	assert_failure 1
	assert_one_error_line "floor: host devices are refused: mounts\[[0-9]+\] binds the block device $LOOP \(b $LOOP_MAJ:$LOOP_MIN\)"
	assert_nothing_left
}

@test "devices: a bind of the whiteout node (c 0:0) passes the floor and opens nothing; c 1:11 beside it is refused" {
	mknod "$TEST_DIR/whiteout" c 0 0
	add_mount /mnt/wh bind "$TEST_DIR/whiteout" bind
	set_args sh -c "{ head -c 1 /mnt/wh; } 2>/dev/null || echo unopened"
	run_container abfl-wh
	assert_success
	[ "$stdout" = unopened ]
	mknod "$TEST_DIR/kmsg" c 1 11
	add_mount /mnt/kmsg bind "$TEST_DIR/kmsg" bind
	run_container abfl-wh-kmsg
	assert_failure 1
	assert_one_error_line "floor: host devices are refused: mounts\[[0-9]+\] binds the character device $TEST_DIR/kmsg \(c 1:11\)"
	assert_nothing_left
}

@test "devices: a directory holding device nodes shows them, but the device cgroup refuses them; the host's /dev is refused" {
	mkdir "$TEST_DIR/devdir"
	mknod "$TEST_DIR/devdir/disk" b "$LOOP_MAJ" "$LOOP_MIN"
	add_mount /mnt/devdir bind "$TEST_DIR/devdir" rbind
	set_args sh -c "head -c 64 /mnt/devdir/disk 2>&1 | head -1"
	update_config 'del(.linux.resources.devices)'
	floor_config 'floor: {refuse_host_devices: false}'
	RUNTIME_ARGS+=(--cgroup-manager disabled)
	run_container abfl-dir-nocg
	assert_success
	[[ "$stdout" == *"$MARKER"* ]] || unprotected_failed "no device cgroup: $output"
	floor_config
	run_container abfl-dir
	assert_success
	[[ "$stdout" != *"$MARKER"* ]] || fail "the host disk was read: $output"
	assert_output_contains "Operation not permitted"

	update_config '.mounts[-1].source = "/dev"'
	run_container abfl-devdir
	assert_failure 1
	assert_one_error_line "floor: host devices are refused: mounts\[[0-9]+\] binds /dev, a directory of the host's /dev"
	assert_nothing_left
}

@test "devices: linux.devices may not make /dev/kmsg (the host's kernel log); runc does; floor.allow_devices lets an admin allow it" {
	local mark=abfl-kmsg-$RANDOM$RANDOM
	update_config '.linux.devices = [{path: "/dev/kmsg", type: "c", major: 1, minor: 11, fileMode: 384}]
		| .linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 11, access: "rwm"}]'
	set_args sh -c "echo $mark > /dev/kmsg && echo written"
	runc_run abfl-kmsg-runc
	assert_success
	dmesg | grep -q "$mark" || unprotected_failed "runc: $output, and no $mark in dmesg"

	mark=abfl-kmsg-$RANDOM$RANDOM
	set_args sh -c "echo $mark > /dev/kmsg && echo written"
	run_container abfl-kmsg
	assert_failure 1
	assert_one_error_line "floor: host devices are refused: linux\.devices\[0\] is the character device /dev/kmsg \(c 1:11\), which is not on the floor's device allowlist \(add \"c 1:11\" to floor\.allow_devices"
	assert_nothing_left
	! dmesg | grep -q "$mark" || fail "the host's kernel log was written"

	floor_config 'floor: {allow_devices: ["c 1:11"]}'
	run_container abfl-kmsg-allowed
	assert_success
	[ "$stdout" = written ]
	dmesg | grep -q "$mark" || fail "an allowed device did not work"
}

@test "devices: fuse and net/tun are made when asked and opened when a rule allows them, as runc; allow_devices: [] refuses them" {
	update_config '.linux.devices = [{path: "/dev/fuse", type: "c", major: 10, minor: 229},
		{path: "/dev/net/tun", type: "c", major: 10, minor: 200}]'
	set_args sh -c 'abtest tryopen /dev/fuse rw; abtest tryopen /dev/net/tun rw'
	# made, but no rule allows them: not opened (runc grants tun unasked; the floor does not)
	run_container abfl-fuse-norule
	assert_success
	[ "$stdout" = $'EPERM\nEPERM' ] || fail "devices opened without a rule: $output"
	# with the rules an engine adds beside each device (docker --device, podman, CDI)
	update_config '.linux.resources.devices += [{allow: true, type: "c", major: 10, minor: 229, access: "rwm"},
		{allow: true, type: "c", major: 10, minor: 200, access: "rwm"}]'
	run_container abfl-fuse
	assert_success
	[ "$stdout" = $'ok\nok' ] || fail "asked-for devices not usable: $output"
	floor_config 'floor: {allow_devices: []}'
	run_container abfl-fuse-refused
	assert_failure 1
	assert_one_error_line "linux\.devices\[0\] is the character device /dev/fuse \(c 10:229\).*floor\.allow_devices"
	assert_nothing_left
}

@test "devices: the config's rules in order, as runc's dev.bats 'device cgroup deny': a listed /dev/kmsg denied by them is not opened, after update too" {
	local mark=abfl-kdeny-$RANDOM$RANDOM
	update_config '.linux.resources.devices = [{allow: false, access: "rwm"}]
		| .linux.devices = [{path: "/dev/kmsg", type: "c", major: 1, minor: 11}]
		| .process.capabilities.bounding += ["CAP_SYSLOG"] | .process.capabilities.effective += ["CAP_SYSLOG"]
		| .process.capabilities.permitted += ["CAP_SYSLOG"]'
	# runc refuses the write
	set_args sh -c "echo $mark >/dev/kmsg && echo written"
	runc_run abfl-kdeny-runc
	[[ "$output" == *"Operation not permitted"* ]] || fail "runc: $output"
	! dmesg | grep -q "$mark" || fail "runc wrote the kernel log"
	# the floor relaxed (a permissive config): a rule that allows it writes there
	floor_config 'floor: {refuse_host_devices: false, allow_capabilities: [CAP_SYSLOG]}'
	update_config '.linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 11, access: "rw"}]'
	run_container abfl-kallow
	assert_success
	[ "$stdout" = written ] || unprotected_failed "the allow rule: $output"
	dmesg | grep -q "$mark" || unprotected_failed "no $mark in dmesg"
	# its rules deny it: neither written nor read, as runc
	mark=abfl-kdeny-$RANDOM$RANDOM
	update_config 'del(.linux.resources.devices[-1])'
	set_args sh -c "echo $mark >/dev/kmsg; head -n 1 /dev/kmsg >/dev/null; echo done; abtest pause ready"
	run_container abfl-kdeny --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local n
	n=$(grep -c "Operation not permitted" "$RT_STDOUT" "$RT_STDERR" | awk -F: '{ s += $2 } END { print s }')
	[ "$n" = 2 ] || fail "write and read not both refused: $(cat "$RT_STDOUT" "$RT_STDERR")"
	! dmesg | grep -q "$mark" || fail "a listed device denied by the config's rules was written"
	runtime update --pids-limit 42 abfl-kdeny
	assert_success
	runtime exec abfl-kdeny sh -c "echo $mark-after >/dev/kmsg"
	assert_output_contains "Operation not permitted"
	! dmesg | grep -q "$mark-after" || fail "written after update"
	runtime delete --force abfl-kdeny
}

@test "devices: Docker's list denies fuse: a /dev/fuse listed beside it is made but not opened, as runc; the config may deny the granted set" {
	update_config '.linux.resources.devices = $d[0].linux.resources.devices
		| .linux.devices = [{path: "/dev/fuse", type: "c", major: 10, minor: 229}]' \
		--slurpfile d "$FIXTURES_DIR/docker-create-config.json"
	set_args sh -c 'abtest stat /dev/fuse; abtest tryopen /dev/fuse rw'
	run_container abfl-contra
	assert_success
	[[ "${lines[0]}" == "type=chr "*"rdev=10:229 "* ]] || fail "/dev/fuse not made: $output"
	[ "${lines[1]}" = EPERM ] || fail "/dev/fuse opened against the config's denial: $output"
	# and the granted set is not reopened over the config's own denial
	update_config '.linux.devices = [] | .linux.resources.devices += [{allow: false, type: "c", major: 1, minor: 5, access: "rwm"}]'
	set_args sh -c 'abtest tryopen /dev/zero; abtest tryopen /dev/null'
	run_container abfl-deny-zero
	assert_success
	[ "$stdout" = $'EPERM\nok' ] || fail "the config's denial did not hold: $output"
}

@test "devices: the console (c 5:1) is opened only when the config allows it, as runc" {
	# (a tty's open may wait for its line: bounded, though a console's does not)
	set_args sh -c 'mknod /dev/abconsole c 5 1 && timeout 5 abtest tryopen /dev/abconsole r'
	update_config '.linux.resources.devices = [{allow: false, access: "rwm"}]'
	run_container abfl-console
	assert_success
	[ "$stdout" = EPERM ] || fail "the host's console opened without a rule: $output"
	# Docker's list names it
	update_config '.linux.resources.devices = $d[0].linux.resources.devices' \
		--slurpfile d "$FIXTURES_DIR/docker-create-config.json"
	run_container abfl-console-docker
	assert_success
	[[ "$stdout" =~ ^(ok|EIO|ENXIO)$ ]] || unprotected_failed "Docker's rule for the console did not apply: $output"
}

@test "devices: in a user namespace the standard devices are bind-mounted from the host (no mknod there)" {
	requires userns
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))
		| .linux.devices = [{path: "/dev/fuse", type: "c", major: 10, minor: 229}]
		| .linux.resources.devices += [{allow: true, type: "c", major: 10, minor: 229, access: "rwm"}]'
	set_args sh -c 'abtest stat /dev/null; abtest tryopen /dev/null rw; abtest tryopen /dev/fuse rw;
		grep -c " /dev/null \| /dev/fuse " /proc/self/mountinfo; mknod /tmp/x c 1 3 2>&1 | grep -c "not permitted"; true'
	run_container abfl-userns
	assert_success
	[[ "${lines[0]}" == "type=chr mode=0666 rdev=1:3 "* ]] || fail "no /dev/null: $output"
	# the host's node, with the host's permissions (0600 fuse here: EACCES)
	[ "${lines[1]}" = ok ] && [[ "${lines[2]}" =~ ^(ok|EACCES)$ ]] || fail "devices not usable: $output"
	[ "${lines[3]}" = 2 ] || fail "not bind mounts: $output"
	[ "${lines[4]}" = 1 ] || fail "mknod worked in the user namespace: $output"
	# a device whose host node differs is one clear line, not a wrong device
	update_config '.linux.devices = [{path: "/dev/fuse", type: "c", major: 1, minor: 11}]
		| .linux.resources.devices[-1] = {allow: true, type: "c", major: 1, minor: 11, access: "rwm"}
		| .process.args = ["true"]'
	floor_config 'floor: {allow_devices: ["c 1:11"]}'
	run_container abfl-userns-bad
	assert_failure 1
	assert_one_error_line "device /dev/fuse: no mknod in a user namespace, and the host's /dev/fuse is not c 1:11 to bind"
	assert_nothing_left
}
