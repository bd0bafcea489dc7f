#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live status line of record and attach (record/sampler.c, status_line):
# on a terminal (a pty from script(1)) stderr shows
#   \rxprof: <secs>s  <n> samples  <n> thread(s)  <n> process(es)  <n> failed\e[K
# several times with growing counts, cleared (\r\e[K) before the summary;
# with stderr not a terminal, or with -q (either place), none of it appears
# (and -q drops the summary too).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
require_cmd script bsdutils
ESC=$'\033'
CR=$'\r'
status_re="${CR}xprof: [0-9]+\.[0-9]s  [0-9]+ samples  [0-9]+ threads?  [0-9]+ process(es)?  [0-9]+ failed${ESC}\[K"

# status_lines FILE: the status lines in FILE, one per line, without \r and \e[K.
status_lines() {
	grep -aEo "$status_re" "$1" | tr -d "$CR" | sed "s/${ESC}\[K\$//"
}

# On a terminal.
check_exit 0 script -qec "$XPROF record -o tty.data -- $XP_TARGETS/shares -s 1.2" tty.txt
cp tty.txt "$XP_ARTIFACTS/typescript-tty.txt"
status_lines tty.txt >status.txt || true
show_file "status lines" status.txt 10
n=$(wc -l <status.txt)
assert_within "status lines on a terminal" "$n" 2 1000
# Counts never go down and end above zero.
awk '{ if ($3 + 0 < last) bad = 1; last = $3 } END { exit bad || last == 0 }' status.txt ||
	fail "sample counts in the status lines do not grow"
grep -aq "${CR}${ESC}\[K" tty.txt || fail "the status line is not cleared at the end"
grep -aEq 'xprof: [0-9]+ samples in [0-9.]+ s' tty.txt || fail "no summary on a terminal"
# The clearing comes before the summary.
awk -v c="${CR}${ESC}[K" 'index($0, c) { cleared = NR } /xprof: [0-9]+ samples in/ { s = NR } END { exit !(cleared && s >= cleared) }' tty.txt ||
	fail "summary printed before the status line was cleared"

# stderr not a terminal: no status line, no control characters, a summary.
check_exit 0 "$XPROF" record -o file.data -- "$XP_TARGETS/shares" -s 0.5
cp "$XP_ERR" notty.txt
grep -aq "$CR" notty.txt && fail "carriage return on stderr that is not a terminal"
grep -aq "$ESC" notty.txt && fail "escape sequence on stderr that is not a terminal"
grep -aEq 'samples  [0-9]+ thread' notty.txt && fail "status line on stderr that is not a terminal"
grep -aEq '^xprof: [0-9]+ samples in' notty.txt && say "ok: summary without a terminal" ||
	fail "no summary without a terminal"

# -q on a terminal, as a record option and as a global option: nothing from xprof.
for q in "record -q" "-q record"; do
	check_exit 0 script -qec "$XPROF $q -o quiet.data -- $XP_TARGETS/shares -s 0.5" quiet.txt
	if grep -aq 'xprof:' quiet.txt; then
		fail "'xprof $q' printed: $(grep -a -m1 'xprof:' quiet.txt | tr -d "$CR$ESC")"
	fi
	if grep -aq "$ESC" quiet.txt; then
		fail "'xprof $q' printed an escape sequence"
	fi
done

# attach has the same status line.
start_target shares -s 0
check_exit 0 script -qec "$XPROF attach -p $TARGET_PID -d 1s -o attach.data" attach.txt
n=$( (status_lines attach.txt || true) | wc -l)
assert_within "status lines of attach on a terminal" "$n" 2 1000
finish
