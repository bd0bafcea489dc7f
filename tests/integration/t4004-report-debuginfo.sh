#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Separate debuginfo.  A stripped copy of tests/targets/inlines is
# recorded; its names and inline frames come back only from its debuginfo,
# found with --debug-dir by build-id (<dir>/.build-id/xx/rest.debug) or by
# .gnu_debuglink (<dir>/<the binary's directory>/<link>): named with their
# inline frames in >= 80% of the samples, and in none (under 1%, in whole
# percent) without it.  When the binary is rebuilt (another build-id) or
# deleted after recording, the debuginfo of the recorded build-id still
# names its frames (one warning for the rebuilt file); without it they are
# module+0xOFF.  debuginfod is never asked unless DEBUGINFOD_URLS is set,
# and asked when it is (checked with strace; scripts/deps.sh installs
# strace, and libdebuginfod1, which libdw loads to ask).  What is checked
# is where the names come from, so the reports show the symbols as they
# are (--no-demangle: the same whatever demangler the build has; t4003 and
# t4008 check demangling).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# What is tested here is the lookup of debuginfo: the recorder keeps no copy
# of the binary (record/capture.h), or the report would read that copy instead
# (t4011 tests the copies).
export XPROF_CACHE_DIR=off
for tool in objcopy readelf; do
	command -v $tool >/dev/null || skip "$tool is needed (binutils)"
done
skip_unless_ptrace

named='stack:(_ZN3app6engine4stepEv|_RNvCs15kBYyAo9fc_7mycrate7example);accumulate'
tmp=$XP_TMP

# A stripped binary, its debuginfo in a build-id tree, and a debuglink copy.
mkdir -p bin dbg "dl$tmp/bin"
cp "$XP_TARGETS/inlines" bin/inlines
objcopy --only-keep-debug bin/inlines inlines.debug
objcopy --strip-all --add-gnu-debuglink=inlines.debug bin/inlines
id=$(readelf -n bin/inlines | awk '/Build ID/ { print $3 }')
[[ -n $id ]] || fail_now "no build-id in the stripped binary"
mkdir -p "dbg/.build-id/${id:0:2}"
cp inlines.debug "dbg/.build-id/${id:0:2}/${id:2}.debug"
mv inlines.debug "dl$tmp/bin/inlines.debug"

expect_exit 0 "$XPROF" record -q -o s.data -- "$tmp/bin/inlines" 1

expect_exit 0 "$XPROF" report -i s.data --no-demangle --folded --value samples -o none.folded
assert_share_at_most "stripped, no debuginfo: named" 0.99 none.folded "$named"

# debuginfod: never contacted without DEBUGINFOD_URLS.  (libdw 0.188 loads
# libdebuginfod in a constructor whatever the environment; what matters is
# that no connection is made and no cache is created.)  The same run with
# DEBUGINFOD_URLS pointing at a closed local port shows the check works: it
# asks for the stripped binary's debuginfo, so it runs while the binary is
# there (after it is deleted, only modules that happen to be sampled, such as
# the vdso, would be asked for).
if ! command -v strace >/dev/null; then
	say "# no strace: debuginfod check skipped"
else
	# LeakSanitizer cannot run under ptrace: sanitizer builds would fail here.
	asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	expect_exit 0 env -u DEBUGINFOD_URLS ASAN_OPTIONS="$asan" XDG_CACHE_HOME="$tmp/xdg" \
		HOME="$tmp/home" strace -f -qq -e trace=connect -o trace \
		"$XPROF" report -i s.data --no-demangle --folded --value samples -o trace.folded
	assert_file_lacks "no connection without DEBUGINFOD_URLS" trace 'connect\('
	assert_eq "no debuginfod cache without DEBUGINFOD_URLS" "$(ls -d xdg home 2>/dev/null || true)" ""
	expect_exit 0 env ASAN_OPTIONS="$asan" DEBUGINFOD_URLS=http://127.0.0.1:9 \
		DEBUGINFOD_CACHE_PATH="$tmp/cache" strace -f -qq -e trace=connect -o trace2 \
		"$XPROF" report -i s.data --no-demangle --folded --value samples -o trace2.folded
	# The control: with DEBUGINFOD_URLS it does connect, so the check proves
	# something (it needs libdebuginfod.so.1, which libdw loads; Debian:
	# libdebuginfod1).
	assert_file_matches "with DEBUGINFOD_URLS it asks (the control)" trace2 '127\.0\.0\.1'
fi

expect_exit 0 "$XPROF" report -i s.data --no-demangle --folded --value samples --debug-dir "$tmp/dbg" -o byid.folded
assert_share_at_least "--debug-dir with a build-id tree: named with inline frames" 80 \
	byid.folded "$named"

expect_exit 0 "$XPROF" report -i s.data --no-demangle --folded --value samples --debug-dir "$tmp/nowhere:$tmp/dl" \
	-o link.folded
assert_share_at_least "--debug-dir with a debuglink tree (colon list): named" 80 \
	link.folded "$named"
assert_file_matches "a warning for a missing --debug-dir" "$XP_ERR" \
	"cannot use debug directory '$tmp/nowhere'"

say "## rebuilt after recording: one warning, and the recorded build-id's debuginfo still names it"
cp "$XP_TARGETS/unwindme" bin/inlines
expect_exit 0 "$XPROF" report -i s.data --no-demangle --folded --value samples --debug-dir "$tmp/dbg" \
	-o changed.folded
assert_share_at_least "rebuilt binary, --debug-dir: named" 80 changed.folded "$named"
assert_eq "rebuilt binary, --debug-dir: warnings" \
	"$(grep -c "has changed since it was recorded" "$XP_ERR" || true)" 1
expect_exit 0 "$XPROF" report -i s.data --no-demangle --folded --value samples -o changed2.folded
assert_share_at_most "rebuilt binary, no debuginfo: named" 0.99 changed2.folded "$named"
assert_share_at_least "rebuilt binary, no debuginfo: inlines+0xOFF leaves" 80 changed2.folded \
	'leaf:inlines\+0x[0-9a-f]+'
assert_eq "rebuilt binary, no debuginfo: warnings" \
	"$(grep -c "its frames are shown as inlines+offset" "$XP_ERR" || true)" 1

say "## deleted after recording: the debuginfo alone is enough, quietly"
rm bin/inlines
expect_exit 0 "$XPROF" report -i s.data --no-demangle --folded --value samples --debug-dir "$tmp/dbg" -o gone.folded
assert_share_at_least "deleted binary, --debug-dir: named" 80 gone.folded "$named"
assert_file_empty "no warnings" "$XP_ERR"
finish
