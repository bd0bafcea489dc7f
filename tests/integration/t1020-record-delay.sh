#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# record/attach -D, --delay TIME: nothing is sampled for TIME after the
# start (record: the launch; attach: the attach), and -d, --duration counts
# from the end of the delay, as perf record's -D does:
#   - record -D 700ms of 'ab -p -a 33 -s 1.5' (hot_a alone for the first
#     0.5 s of its run, then hot_b alone): hot_b has >= 95% of the weight,
#     and no sample is dated before 0.69 s (report --time ,690ms keeps
#     none); the command's exit status and output are its own;
#   - record -D 500ms -d 500ms of 'ab -p -s 3': every sample between 0.5 s
#     and 1.15 s, at least 100 of them, and the recorded duration_ns
#     (sampling time) 0.45..0.8 s;
#   - attach -D 500ms -d 500ms to split: the same, and attach returns after
#     1 to 3 s;
#   - -D 0 is no delay; bad values are usage errors (exit 2, one error line);
#   - the summary gives no CPU time of the tree beside the profile's when
#     a delay left part of the run out of the profile (the figure would
#     hold it: record -D 500ms of a 1.5 s split read 1.01 s against 1.50).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

# The start-up phase is left out.
expect_exit 0 "$XPROF" -q record -D 700ms -o delay.data -- "$T/ab" -p -a 33 -s 1.5
expect_exit 0 "$XPROF" record -D 500ms -o split.data -- "$T/split" 1.5
assert_file_matches "delayed: the profile's CPU in the summary" "$XP_ERR" ' s of CPU in the profile;'
assert_file_lacks "delayed: no figure of the tree's" "$XP_ERR" 'the tree used'
expect_exit 0 "$XPROF" report -i delay.data --flat -o delay.flat
assert_flat_between "-D past the hot_a phase: hot_b" 95 100 delay.flat self hot_b
expect_exit 1 "$XPROF" report -i delay.data --time ,690ms
assert_file_matches "no sample before the delay ends" "$XP_ERR" 'pass the filters'

# check_window WHAT FILE: a recording of -D 500ms -d 500ms has samples
# from 0.5 s to 1.15 s only, and sampled for 0.45 to 0.8 s.
check_window() {
	expect_exit 1 "$XPROF" report -i "$2" --time ,490ms
	assert_file_matches "$1 -D 500ms: nothing before 0.5 s" "$XP_ERR" 'pass the filters'
	expect_exit 1 "$XPROF" report -i "$2" --time 1150ms,
	assert_file_matches "$1 -D 500ms -d 500ms: nothing after 1.15 s" "$XP_ERR" 'pass the filters'
	expect_exit 0 "$XPROF" report -i "$2" --folded --value samples -o window.folded
	assert_samples_at_least "$1 -D 500ms -d 500ms" 100 window.folded
	assert_within "$1: sampling time (s)" \
		"$(recorder_stat "$2" duration_ns | awk '{ print $1 / 1e9 }')" 0.45 0.8
}

# The duration counts from the start of sampling.
expect_exit 0 "$XPROF" -q record -D 500ms -d 500ms -o window.data -- "$T/ab" -p -s 3
check_window record window.data

# Attach: the delay counts from the attach.
ready_init
start_bg split "$T/split" 30
wait_ready 1
started=$EPOCHREALTIME
expect_exit 0 "$XPROF" -q attach -p "$XP_READY_PID" -D 500ms -d 500ms -o attach.data
assert_within "attach -D 500ms -d 500ms took (s)" \
	"$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" 1 3
check_window attach attach.data

# -D 0: no delay.
expect_exit 0 "$XPROF" -q record -D 0 -o zero.data -- "$T/ab" -p -a 50 -s 0.6
expect_exit 0 "$XPROF" report -i zero.data --flat -o zero.flat
assert_flat_between "-D 0 samples the start too: hot_a" 30 70 zero.flat self hot_a

for bad in -1s x 1ms2 10d 500us; do
	expect_exit 2 "$XPROF" record -D "$bad" -- true
	assert_error_line "record -D '$bad'" "$XP_ERR"
	expect_exit 2 "$XPROF" attach -p 1 --delay "$bad"
	assert_error_line "attach --delay '$bad'" "$XP_ERR"
done
finish
