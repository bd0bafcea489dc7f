#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Phases: a program names them by writing "mark NAME" to the --control
# FIFO, the data file keeps each mark with its time, and report --phase
# NAME keeps the samples from each mark of that name to the next mark.
# 'ab -p -m ctl' runs hot_a alone for its first 0.8 s, then hot_b alone,
# and marks each phase as it starts:
#   - report --header-only lists both phases with their times, in order;
#   - --phase hot_b --folded: hot_b is the leaf of >= 90% of the samples,
#     --phase hot_a the same for hot_a; the two phases are the run from
#     the first mark on;
#   - every format takes --phase (tree, flamegraph, speedscope, pprof) and
#     names only the phase's function; --phase combines with --time (their
#     intersection) and with --comm;
#   - a name used twice selects both of its phases;
#   - with --switch-output, every part starts with the phase under way:
#     --phase works on a part alone;
#   - an unknown phase: exit 1, one error line that lists the known ones.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
mkfifo ctl
expect_exit 0 "$XPROF" -q record --control fifo:ctl -o ph.data -- "$T/ab" -p -a 50 -s 1.6 -m ctl

expect_exit 0 "$XPROF" report -i ph.data --header-only -o ph.header
mapfile -t ph < <(awk '/^# phase / { print $3, $5 }' ph.header)
assert_eq "phases listed" "${ph[0]% *} ${ph[1]% *}" "hot_a hot_b"
assert_within "hot_b starts at (s)" "${ph[1]#* }" 0.75 1.2

expect_exit 0 "$XPROF" report -i ph.data --phase hot_b --folded --value samples -o b.folded
assert_share_at_least "--phase hot_b: hot_b" 90 b.folded "leaf:hot_b"
expect_exit 0 "$XPROF" report -i ph.data --phase hot_a --folded --value samples -o a.folded
assert_share_at_least "--phase hot_a: hot_a" 90 a.folded "leaf:hot_a"
# From the first mark on (ld.so and libc's start-up come before it).
expect_exit 0 "$XPROF" report -i ph.data --time "${ph[0]#* }," --folded --value samples -o all.folded
assert_eq "the phases make the run from the first mark" \
	"$(($(folded_total a.folded) + $(folded_total b.folded)))" "$(folded_total all.folded)"

# A mark is taken when the recorder reads it, a little after ab wrote it as
# hot_b began: the last samples of "hot_a" may be hot_b's, never the reverse.
for f in tree flamegraph speedscope; do
	expect_exit 0 "$XPROF" report -i ph.data --phase hot_b --$f -o "b.$f"
	assert_file_matches "$f --phase hot_b has hot_b" "b.$f" 'hot_b'
	assert_file_lacks "$f --phase hot_b has no hot_a" "b.$f" 'hot_a'
done
expect_exit 0 "$XPROF" report -i ph.data --phase hot_b --pprof -o b.pb.gz
assert_file_nonempty "pprof --phase hot_b" b.pb.gz
if zcat b.pb.gz | grep -aq hot_a; then
	fail "pprof --phase hot_b names hot_a"
else
	say "  ok: pprof --phase hot_b does not name hot_a"
fi

# With --time: the intersection; with --pid.
expect_exit 0 "$XPROF" report -i ph.data --phase hot_a --time 0.2,10 --flat -o at.flat
assert_flat_between "--phase hot_a --time 0.2,: hot_a" 90 100 at.flat self hot_a
expect_exit 1 "$XPROF" report -i ph.data --phase hot_b --time ,0.5
assert_file_matches "--phase hot_b --time ,0.5 is empty" "$XP_ERR" 'pass the filters'
expect_exit 0 "$XPROF" report -i ph.data --phase hot_b --comm ab --folded -o bc.folded
assert_share_at_least "--phase hot_b --comm ab: hot_b" 90 bc.folded "leaf:hot_b"

# A name used again: every phase of that name.  Marks sent by the test
# itself around two runs of hot_a: 'mark x' twice, 'mark y' between.
exec {ctl_fd}<>ctl
start_bg rec "$XPROF" -q record --control fifo:ctl -o twice.data -- "$T/ab" -p -a 100 -s 1.5
printf 'mark x\n' >&"$ctl_fd"
sleep 0.4
printf 'mark y\n' >&"$ctl_fd"
sleep 0.4
printf 'mark x\n' >&"$ctl_fd"
wait_bg rec 0
expect_exit 0 "$XPROF" report -i twice.data --header-only -o twice.header
assert_eq "three marks" "$(grep -c '^# phase ' twice.header)" 3
expect_exit 0 "$XPROF" report -i twice.data --phase x --folded --value samples -o x.folded
expect_exit 0 "$XPROF" report -i twice.data --phase y --folded --value samples -o y.folded
assert_samples_at_least "--phase y" 100 y.folded
first=$(awk '/^# phase x/ { print $5; exit }' twice.header)
expect_exit 0 "$XPROF" report -i twice.data --time "$first," --folded --value samples -o fromx.folded
assert_eq "x and y make the run from the first mark" \
	"$(($(folded_total x.folded) + $(folded_total y.folded)))" "$(folded_total fromx.folded)"

# --switch-output: each part carries the phase under way, so that --phase
# works on a part alone.
expect_exit 0 "$XPROF" -q record --control fifo:ctl --switch-output 300ms -o sw.data -- \
	"$T/ab" -p -a 50 -s 1.6 -m ctl
parts=(sw.data.*)
last=${parts[-1]}
expect_exit 0 "$XPROF" report -i "$last" --header-only -o last.header
assert_file_matches "the last of ${#parts[@]} parts names the phase under way" last.header '^# phase hot_b '
expect_exit 0 "$XPROF" report -i "$last" --phase hot_b --folded --value samples -o last.folded
assert_share_at_least "the last part alone, --phase hot_b: hot_b" 90 last.folded "leaf:hot_b"

# Unknown phases.
expect_exit 1 "$XPROF" report -i ph.data --phase nope
assert_error_line "an unknown phase" "$XP_ERR"
assert_file_matches "the error lists the phases" "$XP_ERR" "no phase 'nope' in 'ph.data' [(]its phases: hot_a, hot_b[)]"
expect_exit 0 "$XPROF" -q record -o none.data -- "$T/ab" -s 0.2
expect_exit 1 "$XPROF" report -i none.data --phase a --flat
assert_error_line "a file without phases" "$XP_ERR"
assert_file_matches "it says there are none" "$XP_ERR" 'it has no phases'
finish
