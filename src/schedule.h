/* SPDX-License-Identifier: MIT */
/*
 * The sampler's schedule maths, pure and unit-tested (tests/unit/
 * test_schedule.c): tick times with jitter, the index of the next tick,
 * and the histograms of stop times with their percentiles.
 */
#ifndef XPROF_SRC_SCHEDULE_H
#define XPROF_SRC_SCHEDULE_H

#include <stdint.h>

/*
 * The time of tick @k of a schedule starting at @start with @period,
 * shifted by a jitter drawn from @rnd in [0, 2^32) to within -@period/8 ..
 * +@period/8: periodic work in the target does not alias with the samples
 * (py-spy's timer.rs does the same).
 */
uint64_t schedule_tick_time(uint64_t start, uint64_t period, uint64_t k, uint32_t rnd);
/* First tick index whose grid time (without jitter) is after @now. */
uint64_t schedule_next_index(uint64_t start, uint64_t period, uint64_t now);
/* Next value of the xorshift64* generator in *@state (never 0), its top 32 bits. */
uint32_t schedule_rand(uint64_t *state);

/* Stop-time histogram: 1 us buckets below 1 ms, then 100 us buckets up to 100 ms. */
#define SCHEDULE_HIST_FINE 1000
#define SCHEDULE_HIST_SIZE (SCHEDULE_HIST_FINE + 990)

/* Count @ns in @hist (SCHEDULE_HIST_SIZE buckets) and raise *@max to it. */
void schedule_hist_add(uint64_t *hist, uint64_t *max, uint64_t ns);
/*
 * Percentile @p (0 < @p < 100) of @hist in ns: the middle of its bucket;
 * @max (the largest value added) past the last bucket; 0 when empty.
 */
uint64_t schedule_hist_percentile(const uint64_t *hist, uint64_t max, double p);

#endif
