#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --pprof on a real recording of the 50/30/20 'shares' target, read
# back by pprof itself: 'go tool pprof -top -cum' must give work_fifty
# 50 +- 5% and, for each of the three functions, the same share as our
# flat report of the same data file (within rounding).  Also: the file is
# gzip, pprof names the main binary, and a binary format is refused on a
# terminal (exit 2, with a hint).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
require_cmd go golang-go
export GOCACHE=$XP_TMP/gocache PPROF_TMPDIR=$XP_TMP HOME=${HOME:-$XP_TMP}

expect_exit 0 "$XPROF" -q record -o shares.data -- "$XP_TARGETS/shares" -s 2
check_exit 0 "$XPROF" report -i shares.data --flat -o flat.txt
check_exit 0 "$XPROF" report -i shares.data --pprof -o shares.pb.gz
cp flat.txt shares.pb.gz "$XP_ARTIFACTS/"
[[ $(head -c 2 shares.pb.gz | od -An -tx1 | tr -d ' ') == 1f8b ]] || fail "shares.pb.gz is not gzip"

check_exit 0 go tool pprof -top -cum -symbolize=none shares.pb.gz
cp "$XP_OUT" top.txt
cp top.txt "$XP_ARTIFACTS/pprof-top.txt"
show_file "pprof -top" top.txt 14
grep -q '^File: shares$' top.txt || fail "pprof does not name the main binary 'shares'"
grep -q '^Type: cpu$' top.txt || fail "pprof's default sample type is not cpu"

# cum% of FUNCTION in 'pprof -top' output: the 5th of 6 columns.
pprof_cum() {
	awk -v f="$1" 'NF == 6 && $6 == f { sub("%", "", $5); print $5; exit }' top.txt
}
for fn in work_fifty work_thirty work_twenty; do
	ours=$(flat_share flat.txt total "$fn")
	theirs=$(pprof_cum "$fn")
	say "# $fn: flat Total% $ours, pprof cum% $theirs"
	assert_within "pprof cum% of $fn minus ours" "$(awk -v a="$theirs" -v b="$ours" 'BEGIN { print a - b }')" -0.02 0.02
done
assert_within "pprof cum% of work_fifty" "$(pprof_cum work_fifty)" 45 55
assert_within "pprof cum% of work_thirty" "$(pprof_cum work_thirty)" 25 35
assert_within "pprof cum% of work_twenty" "$(pprof_cum work_twenty)" 15 25
assert_within "pprof cum% of main" "$(pprof_cum main)" 90 100

# Sample counts are the first value: pprof's total must be our sample count.
check_exit 0 go tool pprof -top -sample_index=samples -symbolize=none shares.pb.gz
total=$(sed -n "s/^Showing nodes accounting for .* of \([0-9]*\) total$/\1/p" "$XP_OUT")
ours=$(awk '/^# Samples:/ { sub(",", "", $3); print $3; exit }' flat.txt)
[[ $total == "$ours" ]] && say "ok: pprof sample total $total = ours" ||
	fail "pprof sample total '$total' != our sample count '$ours'"

# Binary data never goes to a terminal.
if command -v script >/dev/null; then
	check_exit 2 script -qec "$XPROF report -i shares.data --pprof" /dev/null
	grep -q 'xprof: error: refusing to write binary pprof data to a terminal' "$XP_OUT" ||
		fail "no refusal message on a terminal"
	grep -q '^hint: use -o FILE' "$XP_OUT" || fail "no hint to use -o"
else
	say "# script(1) not found (bsdutils): terminal refusal not checked"
fi
finish
