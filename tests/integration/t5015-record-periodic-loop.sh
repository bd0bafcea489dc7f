#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A loop on an absolute timer, as games, audio and control loops run:
# 'bursts --period 1001' (tests/targets/bursts.c) runs 150 us of CPU in
# timed_burst at the start of every 1.001 ms, the period of a 999 Hz
# sampler, for 1 s.  Ticks that stay near a fixed grid keep one phase
# against such a loop: they never meet its runs, or always do.  With the
# ticks within an eighth of a period of the grid, most runs got 3 to 5
# samples for its 0.15 s of CPU, and timed_burst's share of the weight
# read 0 in some (the time went to the exit).  The ticks' phase now
# wanders over the whole period (record/schedule.h).  Three runs, each:
#   - at least 300 samples per second of timed_burst's CPU time (560-960
#     here in 13 runs; 20-27 when missed);
#   - timed_burst holds at least 90% of the weight (99% here).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

for n in 1 2 3; do
	say "## run $n"
	expect_exit 0 "$XPROF" record -F 999 -o "run$n.data" -- "$T/bursts" --period 1001 1
	cp "$XP_ERR" "rec$n.err"
	timed=$(sed -n 's/^bursts: timed=\([0-9.]*\)$/\1/p' "$XP_OUT")
	expect_exit 0 "$XPROF" report -i "run$n.data" --folded --value samples -o "run$n.samples"
	expect_exit 0 "$XPROF" report -i "run$n.data" --folded -o "run$n.folded"
	read -r _ _ samples < <(folded_stats "run$n.samples" all)
	read -r hits _ total < <(folded_stats "run$n.folded" frame:timed_burst)
	assert_within "run $n: samples per second of timed_burst's CPU ($samples for ${timed:-?} s)" \
		"$(awk -v n="${samples:-0}" -v c="${timed:-0}" 'BEGIN { if (c > 0) printf "%.0f", n / c }')" \
		300 1500
	assert_within "run $n: timed_burst's share of the weight" \
		"$(awk -v h="${hits:-0}" -v t="${total:-0}" 'BEGIN { if (t > 0) printf "%.3f", h / t }')" \
		0.9 1
	if ((XP_FAILS)); then
		show_file "summary" "rec$n.err"
		show_file "profile" "run$n.folded" 10
	fi
done

finish
