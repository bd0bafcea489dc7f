#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The profile of split (tests/targets/split.c) is right, for the
# frame-pointer build and for the -fomit-frame-pointer build, at the
# default rate over ~3 s of CPU:
#   - at least 2000 samples (999 Hz for 3 s is ~3000);
#   - 'main' in at least 99% of the stacks (complete stacks);
#   - main;work;a / main;work;b / main;work;c (consecutive frames) in
#     50 / 30 / 20% of the samples, +-4 points;
#   - of the samples with 'leaf' on top, at least 95% have a, b or c right
#     below it: leaf has no frame (GCC 12 omits it even with
#     -fno-omit-frame-pointer, t0002 checks), so a frame-pointer-only walk
#     would skip its caller every time (perf -g does: 0%);
#   - 'leaf' is on top of at least 80% of all samples (so the 95% above is
#     about most of the profile);
#   - the first frame is the comm (split, split-nofp) in >= 99%;
#   - the target's output is the same as an unprofiled run's;
#   - samples per second of the target's CPU time (as split measures it)
#     are 90..106% of the rate asked for: CPU mode takes one sample per
#     period of CPU time, although its ticks come per period of wall time
#     and the target is stopped for some of each (102% before, 91% at 999 Hz
#     when the kernel's stale CPU counter made it skip ticks).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

for t in split split-nofp; do
	say "## $t"
	expect_exit 0 "$XP_TARGETS/$t" 3
	cp "$XP_OUT" "$t.expected"
	XP_TARGET_VERBOSE=1 expect_exit 0 "$XPROF" record -q -o "$t.data" -- "$XP_TARGETS/$t" 3
	cpu_s=$(awk '/ s CPU$/ { print $(NF - 2) }' "$XP_ERR")
	assert_files_equal "$t: output as without xprof" "$t.expected" "$XP_OUT"
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.folded"
	assert_folded_format "$t.folded"

	assert_samples_at_least "$t" 2000 "$t.folded"
	rate=$(awk -v n="$(folded_total "$t.folded")" -v c="${cpu_s:-0}" \
		'BEGIN { if (c > 0) printf "%.0f", n / c; else print 0 }')
	if ((rate >= 999 * 90 / 100 && rate <= 999 * 106 / 100)); then
		say "  ok: $t: $rate samples per CPU-second (want 899..1058)"
	else
		fail "$t: $rate samples per CPU-second over ${cpu_s:-?} s (want 899..1058)"
	fi
	assert_share_at_least "$t: comm first" 99 "$t.folded" "comm:$t"
	assert_share_at_least "$t: main" 99 "$t.folded" frame:main
	assert_share_between "$t: main;work;a" 46 54 "$t.folded" "chain:main;work;a"
	assert_share_between "$t: main;work;b" 26 34 "$t.folded" "chain:main;work;b"
	assert_share_between "$t: main;work;c" 16 24 "$t.folded" "chain:main;work;c"
	assert_share_at_least "$t: leaf on top" 80 "$t.folded" leaf:leaf
	assert_share_at_least "$t: frameless leaf's caller recovered" 95 "$t.folded" \
		"tail:a|b|c;leaf" leaf:leaf
done

finish
