#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# dlopen/dlclose change what an address means.  tests/targets/plugins
# runs plugin A for ~1 s of CPU, dlcloses it, then runs plugin B (~1 s),
# which the loader maps at the very address A had: the target says whether
# it did, and the test fails if not (with B elsewhere, naming its samples
# proves nothing about generations).  Each plugin's entry function must
# get its own half of the samples (50 +- 7%): B's samples named as A would
# mean a stale mapping generation was used.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XPROF" record -q -o plugins.data -- "$XP_TARGETS/plugins" 1
show_file "plugins' output" "$XP_OUT"
assert_file_matches "plugin B was loaded at plugin A's address" "$XP_OUT" '^same address: yes$'
expect_exit 0 "$XPROF" report -i plugins.data --folded --value samples -o out.folded
# Whole percent, as this test always counted: 57.9% is 57.
assert_share_between "plugin_a_entry" 43 57.99 out.folded "frame:plugin_a_entry"
assert_share_between "plugin_b_entry" 43 57.99 out.folded "frame:plugin_b_entry"
finish
