#!/usr/bin/env bats
# Privilege left in the workspace (issue 34, class 1): a box's workspace is a
# host directory. The box's mount is nosuid, but the mode bits travel with
# the file: a set-user-ID program the box makes there is one on the host,
# owned by the workspace's owner (root for a root-owned checkout: kit run
# id-maps it), which any host user may run. Likewise set-group-ID bits, file
# capabilities and device nodes; FIFOs hang host tools that open them.
#
# Each attack is first shown working with the guard off (kit run
# --workspace-guard off, what kit run did before), then refused by the
# guard's seccomp filter, and what another channel leaves is cleared by its
# sweep when the box ends. After each run the host side does what a user
# would: runs the file as `nobody`. (Rootless: kit-rootless.bats.) No
# network.

load helpers
load ../integration/kit_helpers

setup() {
	requires root agentbox
	command -v python3 >/dev/null || skip "needs python3"
	setup_state_only
	# the host's other users reach the workspace (to run what is in it)
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	WS=$TEST_DIR/ws
	mkdir -p "$WS"
	chmod 755 "$WS"
	PROBE=$(cat "$SECURITY_ROOT/setid-probe.py")
	kit_setup_common
}

teardown() {
	[ -z "${BG_PID:-}" ] || kill -KILL "$BG_PID" 2>/dev/null || true
	teardown_bundle
}

# setid FILE: does FILE carry a set-user-ID or set-group-ID bit?
setid() {
	[ -e "$1" ] && (($(stat -c '0x%f' "$1") & 06000))
}

# as_nobody FILE: the effective uid `nobody` gets running FILE (a copy of
# /bin/sh, which keeps its euid with -p).
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$1" -p -c 'id -u' 2>/dev/null
}

@test "workspace: a set-user-ID program the box makes runs as root on the host, unless the guard refuses it (root-owned workspace)" {
	runtime kit run --workspace-guard off --workspace "$WS" -- python3 -c "$PROBE"
	assert_success
	local f left=
	for f in chmod fchmod fchmodat fchmodat2 creat cpp install tar; do
		setid "$WS/s_$f" || left="$left $f"
	done
	[ -z "$left" ] || unprotected_failed "no set-id bit on the host from:$left ($output)"
	[ "$(stat -c %u "$WS/s_chmod")" = 0 ] || unprotected_failed "the file is not root's on the host"
	[ "$(as_nobody "$WS/s_chmod")" = 0 ] || unprotected_failed "nobody did not get euid 0"
	assert_kit_run_clean
	rm -rf "${WS:?}"/* /tmp/s_src

	runtime kit run --workspace "$WS" -- python3 -c "$PROBE"
	assert_success
	for f in chmod fchmod fchmodat fchmodat2 creat fifo dir cpp install tar; do
		[[ "$output" == *"$f: EPERM"* ]] || fail "the box's $f was not refused: $output"
	done
	# security.capability: the kernel's refusal (no CAP_SETFCAP) holds (with it: below)
	[[ "$output" == *"fcap: EPERM"* ]] || fail "the box could set a file capability: $output"
	! python3 -c 'import os,sys; os.getxattr(sys.argv[1], "security.capability")' "$WS/s_fcap" 2>/dev/null ||
		fail "a file capability on the host"
	left=$(find "$WS" -perm /6000 -printf '%p %m\n')
	[ -z "$left" ] || fail "set-id bits on the host: $left"
	assert_kit_run_clean
}

@test "workspace: set-id files in another user's workspace and in a kit's writable mount, unless the guard refuses them" {
	# a workspace of uid 1001, the kit's user 1000 (id-mapped: its files land as 1001's),
	# and a writable bind the kit gives (not id-mapped: 1000's)
	chown 1001:1001 "$WS"
	local other=$TEST_DIR/other
	mkdir -p "$other"
	chmod 777 "$other"
	kit k.yaml <<EOF
name: setid
user: "1000:1000"
mounts:
  - {source: $other, target: /other, readonly: false}
EOF
	local plant='cp /bin/sh x && chmod 4755 x; cp /bin/sh /other/y && chmod 2755 /other/y; true'
	runtime kit run --workspace-guard off --workspace "$WS" "$TEST_DIR/k.yaml" -- sh -c "$plant"
	assert_success
	setid "$WS/x" && [ "$(stat -c %u "$WS/x")" = 1001 ] || unprotected_failed "a set-user-ID file of 1001's ($(stat -c '%A %u' "$WS/x" 2>&1))"
	setid "$other/y" || unprotected_failed "a set-group-ID file in the writable mount"
	[ "$(as_nobody "$WS/x")" = 1001 ] || unprotected_failed "nobody did not run as 1001"
	rm -f "$WS/x" "$other/y"

	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml" -- sh -c "$plant"
	assert_success
	[[ "$output" == *"Operation not permitted"* ]] || fail "chmod was not refused: $output"
	! setid "$WS/x" || fail "a set-user-ID file in the workspace: $(stat -c '%A %u' "$WS/x")"
	! setid "$other/y" || fail "a set-group-ID file in the writable mount"
	[ "$(as_nobody "$WS/x")" = 65534 ] || fail "nobody's euid changed"
	assert_kit_run_clean
}

@test "workspace: device nodes, file capabilities and FIFOs a root box with MKNOD and SETFCAP leaves, unless refused or removed" {
	kit k.yaml <<'EOF'
name: devices
user: "0:0"
security:
  capabilities: [MKNOD, SETFCAP]
EOF
	# security.capability v2: CAP_SETUID (7) permitted and effective
	local plant='mknod null c 1 3; mkfifo fifo; cp /bin/sh capped && python3 -c "
import os, struct
os.setxattr(\"capped\", \"security.capability\", struct.pack(\"<IIIII\", 0x02000001, 1 << 7, 0, 0, 0))"; true'
	runtime kit run --workspace-guard off --workspace "$WS" "$TEST_DIR/k.yaml" -- sh -c "$plant"
	assert_success
	[ -c "$WS/null" ] && [ "$(stat -c '%t:%T' "$WS/null")" = 1:3 ] || unprotected_failed "a device node on the host"
	[ -p "$WS/fifo" ] || unprotected_failed "a FIFO on the host"
	python3 -c 'import os,sys; os.getxattr(sys.argv[1], "security.capability")' "$WS/capped" ||
		unprotected_failed "a file capability on the host"
	rm -f "$WS/null" "$WS/fifo" "$WS/capped"

	runtime kit run --workspace "$WS" "$TEST_DIR/k.yaml" -- sh -c "$plant"
	assert_success
	[[ "$output" == *"mknod: null: Operation not permitted"* ]] || fail "mknod was not refused: $output"
	[[ "$output" == *"PermissionError"* ]] || fail "setxattr was not refused: $output"
	[ ! -e "$WS/null" ] || fail "a device node on the host"
	! python3 -c 'import os,sys; os.getxattr(sys.argv[1], "security.capability")' "$WS/capped" 2>/dev/null ||
		fail "a file capability on the host"
	# a FIFO may be made (build tools use them); it does not outlive the box
	[ ! -e "$WS/fifo" ] || fail "the FIFO was left"
	[[ "$stderr" == *"fifo: FIFO removed"* ]] || fail "the end of the run did not say so: $stderr"
	assert_kit_run_clean
}

@test "workspace: what another box leaves meanwhile (its guard off) is cleared when this box ends" {
	# box A (guard on) waits; box B (guard off) on the same workspace leaves
	# a set-user-ID program, a FIFO and an .envrc below the top; A's end
	# sweeps what changed since A started
	timeout -k 5 60 "$RUNTIME" --root "$ROOT" kit run --workspace "$WS" -- \
		sh -c 'while [ ! -e go ]; do sleep 0.05; done' >"$TEST_DIR/a.out" 2>"$TEST_DIR/a.err" 3>&- &
	BG_PID=$!
	wait_for_path "$WS/.envrc"     # A's placeholder: A is running
	runtime kit run --workspace-guard off --workspace "$WS" -- \
		sh -c 'cp /bin/sh x && chmod 4755 x && mkfifo p && mkdir sub && echo "touch /tmp/x" >sub/.envrc'
	assert_success
	setid "$WS/x" && [ "$(as_nobody "$WS/x")" = 0 ] || unprotected_failed "box B's set-user-ID root program"
	touch "$WS/go"
	wait "$BG_PID"
	BG_PID=
	! setid "$WS/x" || fail "the set-user-ID bit outlived box A: $(stat -c %A "$WS/x")"
	[ "$(as_nobody "$WS/x")" = 65534 ] || fail "nobody's euid changed"
	[ ! -e "$WS/p" ] || fail "the FIFO was left"
	[ ! -e "$WS/sub/.envrc" ] || fail "the .envrc was left"
	grep -q "x: set-user-ID or set-group-ID bits cleared" "$TEST_DIR/a.err" || fail "not said: $(cat "$TEST_DIR/a.err")"
	assert_kit_run_clean
}
