#!/bin/bash
# SPDX-License-Identifier: MIT
# t4007: frames in the [vdso] are named from the image record copied into
# the data file (the kernel's vdso is on no disk), not shown as
# [vdso]+0xOFF.  Target: tests/targets/clockloop (clock_gettime in a loop).
set -eu
: "${XPROF:?set XPROF to the xprof binary}" "${XP_TARGETS:?set XP_TARGETS to build/targets}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

timeout 120 "$XPROF" record -q -o "$tmp/clock.data" -- "$XP_TARGETS/clockloop" 1
"$XPROF" report -i "$tmp/clock.data" --folded -o "$tmp/out.folded"
named=$(share "$tmp/out.folded" ';__(vdso|kernel)_clock_gettime$')
raw=$(share "$tmp/out.folded" '\[vdso\]\+0x')
echo "leaf in the vdso's clock_gettime: $named% of samples; unnamed [vdso] frames: $raw%"
if [ "$named" -lt 30 ] || [ "$raw" -gt 0 ]; then
	echo "FAIL: expected >= 30% named vdso leaves and no [vdso]+0x frame"
	cat "$tmp/out.folded"
	exit 1
fi
