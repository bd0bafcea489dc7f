#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Many blocked threads beside a busy one.  threads idle 200 3
# (tests/targets/threads.c): 200 threads blocked beside one worker; every
# 20 ms the next of them wakes on its own timer and runs idle_burst for
# 4 ms of CPU time.  A thread found blocked is quiet: its counters are
# not read at each tick until a counter of its process moves unseen (its
# CPU clock says so) or more tasks are runnable than threads read.
#   - under record it completes with exit 0 and the output of an
#     unprofiled run, as root and as an ordinary user;
#   - at least 60% of the quiet threads' schedstat reads are left out
#     (quiet_skips, of 200 per tick), as root and as an ordinary user;
#   - as root, a woken thread is still found at once: idle_burst's share
#     of the CPU time within 60-115% of the truth the target measures (the
#     part of a burst after its last sample goes to the thread's next
#     sample, after the run: ~10% of it), and its samples at least 40% of
#     the rate over its CPU time (not read until the next read of all, the
#     bursts had 1% of the CPU time).  As an ordinary user the share is
#     printed, not asserted: it ranges from 5 to 16% for a truth of 17-18%
#     with or without quiet threads (a burst on the CPU the recorder
#     shares is sampled late there).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

users_self_and_nobody

expect_exit 0 "$XP_TARGETS/threads" idle 200 0.2
cp "$XP_OUT" idle.expected

for user in "${users[@]}"; do
	say "## as $user"
	dir=$XP_TMP
	pre=()
	if [[ $user == nobody ]]; then
		dir=$XP_TMP/user
		pre=("${as_user[@]}")
	fi
	data=$dir/idle-$user.data
	expect_exit 0 "${pre[@]}" env XP_TARGET_VERBOSE=1 "$XPROF" record -q -o "$data" -- \
		"$XP_TARGETS/threads" idle 200 3
	assert_files_equal "$user: output as without xprof" idle.expected "$XP_OUT"
	read -r bursts total < <(sed -n 's/^threads: idle: bursts \([0-9.]*\) s CPU of \([0-9.]*\) s CPU$/\1 \2/p' "$XP_ERR")
	[[ $bursts && $total ]] || fail_now "$user: no truth line on stderr: $(cat "$XP_ERR")"
	expect_exit 0 "$XPROF" report -i "$data" --flat -o "$user.flat"
	expect_exit 0 "$XPROF" report -i "$data" --folded --value samples -o "$user.folded"
	show_file "$user: flat profile" "$user.flat" 8

	ticks=$(recorder_stat "$data" ticks)
	skips=$(recorder_stat "$data" quiet_skips)
	say "# $user: $skips reads left out in $ticks ticks, $(recorder_stat "$data" quiet_sweeps) sweeps"
	assert_within "$user: quiet threads' reads left out (% of 200 per tick)" \
		"$(awk -v s="$skips" -v t="$ticks" 'BEGIN { printf "%.1f", t ? 100 * s / (200 * t) : 0 }')" 60 100

	if [[ $user == nobody ]]; then
		say "# nobody: idle_burst $(flat_share "$user.flat" total idle_burst)% of the weight for a truth of $(awk -v b="$bursts" -v t="$total" 'BEGIN { printf "%.1f", 100 * b / t }')%"
		continue
	fi
	read -r lo hi < <(awk -v b="$bursts" -v t="$total" \
		'BEGIN { p = 100 * b / t; printf "%.1f %.1f\n", 0.6 * p, 1.15 * p }')
	assert_flat_between "$user: idle_burst (truth $(awk -v b="$bursts" -v t="$total" \
		'BEGIN { printf "%.1f", 100 * b / t }')%)" "$lo" "$hi" "$user.flat" total idle_burst
	read -r hits _ < <(folded_stats "$user.folded" "chain:worker_idle;idle_burst")
	assert_within "$user: idle_burst's samples per CPU-second of its own (% of 999)" \
		"$(awk -v h="$hits" -v b="$bursts" 'BEGIN { printf "%.1f", 100 * h / (b * 999) }')" 40 130
done

finish
