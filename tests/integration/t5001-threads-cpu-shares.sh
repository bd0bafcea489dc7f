#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# CPU mode shares CPU time fairly between threads and gives none to a
# blocked one.  threads -l 4 (tests/targets/threads.c) runs four workers
# that each do 2 s of their own CPU time, on 2 CPUs, while main blocks in
# pthread_join; worker i runs through a function of its own, lane_<i>, so
# each thread's share shows in the stacks ('report' has no per-thread view
# on this branch: lane_<i> stands for "thread i").  For both builds:
#   - the output is the same as an unprofiled run's;
#   - at least 2000 samples (~8 s of CPU at 999 Hz per running thread);
#   - each lane_<i> has 25 +-5% of the weight (CPU time, 'report --flat'
#     Total%), and at least 10% of the samples.  Sample *counts* are not
#     CPU time in this mode: a thread is sampled at a tick if it ran since
#     the last one, weighted by how long, so a thread that the scheduler
#     runs in many short slices gets more samples of smaller weight (on
#     this 2-CPU machine, 17..38% for four equal threads); the counts are
#     printed, the weights are asserted;
#   - main (the thread blocked in pthread_join) has at most 1% of the
#     samples and of the weight: CPU mode skips a thread that has not run
#     since its last sample.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XP_TARGETS/threads" -l 4 0.05
cp "$XP_OUT" threads.expected

for t in threads threads-nofp; do
	say "## $t"
	expect_exit 0 "$XPROF" record -q --mode cpu -o "$t.data" -- "$XP_TARGETS/$t" -l 4 2
	assert_files_equal "$t: output as without xprof" threads.expected "$XP_OUT"
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.folded"
	expect_exit 0 "$XPROF" report -i "$t.data" --flat -o "$t.flat"
	assert_folded_format "$t.folded"
	show_file "$t: flat profile" "$t.flat" 14

	assert_samples_at_least "$t" 2000 "$t.folded"
	assert_share_at_least "$t: in a lane's thread_work" 95 "$t.folded" \
		"chain:worker;lane_[0-7];thread_work"
	for i in 0 1 2 3; do
		assert_share_at_least "$t: thread $i (samples)" 10 "$t.folded" \
			"chain:lane_$i;thread_work"
		assert_flat_between "$t: thread $i (CPU time)" 20 30 "$t.flat" total "lane_$i"
	done
	assert_share_at_most "$t: main, blocked in pthread_join (samples)" 1 "$t.folded" frame:main
	assert_flat_between "$t: main, blocked in pthread_join (CPU time)" 0 1 "$t.flat" total main
done

finish
