#!/bin/bash
# Fetch and build the three peer suites into $ABCF_WORK (not part of make check;
# needs the network: GitHub, and a Debian mirror for debootstrap).
# usage: fetch.sh [runtime-tools|crun|runc ...]   (default: all three)
# Needs: git, go (runtime-tools' validation and runc's test helpers), gcc and
# libseccomp-dev (crun's test init, runc's seccompagent), busybox-static,
# debootstrap, xz-utils, python3, bats, jq, and util-linux's script.
# ABCF_GIT_BASE=DIR clones DIR/runtime-tools, DIR/crun and DIR/runc instead (a
# local mirror); the commits checked out are those of env.sh either way.
set -eu
. "$(dirname "$0")/env.sh"
mkdir -p "$ABCF_WORK/bin"
cd "$ABCF_WORK"

clone() { # NAME URL COMMIT
	local src=$2
	[ -n "${ABCF_GIT_BASE:-}" ] && src=$ABCF_GIT_BASE/$1
	[ -d "$1/.git" ] || git clone -q "$src" "$1"
	git -C "$1" -c advice.detachedHead=false checkout -q "$3"
}

runtime_tools() {
	clone runtime-tools https://github.com/opencontainers/runtime-tools "$ABCF_RUNTIME_TOOLS_COMMIT"
	make -C runtime-tools runtimetest validation-executables >"$ABCF_WORK/runtime-tools-build.log" 2>&1
}

crun() {
	clone crun https://github.com/containers/crun "$ABCF_CRUN_COMMIT"
	# crun's tests/init.c, the multi-call program its tests put in each
	# rootfs, static; its config.h says what this host has
	mkdir -p crun-init-build
	printf '#define HAVE_LINUX_IOPRIO_H 1\n#define HAVE_SECCOMP 1\n#define HAVE_ERROR_H 1\n' >crun-init-build/config.h
	gcc -static -O2 -I crun-init-build -o bin/crun-init crun/tests/init.c -lseccomp
}

runc_suite() {
	clone runc https://github.com/opencontainers/runc "$ABCF_RUNC_TAG"
	local cmd
	for cmd in recvtty sd-helper seccompagent; do
		(cd "runc/contrib/cmd/$cmd" && go build -mod=vendor -tags seccomp -o "$cmd" .)
	done
	local data=runc/tests/integration/testdata tmp
	# the images get-images.sh would download, made here: busybox from
	# Debian's busybox-static (a hard link an applet, runc's layout), and
	# Debian from debootstrap (hooks.bats runs ldconfig in it)
	if [ ! -e "$data/busybox-amd64.tar.xz" ]; then
		tmp=$(mktemp -d)
		mkdir -p "$tmp"/{bin,etc,proc,dev,sys,usr/sbin,tmp,var/www,var/spool/mail,home,root}
		chmod 0755 "$tmp"; chmod 1777 "$tmp/tmp"; chmod 0700 "$tmp/root"
		cp /bin/busybox "$tmp/bin/busybox"
		local app
		for app in $("$tmp/bin/busybox" --list); do
			[ "$app" = busybox ] || ln "$tmp/bin/busybox" "$tmp/bin/$app"
		done
		printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'daemon:x:1:1:daemon:/usr/sbin:/bin/false' \
			'nobody:x:65534:65534:nobody:/home:/bin/false' >"$tmp/etc/passwd"
		printf '%s\n' 'root:x:0:' 'daemon:x:1:' 'tty:x:5:' 'wheel:x:10:root' 'users:x:100:' \
			'nogroup:x:65534:' >"$tmp/etc/group"
		tar -C "$tmp" -cJf "$data/busybox-amd64.tar.xz" .
		rm -rf "$tmp"
	fi
	if [ ! -e "$data/debian-amd64.tar.xz" ]; then
		tmp=$(mktemp -d)
		debootstrap --variant=minbase bookworm "$tmp" >"$ABCF_WORK/debootstrap.log" 2>&1
		tar -C "$tmp" -cJf "$data/debian-amd64.tar.xz" .
		rm -rf "$tmp"
	fi
}

[ $# -gt 0 ] || set -- runtime-tools crun runc
for s in "$@"; do
	case $s in
	runtime-tools) runtime_tools ;;
	crun) crun ;;
	runc) runc_suite ;;
	*) echo "fetch.sh: unknown suite $s (runtime-tools, crun or runc)" >&2; exit 2 ;;
	esac
	echo "fetch.sh: $s ready in $ABCF_WORK/$s"
done
