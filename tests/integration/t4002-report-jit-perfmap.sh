#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Code a JIT names in /tmp/perf-PID.map is named in the report, and still
# after the map file is gone, because record copied the entries into the
# data file.  Target: tests/targets/jit (x86-64 machine code):
# jitted_hot_loop is the leaf of >= 80% of the samples with the map file
# and without it, and its caller is the real function that called into the
# JIT code (run_jitted;jitted_hot_loop in >= 80%).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
if [[ $(uname -m) != x86_64 ]]; then
	skip "the jit target writes x86-64 code"
fi
skip_unless_ptrace

pid=
trap 'rc=$?; set +e; [[ -z $pid ]] || rm -f "/tmp/perf-$pid.map"; (exit $rc); _xp_exit' EXIT

expect_exit 0 "$XPROF" record -q -o jit.data -- "$XP_TARGETS/jit" perfmap 1
pid=$(awk '/^pid /{print $2}' "$XP_OUT")
[[ -n $pid ]] || fail_now "the jit did not print its pid"
[[ -f /tmp/perf-$pid.map ]] || fail_now "the jit wrote no /tmp/perf-$pid.map"

expect_exit 0 "$XPROF" report -i jit.data --folded --value samples -o with-map.folded
assert_share_at_least "jitted_hot_loop with the map file" 80 with-map.folded \
	"leaf:jitted_hot_loop"
rm -f "/tmp/perf-$pid.map"
expect_exit 0 "$XPROF" report -i jit.data --folded --value samples -o without-map.folded
assert_share_at_least "jitted_hot_loop without it" 80 without-map.folded "leaf:jitted_hot_loop"
assert_share_at_least "its caller is run_jitted" 80 without-map.folded \
	"tail:run_jitted;jitted_hot_loop"
finish
