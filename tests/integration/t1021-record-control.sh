#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# record --control fifo:CTL,ACK takes perf record's commands at run time:
#   - started disabled (--delay -1), 'enable' and 'disable' make two windows
#     of about 0.4 s in a run of 'ab' (CPU-bound); the data file records
#     them (report --header-only: "sampling enabled/disabled : T s"), every
#     sample lies inside an enabled window (report --time of each disabled
#     stretch keeps none), and there are samples for about 0.8 s of CPU
#     time, not for the whole run; each command got one "ack" line;
#   - 'ping' is acknowledged, a line that is no command is not (a warning
#     names it), and 'stop' ends sampling while the command runs on to its
#     own exit status;
#   - never enabled: no interrupt at all (stat interrupts 0), the command
#     runs unsampled and exits 0;
#   - xprof mark --control fifo:CTL,ACK NAME (a script's way): each mark is
#     acknowledged, the header lists the phases in order, and --phase of
#     the later one keeps samples; without a recording on the FIFO, exit 1
#     ("no recording reads"); a bad name or no --control, exit 2;
#   - a missing --control FIFO or one that is not a FIFO: exit 1, one error
#     line, the command never started and an earlier data file kept; bad
#     values and --delay -1 without --control: usage errors (exit 2).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
mkfifo ctl ack
# Held open read-write, as perf's example does: no open ever blocks.
exec {ctl_fd}<>ctl {ack_fd}<>ack

# send CMD: write CMD to the control FIFO and wait (5 s at most) for its ack.
send() {
	local line=
	printf '%s\n' "$1" >&"$ctl_fd"
	if read -r -t 5 -u "$ack_fd" line && [[ $line == ack ]]; then
		say "  ok: '$1' acknowledged"
	else
		fail "'$1': no ack line (got '$line')"
	fi
}

say "## enable/disable windows"
# 3 s of CPU time: longer than the 1.6 s of commands, however loaded the machine.
start_bg rec "$XPROF" -q record -D -1 --control fifo:ctl,ack -o ed.data -- "$T/ab" -s 3 -a 50
sleep 0.3
send enable
sleep 0.4
send disable
sleep 0.5
send ping
send enable
sleep 0.4
send disable
send stop
wait_bg rec 0
expect_exit 0 "$XPROF" report -i ed.data --header-only -o ed.header
show_file "header" ed.header 40
mapfile -t sw < <(awk '/^# sampling (enabled|disabled) : / { print $3 " " $5 }' ed.header)
assert_eq "switches recorded" "${sw[*]//[0-9.]/}" "disabled  enabled  disabled  enabled  disabled "
# The stretches while disabled: [0, on1), [off1, on2), [off2, end).
on1=${sw[1]#* } off1=${sw[2]#* } on2=${sw[3]#* } off2=${sw[4]#* }
for w in ",$(awk -v t="$on1" 'BEGIN { print t - 0.001 }')" \
	"$(awk -v a="$off1" -v b="$on2" 'BEGIN { print a + 0.001 "," b - 0.001 }')" \
	"$(awk -v t="$off2" 'BEGIN { print t + 0.001 }'),"; do
	expect_exit 1 "$XPROF" report -i ed.data --time "$w"
	assert_file_matches "no sample while disabled ($w s)" "$XP_ERR" 'pass the filters'
done
# How many: as many as the CPU time ab gets in 0.4 s, which load shares.
for w in "$on1,$off1" "$on2,$off2"; do
	expect_exit 0 "$XPROF" report -i ed.data --time "$w" --folded --value samples -o in.folded
	assert_samples_at_least "samples in the window $w s" 20 in.folded
done
expect_exit 0 "$XPROF" report -i ed.data --folded --value samples -o ed.folded
total=$(folded_total ed.folded)
# At most 0.8 s of CPU time at 999 Hz; the run lasted well over 1.6 s.
assert_within "samples of two 0.4 s windows" "$total" 40 1300
assert_within "sampling time (s)" "$(recorder_stat ed.data duration_ns | awk '{ print $1 / 1e9 }')" 0.7 1.5

say "## no ack for what is not a command; stop"
start_bg rec2 "$XPROF" -q record --control fifo:ctl,ack -o stop.data -- "$T/ab" -p -s 1.2 -a 50
printf 'enable cycles\n' >&"$ctl_fd"
send ping
send stop
wait_bg rec2 0
assert_file_matches "a bad command is named" "$XP_TMP/rec2.err" "warning: ignored --control command 'enable cycles'"
if read -r -t 0.2 -u "$ack_fd" line; then
	fail "an extra ack line: '$line'"
else
	say "  ok: one ack per command, none for the bad one"
fi

say "## xprof mark"
mkfifo ctl2 ack2
start_bg rec3 "$XPROF" -q record --control fifo:ctl2,ack2 -o mark.data -- "$T/ab" -s 1.5 -a 50
# Until the recorder holds the FIFO open, mark says no recording reads it.
mark() { "$XPROF" mark --control fifo:ctl2,ack2 "$1" 2>/dev/null; }
wait_until 10 mark first || fail_now "xprof mark first: never acknowledged"
say "  ok: 'mark first' acknowledged"
sleep 0.4
expect_exit 0 "$XPROF" mark --control fifo:ctl2,ack2 "second phase"
wait_bg rec3 0
expect_exit 0 "$XPROF" report -i mark.data --header-only -o mark.header
assert_eq "phases, in order" "$(sed -n 's/^# phase \(.*\) : .*/\1/p' mark.header | tr '\n' '|')" \
	"first|second phase|"
expect_exit 0 "$XPROF" report -i mark.data --phase "second phase" --folded --value samples -o second.folded
assert_samples_at_least "samples of the second phase" 20 second.folded
check_exit 1 "$XPROF" mark --control fifo:ctl2,ack2 late
assert_file_matches "no recording" "$XP_ERR" "no recording reads 'ctl2'"
check_exit 2 "$XPROF" mark --control fifo:ctl2 ""
check_exit 2 "$XPROF" mark first

say "## never enabled"
expect_exit 0 "$XPROF" record -D -1 --control fifo:ctl -o off.data -- "$T/ab" -p -s 0.3
assert_eq "interrupts while disabled" "$(recorder_stat off.data interrupts)" 0
assert_eq "ticks while disabled" "$(recorder_stat off.data ticks)" 0

say "## errors"
echo keep >old.data
expect_exit 1 "$XPROF" record --control fifo:missing -o old.data -- touch started
assert_error_line "a missing FIFO" "$XP_ERR"
[[ ! -e started ]] || fail "the command was started"
assert_file_matches "it says how to make one" "$XP_ERR" 'hint: make it first: mkfifo missing'
touch plain
expect_exit 1 "$XPROF" record --control fifo:ctl,plain -o old.data -- "$T/ab" -s 0.1
assert_error_line "an ACK that is no FIFO" "$XP_ERR"
assert_file_matches "it says so" "$XP_ERR" "cannot use 'plain' for --control: not a FIFO"
assert_eq "the earlier data file is kept" "$(cat old.data)" keep
expect_exit 1 "$XPROF" attach -p $$ --control fifo:missing -d 1s
assert_error_line "attach: a missing FIFO" "$XP_ERR"
for bad in ctl fifo: 'fifo:,ack' 'fifo:ctl,' fd:3; do
	expect_exit 2 "$XPROF" record --control "$bad" -- true
	assert_error_line "--control '$bad'" "$XP_ERR"
done
expect_exit 2 "$XPROF" record -D -1 -- true
assert_error_line "--delay -1 without --control" "$XP_ERR"
finish
