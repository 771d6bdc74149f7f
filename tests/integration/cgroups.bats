#!/usr/bin/env bats
# cgroups through the CLI: resources at create, pause/resume, update, ps, events,
# kill --all, --cgroup-manager disabled and systemd-style paths. Every value
# written is read back from the host's cgroup files.

load helpers

setup() {
	requires root cgroups_v1
	setup_bundle
	set_args abtest pause ready
}

teardown() {
	teardown_bundle
}

cg() { # cg CONTROLLER FILE: the container's cgroup file on the host
	cat "/sys/fs/cgroup/$1$CGROUP_PATH/$2"
}

start_running() {
	run_container ct --detach "$@"
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
}

@test "resources at create: memory, cpu and pids are written and read back" {
	update_config '.linux.resources.memory = {limit: 67108864, reservation: 33554432}
		| .linux.resources.cpu = {shares: 512, quota: 50000, period: 100000}
		| .linux.resources.pids = {limit: 77}'
	start_running
	[ "$(cg memory memory.limit_in_bytes)" = 67108864 ]
	[ "$(cg memory memory.soft_limit_in_bytes)" = 33554432 ]
	[ "$(cg cpu cpu.shares)" = 512 ]
	[ "$(cg cpu cpu.cfs_quota_us)" = 50000 ]
	[ "$(cg cpu cpu.cfs_period_us)" = 100000 ]
	[ "$(cg pids pids.max)" = 77 ]
	# the init is in every hierarchy's cgroup
	local pid
	pid=$(state_field ct .pid)
	grep -q ":memory:$CGROUP_PATH\$" "/proc/$pid/cgroup"
	grep -q ":pids:$CGROUP_PATH\$" "/proc/$pid/cgroup"
}

@test "pause and resume: frozen, state paused, then running again" {
	start_running
	runtime pause ct
	assert_success
	[ "$(state_field ct .status)" = paused ]
	[ "$(cg freezer freezer.state)" = FROZEN ]
	runtime pause ct
	assert_failure 1
	assert_one_error_line 'already paused'
	runtime resume ct
	assert_success
	[ "$(state_field ct .status)" = running ]
	[ "$(cg freezer freezer.state)" = THAWED ]
	runtime resume ct
	assert_failure 1
	assert_one_error_line 'not paused'
}

@test "pause of a stopped container: 'container not running'" {
	set_args abtest true
	run_container ct --detach
	wait_for_status ct stopped
	runtime pause ct
	assert_failure 1
	assert_one_error_line 'container not running'
}

@test "delete --force of a paused container leaves nothing" {
	start_running
	runtime pause ct
	assert_success
	runtime delete --force ct
	assert_success
	assert_nothing_left
}

@test "update flags: --memory, --pids-limit, --cpu-quota, --cpu-share are read back" {
	start_running
	runtime update --memory 64m --pids-limit 33 --cpu-quota 20000 --cpu-period 100000 --cpu-share 256 ct
	assert_success
	[ "$(cg memory memory.limit_in_bytes)" = 67108864 ]
	[ "$(cg pids pids.max)" = 33 ]
	[ "$(cg cpu cpu.cfs_quota_us)" = 20000 ]
	[ "$(cg cpu cpu.shares)" = 256 ]
}

@test "options may follow the container ID, as runc's command line allows" {
	# runc's own suite writes "update ID --cpu-period N", "delete ID --force"
	runtime run --bundle "$BUNDLE" ct --detach </dev/null
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	runtime update ct --pids-limit 44 --memory 64m
	assert_success
	[ "$(cg pids pids.max)" = 44 ]
	[ "$(cg memory memory.limit_in_bytes)" = 67108864 ]
	# exec stops at the ID: what follows is the command, flags included
	runtime exec ct abtest echo --memory 1m
	assert_success
	[ "$output" = "--memory 1m" ]
	runtime kill ct KILL --all
	assert_success
	wait_for_status ct stopped
	runtime delete ct --force
	assert_success
	assert_nothing_left
}

@test "update --resources - (stdin, as containerd sends it) and --resources FILE (podman)" {
	start_running
	runtime update --resources - ct <<<'{"pids": {"limit": 55}, "memory": {"limit": 100663296}}'
	assert_success
	[ "$(cg pids pids.max)" = 55 ]
	[ "$(cg memory memory.limit_in_bytes)" = 100663296 ]
	echo '{"pids": {"limit": 66}}' >"$TEST_DIR/res.json"
	runtime update --resources="$TEST_DIR/res.json" ct
	assert_success
	[ "$(cg pids pids.max)" = 66 ]
}

@test "update with the engines' real payloads" {
	local f
	start_running
	for f in "$FIXTURES_DIR"/*-update-resources.json; do
		runtime update --resources "$f" ct
		assert_success
	done
}

@test "update with a negative limit or malformed JSON: clear error, nothing changed" {
	start_running
	runtime update --pids-limit 40 ct
	assert_success
	runtime update --memory -5 ct
	assert_failure 1
	assert_one_error_line '--memory.*-5'
	runtime update --resources - ct <<<'{"pids": {"limit": "many"}}'
	assert_failure 1
	assert_one_error_line 'pids\.limit'
	runtime update --resources - ct <<<'{"pids": {'
	assert_failure 1
	assert_one_error_line 'invalid JSON'
	[ "$(cg pids pids.max)" = 40 ]
}

@test "update of a stopped container: 'container not running'" {
	set_args abtest true
	run_container ct --detach
	wait_for_status ct stopped
	runtime update --pids-limit 10 ct
	assert_failure 1
	assert_one_error_line 'container not running'
}

@test "ps --format json lists the host pids of every process; ps table has the PID column" {
	set_args sh -c 'abtest sleep 30 & echo ready; wait'
	start_running
	local pid
	pid=$(state_field ct .pid)
	runtime ps --format json ct
	assert_success
	jq -e --argjson p "$pid" 'index($p) != null and length == 2' <<<"$stdout" >/dev/null ||
		fail "ps json: $stdout"
	runtime ps ct
	assert_success
	[[ "${lines[0]}" == *PID* ]]
	grep -qE "^[^ ]+ +$pid " <<<"$stdout"
}

@test "events --stats: one JSON line with memory and pids" {
	update_config '.linux.resources.memory = {limit: 67108864}'
	start_running
	runtime events --stats ct
	assert_success
	jq -e '.type == "stats" and .id == "ct"' <<<"$stdout" >/dev/null
	[ "$(jq -r .data.memory.usage.limit <<<"$stdout")" = 67108864 ]
	[ "$(jq -r .data.pids.current <<<"$stdout")" -ge 1 ]
}

@test "events --interval streams stats until the container stops" {
	start_running
	("$RUNTIME" --root "$ROOT" events --interval 100ms ct >"$TEST_DIR/events" 2>&1 3>&-) &
	local ev=$!
	sleep 0.5
	runtime kill ct KILL
	wait "$ev"
	[ "$(grep -c '"type":"stats"' "$TEST_DIR/events")" -ge 2 ]
}

@test "--cgroup-manager disabled: no cgroup is made, the container runs, ps knows the init" {
	RUNTIME_ARGS+=(--cgroup-manager disabled)
	start_running
	! ls -d /sys/fs/cgroup/*"$CGROUP_PATH" 2>/dev/null || fail "succeeded, must not: ls -d /sys/fs/cgroup/*\"\$CGROUP_PATH\" 2>/dev/null"
	runtime ps --format json ct
	assert_success
	[ "$(jq length <<<"$stdout")" = 1 ]
	runtime pause ct
	assert_failure 1
	assert_one_error_line 'no cgroup'
}

@test "--systemd-cgroup: slice:prefix:name becomes a cgroupfs path without systemd" {
	update_config '.linux.cgroupsPath = "abtest.slice:abx:'"$CGROUP_NAME"'"'
	RUNTIME_ARGS+=(--systemd-cgroup)
	start_running
	local pid
	pid=$(state_field ct .pid)
	grep -q ":pids:/abtest.slice/abx-$CGROUP_NAME.scope\$" "/proc/$pid/cgroup"
	runtime delete --force ct
	assert_success
	[ ! -e "/sys/fs/cgroup/pids/abtest.slice/abx-$CGROUP_NAME.scope" ]
	rmdir /sys/fs/cgroup/*/abtest.slice 2>/dev/null || true
}

@test "the cgroup is removed on delete after an OOM kill" {
	update_config '.linux.resources.memory = {limit: 8388608, swap: 8388608}'
	set_args sh -c 'echo ready; x=$(head -c 64000000 /dev/zero | tr "\0" a); echo survived'
	run_container ct --detach
	assert_success
	wait_for_status ct stopped 20
	runtime delete ct
	assert_success
	assert_nothing_left
}

@test "create in a cgroup frozen beforehand is refused, not a hang; what it made goes" {
	# runc's "run/create should refuse pre-existing frozen cgroup": the init
	# would stop in the frozen cgroup before it reports, and create wait forever
	local fz=/sys/fs/cgroup/freezer$CGROUP_PATH
	[ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer here"
	mkdir "$fz"
	defer rmdir "$fz"
	echo FROZEN >"$fz/freezer.state"
	create_container ct
	assert_failure 1
	assert_one_error_line "create cgroup $CGROUP_PATH: container's cgroup unexpectedly frozen \(paused by its freezer\): thaw it or choose another linux\.cgroupsPath"
	# the freezer's was there before and stays (frozen); the others were made and went
	[ "$(cat "$fz/freezer.state")" = FROZEN ]
	[ ! -e "/sys/fs/cgroup/memory$CGROUP_PATH" ] && [ ! -e "/sys/fs/cgroup/pids$CGROUP_PATH" ] ||
		fail "cgroups left: $(leftover_cgroups)"
	echo THAWED >"$fz/freezer.state"
	run_container ct2 --detach
	assert_success
}

@test "a second container in a cgroup that holds processes gets a warning, as runc's" {
	start_running
	set_args abtest true
	run_container ct2
	assert_success
	[[ "$stderr" == *"container's cgroup is not empty: 1 process already in $CGROUP_PATH, which kill --all and delete --force of this container reach too"* ]] ||
		fail "no warning: $stderr"
	# a cgroup of its own: no warning
	update_config '.linux.cgroupsPath = $p' --arg p "$CGROUP_PATH-b"
	run_container ct3
	assert_success
	[ -z "$stderr" ] || fail "stderr: $stderr"
}

@test "update --memory -1 after a swap limit lifts both (runc's write order)" {
	[ -e "/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes" ] || skip "no swap accounting here"
	update_config '.linux.resources.memory = {limit: 33554432, swap: 67108864}'
	start_running
	runtime update --memory-swap 96468992 ct
	assert_success
	[ "$(cg memory memory.memsw.limit_in_bytes)" = 96468992 ]
	runtime update --memory -1 ct
	assert_success
	local unlimited
	unlimited=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
	[ "$(cg memory memory.limit_in_bytes)" = "$unlimited" ] && [ "$(cg memory memory.memsw.limit_in_bytes)" = "$unlimited" ] ||
		fail "limits: $(cg memory memory.limit_in_bytes) $(cg memory memory.memsw.limit_in_bytes)"
}

# bats test_tags=agentbox-only
@test "linux.resources.network where net_cls/net_prio are not mounted: refused like any controller, nothing left" {
	# runc 1.1.5 drops classID and priorities there without a word
	requires agentbox
	grep -q " - cgroup cgroup .*net_cls" /proc/self/mountinfo && skip "net_cls is mounted here"
	update_config '.linux.resources.network = {classID: 1048577}'
	run_container ct
	assert_failure 1
	assert_one_error_line 'linux\.resources\.network\.classID: the net_cls cgroup controller is not mounted'
	assert_nothing_left
	update_config '.linux.resources.network = {priorities: [{name: "lo", priority: 1}]}'
	run_container ct
	assert_failure 1
	assert_one_error_line 'linux\.resources\.network\.priorities: the net_prio cgroup controller is not mounted'
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "linux.resources.unified for a controller this cgroup2 hierarchy lacks: named, not ENOENT" {
	requires agentbox cgroups_unified
	grep -qw memory /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null && skip "memory is on cgroup2 here"
	[ -e /sys/fs/cgroup/unified/cgroup.controllers ] || skip "not a hybrid host"
	update_config '.linux.resources.unified = {"memory.min": "131072"}'
	run_container ct
	assert_failure 1
	assert_one_error_line 'linux\.resources\.unified: unified\["memory\.min"\]: invalid configuration on this host: the memory controller is not on its cgroup2 hierarchy$'
	assert_nothing_left
}

# bats test_tags=agentbox-only
@test "realtimeRuntime below agentbox's own parent: /agentbox is given room while it runs, and SCHED_FIFO runs" {
	# runc 1.1.5 ignores process.scheduler; its default parent is the root
	requires agentbox
	local parent=/sys/fs/cgroup/cpu/agentbox
	[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] || skip "no RT group scheduling in this kernel"
	mkdir -p "$parent"
	local orig
	orig=$(cat "$parent/cpu.rt_runtime_us")
	# given back after the container's cgroup is gone (the kernel frees a
	# removed cgroup's share a moment later)
	defer sh -c "for i in \$(seq 100); do echo $orig >$parent/cpu.rt_runtime_us && break; sleep 0.05; done"
	update_config '.linux.cgroupsPath = "/agentbox/" + $n
		| .process.capabilities.bounding += ["CAP_SYS_NICE"] | .process.capabilities.effective += ["CAP_SYS_NICE"]
		| .process.capabilities.permitted += ["CAP_SYS_NICE"]
		| .process.scheduler = {policy: "SCHED_FIFO", priority: 10}' --arg n "$CGROUP_NAME"
	# /proc/self/sched: policy 1 is SCHED_FIFO, prio 89 is real-time priority 10
	set_args sh -c 'grep -E "^(policy|prio) " /proc/self/sched | tr -s " "'
	# without real-time time the kernel refuses the policy: the line says what is missing
	if [ "$orig" = 0 ]; then
		run_container ct
		assert_failure 1
		assert_one_error_line 'process\.scheduler: set policy SCHED_FIFO \(a real-time policy needs CAP_SYS_NICE and, on a kernel with cpu\.rt_runtime_us, real-time CPU time for the container.s cgroup: linux\.resources\.cpu\.realtimeRuntime\): Operation not permitted'
		assert_nothing_left
	fi
	update_config '.linux.resources.cpu = {realtimeRuntime: 10000, realtimePeriod: 1000000}'
	run_container ct
	assert_success
	[ "$stdout" = $'policy : 1\nprio : 89' ] || fail "$output"
	# while it ran, /agentbox held its time; once it is gone, the time goes back
	[ "$(cat "$parent/cpu.rt_runtime_us")" = "$orig" ] || fail "parent kept $(cat "$parent/cpu.rt_runtime_us") (had $orig)"
	update_config '.process.args = ["abtest", "pause", "ready"]'
	run_container ct2 --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	[ "$(cat "$parent/cpu.rt_runtime_us")" -ge 10000 ] || fail "parent: $(cat "$parent/cpu.rt_runtime_us")"
	runtime delete --force ct2
	assert_success
	[ "$(cat "$parent/cpu.rt_runtime_us")" = "$orig" ] || fail "parent kept $(cat "$parent/cpu.rt_runtime_us") (had $orig)"
}
