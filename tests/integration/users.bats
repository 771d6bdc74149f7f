#!/usr/bin/env bats
# Non-root users: what `docker run -u 1000:1000`, an image's USER, podman
# --user and a pod's runAsUser hand the runtime — process.user with a uid and
# gid other than 0, with or without effective capabilities — through
# create + start, run --detach and run alike; exec --user and
# --additional-gids; the terminal and stdio the user is given. Each test runs
# against runc too (RUNTIME=/usr/sbin/runc): what runc does is what engines
# expect.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# Docker's process for `-u 1000:1000`: the default capabilities in the bounding
# set only, none effective (what the reduced case of issue 24 sends).
as_docker_user() {
	update_config '.process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {bounding: ["CAP_CHOWN", "CAP_KILL", "CAP_SETUID", "CAP_SETGID", "CAP_NET_BIND_SERVICE"]}'
}

# A user namespace mapping 0 to 200000: the mapped root must reach the rootfs
# through our 0700 temp dirs, and cannot mount a cgroupfs.
userns_bundle() {
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 200000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 200000, size: 65536}]
		| .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
}

@test "users: create + start as uid 1000 with only a bounding capability set (docker run -u 1000:1000)" {
	as_docker_user
	set_args abtest id
	create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped
	grep -q '^uid=1000 gid=1000 ' "$CT_STDOUT" || fail "the program did not run as 1000:1000: $(cat "$CT_STDOUT" "$CT_STDERR")"
	runtime delete ct
	assert_success
	assert_nothing_left
}

@test "users: create + start as uid 1000 with effective capabilities, and additional groups" {
	update_config '.process.user = {uid: 1000, gid: 1000, additionalGids: [100, 65534]}
		| .process.capabilities.effective = .process.capabilities.bounding
		| .process.capabilities.permitted = .process.capabilities.bounding
		| .process.capabilities.inheritable = .process.capabilities.bounding
		| .process.capabilities.ambient = .process.capabilities.bounding'
	# (a non-root program keeps capabilities across execve only as ambient ones)
	# builtins only: a program sh execs without ambient ones starts without any
	set_args sh -c 'abtest id; while read -r l; do case $l in CapEff*) echo "$l";; esac; done </proc/$$/status'
	create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped
	grep -q '^uid=1000 gid=1000 groups=100,65534 ' "$CT_STDOUT" || fail "$(cat "$CT_STDOUT" "$CT_STDERR")"
	# the capabilities are the config's, not dropped by the user switch
	grep -q '^CapEff:[[:space:]]*0*[1-9a-f][0-9a-f]*$' "$CT_STDOUT" || fail "no effective capabilities: $(cat "$CT_STDOUT")"
}

@test "users: run --detach as a non-root user; the state directory is the runtime's alone" {
	as_docker_user
	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	[ "$(state_field ct .status)" = running ]
	runtime kill ct KILL
	wait_for_status ct stopped
	if is_agentbox; then
		# the init reached its exec fifo through the fd it was given, not by path
		[ "$(stat -c %a "$ROOT/ct")" = 700 ] || fail "state dir mode $(stat -c %a "$ROOT/ct")"
	fi
}

@test "users: an image USER with its own group (uid 1000, gid 100) runs through create + start with a terminal" {
	requires tty
	update_config '.process.terminal = true | .process.user = {uid: 1000, gid: 100}'
	set_args sh -c 'stat -c %u:%g $(tty); abtest id'
	start_recvtty
	create_container ct --console-socket "$CONSOLE_SOCKET"
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped
	wait "$RECVTTY_PID"
	local out
	out=$(tty_output)
	# the pty is the user's, its group devpts' tty group (gid=5 in the mount options)
	[ "$(sed -n 1p <<<"$out")" = 1000:5 ] || fail "tty owner: $out"
	[[ "$(sed -n 2p <<<"$out")" == "uid=1000 gid=100 "* ]] || fail "user: $out"
}

@test "users: the user may reopen its stdio pipes (/dev/stdout), a host file given as stdio keeps its owner" {
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_args sh -c 'echo through-dev-stdout >/dev/stdout'
	local out=$TEST_DIR/out
	# stdout a pipe (as every engine gives it): the user can reopen it
	timeout 30 "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" run --bundle "$BUNDLE" ct 2>&1 3>&- </dev/null | cat >"$out"
	grep -qx through-dev-stdout "$out" || fail "reopening /dev/stdout: $(cat "$out")"
	if is_agentbox; then
		# a regular host file as stdout: never handed to the container's user
		# (runc chowns it to uid 1000)
		runtime run --bundle "$BUNDLE" ct2
		[ "$(stat -c %u "$RT_STDOUT")" = 0 ] || fail "the host file now belongs to uid $(stat -c %u "$RT_STDOUT")"
	fi
}

@test "users: a user namespace with a non-root user: create + start, the fifo handed over through the id maps" {
	requires userns
	update_config '.process.user = {uid: 1000, gid: 1000}'
	userns_bundle
	set_args sh -c 'abtest id; cat /proc/self/uid_map'
	create_container ct
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped
	grep -q '^uid=1000 gid=1000 ' "$CT_STDOUT" || fail "$(cat "$CT_STDOUT" "$CT_STDERR")"
	grep -qE '^ +0 +200000 +65536$' "$CT_STDOUT" || fail "not in the mapped namespace: $(cat "$CT_STDOUT")"
}

# bats test_tags=agentbox-only
@test "users: a process.user the user namespace does not map: one clear line, nothing left" {
	requires userns agentbox
	update_config '.process.user = {uid: 70000, gid: 1000}'
	userns_bundle
	create_container ct
	assert_failure 1
	assert_one_error_line 'uid 70000 is not mapped in the container.s user namespace'
	assert_nothing_left
}

@test "users: exec --user UID keeps the process' group; --additional-gids adds groups" {
	update_config '.process.user = {uid: 0, gid: 100}'
	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime exec --user 1000 ct abtest id
	assert_success
	[[ "$stdout" == "uid=1000 gid=100 "* ]] || fail "$stdout"
	runtime exec --user 1000:1000 --additional-gids 100 --additional-gids 65534 ct abtest id
	assert_success
	[[ "$stdout" == "uid=1000 gid=1000 groups=100,65534 "* ]] || fail "$stdout"
	runtime exec --user 1000:1000 --additional-gids x ct abtest id
	assert_failure
}

@test "users: exec --user into a container running as another user, with a cwd that user cannot reach" {
	# runc's "runc exec --user with no access to cwd"
	mkdir -p "$BUNDLE/rootfs/root"
	chown 42 "$BUNDLE/rootfs/root"
	chmod 700 "$BUNDLE/rootfs/root"
	update_config '.process.cwd = "/root" | .process.user.uid = 42'
	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime exec --user 1000 ct echo "Hello from exec"
	assert_success
	assert_output_contains "Hello from exec"
}

# bats test_tags=agentbox-only
@test "users: a cwd only process.user may enter is entered as that user (a runtime without CAP_DAC_OVERRIDE)" {
	# runc fails earlier here, on its v1 cgroup directories
	requires agentbox
	command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
	mkdir -p "$BUNDLE/rootfs/home/u"
	chown 1000:1000 "$BUNDLE/rootfs/home/u"
	chmod 700 "$BUNDLE/rootfs/home/u"
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.cwd = "/home/u"'
	set_args sh -c 'pwd; abtest id'
	# root that may not override file permissions (an engine run with a reduced
	# bounding set, root squashed by NFS): chdir fails as root, works as 1000
	local out
	out=$(setpriv --bounding-set -dac_override,-dac_read_search \
		"$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" --cgroup-manager disabled run --bundle "$BUNDLE" ct 2>&1 3>&- </dev/null) ||
		fail "run: $out"
	[ "$(sed -n 1p <<<"$out")" = /home/u ] || fail "$out"
	[[ "$(sed -n 2p <<<"$out")" == "uid=1000 gid=1000 "* ]] || fail "$out"
	# a cwd the user may not enter either: one clear line
	chmod 000 "$BUNDLE/rootfs/home/u"
	out=$(setpriv --bounding-set -dac_override,-dac_read_search \
		"$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" --cgroup-manager disabled run --bundle "$BUNDLE" ct2 2>&1 3>&- </dev/null) &&
		fail "a cwd nobody may enter was entered: $out"
	[ "$out" = "agentbox: process.cwd: chdir /home/u as uid 1000: Permission denied" ] || fail "$out"
}
