#!/bin/bash
# SPDX-License-Identifier: MIT
# xprof dump on a running 'shares' with three working threads and one
# blocked in read(2): every thread is listed with its name and state and a
# symbolized stack (main thread: main -> run_rounds; workers: start_thread
# -> worker -> run_rounds; idle: idler -> read), with file:line; afterwards
# the process is not traced, every working thread keeps using CPU, and it
# can be dumped again.  A stopped process (SIGSTOP) is dumped and stays
# stopped.  Errors: no -p (2), no such process (1, with a hint).
. "$(dirname "$0")/../lib/xptest.sh"

require_ptrace
start_target shares -s 0 -t 3 -i
pid=$TARGET_PID
mapfile -t tids < <(ls "/proc/$pid/task" | sort -n)
((${#tids[@]} == 4)) || fail "expected 4 threads in /proc, found ${#tids[@]}"

expect_exit 0 "$XPROF" dump -p "$pid"
cp "$OUT" dump.txt
cp dump.txt "$XP_ARTIFACTS/dump.txt"
show dump.txt 40
[[ $(head -n1 dump.txt) == "Process $pid: $XP_TARGETS/shares -s 0 -t 3 -i -r 3" ]] ||
	fail "first line: $(head -n1 dump.txt)"
[[ -s $ERR ]] && fail "dump wrote to stderr: $(head -n3 "$ERR")"

# block TID: the lines of one thread, up to the blank line after it.
block() {
	awk -v t="Thread $1 (" 'index($0, t) == 1 { on = 1 } on && /^$/ { exit } on' dump.txt
}
for tid in "${tids[@]}"; do
	b=$(block "$tid")
	head=$(head -n1 <<<"$b")
	comm=$(cat "/proc/$pid/task/$tid/comm")
	case $comm in
	shares) want="main run_rounds" ;;
	shares-*) want="worker run_rounds start_thread" ;;
	idle) want="idler read|__read|__libc_read" ;; # glibc's aliases of one function
	*) want="" ;;
	esac
	[[ $head == "Thread $tid ($comm) "*":" ]] || fail "no header for thread $tid ($comm): '$head'"
	for fn in $want; do
		grep -Eq "^    ($fn) \(" <<<"$b" || fail "thread $tid ($comm): no $fn in its stack"
	done
	[[ $comm == idle && $head != *" sleeping:" ]] && fail "idle thread not shown sleeping: $head"
	grep -Eq '^    run_rounds \(.*/shares\.c:[0-9]+\)$' <<<"$b" || [[ $comm == idle ]] ||
		fail "thread $tid: no file:line for run_rounds"
	say "ok: thread $tid ($comm): $(sed -n 2p <<<"$b" | sed 's/^ *//') ... $(($(wc -l <<<"$b") - 1)) frames"
done

# Nothing changed: not traced, not stopped, every working thread still runs.
for tid in "${tids[@]}"; do
	tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/task/$tid/status")
	[[ $tracer == 0 ]] || fail "thread $tid still traced by $tracer"
	state=$(task_field "$pid" "$tid" 3)
	[[ $state == [tT] ]] && fail "thread $tid left in state $state"
done
moved() {
	local tid
	for tid in "${tids[@]}"; do
		[[ $(cat "/proc/$pid/task/$tid/comm") == idle ]] && continue
		(($(task_cpu "$pid" "$tid") > ${cpu[$tid]})) || return 1
	done
}
declare -A cpu
for tid in "${tids[@]}"; do cpu[$tid]=$(task_cpu "$pid" "$tid"); done
wait_until 10 moved && say "ok: every working thread uses CPU after the dump" ||
	fail "a working thread stopped running after the dump"
expect_exit 0 "$XPROF" dump -p "$pid"
grep -c '^Thread ' "$OUT" | grep -qx 4 || fail "second dump: $(grep -c '^Thread ' "$OUT") threads"

# A stopped process is dumped and stays stopped (group-stop kept, no SIGCONT).
kill -STOP "$pid"
all_stopped() {
	local tid
	for tid in "${tids[@]}"; do
		[[ $(task_field "$pid" "$tid" 3) == T ]] || return 1
	done
}
wait_until 10 all_stopped || fail "target did not stop"
expect_exit 0 "$XPROF" dump -p "$pid"
cp "$OUT" stopped.txt
grep -q "^Thread $pid (shares) stopped:" stopped.txt || fail "stopped state not shown: $(sed -n 3p stopped.txt)"
grep -q '^    main (' stopped.txt || fail "no main in the stopped process's dump"
for tid in "${tids[@]}"; do
	state=$(task_field "$pid" "$tid" 3)
	[[ $state == T ]] || fail "thread $tid of the stopped process is now in state $state"
done
kill -CONT "$pid"
for tid in "${tids[@]}"; do cpu[$tid]=$(task_cpu "$pid" "$tid"); done
wait_until 10 moved && say "ok: runs again after SIGCONT" || fail "did not run again after SIGCONT"

expect_exit 2 "$XPROF" dump
grep -q "no process given: use -p <pid>" "$ERR" || fail "no usage message"
expect_exit 1 "$XPROF" dump -p 4194304
grep -q '^hint: no process with pid 4194304 exists' "$ERR" || fail "no hint for a missing process"
finish
