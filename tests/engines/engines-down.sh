#!/bin/bash
# engines-down.sh DIR — stop and remove everything engines-up.sh DIR started.
#
# Removes the engines' containers, networks and images, stops dockerd and
# containerd by the pids recorded in DIR (TERM, then KILL after 20 s), kills
# leftover shims and conmons of THIS containerd/podman (found by the private
# paths on their command lines, ended by pid), unmounts what is still mounted
# under DIR, deletes the bridges engines-up created and the directories it
# created outside DIR when they are empty, then removes DIR. Safe to run twice
# and after a partial start. Never touches a daemon it did not start.
set -u
DIR=${1:?usage: engines-down.sh DIR}
[ -d "$DIR" ] || exit 0
DIR=$(realpath "$DIR")
case $DIR in
/ | /tmp | /run | /var | /var/* | /usr | /usr/*) echo "engines-down.sh: refusing DIR=$DIR" >&2; exit 1 ;;
esac

# stop_pid PID [SECS]: TERM, wait, KILL.
stop_pid() {
	local pid=$1 secs=${2:-20} i
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	sleep 0.2
}

# Pids of shims and conmons whose command line mentions a path under DIR.
our_shims() {
	local f pid comm
	for f in /proc/[0-9]*/cmdline; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		{ read -r comm <"/proc/$pid/comm"; } 2>/dev/null || continue
		case $comm in
		containerd-shim* | conmon) ;;
		*) continue ;;
		esac
		tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "$DIR/" && echo "$pid"
	done
}

timeout_cmd() { timeout -k 5 "$@"; }

if [ -f "$DIR/env" ]; then
	# shellcheck disable=SC1091
	source "$DIR/env"
fi

# ---- podman: containers, images (its storage is under DIR)
if [ -n "${PODMAN_ROOT:-}" ] && command -v podman >/dev/null; then
	# shellcheck disable=SC2086
	pm() { CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF timeout_cmd 60 podman $PODMAN_OPTS "$@"; }
	# containers (and their netns, mounts, conmons); images and layers go with
	# the storage under DIR
	pm pod rm -af -t 0 >/dev/null 2>&1
	pm rm -af -t 0 >/dev/null 2>&1
fi

# ---- podman with netavark, in its "podman host": containers, networks, then
# everything that runs in that host's network namespace (aardvark-dns, the
# resolver and web servers, conmons), then the process that holds it
if [ -f "$DIR/podman-nv.pid" ]; then
	holder=$(cat "$DIR/podman-nv.pid")
	holder_net=$(readlink "/proc/$holder/ns/net" 2>/dev/null)
	if [ -n "$holder_net" ] && [ -n "${PODMAN_NV_OPTS:-}" ]; then
		# shellcheck disable=SC2086
		pmn() { (cd "$DIR" && timeout_cmd 60 nsenter -t "$holder" -m -n podman $PODMAN_NV_OPTS "$@"); }
		pmn pod rm -af -t 0 >/dev/null 2>&1
		pmn rm -af -t 0 >/dev/null 2>&1
		pmn network prune -f >/dev/null 2>&1
	fi
	if [ -n "$holder_net" ]; then
		for f in /proc/[0-9]*/ns/net; do
			[ "$(readlink "$f" 2>/dev/null)" = "$holder_net" ] || continue
			pid=${f#/proc/}
			pid=${pid%/ns/net}
			[ "$pid" = "$holder" ] || kill -KILL "$pid" 2>/dev/null
		done
	fi
	stop_pid "$holder" 5
fi
# the DNS tests' resolvers and web servers, and the process holding their netns
if [ -f "$DIR/dns-world.pids" ]; then
	while read -r pid; do
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	done <"$DIR/dns-world.pids"
fi

# ---- rootless podman: the user's containers, then the user with its files
# (its storage is in its home), its runtime copy, the tun device's mode
if [ -f "$DIR/created-users" ]; then
	while read -r u; do
		[ -n "$u" ] && id "$u" >/dev/null 2>&1 || continue
		uid=$(id -u "$u")
		(cd / && runuser -u "$u" -- env -i PATH=/usr/bin:/bin HOME="$(getent passwd "$u" | cut -d: -f6)" \
			XDG_RUNTIME_DIR="/run/user/$uid" timeout 60 podman rm -af -t 0) >/dev/null 2>&1
		# what is left of the user's (conmon, slirp4netns, the pause process), by pid
		pids=$(ps -o pid= -u "$u" 2>/dev/null)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
		sleep 0.2
		userdel -r "$u" >/dev/null 2>&1 || userdel -r -f "$u" >/dev/null 2>&1
		rm -rf "/run/user/$uid"
	done <"$DIR/created-users"
fi
if [ -f "$DIR/tun.mode" ]; then
	chmod "$(cat "$DIR/tun.mode")" /dev/net/tun
fi
if [ -f "$DIR/created-trees" ]; then
	while read -r t; do
		case $t in /tmp/abrl-prt.*) rm -rf "$t" ;; esac
	done <"$DIR/created-trees"
fi

# ---- docker: containers, networks, images, then the daemon
if [ -S "$DIR/docker.sock" ] && [ -x /usr/bin/docker ]; then
	dk() { DOCKER_HOST="unix://$DIR/docker.sock" timeout_cmd 60 /usr/bin/docker "$@"; }
	ids=$(dk ps -aq 2>/dev/null)
	[ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1
	dk network prune -f >/dev/null 2>&1
	# images go with the data root under DIR
fi
for f in "$DIR/dockerd.pid" "$DIR/dockerd.spawned.pid"; do
	[ -f "$f" ] && stop_pid "$(cat "$f")" 20
done

# ---- containerd: ctr's containers and images, then the daemon
if [ -S "$DIR/containerd.sock" ] && command -v ctr >/dev/null; then
	c() { timeout_cmd 30 ctr --address "$DIR/containerd.sock" "$@"; }
	for ns in $(c namespaces ls -q 2>/dev/null); do
		for t in $(c -n "$ns" tasks ls -q 2>/dev/null); do
			c -n "$ns" tasks kill -a -s KILL "$t" >/dev/null 2>&1
			c -n "$ns" tasks delete -f "$t" >/dev/null 2>&1
		done
		for t in $(c -n "$ns" containers ls -q 2>/dev/null); do
			c -n "$ns" containers delete "$t" >/dev/null 2>&1
		done
	done
fi
[ -f "$DIR/containerd.pid" ] && stop_pid "$(cat "$DIR/containerd.pid")" 20

# ---- leftovers of ours: shims (-address DIR/containerd.sock), conmons (paths in DIR)
for pid in $(our_shims); do
	kill -KILL "$pid" 2>/dev/null
done
sleep 0.2

# ---- containers the engines lost track of: any state (agentbox or runc) whose
# bundle is under DIR is force-deleted, which kills its processes
sweep_states() {
	local rt=$1 root=$2 f id
	[ -x "$rt" ] && [ -d "$root" ] || return 0
	for f in "$root"/*/state.json; do
		[ -f "$f" ] || continue
		grep -qF "\"$DIR/" "$f" 2>/dev/null || continue
		id=${f%/state.json}
		id=${id##*/}
		timeout -k 5 30 "$rt" --root "$root" delete --force "$id" >/dev/null 2>&1
	done
}
RUNC=$(command -v runc || echo /usr/sbin/runc)
sweep_states "${AGENTBOX:-/nonexistent}" /run/agentbox
sweep_states "$RUNC" /run/runc
for r in "$DIR"/docker/exec/runtime-*/moby "$DIR"/containerd/runc-root/* "$DIR"/containerd/agentbox-root/*; do
	[ -d "$r" ] || continue
	sweep_states "${AGENTBOX:-/nonexistent}" "$r"
	sweep_states "$RUNC" "$r"
done

# ---- mounts under DIR, deepest first
for _ in 1 2 3; do
	mnts=$(awk -v d="$DIR/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	[ -z "$mnts" ] && break
	for m in $mnts; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
done

# ---- podman's netns files whose mount is gone (a concurrent `ip netns add` can
# stack a new /run/netns bind mount over them): ours are newer than DIR/env
if [ -f "$DIR/env" ] && [ -d /run/netns ]; then
	for f in $(find /run/netns -maxdepth 1 -name 'netns-*' -newer "$DIR/env" 2>/dev/null); do
		mountpoint -q "$f" || rm -f "$f"
	done
fi

# ---- cgroup parents the engines created (/docker, /libpod_parent): unused ones
if [ -f "$DIR/created-cgroups" ]; then
	while read -r cg; do
		[ -n "$cg" ] || continue
		for d in $(find /sys/fs/cgroup/*/"$cg" -depth -type d 2>/dev/null); do
			rmdir "$d" 2>/dev/null
		done
	done <"$DIR/created-cgroups"
fi

# ---- bridges and dirs engines-up created, the forwarding it turned on
if [ -f "$DIR/ip_forward.orig" ]; then
	cat "$DIR/ip_forward.orig" >/proc/sys/net/ipv4/ip_forward
fi
if [ -f "$DIR/created-links" ]; then
	while read -r l; do
		[ -n "$l" ] && ip link del "$l" 2>/dev/null
	done <"$DIR/created-links"
fi
if [ -f "$DIR/created-files" ]; then
	# the podman drop-in; only files engines-up made, by their recorded names
	while read -r f; do
		[ -n "$f" ] && rm -f "$f"
	done <"$DIR/created-files"
fi
if [ -f "$DIR/created-dirs" ]; then
	# deepest first; only what is empty (subdirs the shims made included)
	sort -r "$DIR/created-dirs" | while read -r d; do
		[ -n "$d" ] && [ -d "$d" ] && find "$d" -depth -type d -empty -delete 2>/dev/null
	done
fi

# the one-run-at-a-time lock, if it is ours
if [ -f "$DIR/lock" ]; then
	lock=$(cat "$DIR/lock")
	[ "$(sed -n 1p "$lock/owner" 2>/dev/null)" = "$DIR" ] && rm -rf "$lock"
fi

rm -rf "$DIR" 2>/dev/null || { sleep 1; rm -rf "$DIR"; }
[ ! -e "$DIR" ]
