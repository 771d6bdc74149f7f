#!/usr/bin/env bats
# Escapes that runtimes have shipped: CVE-2019-5736 (/proc/self/exe),
# CVE-2024-21626 (leaked fds as cwd), symlinked mount targets, fd leaks.

load helpers

setup() {
	requires root
	setup_bundle
	RUNTIME_REAL=$(realpath "$RUNTIME")
}

teardown() {
	teardown_bundle
}

@test "CVE-2019-5736: /proc/self/exe and /proc/1/exe cannot be opened for writing" {
	local before
	before=$(runtime_sha256)
	set_args abtest exe-overwrite
	run_container ct
	assert_success
	[ "${#lines[@]}" -ge 4 ]
	refute_output_contains WRITABLE
	[ "$(runtime_sha256)" = "$before" ]
}

@test "CVE-2019-5736: the container's init is the user's program, not the runtime" {
	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid
	pid=$(state_field ct .pid)
	# same inode as the rootfs's abtest, and not the runtime's binary
	[ "$(stat -L -c %d:%i "/proc/$pid/exe")" = "$(stat -c %d:%i "$BUNDLE/rootfs/bin/abtest")" ]
	[ "$(stat -L -c %d:%i "/proc/$pid/exe")" != "$(stat -c %d:%i "$RUNTIME_REAL")" ]
}

# evil_entrypoint: /bin/evil is '#!/proc/self/exe'; run from a process whose
# /proc/self/exe is the runtime's binary or a copy of it, the kernel starts that
# binary in the container with our ld.so (cve-2019-5736-interp.c), which tries
# to reopen it for writing.
evil_entrypoint() {
	local bin=$1
	readelf -l "$bin" 2>/dev/null | grep -q 'program interpreter: /lib64/ld-linux-x86-64.so.2' ||
		skip "the runtime is not a dynamically linked x86-64 binary; the probe needs its interpreter"
	mkdir -p "$BUNDLE/rootfs/lib64"
	cc -nostdlib -static-pie -fPIE -fno-stack-protector -O2 \
		-o "$BUNDLE/rootfs/lib64/ld-linux-x86-64.so.2" "$INTEGRATION_ROOT/cve-2019-5736-interp.c"
	printf '#!/proc/self/exe\n' >"$BUNDLE/rootfs/bin/evil"
	chmod 755 "$BUNDLE/rootfs/bin/evil"
}

# assert_not_hijacked BINARY OUTPUT: the probe ran, and got no writable binary
assert_not_hijacked() {
	local bin=$1 out=$2
	cat "$out" >&2
	grep -q "^hijack: interpreter running" "$out" ||
		fail "the probe did not run: the test proves nothing"
	# the probe reports either how the reopen failed or WRITABLE with the
	# file's path; the runtime's own binary must never be writable
	! grep -q "^hijack: WRITABLE $bin" "$out" ||
		fail "a container process could open the runtime's binary ($bin) for writing"
	# refused, or a sealed memfd copy: opening one for writing works, writing does not
	grep -qE "^hijack: (E[A-Z]+ |WRITABLE /memfd:agentbox)" "$out" || fail "the probe reached another file"
}

# hijack_probe BINARY: a container whose entrypoint is /bin/evil
hijack_probe() {
	local bin=$1
	evil_entrypoint "$bin"
	local before
	before=$(sha256sum "$bin" | cut -d' ' -f1)

	set_args /bin/evil
	run_container ct --detach
	local out=$RT_STDOUT
	wait_for_status ct stopped 15 || true
	assert_not_hijacked "$bin" "$out"
	[ "$(sha256sum "$bin" | cut -d' ' -f1)" = "$before" ]
	runtime delete --force ct
}

@test "CVE-2019-5736: '#!/proc/self/exe' entrypoint cannot reach the runtime's binary" {
	requires cc
	hijack_probe "$RUNTIME_REAL"
}

@test "CVE-2019-5736: '#!/proc/self/exe' run by exec cannot reach the runtime's binary" {
	requires cc
	evil_entrypoint "$RUNTIME_REAL"
	local before
	before=$(sha256sum "$RUNTIME_REAL" | cut -d' ' -f1)
	set_args abtest pause ready
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	# detached: the probe waits for every runtime process to exit
	runtime exec --detach ct /bin/evil
	assert_success
	wait_for_line "$RT_STDOUT" '^hijack: [EW]' 15
	assert_not_hijacked "$RUNTIME_REAL" "$RT_STDOUT"
	[ "$(sha256sum "$RUNTIME_REAL" | cut -d' ' -f1)" = "$before" ]
}

# bats test_tags=agentbox-only
@test "CVE-2019-5736: a runtime on a read-only mount runs without a sealed copy and stays unwritable" {
	local ro=$TEST_DIR/ro-bin
	mkdir -p "$ro"
	cp "$RUNTIME_REAL" "$ro/agentbox"
	mount --bind "$ro" "$ro"
	defer umount "$ro"
	mount -o remount,bind,ro "$ro"
	local before
	before=$(sha256sum "$ro/agentbox" | cut -d' ' -f1)
	RUNTIME=$ro/agentbox
	set_args abtest exe-overwrite
	runtime --debug run --bundle "$BUNDLE" ct
	assert_success
	grep -q 'read-only mount: no sealed copy needed' "$RT_STDERR" ||
		fail "the runtime did not skip the sealed copy: $(cat "$RT_STDERR")"
	! grep -q WRITABLE "$RT_STDOUT" || fail "$(cat "$RT_STDOUT")"
	[ "$(sha256sum "$ro/agentbox" | cut -d' ' -f1)" = "$before" ]
	if command -v cc >/dev/null; then
		hijack_probe "$ro/agentbox"
	fi
}

# exe_probe PID: how /proc/PID/exe resolves, and what opening it for writing
# (from the host, as root) gives
exe_probe() {
	python3 - "$1" <<'PY'
import os, sys
exe = "/proc/%s/exe" % sys.argv[1]
print(os.readlink(exe))
try:
    os.close(os.open(exe, os.O_WRONLY))
    print("WRITABLE")
except OSError as e:
    print("refused:", os.strerror(e.errno))
PY
}

# refute_maps_runtime PID: /proc/PID/maps names each mapping's device and
# inode; none may be the runtime's binary
refute_maps_runtime() {
	local dev ino
	dev=$(printf '%02x:%02x' "$(stat -c %Hd "$RUNTIME_REAL")" "$(stat -c %Ld "$RUNTIME_REAL")")
	ino=$(stat -c %i "$RUNTIME_REAL")
	! awk -v dev="$dev" -v ino="$ino" '$4 == dev && $5 == ino' "/proc/$1/maps" | grep -q . ||
		fail "process $1 still maps the runtime's binary: $(cat "/proc/$1/maps")"
}

# assert_memfd_exe PID: the process runs from a sealed memfd copy, which host
# root cannot open for writing either, and maps no page of the runtime's binary
assert_memfd_exe() {
	run exe_probe "$1"
	echo "$output" >&2
	[[ "${lines[0]}" == "/memfd:agentbox"* ]] || fail "exe of $1: ${lines[0]}"
	refute_output_contains WRITABLE
	refute_maps_runtime "$1"
}

# bats test_tags=agentbox-only
@test "CVE-2019-5736: the created init maps no page of the runtime's binary and its exe is a read-only copy; even host root cannot write it" {
	requires test_hooks
	set_args abtest true
	runtime --debug create --bundle "$BUNDLE" ct
	assert_success
	local pid copy
	pid=$(state_field ct .pid)
	run exe_probe "$pid"
	echo "$output" >&2
	copy=${lines[0]}
	[[ "$copy" == /run/agentbox-exe/agentbox-* ]]
	assert_output_contains "refused:"
	grep -q " $copy .* ro," /proc/self/mountinfo ||
		fail "$copy is not on a read-only mount: $(grep agentbox-exe /proc/self/mountinfo)"
	grep -q "$copy" "/proc/$pid/maps" || fail "the init maps no copy: $(cat "/proc/$pid/maps")"
	refute_maps_runtime "$pid"
	# one copy per build, shared: the next container's init runs from the same file
	runtime create --bundle "$BUNDLE" ct1
	assert_success
	[ "$(readlink "/proc/$(state_field ct1 .pid)/exe")" = "$copy" ]
	runtime delete --force ct
	runtime delete --force ct1
	# the fallback (a kernel without PR_SET_MM_MAP): the runtime re-executes itself from a memfd
	AGENTBOX_FORCE_FALLBACKS=1 runtime create --bundle "$BUNDLE" ct2
	assert_success
	assert_memfd_exe "$(state_field ct2 .pid)"
}

# bats test_tags=agentbox-only
@test "the read-only copy of the binary: one found unmounted is made afresh; a new build's copy replaces all but the three newest others; a directory others may write is not used" {
	local dir=/run/agentbox-exe copy
	set_args abtest true
	runtime create --bundle "$BUNDLE" ct
	assert_success
	copy=$(readlink "/proc/$(state_field ct .pid)/exe")
	[[ "$copy" == "$dir"/agentbox-* ]]
	runtime delete --force ct
	# a copy found unmounted (its maker died, or a crash) is not trusted: made afresh
	while umount "$copy" 2>/dev/null; do :; done
	echo "not an ELF file" >"$copy"
	runtime create --bundle "$BUNDLE" ct
	assert_success
	[ "$(readlink "/proc/$(state_field ct .pid)/exe")" = "$copy" ]
	[ "$(head -c 4 "$copy" | od -An -c | tr -d ' ')" = '177ELF' ] || fail "the unmounted copy was used as it was"
	runtime delete --force ct
	# as if four other builds had made their copies, one after the other, and
	# ours were not there yet: the three newest stay (a host running two builds
	# in turn copies nothing at each change), the oldest goes
	while umount "$copy" 2>/dev/null; do :; done
	rm -f "$copy"
	local b other
	for b in 1 2 3 4; do
		other=$dir/agentbox-0-0-0-$b.0-0.0
		defer sh -c "while umount '$other' 2>/dev/null; do :; done; rm -f '$other'"
		cp "$RUNTIME_REAL" "$other"
		mount --bind "$other" "$other"
		sleep 0.01
	done
	# and the half-made copy of a creator that was killed (no such pid)
	echo partial >"$dir/.new-2147483647"
	runtime create --bundle "$BUNDLE" ct
	assert_success
	[ "$(readlink "/proc/$(state_field ct .pid)/exe")" = "$copy" ]
	[ ! -e "$dir/agentbox-0-0-0-1.0-0.0" ] || fail "the oldest other build's copy is still there: $(ls -la "$dir")"
	! grep -q "agentbox-0-0-0-1\." /proc/self/mountinfo || fail "the oldest other build's copy is still mounted"
	for b in 2 3 4; do
		grep -q "agentbox-0-0-0-$b\." /proc/self/mountinfo || fail "build $b's copy went: $(ls -la "$dir")"
	done
	[ ! -e "$dir/.new-2147483647" ] || fail "a dead creator's half-made copy is still there"
	runtime delete --force ct
	# no copy yet, in a directory others may write into (whose files could be
	# anyone's): none is made or mounted, each child copies to a memfd
	while umount "$copy" 2>/dev/null; do :; done
	rm -f "$copy"
	chmod 0777 "$dir"
	defer chmod 0700 "$dir"
	runtime create --bundle "$BUNDLE" ct
	assert_success
	assert_memfd_exe "$(state_field ct .pid)"
	[ ! -e "$copy" ] || fail "a copy was made in a directory others may write into"
}

# bats test_tags=agentbox-only
@test "exec: the new process shows in the container only once it is in all its namespaces" {
	requires test_hooks
	# CVE-2016-9962's lesson: a container process allowed to ptrace must never
	# find a process of the runtime's still outside the container's mounts
	local config=$TEST_DIR/agentbox.yaml
	printf 'floor: {allow_capabilities: [CAP_SYS_PTRACE]}\n' >"$config"
	RUNTIME_ARGS=(--config "$config")
	update_config '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])'
	# the watcher reports every process whose mount namespace is not its own
	set_args sh -c 'own=$(readlink /proc/self/ns/mnt); echo ready
		while :; do for p in /proc/[0-9]*; do
			m=$(readlink "$p/ns/mnt" 2>/dev/null) || continue
			[ "$m" = "$own" ] || echo "FOREIGN ${p#/proc/} $m"
		done; done'
	run_container ct --detach
	assert_success
	local out=$RT_STDOUT
	wait_for_line "$out" '^ready$'
	# (the watcher does see processes: its own subshells come and go)
	AGENTBOX_FAULT_EXEC_DELAY_MS=400 runtime exec ct true
	assert_success
	sleep 0.2
	! grep -q FOREIGN "$out" || fail "a process outside the container's mount namespace was visible: $(grep FOREIGN "$out" | head -3)"
}

@test "the runtime's binary and its directory are not visible in the container" {
	set_args sh -c "abtest stat '$RUNTIME_REAL'; abtest stat '$(dirname "$RUNTIME_REAL")'; abtest mountinfo"
	run_container ct
	[ "${lines[0]}" = ENOENT ]
	[ "${lines[1]}" = ENOENT ]
	# no mount has the runtime's binary as its source
	! awk '{ print $4 }' <<<"$stdout" | grep -qxF "$RUNTIME_REAL" || fail "succeeded, must not: awk '{ print \$4 }' <<<\"\$stdout\" | grep -qxF \"\$RUNTIME_REAL\""
}

@test "CVE-2024-21626: process.cwd /proc/self/fd/N cannot reach the host" {
	local marker=$TEST_DIR/host-marker n
	echo "host-secret" >"$marker"
	for n in 3 4 5 6 7 8 9; do
		update_config '.process.cwd = $cwd' --arg cwd "/proc/self/fd/$n"
		set_args sh -c "abtest pwd; abtest read ../../../../../../../../../../..$marker"
		run_container "ct$n"
		# refusing is fine; running is fine as long as nothing of the host shows
		refute_output_contains host-secret
		refute_output_contains "(unreachable)"
	done
	# a missing cwd is made, but never below a directory of the host held open
	local name=abtest-escape-$$
	for n in 3 4 5 6 7 8 9; do
		update_config '.process.cwd = $cwd' --arg cwd "/proc/self/fd/$n/$name"
		set_args abtest pwd
		run_container "cx$n"
		[[ "$stdout" != *"$name"* ]] || fail "ran in /proc/self/fd/$n/$name: $stdout"
	done
	local found
	# (inside the container's own root it may be made: that is no way out)
	found=$(find "$TEST_DIR" "$BATS_RUN_TMPDIR" /run /sys/fs/cgroup -maxdepth 5 -path "$BUNDLE/rootfs" -prune \
		-o -name "$name" -print 2>/dev/null | head -3)
	[ -z "$found" ] || fail "made on the host through a leaked fd: $found"
}

# bats test_tags=agentbox-only
@test "CVE-2024-21626: a missing process.cwd is never made through a host directory passed with --preserve-fds" {
	# runc 1.1.5 makes it: $hostdir/made appears on the host
	local hostdir=$TEST_DIR/hostdir
	mkdir "$hostdir"
	update_config '.process.cwd = "/proc/self/fd/3/made"'
	timeout 60 "$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" run --preserve-fds 1 --bundle "$BUNDLE" cy \
		3<"$hostdir" >"$TEST_DIR/cy.out" 2>&1 || true
	[ ! -e "$hostdir/made" ] || fail "process.cwd made $hostdir/made through fd 3: $(cat "$TEST_DIR/cy.out")"
}

@test "CVE-2024-21626: the created init holds no host directory open" {
	set_args abtest true
	create_container ct
	assert_success
	local pid fd
	pid=$(state_field ct .pid)
	for fd in /proc/"$pid"/fd/*; do
		if [ -d "$fd" ]; then
			fail "init in the created state holds a directory open: $fd -> $(readlink "$fd")"
		fi
	done
}

@test "mount destinations: a symlink in the rootfs cannot redirect a mount onto the host" {
	local hostdir=$TEST_DIR/hostdir
	mkdir -p "$hostdir"
	echo untouched >"$hostdir/file"
	# absolute and relative links pointing at the host dir
	ln -s "$hostdir" "$BUNDLE/rootfs/evil-abs"
	ln -s "../../../../../../../../../..$hostdir" "$BUNDLE/rootfs/evil-rel"
	add_mount /evil-abs tmpfs tmpfs size=1m
	add_mount /evil-rel tmpfs tmpfs size=1m
	set_args abtest true
	run_container ct
	# failing is fine; the host dir must not have been mounted over
	! mountpoint -q "$hostdir" || fail "succeeded, must not: mountpoint -q \"\$hostdir\""
	[ "$(cat "$hostdir/file")" = untouched ]
	! grep -qF " $hostdir " /proc/self/mountinfo || fail "succeeded, must not: grep -qF \" \$hostdir \" /proc/self/mountinfo"
}

@test "mount sources: a bind source symlink is resolved on the host, target stays in the rootfs" {
	mkdir -p "$TEST_DIR/real"
	echo bound >"$TEST_DIR/real/file"
	ln -s "$TEST_DIR/real" "$TEST_DIR/link"
	add_mount /mnt/b bind "$TEST_DIR/link" rbind ro
	set_args abtest read /mnt/b/file
	run_container ct
	assert_success
	[ "$stdout" = bound ]
}

@test "pid namespace: host processes cannot be seen or signalled" {
	set_args sh -c "abtest trysignal $$ 0; ls /proc | grep -c '^[0-9]'"
	run_container ct
	assert_success
	[ "${lines[0]}" = ESRCH ]
	# only the container's own processes are listed (sh, grep, ls)
	[ "${lines[1]}" -le 4 ]
}

@test "noNewPrivileges: a setuid-root binary gives neither root nor capabilities" {
	# a setuid-root copy of abtest, run by uid 1000
	cp "$BUNDLE/rootfs/bin/abtest" "$BUNDLE/rootfs/bin/abtest-suid"
	chmod 4755 "$BUNDLE/rootfs/bin/abtest-suid"
	update_config '.process.user = {uid: 1000, gid: 1000}'

	# control: without noNewPrivileges the setuid bit works
	update_config '.process.noNewPrivileges = false'
	set_args abtest-suid id
	run_container ct1
	assert_success
	[[ "$stdout" == *" euid=0"* ]] || fail "setuid did not work at all; the test proves nothing"

	update_config '.process.noNewPrivileges = true'
	run_container ct2
	assert_success
	[[ "$stdout" == "uid=1000 "* ]]
	[[ "$stdout" != *euid=* ]]
	set_args abtest-suid caps
	run_container ct3
	assert_success
	grep -qE '^CapEff:[[:space:]]+0+$' <<<"$stdout"
}
