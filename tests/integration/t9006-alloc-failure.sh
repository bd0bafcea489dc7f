#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# An allocation that fails is a clean error (lib/err.c's allocation
# wrappers): with XPROF_TEST_FAIL_ALLOC=N the Nth allocation fails as if
# memory had run out (the 1st, 2nd, 4th, ... until the command makes
# fewer), and report and record print one "xprof: error: out of memory"
# line and exit 1, never a signal; the data file being read is unchanged,
# the one being recorded is in place and readable (with the samples taken
# so far).  The variable is honoured only by builds with the failure
# hooks (-DXPROF_TEST_HOOKS=ON, as scripts/test.sh builds); elsewhere the
# test skips, saying so, since every run would succeed and prove nothing.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
has_test_hooks || skip "xprof was built without -DXPROF_TEST_HOOKS=ON: XPROF_TEST_FAIL_ALLOC is ignored"
skip_unless_ptrace

# leftovers NAME: files beside NAME other than NAME and NAME.old.
leftovers() {
	find . -maxdepth 1 -name "$1.*" ! -name "$1.old" -printf '%f '
}

expect_exit 0 "$XPROF" record -q -o keep.data -- "$XP_TARGETS/threads" 1 0.3

say "## an allocation that fails is a clean error"
# oom_runs LABEL COMMAND...: run COMMAND with its 1st, 2nd, 4th, 8th, ...
# allocation failing, until it makes fewer allocations than that and
# succeeds; every failure must be exit 1 with the one error line.
oom_runs() {
	local label=$1 n=1
	shift
	while ((n <= 1 << 20)); do
		XPROF_TEST_FAIL_ALLOC=$n check_exit "0|1" "$@"
		if [[ $(cat "$XP_STATUS") == "exit 0" ]]; then
			say "# $label: fewer than $n allocations"
			return 0
		fi
		assert_error_line "$label, allocation $n" "$XP_ERR"
		assert_file_matches "$label, allocation $n: says so" "$XP_ERR" "^xprof: error: out of memory$"
		oom_after "$n"
		n=$((n * 2))
	done
	fail "$label: still failing with allocation $n"
}

cp keep.data keep.copy
oom_after() { :; }
oom_runs report "$XPROF" report -i keep.data --folded --value samples -o oom.folded
assert_files_equal "the data file read is unchanged" keep.copy keep.data

# After each failed record: the output is in place (or was never made), readable.
oom_after() {
	assert_eq "record, allocation $1: nothing left beside the output" "$(leftovers oom.data)" ""
	if [[ -e oom.data ]]; then
		check_exit 0 "$XPROF" report -i oom.data --header-only -o oom.header
		assert_file_matches "record, allocation $1: oom.data is readable" oom.header \
			"^# samples : [0-9]+$"
		say "# record, allocation $1: oom.data: $(stat -c %s oom.data) bytes, $(grep '^# samples' oom.header)"
	else
		say "# record, allocation $1: failed before the output was made"
	fi
	rm -f oom.data oom.data.old
}
# Threads come and go: allocations all through the recording.
oom_runs record "$XPROF" record -q -o oom.data -- "$XP_TARGETS/churn" threads 0.3 2

finish
