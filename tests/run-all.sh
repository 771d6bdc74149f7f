#!/bin/bash
# The whole test suite: unit tests (C, TAP), then the bats suites against the real
# kernel and the real engines. Prints one summary line "N passed, N failed, N skipped".
# Usage: tests/run-all.sh [SUITE...]   suites: unit integration netfilter kits engines
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit integration netfilter kits engines)

logdir=$(mktemp -d /tmp/agentbox-tests.XXXXXX)
passed=0 failed=0 skipped=0
failures=()

# count TAP lines of one suite's output
tally() {
	local name=$1 log=$2
	local p f s
	p=$(grep -cE '^ok [0-9]+' "$log" | tr -d ' ')
	s=$(grep -cE '^ok [0-9]+ .*# ?(skip|SKIP)' "$log" | tr -d ' ')
	f=$(grep -cE '^not ok [0-9]+' "$log" | tr -d ' ')
	p=$((p - s))
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "== $name: $p passed, $f failed, $s skipped"
	if [ "$f" -gt 0 ]; then
		failures+=("$name")
		grep -E -A25 '^not ok' "$log" | head -200
	fi
}

run_unit() {
	local log=$logdir/unit.log
	make -s all tests/netfilter/egress-driver >/dev/null || { echo "not ok 1 build" >"$log"; return; }
	: >"$log"
	for t in tests/unit/test_*.c; do
		t=${t%.c}
		make -s "$t" >/dev/null 2>"$logdir/build.err" || { echo "not ok 1 build $t" >>"$log"; cat "$logdir/build.err" >>"$log"; continue; }
		echo "# $t" >>"$log"
		# renumbering keeps one TAP stream per suite readable
		timeout 300 "./$t" >>"$log" 2>&1 || echo "not ok 0 $t exited with status $?" >>"$log"
	done
	tally unit "$log"
}

run_bats() {
	local name=$1 dir=$2
	local log=$logdir/$name.log
	if ! ls "$dir"/*.bats >/dev/null 2>&1; then
		echo "== $name: no tests in $dir"
		return
	fi
	timeout 900 bats --tap "$dir" >"$log" 2>&1
	local rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || echo "not ok 0 $name: bats exited with status $rc" >>"$log"
	tally "$name" "$log"
}

for s in "${suites[@]}"; do
	case $s in
	unit) run_unit ;;
	integration) run_bats integration tests/integration ;;
	netfilter) run_bats netfilter tests/netfilter ;;
	kits) [ -f tests/integration/kit.bats ] && echo "== kits: run as part of integration" ;;
	engines) run_bats engines tests/engines ;;
	*) echo "unknown suite $s" >&2; exit 2 ;;
	esac
done

echo "logs: $logdir"
[ ${#failures[@]} -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
