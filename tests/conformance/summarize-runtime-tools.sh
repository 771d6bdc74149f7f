#!/bin/bash
# runtime-tools verdicts side by side ($ABCF_RESULTS/runtime-tools-{runc,agentbox}).
# A case passes when its TAP has no "not ok", no error diagnostic outside a
# test line's block, and its exit status (summary.txt) is 0.
. "$(dirname "$0")/env.sh"
verdict() { # dir case
	local f=$1/$2.tap rc ok nok toperr
	[ -f "$f" ] || { echo missing; return; }
	rc=$(awk -v c="$2" '$1 == c {sub("rc=", "", $2); print $2}' "$1/summary.txt")
	ok=$(grep -c '^ok' "$f"); nok=$(grep -c '^not ok' "$f")
	toperr=$(awk '/^(ok|not ok) /{t=1} /^1\.\./{t=0} /^TAP version/{t=0}
		/^  ---/{inb=1; next} /^  \.\.\./{inb=0; next}
		inb && !t && /"error": "[^"]/{print "y"; exit}' "$f")
	if [ "${rc:-1}" != 0 ] || [ "$nok" -ne 0 ] || [ -n "$toperr" ]; then
		echo "FAIL($ok/$((ok + nok)))"
	else
		echo "pass($ok/$((ok + nok)))"
	fi
}
a=$ABCF_RESULTS/runtime-tools-agentbox r=$ABCF_RESULTS/runtime-tools-runc
pa=0 pr=0 n=0
printf '%-34s %-14s %-14s\n' case runc agentbox
for f in "$a"/*.tap; do
	c=$(basename "$f" .tap)
	va=$(verdict "$a" "$c"); vr=$(verdict "$r" "$c")
	flag=""; [[ $vr == pass* && $va != pass* ]] && flag="  <== agentbox only"
	[[ $va == pass* ]] && pa=$((pa + 1)); [[ $vr == pass* ]] && pr=$((pr + 1)); n=$((n + 1))
	printf '%-34s %-14s %-14s%s\n' "$c" "$vr" "$va" "$flag"
done
echo "cases $n: runc passes $pr, agentbox $pa"
