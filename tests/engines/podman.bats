#!/usr/bin/env bats
# Podman 4.3 + conmon driving agentbox (rootful, cgroupfs), end to end.
#
# Podman as it ships: Debian's stock /usr/share/containers/containers.conf (its
# default_sysctls included) plus only the documented additions, in a drop-in
# engines-up.sh writes to /etc/containers/containers.conf.d: agentbox in
# [engine.runtimes], runtime_supports_json and runtime_supports_nocgroup, and
# this machine kind's rlimits and init. Storage, run and tmp dirs are private
# (PODMAN_OPTS). Each test pins the network backend it means: podman 4 picks
# netavark wherever it is installed (Debian's podman with its recommended
# packages), CNI elsewhere.
#   - CNI (pm, pa, pr): the default network "podman" is a CNI bridge abpod0 on
#     198.19.88.0/24.
#   - netavark (pmn, pna, pnr): engine podman-netavark, a "podman host" of its
#     own (engines-up.sh) with netavark's iptables, aardvark-dns and a host
#     resolver (198.18.47.180: split.test -> .181, other.test -> .182, web
#     servers there on 8080); its default network is 198.18.47.64/26.
# conmon never passes --root: the runtime keeps its state in its default
# /run/agentbox.

load helpers

setup_file() {
	engines_setup_file podman podman-netavark
}

teardown_file() {
	engines_teardown_file
}

setup() {
	require_engine podman
	IMG=localhost/$TEST_IMAGE
}

teardown() {
	[ -n "${PODMAN_ROOT:-}" ] || return 0
	pm rm -af -t 0 >/dev/null 2>&1 || true
	if [ -n "${PODMAN_NETAVARK_OK:-}" ]; then
		pmn rm -af -t 0 >/dev/null 2>&1 || true
		pmn network rm -f abnv >/dev/null 2>&1 || true
	fi
}

# podman with agentbox (pa) or runc (pr) as the runtime; pna, pnr: the same
# with netavark
pa() { pm --runtime agentbox "$@"; }
pr() { pm --runtime runc "$@"; }
pna() { pmn --runtime agentbox "$@"; }
pnr() { pmn --runtime runc "$@"; }
cid() { pm inspect -f '{{.Id}}' "$1"; }
cgpath() { echo "/libpod_parent/libpod-$(cid "$1")"; }
AB_ROOT=/run/agentbox

@test "podman: agentbox is the OCI runtime it uses, with the network backend each test pins" {
	run pa info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}} {{.Host.NetworkBackend}}'
	assert_success
	[ "$output" = "agentbox $AGENTBOX cni" ] || fail "podman info: $output"
	require_engine podman-netavark
	run pna info --format '{{.Host.OCIRuntime.Name}} {{.Host.NetworkBackend}}'
	assert_success
	[ "$output" = "agentbox netavark" ] || fail "podman info (netavark): $output"
}

@test "podman run --rm: output and exit code, like runc" {
	local r out=() st=()
	for r in pa pr; do
		run --separate-stderr $r run --rm "$IMG" sh -c 'echo out; echo err >&2; exit 3'
		out+=("stdout=$output stderr=$stderr")
		st+=("$status")
	done
	[ "${st[0]}" -eq 3 ] || fail "agentbox: exit ${st[0]}: ${out[0]}"
	[ "${out[0]}" = "stdout=out stderr=err" ] || fail "agentbox: ${out[0]}"
	same_as_runc "exit status" "${st[0]}" "${st[1]}"
	same_as_runc "output" "${out[0]}" "${out[1]}"
	run bash -c "echo piped | timeout 60 podman $PODMAN_OPTS --runtime agentbox run --rm -i $IMG cat"
	assert_success
	[ "$output" = piped ] || fail "stdin not passed through: $output"
}

@test "podman run -d, then exec: output and exit code" {
	pa run -d --name p-exec "$IMG" sleep 1000 >/dev/null
	run pa exec p-exec sh -c 'echo inside; exit 5'
	assert_status 5
	[ "$output" = inside ] || fail "exec output: $output"
	run pa exec -u 1000:1000 -w /tmp -e FOO=bar p-exec sh -c 'abtest id; pwd; echo $FOO'
	assert_success
	assert_output_contains "uid=1000 gid=1000"
	assert_output_contains "/tmp"
	assert_output_contains "bar"
}

@test "podman exec -it and run -it: a terminal, and the exit code" {
	pa run -d --name p-tty "$IMG" sleep 1000 >/dev/null
	run in_tty podman $PODMAN_OPTS exec -it p-tty \
		sh -c 'tty; abtest isatty 0; exit 6'
	assert_status 6
	output=$(strip_cr <<<"$output")
	assert_output_matches '/dev/pts/[0-9]+'
	assert_output_contains yes
	# podman 4.3 + conmon 2.1.6 lose all terminal output of a run -it
	# container that is done within moments of its start, whatever the
	# runtime: `echo A; echo B; exit 4` came back empty 14/40 times with
	# agentbox and 11/40 with runc, `sleep 0.3; echo A; echo B; exit 4` 0/40
	# with each. The pause keeps that race out of what this test checks.
	run in_tty podman $PODMAN_OPTS --runtime agentbox run --rm -it "$IMG" \
		sh -c 'sleep 0.5; tty; abtest isatty 1; exit 4'
	assert_status 4
	output=$(strip_cr <<<"$output")
	assert_output_matches '/dev/pts/[0-9]+'
	assert_output_contains yes
}

@test "podman logs, top and stats" {
	pa run -d --name p-misc "$IMG" sh -c 'echo line-out; echo line-err >&2; sleep 1001 & exec sleep 1002' >/dev/null
	retry 10 bash -c "timeout 20 podman $PODMAN_OPTS logs p-misc 2>&1 | grep -q line-err"
	run pm logs p-misc
	assert_output_contains line-out
	assert_output_contains line-err
	run pm top p-misc
	assert_success
	assert_output_contains "sleep 1001"
	assert_output_contains "sleep 1002"
	run pm stats --no-stream --format '{{.MemUsage}} pids={{.PIDs}}' p-misc
	assert_success
	assert_output_matches 'pids=[1-9]'
	[[ "$output" != "0B /"* ]] || fail "no memory usage: $output"
}

@test "podman pause / unpause, like runc" {
	local r
	for r in pa pr; do
		$r run -d --name p-pause-$r "$IMG" \
			sh -c 'i=0; while true; do i=$((i+1)); echo $i >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.05; done' >/dev/null
		retry 10 pm exec p-pause-$r test -s /tmp/n
		run pm pause p-pause-$r
		assert_success
		[ "$(pm inspect -f '{{.State.Status}}' p-pause-$r)" = paused ]
		local f
		f=$(cgroup_v1_file freezer "$(cgpath p-pause-$r)" freezer.state)
		[ -z "$f" ] || [ "$(cat "$f")" = FROZEN ] || fail "$r: freezer.state $(cat "$f")"
		run pm unpause p-pause-$r
		assert_success
		local a b
		a=$(pm exec p-pause-$r cat /tmp/n)
		sleep 0.3
		b=$(pm exec p-pause-$r cat /tmp/n)
		[ "$b" -gt "$a" ] || fail "$r: not running after unpause ($a -> $b)"
	done
}

@test "podman update --memory --cpus: the host's cgroup files, like runc" {
	local r vals=()
	for r in pa pr; do
		$r run -d --name p-upd-$r "$IMG" sleep 1000 >/dev/null
		run pm update --memory 64m --cpus 0.5 p-upd-$r
		assert_success
		local cg mem cpu
		cg=$(cgpath p-upd-$r)
		mem=$(cat "$(cgroup_v1_file memory "$cg" memory.limit_in_bytes)")
		cpu=$(cat "$(cgroup_v1_file cpu "$cg" cpu.cfs_quota_us)")/$(cat "$(cgroup_v1_file cpu "$cg" cpu.cfs_period_us)")
		[ "$mem" = 67108864 ] || fail "$r: memory.limit_in_bytes=$mem"
		[ "$cpu" = 50000/100000 ] || fail "$r: cpu quota/period=$cpu"
		vals+=("$mem $cpu")
	done
	same_as_runc "cgroup values" "${vals[0]}" "${vals[1]}"
	# podman's default pids limit (2048) is in place
	[ "$(cat "$(cgroup_v1_file pids "$(cgpath p-upd-pa)" pids.max)")" = 2048 ]
}

@test "podman kill -s USR1, stop and restart" {
	pa run -d --name p-sig "$IMG" \
		sh -c 'trap "echo got-usr1" USR1; trap "exit 42" TERM; echo ready; while true; do sleep 0.1; done' >/dev/null
	retry 10 bash -c "timeout 20 podman $PODMAN_OPTS logs p-sig | grep -q ready"
	run pm kill -s USR1 p-sig
	assert_success
	retry 10 bash -c "timeout 20 podman $PODMAN_OPTS logs p-sig | grep -q got-usr1"
	run pm stop -t 10 p-sig
	assert_success
	[ "$(pm inspect -f '{{.State.ExitCode}}' p-sig)" = 42 ]
	run pm restart p-sig
	assert_success
	[ "$(pm inspect -f '{{.State.Status}}' p-sig)" = running ]
	run pa exec p-sig echo alive
	assert_success
	# no TERM handler in pid 1: SIGKILL after -t
	pa run -d --name p-sig2 "$IMG" sleep 1000 >/dev/null
	run pm stop -t 1 p-sig2
	assert_success
	[ "$(pm inspect -f '{{.State.ExitCode}}' p-sig2)" = 137 ]
}

@test "podman rm -f: a running container is gone, nothing left behind" {
	pa run -d --name p-rm "$IMG" sh -c 'sleep 1001 & exec sleep 1002' >/dev/null
	local id cg pids
	id=$(cid p-rm)
	cg=$(cgpath p-rm)
	pids=$(pids_of_cgroup "$cg")
	[ -n "$pids" ] || fail "no pids in $cg"
	# conmon passes no --root: the state is in the runtime's default
	"$AGENTBOX" --root "$AB_ROOT" state "$id" >/dev/null || fail "no agentbox state for $id in $AB_ROOT"
	run pm rm -f -t 0 p-rm
	assert_success
	local p
	for p in $pids; do
		retry 5 bash -c "[ ! -d /proc/$p ] || grep -q '^State:.*Z' /proc/$p/status" || fail "pid $p survived rm -f"
	done
	runtime_state_gone "$AB_ROOT" "$id"
	retry 5 no_cgroup_left "$cg"
}

@test "podman commit: the container's changes become an image" {
	pa run -d --name p-commit "$IMG" sh -c 'echo committed >/marker; sleep 1000' >/dev/null
	retry 10 pa exec p-commit test -e /marker
	run pm commit -q p-commit localhost/p-committed:1
	assert_success
	run pa run --rm localhost/p-committed:1 cat /marker
	pm rmi -f localhost/p-committed:1 >/dev/null 2>&1 || true
	assert_success
	[ "$output" = committed ]
}

@test "podman run --init: an init is pid 1" {
	run pa run --rm --init "$IMG" sh -c 'tr "\0" " " </proc/1/cmdline; echo; abtest pidns'
	assert_success
	assert_output_contains "/run/podman-init -- sh"
	assert_output_matches 'pid=[2-9]'
}

@test "podman run --read-only: a read-only root, tmpfs with tmpcopyup, like runc" {
	local r res=()
	for r in pa pr; do
		# /tmp, /var/tmp, /run: podman's own tmpfs (tmpcopyup); --tmpfs /srv too.
		# The image has /var/tmp/seed and /srv/seed: copied up into the tmpfs.
		run $r run --rm --read-only --tmpfs /srv "$IMG" sh -c \
			'abtest write /x d; abtest write /tmp/x d; abtest write /var/tmp/x d; abtest write /run/x d
			 abtest write /srv/x d; cat /var/tmp/seed /srv/seed
			 grep -E " /(tmp|var/tmp|run|srv) " /proc/mounts | cut -d" " -f2,3 | sort'
		assert_success
		res+=("$output")
	done
	[ "${res[0]}" = $'EROFS\nok\nok\nok\nok\nseed\nseed\n/run tmpfs\n/srv tmpfs\n/tmp tmpfs\n/var/tmp tmpfs' ] ||
		fail "agentbox: ${res[0]}"
	same_as_runc "read-only layout" "${res[0]}" "${res[1]}"
}

@test "podman run --cgroups=disabled: no cgroup of its own (--cgroup-manager disabled)" {
	run pa run --rm --cgroups=disabled "$IMG" sh -c 'cat /proc/self/cgroup'
	assert_success
	# the container stays in the cgroups conmon is in: none named after it
	refute_output_contains libpod
	# and it really ran through agentbox
	run pa run --rm --cgroups=disabled --name p-nocg "$IMG" abtest caps
	assert_success
	assert_output_contains $'NoNewPrivs:\t1'
}

@test "podman run --cap-drop ALL and no-new-privileges, like runc" {
	local r caps=()
	for r in pa pr; do
		run $r run --rm --cap-drop ALL --security-opt no-new-privileges "$IMG" abtest caps
		assert_success
		caps+=("$(grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' <<<"$output")")
	done
	[ "$(grep '^Cap' <<<"${caps[0]}" | awk '{ print $2 }' | sort -u)" = 0000000000000000 ] || fail "agentbox: ${caps[0]}"
	[[ "${caps[0]}" == *$'NoNewPrivs:\t1'* ]] || fail "agentbox: ${caps[0]}"
	same_as_runc "capabilities" "${caps[0]}" "${caps[1]}"
}

@test "podman run --memory: the OOM killer, exit 137, like runc" {
	local r res=()
	for r in pa pr; do
		run $r run --name p-oom-$r --memory 32m --memory-swap 32m "$IMG" sh -c 'x=a; while true; do x=$x$x; done'
		res+=("$status")
	done
	[ "${res[0]}" = 137 ] || fail "agentbox: exit ${res[0]}"
	same_as_runc "exit status" "${res[0]}" "${res[1]}"
	# (.State.OOMKilled: conmon 2.1.6 does not see the v1 OOM event on this
	# hybrid host, for runc as for agentbox — so it is not compared here)
}

@test "podman run --pids-limit: a fork bomb is contained, like runc" {
	local r res=()
	for r in pa pr; do
		run $r run --rm --pids-limit 20 "$IMG" abtest forkbomb 200
		assert_success
		res+=("$output")
	done
	[[ "${res[0]}" =~ ^forked=1[0-9]\ error=EAGAIN$ ]] || fail "agentbox: ${res[0]}"
	same_as_runc "fork bomb" "${res[0]}" "${res[1]}"
}

@test "podman networks: none is loopback only; the bridge is wired, egress denied by default" {
	run pa run --rm --network none "$IMG" ls /sys/class/net
	assert_success
	[ "$output" = lo ] || fail "--network none: $output"
	# a server on the CNI bridge, reached by runc and not by default-deny agentbox
	pr run -d --name p-web "$IMG" sh -c 'mkdir /www; echo hello-pod >/www/index.html; exec httpd -f -p 8080 -h /www' >/dev/null
	local ip
	ip=$(pm inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' p-web)
	[[ "$ip" == 198.19.88.* ]] || fail "server address $ip"
	run pr run --rm "$IMG" timeout 10 wget -qO- "http://$ip:8080/"
	assert_output_contains hello-pod
	run pa run --rm "$IMG" sh -c "ip -o -4 addr show eth0; timeout 3 wget -qO- http://$ip:8080/ 2>&1; echo wget=\$?"
	assert_output_matches 'inet 198\.19\.88\.[0-9]+/24'
	refute_output_contains hello-pod
	refute_output_contains "wget=0"
}

@test "podman, stock containers.conf: the default network with its default_sysctls, and --sysctl net.*, like runc" {
	# the stock file sets net.ipv4.ping_group_range=0 0 for every container:
	# its being applied shows the stock file is read (not replaced)
	grep -q 'net.ipv4.ping_group_range=0 0' /usr/share/containers/containers.conf ||
		skip "this podman's stock containers.conf sets no net.* default_sysctls"
	local r res=()
	for r in pa pr; do
		run $r run --rm "$IMG" sh -c 'ls /sys/class/net | tr "\n" " "; cat /proc/sys/net/ipv4/ping_group_range'
		assert_success
		res+=("$(tr -s '\t ' ' ' <<<"$output")")
	done
	[[ "${res[0]}" == *"eth0 "*"0 0" ]] || fail "agentbox: $output"
	same_as_runc "default network and sysctls" "${res[0]}" "${res[1]}"
	res=()
	for r in pa pr; do
		run $r run --rm --sysctl net.ipv4.ip_unprivileged_port_start=80 "$IMG" \
			cat /proc/sys/net/ipv4/ip_unprivileged_port_start
		assert_success
		res+=("$output")
	done
	[ "${res[0]}" = 80 ] || fail "agentbox: --sysctl: ${res[0]}"
	same_as_runc "--sysctl net.*" "${res[0]}" "${res[1]}"
}

@test "podman pod and --network container:X with the stock sysctls and --sysctl net.*: the same policy may set them" {
	run pa pod create --name p-spod --infra-image "$IMG" --infra-command 'sleep 100000'
	assert_success
	run pa run --rm --pod p-spod --sysctl net.ipv4.ip_unprivileged_port_start=81 "$IMG" sh -c \
		'cat /proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/ip_unprivileged_port_start'
	pm pod rm -f -t 0 p-spod >/dev/null 2>&1 || true
	assert_success
	assert_output_contains 81
	pa run -d --name p-sowner "$IMG" sleep 1000 >/dev/null
	run pa run --rm --network container:p-sowner --sysctl net.ipv4.ip_unprivileged_port_start=82 "$IMG" \
		cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	assert_success
	[ "$output" = 82 ] || fail "$output"
	# the owner's namespace is the one that changed: they share it
	run pa exec p-sowner cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	[ "$output" = 82 ] || fail "owner: $output"
}

@test "podman: the firewall is in the container's netns (joined by path), never the host's" {
	pa run -d --name p-fw "$IMG" sleep 1000 >/dev/null
	local pid
	pid=$(pm inspect -f '{{.State.Pid}}' p-fw)
	run nsenter -t "$pid" -n nft list table inet agentbox
	assert_success
	assert_output_contains "policy drop"
	run nft list table inet agentbox
	[ "$status" -ne 0 ] || fail "the host's network namespace has agentbox's table: $output"
}

@test "podman --network container:X: a second container joins the first's policed netns" {
	pa run -d --name p-owner "$IMG" sleep 1000 >/dev/null
	run pa run --rm --network container:p-owner "$IMG" sh -c 'ls /sys/class/net | tr "\n" " "'
	assert_success
	assert_output_contains "eth0"
	# the owner keeps its firewall and DNS after the joiner is gone
	run pa exec p-owner sh -c 'timeout 5 nslookup example.test 2>&1'
	assert_output_contains NXDOMAIN
}

@test "podman pod: members join the infra container's policed netns" {
	run pa pod create --name p-pod --infra-image "$IMG" --infra-command 'sleep 100000'
	assert_success
	run pa run --rm --pod p-pod "$IMG" sh -c 'ls /sys/class/net | tr "\n" " "; timeout 5 nslookup x.test 2>&1; true'
	pm pod rm -f -t 0 p-pod >/dev/null 2>&1 || true
	assert_success
	assert_output_contains eth0
	assert_output_contains NXDOMAIN
}

@test "podman healthcheck run: healthy" {
	pa run -d --name p-health --health-cmd 'test -e /tmp/ready' "$IMG" \
		sh -c 'touch /tmp/ready; exec sleep 1000' >/dev/null
	retry 10 pa exec p-health test -e /tmp/ready
	run pa healthcheck run p-health
	assert_success
	[ "$(pm inspect -f '{{.State.Health.Status}}' p-health)" = healthy ] ||
		[ "$(pm inspect -f '{{.State.Healthcheck.Status}}' p-health)" = healthy ]
}

# ---------------------------------------------------------------- netavark

# The flags of a runtime that allows split.test (and ALLOW) and lets names
# resolve into the podman host's addresses and INTERNAL
nv_policy() {
	echo "--runtime-flag egress-allow=split.test${1:+,$1} --runtime-flag egress-internal=198.18.47.176/28${2:+,$2}"
}

@test "podman netavark, the default network: the firewall and the sentry with the host's resolver, like runc's reach" {
	require_engine podman-netavark
	local check='ip -o -4 addr show eth0; timeout 10 nslookup -type=a split.test 2>&1 | tail -n 2;
		timeout 5 wget -qO- http://split.test:8080/ 2>&1; timeout 5 nslookup -type=a other.test 2>&1 | tail -n 2;
		timeout 5 wget -qO- http://198.18.47.182:8080/ 2>&1; echo wget=$?'
	# runc reaches both names and both web servers
	run pnr run --rm --dns "$PODMAN_NV_HOST_DNS" "$IMG" sh -c "$check"
	assert_success
	assert_output_matches 'inet 198\.18\.47\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])/26'
	assert_output_contains hello-split
	assert_output_contains hello-other
	# agentbox: the allowed name only
	# shellcheck disable=SC2046
	run pmn --runtime agentbox $(nv_policy) run --rm --dns "$PODMAN_NV_HOST_DNS" "$IMG" sh -c "$check"
	assert_success
	assert_output_matches 'inet 198\.18\.47\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])/26'
	assert_output_contains "Address: 198.18.47.181"
	assert_output_contains hello-split
	assert_output_contains "can't find other.test: NXDOMAIN"
	refute_output_contains hello-other
	refute_output_contains "wget=0"
}

@test "podman netavark, a user network: aardvark names between containers and the names it forwards, a published port, --network container:X; like runc" {
	require_engine podman-netavark
	run pmn network create --subnet 198.18.47.128/27 abnv
	assert_success
	# a web server (agentbox, default-deny: it only answers), published on the podman host
	pna run -d --name web -p 8090:8080 --network abnv "$IMG" \
		sh -c 'mkdir /www; echo hello-web >/www/index.html; exec httpd -f -p 8080 -h /www' >/dev/null
	retry 10 $PODMAN_NV_ENTER sh -c "timeout 3 busybox wget -qO- http://$PODMAN_NV_HOST_DNS:8090/ | grep -q hello-web" ||
		fail "the published port does not answer"
	# aardvark-dns names the containers of the network and forwards the
	# rest to the podman host's resolver, from the podman host
	local check='timeout 5 wget -qO- http://web.dns.podman:8080/ 2>&1; timeout 5 wget -qO- http://split.test:8080/ 2>&1;
		timeout 5 nslookup -type=a other.test 2>&1 | tail -n 2; timeout 5 wget -qO- http://198.18.47.182:8080/ 2>&1; echo wget=$?'
	run pnr run --rm --network abnv "$IMG" sh -c "cat /etc/resolv.conf; $check"
	assert_success
	assert_output_contains "search dns.podman"
	assert_output_contains hello-web
	assert_output_contains hello-split
	assert_output_contains hello-other
	# agentbox: the container's name and the allowed outside name, nothing else
	# shellcheck disable=SC2046
	run pmn --runtime agentbox $(nv_policy web.dns.podman 198.18.47.128/27) run --rm --network abnv "$IMG" sh -c "$check"
	assert_success
	assert_output_contains hello-web
	assert_output_contains hello-split
	assert_output_contains "can't find other.test: NXDOMAIN"
	refute_output_contains hello-other
	refute_output_contains "wget=0"
	# a joiner (of the same default-deny policy: a wider one is refused)
	# shares the web server's namespace, firewall and sentry
	run pna run --rm --network container:web "$IMG" \
		sh -c 'ip -o -4 addr show eth0; timeout 5 nslookup -type=a split.test 2>&1 | tail -n 2; wget -qO- http://127.0.0.1:8080/'
	assert_success
	assert_output_matches 'inet 198\.18\.47\.1(29|[3-5][0-9])/27'
	assert_output_contains "can't find split.test: NXDOMAIN"
	assert_output_contains hello-web
}
