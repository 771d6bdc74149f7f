#!/usr/bin/env bats
# Cases of the peer suites (runtime-tools, crun's tests, runc's integration
# suite) that agentbox takes as runc and crun do, or refuses with one line
# (docs/conformance.md says which and why). Each would fail without its fix.

load helpers

setup() {
	requires root
	setup_bundle
	CT_N=0
}

teardown() {
	teardown_bundle
}

# in_container ARGS...: run ARGS as the container's process (a new id each
# call); $status/$output/$stdout are the runtime's, so the program's.
in_container() {
	CT_N=$((CT_N + 1))
	set_args "$@"
	run_container "abc2-ct$CT_N"
}

# ---------------------------------------------------------------- process

# bats test_tags=agentbox-only
@test "linux.memoryPolicy is the init's NUMA policy (set_mempolicy), inherited by its children" {
	# runc 1.1.5 ignores linux.memoryPolicy (runtime-spec 1.3)
	requires agentbox
	[ -e /proc/self/numa_maps ] || skip "kernel without NUMA memory policies"
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "0", flags: ["MPOL_F_STATIC_NODES"]}'
	# numa_maps' first line is the program's text; the policy shows on each
	in_container sh -c 'head -n 1 /proc/self/numa_maps'
	assert_success
	[[ "$stdout" == *" bind=static:0 "* ]] || fail "numa_maps: $stdout"
	update_config '.linux.memoryPolicy = {mode: "MPOL_LOCAL"}'
	in_container sh -c 'head -n 1 /proc/self/numa_maps'
	assert_success
	[[ "$stdout" == *" local "* ]] || fail "numa_maps: $stdout"
	# a node this host does not have: the kernel's refusal, named
	update_config '.linux.memoryPolicy = {mode: "MPOL_BIND", nodes: "1023"}'
	in_container true
	assert_failure 1
	assert_one_error_line 'linux\.memoryPolicy: set MPOL_BIND on nodes 1023: Invalid argument'
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "process.ioPriority without a priority takes 0, as the schema allows" {
	# runc 1.1.5 ignores process.ioPriority
	requires agentbox
	update_config '.process.ioPriority = {class: "IOPRIO_CLASS_IDLE"}'
	in_container sh -c 'ionice -p $$'
	assert_success
	[[ "$stdout" == idle* ]] || fail "ionice: $stdout"
}

# ---------------------------------------------------------------- mounts

@test "mount destinations with repeated slashes or a trailing slash have one spelling" {
	add_mount '//abc2//multi/' tmpfs tmpfs size=1m
	update_config '.linux.devices = [{path: "/dev/abc2null/", type: "c", major: 1, minor: 3}]'
	in_container sh -c 'grep -c " /abc2/multi " /proc/self/mountinfo; test -c /dev/abc2null && echo dev'
	assert_success
	[ "$stdout" = $'1\ndev' ] || fail "$output"
}

@test "a destination through a symlink whose target does not exist yet is made where it points, inside the root" {
	# relative (crun's mount-symlink-not-existing) and absolute, naming a host path
	local outside=$TEST_DIR/abc2-outside
	ln -s ../foo/bar/not/here "$BUNDLE/rootfs/etc/abc2-rel"
	ln -s "$outside/x" "$BUNDLE/rootfs/etc/abc2-abs"
	add_mount /etc/abc2-rel bind /etc/hostname bind ro
	add_mount /etc/abc2-abs tmpfs tmpfs size=1m
	in_container sh -c "awk '\$5 == \"/foo/bar/not/here\" || \$5 == \"$outside/x\" { print \$5 }' /proc/self/mountinfo"
	assert_success
	[ "$stdout" = "/foo/bar/not/here"$'\n'"$outside/x" ] || fail "mounted at: $output"
	# made in the rootfs, never on the host
	[ -f "$BUNDLE/rootfs/foo/bar/not/here" ] && [ -d "$BUNDLE/rootfs$outside/x" ]
	[ ! -e "$outside" ] || fail "$outside was made on the host"
}

# bats test_tags=agentbox-only
@test "procfs or sysfs over a symlink, or device nodes under one, are refused (runc's rule)" {
	requires agentbox
	# the trick: an image whose /proc points elsewhere would get procfs
	# there, and the masked and read-only paths under /proc would miss it
	rm -rf "$BUNDLE/rootfs/proc"
	ln -s /abc2-procfs "$BUNDLE/rootfs/proc"
	if command -v runc >/dev/null; then
		# runc refuses it the same way
		run runc --root "$TEST_DIR/runc" run --bundle "$BUNDLE" abc2-runc
		[ "$status" -ne 0 ] && [[ "$output" == *"must be mounted on ordinary directory"* ]] ||
			fail "runc: $output"
	fi
	in_container true
	assert_failure 1
	assert_one_error_line 'proc must be mounted on ordinary directory: /proc is a symlink'
	assert_nothing_left
	rm "$BUNDLE/rootfs/proc" && mkdir "$BUNDLE/rootfs/proc"
	# device nodes only in a real /dev: here there is no /dev mount, and the
	# image's /dev points at a directory with a look-alike of a device
	update_config '.mounts |= map(select(.destination | startswith("/dev") | not))'
	mkdir -p "$BUNDLE/rootfs/abc2-devs"
	mv "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/abc2-olddev"
	ln -s /abc2-devs "$BUNDLE/rootfs/dev"
	in_container true
	assert_failure 1
	assert_one_error_line 'device /dev/null: /dev is a symlink'
	[ -z "$(ls -A "$BUNDLE/rootfs/abc2-devs")" ] || fail "nodes made through the symlink"
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "a tmpfs without mode= keeps the mode of the directory it covers; mode= wins" {
	# runc 1.1.5 lets the covered directory's mode override an explicit
	# mode= too (crun's mount-tmpfs-explicit-mode)
	requires agentbox
	mkdir -m 0712 "$BUNDLE/rootfs/abc2-keep" "$BUNDLE/rootfs/abc2-explicit"
	chmod 0712 "$BUNDLE/rootfs/abc2-keep" "$BUNDLE/rootfs/abc2-explicit"
	add_mount /abc2-keep tmpfs tmpfs ro
	add_mount /abc2-explicit tmpfs tmpfs mode=1777
	add_mount /abc2-new tmpfs tmpfs
	in_container stat -c %a /abc2-keep /abc2-explicit /abc2-new
	assert_success
	# a new directory is made 0755, and the tmpfs keeps that too
	[ "$stdout" = $'712\n1777\n755' ] || fail "modes: $output"
}

@test "a read-only /dev still gets /dev/pts, /dev/shm and the device nodes, then turns read-only" {
	update_config '.mounts |= map((select(.destination == "/dev") | .options += ["ro"]) // .)'
	in_container sh -c 'grep "^tmpfs /dev " /proc/mounts | cut -d" " -f4 | cut -d, -f1
		test -c /dev/null && test -d /dev/pts/ && echo nodes
		touch /dev/abc2 2>/dev/null || echo read-only
		touch /dev/shm/abc2 && echo shm-writable'
	assert_success
	[ "$stdout" = $'ro\nnodes\nread-only\nshm-writable' ] || fail "$output"
}

# bats test_tags=agentbox-only
@test "a user namespace binds a source only the host's root may reach, as runc and crun" {
	# runc 1.1.5 binds such sources too; the last check is agentbox's message
	requires agentbox userns
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	local hidden=$TEST_DIR/abc2-hidden
	mkdir -p "$hidden/m"
	echo inside >"$hidden/m/file"
	ln -s "$hidden/m" "$hidden/link"
	chmod 0700 "$hidden"
	mkdir "$BUNDLE/rootfs/abc2-m" "$BUNDLE/rootfs/abc2-l"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
	add_mount /abc2-m bind "$hidden/m" rbind ro nosuid
	add_mount /abc2-l bind "$hidden/link" bind ro
	in_container sh -c 'cat /abc2-m/file /abc2-l/file; grep " /abc2-m " /proc/self/mountinfo | cut -d" " -f6'
	assert_success
	[ "${lines[0]}" = inside ] && [ "${lines[1]}" = inside ] || fail "$output"
	# the source's own and the asked-for flags hold
	[[ ",${lines[2]}," == *,ro,* && ",${lines[2]}," == *,nosuid,* ]] || fail "flags: ${lines[2]}"
	# a source that does not exist is still named by the init
	mkdir "$BUNDLE/rootfs/abc2-x"
	add_mount /abc2-x bind "$hidden/none" bind
	in_container true
	assert_failure 1
	assert_one_error_line "bind mount source $hidden/none: "
}

# ---------------------------------------------------------------- sysctls

# bats test_tags=agentbox-only
@test "kernel.hostname as a sysctl is refused; kernel.domainname only agreeing with domainname" {
	# runc refuses both the same way; runc 1.1.5 ignores domainname itself
	requires agentbox
	update_config '.linux.sysctl = {"kernel.hostname": "abc2"}'
	in_container true
	assert_failure 1
	assert_one_error_line 'linux\.sysctl: "kernel\.hostname" conflicts with the hostname field: set hostname instead'
	assert_nothing_left
	update_config '.domainname = "abc2.example" | .linux.sysctl = {"kernel.domainname": "other.example"}'
	in_container true
	assert_failure 1
	assert_one_error_line 'linux\.sysctl: "kernel\.domainname" conflicts with the domainname field \("other\.example" and "abc2\.example"\)'
	assert_nothing_left
	update_config '.linux.sysctl = {"kernel.domainname": "abc2.example"}'
	in_container cat /proc/sys/kernel/domainname
	assert_success
	[ "$stdout" = abc2.example ]
}

# ---------------------------------------------------------------- seccomp

# the engine's profile alone, as runc applies it: agentbox's own profile,
# stacked on top, answers ENOSYS itself and would hide the engine's answer
engine_seccomp_only() {
	{ cat "$AGENT_CONFIG_PERMISSIVE"; printf 'seccomp:\n  profile: none\n'; } >"$TEST_DIR/abc2-nosec.yaml"
	RUNTIME_ARGS=(--config "$TEST_DIR/abc2-nosec.yaml")
}

# bats test_tags=agentbox-only
@test "a profile whose default refuses answers ENOSYS for syscalls newer than any it names (runc's -ENOSYS handling)" {
	requires agentbox
	engine_seccomp_only
	# Docker's default profile: SCMP_ACT_ERRNO (EPERM) for what it does not name
	update_config '.linux.seccomp = $p[0].linux.seccomp' --slurpfile p "$FIXTURES_DIR/docker-create-config.json"
	in_container sh -c 'abtest syscall 1000; abtest syscall 200000'
	assert_success
	[ "$stdout" = $'ENOSYS\nENOSYS' ] || fail "$output"
	# an older syscall it does not name still gets the profile's default
	[ "$(uname -m)" = x86_64 ] || return 0
	in_container abtest syscall 134   # uselib on x86-64
	assert_success
	[ "$stdout" = EPERM ] || fail "$output"
}

# bats test_tags=agentbox-only
@test "SCMP_ACT_NOTIFY on write is refused: the runtime's own writes would wait on the listener" {
	# as runc refuses it
	requires agentbox
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: "/run/abc2-none.sock",
		syscalls: [{names: ["mkdir", "write"], action: "SCMP_ACT_NOTIFY"}]}'
	in_container true
	assert_failure 1
	assert_one_error_line 'linux\.seccomp\.syscalls\[0\]\.names\[1\]: SCMP_ACT_NOTIFY cannot be used for the write syscall'
	assert_nothing_left
}

# ---------------------------------------------------------------- --no-pivot

@test "--no-pivot (floor relaxed) leaves no host procfs a nested user namespace could remount, as runc" {
	# runc's "run --no-pivot must not expose bare /proc": without pivot_root
	# the host's /proc stays in the mount namespace, out of the chroot, and
	# lets the kernel grant a fresh, unmasked procfs to a nested user namespace
	requires userns
	# agentbox's agent profile refuses unshare already: seen without it
	is_agentbox && engine_seccomp_only
	update_config '.process.args = ["unshare", "-mrpf", "sh", "-c", "mount -t proc none /proc && echo mounted"]
		| .process.capabilities.bounding += ["CAP_SETFCAP"] | .process.capabilities.permitted += ["CAP_SETFCAP"]'
	run_container abc2-nopivot --no-pivot
	assert_failure
	[[ "$output" == *"mount: permission denied"* ]] || fail "$output"
	refute_output_contains mounted
	# and an ordinary container still runs without pivot_root
	set_args sh -c 'test -r /proc/self/status && echo proc'
	run_container abc2-nopivot2 --no-pivot
	assert_success
	[ "$stdout" = proc ]
}
