#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# xprof dump on a running 'shares' with three working threads and one
# blocked in read(2): every thread is listed with its name and state and a
# symbolized stack (main thread: main -> run_rounds; workers: start_thread
# -> worker -> run_rounds; idle: idler -> read), with file:line; afterwards
# the process is not traced, every working thread keeps using CPU, and it
# can be dumped again.  glibc's frames under the start routines
# (__libc_start_call_main, start_thread) are local symbols: named when the
# ELF files have them (libc.so.6's .symtab, or its separate debuginfo, e.g.
# Debian's libc6-dbg), otherwise shown as libc.so.6+0xOFF, never under a
# wrong name; the test reads the ELF files itself to know which to expect.  A stopped process (SIGSTOP) is dumped and stays
# stopped.  Errors: no -p (2), no such process (1, with a hint).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
require_cmd readelf binutils
start_target shares -s 0 -t 3 -i
pid=$TARGET_PID

# libc_frame SYM: the pattern of the frame for glibc's local function SYM:
# its name if libc.so.6 or its debuginfo (by build-id, where libdw looks)
# has a symbol for it, else libc.so.6+0xOFF.
libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' "/proc/$pid/maps")
[[ -f $libc ]] || fail_now "no libc.so.6 in /proc/$pid/maps"
libc_files=("$libc")
id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
[[ -n $id && -f /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug ]] &&
	libc_files+=("/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug")
libc_frame() {
	if readelf -sW "${libc_files[@]}" 2>/dev/null | awk -v s="$1" '$8 == s { f = 1 } END { exit !f }'; then
		printf '%s \\(' "$1"
	else
		printf '%s' 'libc\.so\.6\+0x[0-9a-f]+$'
	fi
}
below_main=$(libc_frame __libc_start_call_main)
below_start=$(libc_frame start_thread)
say "# libc: ${libc_files[*]}: expecting '$below_main' under main, '$below_start' under a thread's start routine"
mapfile -t tids < <(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -n)
((${#tids[@]} == 4)) || fail "expected 4 threads in /proc, found ${#tids[@]}"

check_exit 0 "$XPROF" dump -p "$pid"
cp "$XP_OUT" dump.txt
cp dump.txt "$XP_ARTIFACTS/dump.txt"
show_file "dump" dump.txt 40
[[ $(head -n1 dump.txt) == "Process $pid: $XP_TARGETS/shares -s 0 -t 3 -i -r 3" ]] ||
	fail "first line: $(head -n1 dump.txt)"
if [[ -s $XP_ERR ]]; then
	fail "dump wrote to stderr: $(head -n3 "$XP_ERR")"
fi

# block TID: the lines of one thread, up to the blank line after it.
block() {
	awk -v t="Thread $1 (" 'index($0, t) == 1 { on = 1 } on && /^$/ { exit } on' dump.txt
}
for tid in "${tids[@]}"; do
	b=$(block "$tid")
	head=$(head -n1 <<<"$b")
	comm=$(cat "/proc/$pid/task/$tid/comm")
	case $comm in
	shares) want="main run_rounds" start=main below=$below_main ;;
	shares-*) want="worker run_rounds" start=worker below=$below_start ;;
	idle) want="idler read|__read|__libc_read" start=idler below=$below_start ;; # glibc's aliases
	*) want="" start="" ;;
	esac
	[[ $head == "Thread $tid ($comm) "*":" ]] || fail "no header for thread $tid ($comm): '$head'"
	for fn in $want; do
		grep -Eq "^    ($fn) \(" <<<"$b" || fail "thread $tid ($comm): no $fn in its stack"
	done
	if [[ -n $start ]]; then
		next=$(awk -v s="    $start (" 'on { print; exit } index($0, s) == 1 { on = 1 }' <<<"$b")
		grep -Eq "^    $below" <<<"$next" ||
			fail "thread $tid ($comm): below $start: '$next', expected /$below/"
	fi
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
check_exit 0 "$XPROF" dump -p "$pid"
grep -c '^Thread ' "$XP_OUT" | grep -qx 4 || fail "second dump: $(grep -c '^Thread ' "$XP_OUT") threads"

# A stopped process is dumped and stays stopped (group-stop kept, no SIGCONT).
kill -STOP "$pid"
all_stopped() {
	local tid
	for tid in "${tids[@]}"; do
		[[ $(task_field "$pid" "$tid" 3) == T ]] || return 1
	done
}
wait_until 10 all_stopped || fail "target did not stop"
check_exit 0 "$XPROF" dump -p "$pid"
cp "$XP_OUT" stopped.txt
grep -q "^Thread $pid (shares) stopped:" stopped.txt || fail "stopped state not shown: $(sed -n 3p stopped.txt)"
grep -q '^    main (' stopped.txt || fail "no main in the stopped process's dump"
for tid in "${tids[@]}"; do
	state=$(task_field "$pid" "$tid" 3)
	[[ $state == T ]] || fail "thread $tid of the stopped process is now in state $state"
done
kill -CONT "$pid"
for tid in "${tids[@]}"; do cpu[$tid]=$(task_cpu "$pid" "$tid"); done
wait_until 10 moved && say "ok: runs again after SIGCONT" || fail "did not run again after SIGCONT"

check_exit 2 "$XPROF" dump
grep -q "no process given: use -p <pid>" "$XP_ERR" || fail "no usage message"
check_exit 1 "$XPROF" dump -p 4194304
grep -q '^hint: no process with pid 4194304 exists' "$XP_ERR" || fail "no hint for a missing process"
finish
