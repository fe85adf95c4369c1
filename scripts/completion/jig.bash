# bash completion for jig (installed as share/bash-completion/completions/jig).
# Commands and each command's flags come from `jig help` (the one text the
# man page is made from too); Flow and input names from `jig list --json`,
# which reads the project and runs nothing.

# _jig_names PROJECT [FLOW]: the project's Flow names, or FLOW's inputs.
_jig_names() {
	local json
	json=$("${COMP_WORDS[0]}" list ${2:+"$2"} --json --project "$1" 2>/dev/null) || return 0
	if [ -z "$2" ]; then
		printf '%s\n' "$json" | sed -n 's/^ \{4,6\}"name": "\([^"]*\)",\{0,1\}$/\1/p'
	else
		printf '%s\n' "$json" | awk '/"inputs": \[\]/ { exit } /"inputs": \[/ { on = 1; next } on && /\]/ { exit } on { gsub(/[ ",]/, ""); print }'
	fi
}

# _jig_help_flags CMD: the flags `jig help` lists for CMD.
_jig_help_flags() {
	"${COMP_WORDS[0]}" help 2>/dev/null | awk -v c="$1" '
		/^  [a-z]/ { on = ($1 == c) } /^$/ { on = 0; opt = 0 } /^options:/ { opt = 1 }
		on || opt { while (match($0, /--[a-z][a-z-]*/)) { print substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH) } }' | sort -u
}

_jig() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd="" project=. flow="" i w
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case "$w" in
		--project) project=${COMP_WORDS[i+1]:-.}; i=$((i + 1)); continue ;;
		--output|--input|--timeout|--expiry|--verification|--display|--record|--provider|--out) i=$((i + 1)); continue ;;
		-*) continue ;;
		esac
		if [ -z "$cmd" ]; then cmd=$w; elif [ -z "$flow" ]; then flow=$w; fi
	done
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" help 2>/dev/null | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' | sort -u)" -- "$cur"))
		return 0
	fi
	case "$prev" in
	--output|--project|--out) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
	--record) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
	--verification) COMPREPLY=($(compgen -W "cached strict fast" -- "$cur")); return 0 ;;
	--display) COMPREPLY=($(compgen -W "web" -- "$cur")); return 0 ;;
	--input)
		if [[ $cur == *=* ]]; then
			COMPREPLY=($(compgen -f -- "${cur#*=}"))
			COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
		else
			[ -n "$flow" ] && COMPREPLY=($(compgen -W "$(_jig_names "$project" "$flow" | sed 's/$/=/')" -- "$cur"))
			compopt -o nospace 2>/dev/null
		fi
		return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_jig_help_flags "$cmd")" -- "$cur"))
		return 0
	fi
	case "$cmd" in
	run|list|why|lock) [ -z "$flow" ] && COMPREPLY=($(compgen -W "$(_jig_names "$project")" -- "$cur")) ;;
	review|inspect|init) COMPREPLY=($(compgen -d -- "$cur")) ;;
	modules) COMPREPLY=($(compgen -W "list verify" -- "$cur")) ;;
	host) COMPREPLY=($(compgen -W "check" -- "$cur")) ;;
	scope) COMPREPLY=($(compgen -W "plan run" -- "$cur")) ;;
	esac
	return 0
}
complete -F _jig jig
