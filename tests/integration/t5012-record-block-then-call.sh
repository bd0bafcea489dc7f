#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A thread whose CPU time goes into a system call, between blocks in
# another.  blockcall (tests/targets/blockcall.c) sleeps 1 ms in
# nanosleep, then spends 1 ms of CPU in getrandom calls, for 2 s: about
# 1 s of CPU, nearly all of it in fill's getrandom.  Ticks find it blocked
# in nanosleep about half the time; a later stop at getrandom's exit is
# where its time goes, not the wake from nanosleep (the call it blocked
# in), and must give a sample.
#   - at least 600 samples per second of its CPU time at 999 Hz (937 here;
#     108 when every stop at a call's exit after a block was dropped);
#   - fill holds at least 90% of the samples and of the CPU weight.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
for t in blockcall blockcall-nofp; do
	say "## $t"
	expect_exit 0 "$XPROF" record -F 999 -o "$t.data" -- "$T/$t" 2
	cp "$XP_ERR" "$t.err"
	show_file "summary" "$t.err"
	cpu_s=$(sed -n 's/.*; \([0-9.]*\) s of CPU in the profile.*/\1/p' "$t.err")
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.samples"
	expect_exit 0 "$XPROF" report -i "$t.data" --folded -o "$t.folded"
	assert_folded_format "$t.samples"
	read -r _ _ total < <(folded_stats "$t.samples" all)
	assert_within "$t: samples per second of CPU (${total:-?} samples, ${cpu_s:-?} s)" \
		"$(awk -v n="${total:-0}" -v c="${cpu_s:-0}" 'BEGIN { if (c > 0) printf "%.0f", n / c }')" \
		600 1100
	assert_share_at_least "$t: fill, of the samples" 90 "$t.samples" frame:fill
	assert_share_at_least "$t: fill, of the CPU" 90 "$t.folded" frame:fill
	if ((XP_FAILS)); then
		show_file "samples" "$t.samples" 10
	fi
done

finish
