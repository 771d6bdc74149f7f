#!/usr/bin/env bats
# exec: a new process inside a running container — its namespaces, cgroup,
# seccomp, the process.json or runc's flags, stdio, terminals, exit status.

load helpers

setup() {
	requires root
	setup_bundle
	set_args abtest pause ready
	update_config '.hostname = "exectest"'
}

teardown() {
	teardown_bundle
}

start_running() {
	run_container ct --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	INIT_PID=$(state_field ct .pid)
}

@test "exec: without HOME in its env the process gets the user's home from the container's /etc/passwd" {
	start_running
	runtime exec --env PATH=/bin ct sh -c 'echo "$HOME"'
	assert_success
	[ "$stdout" = /root ] || fail "root: HOME=$stdout"
	runtime exec --user 1000:1000 --env PATH=/bin ct sh -c 'echo "$HOME"'
	[ "$stdout" = /tmp ] || fail "uid 1000: HOME=$stdout"
	runtime exec --env HOME=/elsewhere ct sh -c 'echo "$HOME"'
	[ "$stdout" = /elsewhere ] || fail "a set HOME changed: $stdout"
}

@test "exec: the process joins the container's pid, mount, uts and net namespaces" {
	start_running
	runtime exec ct abtest ns
	assert_success
	local ns
	for ns in pid mnt uts net ipc cgroup; do
		[ "$(awk -v n="$ns" '$1 == n { print $2 }' <<<"$stdout")" = "$(readlink "/proc/$INIT_PID/ns/$ns")" ] ||
			fail "exec'd process is not in the container's $ns namespace"
	done
	runtime exec ct abtest hostname
	[[ "$stdout" == "nodename=exectest"* ]]
	# not pid 1 of the container: the init is
	runtime exec ct abtest pidns
	[[ "$stdout" == pid=* ]]
	[[ "$stdout" != "pid=1 "* ]]
}

@test "exec: the exit status of a foreground exec is the process's" {
	start_running
	runtime exec ct sh -c 'exit 42'
	[ "$status" -eq 42 ]
	runtime exec ct abtest true
	assert_success
}

@test "exec: stdout, stderr and stdin pass through" {
	start_running
	runtime exec ct sh -c 'cat; echo err >&2' <<<"piped in"
	assert_success
	[ "$stdout" = "piped in" ]
	[ "$stderr" = err ]
}

@test "exec --process FILE: args, env, cwd, user and capabilities from process.json" {
	start_running
	cat >"$TEST_DIR/process.json" <<-'EOF'
	{"args": ["sh", "-c", "echo $FOO; pwd; abtest id; abtest caps"],
	 "env": ["PATH=/bin:/usr/bin", "FOO=from-process-json"],
	 "cwd": "/tmp",
	 "user": {"uid": 1000, "gid": 1000, "additionalGids": [2000]},
	 "capabilities": {"bounding": ["CAP_KILL"], "effective": [], "permitted": []}}
	EOF
	runtime exec --process "$TEST_DIR/process.json" ct
	assert_success
	[ "${lines[0]}" = from-process-json ]
	[ "${lines[1]}" = /tmp ]
	[[ "${lines[2]}" == "uid=1000 gid=1000 groups=2000 "* ]]
	# bounding set: CAP_KILL (bit 5) only
	grep -q '^CapBnd:[[:space:]]*0000000000000020$' <<<"$stdout"
}

@test "exec flags: --env, --cwd, --user add to the container's process" {
	start_running
	runtime exec --env EXTRA=yes --cwd /etc --user 123:456 ct sh -c 'echo $EXTRA; pwd; abtest id'
	assert_success
	[ "${lines[0]}" = yes ]
	[ "${lines[1]}" = /etc ]
	[[ "${lines[2]}" == "uid=123 gid=456 "* ]]
}

@test "exec --detach --pid-file: the pid is written and the process is in the container's cgroup" {
	requires cgroups_v1
	start_running
	runtime exec --detach --pid-file "$TEST_DIR/exec.pid" ct abtest sleep 30
	assert_success
	local pid
	pid=$(cat "$TEST_DIR/exec.pid")
	kill -0 "$pid"
	grep -q ":pids:$CGROUP_PATH\$" "/proc/$pid/cgroup"
	# and ps of the container lists it
	runtime ps --format json ct
	assert_success
	jq -e --argjson p "$pid" 'index($p) != null' <<<"$stdout" >/dev/null
}

@test "exec: the container's seccomp filters and no_new_privs apply" {
	start_running
	runtime exec ct abtest caps
	assert_success
	local init_seccomp
	init_seccomp=$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$INIT_PID/status")
	[ "$(awk '$1 == "Seccomp:" { print $2 }' <<<"$stdout")" = "$init_seccomp" ]
	[ "$init_seccomp" = 2 ]
}

@test "exec --preserve-fds 1: fd 3 reaches the process, fd 4 does not" {
	start_running
	RT_CALLS=$((RT_CALLS + 1))
	"$RUNTIME" --root "$ROOT" "${RUNTIME_ARGS[@]}" exec --preserve-fds 1 ct abtest fds \
		3</etc/hostname 4</etc/hosts >"$TEST_DIR/fds.out" 2>&1
	grep -qE '^3 -> /etc/hostname' "$TEST_DIR/fds.out" || fail "fd 3 missing: $(cat "$TEST_DIR/fds.out")"
	! grep -qE '^4 -> ' "$TEST_DIR/fds.out" || fail "succeeded, must not: grep -qE '^4 -> ' \"\$TEST_DIR/fds.out\""
}

@test "exec --tty --console-socket: the process gets a pty of the container" {
	requires tty
	start_running
	start_recvtty
	runtime exec --tty --detach --console-socket "$CONSOLE_SOCKET" ct sh -c 'abtest isatty 0; abtest isatty 1'
	assert_success
	wait "$RECVTTY_PID"
	grep -qx 'fds=1' "$TTY_OUT.meta"
	[ "$(tty_output)" = $'yes\nyes' ] || fail "tty output: $(tty_output)"
}

@test "exec into a stopped container: exit 255, 'container not running'" {
	set_args abtest true
	run_container ct --detach
	assert_success
	wait_for_status ct stopped
	runtime exec ct abtest true
	assert_failure 255
	assert_one_error_line 'container not running'
}

@test "exec into a missing container: exit 255, 'does not exist'" {
	runtime exec nosuch abtest true
	assert_failure 255
	assert_one_error_line 'container "nosuch" does not exist'
}

@test "exec with a malformed process.json names the file and changes nothing" {
	start_running
	echo '{"args": ["sh"], "cwd": 7}' >"$TEST_DIR/bad.json"
	runtime exec --process "$TEST_DIR/bad.json" ct
	assert_failure 255
	assert_one_error_line 'bad\.json: cwd'
	[ "$(state_field ct .status)" = running ]
}

# bats test_tags=agentbox-only
@test "exec --apparmor, --process-label and process.json's apparmorProfile without those LSMs: refused, the container untouched" {
	requires agentbox
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] ||
		skip "AppArmor is enabled on this host: the profile would be applied"
	[ "$(stat -f -c %T /sys/fs/selinux 2>/dev/null)" != selinuxfs ] || skip "SELinux is enabled on this host"
	start_running
	runtime exec --apparmor my-profile ct abtest true
	assert_failure 255
	assert_one_error_line 'exec: process\.apparmorProfile "my-profile": AppArmor is not enabled on this host'
	runtime exec --process-label system_u:system_r:container_t:s0 ct abtest true
	assert_failure 255
	assert_one_error_line 'exec: process\.selinuxLabel "system_u:system_r:container_t:s0": SELinux is not enabled'
	echo '{"args": ["abtest", "true"], "cwd": "/", "apparmorProfile": "my-profile"}' >"$TEST_DIR/aa.json"
	runtime exec --process "$TEST_DIR/aa.json" ct
	assert_failure 255
	assert_one_error_line 'process\.json: apparmorProfile "my-profile": AppArmor is not enabled'
	# empty values are no profile at all
	runtime exec --apparmor "" --process-label "" ct abtest echo ran
	assert_success
	[ "$stdout" = ran ]
	[ "$(state_field ct .status)" = running ]
}

@test "exec of a program that does not exist: exit status 255 and a clear message" {
	start_running
	runtime exec ct no-such-program
	assert_failure 255
	[[ "$output" == *'no-such-program'* ]]
	[ "$(state_field ct .status)" = running ]
}

# runc 1.1.5 here: a mistake on exec's command line is 1, every failure after
# it 255 ("exec failed: ..."), the program's status its own.
@test "exec: the runtime's failures are 255, the program's status its own, a bad command line 1 (as runc)" {
	start_running
	local st
	for st in 1 2 254; do
		runtime exec ct sh -c "exit $st"
		[ "$status" -eq "$st" ] || fail "the program's $st came back as $status"
	done
	runtime exec ct sh -c 'kill -KILL $$'
	[ "$status" -eq 137 ] || fail "killed by SIGKILL: $status"
	# the runtime's own failures: no such program, a bad --user, a cwd that is not there
	runtime exec ct /no/such/program
	assert_failure 255
	runtime exec --user nobody ct abtest true
	assert_failure 255
	! is_agentbox || assert_one_error_line '--user "nobody"' || fail "succeeded, must not: is_agentbox || assert_one_error_line '--user \"nobody\"'"
	runtime exec --cwd /no/such/dir ct abtest true
	assert_failure 255
	runtime exec --process "$TEST_DIR/none.json" ct
	assert_failure 255
	runtime exec ct
	assert_failure 255
	# the command line
	runtime exec
	assert_failure 1
	runtime exec --no-such-option ct abtest true
	assert_failure 1
	runtime exec --preserve-fds many ct abtest true
	assert_failure 1
	[ "$(state_field ct .status)" = running ]
}
