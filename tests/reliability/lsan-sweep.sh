#!/bin/bash
# lsan-sweep.sh — every command of a sanitizer build of agentbox, on its normal
# path and on its error paths, with LeakSanitizer on; fails if any run reported
# a leak, an ASan error or undefined behaviour. As root.
#
#   make SANITIZE=address,undefined agentbox tests/helper/abtest
#   tests/reliability/lsan-sweep.sh [RUNTIME]
#
# (In a tree that others build too, make a copy first: the objects are shared.)
# Each run writes its reports to a file of its own (ASAN_OPTIONS log_path), so
# nothing is lost when a command's stderr goes elsewhere; the last lines list
# the reports and say PASS or FAIL.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
RUNTIME=${1:-${RUNTIME:-$top/agentbox}}
[ "$(id -u)" = 0 ] || { echo "lsan-sweep.sh: needs root" >&2; exit 2; }
if [ "$(nm "$RUNTIME" 2>/dev/null | grep -c __asan_init)" = 0 ]; then
	echo "lsan-sweep.sh: $RUNTIME is not built with SANITIZE=address[,undefined]" >&2
	exit 2
fi
work=$(mktemp -d /tmp/agentbox-lsan.XXXXXX)
reports=$work/reports
mkdir -p "$reports"
export ASAN_OPTIONS="detect_leaks=1:log_path=$reports/asan:log_exe_name=0"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$reports/ubsan"
root=$work/state
n=0
cleanup() {
	local id
	for id in $(ls "$root" 2>/dev/null); do "$RUNTIME" --root "$root" delete --force "$id" >/dev/null 2>&1; done
	rm -rf "$work"
}
trap cleanup EXIT

# ab ARGS...: one run of the runtime (status ignored: error paths are the point)
ab() {
	n=$((n + 1))
	echo "\$ agentbox $*" >>"$work/commands"
	timeout 60 "$RUNTIME" --root "$root" "$@" </dev/null >>"$work/out" 2>&1
	echo "  status $?" >>"$work/commands"
}

# a bundle: busybox + abtest
b=$work/bundle
mkdir -p "$b/rootfs"/{bin,etc,proc,sys,dev,tmp}
cp "$(command -v busybox)" "$b/rootfs/bin/busybox"
ln -s busybox "$b/rootfs/bin/sh"
cp "$top/tests/helper/abtest" "$b/rootfs/bin/abtest"
echo "nameserver 127.0.0.53" >"$b/rootfs/etc/resolv.conf"
(cd "$b" && ASAN_OPTIONS=detect_leaks=1:log_path=$reports/asan "$RUNTIME" spec) || exit 2
jq '.process.terminal = false | .process.args = ["abtest", "pause"] | del(.linux.cgroupsPath)' "$b/config.json" >"$b/c" &&
	mv "$b/c" "$b/config.json"
cfg=$work/agent.yaml
printf 'egress:\n  allow: [example.test, "*.example.test:443", 198.18.0.0/15]\n  deny: [bad.example.test]\n' >"$cfg"
bad=$work/badbundle
mkdir -p "$bad/rootfs"
echo '{"ociVersion": "1.2.0", "process": {"args": ["x"], "cwd": "/"}, "root": {"path": "rootfs"}, "linux": {"namespaces": [{"type": "nosuch"}]}}' >"$bad/config.json"
proc=$work/process.json
echo '{"args": ["abtest", "true"], "cwd": "/", "env": ["A=b"]}' >"$proc"
res=$work/resources.json
echo '{"pids": {"limit": 100}, "memory": {"limit": 67108864}}' >"$res"

# ---- everything without a container
ab --version
ab --help
ab spec --help
ab features
ab nosuchcommand
ab --nosuchflag list
ab list
ab list --format json
ab state nosuch
ab delete nosuch
ab delete --force nosuch
ab kill nosuch
ab start nosuch
ab ps nosuch
ab events --stats nosuch
ab egress log nosuch
ab exec nosuch true
ab update --pids-limit 5 nosuch
ab pause nosuch
ab resume nosuch
ab create --bundle "$bad" badcfg
ab create --bundle "$work/nosuchdir" nobundle
ab --config "$work/nosuch.yaml" create --bundle "$b" nocfg
ab --egress-allow 'not a valid entry!' create --bundle "$b" badflag
ab --seccomp-profile nosuch create --bundle "$b" badprofile
ab create --bundle "$b" '../bad id'
ab spec --bundle "$b"   # refuses to overwrite

# ---- a container's life, with the default policy (firewall + DNS sentry)
ab --config "$cfg" create --bundle "$b" c1
ab --config "$cfg" create --bundle "$b" c1   # duplicate
ab state c1
ab list
ab start c1
ab start c1   # already running
ab state c1
ab ps c1
ab ps --format json c1
ab exec c1 abtest true
ab exec --process "$proc" c1
ab exec c1 /no/such/program
ab exec --cwd /tmp --env X=y c1 abtest env
ab update --resources "$res" c1
ab update --pids-limit 50 c1
ab update --resources "$work/nosuch.json" c1
ab events --stats c1
timeout 3 "$RUNTIME" --root "$root" events --interval 1s c1 >/dev/null 2>&1
ab egress log c1
ab egress log --json c1
ab pause c1
ab pause c1   # already paused
ab state c1
ab resume c1
ab resume c1  # not paused
ab kill c1 NOSUCHSIGNAL
ab delete c1   # running: refused
ab kill --all c1 CONT
ab kill c1 USR1   # abtest pause exits on it
sleep 0.3
ab kill c1 KILL   # not running
ab delete c1

# ---- run, run --detach, create + delete --force, kit
jq '.process.args = ["abtest", "true"]' "$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
ab --config "$cfg" run --bundle "$b" r1
jq '.process.args = ["abtest", "exit", "3"]' "$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
ab --config "$cfg" run --bundle "$b" r2
jq '.process.args = ["/no/such/program"]' "$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
ab --config "$cfg" run --bundle "$b" r3
jq '.process.args = ["abtest", "pause"]' "$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
ab --config "$cfg" run --detach --bundle "$b" r4
ab delete --force r4
ab --config "$cfg" create --bundle "$b" c2
ab delete --force c2
for kit in "$top"/kits/*.yaml; do
	[ -e "$kit" ] || continue
	ab kit show "$kit"
	rm -rf "$work/kb"
	ab kit build "$kit" -o "$work/kb"
done
[ -e "$top/kits/no-network.yaml" ] && ab kit run "$top/kits/no-network.yaml" -- true
ab kit show "$work/nosuch.yaml"
printf 'name: x\nnosuchfield: 1\n' >"$work/badkit.yaml"
ab kit show "$work/badkit.yaml"
ab kit build "$work/badkit.yaml" -o "$work/kb2"

# ---- what the sanitizers said
found=$(ls "$reports" 2>/dev/null)
cp "$work/commands" "${LSAN_SWEEP_LOG:-/tmp/agentbox-lsan-sweep.log}"
echo "lsan-sweep: $n runs of $RUNTIME ($(grep -c '^  status 0$' "$work/commands") succeeded, the rest were error paths;" \
	"commands and statuses in ${LSAN_SWEEP_LOG:-/tmp/agentbox-lsan-sweep.log})"
if [ -n "$found" ]; then
	for f in $found; do
		echo "== $f"
		grep -E "ERROR|SUMMARY|runtime error|#[0-9] " "$reports/$f" | head -30
	done
	echo "lsan-sweep: FAIL (reports above)"
	exit 1
fi
echo "lsan-sweep: PASS"
