#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Help and manual pages agree (git's t0450 idea): every option that
# 'xprof <cmd> --help' lists is in the OPTIONS of man/xprof-<cmd>.1 and
# vice versa, and the same for 'xprof --help' and xprof.1.  Every --help
# has EXAMPLES; every page renders with 'groff -man -ww' without a warning
# and has an EXIT STATUS section (record's with 127 and 128+N).  'xprof
# help <cmd>' prints the --help text when stdout is not a terminal, and on
# a terminal shows the installed page (cmake --install into a temporary
# prefix) or, without one, the --help text.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

MAN=$XP_SRC/man
cmds=(record attach report dump top mark)

# help_opts FILE: the options a --help text lists, one per line, sorted.
help_opts() {
	grep -Eo '^ +(-[A-Za-z], )?--[a-z][a-z-]*' "$1" | tr ',' '\n' | tr -d ' ' | sort -u
}

# man_opts PAGE: the options tagged in the OPTIONS section (.TP items) of PAGE.
man_opts() {
	awk '/^\.SH / { on = ($2 == "OPTIONS") } on && tag { print } { tag = on && /^\.TP/ }' "$1" |
		sed 's/\\-/-/g' | grep -Eo '(^|[ "])--?[A-Za-z][a-z-]*' | tr -d ' "' |
		grep -v '^-[a-z][a-z]' | sort -u
}

compare() { # WHAT HELP_FILE PAGE
	help_opts "$2" >h.txt || true
	man_opts "$3" >m.txt || true
	if [[ ! -s h.txt || ! -s m.txt ]]; then
		fail "$1: no options found (help $(wc -l <h.txt), man $(wc -l <m.txt))"
		return
	fi
	missing=$(comm -23 h.txt m.txt | tr '\n' ' ')
	extra=$(comm -13 h.txt m.txt | tr '\n' ' ')
	[[ $missing ]] && fail "$1: in --help but not in $(basename "$3"): $missing"
	[[ $extra ]] && fail "$1: in $(basename "$3") but not in --help: $extra"
	[[ $missing$extra ]] || say "ok: $1: $(wc -l <h.txt) options, the same in --help and $(basename "$3")"
}

for cmd in "${cmds[@]}"; do
	check_exit 0 "$XPROF" "$cmd" --help
	cp "$XP_OUT" "help-$cmd.txt"
	grep -q '^EXAMPLES$' "help-$cmd.txt" || fail "$cmd --help has no EXAMPLES"
	[[ -s $XP_ERR ]] && fail "$cmd --help wrote to stderr"
	compare "$cmd" "help-$cmd.txt" "$MAN/xprof-$cmd.1"
	# Not on a terminal, 'xprof help <cmd>' is the --help text.
	check_exit 0 "$XPROF" help "$cmd"
	cmp -s "$XP_OUT" "help-$cmd.txt" || fail "'xprof help $cmd' differs from '$cmd --help'"
done
check_exit 0 "$XPROF" --help
cp "$XP_OUT" help-main.txt
compare "xprof" help-main.txt "$MAN/xprof.1"
grep -q '^EXAMPLES$' help-main.txt || fail "xprof --help has no EXAMPLES"
for cmd in "${cmds[@]}"; do
	grep -Eq "^    $cmd +[a-z]" help-main.txt || fail "xprof --help does not list $cmd"
done
check_exit 2 "$XPROF" help nosuch

# Pages: EXIT STATUS everywhere, record's statuses, clean rendering.
for page in "$MAN"/xprof.1 "${cmds[@]/#/$MAN/xprof-}"; do
	[[ $page == *.1 ]] || page=$page.1
	grep -q '^\.SH EXIT STATUS$' "$page" || fail "$(basename "$page") has no EXIT STATUS"
	grep -q '^\.SH EXAMPLES$' "$page" || fail "$(basename "$page") has no EXAMPLES"
done
for page in "$MAN"/xprof.1 "$MAN"/xprof-record.1; do
	grep -q '127' "$page" && grep -q '128+' "$page" || fail "$(basename "$page"): no 127 or 128+N status"
done
if command -v groff >/dev/null; then
	pages=("$MAN"/*.[0-9])
	for page in "${pages[@]}"; do
		groff -man -ww -Tutf8 "$page" >/dev/null 2>groff.err || true
		[[ -s groff.err ]] && fail "groff warns about $(basename "$page"): $(head -n3 groff.err)"
	done
	say "ok: ${#pages[@]} pages render without warnings"
else
	say "# groff not found (groff-base): rendering not checked"
fi

# On a terminal: the installed page, else the --help text.
if command -v man >/dev/null && command -v script >/dev/null && command -v cmake >/dev/null &&
	[[ -e $XP_BUILD/cmake_install.cmake ]]; then
	check_exit 0 cmake --install "$XP_BUILD" --prefix "$XP_TMP/inst"
	for cmd in "${cmds[@]}"; do
		[[ -e $XP_TMP/inst/share/man/man1/xprof-$cmd.1 ]] || fail "xprof-$cmd.1 not installed"
	done
	[[ -e $XP_TMP/inst/share/man/man5/xprof-data.5 ]] || fail "xprof-data.5 not installed"
	export MANPAGER=cat PAGER=cat MANWIDTH=80
	for cmd in record dump; do
		upper=${cmd^^}
		check_exit 0 env MANPATH="$XP_TMP/inst/share/man" script -qec "$XPROF help $cmd" tty.txt
		grep -aq "XPROF-$upper(1)" "$XP_OUT" && say "ok: 'xprof help $cmd' on a terminal shows the page" ||
			fail "'xprof help $cmd' on a terminal: $(head -c 200 "$XP_OUT")"
	done
	mkdir -p empty/man1
	check_exit 0 env MANPATH="$XP_TMP/empty" script -qec "$XPROF help record" tty.txt
	grep -aq '^usage: xprof record' "$XP_OUT" && say "ok: without the page, the --help text" ||
		fail "'xprof help record' without a page: $(head -c 200 "$XP_OUT")"
else
	say "# man, script or an installable build missing: 'help' on a terminal not checked"
fi
finish
