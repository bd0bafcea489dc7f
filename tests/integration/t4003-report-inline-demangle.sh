#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Inline frames and demangled names on a real binary.
# tests/targets/inlines spends its time in accumulate() -> mix(), both
# always_inline, called from functions whose symbols are a C++ name
# (app::engine::step(), ~60% of the CPU time) and a Rust v0 name
# (mycrate::example, ~40%).  By default the inlined functions appear as
# frames under their caller (>= 80% in the inlined code, step >= 40%,
# example >= 25%, the twice-inlined mix() >= 20%); --no-inline folds them
# (the outer functions are the leaves in >= 80%, inlined names in none);
# --no-demangle shows the symbols as they are (mangled names in >= 80%,
# demangled ones in none).  "None" is under 1%, in whole percent.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XPROF" record -q -o in.data -- "$XP_TARGETS/inlines" 1
expect_exit 0 "$XPROF" report -i in.data --folded --value samples -o default.folded
expect_exit 0 "$XPROF" report -i in.data --folded --value samples --no-inline -o no-inline.folded
expect_exit 0 "$XPROF" report -i in.data --folded --value samples --no-demangle -o raw.folded

say "## default"
assert_share_at_least "in the inlined code" 80 default.folded \
	'stack:;(app::engine::step\(\)|mycrate::example);accumulate(;mix)?$'
assert_share_at_least "app::engine::step();accumulate[;mix]" 40 default.folded \
	'stack:;app::engine::step\(\);accumulate(;mix)?$'
assert_share_at_least "mycrate::example;accumulate[;mix]" 25 default.folded \
	'stack:;mycrate::example;accumulate(;mix)?$'
assert_share_at_least "the twice-inlined mix()" 20 default.folded "tail:accumulate;mix"

say "## --no-inline"
assert_share_at_least "the outer functions are the leaves" 80 no-inline.folded \
	'leaf:app::engine::step\(\)|mycrate::example'
assert_share_at_most "inlined names" 0.99 no-inline.folded 'stack:(accumulate|mix)'

say "## --no-demangle"
assert_share_at_least "mangled names" 80 raw.folded \
	'stack:;(_ZN3app6engine4stepEv|_RNvCs15kBYyAo9fc_7mycrate7example);'
assert_share_at_most "demangled names" 0.99 raw.folded 'stack:(app::engine|mycrate::)'
finish
