#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof record' exits with its command's status (doc/design.md, Exit status,
# like time(1) and perf record), and xprof itself is never what dies:
#   - a command that exits N makes record exit N (0, 7, 255);
#   - a command killed by signal N makes record *exit* 128+N (139 for
#     SIGSEGV, 137 for SIGKILL), which run.pl tells apart from record
#     itself being killed;
#   - a command that cannot be run makes record exit 127, with one
#     "xprof: error:" line naming the command (an absolute path, and a
#     name looked up in PATH);
#   - the command's stdout passes through unchanged;
#   - the data file of a normal run, and of a run whose command died of a
#     signal, is reportable: 'report --folded' exits 0, prints folded
#     stacks, and the spinning function is on top of most samples.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS

say "## the command's exit status"
expect_exit 7 "$XPROF" record -q -o exit7.data -- sh -c 'exit 7'
expect_exit 0 "$XPROF" record -q -o exit0.data -- sh -c 'exit 0'
expect_exit 255 "$XPROF" record -q -o exit255.data -- "$T/exits" code 255
assert_eq "the command's stdout passes through" "$(cat "$XP_OUT")" "exits: code 255"

say "## death by a signal is 128+N"
expect_exit 139 "$XPROF" record -q -o sig11.data -- "$T/exits" signal 11
assert_eq "the command's stdout passes through" "$(cat "$XP_OUT")" "exits: signal 11"
expect_exit 137 "$XPROF" record -q -o sig9.data -- "$T/exits-nofp" signal 9
expect_exit 134 "$XPROF" record -q -o sig6.data -- "$T/exits" signal 6

say "## a command that cannot be run is 127"
expect_exit 127 "$XPROF" record -q -o none.data -- /nonexistent/cmd
assert_error_line "missing command: one error line" "$XP_ERR"
assert_file_matches "missing command: named" "$XP_ERR" '^xprof: error: .*/nonexistent/cmd'
expect_exit 127 "$XPROF" record -q -o none.data -- xprof-no-such-command-in-path
assert_file_matches "command not in PATH: named" "$XP_ERR" \
	'^xprof: error: .*xprof-no-such-command-in-path'

say "## the data file is reportable"
expect_exit 0 "$XPROF" record -q -o normal.data -- "$T/exits" code 0 1
expect_exit 0 "$XPROF" report -i normal.data --folded --value samples -o normal.folded
assert_folded_format normal.folded
# 1 s at 999 Hz: ~1000 samples; a quarter of that is a broken recorder.
assert_samples_at_least "normal run" 250 normal.folded
assert_share_at_least "normal run: spin on top" 90 normal.folded leaf:spin

expect_exit 139 "$XPROF" record -q -o crash.data -- "$T/exits" signal 11 1
expect_exit 0 "$XPROF" report -i crash.data --folded --value samples -o crash.folded
assert_folded_format crash.folded
assert_samples_at_least "run ending in SIGSEGV" 250 crash.folded
assert_share_at_least "run ending in SIGSEGV: spin on top" 90 crash.folded leaf:spin

finish
