#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A long attach in parts (--switch-output), as a server watched for hours
# would be, simulated at a high rate for 3 s:
#   - attach -p PID -d 3s -F 4999 --switch-output 500ms to split
#     (tests/targets/split.c: a/b/c take 50/30/20% of its CPU time) leaves
#     4 to 9 parts named run.data.<timestamp> and no run.data;
#   - every part reports alone: its stacks reach main;work (>= 95%) and
#     name a, b and c;
#   - the parts reported together (-i part1 -i part2 ...) equal the sum of
#     the parts' reports, stack by stack, in samples; their sample count
#     is the recorder's; a/b/c are 50/30/20 within 8 points;
#   - --switch-output-format pprof leaves a whole gzip file beside each part;
#   - by size (--switch-output 16K): several parts, each of them small;
#   - --switch-output signal: one part per SIGUSR2, and the last at the end;
#   - bad values are usage errors (exit 2): "5x", "10ms", "-o -", the
#     format without --switch-output.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

T=$XP_TARGETS
ready_init
start_bg split "$T/split" 60
wait_ready 1
pid=$XP_READY_PID

say "## attach -d 3s at 4999 Hz, a part every 500ms, with pprof"
expect_exit 0 "$XPROF" attach -p "$pid" -d 3s -F 4999 --switch-output 500ms \
	--switch-output-format pprof -o run.data
cp "$XP_ERR" summary.txt
show_file "summary" summary.txt
mapfile -t parts < <(find . -maxdepth 1 -name 'run.data.*' ! -name '*.pb.gz' -printf '%f\n' | sort)
assert_within "parts" "${#parts[@]}" 4 9
[[ -e run.data ]] && fail "run.data is left over"
merge_args=()
: >sum.folded
for p in "${parts[@]}"; do
	check_exit 0 "$XPROF" report -i "$p" --folded --value samples
	cp "$XP_OUT" part.folded
	n=$(folded_total part.folded)
	main=$(folded_stats part.folded 'frame:work' | awk '{ print $2 ? 100 * $1 / $2 : 0 }')
	say "  $p: $n samples, main;work in $main%"
	assert_within "$p: stacks through work" "$main" 95 100
	for f in a b c; do
		grep -q ";$f;" part.folded || fail "$p: no frame $f"
	done
	cat part.folded >>sum.folded
	merge_args+=(-i "$p")
	[[ -s $p.pb.gz ]] && gzip -t "$p.pb.gz" || fail "$p.pb.gz missing or not gzip"
done
expect_exit 0 "$XPROF" report "${merge_args[@]}" --folded --value samples
cp "$XP_OUT" merged.folded
awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' sum.folded |
	sort >sum.sorted
sort merged.folded >merged.sorted
if cmp -s sum.sorted merged.sorted; then
	say "  ok: the merged report is the sum of the parts ($(wc -l <merged.sorted) stacks)"
else
	fail "the merged report differs from the sum of the parts"
	diff sum.sorted merged.sorted | head -10
fi
recorded=$(sed -n 's/^xprof: \([0-9]*\) samples in.*/\1/p' summary.txt)
assert_eq "samples in the parts" "$(folded_total merged.folded)" "$recorded"
assert_share_between a 42 58 merged.folded 'frame:a'
assert_share_between b 22 38 merged.folded 'frame:b'
assert_share_between c 12 28 merged.folded 'frame:c'

say "## by size: --switch-output 16K"
expect_exit 0 "$XPROF" attach -p "$pid" -d 2s -F 4999 --switch-output 16K -o size.data
mapfile -t parts < <(find . -maxdepth 1 -name 'size.data.*' -printf '%f\n' | sort)
assert_within "parts" "${#parts[@]}" 2 1000
big=0
for p in "${parts[@]}"; do
	((${#parts[@]} > 1)) && check_exit 0 "$XPROF" report -i "$p" --folded
	s=$(stat -c %s "$p")
	((s > big)) && big=$s
done
# A part ends at the first flush past the size: at most a flush's worth over.
assert_within "largest part, bytes" "$big" 16384 400000

say "## on SIGUSR2: --switch-output signal"
start_bg sigattach "$XPROF" attach -p "$pid" --switch-output signal -o sig.data
find_xprof() { xprof_pid=$(pgrep -P "${XP_BG[sigattach]}" -x xprof) && [[ $xprof_pid ]]; }
wait_until 10 find_xprof || fail_now "no xprof process under the attach"
# Samples in the file: the attach has long been sampling (and taking SIGUSR2).
has_samples() { (($(stat -c %s sig.data 2>/dev/null || echo 0) > 4096)); }
wait_until 10 has_samples || fail_now "the attach never wrote samples to sig.data"
kill -USR2 "$xprof_pid"
has_part() { compgen -G 'sig.data.*' >/dev/null; }
wait_until 10 has_part || fail "no part after SIGUSR2"
# The end comes once the new part has samples (flushed, so a report of
# the growing file finds them): a part cut before its first sample has
# nothing to report (and says so, exit 1).
part_sampled() { "$XPROF" report -i sig.data --folded >/dev/null 2>&1; }
wait_until 10 part_sampled || fail "no samples in the part after SIGUSR2"
kill -INT "$xprof_pid"
wait_bg sigattach 0
mapfile -t parts < <(find . -maxdepth 1 -name 'sig.data.*' -printf '%f\n' | sort)
assert_eq "parts after one SIGUSR2 and the end" "${#parts[@]}" 2
for p in "${parts[@]}"; do
	check_exit 0 "$XPROF" report -i "$p" --folded
done

say "## bad values"
check_exit 2 "$XPROF" attach -p "$pid" --switch-output 5x
check_exit 2 "$XPROF" attach -p "$pid" --switch-output 10ms
check_exit 2 "$XPROF" attach -p "$pid" --switch-output 1s -o -
check_exit 2 "$XPROF" attach -p "$pid" --switch-output-format pprof
finish
