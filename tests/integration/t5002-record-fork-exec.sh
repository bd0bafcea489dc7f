#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof record' follows a process tree.  forker (tests/targets/forker.c)
# computes in parent_work, forks a child that computes in child_work, and
# forks a child that execs split (tests/targets/split.c): three processes
# computing 2 s of CPU each, at the same time, on 2 CPUs.
#   - with following (the default): the output is as without xprof; all
#     three processes are sampled, each named by the first folded frame
#     (forker for the parent and the forked child, split for the exec'd
#     one, under its new name); each has 33 +-8% of the weight (CPU
#     time) and at least 15% of the samples (counts are not CPU time in
#     cpu mode: a process run in short slices gets more, lighter samples;
#     t5001 says more); split's samples are split's own code
#     (main;work) and the forker processes' are parent_work or child_work;
#     no sample of split's code is put under 'forker', nor the reverse;
#   - with --no-follow: only the parent is sampled: parent_work is in
#     >= 90% of the samples and of the CPU weight (the children it reaps
#     are in the rusage of its exit, and are not its time), child_work and
#     split's work in none, and the children still run to a correct
#     finish (same output); the summary line sets the profile's CPU
#     beside the process's own (1 s), not beside the 3 s its children
#     added.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
expect_exit 0 "$T/forker" 0.1 "$T/split" 0.1
# The parent prints after reaping both children: the order is fixed.
cp "$XP_OUT" forker.expected

say "## following children"
expect_exit 0 "$XPROF" record -q -o follow.data -- "$T/forker" 2 "$T/split" 2
assert_files_equal "output as without xprof" forker.expected "$XP_OUT"
expect_exit 0 "$XPROF" report -i follow.data --folded --value samples -o follow.folded
expect_exit 0 "$XPROF" report -i follow.data --flat -o follow.flat
assert_folded_format follow.folded
show_file "flat profile" follow.flat 12
assert_samples_at_least "three processes" 3000 follow.folded

assert_share_at_least "first frame is forker or split" 99 follow.folded "comm:forker|split"
assert_share_at_least "parent (samples)" 15 follow.folded "chain:main;parent_work"
assert_share_at_least "forked child (samples)" 15 follow.folded "chain:main;child_work"
assert_share_at_least "exec'd child, as split (samples)" 15 follow.folded "comm:split"
assert_flat_between "parent (CPU time)" 25 41 follow.flat total parent_work
assert_flat_between "forked child (CPU time)" 25 41 follow.flat total child_work
assert_flat_between "exec'd child, split's work (CPU time)" 25 41 follow.flat total work
assert_share_at_least "split's samples are in split's main;work" 95 follow.folded \
	"chain:main;work" comm:split
assert_share_at_least "forker's samples are in parent_work or child_work" 95 follow.folded \
	"chain:main;parent_work|child_work" comm:forker
assert_share_at_most "no forker code under split" 0 follow.folded \
	"frame:parent_work|child_work|execed_work" comm:split
assert_share_at_most "no split code under forker" 0 follow.folded "frame:work|a|b|c|leaf" \
	comm:forker

say "## --no-follow"
expect_exit 0 "$XPROF" record --no-follow -o nofollow.data -- "$T/forker" 1 "$T/split" 1
assert_files_equal "--no-follow: output as without xprof" forker.expected "$XP_OUT"
read -r profile_s process_s < <(sed -n \
	's/.*; \([0-9.]*\) s of CPU in the profile, the process used \([0-9.]*\) s;.*/\1 \2/p' "$XP_ERR")
assert_within "--no-follow: the process's CPU in the summary, s" "${process_s:-}" 0.9 1.3
assert_within "--no-follow: the profile's CPU over the process's" \
	"$(awk -v p="${profile_s:-0}" -v c="${process_s:-0}" 'BEGIN { if (c > 0) printf "%.3f", p / c }')" \
	0.95 1.05
expect_exit 0 "$XPROF" report -i nofollow.data --folded --value samples -o nofollow.folded
assert_folded_format nofollow.folded
assert_samples_at_least "--no-follow: the parent" 500 nofollow.folded
assert_share_at_least "--no-follow: parent_work" 90 nofollow.folded "chain:main;parent_work"
assert_share_at_most "--no-follow: no forked child" 0 nofollow.folded frame:child_work
assert_share_at_most "--no-follow: no exec'd child" 0 nofollow.folded comm:split
expect_exit 0 "$XPROF" report -i nofollow.data --folded -o nofollow-cpu.folded
assert_share_at_least "--no-follow: parent_work, of the CPU" 90 nofollow-cpu.folded \
	"chain:main;parent_work"

finish
