/* SPDX-License-Identifier: MIT */
/*
 * The sampler's schedule maths, pure and unit-tested (tests/unit/
 * test_schedule.c): tick offsets in their period, the slot a time falls in,
 * the pauses before a preemption and when a wake came late, and the
 * histograms of stop times with their percentiles.
 */
#ifndef XPROF_RECORD_SCHEDULE_H
#define XPROF_RECORD_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Tick k of a schedule starting at @start with @period comes at @start +
 * k * @period + its offset, in [0, @period).  Each offset is the last one
 * (@prev) moved by a step drawn from @rnd in [0, 2^32) within a quarter
 * of a period either way, reflected at the ends: two ticks are 0.75 to
 * 1.25 periods apart, and the phase wanders over the whole period (a few
 * dozen ticks cross it), so that no periodic work in the target keeps its
 * phase away from the ticks.  Within an eighth of a period of a fixed
 * grid, the ticks missed a thread that ran 150 us of each 1.001 ms on an
 * absolute timer: 3 samples for 170 ms of CPU time in most runs at 999
 * Hz.  Drawn anywhere in each period instead, two ticks could come
 * closer than a tick's work takes a slow (sanitized) recorder, and 1 to 3
 * more points of its samples of sysmix (3999 Hz, as an ordinary user)
 * went into system calls.
 */
uint64_t schedule_tick_offset(uint64_t period, uint64_t prev, uint32_t rnd);
/* The slot @now is in: the first tick index whose slot has not ended (0 before @start). */
uint64_t schedule_slot(uint64_t start, uint64_t period, uint64_t now);
/* Next value of the xorshift64* generator in *@state (never 0), its top 32 bits. */
uint32_t schedule_rand(uint64_t *state);

/* @rnd in [0, 2^32) scaled to [0, @span): a uniform draw from schedule_rand. */
static inline uint64_t schedule_scale(uint32_t rnd, uint64_t span)
{
	return (uint64_t)(((unsigned __int128)rnd * span) >> 32);
}

#define SAMPLER_MOVE_PAUSE_NS 20000 /* after moving to a thread's CPU, before interrupting it */
#define SAMPLER_WAKE_LATE_NS 30000  /* a wake on a thread's CPU later than this may be retried */
#define SAMPLER_WAKE_RETRIES 3	    /* at most this many times per CPU and tick */
#define SAMPLER_COLLECT_NS 100000   /* a CPU's stops waited for before moving to the next */
#define SAMPLER_COLLECT_MAX 64	    /* of at most this many threads */

/* A pause before preempting a thread: SAMPLER_MOVE_PAUSE_NS and a part of @span drawn from @rnd. */
uint64_t schedule_pause_ns(uint64_t *rnd, uint64_t span);
/*
 * Whether a wake @late ns after its timer came late, when prompt ones come
 * @mean ns late: over three times that and SAMPLER_WAKE_LATE_NS.
 */
bool schedule_wake_late(uint64_t late, uint64_t mean);

/*
 * Stop-time histogram: 1 us buckets below 1 ms, then 100 us buckets up to
 * 99.9 ms, then one bucket for everything longer.
 */
#define SCHEDULE_HIST_FINE 1000
#define SCHEDULE_HIST_SIZE (SCHEDULE_HIST_FINE + 990)

/* Count @ns in @hist (SCHEDULE_HIST_SIZE buckets) and raise *@max to it. */
void schedule_hist_add(uint64_t *hist, uint64_t *max, uint64_t ns);
/*
 * Percentile @p (0 < @p < 100) of @hist in ns: the middle of its bucket,
 * or @max (the largest value added) when it falls in the last one (99.9
 * ms and more); 0 when empty.
 */
uint64_t schedule_hist_percentile(const uint64_t *hist, uint64_t max, double p);

#endif
