#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What 'xprof record' says, and where it writes (doc/design.md, Output and
# messages: stdout is for primary output only, progress and summary go to
# stderr):
#   - after a run, stderr mentions the number of samples, a rate (Hz or /s)
#     and the data file's name; stdout is exactly the command's output;
#   - -q (record's own, and the global one before the command name)
#     silences everything but warnings: no other line on stderr;
#   - -o FILE and --output=FILE write there (a file starting with the
#     XPROFDAT magic, data/datafile.h) and not to ./xprof.data; without -o
#     the file is ./xprof.data;
#   - the data file keeps the summary's figures: 'report --header-only'
#     gives the command and the statistics, with the same number of
#     samples as the summary line, the stop and held percentiles, and (as
#     root) that idle CPUs were kept polling at real-time priority 1, or
#     with --no-poll-idle -r 0 that they were not.
# shellcheck source=tests/lib/lib.sh
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
summary_err=$PWD/summary.err
cp "$XP_ERR" "$summary_err"
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

say "## the statistics in the data file"
samples=$(sed -nE 's/^xprof: ([0-9]+) samples in .*/\1/p' "$summary_err")
expect_exit 0 "$XPROF" report -i summary.data --header-only -o header.txt
show_file "report --header-only" header.txt
assert_file_matches "header: the command" header.txt "^# cmdline : .*split 0\.5$"
assert_file_matches "header: samples as in the summary ($samples)" header.txt "^# stat samples : $samples$"
for s in ticks late_ticks failed stop_p50_ns stop_p99_ns held_p50_ns held_p99_ns poll_idle rt_priority; do
	assert_file_matches "header: $s" header.txt "^# stat $s : [0-9]+$"
done
if (($(id -u) == 0)); then
	assert_file_matches "header: idle CPUs kept polling (root)" header.txt "^# stat poll_idle : 1$"
	assert_file_matches "header: real-time priority 1 (root)" header.txt "^# stat rt_priority : 1$"
fi
expect_exit 0 "$XPROF" record -q --no-poll-idle -r 0 -o plain.data -- "$T/split" 0.2
expect_exit 0 "$XPROF" report -i plain.data --header-only
assert_file_matches "--no-poll-idle: not polling" "$XP_OUT" "^# stat poll_idle : 0$"
assert_file_matches "-r 0: normal priority" "$XP_OUT" "^# stat rt_priority : 0$"

say "## the default file"
mkdir default
cd default
expect_exit 0 "$XPROF" record -q -- "$T/split" 0.5
assert_magic "default ./xprof.data" xprof.data
cd ..

finish
