#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A data file reports the same when the recorded files are gone, because
# the recorder kept a copy of each file holding a sampled address in its
# build-id cache (record/capture.h; $XPROF_CACHE_DIR, set by lib.sh):
#   - record a copy of split-nofp (no frame pointers) and of inlines
#     (inline frames, C++ and Rust names); report --folded; delete the
#     copies; report again: the same bytes, and report -v says the symbols
#     came from the recorder's copy;
#   - a binary deleted and replaced (another program at the same path)
#     while it is being profiled, before xprof first opens it (attach after
#     the swap: the mapping is "app (deleted)") and after (record, swapped
#     mid-run): stacks and names are the recorded program's, with split's
#     shares (a, b, c: 50/30/20 within 4 points) and main in >= 99%;
#   - with the capture off (XPROF_CACHE_DIR=off) the summary says so and
#     nothing is written.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/ns.sh
. "$XP_LIB/ns.sh" # ns_assert_split
skip_unless_ptrace attach

T=$XP_TARGETS

for prog in split-nofp inlines; do
	say "## $prog: report, delete, report"
	cp "$T/$prog" "./$prog"
	expect_exit 0 "$XPROF" record -o "$prog.data" -- "./$prog" 2
	assert_file_matches "$prog: the summary says what was kept" "$XP_ERR" \
		'kept [1-9][0-9]* new of [1-9][0-9]* sampled files'
	expect_exit 0 "$XPROF" report -i "$prog.data" --folded --value samples -o "$prog.before"
	rm "./$prog"
	expect_exit 0 "$XPROF" -v report -i "$prog.data" --folded --value samples -o "$prog.after"
	assert_file_matches "$prog: report -v names the copy" "$XP_ERR" \
		"symbols of '$XP_TMP/$prog': the recorder's copy '$XPROF_CACHE_DIR/buildid/"
	assert_files_equal "$prog: the same report without the file" "$prog.before" "$prog.after"
done
assert_share_at_least "inlines: inline frames kept" 80 inlines.after \
	'frame:app::engine::step\(\)|mycrate::example'


say "## replaced before xprof opens it: attach to 'app (deleted)'"
ready_init
cp "$T/split-nofp" app
start_bg app ./app 5
wait_ready 1
rm app
cp "$T/chain" app
expect_exit 0 "$XPROF" attach -p "$XP_READY_PID" -d 3s -o replaced.data
wait_bg app 0
rm app
expect_exit 0 "$XPROF" report -i replaced.data --folded --value samples -o replaced.folded
ns_assert_split "replaced, then attached" replaced.folded

say "## replaced while recorded"
cp "$T/split-nofp" app
start_bg rec "$XPROF" record -o midrun.data -- ./app 4
wait_ready 1
rm app
cp "$T/chain" app
wait_bg rec 0
expect_exit 0 "$XPROF" report -i midrun.data --folded --value samples -o midrun.folded
ns_assert_split "replaced mid-run" midrun.folded

say "## the capture turned off"
rm -rf "$XPROF_CACHE_DIR"
XPROF_CACHE_DIR=off expect_exit 0 "$XPROF" record -o off.data -- "$T/split-nofp" 0.2
assert_file_matches "the summary says nothing was kept" "$XP_ERR" 'sampled files not kept'
if [[ -e $XPROF_CACHE_DIR ]]; then
	fail "the cache was written with XPROF_CACHE_DIR=off"
fi
finish
