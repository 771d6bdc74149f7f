#!/bin/bash
# The fuzz campaign: each target for SECONDS under libFuzzer (built by
# `make fuzz-build` into build/fuzz/). Usage: tests/fuzz/run.sh SECONDS TARGET...
#
# The working corpus of a target is build/fuzz/corpus/TARGET (kept between
# runs, so fuzzing is incremental); it starts from the committed seeds
# (tests/fuzz/corpus/TARGET), the regression inputs, and the real inputs the
# repository holds, the engines' payloads among them (engine config.json/process.json/
# update payloads, test configs, kits, agent configs).
#
# A crash, leak, timeout or out-of-memory input is copied to
# tests/fuzz/regressions/TARGET/ (commit it with the fix: `make unit` replays
# it from then on) and the script fails at the end.
#
# Environment: FUZZ_JOBS (targets run at once, default 1), FUZZ_RSS_MB (2048),
# FUZZ_SEED (libFuzzer's -seed; unset: a new one each run),
# AGENTBOX_FIXTURES (engine payloads; default tests/data/engine-fixtures).
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
seconds=${1:?usage: run.sh SECONDS TARGET...}
shift
[ $# -gt 0 ] || { echo "run.sh: no targets" >&2; exit 2; }
fixtures=${AGENTBOX_FIXTURES:-$top/tests/data/engine-fixtures}
work=build/fuzz
rss=${FUZZ_RSS_MB:-2048}
seed=()
[ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")

# extra seed files of a target, from outside tests/fuzz
extra_seeds() {
	case $1 in
	config) ls "$fixtures"/*-create-config.json tests/data/bad-configs/*.json 2>/dev/null
		[ -x ./agentbox ] && { ./agentbox spec --bundle "$work/spec" >/dev/null 2>&1 || true; ls "$work"/spec/config.json 2>/dev/null; } ;;
	process) ls "$fixtures"/*-exec-process.json 2>/dev/null ;;
	resources) ls "$fixtures"/*-update-resources.json 2>/dev/null ;;
	kit) ls tests/data/kits/*.yaml kits/*.yaml 2>/dev/null ;;
	agent_config) ls tests/data/agent-config/*.yaml 2>/dev/null ;;
	yaml) ls tests/data/kits/*.yaml kits/*.yaml tests/data/agent-config/*.yaml 2>/dev/null ;;
	esac
}

# fuzz_one TARGET: one target's run; its verdict goes to $work/TARGET.result
fuzz_one() {
	local t=$1
	local bin=$work/fuzz_$t corpus=$work/corpus/$t seeds=$work/seeds/$t art=$work/artifacts/$t
	local log=$work/$t.log res=$work/$t.result
	mkdir -p "$corpus" "$seeds" "$art" "$work/spec"
	rm -f "$art"/* "$res"
	local f
	for f in $(extra_seeds "$t"); do cp -f "$f" "$seeds/$(echo "$f" | tr / _)"; done
	local dirs=("$corpus" "$seeds") dict=()
	[ -d tests/fuzz/corpus/$t ] && dirs+=("tests/fuzz/corpus/$t")
	[ -d tests/fuzz/regressions/$t ] && dirs+=("tests/fuzz/regressions/$t")
	[ -f tests/fuzz/$t.dict ] && dict=(-dict=tests/fuzz/$t.dict)
	echo "== fuzz $t for ${seconds}s"
	# new inputs go to the first directory (the working corpus), never to the repo
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb="$rss" -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$art/" "${seed[@]}" "${dict[@]}" "${dirs[@]}" >"$log" 2>&1
	local rc=$?
	local execs cov found
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
	found=$(ls "$art" 2>/dev/null)
	if [ $rc -ne 0 ] || [ -n "$found" ]; then
		mkdir -p tests/fuzz/regressions/$t
		for f in $found; do cp "$art/$f" tests/fuzz/regressions/$t/; done
		{
			grep -E -m1 'INFO: Seed: ' "$log"
			grep -E -m5 'ERROR: |FUZZ_CHECK|SUMMARY|runtime error' "$log"
			echo "   FOUND: ${found:-exit status $rc} -> tests/fuzz/regressions/$t/ (log: $log)"
			echo "   replay: $bin tests/fuzz/regressions/$t/${found%% *}"
		} | sed "s/^/[$t] /"
		echo "FOUND ${found:-exit $rc}" >"$res"
	else
		echo "${execs:-?} runs, $cov, corpus $(ls "$corpus" | wc -l)" >"$res"
	fi
}

for t in "$@"; do
	[ -x "$work/fuzz_$t" ] || { echo "run.sh: $work/fuzz_$t missing (make fuzz-build)" >&2; exit 2; }
done
jobs=${FUZZ_JOBS:-1}
running=0
for t in "$@"; do
	if [ "$jobs" -le 1 ]; then
		fuzz_one "$t"
		continue
	fi
	fuzz_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
failed=()
summary=()
for t in "$@"; do
	r=$(cat "$work/$t.result" 2>/dev/null || echo "FOUND no result")
	summary+=("$t: $r")
	[[ "$r" == FOUND* ]] && failed+=("$t")
done
echo "== fuzz summary"
printf '   %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: findings in ${failed[*]}"
	exit 1
fi
echo "fuzz: no findings"
