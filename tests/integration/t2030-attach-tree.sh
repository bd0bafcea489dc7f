#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof attach' to a process tree: a shell that runs split for 1.5 s of
# CPU, then split again for 1 s, attached to while the first split runs,
# until the shell ends (every traced process gone).
#   - the summary's two CPU figures agree within 5%: the profile's total
#     and the tree's CPU time while attached, each traced process's CPU
#     clock since the attach (the shell's own figures from /proc, with its
#     reaped children's whole lives in them, counted the first split's
#     1.5 s, none of which the profile held);
#   - the second split, forked after the attach, is in the profile.
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
second=$(awk -F'[/;]' -v first="$first" '$1 == "split" && $2 != first { print $2; exit }' tree.folded)
if [[ $second ]]; then
	say "  ok: the second split (pid $second) is in the profile"
else
	fail "no split but the first ($first) in the profile"
fi

finish
