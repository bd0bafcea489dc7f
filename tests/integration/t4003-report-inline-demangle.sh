#!/bin/bash
# SPDX-License-Identifier: MIT
# t4003: inline frames and demangled names on a real binary.
# tests/targets/inlines spends its time in accumulate() -> mix(), both
# always_inline, called from functions whose symbols are a C++ name
# (app::engine::step(), ~60% of the CPU time) and a Rust v0 name
# (mycrate::example, ~40%).  By default the inlined functions appear as
# frames under their caller; --no-inline folds them; --no-demangle shows
# the symbols as they are.
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
fail() {
	echo "FAIL: $1"
	cat "$2"
	exit 1
}

timeout 120 "$XPROF" record -q -o "$tmp/in.data" -- "$XP_TARGETS/inlines" 1
"$XPROF" report -i "$tmp/in.data" --folded -o "$tmp/default.folded"
"$XPROF" report -i "$tmp/in.data" --folded --no-inline -o "$tmp/no-inline.folded"
"$XPROF" report -i "$tmp/in.data" --folded --no-demangle -o "$tmp/raw.folded"

step=$(share "$tmp/default.folded" ';app::engine::step\(\);accumulate(;mix)?$')
rust=$(share "$tmp/default.folded" ';mycrate::example;accumulate(;mix)?$')
mix=$(share "$tmp/default.folded" ';accumulate;mix$')
echo "default: app::engine::step();accumulate[;mix] $step%, mycrate::example;accumulate[;mix] $rust%, ...;accumulate;mix $mix%"
[ $((step + rust)) -ge 80 ] || fail "expected >= 80% of samples in the inlined code" "$tmp/default.folded"
[ "$step" -ge 40 ] && [ "$rust" -ge 25 ] || fail "expected about 60% / 40%" "$tmp/default.folded"
[ "$mix" -ge 20 ] || fail "expected the twice-inlined mix() in >= 20% of samples" "$tmp/default.folded"

folded=$(share "$tmp/no-inline.folded" ';(app::engine::step\(\)|mycrate::example)$')
inl=$(share "$tmp/no-inline.folded" '(accumulate|mix)')
echo "--no-inline: the outer functions are the leaves in $folded%, inlined names in $inl%"
[ "$folded" -ge 80 ] && [ "$inl" -eq 0 ] || fail "--no-inline did not fold" "$tmp/no-inline.folded"

raw=$(share "$tmp/raw.folded" ';(_ZN3app6engine4stepEv|_RNvCs15kBYyAo9fc_7mycrate7example);')
dem=$(share "$tmp/raw.folded" '(app::engine|mycrate::)')
echo "--no-demangle: mangled names in $raw%, demangled in $dem%"
[ "$raw" -ge 80 ] && [ "$dem" -eq 0 ] || fail "--no-demangle did not keep the names" "$tmp/raw.folded"
