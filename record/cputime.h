/* SPDX-License-Identifier: MIT */
/*
 * CPU-time accounting of one sampled thread: whether a tick finds it due
 * for a sample, and what the sample weighs, from its scheduler counters
 * (procfs_schedstat: on-CPU ns, run-queue wait ns, times scheduled in) as
 * read by the caller.
 * Pure (no I/O), unit-tested in tests/unit/test_cputime.c.  Times are ns
 * since the start of the recording; @period is the sampling period.
 */
#ifndef XPROF_RECORD_CPUTIME_H
#define XPROF_RECORD_CPUTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "procfs.h"

struct cputime {
	bool init;		 /* the fields below hold a baseline */
	bool on_cpu;		 /* the last tick found it never switched out since its resume */
	bool resume_known;	 /* the resume_ fields describe its last resume from a stop */
	uint64_t sampled_ns;	 /* on-CPU time at the last sample (read in its stop) */
	uint64_t wall_sampled;	 /* time of the last sample (wall mode) */
	uint64_t resume_count;	 /* times scheduled in, read in that stop: back on a CPU when it grows */
	uint64_t resume_cpu_ns;	 /* its on-CPU time then */
	uint64_t resume_time;	 /* when it was resumed */
	uint64_t resume_wait_ns; /* its run-queue wait then, CPUTIME_UNKNOWN: not read */
	int64_t carry;		 /* CPU time its samples over- or under-covered so far */
	bool last_known;	 /* the last_ fields hold the counters of the last read */
	uint64_t last_time;	 /* when they were read (a tick, or the resume after a stop) */
	uint64_t last_count;
	uint64_t last_cpu_ns;
	uint64_t last_wait_ns;
	bool off_cpu;	     /* found not running (cputime_not_running), counters unmoved since */
	uint8_t unmoved_reads; /* tick reads in a row that found the counters unmoved (up to 3) */
	uint64_t if_running; /* its progress if it runs now (cputime_due_if_running), 0: none */
};

#define CPUTIME_UNKNOWN UINT64_MAX

/* Wall mode: the weight of a sample at @now, the time since its last (a period for the first). */
uint64_t cputime_wall_weight(struct cputime *c, uint64_t now, uint64_t period);

/*
 * CPU mode, at a tick at @now with the counters @ss just read: whether a
 * sample is due, and its provisional @weight.  A thread
 * first seen by an attach (@attached) is not due at its first tick: its
 * counters become the baseline.
 */
bool cputime_due(struct cputime *c, const struct procfs_sched *ss, uint64_t now, uint64_t period,
		 bool attached, uint64_t *weight);

/*
 * After cputime_due said no: whether it would be due if it were running
 * now, with that @weight.  Only when its counters cannot tell: it left its
 * CPU and got one again since its resume, and moved since they last
 * could (the caller can tell, at a cost: procfs_syscall, procfs_switches).
 * A thread the caller found not running, blocked or waiting for a CPU
 * (cputime_not_running), is neither due nor asked about again until its
 * counters move: it cannot run again without getting a CPU, which they
 * show.
 */
bool cputime_due_if_running(struct cputime *c, uint64_t period, uint64_t *weight);
void cputime_not_running(struct cputime *c);

/*
 * CPU mode, as the thread is resumed at @t from the stop of a sample, with
 * the counters read in that stop: false when the sample is to be dropped
 * (it ran less than an eighth of a period since its last), else true with
 * its exact @weight, the carry updated.
 */
bool cputime_settle(struct cputime *c, const struct procfs_sched *ss, uint64_t period, uint64_t t,
		    uint64_t *weight);

/* CPU mode, a new thread resumed from its first stop at @t: its progress counts from there. */
void cputime_anchor_new(struct cputime *c, uint64_t t);

/*
 * Sampling (re)starts at @now after a pause (--delay, a control 'disable'):
 * the thread's on-CPU time read now (@cpu_ns; 0 in wall mode) becomes
 * its baseline, so its next sample weighs the time since, not the pause.
 */
void cputime_rebase(struct cputime *c, uint64_t cpu_ns, uint64_t now, uint64_t period);

#endif
