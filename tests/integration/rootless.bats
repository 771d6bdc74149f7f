#!/usr/bin/env bats
# Rootless: agentbox run by an unprivileged user, as runc and crun are
# (`agentbox spec --rootless`: a user namespace mapping the user to root). The
# state under the user's runtime directory, id maps through newuidmap and
# newgidmap, cgroups only through a subtree delegated to the user (else
# skipped with one warning, or refused where runc refuses), the seccomp
# profile and the floor as for root, and every failure one line.
#
# setup_file makes the user abrl-rNNNN with its own subuid/subgid range and
# teardown_file removes it with its files. The firewall under rootless Podman
# is tested in tests/engines/podman-rootless.bats.

load helpers

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v useradd >/dev/null || return 0
	export RL_USER=abrl-r$$
	export RL_SUBID=$((1964000000 + ($$ % 500) * 65536))
	# no subordinate ranges from useradd's defaults: only ours
	useradd -m -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 -s /bin/sh "$RL_USER" >&2 || { RL_USER=; return 0; }
	usermod --add-subuids "$RL_SUBID-$((RL_SUBID + 65535))" --add-subgids "$RL_SUBID-$((RL_SUBID + 65535))" "$RL_USER" >&2
	export RL_UID RL_GID RL_HOME
	RL_UID=$(id -u "$RL_USER")
	RL_GID=$(id -g "$RL_USER")
	RL_HOME=$(getent passwd "$RL_USER" | cut -d: -f6)
	# a copy of the runtime the user may run (the suite's may sit in a dir of root's)
	export RL_BIN
	RL_BIN=$(mktemp -d /tmp/abrl-rlb.XXXXXX)
	chmod 755 "$RL_BIN"
	cp "$RUNTIME" "$RL_BIN/runtime"
	chmod 755 "$RL_BIN/runtime"
	# what pam_systemd would make at login
	export RL_XDG=/run/user/$RL_UID RL_MADE_RUN_USER=
	[ -d /run/user ] || RL_MADE_RUN_USER=1
	mkdir -p "$RL_XDG"
	chown "$RL_USER:" "$RL_XDG"
	chmod 700 "$RL_XDG"
}

teardown_file() {
	[ -n "${RL_USER:-}" ] || return 0
	local pids
	pids=$(ps -o pid= -u "$RL_USER" 2>/dev/null || true)
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	userdel -r "$RL_USER" 2>/dev/null || userdel -r -f "$RL_USER" 2>/dev/null || true
	rm -rf "$RL_XDG" "/tmp/agentbox-$RL_UID" "$RL_BIN"
	[ -z "$RL_MADE_RUN_USER" ] || rmdir /run/user 2>/dev/null || true
}

setup() {
	requires root userns
	[ -n "${RL_USER:-}" ] || skip "no test user (needs root and useradd)"
	setup_bundle
	# the user reaches the bundle through our temp dirs and owns it
	chmod a+x "$BATS_RUN_TMPDIR" "$TEST_DIR"
	rm -f "$BUNDLE/config.json"
	chown -R "$RL_USER:" "$BUNDLE"
	as_user sh -c "cd '$BUNDLE' && '$RL_BIN/runtime' spec --rootless" || fail "spec --rootless as $RL_USER"
	update_config '.process.terminal = false | .process.args = ["abtest", "true"]'
	chown "$RL_USER:" "$BUNDLE/config.json"
	# the user's state dir for this test
	ROOT=$TEST_DIR/rlstate
	mkdir -p "$ROOT"
	chown "$RL_USER:" "$ROOT"
	RL_ARGS=()
}

teardown() {
	local id
	if [ -n "${ROOT:-}" ] && [ -d "$ROOT" ]; then
		for id in $(ls -1 "$ROOT" 2>/dev/null | grep -v '^\.'); do
			as_user "$RL_BIN/runtime" --root "$ROOT" delete --force "$id" >/dev/null 2>&1 || true
		done
	fi
	[ -z "${RL_CGROUP:-}" ] || {
		find "$RL_CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	}
	teardown_bundle
}

# as_user CMD...: CMD as the test user, in a login-like environment.
as_user() {
	runuser -u "$RL_USER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$RL_HOME" USER="$RL_USER" \
		XDG_RUNTIME_DIR="${RL_XDG_OVERRIDE-$RL_XDG}" "$@"
}

# rl ARGS...: the runtime as the test user, like `runtime` (status, output,
# stdout, stderr, lines, stderr_lines), with --root $ROOT unless RL_NO_ROOT.
rl() {
	RT_CALLS=$((RT_CALLS + 1))
	RT_STDOUT=$TEST_DIR/rt.$RT_CALLS.stdout
	RT_STDERR=$TEST_DIR/rt.$RT_CALLS.stderr
	local root=(--root "$ROOT")
	[ -z "${RL_NO_ROOT:-}" ] || root=()
	status=0
	(cd "$BUNDLE" && exec timeout -k 5 "$RUNTIME_TIMEOUT" runuser -u "$RL_USER" -- env -i \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$RL_HOME" USER="$RL_USER" \
		${RL_XDG_OVERRIDE-XDG_RUNTIME_DIR=$RL_XDG} ${RL_TMPDIR:+TMPDIR=$RL_TMPDIR} \
		"$RL_BIN/runtime" "${root[@]}" "${RL_ARGS[@]}" "$@" \
		>"$RT_STDOUT" 2>"$RT_STDERR" 3>&- </dev/null) || status=$?
	_rt_collect "(as $RL_USER) $RUNTIME ${root[*]} ${RL_ARGS[*]} $*"
}

@test "rootless: spec --rootless maps the user to root; run works, the program is root inside and the user outside" {
	RL_ARGS=(--egress-allow all)
	set_args sh -c 'abtest id; cat /proc/self/uid_map'
	rl run ct
	assert_success
	[[ "${lines[0]}" == "uid=0 gid=0 "* ]] || fail "$output"
	grep -qE "^ +0 +$RL_UID +1$" <<<"$stdout" || fail "not mapped to $RL_UID: $stdout"
	# one warning: no cgroup delegated to the user on this host
	[ "$(grep -c 'warning' <<<"$stderr")" -le 1 ] || fail "more than one warning: $stderr"
	if [ "$(grep -c warning <<<"$stderr")" = 1 ]; then
		assert_output_contains "runs without a cgroup: rootless"
	fi
	# runc does the same for this user
	if [ -x /usr/sbin/runc ]; then
		status=0
		out=$(cd "$BUNDLE" && runuser -u "$RL_USER" -- env -i PATH=/usr/bin:/bin HOME="$RL_HOME" \
			XDG_RUNTIME_DIR="$RL_XDG" /usr/sbin/runc --root "$ROOT/runc" run ctr 2>&1) || status=$?
		[ "$status" = 0 ] && [[ "$out" == "uid=0 gid=0 "* ]] || fail "runc rootless: $status $out"
	fi
}

@test "rootless: create, start, state, kill, delete as the user; the state is the user's" {
	RL_ARGS=(--egress-allow all)
	set_args abtest pause ready
	rl create ct
	assert_success
	[ "$(stat -c %U "$ROOT/ct")" = "$RL_USER" ] || fail "state dir owner $(stat -c %U "$ROOT/ct")"
	rl start ct
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$' || wait_for_line "$TEST_DIR/rt.1.stdout" '^ready$'
	rl state ct
	assert_success
	[ "$(jq -r .status <<<"$stdout")" = running ]
	local pid
	pid=$(jq -r .pid <<<"$stdout")
	[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" = "$RL_UID" ]
	rl kill ct KILL
	assert_success
	rl delete --force ct
	assert_success
	[ ! -e "$ROOT/ct" ]
}

@test "rootless: the default state root is \$XDG_RUNTIME_DIR/agentbox, else /run/user/UID, else a private /tmp/agentbox-UID" {
	RL_ARGS=(--egress-allow all)
	RL_NO_ROOT=1
	rl run ct1
	assert_success
	rl list -q
	assert_success
	[ "$(stat -c '%U %a' "$RL_XDG/agentbox")" = "$RL_USER 700" ] || fail "$(stat -c '%U %a' "$RL_XDG/agentbox")"
	# no XDG_RUNTIME_DIR: /run/user/UID, the user's own
	RL_XDG_OVERRIDE=
	rl run --keep ct2
	assert_success
	[ -d "$RL_XDG/agentbox/ct2" ] || fail "not under /run/user/$RL_UID: $(ls "$RL_XDG/agentbox")"
	rl delete ct2
	assert_success
	# neither: /tmp/agentbox-UID, made 0700, whatever TMPDIR says (su, sudo
	# and a login shell differ in it, and the user's commands must agree)
	local tmp=$TEST_DIR/tmp dir=/tmp/agentbox-$RL_UID
	mkdir -m 1777 "$tmp"
	rm -rf "$dir"
	chmod 000 "$RL_XDG"   # as if it were not the user's
	chown root "$RL_XDG"
	defer chmod 700 "$RL_XDG"
	defer chown "$RL_USER" "$RL_XDG"
	RL_TMPDIR=$tmp rl run --keep ct3
	assert_success
	[ "$(stat -c '%U %a' "$dir")" = "$RL_USER 700" ]
	[ -d "$dir/agentbox/ct3" ]
	[ -z "$(ls -A "$tmp")" ] || fail "TMPDIR used: $(ls -A "$tmp")"
	# an XDG_RUNTIME_DIR that is not the user's (su keeps root's) is passed over
	RL_XDG_OVERRIDE="XDG_RUNTIME_DIR=$RL_XDG" rl list -q
	assert_success
	[ "$stdout" = ct3 ] || fail "list with root's XDG_RUNTIME_DIR: $output"
	rl delete ct3
	assert_success
	# one that someone else made first is refused, in one line
	rm -rf "$dir"
	mkdir -m 777 "$dir"
	rl run ct4
	assert_failure 1
	assert_one_error_line "the runtime directory $dir is not the user's alone"
	rm -rf "$dir"
}

@test "rootless: a resource limit without a delegated cgroup is refused as runc refuses it; so is a cgroupsPath" {
	requires agentbox
	RL_ARGS=(--egress-allow all)
	update_config '.linux.resources.memory = {limit: 67108864}'
	rl run ct
	assert_failure 1
	assert_one_error_line 'linux.resources.memory: a limit cannot be applied: rootless'
	[ ! -e "$ROOT/ct" ]
	update_config 'del(.linux.resources.memory) | .linux.cgroupsPath = "/abrl-nope"'
	rl run ct
	assert_failure 1
	assert_one_error_line 'cgroupsPath "/abrl-nope": rootless'
	[ ! -e "$ROOT/ct" ]
}

@test "rootless: a cgroup v2 subtree delegated to the user holds the container, with the limits it can apply" {
	requires agentbox
	local uni
	for uni in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -e "$uni/cgroup.procs" ] && [ -e "$uni/cgroup.subtree_control" ] && break
	done
	[ -e "$uni/cgroup.procs" ] || skip "no cgroup2 mount"
	grep -qw hugetlb "$uni/cgroup.subtree_control" || skip "the cgroup2 mount offers no hugetlb to delegate"
	[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2 MB hugepages"
	local page=2MB
	# delegate a subtree as systemd does: the directory and its interface files
	RL_CGROUP=$uni/abrl-d$$
	mkdir -p "$RL_CGROUP/shell"
	chown "$RL_USER:" "$RL_CGROUP" "$RL_CGROUP/cgroup.procs" "$RL_CGROUP/cgroup.subtree_control" \
		"$RL_CGROUP/cgroup.threads" "$RL_CGROUP/shell" "$RL_CGROUP/shell/cgroup.procs"
	RL_ARGS=(--egress-allow all)
	update_config '.linux.resources.hugepageLimits = [{pageSize: $p, limit: 4194304}]' --arg p "$page"
	set_args abtest pause ready
	# the runtime starts in the delegated subtree, as a user service would
	(cd "$BUNDLE" && sh -c 'echo $$ >"$1/shell/cgroup.procs" && shift && exec "$@"' sh "$RL_CGROUP" \
		runuser -u "$RL_USER" -- env -i PATH=/usr/bin:/bin HOME="$RL_HOME" XDG_RUNTIME_DIR="$RL_XDG" \
		"$RL_BIN/runtime" --root "$ROOT" --egress-allow all run --detach ct >"$TEST_DIR/out" 2>&1 3>&- </dev/null) ||
		fail "run --detach in the delegated subtree: $(cat "$TEST_DIR/out")"
	wait_for_line "$TEST_DIR/out" '^ready$'
	! grep -q warning "$TEST_DIR/out" || fail "$(cat "$TEST_DIR/out")"
	local cg=$RL_CGROUP/agentbox-ct
	[ -d "$cg" ] || fail "no cgroup at $cg: $(ls "$RL_CGROUP")"
	local pid
	pid=$(as_user "$RL_BIN/runtime" --root "$ROOT" state ct | jq -r .pid)
	grep -qx "$pid" "$cg/cgroup.procs" || fail "the init is not in $cg"
	[ "$(cat "$cg/hugetlb.$page.max")" = 4194304 ] || fail "hugetlb limit: $(cat "$cg/hugetlb.$page.max")"
	rl delete --force ct
	assert_success
	[ ! -d "$cg" ] || fail "the cgroup is left"
	# a limit this subtree has no controller for is refused, as runc does
	update_config '.linux.resources.memory = {limit: 67108864}'
	(cd "$BUNDLE" && sh -c 'echo $$ >"$1/shell/cgroup.procs" && shift && exec "$@"' sh "$RL_CGROUP" \
		runuser -u "$RL_USER" -- env -i PATH=/usr/bin:/bin HOME="$RL_HOME" XDG_RUNTIME_DIR="$RL_XDG" \
		"$RL_BIN/runtime" --root "$ROOT" --egress-allow all run ct2 >"$TEST_DIR/out2" 2>&1 3>&- </dev/null) && fail "a memory limit without a memory controller passed"
	grep -q '^agentbox: .*memory' "$TEST_DIR/out2" || fail "$(cat "$TEST_DIR/out2")"
	[ "$(wc -l <"$TEST_DIR/out2")" = 1 ] || fail "more than one line: $(cat "$TEST_DIR/out2")"
	[ ! -e "$ROOT/ct2" ] && [ ! -d "$RL_CGROUP/agentbox-ct2" ]
}

@test "rootless: a systemd cgroupsPath (rootless Podman's systemd manager) is made below the user's manager" {
	requires agentbox
	local uni
	for uni in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -e "$uni/cgroup.procs" ] && [ -e "$uni/cgroup.subtree_control" ] && break
	done
	[ -e "$uni/cgroup.procs" ] || skip "no cgroup2 mount"
	# what logind and the user's systemd make: user@UID.service is the user's
	RL_CGROUP=$uni/abrl-s$$.slice
	local mgr=$RL_CGROUP/user-$RL_UID.slice/user@$RL_UID.service
	mkdir -p "$mgr/app.slice/shell.scope"
	chown -R "$RL_USER:" "$mgr"
	update_config '.linux.cgroupsPath = "user.slice:libpod:ct"'
	set_args abtest pause ready
	(cd "$BUNDLE" && sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$mgr/app.slice/shell.scope" \
		runuser -u "$RL_USER" -- env -i PATH=/usr/bin:/bin HOME="$RL_HOME" XDG_RUNTIME_DIR="$RL_XDG" \
		"$RL_BIN/runtime" --root "$ROOT" --systemd-cgroup --egress-allow all run --detach ct >"$TEST_DIR/out" 2>&1 3>&- </dev/null) ||
		fail "run --detach: $(cat "$TEST_DIR/out")"
	wait_for_line "$TEST_DIR/out" '^ready$'
	local cg=$mgr/user.slice/libpod-ct.scope pid
	[ -d "$cg" ] || fail "no cgroup at $cg: $(find "$RL_CGROUP" -type d)"
	pid=$(as_user "$RL_BIN/runtime" --root "$ROOT" state ct | jq -r .pid)
	grep -qx "$pid" "$cg/cgroup.procs" || fail "the init is not in $cg"
	rl delete --force ct
	assert_success
	[ ! -d "$cg" ] || fail "the cgroup is left"
}

@test "rootless: the floor and the agent seccomp profile apply as for root" {
	RL_ARGS=(--egress-allow all)
	set_args sh -c 'grep -E "^(Seccomp|Seccomp_filters|NoNewPrivs):" /proc/self/status'
	rl run ct
	assert_success
	grep -qE '^Seccomp:[[:space:]]+2$' <<<"$stdout" || fail "$stdout"
	grep -qE '^NoNewPrivs:[[:space:]]+1$' <<<"$stdout" || fail "$stdout"
	if is_agentbox; then
		# the engine's profile would be a second filter; the agent's is there without one
		grep -qE '^Seccomp_filters:[[:space:]]+[1-9]' <<<"$stdout" || fail "$stdout"
		# a privileged capability is refused by the floor
		update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
		rl run ct2
		assert_failure 1
		assert_one_error_line 'floor: privileged containers are refused'
		[ ! -e "$ROOT/ct2" ]
	fi
}

@test "rootless: without a network namespace of its own, /sys is the host's, read-only with every mount below it" {
	# no netns of the user namespace's own (here the host's, which the floor
	# refuses unless told; rootless Podman's --userns=keep-id is another):
	# sysfs cannot be mounted, the host's /sys is bound instead, with what
	# the host mounted below it
	printf 'floor: {refuse_host_network: false}\n' >"$TEST_DIR/rl-config.yaml"
	chmod 644 "$TEST_DIR/rl-config.yaml"
	RL_ARGS=(--config "$TEST_DIR/rl-config.yaml" --egress-allow all)
	update_config 'del(.linux.namespaces[] | select(.type == "network"))'
	set_args cat /proc/self/mountinfo
	rl run ct
	assert_success
	# mount point (field 5) and its own options (field 6) of /sys and below
	local below
	below=$(awk '$5 == "/sys" || index($5, "/sys/") == 1 { print $5, $6 }' <<<"$stdout")
	echo "$below"
	[ "$(wc -l <<<"$below")" -ge 2 ] || skip "the host has no mount below /sys"
	! grep -v ' ro,' <<<"$below" || fail "writable below /sys: $(grep -v ' ro,' <<<"$below")"
}

@test "rootless: ids outside the user's subordinate range: newuidmap refuses, one line, nothing left" {
	requires agentbox
	RL_ARGS=(--egress-allow all)
	update_config '.linux.uidMappings += [{containerID: 1, hostID: 4000000000, size: 10}]'
	rl run ct
	assert_failure 1
	assert_one_error_line 'linux.uidMappings: .*newuidmap'
	[ ! -e "$ROOT/ct" ]
	# (zombies of earlier tests' containers wait for pid 1 to reap them)
	[ -z "$(ps -o pid=,stat= -u "$RL_USER" | awk '$2 !~ /^Z/')" ] || fail "processes left: $(ps -f -u "$RL_USER")"
}

# rl_wired_run ID ARGS...: create as the user, wire the container's own network
# namespace (which the user's user namespace owns) to our netns abrl-rlnNNNN with
# a veth pair (198.19.65.2 inside, 198.19.65.1 there), then start as the user
# and wait for the program to be done; its output is in $RL_OUT.
rl_wired_run() {
	local id=$1 pid veth=abrl-rv$RT_CALLS
	shift
	rl "$@" create "$id"
	assert_success
	RL_OUT=$RT_STDOUT
	pid=$(as_user "$RL_BIN/runtime" --root "$ROOT" state "$id" | jq -r .pid)
	ip link add "$veth" netns "$RL_NET" type veth peer name "${veth}c" netns "/proc/$pid/ns/net"
	ip -n "$RL_NET" link set "$veth" up
	ip -n "$RL_NET" route replace 198.19.65.2/32 dev "$veth"
	nsenter -t "$pid" -n ip addr add 198.19.65.2/24 dev "${veth}c"
	nsenter -t "$pid" -n ip link set "${veth}c" up
	rl "$@" start "$id"
	assert_success
	local i
	for ((i = 0; i < 500; i++)); do
		[ "$(as_user "$RL_BIN/runtime" --root "$ROOT" state "$id" | jq -r .status)" = stopped ] && return 0
		sleep 0.02
	done
	fail "$id did not stop"
}

@test "rootless: the firewall in the container's own network namespace: an allowed address:port answers, another port does not" {
	requires agentbox
	RL_NET=abrl-rln$$-${TEST_DIR##*.}
	ip netns add "$RL_NET"
	defer ip netns delete "$RL_NET"
	ip -n "$RL_NET" link set lo up
	local www=$TEST_DIR/www p
	mkdir -p "$www"
	echo hello-rootless >"$www/index.html"
	set_args sh -c 'for p in 8080 8081; do printf "GET / HTTP/1.0\r\n\r\n" | nc -w 2 198.19.65.1 $p | tail -1; echo "port $p done"; done'
	# the servers: 198.19.65.1 is on our netns' lo, and its end of each veth
	# answers for it
	ip -n "$RL_NET" addr add 198.19.65.1/32 dev lo
	for p in 8080 8081; do
		ip netns exec "$RL_NET" busybox httpd -f -p "198.19.65.1:$p" -h "$www" </dev/null >/dev/null 2>&1 3>&- &
		defer kill $!
	done
	# unprotected, both ports answer
	RL_ARGS=(--egress-allow all)
	rl_wired_run open
	[ "$(grep -c hello-rootless "$RL_OUT")" = 2 ] || fail "the servers do not answer an open container: $(cat "$RL_OUT")"
	# policed: the allowed port answers, the other is dropped
	RL_ARGS=(--egress-allow 198.19.65.1:8080)
	rl_wired_run policed
	grep -q hello-rootless "$RL_OUT" || fail "the allowed port does not answer: $(cat "$RL_OUT")"
	[ "$(grep -c hello-rootless "$RL_OUT")" = 1 ] || fail "the other port answered: $(cat "$RL_OUT")"
	# the refused attempt is logged, and the user reads it
	rl egress log policed
	assert_success
	assert_output_matches '198\.19\.65\.1.*8081|8081.*198\.19\.65\.1'
	# and its durable log is the user's, in the user's state directory
	local dl=$RL_HOME/.local/state/agentbox/log/policed/egress.log
	[ "$(stat -c '%U %a' "$dl")" = "$RL_USER 600" ] || fail "$(ls -l "$dl")"
	grep -q 8081 "$dl"
}

@test "rootless: the owning user allows a port of a running container at once (egress allow), within the runtime's allowlist" {
	requires agentbox
	RL_NET=abrl-live$$-${TEST_DIR##*.}
	ip netns add "$RL_NET"
	defer ip netns delete "$RL_NET"
	ip -n "$RL_NET" link set lo up
	ip -n "$RL_NET" addr add 198.18.40.1/32 dev lo
	local www=$TEST_DIR/www veth=abrl-lv$$
	mkdir -p "$www"
	echo hello-live >"$www/index.html"
	ip netns exec "$RL_NET" busybox httpd -f -p 198.18.40.1:8081 -h "$www" </dev/null >/dev/null 2>&1 3>&- &
	defer kill $!
	# it tries port 8081 until it gets the page
	set_args sh -c 'until printf "GET / HTTP/1.0\r\n\r\n" | nc -w 1 198.18.40.1 8081 | grep hello; do sleep 0.2; done'
	update_config '.annotations["agentbox.egress.allow"] = "198.18.40.1:8080"'
	RL_ARGS=(--egress-allow 198.18.40.0/24)
	rl create live
	assert_success
	local out=$RT_STDOUT pid
	pid=$(as_user "$RL_BIN/runtime" --root "$ROOT" state live | jq -r .pid)
	ip link add "$veth" netns "$RL_NET" type veth peer name "${veth}c" netns "/proc/$pid/ns/net"
	ip -n "$RL_NET" link set "$veth" up
	ip -n "$RL_NET" route replace 198.18.40.2/32 dev "$veth"
	nsenter -t "$pid" -n ip addr add 198.18.40.2/24 dev "${veth}c"
	nsenter -t "$pid" -n ip link set "${veth}c" up
	rl start live
	assert_success
	sleep 1
	[ "$(as_user "$RL_BIN/runtime" --root "$ROOT" state live | jq -r .status)" = running ] ||
		fail "got through before the allow"
	# beyond the runtime's allowlist: refused
	rl egress allow live 198.18.41.1:8081
	assert_failure 1
	assert_one_error_line 'not within the runtime.s allowlist'
	rl egress allow live 198.18.40.1:8081
	assert_success
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(as_user "$RL_BIN/runtime" --root "$ROOT" state live | jq -r .status)" = stopped ] && break
		sleep 0.1
	done
	grep -q hello-live "$out" || fail "no page after the allow"
	rl egress log live
	assert_output_contains "policy allow 198.18.40.1:8081"
}
