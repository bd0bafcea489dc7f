#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Signals reach a profiled process exactly as they would without xprof
# (doc/design.md, Never harm the target: every signal re-injected,
# PTRACE_LISTEN for group-stops).
# sigtarget (tests/targets/sigtarget.c) computes and counts, in handlers,
# the SIGRTMIN it gets (summing their values) and its SIGCONTs; SIGUSR1
# makes it print the counts and exit 0.  Sampling at 4999 Hz, so that many
# interrupts meet the signals (doc/ptrace-notes.md, trap 1).  Under 'record' and
# under 'attach':
#   - 3000 SIGRTMIN queued by another process (tests/helpers/sigqueue.c,
#     values 1..3000) are all counted: rtmin=3000 sum=4501500, none lost,
#     none doubled (real-time signals queue, so the count is exact);
#   - SIGSTOP from another process stops it (it does not run: no CPU time
#     for 200 ms), SIGCONT resumes it (its handler runs), three times; the
#     same twice with SIGTSTP;
#   - it then finishes normally: exit 0, cont=5, and the profile has its
#     samples (in busy; it mostly waits stopped, so a few hundred);
#   - attach only: xprof ending (SIGINT) while the process is stopped
#     leaves it stopped and untraced (State T, TracerPid 0), and a SIGCONT
#     then resumes it.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

T=$XP_TARGETS
ready_init

# field PID NAME: a field of /proc/PID/status ("State" gives the letter).
field() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# cpu_ns PID: the CPU time PID has used, in ns.
cpu_ns() {
	read -r ns _ <"/proc/$1/schedstat"
	printf '%s\n' "$ns"
}

# wait_stopped PID HOW: until PID is stopped (state T, or t under a tracer
# when the group-stop is held with PTRACE_LISTEN) and really not running:
# no CPU time used over 200 ms.  A sampling stop also shows "t", but
# lasts microseconds and the process runs between them.
wait_stopped() {
	local pid=$1 how=$2 i state before
	for ((i = 0; i < 50; i++)); do
		state=$(field "$pid" State)
		if [[ $state == [Tt] ]]; then
			before=$(cpu_ns "$pid")
			sleep 0.2
			if [[ $(cpu_ns "$pid") == "$before" ]]; then
				say "  ok: stopped by $how (state $state, no CPU time for 200 ms)"
				return 0
			fi
		else
			sleep 0.02
		fi
	done
	fail_now "pid $pid not stopped by $how (state $state)"
}

# signal_storm PID: the queued signals and the stop/continue cycles.
signal_storm() {
	local pid=$1 i n=0
	expect_exit 0 "$XP_HELPERS/sigqueue" "$pid" RTMIN 1 3000
	for sig in STOP STOP STOP TSTP TSTP; do
		n=$((n + 1))
		kill -"$sig" "$pid"
		wait_stopped "$pid" "SIG$sig"
		kill -CONT "$pid"
		# The next stop would discard a SIGCONT still pending (signal(7)).
		wait_ready 1
		assert_eq "SIGCONT $n handled" "${XP_READY_LINES[-1]}" "ready $pid sigtarget cont-$n"
	done
}

# SIGTSTP (like SIGTTIN and SIGTTOU) is discarded by the kernel, not
# acted on, in an orphaned process group (POSIX; get_signal in
# kernel/signal.c), and start_bg's group is one: run.pl leads a new
# session.  So the processes that must stop on it run in a process group of
# their own, below a parent that stays in run.pl's group and waits for
# them (without WUNTRACED, so a stop is not an end) and then ends the same
# way, exit status or signal.
# shellcheck disable=SC2016 # perl code, not shell
in_new_pgrp=(perl -MPOSIX -e '
	my $pid = fork() // die "fork: $!\n";
	if (!$pid) { setpgid(0, 0); exec { $ARGV[0] } @ARGV; POSIX::_exit(127) }
	waitpid($pid, 0) == $pid or die "waitpid: $!\n";
	my $st = $?;
	if ($st & 127) { $SIG{$st & 127} = "DEFAULT"; kill($st & 127, $$); sleep 1 }
	exit($st >> 8)' --)

expected="sigtarget: rtmin=3000 sum=4501500 cont=5"

say "## under record"
start_bg record "${in_new_pgrp[@]}" "$XPROF" record -q -F 4999 -o record.data -- "$T/sigtarget" 60
wait_ready 1
pid=$XP_READY_PID
signal_storm "$pid"
kill -USR1 "$pid"
wait_bg record 0
assert_eq "record: counts" "$(cat "$XP_TMP/record.out")" "$expected"
expect_exit 0 "$XPROF" report -i record.data --folded --value samples -o record.folded
assert_samples_at_least "record" 20 record.folded
assert_share_at_least "record: in busy" 90 record.folded frame:busy

say "## under attach"
start_bg target "${in_new_pgrp[@]}" "$T/sigtarget" 60
wait_ready 1
pid=$XP_READY_PID
start_bg attach "$XPROF" attach -q -F 4999 -p "$pid" -o attach.data
for ((i = 0; i < 500; i++)); do
	tracer=$(field "$pid" TracerPid)
	[[ $tracer != 0 ]] && break
	sleep 0.01
done
assert_eq "attach: traced by xprof" "$(cat "/proc/$tracer/comm" 2>/dev/null)" xprof
signal_storm "$pid"
# xprof ends while the process is stopped: it must stay stopped, untraced.
kill -STOP "$pid"
wait_stopped "$pid" "SIGSTOP, before xprof ends"
kill -INT "$tracer"
wait_bg attach 0
assert_eq "attach: still stopped after xprof ended, not traced" \
	"$(field "$pid" State) $(field "$pid" TracerPid)" "T 0"
kill -CONT "$pid"
wait_ready 1
assert_eq "SIGCONT 6 handled" "${XP_READY_LINES[-1]}" "ready $pid sigtarget cont-6"
kill -USR1 "$pid"
wait_bg target 0
assert_eq "attach: counts" "$(cat "$XP_TMP/target.out")" \
	"sigtarget: rtmin=3000 sum=4501500 cont=6"
expect_exit 0 "$XPROF" report -i attach.data --folded --value samples -o attach.folded
assert_samples_at_least "attach" 20 attach.folded
assert_share_at_least "attach: in busy" 90 attach.folded frame:busy

finish
