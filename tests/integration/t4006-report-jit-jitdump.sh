#!/bin/bash
# SPDX-License-Identifier: MIT
# t4006: code described by a jitdump (jit-PID.dump, mmapped executable by the
# JIT as perf's agents do, so record finds it in /proc/PID/maps) is named in
# the report, with no file left behind: record copied what it needed.
# Target: tests/targets/jit (x86-64 machine code).
set -eu
: "${XPROF:?set XPROF to the xprof binary}" "${XP_TARGETS:?set XP_TARGETS to build/targets}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$(uname -m)" != x86_64 ]; then
	echo "skip: the jit target writes x86-64 code"
	exit 77
fi
if ! "$XPROF" record -q -o "$tmp/probe.data" -- true >"$tmp/probe.out" 2>&1; then
	if grep -qi 'not permitted' "$tmp/probe.out"; then
		echo "skip: ptrace is not permitted here"
		exit 77
	fi
	cat "$tmp/probe.out"
	exit 1
fi

share() {
	awk -v re="$2" '{ n = $NF; t += n; sub(/ [0-9]+$/, ""); if ($0 ~ re) h += n }
		END { if (t) printf "%d\n", 100 * h / t; else print 0 }' "$1"
}

mkdir "$tmp/dump"
timeout 120 "$XPROF" record -q -o "$tmp/jit.data" -- "$XP_TARGETS/jit" jitdump 1 "$tmp/dump" \
	>"$tmp/jit.out"
pid=$(awk '/^pid /{print $2}' "$tmp/jit.out")
test -f "$tmp/dump/jit-$pid.dump"
rm -rf "$tmp/dump"

"$XPROF" report -i "$tmp/jit.data" --folded -o "$tmp/out.folded"
got=$(share "$tmp/out.folded" ';run_jitted;jitted_dump_loop$')
echo "run_jitted;jitted_dump_loop: $got% of samples"
if [ "$got" -lt 80 ]; then
	echo "FAIL: expected >= 80%"
	cat "$tmp/out.folded"
	exit 1
fi
