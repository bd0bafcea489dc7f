#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Stress: 256 threads in two waves of 128 ('threads waves', each thread
# 10 ms of CPU), sampled at 4999 Hz, then in wall mode.  Nothing crashes
# or hangs; the target's output and status are those of an unprofiled
# run (a corrupted register or stack would show as a mismatch); every
# thread is seen (the summary counts 257); most samples are in wave_work.
# The stop times printed are the cost of interrupting 128 runnable
# threads on 2 CPUs (doc/ptrace-notes.md, trap 3).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
"$T/threads" waves 1 >plain.out
say "# without xprof: $(cat plain.out)"

for mode in cpu wall; do
	say "## --mode $mode"
	expect_exit 0 "$XPROF" record -F 4999 --mode "$mode" -o "$mode.data" -- "$T/threads" waves 10
	assert_files_equal "$mode: output as without xprof" plain.out "$XP_OUT"
	show_file "$mode: summary" "$XP_ERR"
	threads=$(sed -n 's/.* \([0-9]*\) threads in \([0-9]*\) processes.*/\1/p' "$XP_ERR")
	if ((${threads:-0} >= 257)); then
		say "  ok: $mode: every thread seen ($threads)"
	else
		fail "$mode: ${threads:-no} threads seen, want 257"
	fi
	expect_exit 0 "$XPROF" report -i "$mode.data" --folded --value samples -o "$mode.folded"
	assert_folded_format "$mode.folded"
	assert_samples_at_least "$mode" 300 "$mode.folded"
done
assert_share_at_least "cpu: samples in wave_work" 50 cpu.folded "chain:worker_wave;wave_work"
assert_share_at_least "wall: samples under worker_wave" 50 wall.folded "frame:worker_wave"

finish
