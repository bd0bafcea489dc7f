#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof attach' to a process tree: a shell that runs split for 1.5 s of
# CPU, then split again for 1 s, attached to while the first split runs,
# until the shell ends (every traced process gone).
#   - the first split, forked before the attach, is seized with the shell
#     and sampled: 700 samples at least of its ~1.4 s left (none when
#     only the given process was seized);
#   - the second split, forked after the attach, is in the profile;
#   - the summary's two CPU figures agree within 5%: the profile's total
#     and the tree's CPU time while attached, each traced process's CPU
#     clock since the attach (the shell's own figures from /proc, with its
#     reaped children's whole lives in them, counted the first split's
#     1.5 s, none of which the profile held).
# And a child that another tracer holds (tests/helpers/pthold.c) is left
# out with one warning line that says why, the rest profiled as usual; a
# child that has exited and waits to be reaped (a zombie, which ptrace
# refuses) is gone, not refused: no warning; a shell that attaches to
# itself has xprof below it, which is not seized (nor warned about), and
# its other child is profiled.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace attach

T=$XP_TARGETS
ready_init

# summary_ratio FILE: the profile's CPU over the tree's, from the summary line.
summary_ratio() {
	sed -n 's/.*; \([0-9.]*\) s of CPU in the profile, the tree used \([0-9.]*\) s;.*/\1 \2/p' "$1" |
		awk '$2 > 0 { printf "%.3f", $1 / $2 }'
}

say "## a shell running split twice, attached to during the first"
# shellcheck disable=SC2016 # expanded by the shell it runs
start_bg tree bash -c '"$0" 1.5 >/dev/null && "$0" 1 >/dev/null; echo done' "$T/split"
wait_ready 1
first=$XP_READY_PID
shell=$(awk '/^PPid:/ { print $2 }' "/proc/$first/status")
say "# the shell is pid $shell, the first split pid $first"
expect_exit 0 "$XPROF" attach -p "$shell" -o tree.data
show_file "summary" "$XP_ERR"
assert_within "summary: profile CPU / the tree's" "$(summary_ratio "$XP_ERR")" 0.95 1.05
wait_bg tree 0
expect_exit 0 "$XPROF" report -i tree.data --folded --per-thread --value samples -o tree.folded
expect_exit 0 "$XPROF" report -i tree.data --folded --value samples --pid "$first" -o first.folded
assert_samples_at_least "the first split, forked before the attach" 700 first.folded
wait_ready 1 # the second split's line
second=$(awk -F'[/;]' -v first="$first" '$1 == "split" && $2 != first { print $2; exit }' tree.folded)
if [[ $second ]]; then
	say "  ok: the second split (pid $second) is in the profile"
else
	fail "no split but the first ($first) in the profile"
fi

say "## a child held by another tracer"
# shellcheck disable=SC2016 # expanded by the shell it runs
start_bg held bash -c '"$0" 30 >/dev/null & "$0" 1.5 >/dev/null; kill $!; wait' "$T/split"
wait_ready 2
for line in "${XP_READY_LINES[@]: -2}"; do
	read -r _ pid _ <<<"$line"
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline") == *" 30 "* ]] && held=$pid
done
shell=$(awk '/^PPid:/ { print $2 }' "/proc/$held/status")
start_bg holder "$XP_HELPERS/pthold" "$held"
holder=$XP_BG_PID
for ((i = 0; i < 500; i++)); do
	[[ $(awk '/^TracerPid:/ { print $2 }' "/proc/$held/status") != 0 ]] && break
	sleep 0.01
done
expect_exit 0 "$XPROF" attach -p "$shell" -d 1s -o held.data
assert_file_matches "the held child: one warning, why" "$XP_ERR" \
	'^xprof: warning: 1 process below the target could not be traced \(Operation not permitted\)'
assert_file_matches "the rest profiled" "$XP_ERR" ' 2 processes;'
kill -TERM "$holder"
wait_bg held 0

say "## a zombie child"
# shellcheck disable=SC2016 # expanded by perl
start_bg zombie perl -e 'fork or exit 0; my $k = fork // die; exec @ARGV unless $k;
	sleep 1 until waitpid($k, 0) == $k' "$T/split" 2
wait_ready 1
parent=$(awk '/^PPid:/ { print $2 }' "/proc/$XP_READY_PID/status")
# zombies PID: how many children of PID have exited, not reaped yet.
zombies() {
	local kid kids n=0
	read -ra kids <"/proc/$1/task/$1/children"
	for kid in "${kids[@]}"; do
		[[ $(awk '/^State:/ { print $2 }' "/proc/$kid/status" 2>/dev/null) == Z ]] && n=$((n + 1))
	done
	echo "$n"
}
for ((i = 0; i < 500; i++)); do
	[[ $(zombies "$parent") == 1 ]] && break
	sleep 0.01
done
assert_eq "zombie children of $parent" "$(zombies "$parent")" 1
expect_exit 0 "$XPROF" attach -p "$parent" -d 1s -o zombie.data
assert_file_lacks "no warning" "$XP_ERR" 'warning'
assert_file_matches "the split profiled" "$XP_ERR" ' [0-9]+ samples in '
wait_bg zombie 0

say "## a shell that attaches to itself"
# shellcheck disable=SC2016 # expanded by the shell it runs
expect_exit 0 bash -c '"$1" 3 >/dev/null & "$0" attach -p $$ -d 1s -o self.data
	s=$?; kill $!; exit $s' "$XPROF" "$T/split"
assert_file_lacks "no warning" "$XP_ERR" 'warning'
expect_exit 0 "$XPROF" report -i self.data --folded --value samples -o self.folded
assert_share_at_least "its child split" 90 self.folded "comm:split"

finish
