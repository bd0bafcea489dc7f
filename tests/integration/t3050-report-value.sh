#!/bin/bash
# SPDX-License-Identifier: MIT
# One percentage everywhere: on a real recording of the 50/30/20 'shares'
# target, --folded counts CPU time (ns) as --flat, --tree, --flamegraph,
# --pprof and --speedscope do, so the share of each work_ function in the
# folded stacks equals flat's Total% (to its rounding); --value samples
# makes every format count samples instead: folded's total is the sample
# count flat prints, and flat's, tree's and folded's shares agree again.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
expect_exit 0 "$XPROF" -q record -o shares.data -- "$XP_TARGETS/shares" -s 1.5
expect_exit 0 "$XPROF" report -i shares.data --folded -o weight.folded
expect_exit 0 "$XPROF" report -i shares.data --folded --value samples -o samples.folded
expect_exit 0 "$XPROF" report -i shares.data --flat -o weight.flat
expect_exit 0 "$XPROF" report -i shares.data --flat --value samples -o samples.flat
expect_exit 0 "$XPROF" report -i shares.data --tree --value samples -o samples.tree
assert_folded_format weight.folded
assert_folded_format samples.folded

# share FILE FUNCTION: percentage of the folded value with FUNCTION on the stack.
share() {
	folded_stats "$1" "frame:$2" | awk '{ printf "%.4f\n", $2 ? 100 * $1 / $2 : 0 }'
}
# close LABEL A B TOLERANCE: |A - B| <= TOLERANCE.
close() {
	if awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'; then
		say "  ok: $1: $2 vs $3"
	else
		fail "$1: $2 vs $3 (want within $4)"
	fi
}

samples=$(sed -n 's/^# Samples: \([0-9]*\), weight: .*/\1/p' weight.flat)
weight=$(sed -n 's/^# Samples: [0-9]*, weight: \([0-9]*\)$/\1/p' weight.flat)
assert_eq "folded total = flat's weight" "$(folded_total weight.folded)" "$weight"
assert_eq "folded --value samples total = flat's samples" "$(folded_total samples.folded)" "$samples"
for fn in work_fifty work_thirty work_twenty main; do
	close "$fn: folded share (weights) vs flat Total%" \
		"$(share weight.folded "$fn")" "$(flat_share weight.flat total "$fn")" 0.006
	close "$fn: folded share (samples) vs flat --value samples Total%" \
		"$(share samples.folded "$fn")" "$(flat_share samples.flat total "$fn")" 0.006
done
assert_flat_between "work_fifty, CPU time" 45 55 weight.flat self work_fifty
assert_flat_between "work_fifty, samples" 45 55 samples.flat self work_fifty
# The tree's root line (main) carries the same total share as flat's.
tree_main=$(awk '$NF == "main" { sub(/%/, "", $1); print $1; exit }' samples.tree)
close "main: tree --value samples vs flat --value samples" "$tree_main" \
	"$(flat_share samples.flat total main)" 0.006

# Other formats honour --value too: the flame graph's unit and speedscope's.
expect_exit 0 "$XPROF" report -i shares.data --flamegraph --value samples -o samples.html
assert_file_matches "flame graph in samples" samples.html '"unit":"samples"'
expect_exit 0 "$XPROF" report -i shares.data --speedscope --value samples -o samples.json
assert_file_matches "speedscope in samples" samples.json '"unit":"none"'
expect_exit 2 "$XPROF" report -i shares.data --value bytes
finish
