#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Stress: targets that end, or lose threads, while being sampled at
# 9999 Hz, the races between PTRACE_INTERRUPT and the wait for the stop
# (doc/ptrace-notes.md, traps 1 and 2):
#   - 'churn exit 8 200', five times: exit() while 8 threads spin, so
#     exit_group kills threads with interrupts pending;
#   - 'exits code 0 0.05', five times: a process that ends 50 ms in;
#   - 'churn threads 2 8': 8 threads at a time created and exiting for
#     2 s, thousands in all, most of them gone before or during their
#     first sample: each lives for a few us of CPU time, so a tick (every
#     100 us, and late while the controller handles the thread starts and
#     ends) finds few of them in their work.  The main thread that starts
#     them spends most of its time stopped at their clone events, yet
#     runs a third of a CPU: its samples weigh its own CPU time (churn
#     prints it) and, taken in clone3, whose CFI ends before the system
#     call, still reach run_threads.  At least 100 samples.
# Nothing crashes or hangs; each run ends with the target's own status and
# output, as without xprof, and its data file reports.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

say "## exit() while 8 threads spin"
check_exit 3 "$T/churn" exit 8 0
cp "$XP_OUT" exit.plain
for i in 1 2 3 4 5; do
	expect_exit 3 "$XPROF" record -q -F 9999 -o "exit$i.data" -- "$T/churn" exit 8 200
	assert_files_equal "run $i: output as without xprof" exit.plain "$XP_OUT"
	expect_exit 0 "$XPROF" report -i "exit$i.data" --folded --value samples -o "exit$i.folded"
done
cat exit?.folded >exit.folded
assert_share_at_least "samples in exit_work (5 runs)" 50 exit.folded "frame:exit_work"

say "## a process that ends 50 ms in"
for i in 1 2 3 4 5; do
	expect_exit 0 "$XPROF" record -q -F 9999 -o "short$i.data" -- "$T/exits" code 0 0.05
	assert_eq "run $i: output as without xprof" "$(cat "$XP_OUT")" "exits: code 0"
done
expect_exit 0 "$XPROF" report -i short5.data --folded --value samples -o short.folded
assert_samples_at_least "a 50 ms run" 10 short.folded

say "## threads created and exiting, thousands a second"
"$T/churn" threads 0.1 8 >churn.plain 2>/dev/null
expect_exit 0 "$XPROF" record -F 9999 -o churn.data -- "$T/churn" threads 2 8
assert_files_equal "output as without xprof" churn.plain "$XP_OUT"
show_file "summary (and the target's thread count)" "$XP_ERR"
cp "$XP_ERR" churn.err
threads=$(sed -n 's/.* \([0-9]*\) threads in \([0-9]*\) processes.*/\1/p' "$XP_ERR")
if ((${threads:-0} >= 1000)); then
	say "  ok: $threads threads seen"
else
	fail "${threads:-no} threads seen, want at least 1000"
fi
expect_exit 0 "$XPROF" report -i churn.data --folded --value samples -o churn.folded
assert_folded_format churn.folded
# No thread is held stopped for long behind the new threads' events:
# wait4(-1) gives the newest tracee's first, and the stops asked for were
# once left behind them for 0.1 to 2 s (5 runs of 6 over 200 ms).
assert_within "longest stop, ms" \
	"$(recorder_stat churn.data stop_max_ns | awk '{ printf "%.1f", $1 / 1e6 }')" 0 200
assert_samples_at_least "churn" 100 churn.folded
# The creator is the thread with run_threads in its stacks (the root).
# Nearly all its samples are in clone3, named only where libc has
# debuginfo: those that end there had it for their root (0% reached
# run_threads).
expect_exit 0 "$XPROF" report -i churn.data --folded --value samples --per-thread -o churn.tid
assert_within "creator's samples that reach run_threads, %" "$(awk '
	{ split($1, f, ";"); n = $NF; all[f[1]] += n }
	/;run_threads;/ { reach[f[1]] += n }
	END { for (t in reach) { a += all[t]; b += reach[t] }
		if (a) printf "%.1f", 100 * b / a }' churn.tid)" 90 100
# Its weight is its CPU time.  A tick that finds it stopped at a clone
# event not collected yet samples it at that stop: left for a tick that
# finds it running, it got 19 samples for 208 ms of CPU, the rest at its
# exit, when the controller kept it waiting at nearly every clone.
# The workers that ended unsampled are under run_threads too, with a
# marker frame (t5010): not the creator's own time.
expect_exit 0 "$XPROF" report -i churn.data --folded -o churn.ns
grep -v '\[exited before a sample' churn.ns >churn.own
main_ms=$(sed -n 's/^churn: main \([0-9]*\) ms of .*/\1/p' churn.err)
read -r hits _ _ < <(folded_stats churn.own "frame:run_threads")
ratio=$(awk -v h="$hits" -v m="${main_ms:-0}" 'BEGIN { if (m > 0) printf "%.2f", h / 1e6 / m }')
assert_within "creator's weight / its CPU time (${main_ms:-?} ms)" "$ratio" 0.7 1.1

finish
