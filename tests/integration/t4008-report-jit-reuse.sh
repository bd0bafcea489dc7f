#!/bin/bash
# SPDX-License-Identifier: MIT
# t4008: a JIT that frees code and puts another function at the same
# addresses names the range twice; each sample is named after the entry
# valid when it was taken.  Target: tests/targets/jitreuse (x86-64 machine
# code), which alternates reuse_a and reuse_b on one page, 70:30 of its CPU
# time, and prints the split it measured.  Both the perf map (dated while
# recording) and a jitdump (dated by its records): each function's share of
# the JIT samples within 3 points of the truth.  Naming the whole run after
# the last entry (or the first) gives 100:0.
set -eu
: "${XPROF:?set XPROF to the xprof binary}" "${XP_TARGETS:?set XP_TARGETS to build/targets}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" /tmp/perf-"${pid:-none}".map' EXIT

if [ "$(uname -m)" != x86_64 ]; then
	echo "skip: the jitreuse target writes x86-64 code"
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

fail=0
check() { # MODE PHASES ARGS...
	local mode=$1 phases=$2
	shift 2
	timeout 120 "$XPROF" record -q -o "$tmp/$mode.data" -- \
		"$XP_TARGETS/jitreuse" "$mode" "$phases" 2 "$@" >"$tmp/$mode.out"
	pid=$(awk '/^pid /{print $2}' "$tmp/$mode.out")
	rm -f "/tmp/perf-$pid.map"
	"$XPROF" report -i "$tmp/$mode.data" --folded -o "$tmp/$mode.folded"
	awk -v mode="$mode" -v phases="$phases" '
		/^truth / { ta = $3; tb = $5 }
		FILENAME ~ /folded$/ {
			n = $NF; sub(/ [0-9]+$/, "")
			if ($0 ~ /;reuse_a$/) a += n
			if ($0 ~ /;reuse_b$/) b += n
		}
		END {
			if (a + b == 0) { print "FAIL: " mode ": no sample named reuse_a or reuse_b"; exit 1 }
			sa = 100 * a / (a + b); sb = 100 * b / (a + b)
			printf "%s, %d phases: reuse_a %.1f%% (truth %.1f%%), reuse_b %.1f%% (truth %.1f%%), %d samples\n",
				mode, phases, sa, ta, sb, tb, a + b
			d = sa - ta; if (d < 0) d = -d
			if (d > 3) { print "FAIL: " mode ": shares more than 3 points from the truth"; exit 1 }
		}' "$tmp/$mode.out" "$tmp/$mode.folded" || { fail=1; cat "$tmp/$mode.folded"; }
}

check perfmap 6
check perfmap 10
mkdir "$tmp/dump"
check jitdump 6 "$tmp/dump"
exit $fail
