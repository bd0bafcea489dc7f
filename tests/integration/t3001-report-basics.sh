#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# 'xprof report' on a recorded file:
#   - errors first (no recording needed): a missing input file, given with
#     -i or the default ./xprof.data, and files that are not xprof data
#     (text, empty, the magic alone cut short) exit 1 with one
#     "xprof: error:" line naming the file, and nothing on stdout;
#   - --folded prints folded stacks whose first frame is the comm; with -o
#     it writes the same text to the file and nothing to stdout;
#   - --flat exits 0, names leaf (split's hottest function, ~95% self) and
#     lists it before main (~0% self) if main is listed at all; -o as above;
#   - without -i it reads ./xprof.data;
#   - a data file cut in the middle of a record is still read up to the last
#     whole record (doc/design.md, The data file is the contract: a reader takes a cut tail): exit 0,
#     no more samples than the whole file.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

# report_error LABEL FILE ARGS...: exit 1, one error line naming FILE.
report_error() {
	local label=$1 file=$2
	shift 2
	check_exit 1 "$XPROF" report "$@"
	assert_error_line "$label" "$XP_ERR"
	assert_file_matches "$label: names the file" "$XP_ERR" "$file"
	assert_file_empty "$label: nothing on stdout" "$XP_OUT"
}

say "## bad input"
report_error "missing -i file" nope\\.data -i nope.data --folded --value samples
mkdir empty
cd empty
report_error "missing default file" xprof\\.data --folded --value samples
cd ..
printf 'hello, this is not a profile\n' >text.data
report_error "a text file" text\\.data -i text.data --folded --value samples
: >zero.data
report_error "an empty file" zero\\.data -i zero.data --flat
printf 'XPROF' >short.data
report_error "a file shorter than the header" short\\.data -i short.data --folded --value samples

say "## a recorded file"
skip_unless_ptrace
expect_exit 0 "$XPROF" record -q -- "$XP_TARGETS/split" 1

expect_exit 0 "$XPROF" report --folded --value samples
cp "$XP_OUT" default.folded
assert_folded_format default.folded
assert_share_at_least "folded: first frame is the comm" 99 default.folded comm:split
expect_exit 0 "$XPROF" report -i xprof.data --folded --value samples
assert_files_equal "-i xprof.data reads the same file" default.folded "$XP_OUT"
expect_exit 0 "$XPROF" report -i xprof.data --folded --value samples -o out.folded
assert_file_empty "folded -o: nothing on stdout" "$XP_OUT"
assert_files_equal "folded -o: the same text" default.folded out.folded

expect_exit 0 "$XPROF" report -i xprof.data --flat
cp "$XP_OUT" stdout.flat
show_file "flat profile" stdout.flat 15
# first_line NAME FILE: number of the first line naming function NAME, or "".
first_line() {
	awk -v re="(^|[^[:alnum:]_])$1([^[:alnum:]_]|\$)" '$0 ~ re { print FNR; exit }' "$2"
}
leaf_line=$(first_line leaf stdout.flat)
main_line=$(first_line main stdout.flat)
if [[ -n $leaf_line ]]; then
	say "  ok: flat: names leaf"
else
	fail "flat: leaf is not listed"
fi
if [[ -n $main_line && -n $leaf_line ]] && ((main_line < leaf_line)); then
	fail "flat: main (line $main_line) listed before leaf (line $leaf_line)"
else
	say "  ok: flat: leaf (line ${leaf_line:-none}) before main (line ${main_line:-none})"
fi
expect_exit 0 "$XPROF" report -i xprof.data --flat -o out.flat
assert_file_empty "flat -o: nothing on stdout" "$XP_OUT"
assert_files_equal "flat -o: the same text" stdout.flat out.flat

say "## a truncated file"
size=$(stat -c %s xprof.data)
# Cut well inside a record near the end: samples go out in per-thread
# batches at each flush, after the process, mappings and [vdso] image at the
# front, so a cut much earlier may hold no sample at all (exit 1, rightly).
head -c $((size * 9 / 10 + 3)) xprof.data >cut.data
expect_exit 0 "$XPROF" report -i cut.data --folded --value samples -o cut.folded
full=$(folded_total default.folded)
part=$(folded_total cut.folded)
if ((part <= full)); then
	say "  ok: truncated file: $part of $full samples"
else
	fail "truncated file: $part samples, more than the whole file's $full"
fi

finish
