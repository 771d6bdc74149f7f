#!/bin/bash
# engines-up.sh [-d DIR] ENGINE... — start private container engines that use agentbox.
#
# ENGINE is docker, containerd, podman, podman-netavark or podman-rootless
# (docker implies containerd). Everything lives under DIR (default: a new
# /tmp/abe.XXXXXX): a private containerd (own root, state, sockets, with a CRI
# runtime handler "agentbox"), a private dockerd (own --data-root,
# --exec-root, -H socket, --pidfile, bridge abdock0 on 198.18.0.1/24, no
# iptables, agentbox registered in a daemon.json), and podman with the stock
# containers.conf plus the documented additions in a drop-in of
# /etc/containers/containers.conf.d (removed by engines-down), private
# storage, run and tmp dirs on its command line (PODMAN_OPTS), the CNI
# backend pinned, CNI bridge abpod0 on 198.19.88.0/24. Nothing system-wide is
# started or stopped; a system dockerd, if any, is left alone.
# Engine podman-netavark is podman with the netavark backend, pinned, in a
# "podman host" of its own (network and mount namespaces held by one process):
# netavark's bridges and iptables rules, aardvark-dns and the host resolver
# that resolv.conf names there stay out of the machine's. Docker and
# podman-netavark each get resolvers that alone know some names (a company's
# split DNS) and web servers those names point at.
# Every engine gets the image agentbox-test:latest, imported from a rootfs
# built here from busybox-static and tests/helper/abtest.
#
# Writes DIR/env, a file for `source`, and prints DIR. For each ENGINE it sets
# <ENGINE>_OK=1, or <ENGINE>_SKIP="why it could not start" (then exit status
# is still 0 — the tests skip with that reason). Exit status 1 only when DIR
# itself cannot be set up. Stop and clean everything with engines-down.sh DIR,
# also after a failure here.
#
# Environment: AGENTBOX (the runtime, default the repo's ./agentbox; the
# engines run a copy of it in DIR/bin),
# ENGINES_VERBOSE=1 to show the daemons' start-up on stderr.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
AGENTBOX_SRC=$(realpath "${AGENTBOX:-$REPO/agentbox}")
BUSYBOX=${AGENTBOX_TEST_BUSYBOX:-/bin/busybox}
ABTEST=$REPO/tests/helper/abtest
IMAGE=agentbox-test:latest
DOCKER_BRIDGE=abdock0
DOCKER_BRIDGE_CIDR=198.18.0.1/24
PODMAN_BRIDGE=abpod0
PODMAN_SUBNET=198.19.88.0/24

DIR=
while getopts d: o; do
	case $o in
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-d DIR] docker|containerd|podman|podman-netavark|podman-rootless..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-d DIR] docker|containerd|podman|podman-netavark|podman-rootless..." >&2; exit 2; }

if [ -z "$DIR" ]; then
	DIR=$(mktemp -d /tmp/abe.XXXXXX) || exit 1
else
	mkdir -p "$DIR" || exit 1
fi
DIR=$(realpath "$DIR")
ENV=$DIR/env
touch "$ENV"
chmod 700 "$DIR"

say() { [ -z "${ENGINES_VERBOSE:-}" ] || echo "engines-up: $*" >&2; }
setenv() { printf 'export %s=%q\n' "$1" "$2" >>"$ENV"; }

# The engines get a copy of the runtime: a concurrent `make` rewriting
# ./agentbox must not make a daemon's exec fail halfway through a test run.
copy_runtime() {
	local i
	mkdir -p "$DIR/bin" || return 1
	for i in 1 2 3 4 5; do
		cp "$AGENTBOX_SRC" "$DIR/bin/agentbox.new" && chmod 755 "$DIR/bin/agentbox.new" &&
			"$DIR/bin/agentbox.new" --version 2>/dev/null | grep -q '^agentbox version' &&
			mv "$DIR/bin/agentbox.new" "$DIR/bin/agentbox" && return 0
		sleep 1
	done
	return 1
}
if ! copy_runtime; then
	echo "engines-up.sh: cannot copy a working runtime from $AGENTBOX_SRC" >&2
	exit 1
fi
AGENTBOX=$DIR/bin/agentbox
setenv ENGINES_DIR "$DIR"
setenv AGENTBOX "$AGENTBOX"
setenv AGENTBOX_SRC "$AGENTBOX_SRC"
setenv TEST_IMAGE "$IMAGE"

# wait_until PID SECS CMD...: poll CMD every 0.1 s while process PID lives.
wait_until() {
	local pid=$1 secs=$2 i
	shift 2
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# remember_dir D: D did not exist before us; engines-down removes it if empty.
remember_dir() {
	[ -e "$1" ] || echo "$1" >>"$DIR/created-dirs"
}

# remember_cgroup NAME: the engines make /NAME in every hierarchy (docker,
# libpod_parent); engines-down removes what did not exist before, when unused.
remember_cgroup() {
	local h
	for h in /sys/fs/cgroup/*/; do
		[ -e "$h$1" ] && return 0
	done
	echo "$1" >>"$DIR/created-cgroups"
}

# ---------------------------------------------------------------- the image

build_rootfs() {
	local r=$DIR/rootfs
	[ -x "$r/bin/abtest" ] && return 0
	if [ ! -x "$ABTEST" ] || [ "$ABTEST.c" -nt "$ABTEST" ]; then
		make -s -C "$REPO" tests/helper/abtest >&2 || return 1
	fi
	[ -x "$BUSYBOX" ] || { echo "no static busybox at $BUSYBOX (apt-get install busybox-static)" >&2; return 1; }
	mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,root,run,var/tmp,usr/bin,usr/sbin} || return 1
	chmod 1777 "$r/tmp" "$r/var/tmp"
	cp "$BUSYBOX" "$r/bin/busybox" && cp "$ABTEST" "$r/bin/abtest" || return 1
	# one process for ~400 symlinks (a fork each is seconds on a loaded box)
	"$r/bin/busybox" --list | python3 -c '
import os, sys
d = sys.argv[1]
for app in sys.stdin.read().split():
    p = os.path.join(d, app)
    if not os.path.lexists(p):
        os.symlink("busybox", p)
' "$r/bin" || return 1
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'abuser:x:1000:1000:test user:/tmp:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$r/etc/passwd"
	printf '%s\n' 'root:x:0:' 'tty:x:5:' 'abgroup:x:1000:abuser' 'nogroup:x:65534:' >"$r/etc/group"
	echo '127.0.0.1 localhost' >"$r/etc/hosts"
	: >"$r/etc/resolv.conf"
	echo agentbox-test >"$r/etc/hostname"
	# content under dirs that a read-only container gets as tmpfs with tmpcopyup
	mkdir -p "$r/srv" && echo seed >"$r/srv/seed" && echo seed >"$r/var/tmp/seed"
}

# ---------------------------------------------------------------- test resolvers

# dns_world_serve NSENTER... -- ADDR...: in the namespace NSENTER... enters,
# the servers the DNS tests ask and reach, on addresses already there:
#   R1 (the first)  a resolver knowing split.test -> W1 and other.test -> W2
#   R2 (optional)   a resolver knowing daemon.test -> W1 and other.test -> W2
#   W1, W2          web servers on port 8080 ("hello-split", "hello-other")
# given as: R1 [R2] W1 W2. Their pids go to DIR/dns-world.pids.
dns_world_serve() {
	local enter=()
	while [ "$1" != -- ]; do enter+=("$1"); shift; done
	shift
	local r1=$1 r2= w1 w2
	[ $# -eq 4 ] && r2=$2
	w1=${*: -2:1}
	w2=${*: -1}
	local www=$DIR/dns-world-www
	mkdir -p "$www/split" "$www/other" && echo hello-split >"$www/split/index.html" &&
		echo hello-other >"$www/other/index.html" || return 1
	local dnsmasq=(dnsmasq -C /dev/null --no-resolv --no-hosts --keep-in-foreground --user=root --group=root --pid-file=
		--bind-interfaces --log-facility=-)
	"${enter[@]}" "${dnsmasq[@]}" --listen-address="$r1" --host-record="split.test,$w1,600" \
		--host-record="other.test,$w2,600" >>"$DIR/dns-world.log" 2>&1 </dev/null &
	echo $! >>"$DIR/dns-world.pids"
	if [ -n "$r2" ]; then
		"${enter[@]}" "${dnsmasq[@]}" --listen-address="$r2" --host-record="daemon.test,$w1,600" \
			--host-record="other.test,$w2,600" >>"$DIR/dns-world.log" 2>&1 </dev/null &
		echo $! >>"$DIR/dns-world.pids"
	fi
	"${enter[@]}" "$BUSYBOX" httpd -f -p "$w1:8080" -h "$www/split" </dev/null >/dev/null 2>&1 &
	echo $! >>"$DIR/dns-world.pids"
	"${enter[@]}" "$BUSYBOX" httpd -f -p "$w2:8080" -h "$www/other" </dev/null >/dev/null 2>&1 &
	echo $! >>"$DIR/dns-world.pids"
	local i
	for ((i = 0; i < 50; i++)); do
		"${enter[@]}" "$BUSYBOX" nslookup -type=a split.test "$r1" >/dev/null 2>&1 &&
			timeout 2 "${enter[@]}" "$BUSYBOX" wget -q -O /dev/null "http://$w2:8080/" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------- containerd

start_containerd() {
	[ -n "${CONTAINERD_STARTED:-}" ] && return 0
	CONTAINERD_STARTED=1
	local c=$DIR/containerd
	command -v containerd >/dev/null || { setenv CONTAINERD_SKIP "containerd is not installed"; return 1; }
	mkdir -p "$c/root" "$c/state" "$c/opt" "$c/cni" "$c/agentbox-root" "$c/runc-root" "$DIR/fifo" || return 1
	cat >"$c/config.toml" <<-EOF
		version = 2
		root = "$c/root"
		state = "$c/state"
		oom_score = 0

		[grpc]
		  address = "$DIR/containerd.sock"

		[ttrpc]
		  address = "$DIR/containerd.sock.ttrpc"

		[debug]
		  level = "info"

		[plugins."io.containerd.internal.v1.opt"]
		  path = "$c/opt"

		[plugins."io.containerd.grpc.v1.cri"]
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$c/cni"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentbox]
		      runtime_type = "io.containerd.runc.v2"
		      pod_annotations = ["agentbox.*"]
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentbox.options]
		        BinaryName = "$AGENTBOX"
		        Root = "$c/agentbox-root"
	EOF
	# the shims put their sockets and ctr its fifos under /run/containerd
	remember_dir /run/containerd
	remember_dir /run/containerd/s
	remember_dir /run/containerd/runc
	remember_dir /run/containerd/fifo
	say "starting containerd"
	containerd --config "$c/config.toml" >"$DIR/containerd.log" 2>&1 &
	echo $! >"$DIR/containerd.pid"
	if ! wait_until "$(cat "$DIR/containerd.pid")" 30 ctr --address "$DIR/containerd.sock" version; then
		setenv CONTAINERD_SKIP "containerd did not start (see $DIR/containerd.log): $(tail -n 3 "$DIR/containerd.log" | tr '\n' ' ')"
		return 1
	fi
	setenv CONTAINERD_ADDRESS "$DIR/containerd.sock"
	setenv CONTAINERD_FIFO_DIR "$DIR/fifo"
	setenv CONTAINERD_RUNC_ROOT "$c/runc-root"
	setenv CONTAINERD_CONFIG "$c/config.toml"
	setenv CONTAINERD_OK 1
	return 0
}

import_containerd() {
	python3 "$HERE/mkimage.py" "$DIR/rootfs" "$DIR/image-oci.tar" "docker.io/library/$IMAGE" &&
		ctr --address "$DIR/containerd.sock" -n default images import "$DIR/image-oci.tar" >&2 &&
		rm -f "$DIR/image-oci.tar"
}

# ---------------------------------------------------------------- docker

start_docker() {
	local d=$DIR/docker
	command -v dockerd >/dev/null && [ -x /usr/bin/docker ] ||
		{ setenv DOCKER_SKIP "dockerd or /usr/bin/docker is not installed (apt-get install docker.io)"; return 1; }
	start_containerd || { setenv DOCKER_SKIP "dockerd needs containerd, which did not start"; return 1; }
	mkdir -p "$d/data" "$d/exec" || return 1
	cat >"$d/daemon.json" <<-EOF
		{
		  "deprecated-key-path": "$d/key.json",
		  "runtimes": {
		    "agentbox": { "path": "$AGENTBOX" },
		    "agentbox-open": { "path": "$AGENTBOX", "runtimeArgs": ["--egress-allow", "198.18.0.0/15,*.abnet.test"] },
		    "agentbox-relaxed": { "path": "$AGENTBOX", "runtimeArgs": ["--seccomp-profile", "default"] },
		    "agentbox-dns": { "path": "$AGENTBOX", "runtimeArgs": ["--egress-internal", "$DOCKER_DNS_WORLD",
		                      "--egress-allow", "split.test,daemon.test"] }
		  },
		  "dns": ["$DOCKER_DAEMON_DNS"]
		}
	EOF
	remember_cgroup docker
	# our own bridge for the default network, so docker0 and 172.17/16 are never touched
	if ! ip link show "$DOCKER_BRIDGE" >/dev/null 2>&1; then
		ip link add "$DOCKER_BRIDGE" type bridge && echo "$DOCKER_BRIDGE" >>"$DIR/created-links" &&
			ip addr add "$DOCKER_BRIDGE_CIDR" dev "$DOCKER_BRIDGE" && ip link set "$DOCKER_BRIDGE" up ||
			{ setenv DOCKER_SKIP "cannot create the bridge $DOCKER_BRIDGE"; return 1; }
	fi
	# dockerd runs with --ip-forward=false (it must not change the host), and then
	# its client prints "WARNING: IPv4 forwarding is disabled" on every run's
	# stderr when the host has forwarding off (a fresh machine). Turned on for
	# the run like a default dockerd would, and restored by engines-down.sh.
	if [ "$(cat /proc/sys/net/ipv4/ip_forward)" = 0 ]; then
		echo 1 >/proc/sys/net/ipv4/ip_forward && echo 0 >"$DIR/ip_forward.orig"
	fi
	start_docker_dns || { setenv DOCKER_SKIP "cannot start the resolvers of the DNS tests (see $DIR/dns-world.log)"; return 1; }
	say "starting dockerd"
	dockerd --config-file "$d/daemon.json" \
		--data-root "$d/data" --exec-root "$d/exec" \
		-H "unix://$DIR/docker.sock" --pidfile "$DIR/dockerd.pid" \
		--containerd "$DIR/containerd.sock" \
		--bridge "$DOCKER_BRIDGE" --iptables=false --ip-forward=false --ip-masq=false \
		--userland-proxy=false --default-address-pool base=198.19.0.0/17,size=24 \
		--storage-driver overlay2 --log-level warn \
		>"$DIR/dockerd.log" 2>&1 &
	echo $! >"$DIR/dockerd.spawned.pid"
	if ! wait_until "$(cat "$DIR/dockerd.spawned.pid")" 60 env DOCKER_HOST="unix://$DIR/docker.sock" /usr/bin/docker version; then
		setenv DOCKER_SKIP "dockerd did not start (see $DIR/dockerd.log): $(tail -n 3 "$DIR/dockerd.log" | tr '\n' ' ')"
		return 1
	fi
	setenv DOCKER_HOST "unix://$DIR/docker.sock"
	setenv DOCKER_EXEC_ROOT "$d/exec"
	setenv DOCKER /usr/bin/docker
	setenv DOCKER_OK 1
}

# The resolvers a container on a Docker network reaches through its gateway
# (the host, which forwards: ip_forward is on for the run), in a network
# namespace of their own held by a process (not a name in /run/netns, which
# anyone's `ip netns` may remount): $DOCKER_DNS (asked with --dns) and
# $DOCKER_DAEMON_DNS (daemon.json's dns), web servers on .164 and .165
# (dns_world_serve).
DOCKER_DNS_WORLD=198.18.47.160/28
DOCKER_DNS=198.18.47.162
DOCKER_DAEMON_DNS=198.18.47.163
start_docker_dns() {
	unshare --net -- sh -c 'ip link set lo up && exec sleep infinity' </dev/null >/dev/null 2>&1 &
	local holder=$!
	echo "$holder" >>"$DIR/dns-world.pids"
	local enter="nsenter -t $holder -n"
	wait_until "$holder" 10 $enter sh -c 'ip -o link show lo | grep -q UP' || return 1
	ip link add abdkdns0 type veth peer name eth0 netns "$holder" && echo abdkdns0 >>"$DIR/created-links" &&
		ip addr add 198.18.47.161/28 dev abdkdns0 && ip link set abdkdns0 up || return 1
	local a
	for a in 162 163 164 165; do
		$enter ip addr add "198.18.47.$a/28" dev eth0 || return 1
	done
	$enter ip link set eth0 up && $enter ip route add default via 198.18.47.161 &&
		dns_world_serve $enter -- $DOCKER_DNS $DOCKER_DAEMON_DNS 198.18.47.164 198.18.47.165 || return 1
	setenv DOCKER_DNS "$DOCKER_DNS"
	setenv DOCKER_DAEMON_DNS "$DOCKER_DAEMON_DNS"
}

import_docker() {
	tar -C "$DIR/rootfs" -c . |
		DOCKER_HOST="unix://$DIR/docker.sock" /usr/bin/docker import -c 'CMD ["/bin/sh"]' - "$IMAGE" >&2
}

# ---------------------------------------------------------------- podman

# Podman as it ships: Debian's /usr/share/containers/containers.conf, plus only
# the lines docs/engines.md tells users to add, in a drop-in of
# /etc/containers/containers.conf.d (never CONTAINERS_CONF, which would hide the
# stock defaults such as default_sysctls). What keeps the run private is given
# on podman's command line (PODMAN_OPTS): storage, run and tmp dirs, volumes,
# the CNI config dir with our bridge network named "podman", the events log.
PODMAN_DROPIN_DIR=/etc/containers/containers.conf.d
podman_dropin() {
	local initp
	# podman --init wants catatonit, not packaged here; tini (docker-init) does the same job
	initp=$(command -v docker-init || command -v tini-static || echo /usr/libexec/podman/catatonit)
	# rlimits: rootful podman asks for nofile and nproc 1048576, above this
	# machine's hard limits (no CAP_SYS_RESOURCE): runc fails on that too
	cat <<-EOF
		# the documented additions (docs/engines.md, Podman), for agentbox's engine tests
		[containers]
		default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
		init_path = "$initp"

		[engine]
		runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "agentbox"]
		runtime_supports_nocgroup = ["crun", "krun", "agentbox"]

		[engine.runtimes]
		agentbox = ["$AGENTBOX"]
	EOF
}

# The drop-in, once for podman and podman-netavark.
PODMAN_DROPIN=
start_podman_dropin() {
	[ -z "$PODMAN_DROPIN" ] || return 0
	[ -f /usr/share/containers/containers.conf ] || return 1
	if [ ! -d "$PODMAN_DROPIN_DIR" ]; then
		mkdir -p "$PODMAN_DROPIN_DIR" && echo "$PODMAN_DROPIN_DIR" >>"$DIR/created-dirs" || return 1
	fi
	local dropin=$PODMAN_DROPIN_DIR/zz-agentbox-tests-${DIR##*/}.conf
	podman_dropin >"$dropin" && echo "$dropin" >>"$DIR/created-files" || return 1
	PODMAN_DROPIN=$dropin
	setenv PODMAN_DROPIN "$dropin"
}

start_podman() {
	local p=$DIR/podman
	command -v podman >/dev/null && command -v conmon >/dev/null ||
		{ setenv PODMAN_SKIP "podman or conmon is not installed (apt-get install podman conmon)"; return 1; }
	[ -f /usr/share/containers/containers.conf ] ||
		{ setenv PODMAN_SKIP "no stock /usr/share/containers/containers.conf (package golang-github-containers-common)"; return 1; }
	mkdir -p "$p/root" "$p/runroot" "$p/tmp" "$p/volumes" "$p/cni" "$p/cni-data" || return 1
	start_podman_dropin || return 1
	cat >"$p/storage.conf" <<-EOF
		[storage]
		driver = "overlay"
		runroot = "$p/runroot"
		graphroot = "$p/root"
	EOF
	cat >"$p/cni/87-podman.conflist" <<-EOF
		{
		  "cniVersion": "0.4.0",
		  "name": "podman",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "$PODMAN_BRIDGE",
		      "isGateway": true,
		      "ipMasq": false,
		      "hairpinMode": true,
		      "ipam": {
		        "type": "host-local",
		        "dataDir": "$p/cni-data",
		        "routes": [{ "dst": "0.0.0.0/0" }],
		        "ranges": [[{ "subnet": "$PODMAN_SUBNET", "gateway": "${PODMAN_SUBNET%.0/24}.1" }]]
		      }
		    }
		  ]
		}
	EOF
	ip link show "$PODMAN_BRIDGE" >/dev/null 2>&1 || echo "$PODMAN_BRIDGE" >>"$DIR/created-links"
	remember_cgroup libpod_parent
	setenv CONTAINERS_STORAGE_CONF "$p/storage.conf"
	setenv PODMAN_ROOT "$p/root"
	setenv PODMAN_RUNROOT "$p/runroot"
	setenv PODMAN_OPTS "--root $p/root --runroot $p/runroot --tmpdir $p/tmp --volumepath $p/volumes --network-backend cni --network-config-dir $p/cni --cgroup-manager cgroupfs --events-backend file"
	# podman is daemonless: the import (below) is its first run and its check
	setenv PODMAN_OK 1
}

import_podman() {
	local p=$DIR/podman
	tar -C "$DIR/rootfs" -c . |
		CONTAINERS_STORAGE_CONF="$p/storage.conf" \
			podman --root "$p/root" --runroot "$p/runroot" --tmpdir "$p/tmp" --volumepath "$p/volumes" \
			--network-backend cni --network-config-dir "$p/cni" --cgroup-manager cgroupfs --events-backend file \
			import --change 'CMD=["/bin/sh"]' - "$IMAGE" >&2
}

# ---------------------------------------------------------------- podman with netavark

# Podman with netavark, the backend podman 4 picks where it is installed: a
# "podman host" of its own, a process (DIR/podman-nv.pid) holding a network
# namespace and a private mount namespace, which every podman command of
# these tests enters (PODMAN_NV_ENTER). In it: netavark's bridges, its
# iptables rules (port forwarding, masquerade), aardvark-dns, conmon and the
# runtime; tmpfs over /run/containers/networks, /run/netns and the runtime's
# own pins (netavark's state, aardvark's config, podman's netns files, the
# runtime's netns pool: bind mounts the machine's mount namespace would not
# see behind their files); a resolv.conf of its own naming the host resolver
# of dns_world_serve, on its loopback with the web servers: 198.18.47.180
# (resolver), .181 (split.test), .182 (other.test). Its default network
# "podman" is 198.18.47.64/26 (bridge abnv0); storage, run and tmp dirs are
# private as for CNI.
PODMAN_NV_HOST_DNS=198.18.47.180
start_podman_netavark() {
	local p=$DIR/podman-nv
	command -v podman >/dev/null && command -v conmon >/dev/null ||
		{ setenv PODMAN_NETAVARK_SKIP "podman or conmon is not installed"; return 1; }
	[ -x /usr/lib/podman/netavark ] && [ -x /usr/lib/podman/aardvark-dns ] ||
		{ setenv PODMAN_NETAVARK_SKIP "netavark and aardvark-dns are not installed (apt-get install netavark aardvark-dns)"; return 1; }
	command -v iptables >/dev/null || { setenv PODMAN_NETAVARK_SKIP "netavark needs iptables"; return 1; }
	start_podman_dropin || { setenv PODMAN_NETAVARK_SKIP "no stock /usr/share/containers/containers.conf"; return 1; }
	# tmpfs over these in the podman host: what netavark, podman and the
	# runtime pin or note there (netns files, the runtime's pool of network
	# namespaces and hook anchor, bind mounts that exist only in the podman
	# host's mount namespace) must never be met by the machine's own; on the
	# machine they are empty dirs at most
	local d private="/run/containers/networks /run/netns /run/agentbox-netns /run/agentbox-netfilter"
	remember_dir /run/containers
	for d in $private; do
		remember_dir "$d"
		# (the runtime's own dirs only for root, as it makes them)
		[ -d "$d" ] || mkdir -p -m 0700 "$d" || return 1
	done
	mkdir -p "$p/root" "$p/runroot" "$p/tmp" "$p/volumes" "$p/net" || return 1
	echo "nameserver $PODMAN_NV_HOST_DNS" >"$p/resolv.conf"
	# the default network, pinned to our subnet (podman's id for "podman")
	cat >"$p/net/podman.json" <<-EOF
		{
		  "name": "podman",
		  "id": "2f259bab93aaaaa2542ba43ef33eb990d0999ee1b9924b557b7be53c0b7a1bb9",
		  "driver": "bridge",
		  "network_interface": "abnv0",
		  "created": "2024-01-01T00:00:00Z",
		  "subnets": [{ "subnet": "198.18.47.64/26", "gateway": "198.18.47.65" }],
		  "ipv6_enabled": false,
		  "internal": false,
		  "dns_enabled": false,
		  "ipam_options": { "driver": "host-local" }
		}
	EOF
	unshare --mount --net --propagation private -- sh -c '
		resolv=$1
		shift
		for d in "$@"; do mount -t tmpfs -o mode=0700 tmpfs "$d" || exit 1; done
		mount --bind "$resolv" /etc/resolv.conf &&
		ip link set lo up && ip addr add 198.18.47.180/32 dev lo && ip addr add 198.18.47.181/32 dev lo &&
		ip addr add 198.18.47.182/32 dev lo || exit 1
		exec sleep infinity' sh "$p/resolv.conf" $private </dev/null >"$DIR/podman-nv.log" 2>&1 &
	local holder=$!
	echo "$holder" >"$DIR/podman-nv.pid"
	local enter="nsenter -t $holder -m -n"
	wait_until "$holder" 10 $enter sh -c "ip -4 -o addr show to 198.18.47.182 | grep -q ." ||
		{ setenv PODMAN_NETAVARK_SKIP "cannot make the podman host (see $DIR/podman-nv.log)"; return 1; }
	dns_world_serve $enter -- $PODMAN_NV_HOST_DNS 198.18.47.181 198.18.47.182 ||
		{ setenv PODMAN_NETAVARK_SKIP "cannot start the host resolver (see $DIR/dns-world.log)"; return 1; }
	PODMAN_NV_ENTER=$enter
	PODMAN_NV_OPTS="--root $p/root --runroot $p/runroot --tmpdir $p/tmp --volumepath $p/volumes --storage-driver overlay --network-backend netavark --network-config-dir $p/net --cgroup-manager cgroupfs --events-backend file"
	remember_cgroup libpod_parent
	setenv PODMAN_NV_ENTER "$PODMAN_NV_ENTER"
	setenv PODMAN_NV_OPTS "$PODMAN_NV_OPTS"
	setenv PODMAN_NV_HOST_DNS "$PODMAN_NV_HOST_DNS"
	setenv PODMAN_NETAVARK_OK 1
}

import_podman_netavark() {
	# shellcheck disable=SC2086
	tar -C "$DIR/rootfs" -c . | (cd "$DIR" && $PODMAN_NV_ENTER podman $PODMAN_NV_OPTS \
		import --change 'CMD=["/bin/sh"]' - "$IMAGE") >&2
}

# ---------------------------------------------------------------- rootless podman

# Rootless Podman as a workstation user has it: a user made for the run
# (abrl-pNNNN) with a subordinate uid/gid range of its own, its runtime
# directory (what pam_systemd makes at login), Podman's defaults for a user
# (storage in its home, slirp4netns as the default network) and the stock
# containers.conf plus only the documented additions in the user's
# ~/.config/containers/containers.conf. The user runs a copy of the runtime in a
# directory it can reach (DIR is root's). /dev/net/tun, 0600 on this machine
# kind (slirp4netns fails on that with every runtime), is opened for the run;
# engines-down.sh puts its mode back and removes the user with its files.
start_podman_rootless() {
	command -v podman >/dev/null && command -v slirp4netns >/dev/null && command -v newuidmap >/dev/null ||
		{ setenv PODMAN_ROOTLESS_SKIP "needs podman, slirp4netns and newuidmap (apt-get install podman slirp4netns uidmap)"; return 1; }
	[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
		{ setenv PODMAN_ROOTLESS_SKIP "user namespaces are disabled (user.max_user_namespaces=0)"; return 1; }
	PR_USER=abrl-p$$
	local sub=$((1964000000 + ($$ % 500) * 65536 + 32768000))
	useradd -m -K SUB_UID_COUNT=0 -K SUB_GID_COUNT=0 -s /bin/sh "$PR_USER" >&2 ||
		{ setenv PODMAN_ROOTLESS_SKIP "useradd $PR_USER failed"; return 1; }
	echo "$PR_USER" >>"$DIR/created-users"
	usermod --add-subuids "$sub-$((sub + 65535))" --add-subgids "$sub-$((sub + 65535))" "$PR_USER" >&2 || return 1
	local uid home
	uid=$(id -u "$PR_USER")
	home=$(getent passwd "$PR_USER" | cut -d: -f6)
	local xdg=/run/user/$uid
	remember_dir /run/user
	mkdir -p "$xdg" && chown "$PR_USER:" "$xdg" && chmod 700 "$xdg" || return 1
	local bin
	bin=$(mktemp -d /tmp/abrl-prt.XXXXXX) && echo "$bin" >>"$DIR/created-trees" || return 1
	chmod 755 "$bin" && cp "$AGENTBOX" "$bin/agentbox" && chmod 755 "$bin/agentbox" || return 1
	if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
		stat -c %a /dev/net/tun >"$DIR/tun.mode" && chmod 666 /dev/net/tun || return 1
	fi
	mkdir -p "$home/.config/containers" || return 1
	cat >"$home/.config/containers/containers.conf" <<-EOF
		# the documented additions (docs/engines.md, rootless Podman)
		[engine]
		runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "agentbox"]
		runtime_supports_nocgroup = ["crun", "krun", "agentbox"]

		[engine.runtimes]
		agentbox = ["$bin/agentbox"]
	EOF
	chown -R "$PR_USER:" "$home/.config"
	setenv PR_USER "$PR_USER"
	setenv PR_UID "$uid"
	setenv PR_HOME "$home"
	setenv PR_XDG "$xdg"
	setenv PR_AGENTBOX "$bin/agentbox"
	setenv PODMAN_ROOTLESS_OK 1
}

import_podman_rootless() {
	tar -C "$DIR/rootfs" -c . | (cd / && runuser -u "$PR_USER" -- env -i PATH=/usr/bin:/bin HOME="$(getent passwd "$PR_USER" | cut -d: -f6)" \
		XDG_RUNTIME_DIR="/run/user/$(id -u "$PR_USER")" podman import --change 'CMD=["/bin/sh"]' - "$IMAGE") >&2
}

# ---------------------------------------------------------------- main

[ "$(id -u)" = 0 ] || { echo "engines-up.sh: needs root" >&2; exit 1; }

# One engine test run at a time on a host: the bridges and subnets are fixed.
# The lock is a directory naming its owner's DIR and the pid of the process that
# started the engines (bats, or a shell). It is stale, and taken over, when that
# DIR is gone, or when neither that process nor any engine it started is alive
# (a run that was killed before engines-down: its DIR stays behind in /tmp).
LOCK=/run/agentbox-engine-tests.lock
lock_is_stale() {
	local owner_dir owner_pid f
	owner_dir=$(sed -n 1p "$LOCK/owner" 2>/dev/null)
	owner_pid=$(sed -n 2p "$LOCK/owner" 2>/dev/null)
	# just made by another run that has not written its owner yet
	[ -n "$owner_dir" ] || return 1
	[ -d "$owner_dir" ] || return 0
	[ -n "$owner_pid" ] && kill -0 "$owner_pid" 2>/dev/null && return 1
	for f in "$owner_dir"/containerd.pid "$owner_dir"/dockerd.spawned.pid; do
		[ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && return 1
	done
	return 0
}
take_lock() {
	local i stale_dir
	for ((i = 0; i < ${ENGINES_LOCK_WAIT:-300}; i++)); do
		if mkdir "$LOCK" 2>/dev/null; then
			printf '%s\n%s\n' "$DIR" "$PPID" >"$LOCK/owner"
			echo "$LOCK" >"$DIR/lock"
			return 0
		fi
		if lock_is_stale; then
			stale_dir=$(head -n 1 "$LOCK/owner")
			echo "engines-up: taking over the stale lock of $stale_dir" >&2
			# sweep what the dead run left (mounts, bridges) before reusing its subnets
			[ -d "$stale_dir" ] && "$(dirname "$0")/engines-down.sh" "$stale_dir" >/dev/null 2>&1
			rm -rf "$LOCK"
			continue
		fi
		sleep 1
	done
	return 1
}
if ! take_lock; then
	msg="another engine test run holds $LOCK (its dir: $(cat "$LOCK/owner" 2>/dev/null))"
	for e in "$@"; do
		setenv "$(tr a-z- A-Z_ <<<"$e")_SKIP" "$msg"
	done
	echo "$DIR"
	exit 0
fi
if ! build_rootfs >"$DIR/rootfs.log" 2>&1; then
	for e in "$@"; do
		setenv "$(tr a-z- A-Z_ <<<"$e")_SKIP" "cannot build the test rootfs: $(tail -n 2 "$DIR/rootfs.log" | tr '\n' ' ')"
	done
	echo "$DIR"
	exit 0
fi

for e in "$@"; do
	case $e in
	containerd)
		start_containerd && { import_containerd 2>>"$DIR/containerd-import.log" ||
			setenv CONTAINERD_SKIP "ctr images import failed: $(tail -n 2 "$DIR/containerd-import.log" | tr '\n' ' ')"; }
		;;
	docker)
		start_docker && { import_docker 2>>"$DIR/docker-import.log" ||
			setenv DOCKER_SKIP "docker import failed: $(tail -n 2 "$DIR/docker-import.log" | tr '\n' ' ')"; }
		;;
	podman)
		start_podman && { import_podman 2>>"$DIR/podman-import.log" ||
			setenv PODMAN_SKIP "podman import failed: $(tail -n 2 "$DIR/podman-import.log" | tr '\n' ' ')"; }
		;;
	podman-netavark)
		start_podman_netavark && { import_podman_netavark 2>>"$DIR/podman-netavark-import.log" ||
			setenv PODMAN_NETAVARK_SKIP "podman import failed: $(tail -n 2 "$DIR/podman-netavark-import.log" | tr '\n' ' ')"; }
		;;
	podman-rootless)
		start_podman_rootless && { import_podman_rootless 2>>"$DIR/podman-rootless-import.log" ||
			setenv PODMAN_ROOTLESS_SKIP "podman import as $PR_USER failed: $(tail -n 2 "$DIR/podman-rootless-import.log" | tr '\n' ' ')"; }
		;;
	*)
		echo "engines-up.sh: unknown engine '$e' (docker, containerd, podman, podman-netavark, podman-rootless)" >&2
		;;
	esac
done
echo "$DIR"
