#!/usr/bin/env bats
# Abuse from inside: a container that forks without end, eats memory, fills its
# disk or floods its DNS sentry hits its own limits; the host, the runtime and
# the sentry stay fine, and delete still cleans up.

load helpers

setup() {
	requires root agentbox
	setup_bundle
	agent_policy default
}

teardown() {
	teardown_bundle
}

# cgroup_file CONTROLLER FILE: a file of this test's cgroup (v1 hierarchy or unified)
cgroup_file() {
	local f
	for f in "/sys/fs/cgroup/$1$CGROUP_PATH/$2" "/sys/fs/cgroup/unified$CGROUP_PATH/$2" "/sys/fs/cgroup$CGROUP_PATH/$2"; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

@test "abuse: a fork bomb stops at pids.limit; the runtime and host stay in control" {
	update_config '.linux.resources.pids.limit = 32'
	set_args abtest forkbomb 100000
	run_container bomb
	assert_success
	# it got some, then EAGAIN — never more than the limit
	[[ "$stdout" =~ forked=([0-9]+)\ error=EAGAIN ]] || fail "unexpected: $stdout"
	[ "${BASH_REMATCH[1]}" -lt 32 ]
	# and a bomb that keeps its children: still killed and deleted at once
	set_args sh -c 'abtest forkbomb 100000 & abtest pause ready'
	run_container bomb2 --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pids
	pids=$(cat "$(cgroup_file pids pids.current)")
	[ "$pids" -le 32 ]
	runtime delete --force bomb2
	assert_success
	assert_host_clean
}

@test "abuse: a memory hog is OOM-killed at its limit and agentbox events reports {\"type\":\"oom\"}" {
	requires cc
	local hog=$BATS_RUN_TMPDIR/memhog
	[ -x "$hog" ] || cc -O2 -static -o "$hog" "$BATS_TEST_DIRNAME/memhog.c"
	cp "$hog" "$BUNDLE/rootfs/bin/memhog"
	# 32 MiB, no swap; the hog is a child, so the container outlives it
	update_config '.linux.resources.memory.limit = 33554432 | .linux.resources.memory.swap = 33554432'
	set_args sh -c 'read go; memhog 512; echo hog=$?; abtest pause'
	mkfifo "$TEST_DIR/go"
	exec 5<>"$TEST_DIR/go"
	runtime create --bundle "$BUNDLE" hog <"$TEST_DIR/go"
	assert_success
	local out=$RT_STDOUT
	local events=$TEST_DIR/events.json
	timeout 60 "$RUNTIME" --root "$ROOT" events --interval 1s hog >"$events" 2>&1 3>&- &
	local evpid=$!
	defer kill "$evpid"
	wait_for_line "$events" '"type":"stats"'
	runtime start hog
	assert_success
	echo go >&5
	wait_for_line "$events" '"type":"oom"' 30
	# the kernel killed the hog, the one that went over
	wait_for_line "$out" '^hog=137$'
	grep -qxF '{"type":"oom","id":"hog"}' "$events"
	# the container itself is still there, and the runtime manages it
	runtime state hog
	assert_success
	[ "$(jq -r .status <<<"$stdout")" = running ]
	runtime delete --force hog
	assert_success
	exec 5>&-
	assert_host_clean
}

@test "abuse: a write that fills a sized tmpfs gets ENOSPC inside; nothing spills to the host" {
	add_mount /data tmpfs tmpfs size=1m,mode=1777
	set_args sh -c 'dd if=/dev/zero of=/data/fill bs=64k count=1000 2>&1; echo dd=$?; du -k /data/fill'
	# what a spill would grow: the bundle (the rootfs where /data would
	# be a plain directory), not the whole disk, which other work shares
	local before
	before=$(du -sk "$BUNDLE" | cut -f1)
	run_container fill
	assert_success
	assert_output_contains 'No space left on device'
	assert_output_matches 'dd=[1-9]'
	# what it got is the tmpfs' size, not more
	local kb
	kb=$(awk '$2 == "/data/fill" { print $1 }' <<<"$stdout")
	[ "$kb" -le 1024 ]
	# the host's disk got none of it (the state the run writes is small)
	local after
	after=$(du -sk "$BUNDLE" | cut -f1)
	[ $((after - before)) -lt 256 ] || fail "the bundle grew by $((after - before)) KiB"
	assert_host_clean
}

# dns_flood PID SECONDS: from the container's network namespace, as fast as it
# goes: queries for names not allowed, for an allowed name (forwarded to an
# upstream that is not there), malformed packets, and TCP connections that are
# opened and left idle. Prints "sent=N".
dns_flood() {
	nsenter -t "$1" -n "$PYTHON" - "$2" <<'PY'
import random, socket, struct, sys, time
end = time.time() + float(sys.argv[1])
def q(name, qid):
    b = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        b += bytes([len(l)]) + l.encode()
    return b + b"\0" + struct.pack(">HH", 1, 1)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setblocking(False)
tcp = []
sent = 0
while time.time() < end:
    for i in range(200):
        r = random.random()
        if r < 0.6:
            m = q("n%d.flood.invalid" % random.randrange(1 << 30), random.randrange(65536))
        elif r < 0.9:
            m = q("example.test", random.randrange(65536))
        else:
            m = bytes(random.randrange(256) for _ in range(random.randrange(1, 600)))
        try:
            u.sendto(m, ("127.0.0.1", 53))
            sent += 1
        except OSError:
            pass
        try:
            while True:
                u.recv(4096)
        except OSError:
            pass
    if len(tcp) < 64:
        try:
            t = socket.create_connection(("127.0.0.1", 53), timeout=0.2)
            tcp.append(t)
        except OSError:
            pass
print("sent=%d tcp=%d" % (sent, len(tcp)))
PY
}

# dns_ask PID NAME: one query; prints the rcode of the answer, or "timeout"
dns_ask() {
	nsenter -t "$1" -n "$PYTHON" - "$2" <<'PY'
import socket, struct, sys
b = struct.pack(">HHHHHH", 4242, 0x0100, 1, 0, 0, 0)
for l in sys.argv[1].split("."):
    b += bytes([len(l)]) + l.encode()
b += b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(b, ("127.0.0.1", 53))
try:
    r = s.recv(4096)
    print("rcode=%d" % (struct.unpack(">H", r[2:4])[0] & 0xf))
except socket.timeout:
    print("timeout")
PY
}

rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }

@test "abuse: a DNS flood at the sentry: it keeps answering, its memory, fds and log stay bounded" {
	requires tty   # python3
	# an upstream on the container's loopback where nothing listens: the sentry
	# serves DNS, and nothing it forwards ever leaves the namespace
	echo "nameserver 127.0.0.53" >"$BUNDLE/rootfs/etc/resolv.conf"
	RUNTIME_ARGS=(--egress-allow example.test)
	set_args abtest pause ready
	run_container flood --detach
	assert_success
	wait_for_line "$RT_STDOUT" '^ready$'
	local pid sentry
	pid=$(state_field flood .pid)
	sentry=$(jq -r .sentryPid "$ROOT/flood/state.json")
	[ "$sentry" -gt 0 ]
	# no engine set up this namespace: bring its loopback up, as one would
	nsenter -t "$pid" -n ip link set lo up
	[ "$(dns_ask "$pid" not-allowed.invalid)" = rcode=3 ]
	local rss0 fds0
	rss0=$(rss_kb "$sentry")
	fds0=$(ls "/proc/$sentry/fd" | wc -l)
	run dns_flood "$pid" 8
	echo "$output" >&2
	[[ "$output" == sent=* ]]
	# still answering, at once: NXDOMAIN for a name it does not allow
	[ "$(dns_ask "$pid" still-there.invalid)" = rcode=3 ]
	kill -0 "$sentry"
	local rss1 fds1 log
	rss1=$(rss_kb "$sentry")
	fds1=$(ls "/proc/$sentry/fd" | wc -l)
	echo "sentry VmRSS ${rss0} kB -> ${rss1} kB, fds $fds0 -> $fds1" >&2
	# bounded: no more than 4 MiB more than before, fds within its fixed tables
	[ "$rss1" -le $((rss0 + 4096)) ]
	[ "$fds1" -le $((fds0 + 8 + 32 + 4)) ]
	# the deny log is rate-limited and capped (16 MiB)
	log=$(stat -c %s "$ROOT/flood/egress.log" 2>/dev/null || echo 0)
	[ "$log" -le $((16 * 1024 * 1024)) ]
	runtime delete --force flood
	assert_success
	assert_host_clean
}
