#!/usr/bin/env bats
# Shell completion (completions/agentbox.bash, completions/_agentbox): every
# command of `agentbox --help`, every subcommand of kit and egress (suggest
# too) and every
# option of every synopsis is offered, by bash and by zsh; values (formats,
# --rootless), container IDs under the --root given, named boxes and kits.
# The scripts read the words from the binary's own help, so this checks the
# reading against the command table as it is now.

load helpers

setup() {
	requires agentbox
	setup_state_only
	BIN=$TEST_DIR/bin
	mkdir -p "$BIN"
	ln -s "$(realpath "$RUNTIME")" "$BIN/agentbox"
	COMPLETIONS=$REPO_ROOT/completions
}

teardown() {
	teardown_bundle
}

# comp WORDS...: what bash offers for the last word, one a line, sorted
comp() {
	local IFS=$'\037'
	printf '%s\n' "$*" | comp_each
}

# comp_each: for each line of stdin (the words of a command line joined by
# \037), what bash offers for its last word, sorted, then a line "--": one
# bash for them all.
comp_each() {
	PATH=$BIN:$PATH bash -c '
		source "$0"
		while IFS= read -r line; do
			IFS=$'"'"'\037'"'"' read -r -a COMP_WORDS <<<"$line"
			[[ $line == *$'"'"'\037'"'"' ]] && COMP_WORDS+=("")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
			_agentbox
			printf "%s\n" "${COMPREPLY[@]}" | sort | grep .
			echo --
		done' "$COMPLETIONS/agentbox.bash" | sed '${/^--$/d}'
}

# zcomp WORDS...: the same from zsh's _agentbox (compadd, _files and
# _command_names stand in for the completion system's)
zcomp() {
	PATH=$BIN:$PATH zsh -f -c '
		compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift; print -rl -- "$@" }
		_files() { print -r -- "_files $*" }
		_command_names() { print -r -- "_command_names $*" }
		source "$1" >/dev/null
		shift
		local -a words; words=("$@"); local CURRENT=$#
		_agentbox' zsh "$COMPLETIONS/_agentbox" "$@" | sort
}

# The commands of `agentbox --help`, its global options; a command's
# subcommands and long options as its synopses (under usage:) name them.
help_commands() { "$RUNTIME" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'; }
help_globals() { "$RUNTIME" --help | grep -oE '^  (-v, )?--[a-z-]+' | grep -oE -- '--[a-z-]+$'; }
synopses() { "$RUNTIME" "$1" --help | awk 'NR == 1 || /^       agentbox / { sub(/^usage: /, ""); sub(/^ +/, ""); print } /^$/ { exit }'; }

# assert_offers WANTED GOT: every line of WANTED is a line of GOT
assert_offers() {
	local w
	while read -r w; do
		[ -z "$w" ] || grep -qxF -- "$w" <<<"$2" || fail "\"$w\" is not offered; offered: $(tr '\n' ' ' <<<"$2")"
	done <<<"$1"
}

@test "completion (bash): every command, kit and egress subcommand, and option of the command table" {
	local cmds sub line opts
	cmds=$(help_commands)
	[ "$(wc -l <<<"$cmds")" -ge 17 ]
	assert_offers "$cmds" "$(comp agentbox "")"
	assert_offers "$(help_globals)" "$(comp agentbox --)"
	assert_offers "$(printf '%s\n' build run show ls rm fork)" "$(comp agentbox kit "")"
	assert_offers "$(printf '%s\n' log show suggest allow deny)" "$(comp agentbox egress "")"
	# each synopsis' long options, after the command (and subcommand): the
	# queries first, then one bash answers them all
	local queries= wants=() i
	for cmd in $cmds; do
		while read -r line; do
			opts=$(grep -oE -- '--[a-z][a-z-]+' <<<"$line" | sort -u)
			[ -n "$opts" ] || continue
			sub=$(awk '$3 ~ /^[a-z]+$/ { print $3 }' <<<"$line")
			queries+="agentbox"$'\037'"$cmd"$'\037'"${sub:+$sub$'\037'}--"$'\n'
			wants+=("$opts")
		done < <(synopses "$cmd")
	done
	printf '%s' "$queries" | comp_each | awk -v d="$TEST_DIR/answer" 'BEGIN { n = 0 } /^--$/ { n++; next } { print > (d "." n) }'
	for ((i = 0; i < ${#wants[@]}; i++)); do
		assert_offers "${wants[i]}" "$(cat "$TEST_DIR/answer.$i" 2>/dev/null)"
	done
	# a prefix narrows; values of options that take one of a few words
	[ "$(comp agentbox eg)" = egress ]
	[ "$(comp agentbox kit run --w | tr "\n" " ")" = "--workspace --workspace-guard " ]
	[ "$(comp agentbox --rootless "" | tr '\n' ' ')" = "auto false true " ]
	# learn mode's words: the global mode, kit run's flag, egress suggest's options
	[ "$(comp agentbox --egress-mode "" | tr '\n' ' ')" = "enforce learn " ]
	[ "$(comp agentbox kit run --l)" = --learn ]
	[ "$(comp agentbox egress suggest -- | tr '\n' ' ')" = "--json --wildcards " ]
	[ "$(comp agentbox list --format "" | tr '\n' ' ')" = "json table " ]
	[ "$(comp agentbox kill ID KI)" = KILL ]
	# the box's command after --, the kit's files for KIT
	[ "$(comp agentbox kit run -- ech | head -1)" = echo ]
	assert_offers kits/python-agent.yaml "$(cd "$REPO_ROOT" && comp agentbox kit run kits/py)"
}

@test "completion (zsh): the same commands, subcommands and options" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	local cmds
	cmds=$(help_commands)
	assert_offers "$cmds" "$(zcomp agentbox "")"
	assert_offers "$(help_globals)" "$(zcomp agentbox --)"
	assert_offers "$(printf '%s\n' build run show ls rm fork)" "$(zcomp agentbox kit "")"
	assert_offers "$(printf '%s\n' log show suggest allow deny)" "$(zcomp agentbox egress "")"
	for cmd in $cmds; do
		while read -r line; do
			opts=$(grep -oE -- '--[a-z][a-z-]+' <<<"$line" | sort -u)
			[ -n "$opts" ] || continue
			sub=$(awk '$3 ~ /^[a-z]+$/ { print $3 }' <<<"$line")
			assert_offers "$opts" "$(zcomp agentbox "$cmd" ${sub:+"$sub"} --)"
		done < <(synopses "$cmd")
	done
	[ "$(zcomp agentbox list --format "" | tr '\n' ' ')" = "json table " ]
	[ "$(zcomp agentbox --egress-mode "" | tr '\n' ' ')" = "enforce learn " ]
	[ "$(zcomp agentbox egress suggest -- | tr '\n' ' ')" = "--json --wildcards " ]
	[ "$(zcomp agentbox kit show "")" = "_files -g *.(yaml|yml)" ]
	[ "$(zcomp agentbox kit run -- "")" = "_command_names -e" ]
}

@test "completion: container IDs under the --root given, and named boxes' names" {
	requires root
	ensure_rootfs
	setup_bundle
	create_container abcp-one
	assert_success
	export AGENTBOX_BOXES=$TEST_DIR/boxes
	runtime kit run --name abcp-box --workspace "$TEST_DIR" -- true
	assert_success
	# IDs where a container is meant; box names too where a box is (exec, egress)
	[ "$(comp agentbox --root "$ROOT" state abcp)" = abcp-one ]
	[ "$(comp agentbox --root "$ROOT" egress allow abcp | tr '\n' ' ')" = "abcp-box abcp-one " ]
	[ "$(comp agentbox --root "$ROOT" egress suggest abcp | tr '\n' ' ')" = "abcp-box abcp-one " ]
	[ "$(comp agentbox kit rm abcp)" = abcp-box ]
	[ "$(comp agentbox kit run --name abc)" = abcp-box ]
	if command -v zsh >/dev/null; then
		[ "$(zcomp agentbox --root "$ROOT" kill abcp)" = abcp-one ]
		[ "$(zcomp agentbox kit fork "")" = abcp-box ]
		[ "$(zcomp agentbox --root "$ROOT" egress suggest abcp | tr '\n' ' ')" = "abcp-box abcp-one " ]
	fi
	runtime kit rm abcp-box
	assert_success
}
