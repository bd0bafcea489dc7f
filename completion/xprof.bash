# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Bash completion for xprof(1): the commands, each command's options, the
# words an option's value may be (formats, modes, unwinders, ...), files for
# the options that name one, running processes for -p of attach, dump and
# top, and after 'record [--]' or 'top --' the command to run and its own
# arguments.
#
# The options come from the xprof being completed: the commands from
# 'xprof --help', a command's options from 'xprof <command> --help', whose
# option lines read "-x, --name <arg>"; an argument written <a|b|c> offers
# its words.  So the completion follows the binary it completes and keeps
# no list of its own.
#
# Installed as share/bash-completion/completions/xprof (cmake --install, the
# Debian package), where bash-completion loads it when 'xprof' is first
# completed.  It needs nothing of bash-completion: sourced alone, it
# completes the same; with bash-completion loaded, a recorded command's
# arguments are completed as that command's own.
#
# Words are split at blanks of the line up to the cursor (quotes are not
# interpreted), so that "--mode=cpu", "fifo:ctl" and "1,2" are one word
# whatever COMP_WORDBREAKS holds; what is offered is cut to the part of the
# word that readline replaces.

# _xprof_options XPROF [COMMAND]: one line per option of COMMAND's --help
# (xprof's global options without a command): "short|long|argument", e.g.
# "F|--freq|<hz>", "|--no-follow|".
_xprof_options()
{
	"$1" ${2:+"$2"} --help 2>/dev/null |
		sed -nE 's/^ {4}( {4})?(-([A-Za-z]), )?(--[a-z][a-z-]*)( ([^ ]+))?( {2}.*)?$/\3|\4|\6/p'
}

# _xprof_commands XPROF: the commands 'xprof --help' lists.
_xprof_commands()
{
	"$1" --help 2>/dev/null | sed -nE '/^Commands:/,/^$/ s/^ {4}([a-z][a-z-]*) .*/\1/p'
}

# _xprof_values COMMAND OPTION ARGUMENT VALUE: the candidates for VALUE of
# OPTION (long name) into _xprof_cands, whole values.
_xprof_values()
{
	local cmd=$1 opt=$2 arg=$3 cur=$4 head='' p w
	local -a list
	case $cmd:$opt in
	attach:--pid | top:--pid | dump:--pid)
		# Running processes; attach and top take a list: complete its last element.
		if [[ $cmd != dump && $cur == *,* ]]; then
			head=${cur%,*},
			cur=${cur##*,}
		fi
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[[ $p == "$cur"* && $p != "$$" ]] && _xprof_cands+=("$head$p")
		done
		return
		;;
	*:--switch-output)
		# <signal|time|size>: only "signal" is a word, the others are a time or a size.
		[[ signal == "$cur"* ]] && _xprof_cands+=(signal)
		return
		;;
	esac
	case $arg in
	'<file>' | '<base>')
		compopt -o filenames 2>/dev/null
		mapfile -t list < <(compgen -f -- "$cur")
		_xprof_cands+=("${list[@]}")
		;;
	'<dir>')
		compopt -o filenames 2>/dev/null
		mapfile -t list < <(compgen -d -- "$cur")
		_xprof_cands+=("${list[@]}")
		;;
	fifo:*)
		if [[ $cur == fifo:* ]]; then
			compopt -o filenames 2>/dev/null
			mapfile -t list < <(compgen -f -- "${cur#fifo:}")
			for w in "${list[@]}"; do
				_xprof_cands+=("fifo:$w")
			done
		elif [[ fifo: == "$cur"* ]]; then
			compopt -o nospace 2>/dev/null
			_xprof_cands+=(fifo:)
		fi
		;;
	'<'*'|'*'>')
		arg=${arg#<}
		IFS='|' read -ra list <<<"${arg%>}"
		for w in "${list[@]}"; do
			[[ $w == "$cur"* ]] && _xprof_cands+=("$w")
		done
		;;
	esac
}

_xprof()
{
	local xprof=$1 line=${COMP_LINE:0:COMP_POINT} cur rep c wb i j w cmd='' cmdpos=0 start=0
	local short long arg prev_arg='' prev_long='' off
	local -a words opts list
	local -A takes
	local -a _xprof_cands=()
	COMPREPLY=()
	# A tilde as typed ("~/bin/xprof") is not expanded in the word.
	# shellcheck disable=SC2088
	[[ $xprof == "~/"* ]] && xprof=$HOME/${xprof#"~/"}
	read -ra words <<<"$line"
	[[ -z $line || $line == *[[:blank:]] ]] && words+=("")
	((${#words[@]} >= 2)) || return 0
	cur=${words[${#words[@]} - 1]}

	# The command: the first word after the global options (-v, -q, ...).
	for ((i = 1; i < ${#words[@]} - 1; i++)); do
		if [[ ${words[i]} != -* ]]; then
			cmd=${words[i]} cmdpos=$i
			break
		fi
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			while IFS='|' read -r short long arg; do
				_xprof_cands+=("$long")
				[[ $short ]] && _xprof_cands+=("-$short")
			done < <(_xprof_options "$xprof")
		else
			mapfile -t list < <(_xprof_commands "$xprof")
			_xprof_cands=("${list[@]}")
		fi
	elif [[ $cmd == help ]]; then
		((${#words[@]} - 1 == cmdpos + 1)) && mapfile -t _xprof_cands < <(_xprof_commands "$xprof")
	else
		mapfile -t opts < <(_xprof_options "$xprof" "$cmd")
		for w in "${opts[@]}"; do
			IFS='|' read -r short long arg <<<"$w"
			takes[$long]=$long
			[[ $arg ]] && takes[$long]=$long'|'$arg
			[[ $short ]] && takes[-$short]=${takes[$long]}
		done
		# Walk the words before the cursor: an option that takes a value
		# eats the next word; record and top run a command from their first
		# operand (or after --) on.
		for ((j = cmdpos + 1; j < ${#words[@]} - 1; j++)); do
			w=${words[j]}
			prev_long='' prev_arg=''
			if [[ $w == -- ]]; then
				start=$((j + 1))
				break
			elif [[ $w == --*=* || $w == - ]]; then
				continue
			elif [[ $w == -* ]]; then
				[[ $w == --* ]] || w=${w:0:2}
				[[ ${takes[$w]:-} == *'|'* ]] || continue
				prev_long=${takes[$w]%%|*} prev_arg=${takes[$w]#*|}
				# A short option's value may follow it in the same word (-F99).
				if [[ ${words[j]} == --* || ${#words[j]} == 2 ]]; then
					((j + 1 < ${#words[@]} - 1)) || break
					j=$((j + 1))
				fi
				prev_long='' prev_arg=''
			elif [[ $cmd == record || $cmd == top ]]; then
				start=$j
				break
			fi
		done
		# The cursor on the first operand of record or top: the command.
		if ((!start)) && [[ -z $prev_long && $cur != -* ]] &&
			[[ $cmd == record || $cmd == top ]]; then
			start=$((${#words[@]} - 1))
		fi
		if ((start)); then
			# The command to run, and its arguments.
			off=$((COMP_CWORD - (${#words[@]} - 1 - start)))
			if ((off > 0)) && [[ ${COMP_WORDS[off]:-} == "${words[start]}" ]] &&
				declare -F _comp_command_offset >/dev/null; then
				_comp_command_offset "$off"
				return 0
			elif ((off > 0)) && [[ ${COMP_WORDS[off]:-} == "${words[start]}" ]] &&
				declare -F _command_offset >/dev/null; then
				_command_offset "$off"
				return 0
			fi
			compopt -o filenames 2>/dev/null
			if ((start == ${#words[@]} - 1)) && [[ $cur != */* ]]; then
				mapfile -t _xprof_cands < <(compgen -c -- "$cur" | sort -u)
			else
				mapfile -t _xprof_cands < <(compgen -f -- "$cur")
			fi
		elif [[ $prev_long ]]; then
			_xprof_values "$cmd" "$prev_long" "$prev_arg" "$cur"
		elif [[ $cur == --*=* ]]; then
			w=${cur%%=*}
			if [[ ${takes[$w]:-} == *'|'* ]]; then
				_xprof_values "$cmd" "$w" "${takes[$w]#*|}" "${cur#*=}"
				for ((i = 0; i < ${#_xprof_cands[@]}; i++)); do
					_xprof_cands[i]=$w=${_xprof_cands[i]}
				done
			fi
		elif [[ $cur == -* ]]; then
			for w in "${opts[@]}"; do
				IFS='|' read -r short long arg <<<"$w"
				[[ $long == "$cur"* ]] && _xprof_cands+=("$long")
				[[ $short && -$short == "$cur"* ]] && _xprof_cands+=("-$short")
			done
		fi
	fi

	# Offer only what readline replaces: the end of the word after its last
	# word-break character ("--mode=c": "c"; "fifo:/tm": "/tm").
	wb=${COMP_WORDBREAKS//[[:space:]\"\']/}
	rep=$cur
	for ((i = 0; i < ${#wb}; i++)); do
		c=${wb:i:1}
		rep=${rep##*"$c"}
	done
	for w in "${_xprof_cands[@]}"; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("${w:${#cur}-${#rep}}")
	done
	return 0
}

complete -F _xprof xprof
