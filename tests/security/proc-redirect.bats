#!/usr/bin/env bats
# Host procfs written through a path inside the container (issue 34, class 3;
# the CVE-2025-52881 class). The runtime writes sysctls, oom_score_adj and the
# LSM profile into procfs and reopens the exec fifo through it; a config
# mount under /proc, an image that routes /proc elsewhere, a bind of the
# container's own /proc, or a running container that mounts over its /proc
# would turn those writes into writes of the host's. agentbox goes through a
# procfs of its own (runtime/linux/procfs.h), refuses mounts inside /proc as
# runc does (also where a symlink leads there), and its floor refuses binds
# of a procfs or sysfs where they are made.
#
# The host knob is kernel.printk_ratelimit: host-wide, harmless, restored
# after every test. "Unprotected" is runc, or agentbox with
# AGENTBOX_TEST_PROC_BY_PATH=1 (a test build's switch back to the paths of
# before: runtime/linux/procfs.h) where runc refuses the config itself.
# Names: abpr-*.

load helpers
load ../helper/floor

KNOB=/proc/sys/kernel/printk_ratelimit

setup() {
	requires root agentbox
	setup_bundle
	[ -w "$KNOB" ] || skip "no $KNOB to aim at"
	KNOB_ORIG=$(cat "$KNOB")
	KNOB_NEW=$((KNOB_ORIG + 2))
	defer sh -c "echo $KNOB_ORIG >$KNOB"
	cp "$BUNDLE/config.json" "$TEST_DIR/config.orig"
}

teardown() {
	teardown_bundle
}

knob_changed() { [ "$(cat "$KNOB")" != "$KNOB_ORIG" ]; }
knob_reset() { echo "$KNOB_ORIG" >"$KNOB"; }
fresh_config() { cp "$TEST_DIR/config.orig" "$BUNDLE/config.json"; knob_reset; }

# unprotected ID: run the bundle with the switch back to the old paths
unprotected_run() {
	requires test_hooks
	AGENTBOX_TEST_PROC_BY_PATH=1 run_container "$1"
}

@test "sysctl: a net.* key the image routes into a second procfs sets the host's knob under runc; agentbox's own procfs has no such key, and sets real ones (openat2, and the walk without it)" {
	# no procfs at /proc: the image's /proc/sys/net/ipv4 is a symlink to
	# /p2/sys/kernel, a procfs the config mounts at /p2 (the floor, which
	# refuses that, relaxed: the sysctl's way is what is tested)
	update_config '.mounts |= map(select(.destination != "/proc"))
		| .mounts += [{destination: "/p2", type: "proc", source: "proc"}]
		| .linux.sysctl = {"net.ipv4.printk_ratelimit": $v}' --arg v "$KNOB_NEW"
	mkdir -p "$BUNDLE/rootfs/proc/sys/net" "$BUNDLE/rootfs/p2"
	ln -s /p2/sys/kernel "$BUNDLE/rootfs/proc/sys/net/ipv4"
	runc_run abpr-sysctl-runc
	knob_changed || unprotected_failed "runc left the knob at $(cat "$KNOB"): $output"
	knob_reset

	run_container abpr-sysctl
	assert_failure 1
	assert_one_error_line 'linux.sysctl "net.ipv4.printk_ratelimit": open /proc/sys/net/ipv4/printk_ratelimit: No such file'
	! knob_changed || fail "agentbox set the host's knob to $(cat "$KNOB")"
	assert_nothing_left
	requires test_hooks
	AGENTBOX_FORCE_FALLBACKS=1 run_container abpr-sysctl-walk
	assert_failure 1
	assert_one_error_line 'linux.sysctl "net.ipv4.printk_ratelimit": open /proc/sys/net/ipv4/printk_ratelimit: No such file'
	! knob_changed || fail "agentbox (no openat2) set the host's knob to $(cat "$KNOB")"

	# a real key is set, in the container's network namespace only (the
	# runtime's procfs sees it through the writer's namespaces)
	fresh_config
	update_config '.linux.sysctl = {"net.ipv4.ip_unprivileged_port_start": "99"}'
	set_args cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	local fb
	for fb in no yes; do
		if [ $fb = yes ]; then
			AGENTBOX_FORCE_FALLBACKS=1 run_container abpr-sysctl-ok-$fb
		else
			run_container abpr-sysctl-ok-$fb
		fi
		assert_success
		[ "$stdout" = 99 ] || fail "the container's key is $stdout (fallbacks: $fb)"
	done
	[ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" != 99 ] || fail "the host's key was set"
}

@test "mounts inside /proc: a bind over /proc/sys/net (ipv4 -> /proc/sys/kernel) sets the host's knob unprotected; refused in one line, also through an image's symlink, and nothing is left" {
	mkdir -p "$TEST_DIR/fakenet"
	ln -s /proc/sys/kernel "$TEST_DIR/fakenet/ipv4"
	add_mount /proc/sys/net bind "$TEST_DIR/fakenet" rbind
	update_config '.linux.sysctl = {"net.ipv4.printk_ratelimit": $v}' --arg v "$KNOB_NEW"
	unprotected_run abpr-net-off
	knob_changed || unprotected_failed "the old paths left the knob at $(cat "$KNOB"): $output"
	knob_reset

	floor_config
	run_container abpr-net
	assert_failure 1
	assert_one_error_line 'config\.json: mounts\[[0-9]+\]: destination /proc/sys/net is inside /proc: refused'
	assert_nothing_left
	# the same through a symlink of the image: refused where the mount is made
	fresh_config
	ln -s /proc "$BUNDLE/rootfs/x"
	add_mount /x/sys/net bind "$TEST_DIR/fakenet" rbind
	update_config '.linux.sysctl = {"net.ipv4.printk_ratelimit": $v}' --arg v "$KNOB_NEW"
	run_container abpr-net-link
	assert_failure 1
	assert_one_error_line 'mounts\[[0-9]+\]: destination /x/sys/net is inside /proc \(a procfs is on its way there\): refused'
	! knob_changed || fail "the knob is $(cat "$KNOB")"
	assert_nothing_left
	# ".." is no way round it; the files lxcfs emulates may still be covered
	fresh_config
	add_mount /tmp/../proc/./self/fd bind "$TEST_DIR/fakenet" rbind
	run_container abpr-net-dots
	assert_one_error_line 'destination /tmp/../proc/self/fd is inside /proc: refused'
	fresh_config
	echo "cpu 1" >"$TEST_DIR/cpuinfo"
	add_mount /proc/cpuinfo bind "$TEST_DIR/cpuinfo" bind
	set_args cat /proc/cpuinfo
	run_container abpr-lxcfs
	assert_success
	[ "$stdout" = "cpu 1" ] || fail "/proc/cpuinfo: $stdout"
}

@test "a bind of the container's own /proc (or /sys) elsewhere: runc's container writes the host's knob through it; agentbox's floor refuses each where the mount is made" {
	mkdir -p "$BUNDLE/rootfs/proc2"
	add_mount /proc2 bind "$BUNDLE/rootfs/proc" bind
	set_args sh -c 'echo $0 >/proc2/sys/kernel/printk_ratelimit' "$KNOB_NEW"
	runc_run abpr-rebind-runc
	knob_changed || unprotected_failed "runc's container left the knob at $(cat "$KNOB"): $output"
	knob_reset

	floor_config
	run_container abpr-rebind
	assert_failure 1
	assert_one_error_line "mounts\[[0-9]+\]: floor: the bind of $BUNDLE/rootfs/proc \(a procfs\) would show what the floor masks, unmasked: refused"
	assert_nothing_left
	# a part of it, its /sys, the cgroups below /sys, a symlink to it
	local src
	ln -s rootfs/proc "$BUNDLE/procs"
	for src in rootfs/proc/sys "$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/sys/fs/cgroup" "$BUNDLE/procs"; do
		fresh_config
		add_mount /proc2 bind "$src" rbind
		runtime_at "$BUNDLE" run abpr-rebind-x
		assert_failure 1
		assert_one_error_line 'floor: the bind of .* \((a procfs|a sysfs|below the container.s /proc or /sys)\) would show what the floor masks'
	done
	! knob_changed || fail "the knob is $(cat "$KNOB")"
	assert_nothing_left
}

@test "oomScoreAdj: a bind at /proc/self/oom_score_adj takes the runtime's write unprotected; refused (also through a symlink), and the process gets its value" {
	echo host-file >"$TEST_DIR/oomfile"
	add_mount /proc/self/oom_score_adj bind "$TEST_DIR/oomfile" bind
	update_config '.process.oomScoreAdj = 987'
	unprotected_run abpr-oom-off
	grep -q '^987' "$TEST_DIR/oomfile" || unprotected_failed "the host file says $(cat "$TEST_DIR/oomfile"): $output"
	echo host-file >"$TEST_DIR/oomfile"

	floor_config
	run_container abpr-oom
	assert_one_error_line 'destination /proc/self/oom_score_adj is inside /proc: refused'
	fresh_config
	ln -s /proc/self "$BUNDLE/rootfs/me"
	add_mount /me/oom_score_adj bind "$TEST_DIR/oomfile" bind
	update_config '.process.oomScoreAdj = 987'
	run_container abpr-oom-link
	assert_one_error_line 'destination /me/oom_score_adj is inside /proc \(a procfs is on its way there\): refused'
	[ "$(cat "$TEST_DIR/oomfile")" = host-file ] || fail "the host file says $(cat "$TEST_DIR/oomfile")"
	fresh_config
	update_config '.process.oomScoreAdj = 987'
	set_args cat /proc/self/oom_score_adj
	run_container abpr-oom-ok
	assert_success
	[ "$stdout" = 987 ] || fail "the process's oom_score_adj is $stdout"
}

@test "exec fifo: an image's /proc/self/fd of symlinks (no procfs at /proc) runs the process at create unprotected; agentbox never writes the fifo's byte elsewhere and it does not run" {
	# no procfs: /proc/self/fd/N are the image's symlinks to files of a
	# directory the host reads back
	local n
	mkdir -p "$TEST_DIR/out" "$BUNDLE/rootfs/out" "$BUNDLE/rootfs/proc/self/fd"
	for n in $(seq 3 40); do
		: >"$TEST_DIR/out/$n"
		ln -s "/out/$n" "$BUNDLE/rootfs/proc/self/fd/$n"
	done
	update_config '.mounts |= map(select(.destination != "/proc"))'
	add_mount /out bind "$TEST_DIR/out" rbind
	set_args sh -c 'echo ran >/out/ran'
	requires test_hooks
	AGENTBOX_TEST_PROC_BY_PATH=1 create_container abpr-fifo-off
	wait_for_file "$TEST_DIR/out/ran" 5 || unprotected_failed "the process did not run before start: $output"
	grep -l '^0' "$TEST_DIR"/out/[0-9]* >/dev/null || unprotected_failed "no file took the fifo's byte"
	runtime delete --force abpr-fifo-off
	rm -f "$TEST_DIR"/out/*
	for n in $(seq 3 40); do : >"$TEST_DIR/out/$n"; done

	floor_config
	create_container abpr-fifo
	assert_success
	# the init finds another file there and gives up: start finds it gone
	runtime start abpr-fifo
	assert_failure 1
	[ ! -e "$TEST_DIR/out/ran" ] || fail "the process ran"
	! grep -l '^0' "$TEST_DIR"/out/[0-9]* || fail "a file took the fifo's byte"
	grep -q 'is another file (a mount over the container.s /proc?): refused' "$CT_STDERR" ||
		fail "the init said: $(cat "$CT_STDERR")"
	# the config's form of it (a bind at /proc/self/fd) is refused outright
	fresh_config
	add_mount /proc/self/fd bind "$TEST_DIR/out" rbind
	create_container abpr-fifo-bind
	assert_one_error_line 'destination /proc/self/fd is inside /proc: refused'
}

@test "exec: a container that mounts over its /proc swallows exec's oom_score_adj unprotected; agentbox sets the process's own" {
	# root with CAP_SYS_ADMIN and no seccomp filter: a container that may mount
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	RUNTIME_ARGS+=(--seccomp-profile none)
	set_args sh -c 'mount -t tmpfs t /proc && mkdir -p /proc/self/fd && echo fake >/proc/self/oom_score_adj &&
		echo ready && exec sleep 60'
	run_container abpr-exec --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	jq '.process | .args = ["sleep", "30"] | .oomScoreAdj = 600' "$BUNDLE/config.json" >"$TEST_DIR/p.json"
	local fake pid
	fake=/proc/$(state_field abpr-exec .pid)/root/proc/self/oom_score_adj
	requires test_hooks
	AGENTBOX_TEST_PROC_BY_PATH=1 runtime exec --detach --pid-file "$TEST_DIR/p1" --process "$TEST_DIR/p.json" abpr-exec
	assert_success
	pid=$(cat "$TEST_DIR/p1")
	grep -q '^600' "$fake" && [ "$(cat "/proc/$pid/oom_score_adj")" != 600 ] ||
		unprotected_failed "the fake file says $(cat "$fake"), the process has $(cat "/proc/$pid/oom_score_adj")"
	echo fake >"$fake"
	runtime exec --detach --pid-file "$TEST_DIR/p2" --process "$TEST_DIR/p.json" abpr-exec
	assert_success
	pid=$(cat "$TEST_DIR/p2")
	[ "$(cat "/proc/$pid/oom_score_adj")" = 600 ] || fail "the process has $(cat "/proc/$pid/oom_score_adj")"
	[ "$(cat "$fake")" = fake ] || fail "the container's file took the write: $(cat "$fake")"
}
