#!/usr/bin/env bats
# stdio: pass-through of fds 0-2, no fd leaks, --preserve-fds, terminals.

load helpers

setup() {
	requires root
	setup_bundle
}

teardown() {
	teardown_bundle
}

# run_with_fds REDIRECTIONS RUNTIME-ARGS...: run the runtime with extra fds
# opened by bash (e.g. '3>/dev/null 4</etc/hosts'), stdout/stderr to files.
run_with_fds() {
	local redir=$1
	shift
	RT_CALLS=$((RT_CALLS + 1))
	RT_STDOUT=$TEST_DIR/rt.$RT_CALLS.stdout
	RT_STDERR=$TEST_DIR/rt.$RT_CALLS.stderr
	status=0
	eval '"$RUNTIME" --root "$ROOT" "$@" >"$RT_STDOUT" 2>"$RT_STDERR" '"$redir" || status=$?
	_rt_collect "$RUNTIME --root $ROOT $* $redir"
}

# fd numbers from `abtest fds` output in $stdout
fd_numbers() {
	awk '$2 == "->" { printf "%s ", $1 }' <<<"$stdout"
}

@test "stdout and stderr of the process are the runtime's, kept apart" {
	set_args sh -c 'echo to-out; echo to-err >&2; echo more-out'
	run_container ct
	assert_success
	[ "$stdout" = $'to-out\nmore-out' ]
	[ "$stderr" = to-err ]
}

@test "stdin: a pipe/file is the process's stdin" {
	set_args abtest cat
	run_container ct <<<"hello through stdin"
	assert_success
	[ "$stdout" = "hello through stdin" ]
}

@test "stdin: 1 MiB passes through unchanged and EOF reaches the process" {
	head -c 1048576 /dev/urandom >"$TEST_DIR/big"
	set_args abtest cat
	run_container ct <"$TEST_DIR/big"
	assert_success
	cmp "$TEST_DIR/big" "$RT_STDOUT"
}

@test "create + start: stdio are the runtime's own open files, not copies" {
	# what the engines rely on (`run` in the foreground may relay through pipes)
	set_args abtest fds
	create_container ct </dev/null
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped
	stdout=$(<"$CT_STDOUT")
	grep -qx '0 -> /dev/null' <<<"$stdout"
	# fds 1 and 2 are the files create was started with (host paths)
	grep -qx "1 -> $CT_STDOUT" <<<"$stdout"
	grep -qx "2 -> $CT_STDERR" <<<"$stdout"
}

@test "no fd leaks: extra fds of the runtime do not reach the process (run)" {
	set_args abtest fds
	run_with_fds '3>/dev/null 4</etc/hosts 5>"$TEST_DIR/five" 9</dev/zero' run --bundle "$BUNDLE" ct
	assert_success
	[ "$(fd_numbers)" = "0 1 2 " ] || fail "fds in the container: $stdout"
}

@test "no fd leaks: extra fds of the runtime do not reach the process (create + start)" {
	set_args abtest fds
	run_with_fds '3>/dev/null 4</etc/hosts 7</dev/zero </dev/null' create --bundle "$BUNDLE" ct
	assert_success
	local out=$RT_STDOUT
	run_with_fds '3>/dev/null 5</etc/hosts' start ct
	assert_success
	wait_for_status ct stopped
	stdout=$(<"$out")
	[ "$(fd_numbers)" = "0 1 2 " ] || fail "fds in the container: $stdout"
}

@test "no fd leaks: the running process's fds, seen from the host, are only 0 1 2" {
	set_args abtest pause ready
	run_with_fds '3>/dev/null 4</etc/hosts </dev/null' run --detach --bundle "$BUNDLE" ct
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid fds
	pid=$(state_field ct .pid)
	fds=$(ls /proc/"$pid"/fd | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 " ] || fail "fds of the container's init: $fds ($(ls -l /proc/"$pid"/fd))"
}

@test "--preserve-fds 2 passes fds 3 and 4, and no more" {
	echo "fd four" >"$TEST_DIR/four"
	set_args sh -c 'abtest fds; cat <&4'
	run_with_fds '3>/dev/null 4<"$TEST_DIR/four" 5</etc/hosts' run --preserve-fds 2 --bundle "$BUNDLE" ct
	assert_success
	[ "$(fd_numbers)" = "0 1 2 3 4 " ] || fail "fds in the container: $stdout"
	grep -qE '^3 -> /dev/null$' <<<"$stdout"
	grep -qx 'fd four' <<<"$stdout"
}

@test "--preserve-fds with create: the fds are kept until start" {
	echo "from create" >"$TEST_DIR/three"
	set_args sh -c 'cat <&3'
	run_with_fds '3<"$TEST_DIR/three" </dev/null' create --preserve-fds 1 --bundle "$BUNDLE" ct
	assert_success
	local out=$RT_STDOUT
	runtime start ct
	assert_success
	wait_for_status ct stopped
	grep -qx 'from create' "$out"
}

# ---------------------------------------------------------------- terminals

@test "terminal: --console-socket gets one message with the pty master (SCM_RIGHTS)" {
	requires tty
	update_config '.process.terminal = true'
	set_args sh -c 'abtest isatty 0; abtest isatty 1; abtest isatty 2; abtest tryopen /dev/tty rw'
	start_recvtty
	runtime run --detach --console-socket "$CONSOLE_SOCKET" --bundle "$BUNDLE" ct
	assert_success
	wait_for_status ct stopped
	wait "$RECVTTY_PID"
	grep -qx 'fds=1' "$TTY_OUT.meta"
	# a master of the new devpts instance: /dev/pts/ptmx is 5:2
	grep -qx 'master=5:2' "$TTY_OUT.meta"
	grep -qE '^payload=.+' "$TTY_OUT.meta"
	# stdin, stdout, stderr are the tty, and it is the controlling terminal
	[ "$(tty_output)" = $'yes\nyes\nyes\nok' ] || fail "tty output: $(tty_output)"
}

@test "terminal: process.consoleSize is applied to the pty" {
	requires tty
	update_config '.process.terminal = true | .process.consoleSize = {height: 33, width: 101}'
	set_args abtest tty-size
	start_recvtty
	create_container ct --console-socket "$CONSOLE_SOCKET"
	assert_success
	runtime start ct
	assert_success
	wait_for_status ct stopped
	wait "$RECVTTY_PID"
	[ "$(tty_output)" = "33 101" ]
}

@test "terminal: input written to the master reaches the process" {
	requires tty
	update_config '.process.terminal = true'
	set_args sh -c 'read line; echo "got [$line]"'
	start_recvtty $'typed text\n'
	runtime run --detach --console-socket "$CONSOLE_SOCKET" --bundle "$BUNDLE" ct
	assert_success
	wait_for_status ct stopped
	wait "$RECVTTY_PID"
	grep -qx 'got \[typed text\]' <(tty_output)
}

@test "terminal: --console-socket that does not exist fails create, nothing left" {
	update_config '.process.terminal = true'
	create_container ct --console-socket "$TEST_DIR/no-such.sock"
	assert_failure 1
	assert_nothing_left
}

@test "terminal: run in the foreground from a pty: interactive, sized, exit status" {
	requires tty
	update_config '.process.terminal = true'
	set_args sh
	local status=0
	"$PYTHON" "$INTEGRATION_ROOT/ptyrun.py" --rows 40 --cols 120 --timeout 20 \
		--input $'abtest isatty 0; abtest tty-size; echo "mark""er"\nexit 3\n' \
		-- "$RUNTIME" --root "$ROOT" run --bundle "$BUNDLE" ct >"$TEST_DIR/pty.out" 2>&1 3>&- || status=$?
	local out
	out=$(tr -d '\r' <"$TEST_DIR/pty.out")
	echo "$out" >&2
	[ "$status" -eq 3 ] || fail "exit status $status"
	grep -qx yes <<<"$out"
	grep -qx '40 120' <<<"$out"
	grep -qx marker <<<"$out"
}

@test "terminal: without a terminal, the process has no controlling tty" {
	set_args sh -c 'abtest isatty 0; abtest tryopen /dev/tty rw'
	run_container ct </dev/null
	[ "${lines[0]}" = no ]
	[ "${lines[1]}" = ENXIO ]
}
