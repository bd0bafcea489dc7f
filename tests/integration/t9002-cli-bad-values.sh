#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Bad values and impossible targets for 'record' and 'attach' (doc/design.md,
# Output and messages): each is refused with exactly one "xprof: error:" line, first
# on stderr, naming the value, nothing on stdout, and the right code;
# never a signal, and the command is never run:
#   - usage errors (2): -F, -d, --max-depth, -g, --mode and -p values
#     that are empty, signed, hex, exponents, out of range, with trailing
#     garbage or empty list elements; an option given a value it does not
#     take; --own-session with --spin-idle; attach without -p, with too many pids, with a stray argument;
#   - runtime errors (1): attach to a pid that does not exist, to a kernel
#     thread, to xprof itself, to a thread id that is not a process id;
#     record and attach with an output in a missing directory, an output
#     that is a directory, an output on /dev/full.
# Needs no ptrace: each case fails before anything is traced.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

T=$XP_TARGETS
# The command each record line would run: it must never run.
ran=(sh -c 'echo ran >>ran.txt')

# refused CODE LABEL ARGS...: exit CODE, one error line first, nothing on stdout.
refused() {
	local code=$1 label=$2
	shift 2
	check_exit "$code" "$XPROF" "$@"
	assert_error_line "$label" "$XP_ERR"
	assert_file_empty "$label: nothing on stdout" "$XP_OUT"
}

# bad_value OPTION VALUE CMD ARGS...: a usage error that quotes VALUE.
bad_value() {
	local opt=$1 value=$2
	shift 2
	refused 2 "$1 $opt '$value'" "$@"
	assert_file_matches "$1 $opt '$value': quotes the value" "$XP_ERR" \
		"^xprof: error: invalid value '$(printf '%s' "$value" | sed 's/[][\.*^$+?(){}|]/\\&/g')' for"
}

say "## record: bad values (usage, exit 2)"
for v in 0 10001 -1 +5 " 5" "5 " 1e3 0x10 1O0 "" 99999999999999999999999; do
	bad_value -F "$v" record -F "$v" -o r.data -- "${ran[@]}"
done
for v in 0 0s 999us -1s +1s 1e3 0x10 0x.8 1d 169h 5x inf nan "" . 1..2 "1 s"; do
	bad_value -d "$v" record -d "$v" -o r.data -- "${ran[@]}"
done
for v in 0 65537 -3 abc; do
	bad_value --max-depth "$v" record --max-depth "$v" -o r.data -- "${ran[@]}"
done
bad_value -g lbr record -g lbr -o r.data -- "${ran[@]}"
bad_value --mode both record --mode both -o r.data -- "${ran[@]}"
refused 2 "record --no-follow=1" record --no-follow=1 -o r.data -- "${ran[@]}"
assert_file_matches "--no-follow=1: names the option" "$XP_ERR" "option '--no-follow' takes no value"
refused 2 "record --own-session --spin-idle" record --own-session --spin-idle -o r.data -- "${ran[@]}"
assert_file_matches "--own-session --spin-idle: names both" "$XP_ERR" "own-session.*spin-idle"

say "## attach: bad values (usage, exit 2)"
for v in 0 -1 +1 abc "1," ,1 1,,2 "1 2" 0x10 1073741824 99999999999999999999; do
	bad_value -p "$v" attach -p "$v" -o a.data
done
refused 2 "attach without -p" attach -o a.data
refused 2 "attach -p ''" attach -p "" -o a.data
many=$(seq -s, 1 65)
refused 2 "attach with 65 pids" attach -p "$many" -o a.data
assert_file_matches "65 pids: says the limit" "$XP_ERR" "too many process ids .*at most 64"
refused 2 "attach with a command" attach -p 1 -o a.data -- "${ran[@]}"
for v in 0 20000 x; do
	bad_value -F "$v" attach -p 1 -F "$v" -o a.data
done
for v in 0 1e3 0x10 -5s; do
	bad_value -d "$v" attach -p 1 -d "$v" -o a.data
done

say "## attach: impossible targets (exit 1)"
# A pid that is not in use: the first free one counting down from pid_max.
pid_max=$(cat /proc/sys/kernel/pid_max)
for ((free = pid_max - 1; free > 300; free--)); do
	[[ -e /proc/$free ]] || break
done
refused 1 "attach to unused pid $free" attach -p "$free" -o a.data
assert_file_matches "unused pid: named, with why" "$XP_ERR" \
	"^xprof: error: cannot attach to pid $free: No such process"
# A kernel thread: PF_KTHREAD (0x00200000) in field 9 of /proc/PID/stat.
kthread=""
for stat in /proc/[0-9]*/stat; do
	read -r line <"$stat" 2>/dev/null || continue
	read -r -a f <<<"${line##*) }"
	# f[0] is field 3 (state), so field 9 (flags) is f[6].
	if (((${f[6]:-0} & 0x00200000) != 0)); then
		kthread=${stat#/proc/}
		kthread=${kthread%/stat}
		break
	fi
done
if [[ $kthread ]]; then
	refused 1 "attach to kernel thread $kthread" attach -p "$kthread" -o a.data
	assert_file_matches "kernel thread: says so" "$XP_ERR" "pid $kthread: it is a kernel thread"
else
	say "# no kernel thread visible in /proc here (a pid namespace): skipping that case"
fi
# xprof itself: the shell's pid becomes xprof's through exec.
# shellcheck disable=SC2016 # $0 and $$ are expanded by that shell
check_exit 1 sh -c 'exec "$0" attach -p $$ -o a.data' "$XPROF"
assert_error_line "attach to itself" "$XP_ERR"
assert_file_matches "itself: says so" "$XP_ERR" "it is xprof itself"
# A thread id that is not a process id (the target must keep running).
ready_init
start_bg threads "$T/threads" 2 30
wait_ready 1
tgt=$XP_READY_PID
tid=$(other_thread "$tgt")
refused 1 "attach to thread id $tid" attach -p "$tid" -o tid.data
assert_file_matches "thread id: says so" "$XP_ERR" "it is a thread id, not a process id"
# untraced TID...: "ok" if no thread is stopped (t, T) or traced, else what is wrong.
untraced() {
	local t s tr out=""
	for t in "$@"; do
		s=$(awk '{ print $3 }' "/proc/$tgt/task/$t/stat" 2>/dev/null) || continue
		tr=$(awk '/^TracerPid:/ { print $2 }' "/proc/$tgt/task/$t/status" 2>/dev/null) || continue
		[[ $s == [tT] || $tr != 0 ]] && out+="$t:$s:$tr "
	done
	printf '%s\n' "${out:-ok}"
}
tids=$(ls "/proc/$tgt/task")
# shellcheck disable=SC2086 # a list of tids
assert_eq "the target's threads run, untraced" "$(untraced $tids)" "ok"

say "## outputs that cannot be written (exit 1, nothing run or attached)"
mkdir outdir
for o in outdir nodir/x.data /dev/full; do
	refused 1 "record -o $o" record -o "$o" -- "${ran[@]}"
	assert_file_matches "record -o $o: names it" "$XP_ERR" "^xprof: error: cannot (create|write) '$o'"
	refused 1 "attach -o $o" attach -p "$tgt" -o "$o"
	assert_file_matches "attach -o $o: names it" "$XP_ERR" "^xprof: error: cannot (create|write) '$o'"
done
# shellcheck disable=SC2086 # a list of tids
assert_eq "the target was never attached" "$(untraced $tids)" "ok"

if [[ -e ran.txt ]]; then
	fail "a command was run despite the error ($(wc -l <ran.txt) times)"
else
	say "  ok: no command was run"
fi

finish
