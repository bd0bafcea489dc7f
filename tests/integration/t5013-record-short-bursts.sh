#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# An event loop's thread: short runs between 300 us sleeps, each run
# making system calls as it goes.  bursts (tests/targets/bursts.c) runs,
# in a seeded random order, nine short bursts (50 us of CPU) for one long
# one (450 us), for 3 s: about 0.7 s of CPU, half of it in each kind (the
# program prints its own split, the truth here).  Its stops at a call's
# exit take it to its own CPU's interrupt, which comes after most short
# runs have ended: a stop in the sleep that followed gives no sample, and
# the long runs carried the short ones' time (0.015-0.04 of it, 300
# samples per CPU-second).  Such a thread goes back to the interrupt from
# any CPU (record/due.c, the path).
#   - at least 600 samples per second of its CPU time at 999 Hz;
#   - short_burst's share of the two bursts' CPU within 0.1 of the truth.
#     It reads 0.42-0.49 for a truth of 0.49: an interrupt from any CPU
#     still misses the end of some short runs (~10-30 us late), and their
#     time goes with the next sample, a long run's as often as not.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
for t in bursts bursts-nofp; do
	say "## $t"
	expect_exit 0 "$XPROF" record -F 999 -o "$t.data" -- "$T/$t" 3
	cp "$XP_OUT" "$t.out"
	cp "$XP_ERR" "$t.err"
	show_file "summary" "$t.err"
	truth=$(sed -n 's/^bursts: short=\([0-9.]*\) long=\([0-9.]*\)$/\1 \2/p' "$t.out" |
		awk '$1 + $2 > 0 { printf "%.3f", $1 / ($1 + $2) }')
	cpu_s=$(sed -n 's/.*; \([0-9.]*\) s of CPU in the profile.*/\1/p' "$t.err")
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.samples"
	expect_exit 0 "$XPROF" report -i "$t.data" --folded -o "$t.folded"
	assert_folded_format "$t.folded"
	read -r _ _ total < <(folded_stats "$t.samples" all)
	assert_within "$t: samples per second of CPU (${total:-?} samples, ${cpu_s:-?} s)" \
		"$(awk -v n="${total:-0}" -v c="${cpu_s:-0}" 'BEGIN { if (c > 0) printf "%.0f", n / c }')" \
		600 1100
	read -r short _ < <(folded_stats "$t.folded" frame:short_burst)
	read -r long _ < <(folded_stats "$t.folded" frame:long_burst)
	share=$(awk -v s="${short:-0}" -v l="${long:-0}" 'BEGIN { if (s + l > 0) printf "%.3f", s / (s + l) }')
	assert_within "$t: short_burst's share of the bursts' CPU (truth ${truth:-?})" "$share" \
		"$(awk -v t="${truth:-0}" 'BEGIN { printf "%.3f", t - 0.1 }')" \
		"$(awk -v t="${truth:-0}" 'BEGIN { printf "%.3f", t + 0.1 }')"
	if ((XP_FAILS)); then
		show_file "profile" "$t.folded" 10
	fi
done

finish
