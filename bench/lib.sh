# bench/lib.sh — setup shared by bench/run.sh and bench/profile.sh (sourced).
#
# Needs HERE (bench/), REPO, WORK (a fresh work directory) and die/say.
# bench_setup builds the tools, copies the runtimes and writes the bundle:
#   ABBENCH FLOOR SAMEWORK  bench/build/abbench, bench/build/floor (the old floor),
#                         bench/build/samework (the same-work floor)
#   AB_BASE               a copy of AGENTBOX_BASE (an older agentbox), or empty
#   SRT                   Anthropic's sandbox-runtime (npm), or empty
#   AB RUNC CRUN          runtime binaries (AB is a copy in WORK/bin; CRUN empty if absent)
#   SRC_AB                where the agentbox copy came from
#   WORK/rootfs           busybox-static, read-only for every container
#   WORK/bundle-true      runc's default spec + cgroup namespace, /bin/true
#   WORK/bundle-sleep     the same, /bin/sleep 100000
#   WORK/bundle-mounts    the same, printing /proc/self/mountinfo
#   EGRESS20              20 egress allow entries (names *.example.test, CIDRs in 198.18.0.0/15)

# 20 entries: names under example.test and CIDRs in 198.18.0.0/15 (never contacted:
# /bin/true sends nothing)
EGRESS20=api.example.test,*.pkg.example.test,registry.example.test:443,git.example.test:22/tcp
EGRESS20+=,pypi.example.test:443/tcp,*.cdn.example.test:443,ntp.example.test:123/udp,docs.example.test
EGRESS20+=,mirror.example.test:80,auth.example.test:443,198.18.0.0/24,198.18.1.7:5432,198.18.2.0/24:443
EGRESS20+=,198.18.3.10,198.19.0.0/16:8080/tcp,198.18.4.0/26,198.18.5.5:6379,198.18.6.0/23
EGRESS20+=,198.18.9.9:22/tcp,198.18.10.0/24:443/tcp

# bench_build NAME [CFLAGS...] [-- LIBS...]: bench/NAME.c -> bench/build/NAME
# when stale (older than its source or than a header of bench/)
bench_build() {
	local n=$1 h stale= cflags=() libs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do cflags+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; libs=("$@"); }
	mkdir -p "$HERE/build"
	[ -x "$HERE/build/$n" ] && [ ! "$HERE/$n.c" -nt "$HERE/build/$n" ] || stale=1
	for h in "$HERE"/*.h; do
		[ -e "$h" ] && [ "$h" -nt "$HERE/build/$n" ] && stale=1
	done
	if [ -n "$stale" ]; then
		cc -std=gnu11 -O2 -Wall -Wextra -Werror "${cflags[@]}" -o "$HERE/build/$n.tmp" "$HERE/$n.c" "${libs[@]}" &&
			mv "$HERE/build/$n.tmp" "$HERE/build/$n" || die "cannot build bench/$n.c"
	fi
}

bench_setup() {
	local i
	[ "$(id -u)" = 0 ] || die "needs root"
	# runc, crun, busybox-static, jq, Docker: Debian's packages (quiet when present)
	"$REPO/scripts/install-deps.sh" bench || die "scripts/install-deps.sh bench failed"
	for i in jq python3 unshare cc free file; do
		command -v "$i" >/dev/null || die "needs $i"
	done
	bench_build abbench
	bench_build floor -static
	# the same-work floor reads config.json with yajl (libyajl-dev's static library)
	bench_build samework -static -- -lyajl_s
	ABBENCH=$HERE/build/abbench FLOOR=$HERE/build/floor SAMEWORK=$HERE/build/samework

	# a copy of agentbox, so a concurrent `make` cannot swap it mid-run
	SRC_AB=${AGENTBOX:-$REPO/agentbox}
	if [ ! -x "$SRC_AB" ] && [ -z "${AGENTBOX:-}" ]; then
		say "building agentbox"
		make -s -C "$REPO" agentbox >&2 || die "make agentbox failed"
	fi
	mkdir -p "$WORK/bin"
	for i in 1 2 3 4 5; do
		cp "$SRC_AB" "$WORK/bin/agentbox" 2>/dev/null && "$WORK/bin/agentbox" --version >/dev/null 2>&1 && break
		sleep 1
	done
	"$WORK/bin/agentbox" --version >/dev/null 2>&1 || die "no working agentbox at $SRC_AB"
	AB=$WORK/bin/agentbox
	# an older agentbox to compare with (the cost of what changed since)
	AB_BASE=
	if [ -n "${AGENTBOX_BASE:-}" ]; then
		cp "$AGENTBOX_BASE" "$WORK/bin/agentbox-base" && "$WORK/bin/agentbox-base" --version >/dev/null 2>&1 ||
			die "AGENTBOX_BASE=$AGENTBOX_BASE does not run"
		AB_BASE=$WORK/bin/agentbox-base
	fi
	# Anthropic's sandbox-runtime, for kit run's comparison: from the npm registry
	# (bubblewrap, socat and ripgrep come with install-deps.sh bench)
	# (bench/run.sh's SRT= leaves it out)
	if [ -z "${SRT+set}" ]; then
		SRT=$(command -v srt)
		if [ -z "$SRT" ] && command -v npm >/dev/null; then
			say "installing srt (npm install -g @anthropic-ai/sandbox-runtime)"
			npm install -g --silent @anthropic-ai/sandbox-runtime >&2 && SRT=$(command -v srt)
		fi
	fi
	[ -n "$SRT" ] || say "no srt (npm install -g @anthropic-ai/sandbox-runtime): leaving it out"
	RUNC=${RUNC:-/usr/sbin/runc}
	CRUN=${CRUN-/usr/bin/crun}
	[ -x "$RUNC" ] || die "no runc at $RUNC"
	[ -n "$CRUN" ] && [ ! -x "$CRUN" ] && { say "no crun at $CRUN, leaving it out"; CRUN=; }

	# the bundle: busybox-static; two configs (true, sleep) sharing one read-only rootfs
	local bb=${BUSYBOX:-/bin/busybox} r=$WORK/rootfs a
	[ -x "$bb" ] || die "no busybox at $bb (apt-get install busybox-static)"
	file -L "$bb" 2>/dev/null | grep -q 'statically linked' || die "$bb is not static (apt-get install busybox-static)"
	mkdir -p "$r"/{bin,etc,proc,sys,dev,tmp}
	cp "$bb" "$r/bin/busybox"
	for a in true sleep sh; do ln -s busybox "$r/bin/$a"; done
	# the DNS sentry forwards to the resolv.conf's nameserver; /bin/true never asks
	# it anything, and the address is in the benchmarking range 198.18.0.0/15
	echo 'nameserver 198.18.0.53' >"$r/etc/resolv.conf"
	echo 'root:x:0:0:root:/:/bin/sh' >"$r/etc/passwd"
	echo 'root:x:0:' >"$r/etc/group"
	# runc's default spec (namespaces pid, net, ipc, uts, mount) plus a cgroup
	# namespace, /bin/true, no terminal. Ambient capabilities are dropped: runc
	# 1.1 only warns when it cannot raise them (its spec has no inheritable set),
	# agentbox refuses such a container.
	(cd "$WORK" && "$RUNC" spec) || die "runc spec failed"
	mkdir -p "$WORK/bundle-true" "$WORK/bundle-sleep"
	jq --arg r "$r" '.root.path = $r | .process.terminal = false | .process.args = ["/bin/true"]
		| del(.process.capabilities.ambient) | .linux.namespaces += [{"type": "cgroup"}]' \
		"$WORK/config.json" >"$WORK/bundle-true/config.json" || die "jq failed"
	jq '.process.args = ["/bin/sleep", "100000"]' "$WORK/bundle-true/config.json" >"$WORK/bundle-sleep/config.json"
	mkdir -p "$WORK/bundle-mounts"
	jq '.process.args = ["/bin/busybox", "cat", "/proc/self/mountinfo"]' "$WORK/bundle-true/config.json" \
		>"$WORK/bundle-mounts/config.json"
	rm "$WORK/config.json"
}

# bench_state_fs: in a private mount namespace, put WORK/state on a tmpfs like
# a production host's /run (BENCH_STATE_FS=disk keeps it on WORK's file system)
bench_state_fs() {
	mkdir -p "$WORK/state"
	if [ "${BENCH_STATE_FS:-tmpfs}" = tmpfs ]; then
		mount -t tmpfs -o mode=0711,size=256m bench-state "$WORK/state" || die "cannot mount a tmpfs on $WORK/state"
	fi
}

# bench_unmount_unified: crun 1.8 refuses a hybrid layout whose cgroup2 mount has
# controllers ("cgroups in hybrid mode not supported, drop all controllers from
# cgroupv2"). In a private mount namespace, drop the cgroup2 mount: every
# runtime there sees plain cgroup v1. (Binding hugetlb to a v1 hierarchy, as
# TESTING.md suggests, fails with EBUSY while cgroups on the unified mount use
# it, and would change the host's hierarchies, which are global, for everyone.)
bench_unmount_unified() {
	if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		umount /sys/fs/cgroup/unified || { say "cannot unmount /sys/fs/cgroup/unified"; return 1; }
		return 0
	fi
	return 1
}
