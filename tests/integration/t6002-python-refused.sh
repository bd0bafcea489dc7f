#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A process that only looks like CPython (tests/targets/fakepy.c, copied
# to a file named python3-fake): as Python 3.15, a version xprof does not
# read, and as a 3.13 whose debug offsets fake the cookie and hold
# nonsense.  Each: exactly one warning line naming the process, exit 0,
# and every sample in fake_work's native frames.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace record

for t in fakepy fakepy_hostile; do
	say "## $t"
	cp "$XP_TARGETS/$t" python3-fake
	expect_exit 0 "$XPROF" record -o "$t.data" -- ./python3-fake 0.5
	cp "$XP_ERR" "$t.err"
	n=$(grep -c 'warning: pid [0-9]* (python3-fake) runs Python 3.1[35].*native frames only' "$t.err" || true)
	if [[ $n == 1 ]]; then say "ok: $t: one warning"; else
		fail "$t: $n warnings"; show_file stderr "$t.err"; fi
	expect_exit 0 "$XPROF" report -i "$t.data" --folded --value samples -o "$t.folded"
	assert_share_at_least "$t: native frames" 95 "$t.folded" "frame:fake_work"
done
assert_file_matches "the unknown version is named" fakepy.err "runs Python 3.15, whose frames"
assert_file_matches "the faked offsets are named" fakepy_hostile.err "do not fit the sizes they give"
finish
