#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A forked child runs its parent's mappings: the data file gives it no
# MAPPING records of its own for them, and the report finds them in the
# parent as of the fork (doc/data-format.md), through at most
# DF_FORK_HOPS_MAX (8) forks, below which the recorder writes them out.
#   - forker --storm 200 2: 200 children, each 2 ms in storm_work; the
#     libc path is in the file at most 30 times (a MAPPING record per
#     child named it 201 times; here 3, and 6 in one run of 30: a child
#     sampled before its fork was handled reads its maps from /proc and
#     writes them), and storm_work holds at least 80% of the CPU weight,
#     so the children's frames are named;
#   - forker --forks N 300: a chain of N forks, none exec'ing, the last
#     300 ms in deep_work: at least 90% of the weight in deep_work for N
#     = 3, 8 (the reader's limit), 9 and 12 (deeper: without the
#     recorder's own records there, deep_work read 0).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
say "## fork storm"
expect_exit 0 "$XPROF" record -F 999 -o storm.data -- "$T/forker" --storm 200 2
show_file "summary" "$XP_ERR"
expect_exit 0 "$XPROF" report -i storm.data --folded -o storm.folded
assert_folded_format storm.folded
assert_within "the libc path's records in the data file" \
	"$(grep -a -o 'libc\.so\.6' storm.data | wc -l)" 1 30
assert_share_at_least "storm_work, of the CPU" 80 storm.folded frame:storm_work

for n in 3 8 9 12; do
	say "## a chain of $n forks"
	expect_exit 0 "$XPROF" record -F 999 -o "forks$n.data" -- "$T/forker" --forks "$n" 300
	assert_file_matches "forker's output" "$XP_OUT" "^forker: forks depth=$n statuses=ok mismatches=0$"
	expect_exit 0 "$XPROF" report -i "forks$n.data" --folded -o "forks$n.folded"
	assert_share_at_least "$n forks: deep_work, of the CPU" 90 "forks$n.folded" frame:deep_work
	if ((XP_FAILS)); then
		show_file "profile" "forks$n.folded" 5
	fi
done

finish
