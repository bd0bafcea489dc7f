#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A 4000-deep recursion (tests/targets/deep.c): no crash, no stall, and a
# stack cut by the depth limit says so.  With the default --max-depth
# (1024):
#   - the innermost frames are the ones kept: spin is in >= 95% of the
#     samples (on top, or under clock_gettime, which it calls);
#   - >= 95% of the samples carry the [truncated] marker at the root (right
#     after the process name), never a shorter stack passed off as whole;
#   - the run's output is the same as without xprof.
# With --max-depth 8000 the whole chain is there: main in >= 95%.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XP_TARGETS/deep" 4000 1
cp "$XP_OUT" deep.expected
expect_exit 0 "$XPROF" record -q -o deep.data -- "$XP_TARGETS/deep" 4000 1
assert_files_equal "deep: output as without xprof" deep.expected "$XP_OUT"
expect_exit 0 "$XPROF" report -i deep.data --folded --value samples -o deep.folded
assert_folded_format deep.folded
assert_samples_at_least "deep" 500 deep.folded
assert_share_at_least "deep: spin kept" 95 deep.folded frame:spin
assert_share_at_least "deep: truncated at the root" 95 deep.folded 'root:\[truncated\]'
assert_share_at_most "deep: main (beyond the limit)" 5 deep.folded frame:main

expect_exit 0 "$XPROF" record -q --max-depth 8000 -o deep2.data -- "$XP_TARGETS/deep-nofp" 4000 1
expect_exit 0 "$XPROF" report -i deep2.data --folded --value samples -o deep2.folded
assert_share_at_least "deep-nofp --max-depth 8000: spin kept" 95 deep2.folded frame:spin
assert_share_at_most "deep-nofp --max-depth 8000: truncated" 5 deep2.folded 'frame:\[truncated\]'
assert_share_at_least "deep-nofp --max-depth 8000: main" 95 deep2.folded frame:main

finish
