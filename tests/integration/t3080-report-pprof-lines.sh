#!/bin/bash
# SPDX-License-Identifier: MIT
# report --pprof carries source lines, read back by pprof itself: the
# 'inlines' target spends its time in mix() inlined into accumulate()
# inlined into app::engine::step() and mycrate::example.  'go tool pprof
# -lines -top' names file:line of the hot code, marked (inline); '-traces
# -lines' shows each inlined level with the line of its call (mix's caller
# accumulate at the line that calls mix, step() at the line that calls
# accumulate), as pprof expects several Line entries per Location,
# innermost first; '-list' prints mix's source with the time on its lines.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
command -v go >/dev/null || skip "go not found (Debian package: golang-go)"
export GOCACHE=$XP_TMP/gocache PPROF_TMPDIR=$XP_TMP HOME=${HOME:-$XP_TMP}
src=$XP_SRC/tests/targets/inlines.c
line_of() { # TEXT: the number of the first line of inlines.c holding TEXT
	grep -nF -- "$1" "$src" | head -n1 | cut -d: -f1
}
call_mix=$(line_of 'acc = mix(acc, i);')
call_acc=$(line_of 'sink += accumulate(')
mix_from=$(line_of 'INLINE unsigned long mix(')
say "# inlines.c: mix() from line $mix_from, called at $call_mix; accumulate() called at $call_acc"

expect_exit 0 "$XPROF" -q record -o in.data -- "$XP_TARGETS/inlines" 1
expect_exit 0 "$XPROF" report -i in.data --pprof -o in.pb.gz
expect_exit 0 go tool pprof -lines -top -symbolize=none in.pb.gz
cp "$XP_OUT" top.txt
show_file "pprof -lines -top" top.txt 14
# flat% of the rows "FUNC FILE:LINE (inline)" of inlines.c for mix and accumulate.
inl=$(awk '($6 == "mix" || $6 == "accumulate") && $7 ~ /inlines\.c:[0-9]+$/ && $8 == "(inline)" {
	sub(/%/, "", $2); s += $2 } END { print s + 0 }' top.txt)
if awk -v v="$inl" 'BEGIN { exit !(v >= 80) }'; then
	say "  ok: $inl% of the time on inlined lines of inlines.c"
else
	fail "$inl% of the time on inlined lines of inlines.c (want >= 80%)"
fi
mixline=$(awk '$6 == "mix" { sub(/.*:/, "", $7); print $7; exit }' top.txt)
if [[ $mixline =~ ^[0-9]+$ ]] && ((mixline > mix_from && mixline < mix_from + 5)); then
	say "  ok: mix's hottest line $mixline is in its body"
else
	fail "mix's hottest line '$mixline' is not in its body (from line $mix_from)"
fi

expect_exit 0 go tool pprof -traces -lines -symbolize=none in.pb.gz
cp "$XP_OUT" traces.txt
# A trace: mix FILE:N (inline), accumulate FILE:call_mix (inline), a caller at call_acc.
if awk -v a="inlines.c:$call_mix" -v b="inlines.c:$call_acc" '
	prev2 ~ /^ +[0-9.]+[mun]?s +mix .*inlines\.c:[0-9]+ \(inline\)$/ &&
	prev ~ (" accumulate .*" a " \\(inline\\)$") && $0 ~ (b "$") { found = 1 }
	{ prev2 = prev; prev = $0 }
	END { exit !found }' traces.txt; then
	say "  ok: a trace mix (inline) -> accumulate at line $call_mix (inline) -> caller at line $call_acc"
else
	fail "no trace with the inlined levels and their call lines"
	show_file traces.txt traces.txt 20
fi

expect_exit 0 go tool pprof -list '^mix$' -symbolize=none in.pb.gz
cp "$XP_OUT" list.txt
show_file "pprof -list mix" list.txt 12
assert_file_matches "-list finds mix in inlines.c" list.txt "^ROUTINE =+ mix in .*inlines\.c$"
assert_file_matches "-list shows time on mix's source" list.txt \
	'^ +[0-9.]+[mun]?s +[0-9.]+[mun]?s +[0-9]+:.*acc'
finish
