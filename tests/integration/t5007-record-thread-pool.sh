#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A pool of sleepy threads.  threads pool 100 3 (tests/targets/threads.c):
# 100 threads that each run pool_work for ~100 us, then sleep 1 ms, for
# 3 s, on a machine of few CPUs.  A thread woken from its sleep waits for a
# CPU at the exit of clock_nanosleep; stopped there, it would be sampled
# where it waits, not where its CPU time went (perf puts 90-93% of the
# samples in pool_work; interrupting such a thread put 74-93% in
# clock_nanosleep).
#   - under record it completes with exit 0 and the output of an
#     unprofiled run;
#   - >= 60% of the samples are in worker_pool;pool_work, <= 35% in
#     clock_nanosleep;
#   - at least 100 samples;
#   - with a soft limit of 256 open files (and a higher hard one), the
#     command keeps its 256 and xprof, which keeps up to four /proc files
#     per thread, raises its own: no warning with 300 threads; with a hard
#     limit of 256, one warning that says so.
# shellcheck source=tests/lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
skip_unless_ptrace

expect_exit 0 "$XP_TARGETS/threads" pool 100 0.2
cp "$XP_OUT" pool.expected
expect_exit 0 "$XPROF" record -o pool.data -- "$XP_TARGETS/threads" pool 100 3
assert_files_equal "output as without xprof" pool.expected "$XP_OUT"
show_file "summary" "$XP_ERR"
expect_exit 0 "$XPROF" report -i pool.data --folded --value samples -o pool.folded
assert_folded_format pool.folded
assert_samples_at_least "100 threads, 3 s" 100 pool.folded
assert_share_at_least "in worker_pool;pool_work" 60 pool.folded "chain:worker_pool;pool_work"
assert_share_at_most "in clock_nanosleep" 35 pool.folded "leaf:clock_nanosleep"
say "# recorder: $(recorder_stat pool.data running_checks) status reads," \
	"$(recorder_stat pool.data dropped_blocked) stops that found the thread back in its sleep"

say "## open files"
if (($(ulimit -Hn) > 4096)) || [[ $(ulimit -Hn) == unlimited ]]; then
	hard=$(ulimit -Hn)
	# shellcheck disable=SC2016 # expanded by the commands' shells, not this one
	expect_exit 0 bash -c 'ulimit -Sn 256 && exec "$@"' - "$XPROF" -v record -q -o low.data -- \
		sh -c 'ulimit -n; exec "$0" pool 300 0.3' "$XP_TARGETS/threads"
	assert_file_matches "the command keeps its limit" "$XP_OUT" "^256$"
	assert_file_matches "the recorder raised its own" "$XP_ERR" "debug: open files: up to $hard$"
	if grep -q '^xprof: warning' "$XP_ERR"; then
		fail "a warning with a soft limit of 256"
		show_file stderr "$XP_ERR"
	else
		say "  ok: no warning with a soft limit of 256"
	fi
else
	say "# skip: hard limit on open files $(ulimit -Hn), too low to test a raise"
fi
expect_exit 0 bash -c 'ulimit -n 256 && exec "$@"' - "$XPROF" record -q -o low.data -- \
	"$XP_TARGETS/threads" pool 300 0.3
warned=$(grep -c '^xprof: warning: out of open files at [0-9]* threads' "$XP_ERR" || true)
if [[ $warned == 1 ]]; then
	say "  ok: a hard limit of 256: $(grep '^xprof: warning' "$XP_ERR")"
else
	fail "a hard limit of 256: $warned warnings about open files (want 1)"
	show_file stderr "$XP_ERR"
fi

finish
