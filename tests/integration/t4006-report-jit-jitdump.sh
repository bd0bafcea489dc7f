#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Code described by a jitdump (jit-PID.dump, mmapped executable by the JIT
# as perf's agents do, so record finds it in /proc/PID/maps) is named in
# the report, with no file left behind: record copied what it needed.
# Target: tests/targets/jit (x86-64 machine code); run_jitted;
# jitted_dump_loop at the leaf in >= 80% of the samples.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
if [[ $(uname -m) != x86_64 ]]; then
	skip "the jit target writes x86-64 code"
fi
skip_unless_ptrace

mkdir dump
expect_exit 0 "$XPROF" record -q -o jit.data -- "$XP_TARGETS/jit" jitdump 1 "$XP_TMP/dump"
pid=$(awk '/^pid /{print $2}' "$XP_OUT")
assert_eq "the jit printed its pid" "${pid:+yes}" yes
if [[ -f dump/jit-$pid.dump ]]; then
	say "  ok: the jit wrote dump/jit-$pid.dump"
else
	fail_now "no dump/jit-$pid.dump"
fi
rm -rf dump

expect_exit 0 "$XPROF" report -i jit.data --folded --value samples -o out.folded
assert_share_at_least "run_jitted;jitted_dump_loop" 80 out.folded "tail:run_jitted;jitted_dump_loop"
finish
