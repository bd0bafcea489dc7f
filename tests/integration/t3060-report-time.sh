#!/bin/bash
# SPDX-License-Identifier: MIT
# report --time FROM,TO keeps the samples taken in a window of the run, in
# every format.  The 'ab' target in phase mode runs hot_a alone for the
# first second of elapsed time and hot_b alone for the next: windows in the
# first part of the run (by percentage or by time since the start) hold
# hot_a only, windows in the second part hot_b only; the folded stacks,
# the flame graph and speedscope of the first window do not name hot_b;
# both halves together are the whole run; bad windows are usage errors
# and an empty one a clear error.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

skip_unless_ptrace
expect_exit 0 "$XPROF" -q record -o ab.data -- "$XP_TARGETS/ab" -p -a 50 -s 2

for w in ',40%' '60%,' ',500ms' '1600ms,' '0,0.5' '1.6s,10m'; do
	expect_exit 0 "$XPROF" report -i ab.data --time "$w" -o "flat$w.txt"
done
assert_flat_between "--time ,40%: hot_a" 95 100 "flat,40%.txt" self hot_a
assert_flat_between "--time 60%,: hot_b" 95 100 "flat60%,.txt" self hot_b
assert_flat_between "--time ,500ms: hot_a" 95 100 "flat,500ms.txt" self hot_a
assert_flat_between "--time 1600ms,: hot_b" 95 100 "flat1600ms,.txt" self hot_b
assert_files_equal "seconds without a unit are seconds" "flat,500ms.txt" "flat0,0.5.txt"
assert_files_equal "s and m units" "flat1600ms,.txt" "flat1.6s,10m.txt"

# The window applies to every format.
expect_exit 0 "$XPROF" report -i ab.data --time ,40% --folded -o first.folded
assert_share_at_least "folded --time ,40%: hot_a" 95 first.folded "leaf:hot_a"
assert_file_lacks "folded --time ,40% has no hot_b" first.folded 'hot_b'
for f in flamegraph speedscope; do
	expect_exit 0 "$XPROF" report -i ab.data --time ,40% --$f -o "first.$f"
	assert_file_matches "$f --time ,40% has hot_a" "first.$f" 'hot_a'
	assert_file_lacks "$f --time ,40% has no hot_b" "first.$f" 'hot_b'
done

# Two halves make the whole (a sample exactly on the boundary is in both).
expect_exit 0 "$XPROF" report -i ab.data --folded --value samples -o all.folded
expect_exit 0 "$XPROF" report -i ab.data --time ,50% --folded --value samples -o h1.folded
expect_exit 0 "$XPROF" report -i ab.data --time 50%, --folded --value samples -o h2.folded
all=$(folded_total all.folded)
halves=$(($(folded_total h1.folded) + $(folded_total h2.folded)))
if ((halves >= all && halves <= all + 1)); then
	say "  ok: halves $halves samples, whole $all"
else
	fail "halves $halves samples, whole $all"
fi

# Bad windows: usage errors; a window without samples: one error line.
for bad in 5 'x,' '50%,10%' ',' '1,2,3' '101%,' '-1,' '2s,1s' '1h2,'; do
	expect_exit 2 "$XPROF" report -i ab.data --time "$bad"
	assert_error_line "--time '$bad'" "$XP_ERR"
done
expect_exit 1 "$XPROF" report -i ab.data --time 1000s,
assert_error_line "an empty window" "$XP_ERR"
assert_file_matches "an empty window says why" "$XP_ERR" 'pass the filters'
finish
