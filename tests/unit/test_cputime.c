/* SPDX-License-Identifier: MIT */
/*
 * The due rule and the weight of a sample (cputime.h), on made-up
 * scheduler counters: a new thread's credit, an attached thread's
 * baseline, the carry that keeps one sample per period of CPU time, the
 * bound on the carry, the drop of a sample that hardly ran, a thread that
 * stayed on its CPU since its resume (its counter lags), one that waits
 * for a CPU, one that got its CPU after a long wait, one back on its CPU
 * after it left it since its resume, one whose counters cannot tell whether
 * it runs, one found blocked or waiting, the wall-clock weight, the baseline taken
 * when sampling resumes after a pause, and the count of reads that found
 * the counters unmoved.
 */
#include "t.h"

#include "cputime.h"

#define P 1000000ull /* a 1 ms period */

/* Counters as read: on-CPU ns and times scheduled in, with no wait, or with @w ns of it. */
#define SS(cpu, n)     SSW(cpu, n, 0)
#define SSW(cpu, n, w) (&(struct procfs_sched){.cpu_ns = (cpu), .wait_ns = (w), .count = (n)})

static int test_new_thread_credit(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	/* No progress at all: never due, whatever the credit. */
	T_ASSERT(!cputime_due(&c, SS(0, 1), 5 * P, P, false, &w));
	T_ASSERT(c.init);
	T_EQ_U64(c.carry, P / 2);
	/* Any progress is due at once with half a period of credit. */
	T_ASSERT(cputime_due(&c, SS(40000, 2), 6 * P, P, false, &w));
	T_EQ_U64(w, 40000);
	return T_OK;
}

static int test_attached_baseline(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	/* Attached with 7 s of CPU time: that is the baseline, not a sample. */
	T_ASSERT(!cputime_due(&c, SS(7000 * P, 900), 0, P, true, &w));
	T_EQ_U64(c.sampled_ns, 7000 * P);
	T_ASSERT(cputime_due(&c, SS(7000 * P + P, 905), P, P, true, &w));
	T_EQ_U64(w, P);
	return T_OK;
}

static int test_carry(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 2), P, P, false, &w));
	/* The stop brought the counter to 0.3 periods more than the tick saw. */
	T_ASSERT(cputime_settle(&c, SS(P + 3 * P / 10, 3), P, P + 10000, &w));
	T_EQ_U64(w, P + 3 * P / 10);
	T_EQ_U64(c.carry, P / 2 + 3 * P / 10); /* credit + over-coverage */
	/* It over-covered: with the carry, 0.2 periods more are due already. */
	T_ASSERT(cputime_due(&c, SS(c.sampled_ns + P / 5, 5), 2 * P, P, false, &w));
	T_ASSERT(cputime_settle(&c, SS(c.sampled_ns + P / 5, 6), P, 2 * P + 10000, &w));
	T_EQ_U64(w, P / 5);
	/* Now under-covered: 0.8 + 0.2 - 1 ... the carry is exactly zero. */
	T_EQ_U64(c.carry, 0);
	T_ASSERT(!cputime_due(&c, SS(c.sampled_ns + P / 2 - 1, 8), 3 * P, P, false, &w));
	T_ASSERT(cputime_due(&c, SS(c.sampled_ns + P / 2, 8), 3 * P, P, false, &w));
	return T_OK;
}

static int test_carry_bounds(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(100 * P, 2), 100 * P, P, false, &w));
	/* 100 periods since the last sample: the carry stops at four. */
	T_ASSERT(cputime_settle(&c, SS(100 * P, 3), P, 100 * P, &w));
	T_EQ_U64(w, 100 * P);
	T_EQ_U64(c.carry, 4 * P);
	c.carry = -7 * (int64_t)P / 2;
	T_ASSERT(cputime_settle(&c, SS(100 * P + P / 7, 4), P, 101 * P, &w));
	T_ASSERT(c.carry == -4 * (int64_t)P);
	return T_OK;
}

static int test_drop_idle(void)
{
	struct cputime c = {0};
	uint64_t w = 77;

	T_ASSERT(cputime_due(&c, SS(P, 2), P, P, false, &w));
	T_ASSERT(cputime_settle(&c, SS(P, 3), P, P, &w));
	w = 77;
	/* Less than an eighth of a period since: no sample, nothing counted. */
	T_ASSERT(!cputime_settle(&c, SS(P + P / 8 - 1, 4), P, 2 * P, &w));
	T_EQ_U64(w, 77);
	T_EQ_U64(c.sampled_ns, P);
	/* The counter went backwards (a new thread at the same tid): dropped too. */
	T_ASSERT(!cputime_settle(&c, SS(P / 2, 4), P, 2 * P, &w));
	T_ASSERT(c.resume_known);
	return T_OK;
}

static int test_on_cpu_since_resume(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 5), P, P, false, &w));
	/* Its stop, read at 1.1 ms: scheduled in once more, to reach the stop. */
	T_ASSERT(cputime_settle(&c, SS(2 * P, 6), P, P + P / 10, &w));
	c.carry = 0;
	/* 0.3 ms later, scheduled in once since, the counter unmoved: it ran all along. */
	T_ASSERT(!cputime_due(&c, SS(2 * P, 7), P + 4 * P / 10, P, false, &w));
	T_ASSERT(c.on_cpu);
	/* 0.9 ms after the resume: due (half a period has run), weighing 0.9 ms. */
	T_ASSERT(cputime_due(&c, SS(2 * P, 7), 2 * P, P, false, &w));
	T_EQ_U64(w, 9 * P / 10);
	return T_OK;
}

static int test_waiting_for_cpu(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 4), P, P, false, &w));
	/* Its stop, read at 1 ms: 5 times scheduled in. */
	T_ASSERT(cputime_settle(&c, SS(2 * P, 5), P, P, &w));
	/* Ticks later, still 5 and no progress: it waits for a CPU, not due. */
	T_ASSERT(!cputime_due(&c, SS(2 * P, 5), 5 * P, P, false, &w));
	T_ASSERT(!c.on_cpu);
	/* Scheduled in once since, counter unmoved: it runs since, from the resume. */
	T_ASSERT(cputime_due(&c, SS(2 * P, 6), 5 * P, P, false, &w));
	T_EQ_U64(w, 4 * P);
	return T_OK;
}

static int test_wait_after_resume(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 4), P, P, false, &w));
	/* Its stop, read at 1 ms: 5 times scheduled in, 7 ms of run-queue wait so far. */
	T_ASSERT(cputime_settle(&c, SSW(2 * P, 5, 7 * P), P, P, &w));
	c.carry = 0;
	/* At 50 ms, scheduled in once since, after waiting 49 ms for a CPU: it has not run yet. */
	T_ASSERT(!cputime_due(&c, SSW(2 * P, 6, 56 * P), 50 * P, P, false, &w));
	T_ASSERT(c.on_cpu);
	/* 0.6 ms later, the counter still unmoved: it has run 0.6 ms, not 49.6. */
	T_ASSERT(cputime_due(&c, SSW(2 * P, 6, 56 * P), 50 * P + 6 * P / 10, P, false, &w));
	T_EQ_U64(w, 6 * P / 10);
	return T_OK;
}

static int test_back_on_cpu(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 4), P, P, false, &w));
	/* Its stop, read at 1 ms: 5 times scheduled in. */
	T_ASSERT(cputime_settle(&c, SS(2 * P, 5), P, P, &w));
	c.carry = 0;
	/* At 2 ms: in and out again since (7, counter moved): where it is now is not known. */
	T_ASSERT(!cputime_due(&c, SSW(2 * P + P / 5, 7, P / 10), 2 * P, P, false, &w));
	T_ASSERT(!c.on_cpu);
	/* At 3 ms: in once more, the counter unmoved: back on a CPU after a 0.3 ms wait. */
	T_ASSERT(cputime_due(&c, SSW(2 * P + P / 5, 8, 4 * P / 10), 3 * P, P, false, &w));
	T_ASSERT(c.on_cpu);
	T_EQ_U64(w, P / 5 + 7 * P / 10);
	/* Still there at 3.5 ms. */
	T_ASSERT(cputime_due(&c, SSW(2 * P + P / 5, 8, 4 * P / 10), 3 * P + P / 2, P, false, &w));
	T_EQ_U64(w, P / 5 + 12 * P / 10);
	/* In once more and the counter moved on: out and in again, or in and out: not known. */
	T_ASSERT(!cputime_due(&c, SSW(2 * P + 9 * P / 20, 9, P / 2), 4 * P, P, false, &w));
	T_ASSERT(!c.on_cpu);
	return T_OK;
}

static int test_running_unknown(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 4), P, P, false, &w));
	/* Its stop, read at 1 ms: 5 times scheduled in, no wait so far. */
	T_ASSERT(cputime_settle(&c, SS(2 * P, 5), P, P, &w));
	c.carry = 0;
	/* Its counters cannot tell: the caller may ask. */
	T_ASSERT(!cputime_due_if_running(&c, P, &w));
	/* At 2 ms: in, out and in again (7), 0.3 ms run, 0.2 ms waited. */
	T_ASSERT(!cputime_due(&c, SSW(2 * P + 3 * P / 10, 7, P / 5), 2 * P, P, false, &w));
	/* If it runs, it ran all the time not waited: 0.8 ms, due. */
	T_ASSERT(cputime_due_if_running(&c, P, &w));
	T_EQ_U64(w, 8 * P / 10);
	/* Found waiting: not asked again while its counters stay. */
	cputime_not_running(&c);
	T_ASSERT(!cputime_due(&c, SSW(2 * P + 3 * P / 10, 7, P / 5), 3 * P, P, false, &w));
	T_ASSERT(!cputime_due_if_running(&c, P, &w));
	/* They move, ambiguously (in, and the counter on): asked again. */
	T_ASSERT(!cputime_due(&c, SSW(2 * P + 4 * P / 10, 8, P), 4 * P, P, false, &w));
	T_ASSERT(cputime_due_if_running(&c, P, &w));
	T_EQ_U64(w, 2 * P);
	/* Too little to be due even if it ran: not asked. */
	cputime_not_running(&c);
	c.carry = -3 * (int64_t)P;
	T_ASSERT(!cputime_due(&c, SSW(2 * P + 5 * P / 10, 9, 2 * P), 4 * P, P, false, &w));
	T_ASSERT(!cputime_due_if_running(&c, P, &w));
	return T_OK;
}

static int test_not_running(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	T_ASSERT(cputime_due(&c, SS(P, 4), P, P, false, &w));
	T_ASSERT(cputime_settle(&c, SS(2 * P, 5), P, P, &w));
	c.carry = 0;
	/* It ran 0.7 ms since, by its counter: due. */
	T_ASSERT(cputime_due(&c, SS(2 * P + 7 * P / 10, 6), 3 * P, P, false, &w));
	/* The caller found it blocked or waiting: not due while its counters stay. */
	cputime_not_running(&c);
	T_ASSERT(!cputime_due(&c, SS(2 * P + 7 * P / 10, 6), 4 * P, P, false, &w));
	T_ASSERT(!cputime_due_if_running(&c, P, &w));
	/* Back on a CPU (in once more, the counter unmoved): due again, with all of it. */
	T_ASSERT(cputime_due(&c, SS(2 * P + 7 * P / 10, 7), 5 * P, P, false, &w));
	T_ASSERT(c.on_cpu);
	T_ASSERT(w >= 7 * P / 10);
	return T_OK;
}

static int test_anchor_new(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	/* Resumed from its first stop at 10 ms; scheduled in again by that resume. */
	cputime_anchor_new(&c, 10 * P);
	/* Its wait before that first stop is not known apart: nothing is taken off. */
	T_ASSERT(cputime_due(&c, SSW(0, 2, P / 10), 10 * P + P / 5, P, false, &w));
	T_EQ_U64(w, P / 5);
	return T_OK;
}

static int test_wall(void)
{
	struct cputime c = {0};

	T_EQ_U64(cputime_wall_weight(&c, 10 * P, P), P); /* first: a period */
	c.wall_sampled = 10 * P;
	T_EQ_U64(cputime_wall_weight(&c, 13 * P, P), 3 * P);
	c = (struct cputime){0};
	T_EQ_U64(cputime_wall_weight(&c, P / 2, P), P / 2); /* never before the start */
	return T_OK;
}

static int test_rebase(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	/* Launched, then paused for 2 s of CPU time: the pause is not in the next sample. */
	T_ASSERT(cputime_due(&c, SS(3 * P, 4), 3 * P, P, false, &w));
	cputime_rebase(&c, 2003 * P, 2100 * P, P);
	T_ASSERT(!cputime_due(&c, SS(2003 * P, 50), 2100 * P, P, false, &w));
	T_ASSERT(cputime_due(&c, SS(2004 * P, 52), 2101 * P, P, false, &w));
	T_EQ_U64(w, P);
	/* Wall mode: the time since the restart. */
	cputime_rebase(&c, 0, 3000 * P, P);
	T_EQ_U64(cputime_wall_weight(&c, 3000 * P + P / 3, P), P / 3);
	return T_OK;
}

static int test_unmoved_reads(void)
{
	struct cputime c = {0};
	uint64_t w = 0;

	/* Counted per tick read that finds the counters as they were, up to 3. */
	T_ASSERT(cputime_due(&c, SS(P, 2), P, P, false, &w));
	T_EQ_U64(c.unmoved_reads, 0);
	cputime_due(&c, SS(P, 2), 2 * P, P, false, &w);
	T_EQ_U64(c.unmoved_reads, 1);
	cputime_due(&c, SS(P, 2), 3 * P, P, false, &w);
	cputime_due(&c, SS(P, 2), 4 * P, P, false, &w);
	cputime_due(&c, SS(P, 2), 5 * P, P, false, &w);
	T_EQ_U64(c.unmoved_reads, 3);
	/* Either counter moving starts again. */
	cputime_due(&c, SS(P, 3), 6 * P, P, false, &w);
	T_EQ_U64(c.unmoved_reads, 0);
	cputime_rebase(&c, P, 7 * P, P);
	T_EQ_U64(c.unmoved_reads, 0);
	return T_OK;
}

T_MAIN(T_CASE(test_new_thread_credit), T_CASE(test_attached_baseline), T_CASE(test_carry),
       T_CASE(test_carry_bounds), T_CASE(test_drop_idle), T_CASE(test_on_cpu_since_resume),
       T_CASE(test_waiting_for_cpu), T_CASE(test_wait_after_resume), T_CASE(test_back_on_cpu),
       T_CASE(test_running_unknown), T_CASE(test_not_running), T_CASE(test_anchor_new),
       T_CASE(test_wall), T_CASE(test_rebase), T_CASE(test_unmoved_reads))
