/* SPDX-License-Identifier: MIT */
/* The due rule and the weight of a sample (see cputime.h). */
#include "cputime.h"

uint64_t cputime_wall_weight(struct cputime *c, uint64_t now, uint64_t period)
{
	if (!c->init) {
		c->init = true;
		c->wall_sampled = now > period ? now - period : 0;
	}
	return now - c->wall_sampled;
}

/*
 * The counter (sum_exec_runtime) moves only when the thread is switched
 * out and at the kernel's tick (4 ms here), so it lags a thread that runs:
 * one on a CPU since our last resume shows no progress at all (at 999 Hz
 * such ticks were skipped and 9% of the samples lost).  A counter that has
 * not moved since that resume, with the thread scheduled in exactly once
 * since, means it has run since: its progress is the time since the
 * resume, less the time it waited for a CPU after it (which the kernel
 * adds to its wait when it gets one: 64 threads on 2 CPUs wait ~50 ms
 * after each resume, and were taken to have run all that time).
 * Scheduled in never since: it waits for a CPU, and is not due.
 * Once the counter has moved, it is the progress; it may lag (by a kernel
 * tick at most: the tick brings a running thread's counter up to date),
 * the carry makes up for it at the next sample.  (Counting any progress
 * after two periods without a sample, as a guard against stale counters,
 * sampled 64 threads on 2 CPUs four times per period of their CPU time.)
 */
static uint64_t cputime_progress(struct cputime *c, const struct procfs_sched *ss, uint64_t now,
				 uint64_t period)
{
	uint64_t cpu_ns = ss->cpu_ns, count = ss->count;
	uint64_t progress = cpu_ns > c->sampled_ns ? cpu_ns - c->sampled_ns : 0;
	uint64_t expect = c->resume_count + 1;
	uint64_t moved = cpu_ns > c->resume_cpu_ns ? cpu_ns - c->resume_cpu_ns : 0;

	uint64_t ran;

	c->on_cpu = c->resume_known && count == expect && !moved;
	if (!c->resume_known)
		return progress;
	ran = c->resume_cpu_ns > c->sampled_ns ? c->resume_cpu_ns - c->sampled_ns : 0;
	ran += now - c->resume_time;
	if (c->resume_wait_ns != CPUTIME_UNKNOWN && ss->wait_ns > c->resume_wait_ns) {
		uint64_t waited = ss->wait_ns - c->resume_wait_ns;

		ran = ran > waited ? ran - waited : 0;
	}
	if (ran <= progress)
		return progress;
	if (count == expect || (count == expect + 1 && moved < period / 8))
		return ran;
	/*
	 * In and out since: whether it runs now (the time not in its counters
	 * is its run since it last got a CPU) or waits (that time is its wait,
	 * added only when it gets a CPU) is not known here
	 * (cputime_due_if_running).  Not scheduled in since the resume, it
	 * waits.  (One found not running is not here: cputime_due.)
	 */
	if (count != c->resume_count)
		c->if_running = ran;
	return progress;
}

/*
 * The anchor of cputime_progress, moved to where it got its CPU back: it
 * was scheduled in exactly once since the last read and its counter has
 * not moved since, so it has not left that CPU (leaving brings the counter
 * up to date).  It got it after the run-queue wait that grew meanwhile,
 * and no later than that wait after the last read: it runs from there.
 * Without this, the anchor was the last resume only, and a thread
 * preempted once after it was taken to wait until its next stop or the
 * kernel's tick: threads4 at 3999 Hz, a thread ran up to 2.7 ms between
 * two samples, unseen, and the samples made 83% of the rate (92% with
 * this; threads64 79%, now 93%).  The resume itself is the better anchor
 * while it holds (the wait since the resume is known exactly then).
 */
static void cputime_note_read(struct cputime *c, const struct procfs_sched *ss, uint64_t now)
{
	bool resume_holds = c->resume_known && ss->count == c->resume_count + 1;

	if (c->last_known && !resume_holds && ss->count == c->last_count + 1 &&
	    ss->cpu_ns == c->last_cpu_ns) {
		uint64_t waited = ss->wait_ns > c->last_wait_ns ? ss->wait_ns - c->last_wait_ns : 0;
		uint64_t at = c->last_time + waited;

		c->resume_known = true;
		c->resume_count = ss->count - 1;
		c->resume_cpu_ns = ss->cpu_ns;
		c->resume_wait_ns = ss->wait_ns;
		c->resume_time = at < now ? at : now;
	}
	if (!c->last_known || ss->count != c->last_count || ss->cpu_ns != c->last_cpu_ns) {
		c->off_cpu = false;
		c->unmoved_reads = 0;
	} else if (c->unmoved_reads < 3) {
		c->unmoved_reads++;
	}
	c->last_known = true;
	c->last_time = now;
	c->last_count = ss->count;
	c->last_cpu_ns = ss->cpu_ns;
	c->last_wait_ns = ss->wait_ns;
}

/*
 * Due when the CPU time since its last sample, with what earlier samples
 * over- or under-covered (the carry), makes half a period: about one
 * sample per period of CPU time, as perf's cpu-clock gives, although ticks
 * come per period of wall time (a thread stopped for part of each period
 * was sampled 2% too often per CPU-second).
 */
bool cputime_due(struct cputime *c, const struct procfs_sched *ss, uint64_t now, uint64_t period,
		 bool attached, uint64_t *weight)
{
	uint64_t progress;

	c->on_cpu = false;
	c->if_running = 0;
	if (!c->init) {
		/*
		 * Launched threads start from zero; attached ones from now.  A new
		 * thread starts with half a period to its credit, so that any
		 * progress makes it due: threads that live for less CPU time than
		 * a period (a pool that runs a task per thread) are sampled once
		 * each, not never (37,000 threads of ~40 us each gave 7 samples).
		 */
		c->init = true;
		c->carry = (int64_t)period / 2;
		if (attached) {
			c->sampled_ns = ss->cpu_ns;
			return false;
		}
	}
	cputime_note_read(c, ss, now);
	if (c->off_cpu)
		return false;
	progress = cputime_progress(c, ss, now, period);
	if (!progress)
		return false;
	if ((int64_t)progress + c->carry < (int64_t)period / 2)
		return false;
	*weight = progress;
	return true;
}

bool cputime_due_if_running(struct cputime *c, uint64_t period, uint64_t *weight)
{
	if (!c->if_running || (int64_t)c->if_running + c->carry < (int64_t)period / 2)
		return false;
	*weight = c->if_running;
	return true;
}

void cputime_not_running(struct cputime *c)
{
	c->off_cpu = true;
}

static void cputime_note_resume(struct cputime *c, const struct procfs_sched *ss, uint64_t t)
{
	c->resume_known = true;
	c->resume_count = ss->count;
	c->resume_cpu_ns = ss->cpu_ns;
	c->resume_wait_ns = ss->wait_ns;
	c->resume_time = t;
	c->off_cpu = false;
	c->last_known = ss->wait_ns != CPUTIME_UNKNOWN;
	c->last_time = t;
	c->last_count = ss->count;
	c->last_cpu_ns = ss->cpu_ns;
	c->last_wait_ns = ss->wait_ns;
}

/*
 * The stop switched the thread out, which brings the counter up to date:
 * the CPU time since its last sample is exact now and replaces the tick's
 * estimate.  The count read in the stop is the stop's own, so the next
 * ticks know whether it has been scheduled in since the resume, and
 * stayed.  A thread that ran less than an eighth of a
 * period since its last sample (it waited for a CPU nearly all along)
 * gives no sample, and that time counts toward its next: a sample stands
 * for about a period of CPU time, and one for a few microseconds would
 * count as much in a report that counts samples (100 forked children,
 * stopped as soon as they first ran, put a third of the samples in
 * arch_fork).  The carry is bounded to four periods either way: a long run
 * since the last sample is few samples.
 */
bool cputime_settle(struct cputime *c, const struct procfs_sched *ss, uint64_t period, uint64_t t,
		    uint64_t *weight)
{
	int64_t lim = 4 * (int64_t)period;
	uint64_t cpu_ns = ss->cpu_ns;

	if (cpu_ns <= c->sampled_ns || cpu_ns - c->sampled_ns < period / 8) {
		cputime_note_resume(c, ss, t);
		return false;
	}
	*weight = cpu_ns - c->sampled_ns;
	c->sampled_ns = cpu_ns;
	c->carry += (int64_t)*weight - (int64_t)period;
	if (c->carry > lim)
		c->carry = lim;
	if (c->carry < -lim)
		c->carry = -lim;
	cputime_note_resume(c, ss, t);
	return true;
}

/*
 * It runs from that stop on, and shows no progress until the kernel's tick
 * or a switch (threads living less than a tick were never sampled).  Its
 * counts are not read: it has been scheduled in once, to reach the stop,
 * and used next to no CPU time (a target starting 15,000 threads a second
 * left the controller too little time for its ticks).
 */
void cputime_anchor_new(struct cputime *c, uint64_t t)
{
	cputime_note_resume(c, &(struct procfs_sched){.count = 1, .wait_ns = CPUTIME_UNKNOWN}, t);
}

/* As an attached thread's first tick (cputime_due), and for wall mode a sample at @now. */
void cputime_rebase(struct cputime *c, uint64_t cpu_ns, uint64_t now, uint64_t period)
{
	*c = (struct cputime){
	    .init = true,
	    .sampled_ns = cpu_ns,
	    .wall_sampled = now,
	    .carry = (int64_t)period / 2,
	};
}
