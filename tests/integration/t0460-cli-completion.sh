#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Bash completion (completion/xprof.bash), driven as bash drives it: the
# completion function called with COMP_LINE, COMP_POINT, COMP_WORDS and
# COMP_CWORD in a clean bash, its COMPREPLY compared with what xprof's
# --help says:
#   - the commands; every option of every command (long and short), and
#     the global ones;
#   - option values: the words of <a|b|c> arguments (-g, --mode, --sort,
#     --value, --format, also written --opt=value), 'signal' for
#     --switch-output, files for -i and -o, directories for --symfs, running
#     pids for attach/top/dump -p (and the last element of a list);
#   - after 'record --' or record's first operand: the command, from PATH;
#     with bash-completion loaded, a command's own completion for its
#     arguments;
#   - cmake --install puts the script where bash-completion's loader finds
#     it (<prefix>/share/bash-completion/completions, with <prefix>/share in
#     XDG_DATA_DIRS as /usr/share is by default).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

COMP=$XP_SRC/completion/xprof.bash
BC=/usr/share/bash-completion/bash_completion
[[ -r $COMP ]] || fail_now "no $COMP"
mkdir -p bin
ln -s "$XPROF" bin/xprof

# The driver: each argument is a command line, completed at its end; one
# output line per argument, "<line>\t<candidates sorted, space-separated>".
# COMP_WORDS is split as bash splits it: at blanks and at the characters of
# COMP_WORDBREAKS, each of those a word of its own.
cat >drive.sh <<'EOF'
comp_words() {
	local line=$1 w='' c i
	COMP_WORDS=()
	for ((i = 0; i < ${#line}; i++)); do
		c=${line:i:1}
		if [[ $c == [[:blank:]] ]]; then
			[[ $w ]] && COMP_WORDS+=("$w")
			w=''
		elif [[ $c == [=:] ]]; then
			[[ $w ]] && COMP_WORDS+=("$w")
			COMP_WORDS+=("$c")
			w=''
		else
			w+=$c
		fi
	done
	[[ $w || $line == *[[:blank:]] ]] && COMP_WORDS+=("$w")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
}
mode=$1 script=$2
shift 2
if [[ $mode == bc ]]; then
	. /usr/share/bash-completion/bash_completion
	complete -W "alpha beta" mytool
fi
. "$script"
for line; do
	COMP_LINE=$line COMP_POINT=${#line}
	comp_words "$line"
	COMPREPLY=()
	_xprof xprof "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
	printf '%s\t%s\n' "$line" "$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | paste -sd' ')"
done
EOF

# complete MODE LINE...: complete each LINE (MODE plain or bc) into comp.out.
complete_lines() {
	local mode=$1
	shift
	env -i PATH="$XP_TMP/bin:/usr/bin:/bin" HOME="$XP_TMP" bash --norc --noprofile drive.sh \
		"$mode" "$COMP" "$@" >comp.out 2>comp.err || fail "the completion failed: $(head -n 3 comp.err)"
}

# got LINE: the candidates for LINE in comp.out.
got() {
	awk -F'\t' -v l="$1" '$1 == l { print $2 }' comp.out
}

# expect LINE WORDS: LINE completes to exactly WORDS (sorted, space-separated).
expect() {
	assert_eq "'$1'" "$(got "$1" | cut -c1-400)" "$2"
}

# expect_has LINE WORD: WORD is among LINE's candidates.
expect_has() {
	local g
	g=" $(got "$1") "
	if [[ $g == *" $2 "* ]]; then
		say "  ok: '$1' offers '$2'"
	else
		fail "'$1' does not offer '$2' (got:${g:0:300})"
	fi
}

# help_opts HELP_FILE: the options a --help lists, long and short, sorted.
help_opts() {
	grep -Eo '^ +(-[A-Za-z], )?--[a-z][a-z-]*' "$1" | tr ',' '\n' | tr -d ' ' | sort -u | paste -sd' '
}

say "## commands and options, from --help"
expect_exit 0 "$XPROF" --help
cmds=$(sed -nE '/^Commands:/,/^$/ s/^ {4}([a-z]+) .*/\1/p' "$XP_OUT" | sort | paste -sd' ')
main_opts=$(help_opts "$XP_OUT")
[[ $cmds == *record*report* ]] || fail_now "no commands in xprof --help"
lines=("xprof " "xprof -" "xprof re" "xprof -v rep" "xprof help " "xprof help r")
for cmd in $cmds; do
	[[ $cmd == help ]] || lines+=("xprof $cmd -")
done
complete_lines plain "${lines[@]}"
expect "xprof " "$cmds"
expect "xprof -" "$main_opts"
expect "xprof re" "record report"
expect "xprof -v rep" "report"
expect "xprof help " "$cmds"
expect "xprof help r" "record report"
for cmd in $cmds; do
	[[ $cmd == help ]] && continue
	expect_exit 0 "$XPROF" "$cmd" --help
	expect "xprof $cmd -" "$(help_opts "$XP_OUT")"
done

say "## option values"
mkdir -p files/sub
touch files/a.data files/b.data files/sfile
sleep 300 &
XP_CHILDREN+=("$!")
pid=$!
complete_lines plain "xprof record -g " "xprof record --call-graph=d" "xprof record --mode " \
	"xprof record --mode=" "xprof report --format f" "xprof report -f " \
	"xprof report --sort " "xprof report --value=s" "xprof record --switch-output-format " \
	"xprof record --switch-output " "xprof report -i files/a" "xprof report -i files/" \
	"xprof record --output=files/b" "xprof report --symfs files/s" "xprof attach -p ${pid:0:2}" \
	"xprof attach -p 1,${pid:0:2}" "xprof top --pid=$pid" "xprof dump -p 1," \
	"xprof record --control fi" "xprof record --control fifo:files/s" "xprof report -F "
expect "xprof record -g " "auto check dwarf fp libunwind"
expect "xprof record --call-graph=d" "dwarf"
expect "xprof record --mode " "cpu wall"
expect "xprof record --mode=" "cpu wall"
expect "xprof report --format f" "flamegraph flat folded"
expect "xprof report -f " "flamegraph flat folded pprof speedscope tree"
expect "xprof report --sort " "self total"
expect "xprof report --value=s" "samples"
expect "xprof record --switch-output-format " "data pprof"
expect "xprof record --switch-output " "signal"
expect "xprof report -i files/a" "files/a.data"
expect "xprof report -i files/" "files/a.data files/b.data files/sfile files/sub"
expect "xprof record --output=files/b" "files/b.data"
expect "xprof report --symfs files/s" "files/sub"
expect_has "xprof attach -p ${pid:0:2}" "$pid"
expect_has "xprof attach -p 1,${pid:0:2}" "1,$pid"
expect "xprof top --pid=$pid" "$pid"
expect "xprof dump -p 1," ""
expect "xprof record --control fi" "fifo:"
expect "xprof record --control fifo:files/s" "files/sfile files/sub"
expect "xprof report -F " ""

say "## the command to record"
complete_lines plain "xprof record tru" "xprof record -F 99 -g fp tru" "xprof record -F99 -- tru" \
	"xprof top -- tru" "xprof record -- true files/a" "xprof record -o x.data -- true files/s"
expect_has "xprof record tru" true
expect_has "xprof record -F 99 -g fp tru" true
expect_has "xprof record -F99 -- tru" true
expect_has "xprof top -- tru" true
expect "xprof record -- true files/a" "files/a.data"
expect "xprof record -o x.data -- true files/s" "files/sfile files/sub"

say "## installed, and loaded by bash-completion"
expect_exit 0 cmake --install "$XP_BUILD" --prefix "$XP_TMP/inst"
installed=$XP_TMP/inst/share/bash-completion/completions/xprof
assert_files_equal "cmake --install puts the completion in place" "$COMP" "$installed"
if [[ -r $BC ]]; then
	complete_lines bc "xprof record -- mytool " "xprof record -o x.data mytool a" \
		"xprof record --mode=w" "xprof report --format=p" "xprof "
	expect "xprof record -- mytool " "alpha beta"
	expect "xprof record -o x.data mytool a" "alpha"
	expect "xprof record --mode=w" "wall"
	expect "xprof report --format=p" "pprof"
	expect "xprof " "$cmds"
	# The loader finds it under <prefix>/share, as under /usr/share for the package.
	check_exit 0 env -i PATH="$XP_TMP/inst/bin:/usr/bin:/bin" HOME="$XP_TMP" \
		XDG_DATA_DIRS="$XP_TMP/inst/share" bash --norc -c \
		". $BC; if declare -F _comp_load >/dev/null; then _comp_load xprof; else __load_completion xprof; fi; complete -p xprof"
	assert_file_matches "bash-completion loads the installed completion" "$XP_OUT" \
		'^complete -F _xprof xprof$'
else
	say "# no $BC (Debian package bash-completion): its loader and command completion not checked"
fi
finish
