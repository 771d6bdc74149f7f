#!/bin/bash
# The whole test suite: unit tests (C, TAP), then the bats suites against the real
# kernel and the real engines. Prints one summary line "N passed, N failed, N skipped".
# Usage: tests/run-all.sh [SUITE...]
#   suites: unit integration security netfilter kits engines reliability fuzz sanitize
#   default (what `make check` and CI run): unit sanitize security netfilter kits
#   engines reliability fuzz — the integration suite runs once, against the ASan/UBSan
#   build (sanitize), to stay within CI's time; `integration` runs it against the
#   plain build. See tests/README.md.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit sanitize security netfilter kits engines reliability fuzz)

# the test build: fault hooks compiled in (lib/test_hooks.h); every make below
# builds it, and `make install` later rebuilds without them
export TEST_HOOKS=${TEST_HOOKS:-yes}

logdir=$(mktemp -d /tmp/agentbox-tests.XXXXXX)
# the netfilter hook anchor the tests make goes at the end, unless it was there before
. scripts/host-pins.sh
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
	echo "== $name: $p passed, $f failed, $s skipped ($((SECONDS - suite_start)) s)"
	if [ "$f" -gt 0 ]; then
		failures+=("$name")
		grep -E -A25 '^not ok' "$log" | head -200
	fi
}

run_unit() {
	local log=$logdir/unit.log
	make -s all tests/netfilter/egress-driver tests/netfilter/gateway-driver >/dev/null || { echo "not ok 1 build" >"$log"; return; }
	: >"$log"
	for t in tests/unit/test_*.c; do
		t=${t%.c}
		make -s "$t" >/dev/null 2>"$logdir/build.err" || { echo "not ok 1 build $t" >>"$log"; cat "$logdir/build.err" >>"$log"; continue; }
		echo "# $t" >>"$log"
		# renumbering keeps one TAP stream per suite readable
		timeout 300 "./$t" >>"$log" 2>&1 || echo "not ok 0 $t exited with status $?" >>"$log"
	done
	# the tree's shape: layers point down, no circle of files, no file over 1,000 lines
	echo "# scripts/layers.py" >>"$log"
	python3 scripts/layers.py >>"$log" 2>&1 || echo "not ok 0 scripts/layers.py exited with status $?" >>"$log"
	tally unit "$log"
}

# run_bats NAME DIR [SECONDS]: one bats suite, killed after SECONDS (900)
run_bats() {
	local name=$1 dir=$2 limit=${3:-900}
	local log=$logdir/$name.log
	if ! ls "$dir"/*.bats >/dev/null 2>&1; then
		echo "== $name: no tests in $dir"
		return
	fi
	timeout "$limit" bats --tap "$dir" >"$log" 2>&1
	local rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || echo "not ok 0 $name: bats exited with status $rc" >>"$log"
	tally "$name" "$log"
}

# fuzz: every libFuzzer target for a few seconds (make fuzz-smoke); one TAP line
# per target from run.sh's summary ("   TARGET: RESULT").
run_fuzz() {
	local log=$logdir/fuzz.log
	if ! command -v clang >/dev/null; then
		echo "ok 1 fuzz # skip clang is not installed (scripts/install-deps.sh test)" >"$log"
		tally fuzz "$log"
		return
	fi
	make -s fuzz-smoke >"$logdir/fuzz.out" 2>&1
	local rc=$? n=0 line t r
	: >"$log"
	while IFS= read -r line; do
		[[ $line =~ ^\ \ \ ([a-z_]+):\ (.*)$ ]] || continue
		t=${BASH_REMATCH[1]} r=${BASH_REMATCH[2]}
		n=$((n + 1))
		if [[ $r == FOUND* ]]; then
			echo "not ok $n fuzz $t: $r" >>"$log"
		else
			echo "ok $n fuzz $t: $r" >>"$log"
		fi
	done < <(sed -n '/^== fuzz summary/,$p' "$logdir/fuzz.out")
	if [ $n -eq 0 ] || { [ $rc -ne 0 ] && ! grep -q '^not ok' "$log"; }; then
		echo "not ok 0 fuzz: make fuzz-smoke exited with status $rc" >>"$log"
		tail -n 20 "$logdir/fuzz.out" >>"$log"
	fi
	grep -E '^\[' "$logdir/fuzz.out" >>"$log"
	tally fuzz "$log"
}

# sanitize: the whole integration suite against an ASan+UBSan build of agentbox,
# with LeakSanitizer on every command (a leak is exit status 23, a UBSan finding
# stops the process). Built in a copy of the tracked files (working-tree content),
# so the tree's own objects stay plain.
run_sanitize() {
	local log=$logdir/sanitize.log tree=$logdir/san-tree
	if ! git rev-parse --git-dir >/dev/null 2>&1; then
		echo "ok 1 sanitize # skip not a git checkout: the sanitizer build copies the tracked files" >"$log"
		tally sanitize "$log"
		return
	fi
	mkdir -p "$tree"
	git ls-files -z | tar --null -T - -cf - 2>/dev/null | tar -x -C "$tree"
	if ! make -s -C "$tree" -j2 SANITIZE=address,undefined agentbox agentbox-gateway >"$logdir/sanitize-build.log" 2>&1; then
		{ echo "not ok 1 sanitize: the ASan/UBSan build failed"; tail -n 20 "$logdir/sanitize-build.log"; } >"$log"
		tally sanitize "$log"
		return
	fi
	AGENTBOX_SANITIZED=1 ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=23} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
	RUNTIME=$tree/agentbox AGENTBOX_GATEWAY=$tree/agentbox-gateway run_bats sanitize tests/integration 1200
	rm -rf "$tree"
}

for s in "${suites[@]}"; do
	suite_start=$SECONDS
	case $s in
	unit) run_unit ;;
	integration) run_bats integration tests/integration ;;
	security) run_bats security tests/security ;;
	netfilter) run_bats netfilter tests/netfilter ;;
	kits) [ -f tests/integration/kit.bats ] && echo "== kits: run as part of integration (sanitize)" ;;
	engines) run_bats engines tests/engines ;;
	reliability) run_bats reliability tests/reliability ;;
	fuzz) run_fuzz ;;
	sanitize) run_sanitize ;;
	*) echo "unknown suite $s" >&2; exit 2 ;;
	esac
done

host_pins_cleanup
echo "logs: $logdir"
[ ${#failures[@]} -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped (${SECONDS} s)"
[ "$failed" -eq 0 ]
