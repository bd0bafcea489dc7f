#!/bin/bash
# SPDX-License-Identifier: MIT
# t4002: code a JIT names in /tmp/perf-PID.map is named in the report, and
# still after the map file is gone, because record copied the entries into
# the data file.  Target: tests/targets/jit (x86-64 machine code).
# Self-contained (no tests/lib yet): env XPROF, XP_TARGETS; exit 77 to skip.
set -eu
: "${XPROF:?set XPROF to the xprof binary}" "${XP_TARGETS:?set XP_TARGETS to build/targets}"

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then rm -f "/tmp/perf-$pid.map"; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

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

# Percentage of samples (integer) whose folded stack matches the regex $2.
share() {
	awk -v re="$2" '{ n = $NF; t += n; sub(/ [0-9]+$/, ""); if ($0 ~ re) h += n }
		END { if (t) printf "%d\n", 100 * h / t; else print 0 }' "$1"
}

timeout 120 "$XPROF" record -q -o "$tmp/jit.data" -- "$XP_TARGETS/jit" perfmap 1 >"$tmp/jit.out"
pid=$(awk '/^pid /{print $2}' "$tmp/jit.out")
test -n "$pid"
test -f "/tmp/perf-$pid.map"

"$XPROF" report -i "$tmp/jit.data" --folded -o "$tmp/with-map.folded"
with=$(share "$tmp/with-map.folded" '(^|;)jitted_hot_loop$')
echo "jitted_hot_loop with the map file: $with% of samples"

rm -f "/tmp/perf-$pid.map"
"$XPROF" report -i "$tmp/jit.data" --folded -o "$tmp/without-map.folded"
without=$(share "$tmp/without-map.folded" '(^|;)jitted_hot_loop$')
echo "jitted_hot_loop without it: $without% of samples"

if [ "$with" -lt 80 ] || [ "$without" -lt 80 ]; then
	echo "FAIL: expected jitted_hot_loop as the leaf of >= 80% of samples"
	cat "$tmp/without-map.folded"
	exit 1
fi
# Its caller is the real function that called into the JIT code.
caller=$(share "$tmp/without-map.folded" ';run_jitted;jitted_hot_loop$')
echo "run_jitted;jitted_hot_loop: $caller%"
test "$caller" -ge 80
