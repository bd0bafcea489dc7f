#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A -fomit-frame-pointer -O2 -g program with a non-tail chain main -> level1
# -> level2 -> level3 (tests/targets/chain.c, "levels" mode): every frame
# needs CFI.  In auto (the default) and dwarf mode, the whole chain
# main;level1;level2;level3 is in >= 97% of the samples.  The frame-pointer
# build gives main;level1;level2 with -g fp too; level3 itself is lost
# there in the ~5% of samples taken inside libc's clock_gettime, which has
# no frame pointer: that is what -g fp means.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

run() { # run TARGET MODE [CHAIN]
	local t=$1 g=$2 chain=${3:-main;level1;level2;level3}
	say "## $t -g $g"
	expect_exit 0 "$XPROF" record -q -g "$g" -o "$t-$g.data" -- "$XP_TARGETS/$t" levels 2
	expect_exit 0 "$XPROF" report -i "$t-$g.data" --folded --value samples -o "$t-$g.folded"
	assert_folded_format "$t-$g.folded"
	assert_samples_at_least "$t -g $g" 1200 "$t-$g.folded"
	assert_share_at_least "$t -g $g: $chain" 97 "$t-$g.folded" "chain:$chain"
}

run chain-nofp auto
run chain-nofp dwarf
run chain fp 'main;level1;level2'
run chain auto

finish
