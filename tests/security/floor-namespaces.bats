#!/usr/bin/env bats
# The floor refuses the host's network, PID, IPC and mount namespaces (issue
# 22, hole 3): by identity, whatever path names them (the runtime's own
# /proc/self, /proc/thread-self, a host process' /proc/PID/ns, a bind-mounted
# nsfs file, a symlink), a missing entry counts as the host's, and what cannot
# be told apart is refused. Names: abfl-*. No network traffic.

load helpers
load ../helper/floor

setup() {
	requires root agentbox
	setup_bundle
	floor_config
	with_caps docker
}

teardown() {
	teardown_bundle
}

# set_ns TYPE PATH: join TYPE by PATH ("" = drop the entry: the host's).
set_ns() {
	if [ -z "$2" ]; then
		update_config '.linux.namespaces |= map(select(.type != $t))' --arg t "$1"
	else
		update_config '.linux.namespaces |= map(if .type == $t then .path = $p else . end)' \
			--arg t "$1" --arg p "$2"
	fi
}

# The probe: does the container see this shell (a host process) in /proc?
sees_host_pid() {
	set_args sh -c "test -d /proc/$$ && echo HOST-VISIBLE || echo hidden"
}

@test "floor: the host's PID namespace is refused under every name for it; runc joins it" {
	sees_host_pid
	set_ns pid /proc/self/ns/pid
	runc_run abfl-pid-runc
	assert_success
	[ "$stdout" = HOST-VISIBLE ] || unprotected_failed "runc: $output"

	mount --bind /proc/self/ns/pid "$TEST_DIR/pidns-bind" 2>/dev/null ||
		{ touch "$TEST_DIR/pidns-bind" && mount --bind /proc/self/ns/pid "$TEST_DIR/pidns-bind"; }
	defer umount "$TEST_DIR/pidns-bind"
	ln -s /proc/self/ns/pid "$TEST_DIR/pidns-link"
	local p i=0
	for p in /proc/self/ns/pid /proc/thread-self/ns/pid "/proc/$$/ns/pid" "$TEST_DIR/pidns-bind" \
		"$TEST_DIR/pidns-link" /proc/1/ns/pid; do
		i=$((i + 1))
		set_ns pid "$p"
		run_container "abfl-pid$i"
		assert_failure 1
		assert_one_error_line "floor: .*PID namespace.*floor\.refuse_host_pid"
		assert_nothing_left
	done
}

@test "floor: relaxed (floor.refuse_host_pid: false) the host's PID namespace is joined: the attack works there" {
	sees_host_pid
	set_ns pid /proc/self/ns/pid
	floor_config 'floor: {refuse_host_pid: false}'
	run_container abfl-pid-relaxed
	assert_success
	[ "$stdout" = HOST-VISIBLE ] || unprotected_failed "relaxed: $output"
}

@test "floor: a PID namespace made below the host's is joined (no false refusal)" {
	unshare --pid --fork --mount-proc sleep 60 </dev/null >/dev/null 2>&1 3>&- &
	local holder=$! child i
	defer kill "$holder"
	for ((i = 0; i < 250; i++)); do
		child=$(pgrep -P "$holder" sleep) && break
		sleep 0.02
	done
	[ -n "$child" ] || fail "no sleep in the new PID namespace"
	sees_host_pid
	set_ns pid "/proc/$child/ns/pid"
	floor_config 'egress: {enforce: false}'
	run_container abfl-pid-child
	assert_success
	[ "$stdout" = hidden ] || fail "the child namespace showed the host: $output"
}

@test "floor: a missing PID namespace entry is the host's: refused" {
	set_ns pid ""
	run_container abfl-pid-missing
	assert_failure 1
	assert_one_error_line "floor: the host's PID namespace is refused: linux\.namespaces has no \"pid\" entry.*floor\.refuse_host_pid"
	assert_nothing_left
}

@test "floor: the host's network namespace is refused by identity, firewall on or off; runc joins it" {
	set_args abtest ns
	set_ns network /proc/self/ns/net
	runc_run abfl-net-runc
	assert_success
	[ "$(ns_of "$stdout" net)" = "$(host_ns net)" ] || unprotected_failed "runc: $stdout"

	touch "$TEST_DIR/netns-bind"
	mount --bind /proc/self/ns/net "$TEST_DIR/netns-bind"
	defer umount "$TEST_DIR/netns-bind"
	local p cfg i=0
	for cfg in '{}' 'egress: {enforce: false}'; do
		floor_config "$cfg"
		for p in /proc/self/ns/net /proc/thread-self/ns/net "/proc/$$/ns/net" "$TEST_DIR/netns-bind"; do
			i=$((i + 1))
			set_ns network "$p"
			run_container "abfl-net$i"
			assert_failure 1
			assert_one_error_line "floor: the host's network namespace is refused: .*floor\.refuse_host_network"
			assert_nothing_left
		done
	done
	set_ns network ""
	run_container abfl-net-missing
	assert_failure 1
	assert_one_error_line "floor: the host's network namespace is refused: linux\.namespaces has no \"network\" entry"
}

@test "floor: a named network namespace of the container's own is joined" {
	ip netns add abfl-ns1
	defer ip netns delete abfl-ns1
	set_args abtest ns
	set_ns network /run/netns/abfl-ns1
	floor_config 'egress: {enforce: false}'
	run_container abfl-net-own
	assert_success
	[ "$(ns_of "$stdout" net)" != "$(host_ns net)" ] ||
		fail "the container is in the host's network namespace"
}

@test "floor: the host's IPC namespace (its shared memory) is refused; runc and the relaxed floor share it" {
	local shmid
	shmid=$(ipcmk -M 4096 | awk '{ print $NF }')
	[ -n "$shmid" ] || fail "ipcmk made no segment"
	defer ipcrm -m "$shmid"
	set_ns ipc ""
	set_args sh -c "awk '\$2 == $shmid { found = 1 } END { print found ? \"HOST-SHM\" : \"none\" }' /proc/sysvipc/shm"
	runc_run abfl-ipc-runc
	assert_success
	[ "$stdout" = HOST-SHM ] || unprotected_failed "runc: $output"
	floor_config 'floor: {refuse_host_ipc: false}'
	run_container abfl-ipc-relaxed
	assert_success
	[ "$stdout" = HOST-SHM ] || unprotected_failed "relaxed: $output"

	floor_config
	run_container abfl-ipc
	assert_failure 1
	assert_one_error_line "floor: the host's IPC namespace is refused: linux\.namespaces has no \"ipc\" entry.*floor\.refuse_host_ipc"
	assert_nothing_left
	set_ns ipc ""
	update_config '.linux.namespaces += [{type: "ipc", path: "/proc/self/ns/ipc"}]'
	run_container abfl-ipc-path
	assert_failure 1
	assert_one_error_line "floor: the host's IPC namespace is refused: linux\.namespaces\[[0-9]+\]\.path /proc/self/ns/ipc is the runtime's own"
	assert_nothing_left
}

@test "floor: the host's mount namespace is refused (a config check: joined, the mounts would land on the host)" {
	update_config '.linux.namespaces |= map(if .type == "mount" then .path = "/proc/self/ns/mnt" else . end)'
	run_container abfl-mnt
	assert_failure 1
	assert_one_error_line "floor: the host's mount namespace is refused: .*/proc/self/ns/mnt is the runtime's own.*floor\.refuse_privileged"
	assert_nothing_left
}

@test "floor: a namespace path that is no namespace, or of another kind, is one clear line" {
	set_ns pid /etc/hostname
	run_container abfl-notns
	assert_failure 1
	assert_one_error_line "linux\.namespaces\[0\]\.path: /etc/hostname is not a namespace file"
	set_ns pid /proc/self/ns/net
	run_container abfl-wrongns
	assert_failure 1
	assert_one_error_line "linux\.namespaces\[0\]\.path: /proc/self/ns/net is not a pid namespace"
	assert_nothing_left
}

@test "floor: a bind of the host's /dev/shm is host IPC too: refused; runc shares it" {
	local f=abfl-shm-$RANDOM$RANDOM
	echo secret >"/dev/shm/$f"
	defer rm -f "/dev/shm/$f"
	update_config '.mounts |= map(select(.destination != "/dev/shm"))'
	add_mount /dev/shm bind /dev/shm rbind
	set_args sh -c "cat /dev/shm/$f 2>&1"
	runc_run abfl-shm-runc
	assert_success
	[ "$stdout" = secret ] || unprotected_failed "runc: $output"
	run_container abfl-shm
	assert_failure 1
	assert_one_error_line "floor: the host's IPC namespace is refused: mounts\[[0-9]+\] binds /dev/shm, the host's /dev/shm.*floor\.refuse_host_ipc"
	assert_nothing_left
}
