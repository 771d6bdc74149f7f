#!/usr/bin/env bats
# Rootless Podman 4.3 on a workstation, as it ships: an unprivileged user
# (made for the run, with its own subuid/subgid range), Podman's defaults for a
# user (slirp4netns as the default network, its storage in the user's home),
# the stock containers.conf plus only the documented additions in
# ~/.config/containers/containers.conf (engines-up.sh podman-rootless). runc
# runs everything too, as the reference.
#
# The firewall over the default network: a test internet of our own, the
# network namespace abrl-prn joined to the host by a veth pair (198.19.64.1 on
# the host, 198.19.64.2 and .3 inside), with web servers on both addresses and a
# dnsmasq on .2 that knows allowed.abrl.test (.2) and other.abrl.test (.3).
# slirp4netns makes the container's connections from the host, so they reach
# these hosts through the veth; the container uses the dnsmasq (--dns).

load helpers

NET_NS=abrl-prn
NET_HOST=198.19.64.1
SRV=198.19.64.2
SRV2=198.19.64.3

setup_file() {
	engines_setup_file podman-rootless
	[ -n "${PODMAN_ROOTLESS_OK:-}" ] || return 0
	export NET_WWW
	NET_WWW=$(mktemp -d /tmp/abrl-prw.XXXXXX)
	echo hello-from-2 >"$NET_WWW/index.html"
	ip netns add "$NET_NS" &&
		ip link add abrl-prh type veth peer name abrl-prp &&
		ip link set abrl-prp netns "$NET_NS" &&
		ip addr add "$NET_HOST/24" dev abrl-prh && ip link set abrl-prh up &&
		ip -n "$NET_NS" addr add "$SRV/24" dev abrl-prp &&
		ip -n "$NET_NS" addr add "$SRV2/24" dev abrl-prp &&
		ip -n "$NET_NS" link set abrl-prp up && ip -n "$NET_NS" link set lo up || {
		export ENGINES_SKIP_ALL="cannot build the test network"
		return 0
	}
	# two servers on .2 (8080, 8081) and two on .3 (8080, 8081)
	local a p
	for a in "$SRV" "$SRV2"; do
		for p in 8080 8081; do
			# in the foreground, by pid: nothing of bats' may stay open in a daemon
			ip netns exec "$NET_NS" busybox httpd -f -p "$a:$p" -h "$NET_WWW" </dev/null >/dev/null 2>&1 3>&- &
			echo $! >>"$NET_WWW/pids"
		done
	done
	ip netns exec "$NET_NS" dnsmasq -C /dev/null --no-resolv --no-hosts --bind-interfaces --keep-in-foreground \
		--user=root --group=root --listen-address="$SRV" --local=/abrl.test/ \
		--address=/allowed.abrl.test/"$SRV" --address=/other.abrl.test/"$SRV2" </dev/null >/dev/null 2>&1 3>&- &
	echo $! >>"$NET_WWW/pids"
}

teardown_file() {
	if [ -n "${NET_WWW:-}" ]; then
		local pid
		for pid in $(cat "$NET_WWW/pids" 2>/dev/null); do
			kill "$pid" 2>/dev/null
		done
		ip link del abrl-prh 2>/dev/null
		ip netns del "$NET_NS" 2>/dev/null
		rm -rf "$NET_WWW"
	fi
	engines_teardown_file
}

setup() {
	require_engine podman-rootless
	IMG=localhost/$TEST_IMAGE
}

teardown() {
	[ -n "${PR_USER:-}" ] || return 0
	pu rm -af -t 0 >/dev/null 2>&1 || true
	pu pod rm -af -t 0 >/dev/null 2>&1 || true
}

# pu ARGS...: podman as the user, in a login-like environment
pu() {
	(cd / && exec timeout -k 5 "$ENGINE_TIMEOUT" runuser -u "$PR_USER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$PR_HOME" USER="$PR_USER" XDG_RUNTIME_DIR="$PR_XDG" podman "$@" 3>&-)
}
pa() { pu --runtime agentbox "$@"; }
pr() { pu --runtime runc "$@"; }
# the runtime as the user, on the state Podman's containers have
ab() {
	(cd / && exec runuser -u "$PR_USER" -- env -i PATH=/usr/bin:/bin HOME="$PR_HOME" XDG_RUNTIME_DIR="$PR_XDG" \
		"$PR_AGENTBOX" "$@" 3>&-)
}

# http ADDR PORT: the page a server sends, through nc (busybox wget needs
# resolver files this image has no use for)
HTTP='printf "GET / HTTP/1.0\r\n\r\n" | nc -w 3'

@test "rootless podman: agentbox is the runtime, rootless, as the user" {
	run pa info --format '{{.Host.Security.Rootless}} {{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}'
	assert_success
	[ "$output" = "true agentbox $PR_AGENTBOX" ] || fail "podman info: $output"
}

@test "rootless podman run --rm on the default network (slirp4netns, stock sysctls): output and exit code, like runc" {
	local r out=() st=()
	for r in pa pr; do
		run $r run --rm "$IMG" sh -c 'id -u; ls /sys/class/net | tr "\n" " "; echo; cat /proc/sys/net/ipv4/ping_group_range; exit 3'
		out+=("$(tr -s '\t ' ' ' <<<"$output")")
		st+=("$status")
	done
	[ "${st[0]}" -eq 3 ] || fail "agentbox: exit ${st[0]}: ${out[0]}"
	[[ "${out[0]}" == *"tap0"* ]] || fail "agentbox: not on slirp4netns: ${out[0]}"
	same_as_runc "exit status" "${st[0]}" "${st[1]}"
	same_as_runc "output" "${out[0]}" "${out[1]}"
	# the container's root is the user on the host
	pa run -d --name r-map "$IMG" sleep 1000 >/dev/null
	local pid
	pid=$(pu inspect -f '{{.State.Pid}}' r-map)
	[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" = "$PR_UID" ] || fail "the init runs as uid $(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")"
}

@test "rootless podman run -d, exec, stop, rm: like runc; the state is under the user's runtime directory" {
	local r
	for r in pa pr; do
		$r run -d --name r-life-$r "$IMG" sh -c 'trap "echo bye; exit 7" TERM; while :; do sleep 0.1; done' >/dev/null
		run $r exec r-life-$r sh -c 'echo inside; exit 5'
		assert_status 5
		[ "$output" = inside ] || fail "$r exec: $output"
		run $r exec -u 1000:1000 r-life-$r id -u
		assert_success
		[ "$output" = 1000 ] || fail "$r exec -u: $output"
		if [ $r = pa ]; then
			local id
			id=$(pu inspect -f '{{.Id}}' r-life-pa)
			[ -f "$PR_XDG/agentbox/$id/state.json" ] || fail "no state in $PR_XDG/agentbox/$id"
			[ "$(stat -c %U "$PR_XDG/agentbox/$id")" = "$PR_USER" ]
		fi
		run $r stop -t 5 r-life-$r
		assert_success
		[ "$(pu inspect -f '{{.State.ExitCode}}' r-life-$r)" = 7 ] || fail "$r: exit $(pu inspect -f '{{.State.ExitCode}}' r-life-$r)"
		run $r rm r-life-$r
		assert_success
	done
	[ -z "$(ls "$PR_XDG/agentbox" 2>/dev/null | grep -v '^\.')" ] || fail "state left: $(ls "$PR_XDG/agentbox")"
}

@test "rootless podman -u 1000 (an image USER): create + start through the exec fifo, like runc" {
	local r res=()
	for r in pa pr; do
		run $r run --rm -u 1000:1000 "$IMG" sh -c 'id -u; id -g; echo via-dev-stdout >/dev/stdout'
		assert_success
		res+=("$output")
	done
	[ "${res[0]}" = $'1000\n1000\nvia-dev-stdout' ] || fail "agentbox: ${res[0]}"
	same_as_runc "-u 1000:1000" "${res[0]}" "${res[1]}"
}

@test "rootless podman, the firewall over slirp4netns: an allowed name and host:port answer, the rest is refused and logged" {
	# every target answers when nothing polices the container
	run pr run --rm --dns "$SRV" "$IMG" sh -c "$HTTP allowed.abrl.test 8080; $HTTP other.abrl.test 8080; $HTTP $SRV2 8081; $HTTP $SRV2 8080"
	[ "$(grep -c hello-from-2 <<<"$output")" = 4 ] || fail "the test network does not answer runc: $output"
	local allow="allowed.abrl.test,$SRV2:8081" flags=()
	# our test addresses are special-purpose (198.18.0.0/15): an allowed name may
	# point there only when the policy says so (agentbox-egress(7))
	if "$PR_AGENTBOX" --help 2>/dev/null | grep -q -- --egress-internal; then
		flags=(--runtime-flag "egress-internal=198.19.64.0/24")
	fi
	pu --runtime agentbox --runtime-flag "egress-allow=$allow" "${flags[@]}" run -d --name r-fw --dns "$SRV" "$IMG" sleep 1000 >/dev/null
	# the allowed name, any port
	run pa exec r-fw sh -c "$HTTP allowed.abrl.test 8080"
	assert_output_contains hello-from-2
	# the allowed address and port
	run pa exec r-fw sh -c "$HTTP $SRV2 8081"
	assert_output_contains hello-from-2
	# another name: the sentry refuses it
	run pa exec r-fw sh -c "nslookup other.abrl.test 2>&1; $HTTP other.abrl.test 8080 2>&1; echo rc=\$?"
	refute_output_contains hello-from-2
	assert_output_contains NXDOMAIN
	# the allowed address on another port: dropped
	run pa exec r-fw sh -c "$HTTP $SRV2 8080 2>&1; echo rc=\$?"
	refute_output_contains hello-from-2
	# the user reads what was refused, as the user, from Podman's state
	local id log
	id=$(pu inspect -f '{{.Id}}' r-fw)
	for _ in $(seq 50); do
		log=$(ab egress log --json "$id" 2>&1)
		grep -q "other.abrl.test" <<<"$log" && grep -q "\"dst\":\"$SRV2\".*\"port\":8080" <<<"$log" && break
		sleep 0.1
	done
	grep -q "other.abrl.test" <<<"$log" || fail "the refused name is not in the log: $log"
	grep -q "\"dst\":\"$SRV2\".*\"port\":8080" <<<"$log" || fail "the refused address is not in the log: $log"
	# the container holds no CAP_NET_ADMIN over its rules, and the rules are its netns'
	local pid
	pid=$(pu inspect -f '{{.State.Pid}}' r-fw)
	run nsenter -t "$pid" -n nft list table inet agentbox
	assert_success
	assert_output_contains "policy drop"
}

@test "rootless podman pod and --network container:X with the stock sysctls: the members share the policed namespace" {
	run pa pod create --name r-pod --infra-image "$IMG" --infra-command 'sleep 100000'
	assert_success
	run pa run --rm --pod r-pod --dns "$SRV" "$IMG" sh -c "cat /proc/sys/net/ipv4/ping_group_range; nslookup other.abrl.test 2>&1; true"
	assert_success
	assert_output_contains NXDOMAIN
	pa run -d --name r-owner --dns "$SRV" "$IMG" sleep 1000 >/dev/null
	run pa run --rm --network container:r-owner --sysctl net.ipv4.ip_unprivileged_port_start=90 "$IMG" \
		cat /proc/sys/net/ipv4/ip_unprivileged_port_start
	assert_success
	# podman passes on create's one warning (no delegated cgroup on this host)
	[ "$(grep -v '^agentbox: warning: container .* runs without a cgroup: rootless' <<<"$output")" = 90 ] ||
		fail "$output"
}
