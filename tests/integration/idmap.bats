#!/usr/bin/env bats
# Id-mapped mounts (runtime-spec 1.2): a mount's uidMappings/gidMappings, and
# the "idmap"/"ridmap" options that take the container's user namespace
# mappings. Applied as written, or refused with one line where the kernel or
# the file system cannot: never mounted without the mapping.

load helpers

setup() {
	requires root agentbox
	setup_bundle
	SRC=$TEST_DIR/src
	mkdir -p "$SRC/sub"
	echo data >"$SRC/file"
	chown 0:0 "$SRC/file"
	chown 7:7 "$SRC/sub"
	chmod a+rx "$TEST_DIR" "$SRC"
}

teardown() {
	teardown_bundle
}

@test "idmap: a mount's own uidMappings/gidMappings show files under the mapped ids" {
	update_config '.mounts += [{destination: "/mnt", type: "bind", source: $s, options: ["rbind"],
		uidMappings: [{containerID: 0, hostID: 1234, size: 10}],
		gidMappings: [{containerID: 0, hostID: 5678, size: 10}]}]' --arg s "$SRC"
	set_args sh -c 'stat -c "%u:%g" /mnt/file /mnt/sub; cat /mnt/file'
	run_container ct-idmap
	assert_success
	[ "$stdout" = $'1234:5678\n1241:5685\ndata' ] || fail "not id-mapped: $output"
	# and without the mapping the same mount shows the disk's ids
	update_config '.mounts[-1] |= del(.uidMappings, .gidMappings)'
	run_container ct-plain
	assert_success
	[ "$stdout" = $'0:0\n7:7\ndata' ] || fail "$output"
}

@test "idmap: the idmap option takes the container's user namespace mappings" {
	requires userns
	chmod a+x "$BATS_RUN_TMPDIR"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))
		| .mounts += [{destination: "/mnt", type: "bind", source: $s, options: ["rbind", "idmap"]}]' \
		--arg s "$SRC"
	set_args sh -c 'stat -c "%u:%g" /mnt/file /mnt/sub; echo new > /mnt/made && stat -c "%u:%g" /mnt/made'
	run_container ct-userns
	assert_success
	# root's files are root's inside, and what root makes is root's on disk
	[ "$stdout" = $'0:0\n7:7\n0:0' ] || fail "not id-mapped: $output"
	[ "$(stat -c %u:%g "$SRC/made")" = 0:0 ] || fail "on disk: $(stat -c %u:%g "$SRC/made")"
}

@test "idmap: refused with one line where it cannot be applied; nothing left" {
	update_config '.mounts += [{destination: "/mnt", type: "bind", source: $s, options: ["rbind", "idmap"]}]' \
		--arg s "$SRC"
	run_container ct-nomap
	assert_failure 1
	assert_one_error_line "mounts\[[0-9]+\]: an id-mapped mount needs uidMappings and gidMappings"
	assert_nothing_left
	# a file system without id-mapping support (sysfs)
	update_config '.mounts[-1] = {destination: "/mnt", type: "bind", source: "/sys/kernel", options: ["bind"],
		uidMappings: [{containerID: 0, hostID: 1234, size: 1}],
		gidMappings: [{containerID: 0, hostID: 1234, size: 1}]}'
	run_container ct-nofs
	assert_failure 1
	assert_one_error_line "mounts\[[0-9]+\]: /sys/kernel cannot be id-mapped here"
	assert_nothing_left
	# not a bind mount
	update_config '.mounts[-1] = {destination: "/mnt", type: "tmpfs", source: "tmpfs", options: ["idmap"]}'
	run_container ct-tmpfs
	assert_failure 1
	assert_one_error_line "mounts\[[0-9]+\]\.options\[0\]: idmap needs a bind mount"
	assert_nothing_left
}
