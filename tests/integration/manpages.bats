#!/usr/bin/env bats
# The man pages in man/: they render without groff warnings, every command that
# `agentbox --help` lists has its page, and each page's SYNOPSIS is the usage
# line that `agentbox COMMAND --help` prints.

load helpers

MAN_DIR=$REPO_ROOT/man

# man(1) and groff are Debian's man-db and groff-base; install them once if they
# are missing, and remember whether that worked.
setup_file() {
	local have=yes
	if ! command -v man >/dev/null || ! command -v groff >/dev/null; then
		have=no
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			export DEBIAN_FRONTEND=noninteractive
			{ apt-get install -y --no-install-recommends man-db groff-base ||
				{ apt-get update && apt-get install -y --no-install-recommends man-db groff-base; }; } \
				>"$BATS_FILE_TMPDIR/apt.log" 2>&1 || true
			command -v man >/dev/null && command -v groff >/dev/null && have=yes
		fi
	fi
	echo "$have" >"$BATS_FILE_TMPDIR/have-man"
}

requires_man() {
	[ "$(cat "$BATS_FILE_TMPDIR/have-man")" = yes ] ||
		skip "man-db and groff-base are not installed and could not be installed with apt-get"
}

# render FILE [WIDTH]: the page as plain text.
render() {
	LC_ALL=C.UTF-8 MANWIDTH=${2:-80} MAN_KEEP_FORMATTING= man -l "$1" 2>/dev/null |
		sed 's/.\x08//g'
}

# normalize: one line, single blanks, ASCII hyphens (groff may print U+2010 or
# U+2212 for - and \-), no blanks at either end.
normalize() {
	sed 's/\xe2\x80\x90/-/g; s/\xe2\x80\x91/-/g; s/\xe2\x88\x92/-/g' |
		tr '\n\t' '  ' | tr -s ' ' | sed 's/^ //; s/ $//'
}

# section TEXT-FILE NAME: the body of one top-level section of a rendered page.
section() {
	awk -v name="$2" '
		/^[A-Z][A-Z ]*$/ { on = ($0 == name); next }
		on { print }' "$1"
}

# The commands `agentbox --help` lists, one a line.
help_commands() {
	"$RUNTIME" --help | awk '
		/^Commands:/ { on = 1; next }
		on && /^  [a-z]/ { print $1 }
		on && /^$/ { exit }'
}

# usage_of CMD: the usage of `agentbox CMD --help` ("" for the main one), its
# synopses (one a line, under "usage: ") joined by " | ".
usage_of() {
	"$RUNTIME" ${1:+"$1"} --help | awk '
		NR == 1 && sub(/^usage: /, "") { u = $0; next }
		NR > 1 && u != "" && sub(/^       agentbox /, "agentbox ") { u = u " | " $0; next }
		{ exit }
		END { print u }'
}

page_of() {
	if [ -z "$1" ]; then echo "$MAN_DIR/agentbox.8"; else echo "$MAN_DIR/agentbox-$1.8"; fi
}

@test "man pages: every page renders without warnings at 80 columns" {
	requires_man
	local f out n=0
	for f in "$MAN_DIR"/*.[1-9]; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		[ -z "$out" ] || fail "$(basename "$f"): $out"
		[ -n "$(render "$f")" ] || fail "$(basename "$f") renders empty"
	done
	[ "$n" -gt 0 ] || fail "no man pages in $MAN_DIR"
}

@test "man pages: every page has a NAME line that whatis/apropos can read" {
	requires_man
	command -v lexgrog >/dev/null || skip "lexgrog (man-db) is not installed"
	local f
	for f in "$MAN_DIR"/*.[1-9]; do
		lexgrog "$f" >/dev/null 2>&1 || fail "$(basename "$f"): lexgrog cannot parse its NAME section"
	done
}

@test "man pages: agentbox(8), agentbox-egress(7) and one page for every command in --help" {
	requires agentbox
	local cmds cmd
	cmds=$(help_commands)
	[ -n "$cmds" ] || fail "no commands found in agentbox --help"
	[ -f "$MAN_DIR/agentbox.8" ] || fail "man/agentbox.8 is missing"
	[ -f "$MAN_DIR/agentbox-egress.7" ] || fail "man/agentbox-egress.7 is missing"
	for cmd in $cmds; do
		[ -f "$MAN_DIR/agentbox-$cmd.8" ] || fail "'$cmd' is in agentbox --help but man/agentbox-$cmd.8 is missing"
		grep -q "agentbox-$cmd (8)" "$MAN_DIR/agentbox.8" ||
			fail "agentbox(8) does not list agentbox-$cmd(8)"
	done
}

@test "man pages: each SYNOPSIS is the usage line of agentbox COMMAND --help" {
	requires agentbox
	requires_man
	local cmd usage page want got
	for cmd in "" $(help_commands); do
		usage=$(usage_of "$cmd")
		[ -n "$usage" ] || fail "agentbox ${cmd:+$cmd }--help prints no usage line"
		page=$(page_of "$cmd")
		[ -f "$page" ] || continue   # the test above names missing pages
		# several forms in one usage line ("A | agentbox kit B") are lines of their own
		want=$(printf '%s\n' "$usage" | sed 's/ | agentbox / agentbox /g' | normalize)
		render "$page" 1000 >"$BATS_TEST_TMPDIR/page"
		got=$(section "$BATS_TEST_TMPDIR/page" SYNOPSIS | normalize)
		[ "$got" = "$want" ] ||
			fail "$(basename "$page"): SYNOPSIS differs from 'agentbox ${cmd:+$cmd }--help'"$'\n'"  page: $got"$'\n'"  help: $want"
	done
}

@test "man pages: every long option of a usage line is described in the page" {
	requires agentbox
	requires_man
	local cmd page opt body
	for cmd in $(help_commands); do
		page=$(page_of "$cmd")
		[ -f "$page" ] || continue
		render "$page" 1000 >"$BATS_TEST_TMPDIR/page"
		body=$(section "$BATS_TEST_TMPDIR/page" OPTIONS | normalize)
		for opt in $(usage_of "$cmd" | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
			[[ " $body" == *[\ ,]"$opt"[\ ,=]* ]] ||
				fail "$(basename "$page"): OPTIONS does not describe $opt"
		done
	done
}

@test "man pages: agentbox(8) describes every global option of agentbox --help" {
	requires agentbox
	requires_man
	local opt body
	render "$MAN_DIR/agentbox.8" 1000 >"$BATS_TEST_TMPDIR/page"
	body=$(section "$BATS_TEST_TMPDIR/page" "GLOBAL OPTIONS" | normalize)
	for opt in $("$RUNTIME" --help | sed -n '/^Global options:/,/^$/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		[[ " $body" == *[\ ,]"$opt"[\ ,=]* ]] || fail "agentbox(8) does not describe the global option $opt"
	done
}
