#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Stress: an exec chain, one process exec'ing itself 50 times, each image
# computing 5 ms ('forker --chain 50 5'), at 999 Hz.  Nothing crashes or
# hangs; every link checks the value handed to it, so the output equals
# the unprofiled one only if no exec corrupted anything; the data file
# holds one exec'ing PROCESS record per image (51: the first exec and 50
# more), and most samples are in chain_work.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
"$T/forker" --chain 50 0 >plain.out
say "# without xprof: $(cat plain.out)"

expect_exit 0 "$XPROF" record -F 999 -o chain.data -- "$T/forker" --chain 50 5
assert_files_equal "output as without xprof" plain.out "$XP_OUT"
show_file summary "$XP_ERR"
assert_file_matches "one process all along" "$XP_ERR" " 1 threads in 1 processes"
# PROCESS records (type 1) with DF_PROC_EXEC (flags bit 0, payload offset 16).
execs=$(perl -e 'local $/; my $d = <STDIN>; my ($o, $n) = (24, 0);
	while ($o + 8 <= length $d) { my ($t, $len) = unpack("VV", substr($d, $o, 8));
		$n++ if $t == 1 && (unpack("V", substr($d, $o + 8 + 16, 4)) & 1);
		$o += 8 + $len } print "$n\n"' <chain.data)
assert_eq "one exec record per image" "$execs" 51
expect_exit 0 "$XPROF" report -i chain.data --folded --value samples -o chain.folded
assert_folded_format chain.folded
assert_samples_at_least "chain" 100 chain.folded
assert_share_at_least "samples in chain_work" 50 chain.folded "frame:chain_work"

finish
