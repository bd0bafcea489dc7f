#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# An event loop's thread: short runs between 300 us sleeps, each run
# making system calls as it goes.  bursts (tests/targets/bursts.c) runs,
# in a seeded random order, nine short bursts (50 us of CPU) for one long
# one (450 us), for 3 s: about 0.7 s of CPU, half of it in each kind (the
# program prints its own split, the truth here).  Its stops at a call's
# exit take it to its own CPU's interrupt, which comes after most short
# runs have ended: the stop interrupts the sleep that followed and gives
# no sample, and the long runs carried the short ones' time (300 samples
# per CPU-second; short_burst read 0.015-0.05 of the time).  Such a thread
# goes back to the interrupt from any CPU (record/due.c, the path).  For
# the FP and no-FP builds:
#   - at least 600 samples per second of its CPU time at 999 Hz;
#   - short_burst's share of the two bursts' CPU between 0.15 under the
#     truth and 0.1 over it: the short runs are reached.
# Known gap: an interrupt from any CPU still comes 10-30 us after the tick
# and misses the end of some short runs, whose time goes with the next
# sample, a long run's as often as not: short_burst reads 0.02-0.07 under
# the truth (0.453 on average in 20 runs, 0.42-0.52, for 0.491).  Checked
# on three runs of the FP build at 0.015 under the truth: the gap is open
# while any of them reads lower, closed (the test then fails, saying so)
# when all three are in.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace
# Elsewhere the registers do not tell a call's exit: every thread is
# interrupted from its own CPU (README), and this gap is open there.
[[ $(uname -m) == x86_64 ]] || skip "the interrupt from any CPU is taken on x86-64 only"

T=$XP_TARGETS

# run TARGET LABEL: record it, then print its truth and short_burst's share.
run() {
	local t=$1 label=$2 cpu_s total share truth

	expect_exit 0 "$XPROF" record -F 999 -o "$label.data" -- "$T/$t" 3
	cp "$XP_OUT" "$label.out"
	cp "$XP_ERR" "$label.err"
	truth=$(sed -n 's/^bursts: short=\([0-9.]*\) long=\([0-9.]*\)$/\1 \2/p' "$label.out" |
		awk '$1 + $2 > 0 { printf "%.3f", $1 / ($1 + $2) }')
	cpu_s=$(sed -n 's/.*; \([0-9.]*\) s of CPU in the profile.*/\1/p' "$label.err")
	expect_exit 0 "$XPROF" report -i "$label.data" --folded --value samples -o "$label.samples"
	expect_exit 0 "$XPROF" report -i "$label.data" --folded -o "$label.folded"
	read -r _ _ total < <(folded_stats "$label.samples" all)
	read -r short _ < <(folded_stats "$label.folded" frame:short_burst)
	read -r long _ < <(folded_stats "$label.folded" frame:long_burst)
	share=$(awk -v s="${short:-0}" -v l="${long:-0}" \
		'BEGIN { if (s + l > 0) printf "%.3f", s / (s + l) }')
	RUN_TRUTH=${truth:-0} RUN_SHARE=$share
	RUN_RATE=$(awk -v n="${total:-0}" -v c="${cpu_s:-0}" 'BEGIN { if (c > 0) printf "%.0f", n / c }')
	RUN_SAMPLES="${total:-?} samples, ${cpu_s:-?} s"
}

for t in bursts bursts-nofp; do
	say "## $t"
	run "$t" "$t"
	show_file "summary" "$t.err"
	assert_within "$t: samples per second of CPU ($RUN_SAMPLES)" "$RUN_RATE" 600 1100
	assert_within "$t: moves back to any CPU for lateness" \
		"$(recorder_stat "$t.data" path_late)" 1 1000
	assert_within "$t: short_burst's share of the bursts' CPU (truth $RUN_TRUTH)" "$RUN_SHARE" \
		"$(awk -v t="$RUN_TRUTH" 'BEGIN { printf "%.3f", t - 0.15 }')" \
		"$(awk -v t="$RUN_TRUTH" 'BEGIN { printf "%.3f", t + 0.1 }')"
	if ((XP_FAILS)); then
		show_file "profile" "$t.folded" 10
	fi
done

# Three runs, each within 0.015 under the truth (the known gap above).
three_close() {
	local n

	for n in 1 2 3; do
		run bursts "close$n"
		assert_within "run $n: short_burst's share (truth $RUN_TRUTH)" "$RUN_SHARE" \
			"$(awk -v t="$RUN_TRUTH" 'BEGIN { printf "%.3f", t - 0.015 }')" \
			"$(awk -v t="$RUN_TRUTH" 'BEGIN { printf "%.3f", t + 0.1 }')"
	done
}
say "## three runs against the truth"
known_gap "short runs that end before the interrupt from any CPU read low" three_close

finish
