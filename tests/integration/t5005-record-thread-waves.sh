#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Many threads coming and going.  threads waves 20 (tests/targets/threads.c)
# runs 256 threads in two waves of 128: all threads of a wave exist at once
# and each computes 20 ms of its own CPU time in wave_work, then exits; the
# second wave starts after the first is joined (so tids may be reused).
#   - under record it completes with exit 0 and the output of an
#     unprofiled run (no thread lost, stopped or corrupted);
#   - the summary counts all 257 threads (256 workers and main);
#   - >= 70% of the samples are in worker_wave;wave_work;
#   - the slowdown (profiled wall time / unprofiled wall time, the latter
#     the mean of a run before and a run after) is printed, not asserted:
#     128 runnable threads on 2 CPUs make every stop wait for its thread's
#     turn on a CPU (doc/ptrace-notes.md, trap 3), and the machine is shared.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

# timed VAR CMD...: expect_exit 0 CMD, and its wall time in seconds in VAR.
timed() {
	local var=$1 start
	shift
	start=$EPOCHREALTIME
	expect_exit 0 "$@"
	printf -v "$var" '%s' "$(awk -v a="$start" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%.3f", b - a }')"
}

plain1='' plain2='' profiled='' # set by timed
timed plain1 "$XP_TARGETS/threads" waves 20
cp "$XP_OUT" waves.expected
timed profiled "$XPROF" record -o waves.data -- "$XP_TARGETS/threads" waves 20
assert_files_equal "output as without xprof" waves.expected "$XP_OUT"
cp "$XP_ERR" summary.txt
timed plain2 "$XP_TARGETS/threads" waves 20
assert_files_equal "the second unprofiled run agrees" waves.expected "$XP_OUT"

show_file "summary" summary.txt
threads=$(sed -n 's/.* \([0-9]*\) threads in [0-9]* processes.*/\1/p' summary.txt)
if [[ $threads && $threads -ge 257 ]]; then
	say "  ok: $threads threads seen (want >= 257)"
else
	fail "'${threads:-?}' threads seen (want >= 257)"
fi
expect_exit 0 "$XPROF" report -i waves.data --folded --value samples -o waves.folded
assert_folded_format waves.folded
assert_samples_at_least "256 threads" 1000 waves.folded
assert_share_at_least "in worker_wave;wave_work" 70 waves.folded "chain:worker_wave;wave_work"

slowdown=$(awk -v p="$profiled" -v a="$plain1" -v b="$plain2" \
	'BEGIN { printf "%.2f", p / ((a + b) / 2) }')
say "# slowdown: $slowdown (profiled $profiled s; unprofiled $plain1 s and $plain2 s)"

finish
