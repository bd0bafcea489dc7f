/* SPDX-License-Identifier: MIT */
/* Tick times and stop-time histograms (see schedule.h). */
#include "schedule.h"

uint64_t schedule_tick_offset(uint64_t period, uint64_t prev, uint32_t rnd)
{
	uint64_t span = period / 2; /* steps in [-period/4, +period/4) */
	int64_t off = (int64_t)prev + (int64_t)schedule_scale(rnd, span) - (int64_t)(span / 2);

	/* Reflected at the ends of the period: the walk spreads evenly over it. */
	if (off < 0)
		off = -off;
	if (off >= (int64_t)period)
		off = 2 * (int64_t)period - off - 1;
	return (uint64_t)off;
}

uint64_t schedule_slot(uint64_t start, uint64_t period, uint64_t now)
{
	return now < start ? 0 : (now - start) / period;
}

uint32_t schedule_rand(uint64_t *state)
{
	/* xorshift64*: statistical quality is plenty for timer jitter. */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (uint32_t)((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

uint64_t schedule_pause_ns(uint64_t *rnd, uint64_t span)
{
	return SAMPLER_MOVE_PAUSE_NS + schedule_scale(schedule_rand(rnd), span);
}

bool schedule_wake_late(uint64_t late, uint64_t mean)
{
	return late > 3 * mean && late > SAMPLER_WAKE_LATE_NS;
}

void schedule_hist_add(uint64_t *hist, uint64_t *max, uint64_t ns)
{
	uint64_t b = ns < 1000000 ? ns / 1000 : SCHEDULE_HIST_FINE + ns / 100000 - 10;

	if (b >= SCHEDULE_HIST_SIZE)
		b = SCHEDULE_HIST_SIZE - 1;
	hist[b]++;
	if (ns > *max)
		*max = ns;
}

uint64_t schedule_hist_percentile(const uint64_t *hist, uint64_t max, double p)
{
	uint64_t total = 0, acc = 0, want;
	unsigned i;

	for (i = 0; i < SCHEDULE_HIST_SIZE; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)((double)total * p / 100.0);
	if (want >= total)
		want = total - 1;
	for (i = 0; i < SCHEDULE_HIST_SIZE; i++) {
		acc += hist[i];
		if (acc <= want)
			continue;
		/* The last bucket holds everything from 99.9 ms on: its value is the largest. */
		if (i == SCHEDULE_HIST_SIZE - 1)
			return max;
		return i < SCHEDULE_HIST_FINE
			   ? (uint64_t)i * 1000 + 500
			   : ((uint64_t)(i - SCHEDULE_HIST_FINE) + 10) * 100000 + 50000;
	}
	return max;
}
