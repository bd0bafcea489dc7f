#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What 'xprof record' says, and where it writes (STYLE.md 2.4: stdout is for
# primary output only, progress and summary go to stderr):
#   - after a run, stderr mentions the number of samples, a rate (Hz or /s)
#     and the data file's name; stdout is exactly the command's output;
#   - -q (record's own, and the global one before the command name)
#     silences everything but warnings: no other line on stderr;
#   - -o FILE and --output=FILE write there (a file starting with the
#     XPROFDAT magic, src/datafile.h) and not to ./xprof.data; without -o
#     the file is ./xprof.data.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

T=$XP_TARGETS
expect_exit 0 "$T/split" 0.5
cp "$XP_OUT" split.expected

# assert_magic LABEL FILE: FILE is an xprof data file.
assert_magic() {
	local magic
	magic=$(head -c 8 "$2" 2>/dev/null || true)
	assert_eq "$1: XPROFDAT magic" "$magic" XPROFDAT
}

# assert_quiet LABEL FILE: FILE (a stderr) has no line but warnings.
assert_quiet() {
	grep -v '^xprof: warning: ' "$2" >"$2.filtered" || true
	assert_file_empty "$1: nothing on stderr but warnings" "$2.filtered"
}

say "## the summary"
expect_exit 0 "$XPROF" record -o summary.data -- "$T/split" 0.5
assert_files_equal "stdout is the command's output only" split.expected "$XP_OUT"
show_file "summary (stderr)" "$XP_ERR"
assert_file_matches "summary: number of samples" "$XP_ERR" '[0-9]+.*samples|samples.*[0-9]+'
assert_file_matches "summary: rate" "$XP_ERR" \
	'[0-9]+(\.[0-9]+)? ?(k?Hz|(samples)?/s|samples per second)'
assert_file_matches "summary: the file" "$XP_ERR" 'summary\.data'
assert_magic "summary.data" summary.data

say "## -q"
expect_exit 0 "$XPROF" record -q -o quiet.data -- "$T/split" 0.5
assert_quiet "record -q" "$XP_ERR"
assert_files_equal "record -q: stdout is the command's" split.expected "$XP_OUT"
assert_magic "quiet.data" quiet.data
expect_exit 0 "$XPROF" -q record -o quiet2.data -- "$T/split" 0.5
assert_quiet "xprof -q record" "$XP_ERR"
assert_magic "quiet2.data" quiet2.data

say "## -o"
mkdir out
expect_exit 0 "$XPROF" record -q -o out/short.data -- "$T/split" 0.5
assert_magic "-o out/short.data" out/short.data
expect_exit 0 "$XPROF" record -q --output=out/long.data -- "$T/split" 0.5
assert_magic "--output=out/long.data" out/long.data
if [[ -e xprof.data ]]; then
	fail "-o: an xprof.data was written as well"
else
	say "  ok: -o: no xprof.data in the working directory"
fi

say "## the default file"
mkdir default
cd default
expect_exit 0 "$XPROF" record -q -- "$T/split" 0.5
assert_magic "default ./xprof.data" xprof.data
cd ..

finish
