#!/bin/bash
# bench/profile.sh — where agentbox's time goes; the raw material of bench/PROFILE.md.
#
#   bench/profile.sh [--rounds N] [--out DIR] [--keep]
#
# 1. Ablation: `run /bin/true` with one feature at a time switched off
#    (runtime flags only, no code change), alternated round by round with
#    abbench like bench/run.sh; medians of wall and CPU time.
# 1b. The same phases: `perf trace` of only the marker syscalls (brk, mkdir,
#    clone, clone3, pivot_root, execve, exit_group) of N alternated runs of
#    the same-work floor (bench/samework.c), agentbox's defaults, without the
#    netns pool, and plain; bench/samephases.py cuts each into the same six
#    phases (same-phases.md: medians, and agentbox's extra over the floor).
# 2. Start-up: `agentbox --version` (exec + dynamic linking + exit) beside a
#    static busybox `true`; ld.so's own statistics (LD_DEBUG=statistics).
# 3. strace -c -f of a default and a plain run; strace -f -tt -T of 5 default
#    runs, cut into phases by bench/phases.py (phases.md: medians).
# 4. perf stat -r 10 of a default and a plain run; perf record (cpu-clock)
#    over 30 runs (frame pointers) and 8 runs (DWARF call chains).
# 5. valgrind --tool=callgrind of the parent process: plain run, and run with
#    egress entries. (Valgrind 3.19 knows neither seccomp(2), openat2 nor
#    mount_setattr, and refuses RLIMIT_NOFILE: the callgrind bundle has no
#    rlimits and no seccomp profile; the fallbacks for openat2/mount_setattr run.)
# Everything runs in a private mount namespace with the state roots on a tmpfs,
# in the host's cgroup layout. Output: DIR (default bench/results/profile).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
say() { echo "profile: $*" >&2; }
die() { echo "profile: $*" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

# variant NAME: agentbox flags (up to the subcommand) for an ablation case
variant() {
	local root=$WORK/state/$1
	case $1 in
	default) echo "--root $root" ;;
	no-seccomp) echo "--root $root --seccomp-profile none" ;;
	no-egress) echo "--root $root --egress-allow all" ;;
	seccomp-default) echo "--root $root --seccomp-profile default --egress-allow all" ;;
	egress20-only) echo "--root $root --seccomp-profile none --egress-allow $EGRESS20" ;;
	plain) echo "--root $root --seccomp-profile none --egress-allow all" ;;
	plain-nocgroup) echo "--root $root --seccomp-profile none --egress-allow all --cgroup-manager disabled" ;;
	plain-disk) echo "--root $WORK/disk-state/$1 --seccomp-profile none --egress-allow all" ;;
	default-disk) echo "--root $WORK/disk-state/$1" ;;
	esac
}
VARIANTS="default no-seccomp no-egress seccomp-default egress20-only plain plain-nocgroup plain-disk default-disk"

inner() {
	local v plan=$WORK/plan-ablation out=$OUT
	bench_state_fs
	mkdir -p "$WORK/logs" "$WORK/disk-state"
	for v in $VARIANTS; do mkdir -p "$WORK/state/$v" "$WORK/disk-state/$v"; done

	# ---- 1. ablation and 2. start-up, alternated
	: >"$plan"
	echo "case floor" >>"$plan"
	echo "step run $FLOOR $WORK/rootfs /bin/true" >>"$plan"
	echo "case samework" >>"$plan"
	echo "step run $SAMEWORK $WORK/bundle-true {id}" >>"$plan"
	for v in $VARIANTS; do
		printf 'case %s\nstep run %s %s run --bundle %s {id}\n' "$v" "$AB" "$(variant "$v")" "$WORK/bundle-true" >>"$plan"
	done
	printf 'case agentbox--version\nstep start %s --version\n' "$AB" >>"$plan"
	printf 'case static-true\nstep start %s/rootfs/bin/busybox true\n' "$WORK" >>"$plan"
	rm -f "$out/ablation.jsonl"
	say "ablation: $ROUNDS rounds of $(($(wc -w <<<"$VARIANTS") + 3)) cases"
	"$ABBENCH" rounds -n "$ROUNDS" -w 2 -s ablation -l "$WORK/logs/ablation.log" "$plan" "$out/ablation.jsonl" ||
		say "ablation: some runs failed (see $WORK/logs/ablation.log)"
	LD_DEBUG=statistics "$AB" --version 2>"$out/ld-statistics.txt" >/dev/null

	# ---- 1b. the same phases as the same-work floor (perf trace: markers only)
	if command -v perf >/dev/null; then
		local i c args=() ev=brk,mkdir,clone,clone3,pivot_root,execve,exit_group
		printf 'runtime:\n  netns_pool: 0\n' >"$WORK/nopool.yaml"
		mkdir -p "$WORK/state/nopool" "$WORK/phases"
		for ((i = 1; i <= ROUNDS; i++)); do
			for c in samework agentbox agentbox-nopool agentbox-plain; do
				local cmd
				case $c in
				samework) cmd="$SAMEWORK $WORK/bundle-true ph-$c-$i" ;;
				agentbox) cmd="$AB $(variant default) run --bundle $WORK/bundle-true ph-$c-$i" ;;
				agentbox-nopool) cmd="$AB --root $WORK/state/nopool --config $WORK/nopool.yaml run --bundle $WORK/bundle-true ph-$c-$i" ;;
				agentbox-plain) cmd="$AB $(variant plain) run --bundle $WORK/bundle-true ph-$c-$i" ;;
				esac
				# shellcheck disable=SC2086
				perf trace -T -f -e "$ev" -o "$WORK/phases/$c.$i.txt" -- $cmd >/dev/null 2>>"$WORK/logs/phases.log" &&
					args+=("$c=$WORK/phases/$c.$i.txt")
			done
		done
		python3 "$HERE/samephases.py" "${args[@]}" >"$out/same-phases.md" || say "samephases.py failed"
	fi

	# ---- 3. strace
	local A="$AB $(variant default)"
	strace -c -f -o "$out/strace-c-default.txt" $A run --bundle "$WORK/bundle-true" s1 || say "strace -c failed"
	strace -c -f -o "$out/strace-c-plain.txt" $AB $(variant plain) run --bundle "$WORK/bundle-true" s2 || say "strace -c failed"
	local i
	for i in 1 2 3 4 5; do
		strace -f -tt -T -o "$out/strace-tt-default.$i.txt" $A run --bundle "$WORK/bundle-true" s3-$i || say "strace -tt failed"
	done
	python3 "$HERE/phases.py" "$out"/strace-tt-default.*.txt >"$out/phases.md" || say "phases.py failed"

	# ---- 4. perf
	if command -v perf >/dev/null; then
		perf stat -r 10 -e task-clock,context-switches,cpu-migrations,page-faults -o "$out/perf-stat-default.txt" \
			$A run --bundle "$WORK/bundle-true" p1 || say "perf stat failed"
		perf stat -r 10 -e task-clock,context-switches,cpu-migrations,page-faults -o "$out/perf-stat-plain.txt" \
			$AB $(variant plain) run --bundle "$WORK/bundle-true" p2 || say "perf stat failed"
		printf 'case default\nstep run %s run --bundle %s {id}\n' "$A" "$WORK/bundle-true" >"$WORK/plan-perf"
		perf record -q -F 5000 -e cpu-clock -g -o "$WORK/perf.data" -- \
			"$ABBENCH" rounds -n 30 -w 0 -s perf "$WORK/plan-perf" "$WORK/perf.jsonl" >/dev/null 2>&1 || say "perf record failed"
		# user-space call chains (the libraries have no frame pointers): DWARF unwinding, fewer runs
		perf record -q -F 5000 -e cpu-clock --call-graph dwarf,16384 -o "$WORK/perf-dwarf.data" -- \
			"$ABBENCH" rounds -n 8 -w 0 -s perf "$WORK/plan-perf" "$WORK/perf-dwarf.jsonl" >/dev/null 2>&1 || say "perf record (dwarf) failed"
		perf report -i "$WORK/perf-dwarf.data" --children --sort sym --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -120 >"$out/perf-children.txt"
		perf report -i "$WORK/perf.data" --no-children --sort comm,dso --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -25 >"$out/perf-dso.txt"
		perf report -i "$WORK/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -60 >"$out/perf-sym.txt"
		perf report -i "$WORK/perf.data" --children --sort sym --stdio -g none 2>/dev/null |
			grep -E '__x64_sys_|__do_sys_|exc_page_fault|copy_process|setup_net|cleanup_net|nfnetlink_rcv|cgroup_mkdir|do_seccomp|bprm_execve|exit_mmap' |
			head -40 >"$out/perf-kernel.txt"
	fi

	# ---- 5. callgrind (parent only; see the header for what valgrind cannot do)
	if command -v valgrind >/dev/null; then
		mkdir -p "$WORK/bundle-cg"
		jq 'del(.process.rlimits)' "$WORK/bundle-true/config.json" >"$WORK/bundle-cg/config.json"
		valgrind -q --tool=callgrind --callgrind-out-file="$WORK/cg-plain.%p" \
			$AB $(variant plain) run --bundle "$WORK/bundle-cg" c1 2>"$WORK/logs/cg.log"
		valgrind -q --tool=callgrind --callgrind-out-file="$WORK/cg-egress20.%p" \
			$AB $(variant egress20-only) run --bundle "$WORK/bundle-cg" c2 2>>"$WORK/logs/cg.log"
		valgrind -q --tool=callgrind --callgrind-out-file="$WORK/cg-version.%p" $AB --version >/dev/null 2>>"$WORK/logs/cg.log"
		local f
		for f in "$WORK"/cg-*.*; do
			callgrind_annotate --inclusive=yes "$f" 2>/dev/null | head -60 >"$out/callgrind-$(basename "${f%.*}")-inclusive.txt"
			callgrind_annotate "$f" 2>/dev/null | head -45 >"$out/callgrind-$(basename "${f%.*}")-self.txt"
		done
	fi
}

if [ "${1:-}" = --inner ]; then
	inner
	exit 0
fi

ROUNDS=20 OUT=$HERE/results/profile KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--out) OUT=$2; shift ;;
	--keep) KEEP=1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option $1" ;;
	esac
	shift
done
command -v strace >/dev/null || die "needs strace"
WORK=$(mktemp -d /tmp/agentbox-profile.XXXXXX) || die mktemp
trap '[ -n "$KEEP" ] && say "work directory kept: $WORK" || rm -rf "$WORK"' EXIT
CRUN=
bench_setup
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cut -d' ' -f1-3 /proc/loadavg >"$OUT/load-start"
export WORK AB FLOOR SAMEWORK ABBENCH EGRESS20 ROUNDS OUT BENCH_STATE_FS=tmpfs
unshare -m --propagation private "$ABBENCH" reap -- bash "$0" --inner || die "profile failed"
cut -d' ' -f1-3 /proc/loadavg >"$OUT/load-end"
python3 - "$OUT" <<'EOF'
import json, statistics, sys, collections
out = sys.argv[1]
d = collections.defaultdict(list)
rounds = collections.defaultdict(dict)
for l in open(f"{out}/ablation.jsonl"):
    r = json.loads(l)
    if r["status"] == 0:
        d[r["case"]].append(r)
        rounds[r["round"]][r["case"]] = r
def cpu(r): return (r["utime_us"] + r["stime_us"]) / 1e3
def paired(a, b, f):
    v = [f(x[a]) - f(x[b]) for x in rounds.values() if a in x and b in x]
    return statistics.median(v) if v else float("nan")
wall = lambda r: r["ns"] / 1e6
lines = ["| case | n | wall median ms | cpu median ms | wall vs default (paired) | cpu vs default (paired) |",
         "| --- | ---: | ---: | ---: | ---: | ---: |"]
for c in ["floor", "samework", "default", "no-seccomp", "no-egress", "seccomp-default", "egress20-only", "plain",
          "plain-nocgroup", "plain-disk", "default-disk", "agentbox--version", "static-true"]:
    v = d.get(c, [])
    if not v:
        continue
    lines.append(f"| {c} | {len(v)} | {statistics.median(map(wall, v)):.1f} | {statistics.median(map(cpu, v)):.1f} | "
                 f"{paired(c, 'default', wall):+.1f} | {paired(c, 'default', cpu):+.1f} |")
pairs = [("default", "no-seccomp", "agent seccomp profile (compile + load)"),
         ("default", "no-egress", "default-deny egress (nft batch + sentry)"),
         ("egress20-only", "plain", "egress with 20 entries"),
         ("seccomp-default", "plain", "default seccomp profile"),
         ("plain", "plain-nocgroup", "cgroups (10 hierarchies)"),
         ("plain-disk", "plain", "state on ext4 (fsync, unlink)"),
         ("plain", "floor", "plain agentbox beyond the old floor"),
         ("default", "samework", "agentbox's defaults beyond the same-work floor"),
         ("plain", "samework", "plain agentbox beyond the same-work floor"),
         ("agentbox--version", "static-true", "exec + dynamic linking of agentbox")]
lines += ["", "| cost of | wall ms (median of paired differences) | cpu ms |", "| --- | ---: | ---: |"]
for a, b, what in pairs:
    lines.append(f"| {what} (`{a}` − `{b}`) | {paired(a, b, wall):+.1f} | {paired(a, b, cpu):+.1f} |")
open(f"{out}/ablation.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
say "output in $OUT (load at start $(cat "$OUT/load-start"), at end $(cat "$OUT/load-end"))"
