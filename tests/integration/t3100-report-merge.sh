#!/bin/bash
# SPDX-License-Identifier: MIT
# report with several -i files reports their samples together: on two
# recordings of the 'ab' target (hot_a 70% in one, 30% in the other), the
# merged folded stacks are exactly the sums of the two files' own (weights
# and sample counts), the merged flat report gives each file's share by
# its weight, and the formats that keep addresses or time order (pprof,
# speedscope) refuse several files.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
expect_exit 0 "$XPROF" -q record -o one.data -- "$XP_TARGETS/ab" -a 70 -s 1
expect_exit 0 "$XPROF" -q record -o two.data -- "$XP_TARGETS/ab" -a 30 -s 1
for v in weight samples; do
	expect_exit 0 "$XPROF" report -i one.data --folded --value "$v" -o "one.$v"
	expect_exit 0 "$XPROF" report -i two.data --folded --value "$v" -o "two.$v"
	expect_exit 0 "$XPROF" report -i one.data -i two.data --folded --value "$v" -o "both.$v"
	# The sum of the two, line by line (a stack's value is after its last space).
	awk '{ n = match($0, / [0-9]+$/); s[substr($0, 1, n - 1)] += substr($0, n + 1) }
		END { for (k in s) print k, s[k] }' "one.$v" "two.$v" | LC_ALL=C sort >"sum.$v"
	LC_ALL=C sort "both.$v" >"both-sorted.$v"
	assert_files_equal "merged folded ($v) = the sum of the files" "sum.$v" "both-sorted.$v"
done
expect_exit 0 "$XPROF" report -i one.data -i two.data --flat -o both.flat
expect_exit 0 "$XPROF" report -i one.data --flat -o one.flat
expect_exit 0 "$XPROF" report -i two.data --flat -o two.flat
w1=$(sed -n 's/^# Samples: [0-9]*, weight: \([0-9]*\)$/\1/p' one.flat)
w2=$(sed -n 's/^# Samples: [0-9]*, weight: \([0-9]*\)$/\1/p' two.flat)
want=$(awk -v a="$(flat_share one.flat self hot_a)" -v b="$(flat_share two.flat self hot_a)" \
	-v w1="$w1" -v w2="$w2" 'BEGIN { printf "%.2f\n", (a * w1 + b * w2) / (w1 + w2) }')
got=$(flat_share both.flat self hot_a)
if awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d <= 0.02 && -d <= 0.02) }'; then
	say "  ok: merged hot_a self $got%, from the two files $want%"
else
	fail "merged hot_a self $got%, from the two files $want%"
fi
expect_exit 2 "$XPROF" report -i one.data -i two.data --pprof -o x.pb.gz
assert_error_line "several -i with --pprof" "$XP_ERR"
expect_exit 2 "$XPROF" report -i one.data -i two.data --speedscope
assert_error_line "several -i with --speedscope" "$XP_ERR"
expect_exit 1 "$XPROF" report -i one.data -i nope.data
assert_error_line "a missing second file" "$XP_ERR"
finish
