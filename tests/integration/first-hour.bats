#!/usr/bin/env bats
# docs/first-hour.md, run as written: its tagged blocks (an HTML comment
# "first-hour: WHO [MODE]" before each), in order, by a user account made for
# the run (abfh-NNNN, no subordinate range of its own: the page's step gives it
# one) through `su -` (a login shell: PATH from login.defs, no
# XDG_RUNTIME_DIR), and by root. One test per section; each checks what the
# page says happens.
#
# Everything runs in a mount namespace of the file's own (a process holds it)
# where /etc and /usr/local are overlays: the install step puts agentbox in
# /usr/local/bin, the subid step and `agentbox setup` edit /etc, and none of
# it reaches the host. There /etc/resolv.conf names the file's resolver and
# /etc/agentbox/config.yaml opens the file's test range for allowed names (its
# "internet" is on special-purpose addresses; a real example.org is not).
# The install block ("make deb && apt install", a package build) is done as
# its result: the tree's binaries into /usr/local/bin, where the package or
# `make install PREFIX=/usr/local` puts them.
#
# Network: netns abfh-inet-$$ joined to the host by a veth (198.18.48.1/30
# here, .2 there); example.com on 198.18.48.130 and example.org on .131 (busybox
# httpd on port 80), a DNS server on .153 answering for those two names only, routed
# by 198.18.48.128/25. /dev/net/tun is made 0666 (Debian's mode; some hosts
# have 0600) for the file's run, then restored.

load helpers

DOC=$REPO_ROOT/docs/first-hour.md

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	local why=
	for c in useradd su sudo nsenter slirp4netns newuidmap dnsmasq busybox curl jq; do
		command -v "$c" >/dev/null || why="${why:+$why, }$c"
	done
	[ -z "$why" ] || { export FH_SKIP="needs $why"; return 0; }
	export FH_DIR
	FH_DIR=$(mktemp -d /tmp/abfh.XXXXXX)
	chmod 755 "$FH_DIR"
	export FH_USER=abfh-$$
	useradd -m -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 -s /bin/bash "$FH_USER" >&2 ||
		{ export FH_SKIP="useradd failed"; FH_USER=; return 0; }
	export FH_HOME
	FH_HOME=$(getent passwd "$FH_USER" | cut -d: -f6)
	export FH_TUN_MODE=
	if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
		FH_TUN_MODE=$(stat -c %a /dev/net/tun)
		chmod 666 /dev/net/tun
	fi
	fh_inet
	fh_namespace
	fh_blocks
}

teardown_file() {
	[ -z "${FH_TUN_MODE:-}" ] || chmod "$FH_TUN_MODE" /dev/net/tun
	[ -n "${FH_DIR:-}" ] || return 0
	local pids
	if [ -n "${FH_USER:-}" ]; then
		pids=$(ps -o pid= -u "$FH_USER" 2>/dev/null || true)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	fi
	[ -z "${FH_HOLDER:-}" ] || kill "$FH_HOLDER" 2>/dev/null || true
	[ -z "${FH_NET_PIDS:-}" ] || kill $FH_NET_PIDS 2>/dev/null || true
	ip route del 198.18.48.128/25 via 198.18.48.2 2>/dev/null || true
	ip link del "abfh-h$(($$ % 100000))" 2>/dev/null || true
	ip netns del "abfh-inet-$$" 2>/dev/null || true
	if [ -n "${FH_USER:-}" ]; then
		local uid
		uid=$(id -u "$FH_USER" 2>/dev/null) && rm -rf "/tmp/agentbox-$uid" "/run/user/$uid"
		rm -rf "$FH_HOME"
		userdel -r "$FH_USER" 2>/dev/null || userdel -f "$FH_USER" 2>/dev/null || true
	fi
	rm -rf "$FH_DIR"
}

# The little internet: two web servers and a resolver for their names.
fh_inet() {
	local ns=abfh-inet-$$ hv=abfh-h$(($$ % 100000))
	ip netns add "$ns"
	ip link add "$hv" type veth peer name n0 netns "$ns"
	ip addr add 198.18.48.1/30 dev "$hv"
	ip link set "$hv" up
	ip -n "$ns" addr add 198.18.48.2/30 dev n0
	ip -n "$ns" link set n0 up
	ip -n "$ns" link set lo up
	local a
	for a in 130 131 153; do ip -n "$ns" addr add "198.18.48.$a/32" dev lo; done
	ip route add 198.18.48.128/25 via 198.18.48.2 dev "$hv"
	FH_NET_PIDS=
	for a in 130 131; do
		mkdir -p "$FH_DIR/www$a"
		echo "hello-$a" >"$FH_DIR/www$a/index.html"
		ip netns exec "$ns" busybox httpd -f -p "198.18.48.$a:80" -h "$FH_DIR/www$a" \
			</dev/null >/dev/null 2>&1 3>&- &
		FH_NET_PIDS="$FH_NET_PIDS $!"
	done
	ip netns exec "$ns" dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground \
		--user=root --group=root --bind-interfaces --listen-address=198.18.48.153 \
		--log-queries --log-facility="$FH_DIR/dnsmasq.log" \
		--local=/example.com/ --local=/example.org/ \
		--host-record=example.com,198.18.48.130,5 --host-record=example.org,198.18.48.131,5 \
		</dev/null >/dev/null 2>&1 3>&- &
	FH_NET_PIDS="$FH_NET_PIDS $!"
	export FH_NET_PIDS
}

# The mount namespace: a process holds it; /etc and /usr/local overlays.
fh_namespace() {
	unshare -m --propagation private sleep infinity </dev/null >/dev/null 2>&1 3>&- &
	export FH_HOLDER=$!
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(readlink "/proc/$FH_HOLDER/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.01
	done
	local d
	for d in etc usr-local; do mkdir -p "$FH_DIR/ovl/$d/upper" "$FH_DIR/ovl/$d/work"; done
	fh_ns sh -c '
		mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc/upper,workdir=$1/etc/work" /etc &&
		mount -t overlay overlay -o "lowerdir=/usr/local,upperdir=$1/usr-local/upper,workdir=$1/usr-local/work" /usr/local &&
		rm -f /etc/resolv.conf && echo "nameserver 198.18.48.153" >/etc/resolv.conf &&
		chmod 644 /etc/resolv.conf && mkdir -p /etc/agentbox &&
		printf "egress:\n  internal: [198.18.48.128/25]\n" >/etc/agentbox/config.yaml' sh "$FH_DIR/ovl"
	# the resolver answers (the servers are up) before any test relies on it
	for ((i = 0; i < 100; i++)); do
		fh_ns sh -c 'getent hosts example.org >/dev/null && curl -s -m 1 http://example.org/ | grep -q hello' && break
		sleep 0.1
	done
}

# fh_ns CMD...: CMD in the file's mount namespace, as root.
fh_ns() {
	nsenter -t "$FH_HOLDER" -m -- "$@"
}

# The page's tagged blocks, in order: $FH_DIR/blocks/N.{section,who,mode,sh}.
# A tag is "first-hour: WHO [MODE]" (WHO user or root; "install root" is the
# install step); the block is the ```sh fence that follows it.
fh_blocks() {
	mkdir -p "$FH_DIR/blocks"
	awk -v out="$FH_DIR/blocks" '
		/^## [0-9]+\./ { section = $2 + 0 }
		/^<!-- first-hour: / {
			tag = $0; sub(/^<!-- first-hour: /, "", tag); sub(/ -->$/, "", tag); next
		}
		tag != "" && /^```sh$/ {
			n++; inblock = 1; split(tag, t, " "); tag = ""
			who = t[1]; mode = t[2]
			if (who == "install") { who = "root"; mode = "install" }
			f = out "/" n
			print section > (f ".section"); close(f ".section")
			print who > (f ".who"); close(f ".who")
			print mode > (f ".mode"); close(f ".mode")
			printf "" > (f ".sh")
			next
		}
		inblock && /^```$/ { inblock = 0; close(f ".sh"); next }
		inblock { print > (f ".sh") }' "$DOC"
}

setup() {
	requires root agentbox userns
	[ -z "${FH_SKIP:-}" ] || skip "$FH_SKIP"
	[ -n "${FH_USER:-}" ] || skip "no test user (needs root and useradd)"
	setup_state_only
}

teardown() {
	teardown_bundle
}

# blocks_of SECTION: the numbers of that section's blocks.
blocks_of() {
	local f
	for f in "$FH_DIR"/blocks/*.section; do
		[ "$(cat "$f")" = "$1" ] && basename "$f" .section
	done | sort -n
}

# run_block N: the block as its tag says, its output in $output, status in
# $status. WHO user: through `su -` in a login shell; root: a root shell.
run_block() {
	local n=$1 who mode script
	who=$(cat "$FH_DIR/blocks/$n.who")
	mode=$(cat "$FH_DIR/blocks/$n.mode")
	script=$(cat "$FH_DIR/blocks/$n.sh")
	case $mode in
	install)
		# the package's (or make install's) result: the tree's binaries on PATH
		script="install -D -m 0755 '$(realpath "$RUNTIME")' /usr/local/bin/agentbox &&
			install -D -m 0755 '$REPO_ROOT/agentbox-gateway' /usr/local/bin/agentbox-gateway"
		;;
	subids)
		script=${script% you}" $FH_USER"  # the page's placeholder for your user name
		;;
	esac
	echo "# block $n ($who${mode:+ $mode}):" >&2
	printf '%s\n' "$script" | sed 's/^/#   /' >&2
	if [ "$who" = user ]; then
		run timeout -k 5 120 nsenter -t "$FH_HOLDER" -m -- su - "$FH_USER" -c "$script"
	else
		run timeout -k 5 120 nsenter -t "$FH_HOLDER" -m -- bash -c "cd '$REPO_ROOT' && $script"
	fi
	echo "# status $status: $output" >&2
}

@test "first hour 1: installed, agentbox is on a login shell's PATH; the user gets a range of subordinate ids nobody else has" {
	local n blocks
	blocks=$(blocks_of 1)
	[ "$(wc -w <<<"$blocks")" = 4 ] || fail "section 1 has blocks: $blocks"
	set -- $blocks
	run_block "$1"
	assert_success
	run_block "$2"
	assert_success
	[[ "$output" == "agentbox version "* ]] || fail "not found on the user's PATH? $output"
	run_block "$3"
	assert_success
	assert_output_contains "no range"
	run_block "$4"
	assert_success
	# the range given overlaps no one else's, in either file
	local line first count
	line=$(fh_ns grep "^$FH_USER:" /etc/subuid)
	first=$(cut -d: -f2 <<<"$line")
	count=$(cut -d: -f3 <<<"$line")
	[ "$count" = 65536 ] && [ "$first" -ge 100000 ]
	! fh_ns awk -F: -v u="$FH_USER" -v f="$first" -v l="$((first + 65535))" \
		'$1 != u && $2 <= l && $2 + $3 - 1 >= f { print; found = 1 } END { exit !found }' /etc/subuid /etc/subgid ||
		fail "the range is taken"
	fh_ns grep -q "^$FH_USER:$first:65536$" /etc/subgid
	run_block "$3"
	assert_success
	refute_output_contains "no range"
}

@test "first hour 2: kit show names the user the box runs as; a kit run as yourself writes files that are yours" {
	set -- $(blocks_of 2)
	run_block "$1"
	assert_success
	assert_output_contains "#   user: 0:0 (default rootless: root of your user namespace, you on the host)"
	assert_output_contains "#   egress allow: example.com:80"
	run_block "$2"
	assert_success
	[ "${lines[0]}" = 0 ]
	[[ "${lines[1]}" == *" $FH_USER $FH_USER "*"note.txt" ]] || fail "$output"
	[ "$(cat "$FH_HOME/hello/note.txt")" = written-in-the-box ]
}

@test "first hour 3: a refusal fails at once and says why, at the end of the run and inside the box" {
	set -- $(blocks_of 3)
	local seen
	seen=$(wc -l <"$FH_DIR/dnsmasq.log")
	run_block "$1"
	assert_failure
	assert_output_contains "The requested URL returned error: 403"
	assert_output_contains "  proxy example.org:80  not-allowed: not on the allowlist; allow it with --allow example.org:80 or the kit's network.allow"
	# the name never reached the resolver
	! tail -n +$((seen + 1)) "$FH_DIR/dnsmasq.log" | grep -q 'query\[A\] example.org' || fail "example.org reached the upstream"
	run_block "$2"
	assert_success
	assert_output_contains '"error":"agentbox egress policy: example.org port 80/tcp is not on the allowlist; the user can allow it: agentbox egress allow kit-'
	assert_output_contains '"proto":"proxy","name":"example.org","port":80,"reason":"not-allowed"'
	assert_output_contains '"allow":"agentbox egress allow kit-'
}

@test "first hour 4: the box's name is enough to read its log and allow a name while it runs; the box reaches it at once" {
	set -- $(blocks_of 4)
	[ "$(cat "$FH_DIR/blocks/$1.mode")" = background ]
	# terminal 1
	local script
	script=$(cat "$FH_DIR/blocks/$1.sh")
	nsenter -t "$FH_HOLDER" -m -- timeout -k 5 120 su - "$FH_USER" -c "$script" >"$FH_DIR/t1.out" 2>&1 </dev/null 3>&- &
	local t1=$! i
	for ((i = 0; i < 300; i++)); do
		grep -q "returned error: 403" "$FH_DIR/t1.out" && break
		sleep 0.1
	done
	grep -q "returned error: 403" "$FH_DIR/t1.out" || { kill $t1; fail "terminal 1: $(cat "$FH_DIR/t1.out")"; }
	# terminal 2
	run_block "$2"
	assert_success
	assert_output_contains "example.org"
	assert_output_matches 'allow +example\.org:80'
	local st=0
	wait $t1 || st=$?
	[ "$st" = 0 ] || fail "terminal 1 ended with $st: $(cat "$FH_DIR/t1.out")"
	grep -qx reached "$FH_DIR/t1.out" || fail "terminal 1: $(cat "$FH_DIR/t1.out")"
	# an allow written as a URL is refused, naming the entry to write
	run nsenter -t "$FH_HOLDER" -m -- su - "$FH_USER" -c 'cd ~/hello && agentbox kit run --allow https://example.org kit.yaml -- true'
	assert_failure 1
	assert_output_contains "not a URL: write example.org:443"
}

@test "first hour 5: a named box keeps its home for the next run; kit ls lists it (also through sudo -u), kit rm removes it" {
	set -- $(blocks_of 5)
	run_block "$1"
	assert_success
	[ "${lines[0]}" = remembered ] || fail "$output"
	[[ "$output" == *$'\n'hello\ * ]] || fail "kit ls: $output"
	# the same user through sudo -u, in the project
	run nsenter -t "$FH_HOLDER" -m -- sh -c "cd '$FH_HOME/hello' && sudo -u '$FH_USER' agentbox kit ls -q"
	assert_success
	[ "$output" = hello ]
	run_block "$2"
	assert_success
	run nsenter -t "$FH_HOLDER" -m -- su - "$FH_USER" -c 'agentbox kit ls -q'
	assert_success
	[ -z "$output" ]
}

@test "first hour 6: agentbox setup registers the installed binary with Docker" {
	set -- $(blocks_of 6)
	[ "$#" = 1 ]
	fh_ns /usr/local/bin/agentbox setup --help >/dev/null 2>&1 ||
		skip "agentbox setup is not in this build (the Debian package's branch brings it)"
	run_block "$1"
	assert_success
	run fh_ns jq -r '.runtimes.agentbox.path' /etc/docker/daemon.json
	assert_success
	[ "$output" = /usr/local/bin/agentbox ] || fail "daemon.json: $output"
}
