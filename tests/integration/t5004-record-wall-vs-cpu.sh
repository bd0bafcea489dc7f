#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Wall-clock mode counts blocked time, CPU mode does not.  sleeper
# (tests/targets/sleeper.c) alternates 5 ms of computing (compute) and a
# 5 ms nanosleep (nap) for 3 s.  Shares are of the weight ('report --flat'
# Total%): a sample stands for the time since the thread's last one,
# elapsed in wall mode, CPU in cpu mode.
#   - --mode wall: nap has 50 +-8% of the weight, compute 50 +-8%.  On a
#     busy machine both phases stretch (a compute preempted past its end,
#     a nap waiting for a CPU after its wake-up), so "50" is the share
#     sleeper measures itself in the same run (XP_TARGET_VERBOSE): the
#     profile must be within 8 points of it (the log shows both);
#     of the samples in nap, >= 90% end in the blocking system call as a leaf
#     frame, "[syscall] 230" (x86-64 clock_nanosleep, 35 nanosleep) or, once
#     report names system calls, "[syscall] clock_nanosleep"/"nanosleep";
#   - --mode cpu: nap has at most 5% of the weight, compute at least 90%
#     (measured 1-3% on a quiet machine, up to 5.5% at load 30: a tick
#     that finds the thread running sends its interrupt, the thread enters
#     nanosleep before it lands, and the sample is taken in the interrupted
#     system call with the CPU time of the compute before it),
#     and no sample has a [syscall] frame (CPU mode skips a thread blocked
#     in a system call); the total weight (CPU time) is at most 65% of the
#     wall-mode total (elapsed time), which is about 3 s;
#   - both runs print the same output as an unprofiled run.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XP_TARGETS/sleeper" 0.1
cp "$XP_OUT" sleeper.expected

# flat_weight FILE: the total weight from the flat report's first line.
flat_weight() {
	sed -n '1s/^# Samples: [0-9]*, weight: \([0-9]*\)$/\1/p' "$1"
}

for mode in wall cpu; do
	say "## --mode $mode"
	XP_TARGET_VERBOSE=1 expect_exit 0 "$XPROF" record -q --mode "$mode" -o "$mode.data" -- \
		"$XP_TARGETS/sleeper" 3
	cp "$XP_ERR" "$mode.truth"
	assert_files_equal "$mode: output as without xprof" sleeper.expected "$XP_OUT"
	expect_exit 0 "$XPROF" report -i "$mode.data" --folded --value samples -o "$mode.folded"
	expect_exit 0 "$XPROF" report -i "$mode.data" --flat -o "$mode.flat"
	assert_folded_format "$mode.folded"
	show_file "$mode: flat profile" "$mode.flat" 10
	# ~3000 in wall mode; ~1500 in cpu mode, on an idle machine only.
	assert_samples_at_least "$mode" "$([[ $mode == wall ]] && echo 500 || echo 150)" \
		"$mode.folded"
done

say "## wall: the sleep is half of the time"
# "sleeper: wall W compute C nap N", in seconds.
read -r _ _ wall _ compute _ nap < <(grep '^sleeper: wall ' wall.truth) ||
	fail_now "no time line from sleeper: $(cat wall.truth)"
nap_pct=$(awk -v n="$nap" -v w="$wall" 'BEGIN { printf "%.0f", 100 * n / w }')
compute_pct=$(awk -v c="$compute" -v w="$wall" 'BEGIN { printf "%.0f", 100 * c / w }')
say "# sleeper measured itself: nap ${nap_pct}%, compute ${compute_pct}% of $wall s"
assert_flat_between "wall: nap" $((nap_pct - 8)) $((nap_pct + 8)) wall.flat total nap
assert_flat_between "wall: compute" $((compute_pct - 8)) $((compute_pct + 8)) wall.flat total \
	compute
assert_share_at_least "wall: nap ends in the system call" 90 wall.folded \
	'leaf:\[syscall\] (230|35|clock_nanosleep|nanosleep)' frame:nap

say "## cpu: the sleep is not CPU time"
assert_flat_between "cpu: nap" 0 5 cpu.flat total nap
assert_flat_between "cpu: compute" 90 100 cpu.flat total compute
assert_share_at_most "cpu: no blocked system call" 0 cpu.folded 'frame:\[syscall\] .*'
wall_w=$(flat_weight wall.flat)
cpu_w=$(flat_weight cpu.flat)
ratio=$(awk -v c="$cpu_w" -v w="$wall_w" 'BEGIN { printf "%.2f", w ? c / w : 1 }')
if awk -v r="$ratio" 'BEGIN { exit !(r <= 0.65) }'; then
	say "  ok: cpu weight $cpu_w ns is $ratio of the wall weight $wall_w ns (want <= 0.65)"
else
	fail "cpu weight $cpu_w ns is $ratio of the wall weight $wall_w ns (want <= 0.65)"
fi

finish
