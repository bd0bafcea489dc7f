#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Stress: a fork storm, 100 children alive at once, each computing 5 ms
# and exiting with its own status ('forker --storm 100 5'), followed at
# 999 Hz, and again with --no-follow.  Nothing crashes or hangs; the
# parent reaps every child with the status it expects and prints what it
# prints without xprof; following, xprof sees all 101 processes and most
# samples are in storm_work; what the kernel spends past a sampled
# child's exit stop (its memory unmapped: its clock shows it at its end)
# goes with that child's last stack, not under a root frame of its own
# named as if it had ended unsampled.  And a forker that renamed itself
# ('forker --storm 300 0 stormname'): its children, which exit before any
# sample, are named as their creator was at the fork, by the name it
# gave itself, not the one it started with (xprof reads it from the
# creator's comm file, kept open, in place of the child's).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
"$T/forker" --storm 100 1 >plain.out
say "# without xprof: $(cat plain.out)"

say "## following the children"
expect_exit 0 "$XPROF" record -F 999 -o storm.data -- "$T/forker" --storm 100 5
assert_files_equal "output as without xprof" plain.out "$XP_OUT"
show_file summary "$XP_ERR"
procs=$(sed -n 's/.* threads in \([0-9]*\) processes.*/\1/p' "$XP_ERR")
if ((${procs:-0} >= 101)); then
	say "  ok: every process seen ($procs)"
else
	fail "${procs:-no} processes seen, want 101"
fi
expect_exit 0 "$XPROF" report -i storm.data --folded --value samples -o storm.folded
assert_folded_format storm.folded
assert_samples_at_least "storm" 150 storm.folded
assert_share_at_least "samples in storm_work" 50 storm.folded "frame:storm_work"
rootless=$(grep -c '^forker;\[exited before a sample' storm.folded || true)
[[ $rootless == 0 ]] || fail "the sampled children's exits are under a root marker of their own"

say "## a renamed forker's children"
expect_exit 0 "$XPROF" record -F 999 -o named.data -- "$T/forker" --storm 300 0 stormname
expect_exit 0 "$XPROF" report -i named.data --folded -o named.folded
assert_file_matches "children that ended unsampled, under their creator's new name" named.folded \
	';run_storm;.*;\[exited before a sample: stormname\] [0-9]+$'
stale=$(grep -c ';run_storm;.*;\[exited before a sample: forker\]' named.folded || true)
[[ $stale == 0 ]] || fail "$stale lines name children by the name their creator started with"

say "## --no-follow: the children run untraced"
expect_exit 0 "$XPROF" record -F 999 --no-follow -o parent.data -- "$T/forker" --storm 100 5
assert_files_equal "output as without xprof" plain.out "$XP_OUT"
assert_file_matches "one process traced" "$XP_ERR" " threads in 1 processes"

finish
