#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Golden reports of data files recorded on x86-64 and in aarch64 and
# riscv64 guests (tests/data/golden/<arch>/, made as tests/data/README.md
# says), reported on whatever this host is:
#   - report --folded --symfs <arch dir> prints exactly the recorder's own
#     report (split.folded), with nothing on stderr: the architecture comes
#     from the file, the binaries from their recorded paths under --symfs;
#   - without --symfs the recorded paths (/xt/split) do not exist here: one
#     warning naming the file, and its frames as split+offset.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

for dir in "$XP_DATA"/golden/*/; do
	dir=${dir%/}
	arch=$(basename "$dir")
	say "## $arch"
	expect_exit 0 "$XPROF" report -i "$dir/split.xprof" --folded --value samples --symfs "$dir"
	assert_files_equal "$arch: folded report = the guest's" "$dir/split.folded" "$XP_OUT"
	assert_file_empty "$arch: nothing on stderr" "$XP_ERR"

	expect_exit 0 "$XPROF" report -i "$dir/split.xprof" --folded --value samples
	assert_file_matches "$arch: without --symfs, a warning names /xt/split" "$XP_ERR" \
		"^xprof: warning: cannot open '/xt/split'"
	assert_file_matches "$arch: ... and frames are split+offset" "$XP_OUT" ';split\+0x[0-9a-f]+'
done
finish
