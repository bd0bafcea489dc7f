#!/bin/bash
# SPDX-License-Identifier: MIT
# t4004: separate debuginfo.  A stripped copy of tests/targets/inlines is
# recorded; its names and inline frames come back only from its debuginfo,
# found with --debug-dir by build-id (<dir>/.build-id/xx/rest.debug) or by
# .gnu_debuglink (<dir>/<the binary's directory>/<link>).  When the binary
# is rebuilt (another build-id) or deleted after recording, the debuginfo of
# the recorded build-id still names its frames (one warning for the
# rebuilt file); without it they are module+0xOFF.  debuginfod is never
# asked unless DEBUGINFOD_URLS is set, and asked when it is (checked with
# strace; scripts/deps.sh installs strace, and libdebuginfod1, which libdw
# loads to ask).  What is checked is where the names come from, so the
# reports show the symbols as they are (--no-demangle: the same whatever
# demangler the build has; t4003 and t4008 check demangling).
set -eu
: "${XPROF:?set XPROF to the xprof binary}" "${XP_TARGETS:?set XP_TARGETS to build/targets}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for tool in objcopy readelf; do
	if ! command -v $tool >/dev/null; then
		echo "skip: $tool is needed (binutils)"
		exit 77
	fi
done
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
	[ -z "${2:-}" ] || cat "$2"
	exit 1
}
named='(_ZN3app6engine4stepEv|_RNvCs15kBYyAo9fc_7mycrate7example);accumulate'

# A stripped binary, its debuginfo in a build-id tree, and a debuglink copy.
mkdir -p "$tmp/bin" "$tmp/dbg" "$tmp/dl$tmp/bin"
cp "$XP_TARGETS/inlines" "$tmp/bin/inlines"
objcopy --only-keep-debug "$tmp/bin/inlines" "$tmp/inlines.debug"
objcopy --strip-all --add-gnu-debuglink="$tmp/inlines.debug" "$tmp/bin/inlines"
id=$(readelf -n "$tmp/bin/inlines" | awk '/Build ID/ { print $3 }')
test -n "$id"
mkdir -p "$tmp/dbg/.build-id/${id:0:2}"
cp "$tmp/inlines.debug" "$tmp/dbg/.build-id/${id:0:2}/${id:2}.debug"
mv "$tmp/inlines.debug" "$tmp/dl$tmp/bin/inlines.debug"

timeout 120 "$XPROF" record -q -o "$tmp/s.data" -- "$tmp/bin/inlines" 1

"$XPROF" report -i "$tmp/s.data" --no-demangle --folded -o "$tmp/none.folded" 2>"$tmp/none.err"
n=$(share "$tmp/none.folded" "$named")
echo "stripped, no debuginfo: named in $n%"
[ "$n" -eq 0 ] || fail "names without debuginfo?" "$tmp/none.folded"

# debuginfod: never contacted without DEBUGINFOD_URLS.  (libdw 0.188 loads
# libdebuginfod in a constructor whatever the environment; what matters is
# that no connection is made and no cache is created.)  The same run with
# DEBUGINFOD_URLS pointing at a closed local port shows the check works: it
# asks for the stripped binary's debuginfo, so it runs while the binary is
# there (after it is deleted, only modules that happen to be sampled, such as
# the vdso, would be asked for).
if ! command -v strace >/dev/null; then
	echo "note: no strace, debuginfod check skipped"
else
	# LeakSanitizer cannot run under ptrace: sanitizer builds would fail here.
	asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	env -u DEBUGINFOD_URLS ASAN_OPTIONS="$asan" XDG_CACHE_HOME="$tmp/xdg" HOME="$tmp/home" \
		strace -f -qq -e trace=connect -o "$tmp/trace" \
		"$XPROF" report -i "$tmp/s.data" --no-demangle --folded -o "$tmp/trace.folded" 2>/dev/null
	if grep -q 'connect(' "$tmp/trace" || [ -e "$tmp/xdg" ] || [ -e "$tmp/home" ]; then
		fail "debuginfod was asked without DEBUGINFOD_URLS" "$tmp/trace"
	fi
	ASAN_OPTIONS="$asan" DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_CACHE_PATH="$tmp/cache" \
		strace -f -qq -e trace=connect -o "$tmp/trace2" \
		"$XPROF" report -i "$tmp/s.data" --no-demangle --folded -o "$tmp/trace2.folded" 2>/dev/null
	c=$(grep -c '127.0.0.1' "$tmp/trace2" || true)
	echo "debuginfod: no connection without DEBUGINFOD_URLS; $c attempt(s) with it (control)"
	[ "$c" -gt 0 ] || fail "the control made no connection: the check proves nothing (no libdebuginfod.so.1, which libdw loads? Debian: libdebuginfod1)" "$tmp/trace2"
fi

"$XPROF" report -i "$tmp/s.data" --no-demangle --folded --debug-dir "$tmp/dbg" -o "$tmp/byid.folded"
n=$(share "$tmp/byid.folded" "$named")
echo "--debug-dir with a build-id tree: named with inline frames in $n%"
[ "$n" -ge 80 ] || fail "build-id lookup" "$tmp/byid.folded"

"$XPROF" report -i "$tmp/s.data" --no-demangle --folded --debug-dir "$tmp/nowhere:$tmp/dl" \
	-o "$tmp/link.folded" 2>"$tmp/link.err"
n=$(share "$tmp/link.folded" "$named")
echo "--debug-dir with a debuglink tree (colon list): named in $n%"
[ "$n" -ge 80 ] || fail "debuglink lookup" "$tmp/link.folded"
grep -q "cannot use debug directory '$tmp/nowhere'" "$tmp/link.err" ||
	fail "no warning for a missing --debug-dir" "$tmp/link.err"

# Rebuilt after recording: one warning, and the recorded build-id's debuginfo still names it.
cp "$XP_TARGETS/unwindme" "$tmp/bin/inlines"
"$XPROF" report -i "$tmp/s.data" --no-demangle --folded --debug-dir "$tmp/dbg" -o "$tmp/changed.folded" \
	2>"$tmp/changed.err"
n=$(share "$tmp/changed.folded" "$named")
w=$(grep -c "has changed since it was recorded" "$tmp/changed.err" || true)
echo "rebuilt binary, --debug-dir: named in $n%, $w warning(s)"
[ "$n" -ge 80 ] && [ "$w" -eq 1 ] || fail "rebuilt binary with debuginfo" "$tmp/changed.err"
"$XPROF" report -i "$tmp/s.data" --no-demangle --folded -o "$tmp/changed2.folded" 2>"$tmp/changed2.err"
n=$(share "$tmp/changed2.folded" "$named")
m=$(share "$tmp/changed2.folded" ';inlines\+0x[0-9a-f]+$')
w=$(grep -c "its frames are shown as inlines+offset" "$tmp/changed2.err" || true)
echo "rebuilt binary, no debuginfo: named in $n%, inlines+0xOFF leaves in $m%, $w warning(s)"
[ "$n" -eq 0 ] && [ "$m" -ge 80 ] && [ "$w" -eq 1 ] || fail "rebuilt binary" "$tmp/changed2.err"

# Deleted after recording: the debuginfo alone is enough, quietly.
rm "$tmp/bin/inlines"
"$XPROF" report -i "$tmp/s.data" --no-demangle --folded --debug-dir "$tmp/dbg" -o "$tmp/gone.folded" \
	2>"$tmp/gone.err"
n=$(share "$tmp/gone.folded" "$named")
echo "deleted binary, --debug-dir: named in $n%"
[ "$n" -ge 80 ] || fail "deleted binary with debuginfo" "$tmp/gone.folded"
[ ! -s "$tmp/gone.err" ] || fail "unexpected warnings" "$tmp/gone.err"

