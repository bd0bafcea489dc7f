#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# CPU time spent inside system calls is found there, while other threads
# hold the address space's lock.  mapmix (tests/targets/mapmix.c)
# alternates 8 MiB mmap(MAP_POPULATE)+munmap calls with ~2 ms of
# computation while a second thread calls mprotect in a loop, and
# measures its split with its thread CPU clock: populate() takes ~60-70%
# of the main thread's CPU time.  The share of that thread's CPU time that
# xprof finds under populate() must lie within 5 points of the span of the
# program's own measure in the profiled run and in one unprofiled run just
# before: as root at 999 and 3999 Hz, as an ordinary user at 999 Hz.
#   - The thread's CPU is read from its stat file before it is
#     interrupted, not from its rseq area: that read takes the address
#     space's lock and would wait for the calls that hold it, so the
#     thread would be interrupted only once back in compute() (populate()
#     then read 20% for a truth of 61%).
#   - Known gap: an ordinary user's controller has no real-time priority,
#     and its wake that comes while the thread runs in the kernel takes it
#     at a preemption point inside the call (the page zeroing has one per
#     page), where one that comes while it runs its own code waits for the
#     kernel's tick, and the thread stops at the call's exit: populate()
#     reads high, the more so the higher the rate.  At 3999 Hz it read
#     2-7 points over the span (root: within 1.5), around the bound; at
#     9999 Hz 1-10, over the bound in 14 runs of 17 (root: within 0.5 in
#     3).  So the gap is checked at 9999 Hz, at the bound every other run
#     is held to, on three runs: it is open while any of them reads out of
#     bounds, and closed (the test then fails, saying so) when all three
#     are in.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace
users_self_and_nobody
late_max=0
is_sanitized_build && late_max=1

truth() {
	sed -n 's/^mapmix: call_share=\([0-9.]*\) .* mismatches=0$/\1/p' "$XP_OUT"
}

# run USER HZ [N]: populate()'s share of run()'s CPU time, within 5 points
# of the span of the program's measures (N numbers the files of a rate run
# more than once).
run() {
	local user=$1 hz=$2 n=${3:-} dir=$XP_TMP own before lo hi label
	local -a pre=()
	[[ $user == nobody ]] && dir=$XP_TMP/user pre=("${as_user[@]}")
	label="$user, $hz Hz${n:+, run $n}"
	expect_exit 0 "$XP_TARGETS/mapmix" 1
	before=$(truth)
	[[ $before ]] || fail_now "$label: no truth line from the unprofiled run: $(cat "$XP_OUT")"
	expect_exit 0 "${pre[@]}" "$XPROF" record -q -F "$hz" -o "$dir/$user-$hz$n.data" \
		-- "$XP_TARGETS/mapmix" 3
	own=$(truth)
	[[ $own ]] || fail_now "$label: no truth line from the profiled run: $(cat "$XP_OUT")"
	expect_exit 0 "$XPROF" report -i "$dir/$user-$hz$n.data" --folded -o "$user-$hz$n.folded"
	# Waits for the address space's lock inside mmap are not late stops
	# (record/due.c, the path): they sent it to any CPU, 0.50 for 0.59.
	# A sanitized controller (two to three times slower) is late of its
	# own at 3999 Hz now and then (one move in a run, the share in
	# bounds): there one move is allowed; the shipped build is held to 0.
	assert_within "$label: moves back to any CPU for lateness" \
		"$(recorder_stat "$dir/$user-$hz$n.data" path_late)" 0 "$late_max"
	read -r lo hi < <(awk -v a="$before" -v b="$own" \
		'BEGIN { printf "%.1f %.1f\n", (a < b ? a : b) - 5, (a > b ? a : b) + 5 }')
	assert_share_between "$label: populate() (unprofiled: $before%, the run's own: $own%)" \
		"$lo" "$hi" "$user-$hz$n.folded" "frame:^populate$" "frame:^run$"
}

# three_runs USER HZ: run, three times.
three_runs() {
	run "$1" "$2" 1
	run "$1" "$2" 2
	run "$1" "$2" 3
}

for user in "${users[@]}"; do
	say "## $user"
	run "$user" 999
	if [[ $user == nobody ]]; then
		known_gap "as an ordinary user, populate() reads high at 9999 Hz" three_runs nobody 9999
	else
		run "$user" 3999
	fi
done

finish
