#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t4008: the names of a real C++ program, as g++ mangles them, come out of
# report demangled.  tests/targets/cxxnames (built when CMake found a C++
# compiler: scripts/deps.sh --test installs g++) spends its time in three
# leaves called from main -> round_of_ten(geo::Shape const&,
# calc::Sum<unsigned long>&) (a static function, mangled too):
# geo::Circle::area() const (~50%, a virtual
# call), calc::Sum<unsigned long>::add(unsigned long) (~30%, a template)
# and (anonymous namespace)::spin(int) (~20%).  The report shows them as
# c++filt does, with no mangled name in any stack and no warning;
# --no-demangle shows the symbols as they are.  xprof --version names the
# demangler the build has.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

[[ -x $XP_TARGETS/cxxnames ]] ||
	skip "no $XP_TARGETS/cxxnames: no C++ compiler when configured (Debian package: g++)"
skip_unless_ptrace

check_exit 0 "$XPROF" --version
demangler=$(sed -n 's/^demangler: *//p' "$XP_OUT")
say "# xprof --version: demangler: $demangler"
[[ $demangler == libiberty* || $demangler == libstdc++* ]] ||
	fail_now "the build has no C++ demangler: '$demangler'"

check_exit 0 "$XPROF" record -q -o cxx.data -- "$XP_TARGETS/cxxnames" 1
grep -q 'mismatches=0' "$XP_OUT" || fail "cxxnames: $(cat "$XP_OUT")"
check_exit 0 "$XPROF" report -i cxx.data --folded --value samples -o default.folded
if [[ -s $XP_ERR ]]; then
	fail "report wrote to stderr: $(head -n 3 "$XP_ERR")"
fi
check_exit 0 "$XPROF" report -i cxx.data --folded --value samples --no-demangle -o raw.folded
cp default.folded raw.folded "$XP_ARTIFACTS/" 2>/dev/null || true
show_file "report" default.folded 12

# share FILE REGEX: percentage of the samples whose stack (without the
# count) matches REGEX, which goes through the environment (awk reads
# escapes in -v values: gawk makes "\(" a group).
share() {
	RE=$2 awk '{ n = $NF; t += n; sub(/ [0-9]+$/, ""); if ($0 ~ ENVIRON["RE"]) h += n }
		END { if (t) printf "%.1f\n", 100 * h / t; else print 0 }' "$1"
}

# The three leaves' shares of the samples in any of them (the rest is the
# clock read between rounds, and start-up).
rot='round_of_ten\(geo::Shape const&, calc::Sum<unsigned long>&\)'
leaves=$(share default.folded ";main;$rot;"'(geo::|calc::|\(anonymous namespace\)::)')
assert_within "samples in the three demangled leaves" "$leaves" 70 100
of_leaves() {
	awk -v a="$1" -v b="$leaves" 'BEGIN { if (b > 0) printf "%.1f\n", 100 * a / b; else print 0 }'
}
area=$(of_leaves "$(share default.folded ";$rot;"'geo::Circle::area\(\) const$')")
add=$(of_leaves "$(share default.folded ";$rot;"'calc::Sum<unsigned long>::add\(unsigned long\)$')")
spin=$(of_leaves "$(share default.folded ";$rot;"'\(anonymous namespace\)::spin\(int\)$')")
# Each leaf named with its share of the work, 50/30/20 within 6 points
# (within 4 in runs here).  Each round ends with a system call (the clock
# read): while the sampler paused a fixed 20 us after moving to the
# thread's CPU, spin(int) came out at 29-36% in some runs.
assert_within "geo::Circle::area() const, of the three" "$area" 44 56
assert_within "calc::Sum<unsigned long>::add(unsigned long), of the three" "$add" 24 36
assert_within "(anonymous namespace)::spin(int), of the three" "$spin" 14 26
mangled=$(share default.folded '(^|;)_Z')
assert_within "stacks with a mangled name" "$mangled" 0 0

raw=$(share raw.folded ';main;_ZL12round_of_tenRKN3geo5ShapeERN4calc3SumImEE;(_ZNK3geo6Circle4areaEv|_ZN4calc3SumImE3addEm|_ZN12_GLOBAL__N_14spinEi)$')
dem=$(share raw.folded '(geo::|calc::|anonymous namespace)')
assert_within "--no-demangle: the three leaves as mangled symbols" "$raw" 70 100
assert_within "--no-demangle: demangled names" "$dem" 0 0
finish
