#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# An exec from a thread other than the leader.  threadexec
# (tests/targets/threadexec.c) computes in leader_work while its second
# thread sleeps 0.3 s, then that thread execs split (1 s of CPU time).
# Under ptrace the leader stops at its exit first, then the exec'ing
# thread comes back with the leader's thread id (ptrace(2), "execve(2)
# under ptrace"): that thread runs on, and is sampled, in its new image.
#   - record exits 0 and the output is split's, as without xprof;
#   - split has at least 60% of the CPU weight (truth ~77%) and 500
#     samples: a thread taken for gone at the leader's exit stop was not
#     sampled again (2 samples of split, all its time in its exit);
#   - leader_work has 10-40% of the weight (truth ~23%).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
expect_exit 0 "$T/split" 1
cp "$XP_OUT" split.expected

for t in threadexec threadexec-nofp; do
	say "## $t"
	expect_exit 0 "$XPROF" record -q -o "$t.data" -- "$T/$t" 0.3 "$T/split" 1
	assert_files_equal "$t: output as without xprof" split.expected "$XP_OUT"
	expect_exit 0 "$XPROF" report -i "$t.data" --folded -o "$t.folded"
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.samples"
	assert_folded_format "$t.folded"
	assert_share_at_least "$t: split, of the CPU" 60 "$t.folded" comm:split
	read -r hits _ < <(folded_stats "$t.samples" comm:split)
	assert_within "$t: split's samples" "${hits:-0}" 500 100000
	assert_share_between "$t: leader_work, of the CPU" 10 40 "$t.folded" frame:leader_work
done

finish
