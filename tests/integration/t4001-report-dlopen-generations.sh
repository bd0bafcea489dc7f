#!/bin/bash
# SPDX-License-Identifier: MIT
# t4001: dlopen/dlclose change what an address means.  tests/targets/plugins
# runs plugin A for ~1 s of CPU, dlcloses it, then runs plugin B (~1 s),
# which the loader usually maps at the very address A had.  Each plugin's
# entry function must get its own half of the samples (50 +- 7%): B's
# samples named as A would mean a stale mapping generation was used.
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

timeout 120 "$XPROF" record -q -o "$tmp/plugins.data" -- "$XP_TARGETS/plugins" 1 \
	>"$tmp/plugins.out"
cat "$tmp/plugins.out"
"$XPROF" report -i "$tmp/plugins.data" --folded -o "$tmp/out.folded"
a=$(share "$tmp/out.folded" '(^|;)plugin_a_entry(;|$)')
b=$(share "$tmp/out.folded" '(^|;)plugin_b_entry(;|$)')
echo "plugin_a_entry: $a% of samples, plugin_b_entry: $b%"
if [ "$a" -lt 43 ] || [ "$a" -gt 57 ] || [ "$b" -lt 43 ] || [ "$b" -gt 57 ]; then
	echo "FAIL: expected each plugin's entry in 50 +- 7% of samples"
	cat "$tmp/out.folded"
	exit 1
fi
