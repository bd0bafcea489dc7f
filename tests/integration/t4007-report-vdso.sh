#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Frames in the [vdso] are named from the image record copied into the
# data file (the kernel's vdso is on no disk), not shown as [vdso]+0xOFF:
# tests/targets/clockloop (clock_gettime in a loop) has its leaf in the
# vdso's clock_gettime in >= 30% of the samples, and no [vdso]+0x frame
# (under 1%, in whole percent).
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XPROF" record -q -o clock.data -- "$XP_TARGETS/clockloop" 1
expect_exit 0 "$XPROF" report -i clock.data --folded --value samples -o out.folded
# The vdso's function under libc's: its weak alias clock_gettime is the name
# users call (doc/names.md); __vdso_ or __kernel_ where it has no alias.
assert_share_at_least "leaf in the vdso's clock_gettime" 30 out.folded \
	"tail:clock_gettime;(__(vdso|kernel)_)?clock_gettime"
assert_share_at_most "unnamed [vdso] frames" 0.99 out.folded 'stack:\[vdso\]\+0x'
finish
