#!/bin/sh
# Install what agentbox needs to build, test and run, from Debian's packages.
# Usage: scripts/install-deps.sh [build|deb|run|test|engines|bench]   (default: test)
# Quiet and quick when everything is already there.
set -eu
what=${1:-test}

build="gcc make pkg-config libseccomp-dev libyajl-dev libcap-dev libmnl-dev libnftnl-dev libyaml-dev nettle-dev libarchive-dev libssl-dev libnghttp2-dev libhttp-parser-dev"
run="slirp4netns iproute2 libarchive13"
test="bats git jq zsh sudo busybox-static dnsmasq-base socat nftables runc python3 uidmap clang libclang-rt-14-dev procps util-linux curl openssl nghttp2-server python3-h2 bc python3-pip golang-go"
deb="dpkg-dev debhelper fakeroot lintian"   # make deb: dpkg-buildpackage, and lintian's check
engines="docker.io containerd podman conmon netavark aardvark-dns iptables"   # netavark: podman 4's default backend where installed
bench="crun bubblewrap ripgrep passt"   # bench/run.sh: crun and srt (bubblewrap, ripgrep; srt itself from npm) to compare with, pasta to measure

case $what in
build) pkgs="$build" ;;
deb) pkgs="$build $deb" ;;
run) pkgs="$build $run" ;;
test) pkgs="$build $run $test" ;;
engines) pkgs="$build $run $test $engines $deb" ;;
bench) pkgs="$build $run $test $engines $deb $bench" ;;
*) echo "usage: $0 [build|deb|run|test|engines|bench]" >&2; exit 2 ;;
esac

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
