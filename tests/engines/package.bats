#!/usr/bin/env bats
# The Debian package end to end (README "Install", agentbox-setup(8)).
#
# `make deb` runs once (into this file's temp dir). The clean root is a
# copy-on-write overlay of this host's root file system (Debian's packages as
# installed here, none of the session's files: /tmp, /run, Docker's and
# containerd's state are fresh tmpfs, engine registrations are removed, an
# installed agentbox is purged) mounted in a mount namespace of its own, held
# by one process. In it: apt-get install ./agentbox_*.deb, a dockerd started
# there (its own socket, data root, cgroup parent, no bridge), agentbox setup
# docker, SIGHUP, docker run --runtime=agentbox of an imported busybox image,
# apt-get remove (the note, dockerd still working), setup --undo; Podman's and
# containerd's registrations read back by the engines themselves.
#
# teardown_file stops dockerd, kills what is left in that mount namespace (by
# pid), then the holder: the mounts go with the namespace. The tests run in
# order, each on what the one before left.

load helpers

PKG_IMAGE=abpkg-test:latest
PKG_SOCK=/run/abpkg-docker.sock

setup_file() {
	[ "$(id -u)" = 0 ] || { export PKG_SKIP="needs root"; return 0; }
	local c
	for c in dpkg-buildpackage dh dockerd docker containerd unshare nsenter git; do
		command -v "$c" >/dev/null ||
			{ export PKG_SKIP="$c is not installed (scripts/install-deps.sh engines)"; return 0; }
	done
	PKG_DIR=$(mktemp -d /tmp/abpkg.XXXXXX)
	export PKG_DIR PKG_ROOT=$PKG_DIR/root PKG_CG=abpkg-${PKG_DIR##*.}
	# the package, once; lintian is a test of its own
	if ! make -s -C "$REPO_ROOT" deb DEB_BUILD="$PKG_DIR/build" DEB_OUT="$PKG_DIR" LINTIAN=no \
		>"$PKG_DIR/deb.log" 2>&1; then
		export PKG_FAIL="make deb failed: $(tail -n 5 "$PKG_DIR/deb.log" | tr '\n' ' ')"
		return 0
	fi
	PKG_DEB=$(ls "$PKG_DIR"/agentbox_*.deb)
	export PKG_DEB
	rm -rf "$PKG_DIR/build"
	pkg_make_root >"$PKG_DIR/root.log" 2>&1 ||
		{ export PKG_FAIL="cannot make the clean root: $(tail -n 3 "$PKG_DIR/root.log" | tr '\n' ' ')"; return 0; }
	pkg_start_dockerd ||
		{ export PKG_FAIL="dockerd did not start in the clean root: $(tail -n 3 "$PKG_DIR/dockerd.log" | tr '\n' ' ')"; return 0; }
}

teardown_file() {
	[ -n "${PKG_DIR:-}" ] || return 0
	local pid mnt i
	if [ -s "$PKG_DIR/dockerd.pid" ]; then
		pid=$(cat "$PKG_DIR/dockerd.pid")
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 200; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	if [ -s "$PKG_DIR/holder.pid" ]; then
		pid=$(cat "$PKG_DIR/holder.pid")
		# whatever still runs in the root's mount namespace (containerd, shims,
		# agentbox's sentries and pool filler), by pid, then the holder
		mnt=$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)
		if [ -n "$mnt" ]; then
			for i in /proc/[0-9]*; do
				[ "${i#/proc/}" != "$pid" ] && [ "$(readlink "$i/ns/mnt" 2>/dev/null)" = "$mnt" ] &&
					kill -KILL "${i#/proc/}" 2>/dev/null
			done
			sleep 0.3
		fi
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	# the cgroup parent dockerd made for the containers
	find /sys/fs/cgroup/*/"$PKG_CG" /sys/fs/cgroup/"$PKG_CG" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$PKG_DIR"
}

# ---------------------------------------------------------------- the root

# in_root CMD...: CMD in the clean root, with a plain environment
in_root() {
	timeout -k 5 "${ENGINE_TIMEOUT:-90}" nsenter -t "$(cat "$PKG_DIR/holder.pid")" -m -- chroot "$PKG_ROOT" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		DOCKER_HOST="unix://$PKG_SOCK" "$@" 3>&-
}

pkg_make_root() {
	mkdir -p "$PKG_ROOT" "$PKG_DIR/rw" || return 1
	unshare --mount --propagation private sleep infinity </dev/null >/dev/null 2>&1 3>&- &
	local holder=$! i
	echo "$holder" >"$PKG_DIR/holder.pid"
	for ((i = 0; i < 50; i++)); do
		[ "$(readlink "/proc/$holder/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
		sleep 0.1
	done
	nsenter -t "$holder" -m -- sh -ec '
		d=$1 r=$2
		mount -t tmpfs -o mode=0755 abpkg-rw "$d/rw"
		mkdir "$d/rw/upper" "$d/rw/work"
		mount -t overlay -o "lowerdir=/,upperdir=$d/rw/upper,workdir=$d/rw/work" abpkg-root "$r"
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		mount --rbind /sys "$r/sys"
		for t in run tmp var/lib/docker var/lib/containerd; do
			mkdir -p "$r/$t" && mount -t tmpfs -o mode=0755 abpkg-tmp "$r/$t"
		done
		chmod 1777 "$r/tmp"
		# a fresh Debian has registered nothing with the engines
		rm -rf "$r/etc/docker/daemon.json" "$r/etc/containers/containers.conf.d"
		rm -f "$r/var/lib/man-db/auto-update"   # no man-db trigger: seconds saved
		cp "$3" "$r/tmp/"
	' sh "$PKG_DIR" "$PKG_ROOT" "$PKG_DEB" || return 1
	in_root sh -c 'if dpkg-query -W -f "\${Status}" agentbox 2>/dev/null | grep -q " installed"; then dpkg --purge agentbox; fi' ||
		return 1
	# the image's rootfs, and Docker's starting config in the layout setup
	# writes, so that undo can be compared byte for byte
	mkdir -p "$PKG_DIR/img/bin" && cp "${AGENTBOX_TEST_BUSYBOX:-/bin/busybox}" "$PKG_DIR/img/bin/busybox" &&
		for a in sh echo grep true; do ln -s busybox "$PKG_DIR/img/bin/$a" || return 1; done
	printf '{\n  "log-level": "warn",\n  "shutdown-timeout": 5,\n  "features": {\n    "buildkit": false\n  }\n}\n' \
		>"$PKG_DIR/daemon.json.orig"
	in_root sh -c 'mkdir -p /etc/docker && cat >/etc/docker/daemon.json' <"$PKG_DIR/daemon.json.orig"
}

pkg_start_dockerd() {
	nsenter -t "$(cat "$PKG_DIR/holder.pid")" -m -- chroot "$PKG_ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		dockerd -H "unix://$PKG_SOCK" --pidfile /run/abpkg-dockerd.pid --data-root /var/lib/docker \
		--exec-root /run/docker --cgroup-parent "/$PKG_CG" --bridge none --iptables=false --ip-forward=false \
		--ip-masq=false --userland-proxy=false --storage-driver overlay2 \
		</dev/null >"$PKG_DIR/dockerd.log" 2>&1 3>&- &
	echo $! >"$PKG_DIR/dockerd.pid"
	retry 60 in_root docker version || return 1
	tar -C "$PKG_DIR/img" -c . | in_root docker import -c 'CMD ["/bin/sh"]' - "$PKG_IMAGE" >/dev/null
}

pkg_ready() {
	[ -z "${PKG_SKIP:-}" ] || skip "$PKG_SKIP"
	[ -z "${PKG_FAIL:-}" ] || fail "$PKG_FAIL"
}

reload_dockerd() {
	kill -HUP "$(cat "$PKG_DIR/dockerd.pid")"
}

docker_runtimes() { in_root docker info --format '{{json .Runtimes}}'; }
runtime_loaded() { docker_runtimes | grep -q /usr/bin/agentbox; }
runtime_gone() { docker_runtimes | grep -q runc && ! docker_runtimes | grep -q agentbox; }

# ---------------------------------------------------------------- the tests

@test "package: make deb holds the binaries, pages, profiles, kits and conffile, with its dependencies" {
	pkg_ready
	local f
	f=$(dpkg-deb -f "$PKG_DEB" Depends)
	[[ "$f" == *libseccomp2* && "$f" == *libc6* && "$f" != *'${'* ]] || fail "Depends: $f"
	f=$(dpkg-deb -f "$PKG_DEB" Recommends)
	[[ "$f" == *slirp4netns* && "$f" == *uidmap* ]] || fail "Recommends: $f"
	dpkg-deb -c "$PKG_DEB" | awk '{print $6}' >"$PKG_DIR/contents"
	for f in ./usr/bin/agentbox ./usr/bin/agentbox-gateway ./usr/share/man/man8/agentbox.8.gz \
		./usr/share/man/man8/agentbox-setup.8.gz ./usr/share/man/man5/agentbox-config.5.gz \
		./usr/share/agentbox/seccomp/agent.json ./usr/share/agentbox/kits/python-agent.yaml ./etc/agentbox/config.yaml \
		./usr/lib/tmpfiles.d/agentbox.conf; do
		grep -qxF "$f" "$PKG_DIR/contents" || fail "$f is not in the package"
	done
	dpkg-deb -e "$PKG_DEB" "$PKG_DIR/control"
	grep -qxF /etc/agentbox/config.yaml "$PKG_DIR/control/conffiles" || fail "config.yaml is not a conffile"
	# the example config changes nothing: every line a comment or blank
	dpkg-deb --fsys-tarfile "$PKG_DEB" | tar -xOf - ./etc/agentbox/config.yaml | grep -v '^#' | grep -q '[^[:space:]]' &&
		fail "the example config.yaml sets a key"
	return 0
}

@test "package: lintian finds nothing but its overrides" {
	pkg_ready
	command -v lintian >/dev/null || skip "lintian is not installed (scripts/install-deps.sh deb)"
	run lintian --fail-on error,warning "$PKG_DEB"
	assert_success
}

@test "package: apt-get install ./agentbox_*.deb on a clean root" {
	pkg_ready
	run in_root apt-get install -y --no-install-recommends "/tmp/${PKG_DEB##*/}"
	assert_success
	run in_root dpkg-query -W -f '${Status}' agentbox
	[ "$output" = "install ok installed" ] || fail "dpkg: $output"
	run in_root sh -c 'command -v agentbox && agentbox --version'
	assert_success
	assert_output_contains "/usr/bin/agentbox"
	# the shipped config.yaml is read and changes nothing: the error is the missing container's
	run in_root agentbox egress log no-such-container
	assert_output_contains 'container "no-such-container" does not exist'
}

@test "package: agentbox setup docker shows the change, --dry-run writes nothing, a second run has nothing to do" {
	pkg_ready
	run in_root agentbox setup --dry-run docker
	assert_success
	assert_output_contains '+      "path": "/usr/bin/agentbox"'
	assert_output_contains "dry run"
	in_root cat /etc/docker/daemon.json | cmp -s - "$PKG_DIR/daemon.json.orig" || fail "--dry-run changed daemon.json"
	run in_root agentbox setup docker
	assert_success
	assert_output_contains "wrote /etc/docker/daemon.json"
	assert_output_contains "SIGHUP"
	run in_root cat /etc/docker/daemon.json
	assert_output_matches '"log-level": "warn",.*"shutdown-timeout": 5,.*"buildkit": false.*"runtimes": \{.*"agentbox": \{.*"path": "/usr/bin/agentbox"'
	run in_root agentbox setup docker
	assert_success
	assert_output_contains "nothing to change"
}

@test "package: docker run --runtime=agentbox after dockerd's SIGHUP" {
	pkg_ready
	reload_dockerd
	retry 20 runtime_loaded || fail "dockerd did not load the runtime: $(docker_runtimes)"
	run in_root docker run --rm --runtime=agentbox --network none "$PKG_IMAGE" sh -c 'echo in-agentbox; grep NoNewPrivs /proc/self/status'
	assert_success
	assert_output_contains "in-agentbox"
	# agentbox forces no_new_privs; Docker's runc run does not (the check tells them apart)
	assert_output_matches 'NoNewPrivs:[[:space:]]+1'
	run in_root docker run --rm --network none "$PKG_IMAGE" grep NoNewPrivs /proc/self/status
	assert_success
	assert_output_matches 'NoNewPrivs:[[:space:]]+0'
}

@test "package: containerd and podman read what setup writes; --undo gives their files back" {
	pkg_ready
	in_root cat /etc/containerd/config.toml >"$PKG_DIR/config.toml.orig"
	run in_root agentbox setup containerd
	assert_success
	run in_root containerd config dump
	assert_success
	assert_output_contains '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentbox.options]'
	assert_output_contains 'BinaryName = "/usr/bin/agentbox"'
	grep -q 'bin_dir = "/usr/lib/cni"' "$PKG_DIR/config.toml.orig" && assert_output_contains 'bin_dir = "/usr/lib/cni"'
	run in_root agentbox setup --undo containerd
	assert_success
	in_root cat /etc/containerd/config.toml | cmp -s - "$PKG_DIR/config.toml.orig" || fail "undo did not give config.toml back"

	command -v podman >/dev/null || skip "podman is not installed"
	run in_root agentbox setup podman
	assert_success
	run in_root podman --root /tmp/pm/root --runroot /tmp/pm/run --storage-driver vfs --cgroup-manager cgroupfs \
		--events-backend file --runtime agentbox info --format '{{.Host.OCIRuntime.Path}}'
	assert_success
	[ "${lines[-1]}" = /usr/bin/agentbox ] || fail "podman's runtime agentbox: $output"
	run in_root agentbox setup --undo podman
	assert_success
	run in_root ls /etc/containers/containers.conf.d/
	refute_output_contains agentbox
}

@test "package: apt-get remove says daemon.json still names agentbox, leaves it, dockerd keeps working" {
	pkg_ready
	run in_root apt-get remove -y agentbox
	assert_success
	assert_output_contains "/etc/docker/daemon.json"
	assert_output_contains "still register /usr/bin/agentbox"
	run in_root test -e /usr/bin/agentbox
	assert_status 1
	run in_root grep -c '"path": "/usr/bin/agentbox"' /etc/docker/daemon.json
	[ "$output" = 1 ] || fail "daemon.json was edited: $(in_root cat /etc/docker/daemon.json)"
	reload_dockerd
	sleep 1
	run in_root docker run --rm --network none "$PKG_IMAGE" echo still-working
	assert_success
	assert_output_contains "still-working"
}

@test "package: setup --undo docker takes out only what setup added; remove is quiet after it; purge takes the logs" {
	pkg_ready
	run in_root dpkg -i "/tmp/${PKG_DEB##*/}"
	assert_success
	run in_root agentbox setup --undo docker
	assert_success
	assert_output_contains '-      "path": "/usr/bin/agentbox"'
	# every key as it was, in its order, and an empty runtimes object (what makes SIGHUP drop the runtime)
	in_root cat /etc/docker/daemon.json >"$PKG_DIR/daemon.json.undone"
	python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a == dict(b, runtimes={}) and list(a) == list(b) + ["runtimes"] else 1)' \
		"$PKG_DIR/daemon.json.undone" "$PKG_DIR/daemon.json.orig" ||
		fail "daemon.json after undo: $(cat "$PKG_DIR/daemon.json.undone")"
	reload_dockerd
	retry 20 runtime_gone || fail "dockerd still lists agentbox: $(docker_runtimes)"
	run in_root apt-get remove -y agentbox
	assert_success
	refute_output_contains "still register"
	# purge: root's durable logs go, a named box stays, said once
	in_root sh -c 'mkdir -p /var/log/agentbox/ct1 /var/lib/agentbox/boxes/b1 && touch /var/log/agentbox/ct1/egress.log'
	run in_root apt-get purge -y agentbox
	assert_success
	assert_output_contains "the named boxes in /var/lib/agentbox/boxes are kept"
	run in_root test -e /var/log/agentbox
	assert_status 1
	in_root test -d /var/lib/agentbox/boxes/b1 || fail "purge removed a named box"
}
