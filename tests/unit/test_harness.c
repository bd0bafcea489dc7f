/* SPDX-License-Identifier: MIT */
/*
 * The unit-test harness checks itself (as t0000 does for tests/lib/lib.sh),
 * because every unit test's verdict rests on t_run's exit status: a failed
 * case makes it 1 whatever else passed, a binary whose every case skipped
 * is 77 (ctest's SKIP_RETURN_CODE, reported as skipped, never as passed),
 * and one passed case among skips is 0.  The inner runs print their own
 * case lines and summary, each after a "harness:" line; the verdicts on
 * them are this binary's own case lines.
 */
#include "t.h"

static int case_ok(void)
{
	return T_OK;
}

static int case_skip(void)
{
	return T_SKIP;
}

static int case_fail(void)
{
	return T_FAIL;
}

static int run_quietly(const struct t_case *cases, size_t n)
{
	int r;

	printf("harness: inner run of %zu case(s):\n", n);
	r = t_run(cases, n);
	fflush(stdout);
	return r;
}

static int test_all_skipped_is_skipped(void)
{
	static const struct t_case c[] = {T_CASE(case_skip), T_CASE(case_skip)};

	T_EQ_U64(run_quietly(c, 2), T_SKIP);
	return T_OK;
}

static int test_one_pass_among_skips_passes(void)
{
	static const struct t_case c[] = {T_CASE(case_skip), T_CASE(case_ok), T_CASE(case_skip)};

	T_EQ_U64(run_quietly(c, 3), 0);
	return T_OK;
}

static int test_a_failure_fails(void)
{
	static const struct t_case c[] = {T_CASE(case_ok), T_CASE(case_fail), T_CASE(case_skip)};
	static const struct t_case f[] = {T_CASE(case_skip), T_CASE(case_fail)};

	T_EQ_U64(run_quietly(c, 3), 1);
	T_EQ_U64(run_quietly(f, 2), 1);
	return T_OK;
}

static int test_nothing_run_is_skipped(void)
{
	T_EQ_U64(run_quietly(NULL, 0), T_SKIP);
	return T_OK;
}

T_MAIN(T_CASE(test_all_skipped_is_skipped), T_CASE(test_one_pass_among_skips_passes),
       T_CASE(test_a_failure_fails), T_CASE(test_nothing_run_is_skipped))
