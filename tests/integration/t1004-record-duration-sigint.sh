#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'record -d' samples for a while and lets the command run on; signals
# sent to xprof reach the command (doc/design.md, Exit status: record behaves like time(1)):
#   - record -d 1s -- split 3: the summary says sampling lasted 1.0 s
#     (0.9..1.4), the report has what ~1 s can give (100..1400 samples,
#     where the whole run would give ~3000), the command still runs to
#     completion (its result line, as without xprof) and record exits 0;
#   - record returns the command's status when the command ends after the
#     sampling: exit 7, and 139 for a death by SIGSEGV;
#   - SIGINT sent to xprof alone (kill -INT, not a terminal's Ctrl-C to
#     the whole process group) is passed on to the command, which dies of
#     it: record exits 130, and the data file is reportable;
#   - the same after the sampling has ended (-d 1s, the command not traced
#     any more): SIGINT gives 130, SIGTERM 143, not a lost signal and an
#     xprof waiting for a command that never ends.
# Why start_bg: a background job of a non-interactive shell starts with
# SIGINT and SIGQUIT ignored (POSIX, "Shell Execution Environment"), an
# ignored signal stays ignored across exec, and the kernel discards a
# signal whose action is SIG_IGN even while it is blocked: 'xprof &' would
# never see the kill -INT, and its command would inherit SIG_IGN.
# start_bg runs the command through tests/lib/run.pl, which restores the
# default actions before exec; the test checks SigIgn in /proc, for xprof
# and for the command, so that a passing test means what it says.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
expect_exit 0 "$T/split" 0.1
cp "$XP_OUT" split.expected
ready_init # after the unprofiled run, whose readiness line nobody reads

say "## -d 1s: sampling stops, the command runs on"
expect_exit 0 "$XPROF" record -d 1s -o duration.data -- "$T/split" 3
wait_ready 1
assert_files_equal "the command ran to completion" split.expected "$XP_OUT"
show_file "summary" "$XP_ERR"
secs=$(sed -n 's/^xprof: [0-9]* samples in \([0-9.]*\) s .*/\1/p' "$XP_ERR")
if [[ $secs ]] && awk -v s="$secs" 'BEGIN { exit !(s >= 0.9 && s <= 1.4) }'; then
	say "  ok: sampled for $secs s (want 0.9..1.4)"
else
	fail "sampled for '${secs:-?}' s (want 0.9..1.4)"
fi
expect_exit 0 "$XPROF" report -i duration.data --folded --value samples -o duration.folded
assert_folded_format duration.folded
total=$(folded_total duration.folded)
if ((total >= 100 && total <= 1400)); then
	say "  ok: $total samples (want 100..1400: about 1 s of the 3 s run)"
else
	fail "$total samples (want 100..1400: about 1 s of the 3 s run)"
fi

say "## -d: the command's status after the sampling"
expect_exit 7 "$XPROF" record -q -d 500ms -o code.data -- "$T/exits" code 7 1.5
wait_ready 1
expect_exit 139 "$XPROF" record -q -d 500ms -o segv.data -- "$T/exits" signal 11 1.5
wait_ready 1

# sig_ignored PID SIG: whether PID ignores signal number SIG (SigIgn mask).
sig_ignored() {
	local mask
	mask=$(awk '/^SigIgn:/ { print $2 }' "/proc/$1/status")
	(((0x$mask >> ($2 - 1)) & 1))
}

# start_recording NAME ARGS...: start 'xprof record ARGS -- split 30' as
# NAME and wait until split runs; sets $cmd_pid and $xprof_pid (split's
# parent) and checks that neither ignores SIGINT.
start_recording() {
	local name=$1
	shift
	start_bg "$name" "$XPROF" record -q "$@" -o "$name.data" -- "$T/split" 30
	wait_ready 1
	cmd_pid=$XP_READY_PID
	xprof_pid=$(awk '/^PPid:/ { print $2 }' "/proc/$cmd_pid/status")
	assert_eq "$name: split's parent is xprof" "$(cat "/proc/$xprof_pid/comm")" xprof
	if sig_ignored "$xprof_pid" 2 || sig_ignored "$cmd_pid" 2; then
		fail_now "$name: SIGINT is ignored by xprof or split: the test means nothing"
	fi
}

# wait_untraced PID: until PID has no tracer (xprof's sampling has ended).
wait_untraced() {
	local i tracer
	for ((i = 0; i < 1000; i++)); do
		tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$1/status")
		[[ $tracer == 0 ]] && return 0
		sleep 0.01
	done
	fail_now "pid $1 is still traced by $tracer after 10 s"
}

say "## SIGINT to xprof alone, while sampling"
start_recording sigint
kill -INT "$xprof_pid"
wait_bg sigint 130
expect_exit 0 "$XPROF" report -i sigint.data --folded --value samples -o sigint.folded
assert_samples_at_least "sampled until the SIGINT" 1 sigint.folded

say "## SIGINT to xprof alone, after -d 1s"
start_recording late-int -d 1s
wait_untraced "$cmd_pid"
kill -INT "$xprof_pid"
wait_bg late-int 130

say "## SIGTERM to xprof alone, after -d 1s"
start_recording late-term -d 1s
wait_untraced "$cmd_pid"
kill -TERM "$xprof_pid"
wait_bg late-term 143

finish
