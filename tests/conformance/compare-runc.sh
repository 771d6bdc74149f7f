#!/bin/bash
# The cases of runc's integration suite that pass on runc and fail on agentbox
# (and the reverse), from $ABCF_RESULTS/runc-int-{runc,agentbox}.tap or the two
# files given.
. "$(dirname "$0")/env.sh"
r=${1:-$ABCF_RESULTS/runc-int-runc.tap} a=${2:-$ABCF_RESULTS/runc-int-agentbox.tap}
names() { # FILE pass|fail: the case names, without numbers and times
	if [ "$2" = pass ]; then grep '^ok' "$1" | grep -v '# skip'; else grep '^not ok' "$1"; fi |
		sed -E 's/^(not )?ok [0-9]+ //; s/ in [0-9]+ms.*//' | sort
}
for f in "$r" "$a"; do
	printf '%s: pass=%s skip=%s fail=%s\n' "$(basename "$f")" "$(names "$f" pass | wc -l)" \
		"$(grep -c '^ok .*# skip' "$f")" "$(names "$f" fail | wc -l)"
done
echo; echo "pass on runc, fail on agentbox:"
comm -12 <(names "$r" pass) <(names "$a" fail) | sed 's/^/  /'
echo; echo "pass on agentbox, fail on runc:"
comm -12 <(names "$a" pass) <(names "$r" fail) | sed 's/^/  /'
