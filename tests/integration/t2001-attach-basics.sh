#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof attach' profiles a running process for a while and leaves it as
# it was, and refuses what it must not or cannot trace:
#   - attach -p PID -d 2s to split (tests/targets/split.c, CPU-bound)
#     returns after 2 to 3 s of wall time, exit 0, with >= 1500 samples
#     (999 Hz for 2 s is ~2000) whose stacks are split's (main;work in
#     >= 95%); the process is then not traced (TracerPid 0) nor stopped,
#     and it finishes with exit 0 and the same output as an unprofiled run.
#     In cpu mode a sample stands for CPU time the target used: on a
#     machine shared with other work, split gets less than 2 s of CPU in
#     those 2 s, so the bar is 1500 or 75% of the milliseconds of CPU it
#     got (utime + stime from /proc/PID/stat), whichever is lower;
#   - errors, each exit 1 with one "xprof: error:" line, first on stderr,
#     naming the pid: a pid that does not exist; pid 1 when it is the
#     system's init (refused before any ptrace call; not checked inside a
#     container's pid namespace, where pid 1 is an ordinary program); a
#     kernel thread (kthreadd, pid 2, when this is not a container); xprof's
#     own pid; a thread id that is not a process id; a process already
#     traced by another tracer (tests/helpers/pthold.c), where the message
#     names the tracer's pid and name;
#   - bad -p values are usage errors: exit 2, nothing attached.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

T=$XP_TARGETS
expect_exit 0 "$T/split" 0.2
cp "$XP_OUT" split.expected
ready_init # after the unprofiled run, whose readiness line nobody reads

# state_of PID: the State letter and TracerPid of PID ("R 0").
state_of() {
	awk '/^State:/ { s = $2 } /^TracerPid:/ { t = $2 } END { print s, t }' "/proc/$1/status"
}

# cpu_ms_of PID: the user + system CPU time of PID so far, in ms.
cpu_ms_of() {
	awk -v hz="$(getconf CLK_TCK)" '{
		sub(/^.*\) /, "")	# the comm field may hold spaces
		print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}

say "## attach -d 2s to a running process"
# 4 s of CPU: still running after the 2 s of profiling, however slow.
start_bg split "$T/split" 4
wait_ready 1
pid=$XP_READY_PID
started=$EPOCHREALTIME
cpu_before=$(cpu_ms_of "$pid")
expect_exit 0 "$XPROF" attach -p "$pid" -d 2s -o attach.data
elapsed=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
cpu_ms=$(($(cpu_ms_of "$pid") - cpu_before))
show_file "summary" "$XP_ERR"
if awk -v e="$elapsed" 'BEGIN { exit !(e >= 2.0 && e <= 3.0) }'; then
	say "  ok: attach -d 2s returned after $elapsed s (want 2..3 s)"
else
	fail "attach -d 2s returned after $elapsed s (want 2..3 s)"
fi
if [[ -e /proc/$pid ]]; then
	assert_eq "after detach: running, not traced" "$(state_of "$pid" | sed 's/^[RS] /running /')" \
		"running 0"
else
	fail "split $pid ended before the profile did: give it more work"
fi
expect_exit 0 "$XPROF" report -i attach.data --folded --value samples -o attach.folded
assert_folded_format attach.folded
want=$((cpu_ms * 3 / 4 < 1500 ? cpu_ms * 3 / 4 : 1500))
say "# split used $cpu_ms ms of CPU while attached: want >= $want samples"
assert_samples_at_least "attach -d 2s" "$want" attach.folded
assert_share_at_least "split's stacks" 95 attach.folded "chain:main;work"
wait_bg split 0
assert_files_equal "split's output as without xprof" split.expected "$XP_TMP/split.out"

say "## a pid that does not exist"
gone=$(sh -c 'echo $$')
if [[ -e /proc/$gone ]]; then
	say "# pid $gone was reused at once: not checked"
else
	expect_exit 1 "$XPROF" attach -p "$gone" -d 1s -o gone.data
	assert_error_line "no such pid" "$XP_ERR"
	assert_file_matches "no such pid: named" "$XP_ERR" "^xprof: error: .*pid $gone\\b"
fi

say "## pid 1"
if [[ $(stat -L -c %i /proc/self/ns/pid) == 4026531836 ]]; then
	expect_exit 1 "$XPROF" attach -p 1 -d 1s -o init.data
	assert_error_line "pid 1" "$XP_ERR"
	assert_file_matches "pid 1: named, as init" "$XP_ERR" '^xprof: error: .*pid 1\b.*init'
else
	say "# in a container's pid namespace: pid 1 is an ordinary program, not checked"
fi

say "## a kernel thread"
if [[ $(cat /proc/2/comm 2>/dev/null) == kthreadd ]]; then
	expect_exit 1 "$XPROF" attach -p 2 -d 1s -o kthread.data
	assert_error_line "kthreadd" "$XP_ERR"
	assert_file_matches "kthreadd: named, as a kernel thread" "$XP_ERR" \
		'^xprof: error: .*pid 2\b.*kernel thread'
else
	say "# no kthreadd at pid 2 (a container): not checked"
fi

say "## xprof's own pid"
# shellcheck disable=SC2016 # $$ is the inner shell's pid, which exec makes xprof's
expect_exit 1 bash -c 'exec "$0" attach -p $$ -d 1s -o self.data' "$XPROF"
assert_error_line "own pid" "$XP_ERR"
assert_file_matches "own pid: said so" "$XP_ERR" '^xprof: error: .*xprof itself'

say "## a thread id"
start_bg threads "$T/threads" 2 30
wait_ready 1
pid=$XP_READY_PID
for task in /proc/"$pid"/task/*; do
	tid=${task##*/}
	[[ $tid != "$pid" ]] && break
done
expect_exit 1 "$XPROF" attach -p "$tid" -d 1s -o tid.data
assert_error_line "thread id" "$XP_ERR"
assert_file_matches "thread id: named, as a thread" "$XP_ERR" "^xprof: error: .*\\b$tid\\b.*thread"
kill -TERM "$pid"

say "## a process traced by another tracer"
start_bg held "$T/split" 30
wait_ready 1
pid=$XP_READY_PID
start_bg holder "$XP_HELPERS/pthold" "$pid"
holder=$XP_BG_PID # run.pl's pid: the tracer is its child
for ((i = 0; i < 500; i++)); do
	read -r _ tracer < <(state_of "$pid")
	[[ $tracer != 0 ]] && break
	sleep 0.01
done
if [[ $tracer == 0 ]]; then
	show_file "pthold stderr" "$XP_TMP/holder.err"
	fail_now "pthold did not seize $pid"
fi
say "# pid $pid is traced by pid $tracer ($(cat "/proc/$tracer/comm"))"
expect_exit 1 "$XPROF" attach -p "$pid" -d 1s -o held.data
assert_error_line "already traced" "$XP_ERR"
assert_file_matches "already traced: the pid" "$XP_ERR" "^xprof: error: .*pid $pid\\b"
assert_file_matches "already traced: the tracer named" "$XP_ERR" "\\b$tracer\\b.*pthold"
assert_eq "the other tracer still holds it" "$(state_of "$pid" | cut -d' ' -f2)" "$tracer"
kill -TERM "$holder"
wait_bg holder 0
kill -TERM "$pid"

say "## bad -p values"
for v in "" 0 -1 abc 12x 1,,2 ,1 "1," 99999999999 " 1"; do
	check_exit 2 "$XPROF" attach -p "$v" -d 1s -o bad.data
done
check_exit 2 "$XPROF" attach -d 1s -o bad.data
check_exit 2 "$XPROF" attach -p
if [[ -e bad.data ]]; then
	fail "a usage error wrote a data file"
fi

finish
