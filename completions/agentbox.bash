# bash completion for agentbox(8).
#
# The commands, subcommands and options are read from the completed binary's
# own help (`agentbox --help`, `agentbox COMMAND --help`), which prints its
# command table: they stay in step with the agentbox on PATH, whatever its
# version. Container IDs come from `agentbox list -q` (with the --root given on
# the line), named boxes from `agentbox kit ls -q`, kits are *.yaml files.
# Installed as share/bash-completion/completions/agentbox; needs nothing of
# the bash-completion package.

# _agentbox_opts HELP-TEXT [SUB]: "OPTION ARGUMENT" lines ("-" for none) of
# the synopses in HELP-TEXT (those of `agentbox kit SUB` when SUB is given);
# for the global help, its option list.
_agentbox_opts() {
	printf '%s\n' "$1" | awk -v sub_="$2" '
		/^Global options:/ { global = 1; next }
		global && /^  -/ {
			spec = $0; sub(/^  /, "", spec); sub(/  .*/, "", spec)
			n = split(spec, t, " ")
			arg = t[n] ~ /^-/ ? "-" : t[n]
			for (i = 1; i <= n; i++) if (t[i] ~ /^-/) { o = t[i]; sub(/,$/, "", o); print o, arg }
			next
		}
		global { next }
		/^usage: / || /^       agentbox / {
			line = $0; sub(/^usage: /, "", line); sub(/^ +/, "", line)
			n = split(line, t, " ")
			if (sub_ != "" && t[3] != sub_) next
			for (i = 1; i <= n; i++) {
				w = t[i]; closed = w ~ /\]/
				gsub(/^\[+|[].]+$/, "", w)
				if (w !~ /^-./ || w == "--") continue
				nx = t[i + 1]; gsub(/^\[+|[].]+$/, "", nx)
				arg = (!closed && i < n && nx !~ /^-/ && nx != "") ? nx : "-"
				m = split(w, alt, "|")
				for (j = 1; j <= m; j++) if (alt[j] ~ /^-/) print alt[j], arg
			}
		}'
}

# _agentbox_subs HELP-TEXT: the subcommands its synopses name (kit, egress:
# "agentbox kit build ..."); none for a command without.
_agentbox_subs() {
	printf '%s\n' "$1" | awk '(/^usage: / || /^       agentbox /) {
		sub(/^usage: /, ""); sub(/^ +/, ""); if ($3 ~ /^[a-z]+$/ && !seen[$3]++) print $3 }'
}

# _agentbox_value ARGUMENT: COMPREPLY for an option's or operand's value.
_agentbox_value() {
	local cur=$2
	case $1 in
	*'|'*) mapfile -t COMPREPLY < <(compgen -W "${1//|/ }" -- "$cur") ;;
	DIR | BUNDLE) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	FILE | SOCK) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	KIT) mapfile -t COMPREPLY < <(compgen -f -X '!*.yaml' -- "$cur"; compgen -f -X '!*.yml' -- "$cur"
		compgen -d -S / -- "$cur") ;;
	ID) mapfile -t COMPREPLY < <(compgen -W "$("${_agentbox_cmd[@]}" list -q 2>/dev/null)" -- "$cur") ;;
	BOX) mapfile -t COMPREPLY < <(compgen -W "$("${_agentbox_cmd[@]}" kit ls -q 2>/dev/null)" -- "$cur") ;;
	BOX_OR_ID) mapfile -t COMPREPLY < <(compgen -W "$("${_agentbox_cmd[@]}" list -q 2>/dev/null)
		$("${_agentbox_cmd[@]}" kit ls -q 2>/dev/null)" -- "$cur") ;;
	SIGNAL) mapfile -t COMPREPLY < <(compgen -W "$(compgen -A signal | sed -n 's/^SIG//p')" -- "$cur") ;;
	*) COMPREPLY=() ;;
	esac
}

_agentbox() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local -a _agentbox_cmd=("${COMP_WORDS[0]}")
	local help opts i w arg cmd= sub= start
	compopt +o default 2>/dev/null
	# the global options before the command (their values skipped; --root kept
	# for the IDs), then the command
	help=$("${COMP_WORDS[0]}" --help 2>/dev/null) || return 0
	opts=$(_agentbox_opts "$help")
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -* ]]; then
			arg=$(awk -v o="${w%%=*}" '$1 == o { print $2 }' <<<"$opts")
			if [[ $w != *=* && -n $arg && $arg != - ]]; then
				[[ $w == --root ]] && _agentbox_cmd+=(--root "${COMP_WORDS[i + 1]}")
				((i++))
			fi
			continue
		fi
		cmd=$w
		break
	done
	if [[ -z $cmd ]]; then
		arg=$(awk -v o="${COMP_WORDS[COMP_CWORD - 1]}" '$1 == o { print $2 }' <<<"$opts")
		if ((COMP_CWORD > 1)) && [[ -n $arg && $arg != - ]]; then
			_agentbox_value "$arg" "$cur"
		elif [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(awk '{ print $1 }' <<<"$opts")" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' <<<"$help")" -- "$cur")
		fi
		return 0
	fi
	# the command's own help, and its subcommand (kit, egress)
	help=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null) || return 0
	start=$((i + 1))
	local subs
	subs=$(_agentbox_subs "$help")
	if [[ -n $subs ]]; then
		if ((COMP_CWORD == start)); then
			mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
			return 0
		fi
		sub=${COMP_WORDS[start]}
		start=$((start + 1))
	fi
	opts=$(_agentbox_opts "$help" "$sub")
	# after "--" (kit run): the box's command
	for ((i = start; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i == COMP_CWORD - 1)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
			else
				compopt -o default 2>/dev/null
			fi
			return 0
		fi
	done
	arg=$(awk -v o="${COMP_WORDS[COMP_CWORD - 1]}" '$1 == o { print $2 }' <<<"$opts")
	if ((COMP_CWORD > start)) && [[ ${COMP_WORDS[COMP_CWORD - 1]} == -* && -n $arg && $arg != - ]]; then
		[[ $arg == NAME && $cmd == kit ]] && arg=BOX
		_agentbox_value "$arg" "$cur"
		return 0
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(awk '{ print $1 }' <<<"$opts")" -- "$cur")
		return 0
	fi
	# the operand: which one, counting those before it (option values left out)
	local n=0
	for ((i = start; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -* ]]; then
			arg=$(awk -v o="$w" '$1 == o { print $2 }' <<<"$opts")
			[[ -n $arg && $arg != - ]] && ((i++))
			continue
		fi
		((n++))
	done
	case "$cmd${sub:+ $sub}:$n" in
	"kit build:0" | "kit run:0" | "kit show:0") _agentbox_value KIT "$cur" ;;
	"kit rm:"* | "kit fork:0") _agentbox_value BOX "$cur" ;;
	"egress log:0" | "egress show:0" | "egress suggest:0" | "egress allow:0" | "egress deny:0" | exec:0 | ps:0 | events:0)
		_agentbox_value BOX_OR_ID "$cur" ;;
	start:0 | state:0 | kill:0 | delete:0 | pause:0 | resume:0 | update:0) _agentbox_value ID "$cur" ;;
	kill:1) _agentbox_value SIGNAL "$cur" ;;
	exec:1) mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u) ;;
	*) COMPREPLY=() ;;
	esac
	return 0
}

complete -F _agentbox agentbox
