#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A JIT that frees code and puts another function at the same addresses
# names the range twice; each sample is named after the entry valid when
# it was taken.  Target: tests/targets/jitreuse (x86-64 machine code), which
# alternates reuse_a and reuse_b on one page, 70:30 of its CPU time, and
# prints the split it measured.  Both the perf map (dated while recording)
# and a jitdump (dated by its records): each function's share of the JIT
# samples within 3 points of the truth.  Naming the whole run after the
# last entry (or the first) gives 100:0.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
[[ $(uname -m) == x86_64 ]] || skip "the jitreuse target writes x86-64 code"
skip_unless_ptrace

check() { # MODE PHASES ARGS...
	local mode=$1 phases=$2 pid line
	shift 2
	say "## $mode, $phases phases"
	expect_exit 0 "$XPROF" record -q -o "$mode.data" -- "$XP_TARGETS/jitreuse" "$mode" \
		"$phases" 2 "$@"
	cp "$XP_OUT" "$mode.out"
	pid=$(awk '/^pid /{print $2}' "$mode.out")
	rm -f "/tmp/perf-$pid.map"
	expect_exit 0 "$XPROF" report -i "$mode.data" --folded -o "$mode.folded"
	line=$(jit_reuse_split "$mode.out" "$mode.folded")
	case $line in
	ok*) say "  ok: $mode: ${line#ok }" ;;
	*) fail "$mode, $phases phases: ${line#bad } (want within 3 points)"
		show_file "$mode: folded" "$mode.folded"
		;;
	esac
}

check perfmap 6
check perfmap 10
mkdir dump
check jitdump 6 "$PWD/dump"

finish
