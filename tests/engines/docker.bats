#!/usr/bin/env bats
# Docker (dockerd 20.10 + containerd 1.6 shim) driving agentbox, end to end.
#
# A private dockerd and containerd (engines-up.sh) with the runtimes
#   agentbox          the defaults: agent seccomp profile, default-deny egress
#   agentbox-open     --egress-allow 198.18.0.0/15,*.abnet.test (the test networks)
#   agentbox-relaxed  --seccomp-profile default
#   agentbox-dns      --egress-allow split.test,daemon.test (and their addresses
#                     as internal ones)
# and the image agentbox-test:latest (busybox-static + abtest). daemon.json's
# dns is $DOCKER_DAEMON_DNS, a resolver that alone knows daemon.test; another,
# $DOCKER_DNS, alone knows split.test (both: other.test), behind the host.
# Where it is cheap, a test runs the same thing under runc and compares.

load helpers

setup_file() {
	engines_setup_file docker
}

teardown_file() {
	engines_teardown_file
}

setup() {
	require_engine docker
	IMG=$TEST_IMAGE
}

teardown() {
	[ -n "${DOCKER_HOST:-}" ] || return 0
	local ids
	ids=$(dk ps -aq 2>/dev/null) || true
	[ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
	for n in ${NETWORKS:-}; do
		dk network rm "$n" >/dev/null 2>&1 || true
	done
}

# The container's full id, cgroupsPath (cgroupfs driver) and the state root
# the shim gives the runtime.
cid() { dk inspect -f '{{.Id}}' "$1"; }
cgpath() { echo "/docker/$(cid "$1")"; }
rt_root() { echo "$DOCKER_EXEC_ROOT/runtime-runc/moby"; }

@test "docker: the agentbox runtimes are registered" {
	run dk info --format '{{json .Runtimes}}'
	assert_success
	assert_output_contains '"agentbox"'
	assert_output_contains '"agentbox-open"'
	assert_output_contains "$AGENTBOX"
}

@test "docker run --rm: output and exit code, like runc" {
	local rt out=() st=()
	for rt in agentbox runc; do
		# stdout and stderr are separate streams: compare them apart
		run --separate-stderr dk run --rm --runtime=$rt "$IMG" sh -c 'echo out; echo err >&2; exit 3'
		out+=("stdout=$output stderr=$stderr")
		st+=("$status")
	done
	[ "${out[0]}" = "stdout=out stderr=err" ] || fail "agentbox: ${out[0]}"
	[ "${st[0]}" -eq 3 ] || fail "agentbox: exit ${st[0]}, want 3: ${out[0]}"
	same_as_runc "exit status" "${st[0]}" "${st[1]}"
	same_as_runc "output" "${out[0]}" "${out[1]}"
	# stdin goes through (-i)
	run bash -c "echo piped | timeout 60 $DOCKER run --rm -i --runtime=agentbox $IMG cat"
	assert_success
	[ "$output" = piped ] || fail "stdin not passed through: $output"
}

@test "docker run -d, then exec: output and exit code" {
	run dk run -d --name abt-exec --runtime=agentbox "$IMG" sleep 1000
	assert_success
	run dk exec abt-exec sh -c 'echo inside; exit 5'
	assert_status 5
	[ "$output" = inside ] || fail "exec output: $output"
	run dk exec -u 1000:1000 -w /tmp -e FOO=bar abt-exec sh -c 'abtest id; pwd; echo $FOO'
	assert_success
	assert_output_contains "uid=1000 gid=1000"
	assert_output_contains "/tmp"
	assert_output_contains "bar"
	# a missing program is the engine's usual 126/127-style error, like runc
	run dk exec abt-exec /no/such/program
	[ "$status" -ne 0 ] || fail "exec of a missing program succeeded"
}

@test "docker run -u 1000:1000: a non-root user through create + start (only a bounding set), like runc" {
	local rt res=()
	for rt in agentbox runc; do
		run dk run --rm -u 1000:1000 --runtime=$rt "$IMG" sh -c 'id -u; id -g; echo via-dev-stdout >/dev/stdout; grep ^CapEff /proc/self/status'
		assert_success
		res+=("$output")
	done
	[[ "${res[0]}" == $'1000\n1000\nvia-dev-stdout\nCapEff:'* ]] || fail "agentbox: ${res[0]}"
	same_as_runc "-u 1000:1000" "${res[0]}" "${res[1]}"
	# detached, with a terminal, then exec as another user
	run dk run -d -t -u 1000:1000 --name abt-user --runtime=agentbox "$IMG" sleep 1000
	assert_success
	run dk exec abt-user sh -c 'id -u; stat -L -c %u /proc/1/fd/0'
	assert_success
	[ "$(strip_cr <<<"$output")" = $'1000\n1000' ] || fail "exec as the container's user: $output"
	run dk exec -u 2000:3000 abt-user sh -c 'id -u; id -g'
	[ "$output" = $'2000\n3000' ] || fail "exec -u: $output"
}

@test "docker: an image whose config says USER 1000: run and exec as that user, like runc" {
	if ! dk image inspect "$IMG-user1000" >/dev/null 2>&1; then
		tar -C "$ENGINES_DIR/rootfs" -c . | dk import -c 'USER 1000:1000' -c 'CMD ["/bin/sh"]' - "$IMG-user1000" >/dev/null ||
			fail "docker import with USER 1000"
	fi
	local rt res=()
	for rt in agentbox runc; do
		run dk run --rm --runtime=$rt "$IMG-user1000" sh -c 'id -u; id -g; cd /tmp && echo ok >f && cat f'
		assert_success
		res+=("$output")
	done
	[ "${res[0]}" = $'1000\n1000\nok' ] || fail "agentbox: ${res[0]}"
	same_as_runc "USER 1000" "${res[0]}" "${res[1]}"
	run dk run -d --name abt-imguser --runtime=agentbox "$IMG-user1000" sleep 1000
	assert_success
	run dk exec abt-imguser id -u
	[ "$output" = 1000 ] || fail "exec: $output"
}

@test "docker exec -it: a terminal, and its exit code" {
	dk run -d --name abt-tty --runtime=agentbox "$IMG" sleep 1000 >/dev/null
	run in_tty "$DOCKER" exec -it abt-tty sh -c 'tty; abtest isatty 0; abtest isatty 1; exit 6'
	assert_status 6
	output=$(strip_cr <<<"$output")
	assert_output_matches '/dev/pts/[0-9]+'
	[ "$(grep -c 'yes$' <<<"$output")" -eq 2 ] || fail "stdin/stdout are not a tty: $output"
	# without -t: no terminal
	run dk exec abt-tty abtest isatty 0
	assert_status 1
}

@test "docker run -it: a terminal, and its exit code, like runc" {
	local rt
	for rt in agentbox runc; do
		run in_tty "$DOCKER" run --rm -it --runtime=$rt "$IMG" sh -c 'tty; abtest isatty 1; exit 4'
		assert_status 4
		output=$(strip_cr <<<"$output")
		assert_output_matches '/dev/pts/[0-9]+'
		assert_output_contains yes
	done
}

@test "docker logs: stdout and stderr of a detached container" {
	dk run -d --name abt-logs --runtime=agentbox "$IMG" sh -c 'echo line-out; echo line-err >&2; sleep 1000' >/dev/null
	retry 10 bash -c "timeout 20 $DOCKER logs abt-logs 2>&1 | grep -q line-err"
	run dk logs abt-logs
	assert_success
	assert_output_contains line-out
	assert_output_contains line-err
}

@test "docker top: the container's processes (runtime ps --format json)" {
	dk run -d --name abt-top --runtime=agentbox "$IMG" sh -c 'sleep 1001 & sleep 1002' >/dev/null
	retry 10 bash -c "timeout 20 $DOCKER top abt-top | grep -q 'sleep 1002'"
	run dk top abt-top
	assert_success
	assert_output_contains "sleep 1001"
	assert_output_contains "sleep 1002"
	# host pids, as the shim expects: each one is in the container's cgroup
	local pids p
	pids=$(pids_of_cgroup "$(cgpath abt-top)")
	for p in $(dk top abt-top -o pid | tail -n +2); do
		grep -qx "$p" <<<"$pids" || fail "docker top pid $p is not in the container's cgroup ($pids)"
	done
}

@test "docker stats --no-stream: memory and pids of the container" {
	dk run -d --name abt-stats --runtime=agentbox "$IMG" sh -c 'sleep 1001 & sleep 1002' >/dev/null
	run dk stats --no-stream --format '{{.MemUsage}} pids={{.PIDs}}' abt-stats
	assert_success
	assert_output_matches 'pids=[1-9]'
	[[ "$output" != "0B /"* ]] || fail "no memory usage reported: $output"
}

@test "docker pause / unpause: frozen and thawed, like runc" {
	local rt
	for rt in agentbox runc; do
		dk run -d --name abt-pause-$rt --runtime=$rt "$IMG" \
			sh -c 'i=0; while true; do i=$((i+1)); echo $i >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.05; done' >/dev/null
		retry 10 dk exec abt-pause-$rt test -s /tmp/n
		run dk pause abt-pause-$rt
		assert_success
		[ "$(dk inspect -f '{{.State.Status}}' abt-pause-$rt)" = paused ]
		local f
		f=$(cgroup_v1_file freezer "$(cgpath abt-pause-$rt)" freezer.state)
		[ -z "$f" ] || [ "$(cat "$f")" = FROZEN ] || fail "$rt: freezer.state is $(cat "$f")"
		run dk unpause abt-pause-$rt
		assert_success
		[ "$(dk inspect -f '{{.State.Status}}' abt-pause-$rt)" = running ]
		# it goes on counting
		local a b
		a=$(dk exec abt-pause-$rt cat /tmp/n)
		sleep 0.3
		b=$(dk exec abt-pause-$rt cat /tmp/n)
		[ "$b" -gt "$a" ] || fail "$rt: not running after unpause ($a -> $b)"
	done
}

@test "docker update --memory --cpus --pids-limit: the host's cgroup files, like runc" {
	local rt vals=()
	for rt in agentbox runc; do
		dk run -d --name abt-upd-$rt --runtime=$rt "$IMG" sleep 1000 >/dev/null
		run dk update --memory 64m --memory-swap 128m --cpus 0.5 --pids-limit 50 abt-upd-$rt
		assert_success
		local cg
		cg=$(cgpath abt-upd-$rt)
		local mem cpu pids
		mem=$(cat "$(cgroup_v1_file memory "$cg" memory.limit_in_bytes)")
		cpu=$(cat "$(cgroup_v1_file cpu "$cg" cpu.cfs_quota_us)")/$(cat "$(cgroup_v1_file cpu "$cg" cpu.cfs_period_us)")
		pids=$(cat "$(cgroup_v1_file pids "$cg" pids.max)")
		[ "$mem" = 67108864 ] || fail "$rt: memory.limit_in_bytes=$mem"
		[ "$cpu" = 50000/100000 ] || fail "$rt: cpu quota/period=$cpu"
		[ "$pids" = 50 ] || fail "$rt: pids.max=$pids"
		vals+=("$mem $cpu $pids")
		# and docker sees it
		[ "$(dk inspect -f '{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}} {{.HostConfig.PidsLimit}}' abt-upd-$rt)" = \
			"67108864 500000000 50" ]
	done
	same_as_runc "cgroup values" "${vals[0]}" "${vals[1]}"
}

@test "docker kill -s USR1: the container's trap runs" {
	dk run -d --name abt-usr1 --runtime=agentbox "$IMG" \
		sh -c 'trap "echo got-usr1" USR1; echo ready; while true; do sleep 0.1; done' >/dev/null
	retry 10 bash -c "timeout 20 $DOCKER logs abt-usr1 | grep -q ready"
	run dk kill -s USR1 abt-usr1
	assert_success
	retry 10 bash -c "timeout 20 $DOCKER logs abt-usr1 | grep -q got-usr1"
	[ "$(dk inspect -f '{{.State.Status}}' abt-usr1)" = running ]
}

@test "docker stop: SIGTERM handled; SIGKILL after the timeout, like runc" {
	local rt codes=()
	for rt in agentbox runc; do
		dk run -d --name abt-stop-$rt --runtime=$rt "$IMG" \
			sh -c 'trap "exit 42" TERM; while true; do sleep 0.1; done' >/dev/null
		run dk stop -t 10 abt-stop-$rt
		assert_success
		codes+=("$(dk inspect -f '{{.State.ExitCode}}' abt-stop-$rt)")
		# pid 1 without a TERM handler ignores it: killed after -t
		dk run -d --name abt-stop2-$rt --runtime=$rt "$IMG" sleep 1000 >/dev/null
		run dk stop -t 1 abt-stop2-$rt
		assert_success
		codes+=("$(dk inspect -f '{{.State.ExitCode}}' abt-stop2-$rt)")
	done
	[ "${codes[0]} ${codes[1]}" = "42 137" ] || fail "agentbox exit codes: ${codes[0]} ${codes[1]}"
	same_as_runc "exit codes" "${codes[0]} ${codes[1]}" "${codes[2]} ${codes[3]}"
}

@test "docker restart: a new init, running again" {
	dk run -d --name abt-restart --runtime=agentbox "$IMG" \
		sh -c 'trap "exit 0" TERM; while true; do sleep 0.1; done' >/dev/null
	local pid1 pid2 merged
	pid1=$(dk inspect -f '{{.State.Pid}}' abt-restart)
	merged=$(dk inspect -f '{{.GraphDriver.Data.MergedDir}}' abt-restart)
	run dk restart -t 5 abt-restart
	# (once, on a fresh machine: 'exec: "sh": executable file not found': the
	# root file system dockerd mounts was not there; agentbox now says so)
	[ "$status" -eq 0 ] || fail "docker restart: $output
		rootfs $merged: mounted $(grep -c " ${merged:-/nonexistent} " /proc/self/mountinfo) times
		dockerd: $(tail -n 20 "$ENGINES_DIR/dockerd.log" 2>/dev/null)"
	[ "$(dk inspect -f '{{.State.Status}}' abt-restart)" = running ]
	pid2=$(dk inspect -f '{{.State.Pid}}' abt-restart)
	[ "$pid1" != "$pid2" ] || fail "same pid after restart: $pid1"
	run dk exec abt-restart echo alive
	assert_success
	# and --restart on-failure restarts it by itself
	dk run -d --name abt-onfail --restart on-failure:2 --runtime=agentbox "$IMG" sh -c 'sleep 0.2; exit 1' >/dev/null
	retry 20 bash -c "[ \$(timeout 20 $DOCKER inspect -f '{{.RestartCount}}' abt-onfail) -ge 2 ]"
}

@test "docker restart after a kit run beside it (slirp4netns' sandbox): the root file system is still mounted" {
	command -v slirp4netns >/dev/null || skip "needs slirp4netns"
	# slirp4netns' sandbox, started as root, detaches its old root with the
	# shared mounts below "/" still peers of the host's: Docker's data root
	# is one, and the container's root file system goes on the host. The
	# next create finds it empty: exec: "sleep": not found, for runc as for
	# agentbox (the restart that failed once in a fresh-machine run). Here
	# that unmount alone, from a mount namespace of peers (slirp4netns' own
	# would take every peer of the machine with it, /run/netns' pins too).
	local merged
	dk run -d --name abt-rootfs --runtime=agentbox "$IMG" sleep 1000 >/dev/null
	merged=$(dk inspect -f '{{.GraphDriver.Data.MergedDir}}' abt-rootfs)
	mountpoint -q "$merged" || fail "the root file system is not mounted: $merged"
	unshare --mount --propagation unchanged umount -l "$merged"
	! mountpoint -q "$merged" || fail "still mounted on the host: this check proves nothing here"
	run dk restart -t 1 abt-rootfs
	assert_output_contains 'exec: "sleep": executable file not found'
	dk rm -f abt-rootfs >/dev/null 2>&1 || true
	# kit run gives its slirp4netns a mount namespace whose mounts are slaves
	dk run -d --name abt-rootfs --runtime=agentbox "$IMG" sleep 1000 >/dev/null
	merged=$(dk inspect -f '{{.GraphDriver.Data.MergedDir}}' abt-rootfs)
	# (its durable log in the engines' dir, not /var/log/agentbox: a test build's hook)
	AGENTBOX_LOG_DIR=$ENGINES_DIR/kit-logs \
		run "$AGENTBOX" --root "$ENGINES_DIR/kit-root" kit run --allow "$DOCKER_DNS:53" "$REPO_ROOT/kits/demo.yaml" -- \
		sh -c 'grep -q tap0 /proc/net/dev && echo with-slirp'
	assert_success
	assert_output_contains with-slirp
	mountpoint -q "$merged" || fail "kit run's slirp4netns unmounted the container's root file system"
	run dk restart -t 1 abt-rootfs
	assert_success
	run dk exec abt-rootfs echo alive
	assert_output_contains alive
}

@test "docker rm -f: a running container is gone, nothing left behind" {
	dk run -d --name abt-rm --runtime=agentbox "$IMG" sh -c 'sleep 1001 & sleep 1002' >/dev/null
	local id cg pids
	id=$(cid abt-rm)
	cg=$(cgpath abt-rm)
	pids=$(pids_of_cgroup "$cg")
	[ -n "$pids" ] || fail "no pids in $cg"
	"$AGENTBOX" --root "$(rt_root)" state "$id" >/dev/null || fail "agentbox has no state for $id"
	run dk rm -f abt-rm
	assert_success
	run dk inspect abt-rm
	[ "$status" -ne 0 ]
	local p
	for p in $pids; do
		retry 5 bash -c "[ ! -d /proc/$p ] || grep -q '^State:.*Z' /proc/$p/status" || fail "pid $p survived rm -f"
	done
	runtime_state_gone "$(rt_root)" "$id"
	retry 5 no_cgroup_left "$cg"
}

@test "docker commit: the container's changes become an image" {
	dk run -d --name abt-commit --runtime=agentbox "$IMG" sh -c 'echo committed >/marker; sleep 1000' >/dev/null
	retry 10 dk exec abt-commit test -e /marker
	run dk commit abt-commit abt-committed:1
	assert_success
	# commit pauses and resumes the container through the runtime
	[ "$(dk inspect -f '{{.State.Status}}' abt-commit)" = running ]
	run dk run --rm --runtime=agentbox abt-committed:1 cat /marker
	dk rmi -f abt-committed:1 >/dev/null 2>&1 || true
	assert_success
	[ "$output" = committed ]
}

@test "docker run --init: docker-init is pid 1 and reaps, like runc" {
	local rt
	for rt in agentbox runc; do
		run dk run --rm --init --runtime=$rt "$IMG" sh -c 'tr "\0" " " </proc/1/cmdline; echo; abtest pidns'
		assert_success
		assert_output_contains "docker-init -- sh"
		assert_output_matches 'pid=[2-9]'
	done
}

@test "docker run --read-only: the root is read-only, --tmpfs is not, like runc" {
	local rt res=()
	for rt in agentbox runc; do
		run dk run --rm --read-only --tmpfs /scratch --runtime=$rt "$IMG" \
			sh -c 'abtest write /x data; abtest write /scratch/x data; abtest write /tmp/x data'
		res+=("$output")
	done
	[ "${res[0]}" = $'EROFS\nok\nEROFS' ] || fail "agentbox: ${res[0]}"
	same_as_runc "writes" "${res[0]}" "${res[1]}"
}

@test "docker run --cap-drop ALL: no capabilities, like runc" {
	local rt caps=()
	for rt in agentbox runc; do
		run dk run --rm --cap-drop ALL --runtime=$rt "$IMG" abtest caps
		assert_success
		caps+=("$(grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' <<<"$output")")
		# root without caps cannot chown a file it does not own... nor read /root of another uid
		run dk run --rm --cap-drop ALL --runtime=$rt "$IMG" sh -c 'touch /tmp/f && chown 1000 /tmp/f && chown 0 /tmp/f'
		[ "$status" -ne 0 ] || fail "$rt: chown back to root worked without CAP_CHOWN"
	done
	[ "$(awk '{ print $2 }' <<<"${caps[0]}" | sort -u)" = 0000000000000000 ] ||
		fail "agentbox left capabilities: ${caps[0]}"
	same_as_runc "capabilities" "${caps[0]}" "${caps[1]}"
}

@test "docker run --security-opt no-new-privileges (agentbox forces it anyway)" {
	run dk run --rm --security-opt no-new-privileges --runtime=agentbox "$IMG" abtest caps
	assert_success
	assert_output_contains $'NoNewPrivs:\t1'
	run dk run --rm --security-opt no-new-privileges --runtime=runc "$IMG" abtest caps
	assert_output_contains $'NoNewPrivs:\t1'
	# the floor: agentbox sets it even when docker does not ask
	run dk run --rm --runtime=agentbox "$IMG" abtest caps
	assert_output_contains $'NoNewPrivs:\t1'
	# and CAP_NET_RAW is dropped while the egress firewall is on (bit 13)
	local eff
	eff=$(awk '/^CapEff/ { print $2 }' <<<"$output")
	(( (0x$eff & 0x2000) == 0 )) || fail "CAP_NET_RAW kept: CapEff=$eff"
}

@test "docker run --memory: the OOM killer, exit 137 and OOMKilled, like runc" {
	local rt res=()
	for rt in agentbox runc; do
		run dk run --name abt-oom-$rt --memory 32m --memory-swap 32m --runtime=$rt "$IMG" \
			sh -c 'x=a; while true; do x=$x$x; done'
		res+=("$status $(dk inspect -f '{{.State.OOMKilled}}' abt-oom-$rt)")
	done
	[ "${res[0]}" = "137 true" ] || fail "agentbox: ${res[0]}"
	same_as_runc "exit status and OOMKilled" "${res[0]}" "${res[1]}"
}

@test "docker run --pids-limit: a fork bomb is contained, like runc" {
	local rt res=()
	for rt in agentbox runc; do
		run dk run --rm --pids-limit 20 --runtime=$rt "$IMG" abtest forkbomb 200
		assert_success
		res+=("$output")
	done
	[[ "${res[0]}" =~ ^forked=1[0-9]\ error=EAGAIN$ ]] || fail "agentbox: ${res[0]}"
	same_as_runc "fork bomb" "${res[0]}" "${res[1]}"
}

@test "docker run --network none: loopback only, like runc" {
	local rt res=()
	for rt in agentbox runc; do
		run dk run --rm --network none --runtime=$rt "$IMG" sh -c 'ls /sys/class/net; ip -o -4 addr'
		assert_success
		res+=("$output")
	done
	[ "$(head -1 <<<"${res[0]}")" = lo ] && [ "$(grep -c . <<<"${res[0]}")" = 2 ] || fail "agentbox: ${res[0]}"
	same_as_runc "interfaces" "${res[0]}" "${res[1]}"
}

@test "docker default bridge: the prestart hook wires eth0; egress is denied by default" {
	# a server on the default bridge (198.18.0.0/24 on abdock0)
	dk run -d --name abt-web --runtime=runc "$IMG" \
		sh -c 'mkdir /www; echo hello-bridge >/www/index.html; exec httpd -f -p 8080 -h /www' >/dev/null
	local ip
	ip=$(dk inspect -f '{{.NetworkSettings.IPAddress}}' abt-web)
	[[ "$ip" == 198.18.0.* ]] || fail "server address $ip"
	run dk run --rm --runtime=agentbox "$IMG" sh -c 'ip -o -4 addr show eth0; ip route'
	assert_success
	assert_output_matches 'inet 198\.18\.0\.[0-9]+/24'
	assert_output_contains "default via 198.18.0.1"
	# the server answers runc and agentbox-open, not the default-deny agentbox
	run dk run --rm --runtime=runc "$IMG" timeout 10 wget -qO- "http://$ip:8080/"
	assert_output_contains hello-bridge
	run dk run --rm --runtime=agentbox-open "$IMG" timeout 10 wget -qO- "http://$ip:8080/"
	assert_output_contains hello-bridge
	run dk run --rm --runtime=agentbox "$IMG" sh -c "timeout 3 wget -qO- http://$ip:8080/ 2>&1; echo wget=\$?"
	refute_output_contains hello-bridge
	refute_output_contains "wget=0"
}

@test "docker user-defined network: by name with agentbox-open, blocked by default-deny" {
	NETWORKS=abnet.test
	run dk network create --subnet 198.18.1.0/24 abnet.test
	assert_success
	# a web server on the network (agentbox too: it only accepts, no egress needed)
	dk run -d --name srv --network abnet.test --runtime=agentbox "$IMG" \
		sh -c 'mkdir /www; echo hello-from-srv >/www/index.html; exec httpd -f -p 8080 -h /www' >/dev/null
	local rt
	# runc, and agentbox-open (allows 198.18.0.0/15 and *.abnet.test): by name
	for rt in runc agentbox-open; do
		run dk run --rm --network abnet.test --runtime=$rt "$IMG" \
			sh -c 'timeout 10 wget -qO- http://srv.abnet.test:8080/ 2>&1; timeout 10 wget -qO- http://srv:8080/ 2>&1'
		[[ "$output" == hello-from-srv* ]] || fail "$rt: srv.abnet.test unreachable: $output"
		if [ $rt = runc ]; then
			# the short name works with runc; agentbox's sentry refuses names
			# outside the allowlist, "srv" included (by design)
			[ "$(grep -c hello-from-srv <<<"$output")" = 2 ] || fail "runc: $output"
		fi
	done
	# two agentbox-open containers talk to each other by address too
	local ip
	ip=$(dk inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' srv)
	run dk run --rm --network abnet.test --runtime=agentbox-open "$IMG" timeout 10 wget -qO- "http://$ip:8080/"
	assert_output_contains hello-from-srv
	# the default runtime allows nothing: DNS refused, the address dropped
	run dk run --rm --network abnet.test --runtime=agentbox "$IMG" \
		sh -c "timeout 10 nslookup srv.abnet.test 2>&1; echo ns=\$?; timeout 3 wget -qO- http://$ip:8080/ 2>&1; echo wget=\$?"
	assert_output_contains "NXDOMAIN"
	assert_output_contains "ns=1"
	refute_output_contains hello-from-srv
	refute_output_contains "wget=0"
}

@test "docker run --rm: the deny log is read after the container and its state are gone" {
	NETWORKS=abdeny.test
	run dk network create --subnet 198.18.40.0/24 abdeny.test
	assert_success
	dk run -d --name abt-denyweb --network abdeny.test --runtime=runc "$IMG" \
		sh -c 'mkdir /www; echo hello-deny >/www/index.html; exec httpd -f -p 8080 -h /www' >/dev/null
	local ip cid
	ip=$(dk inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' abt-denyweb)
	[[ "$ip" == 198.18.40.* ]] || fail "server address $ip"
	# the host answers when nothing stands in the way
	run dk run --rm --network abdeny.test --runtime=runc "$IMG" timeout 10 wget -qO- "http://$ip:8080/"
	assert_output_contains hello-deny
	rm -f "$ENGINES_DIR/deny.cid"
	run dk run --rm --cidfile "$ENGINES_DIR/deny.cid" --network abdeny.test --runtime=agentbox "$IMG" \
		sh -c "timeout 3 wget -qO- http://$ip:8080/ 2>&1; echo wget=\$?"
	refute_output_contains hello-deny
	refute_output_contains "wget=0"
	cid=$(cat "$ENGINES_DIR/deny.cid")
	[[ $cid =~ ^[0-9a-f]{64}$ ]] || fail "container id $cid"
	# the shim deletes the state once the container exited
	local i
	for ((i = 0; i < 100; i++)); do
		[ -e "$(rt_root)/$cid" ] || break
		sleep 0.1
	done
	[ ! -e "$(rt_root)/$cid" ] || fail "the shim left the state"
	run dk inspect "$cid"
	assert_status 1
	run "$AGENTBOX" egress log "$cid"
	rm -rf "/var/log/agentbox/$cid"
	assert_success
	assert_output_contains "$ip:8080"
	assert_output_contains not-allowed
}

@test "docker --network container:X: the joiner shares X's firewall; X keeps its DNS" {
	dk run -d --name abt-owner --runtime=agentbox "$IMG" sleep 1000 >/dev/null
	run dk run --rm --network container:abt-owner --runtime=agentbox "$IMG" sh -c 'ls /sys/class/net | tr "\n" " "; timeout 5 nslookup x.test 2>&1; true'
	assert_success
	assert_output_contains eth0
	assert_output_contains NXDOMAIN
	run dk exec abt-owner sh -c 'timeout 5 nslookup x.test 2>&1; true'
	assert_output_contains NXDOMAIN
	local pid
	pid=$(dk inspect -f '{{.State.Pid}}' abt-owner)
	run nsenter -t "$pid" -n nft list table inet agentbox
	assert_success
	# the owner's ruleset: its table names the owner, or the pool token its
	# state records (a ruleset made ahead of time in a pooled namespace)
	local owner token
	owner=$(cid abt-owner)
	token=$(jq -r '.egressToken // empty' "$(rt_root)/$owner/state.json")
	assert_output_contains "comment \"agentbox egress ${token:+@}${token:-$owner}\""
}

@test "docker healthcheck: the container becomes healthy (health exec)" {
	dk run -d --name abt-health --runtime=agentbox --health-cmd 'test -e /tmp/ready' \
		--health-interval 1s --health-retries 30 "$IMG" \
		sh -c 'sleep 1; touch /tmp/ready; exec sleep 1000' >/dev/null
	retry 30 bash -c "[ \$(timeout 20 $DOCKER inspect -f '{{.State.Health.Status}}' abt-health) = healthy ]"
	[ "$(dk inspect -f '{{.State.Health.Status}}' abt-health)" = healthy ]
}

@test "docker: an error from the runtime reaches the user (the last log.json error)" {
	# a missing program fails at start; docker shows the runtime's message
	run dk run --rm --runtime=agentbox "$IMG" /no/such/program
	[ "$status" -ne 0 ]
	assert_output_contains "/no/such/program"
	# the floor refuses a privileged container, and says so
	run dk run --rm --runtime=agentbox --cap-add SYS_ADMIN "$IMG" true
	[ "$status" -ne 0 ]
	assert_output_contains "floor: privileged containers are refused"
}

@test "docker user-defined network with --dns, and with daemon.json's dns: a name only that resolver knows resolves, like runc; others are refused; a forward back into the box fails at once" {
	NETWORKS=abdns.test
	run dk network create --subnet 198.18.47.0/26 abdns.test
	assert_success
	# Docker's resolver (127.0.0.11) forwards names it does not serve to the
	# container's --dns, or to daemon.json's dns, from the container's netns
	local check='cat /etc/resolv.conf; timeout 10 nslookup -type=a NAME 2>&1 | tail -n 2; timeout 5 wget -qO- http://NAME:8080/ 2>&1;
		timeout 5 nslookup -type=a other.test 2>&1 | tail -n 2; timeout 5 wget -qO- http://198.18.47.165:8080/ 2>&1; echo wget=$?'
	local rt name out dnsarg
	for name in split.test daemon.test; do
		dnsarg=()
		[ $name = split.test ] && dnsarg=(--dns "$DOCKER_DNS")
		for rt in runc agentbox-dns; do
			out=$(dk run --rm --runtime=$rt --network abdns.test "${dnsarg[@]}" "$IMG" sh -c "${check//NAME/$name}" 2>&1) ||
				true
			[[ "$out" == *"nameserver 127.0.0.11"* ]] || fail "$rt, $name: not Docker's resolver: $out"
			[[ "$out" == *"Address: 198.18.47.164"* ]] || fail "$rt, $name: did not resolve: $out"
			[[ "$out" == *hello-split* ]] || fail "$rt, $name: does not answer: $out"
			if [ $rt = runc ]; then
				[[ "$out" == *hello-other* ]] || fail "runc, $name: other.test does not answer: $out"
			else
				[[ "$out" == *"can't find other.test: NXDOMAIN"* ]] || fail "$rt, $name: other.test was not refused: $out"
				[[ "$out" != *hello-other* && "$out" != *wget=0* ]] || fail "$rt, $name: reached other.test: $out"
			fi
		done
	done
	# a resolver that is the box itself, its own address or 127.0.0.11
	# (Docker's resolver again): runc's lookup times out, the sentry answers
	# at once (a server failure) instead of asking the box again
	local arg
	for arg in "--ip 198.18.47.50 --dns 198.18.47.50" "--dns 127.0.0.11"; do
		# shellcheck disable=SC2086
		run dk run --rm --runtime=agentbox-dns --network abdns.test $arg "$IMG" \
			sh -c 'timeout 10 nslookup -type=a split.test 2>&1 | tail -n 2'
		assert_output_contains "can't find split.test: SERVFAIL"
	done
}
