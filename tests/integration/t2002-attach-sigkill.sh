#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Whatever happens to xprof, an attached target keeps running correctly
# (doc/design.md, Never harm the target).  xprof attach (no -d) is killed with
# SIGKILL after 2 s of sampling -- no chance to detach: the kernel detaches
# for it.  For split (one thread) and threads -l 4 (four CPU-bound threads,
# so that interrupts are in flight when the kill lands):
#   - xprof dies of SIGKILL; every thread of the target is then untraced
#     (TracerPid 0) and not stopped (State R or S, never t or T), and the
#     target uses CPU time afterwards;
#   - the target finishes with exit 0 and the same output as an unprofiled
#     run;
#   - the data file, cut wherever the kill found it, is reportable (exit
#     0) with >= 500 samples: it is flushed at least once a second, so at
#     least ~1 s of the 2 s is in it.  In cpu mode a sample stands for CPU
#     time the target used; on a machine shared with other work the target
#     gets less, so the bar is 500 or 40% of the CPU ms it used while
#     attached, whichever is lower.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

T=$XP_TARGETS
expect_exit 0 "$T/split" 0.1
cp "$XP_OUT" split.expected
expect_exit 0 "$T/threads" -l 4 0.05
cp "$XP_OUT" threads.expected
ready_init # after the unprofiled runs, whose readiness lines nobody reads

# cpu_ms_of PID: the user + system CPU time of PID (all threads), in ms.
cpu_ms_of() {
	awk -v hz="$(getconf CLK_TCK)" '{
		sub(/^.*\) /, "")	# the comm field may hold spaces
		print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}

# field FILE NAME: a field of a /proc status file.
field() {
	awk -v f="$2:" '$1 == f { print $2 }' "$1"
}

for target in "split 4" "threads -l 4 1.5"; do
	read -r name args <<<"$target"
	say "## $name"
	# shellcheck disable=SC2086 # $args is a list of words
	start_bg "$name" "$T/$name" $args
	wait_ready 1
	pid=$XP_READY_PID
	start_bg "$name-attach" "$XPROF" attach -q -p "$pid" -o "$name.data"
	for ((i = 0; i < 500; i++)); do
		tracer=$(field "/proc/$pid/status" TracerPid)
		[[ $tracer != 0 ]] && break
		sleep 0.01
	done
	assert_eq "$name: traced by xprof" "$(cat "/proc/$tracer/comm" 2>/dev/null)" xprof
	cpu_before=$(cpu_ms_of "$pid")
	sleep 2 # the scenario: 2 s of sampling, then the kill
	kill -KILL "$tracer"
	wait_bg "$name-attach" "signal 9"
	cpu_ms=$(($(cpu_ms_of "$pid") - cpu_before))

	bad=""
	for task in /proc/"$pid"/task/*; do
		state=$(field "$task/status" State)
		tracer=$(field "$task/status" TracerPid)
		[[ $state == [RS] && $tracer == 0 ]] || bad+=" ${task##*/}:$state:$tracer"
	done
	if [[ -z $bad ]]; then
		say "  ok: $name: every thread running or runnable, untraced"
	else
		fail "$name: threads stopped or traced after xprof died (tid:state:tracer):$bad"
	fi
	before=$(cpu_ms_of "$pid")
	for ((i = 0; i < 100; i++)); do
		(($(cpu_ms_of "$pid") > before)) && break
		sleep 0.02
	done
	if (($(cpu_ms_of "$pid") > before)); then
		say "  ok: $name: runs on after the kill"
	else
		fail "$name: used no CPU time in the 2 s after the kill"
	fi
	wait_bg "$name" 0
	assert_files_equal "$name: output as without xprof" "$name.expected" "$XP_TMP/$name.out"

	expect_exit 0 "$XPROF" report -i "$name.data" --folded --value samples -o "$name.folded"
	show_file "$name: report stderr (a warning if the kill cut a record)" "$XP_ERR"
	assert_folded_format "$name.folded"
	want=$((cpu_ms * 2 / 5 < 500 ? cpu_ms * 2 / 5 : 500))
	say "# $name used $cpu_ms ms of CPU while attached: want >= $want samples"
	assert_samples_at_least "$name: from the cut file" "$want" "$name.folded"
done

finish
