#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Complete stacks across code without frame pointers: chain's comparator
# (tests/targets/chain.c, "qsort" mode) is called back by glibc's qsort,
# which is built without frame pointers, from sort_driver from main.  In
# every unwinding mode that may use CFI (auto, the default, and dwarf):
#   - sort_driver and main are in >= 97% of the samples (a frame-pointer
#     walk loses both at libc's frames: perf record -g gets 0%);
#   - chain_cmp is in ~90% of the samples (its share of the CPU: 80..98%);
#   - main;sort_driver are consecutive (nothing invented between them).
# Both builds of the target (with and without frame pointers).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

for t in chain chain-nofp; do
	for g in auto dwarf; do
		say "## $t -g $g"
		expect_exit 0 "$XPROF" record -q -g "$g" -o "$t-$g.data" -- "$XP_TARGETS/$t" qsort 2
		expect_exit 0 "$XPROF" report -i "$t-$g.data" --folded --value samples -o "$t-$g.folded"
		assert_folded_format "$t-$g.folded"
		assert_samples_at_least "$t -g $g" 1200 "$t-$g.folded"
		assert_share_at_least "$t -g $g: main" 97 "$t-$g.folded" frame:main
		assert_share_at_least "$t -g $g: main;sort_driver" 97 "$t-$g.folded" \
			"chain:main;sort_driver"
		assert_share_between "$t -g $g: chain_cmp" 80 98 "$t-$g.folded" frame:chain_cmp
	done
done

finish
