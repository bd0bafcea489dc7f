/* SPDX-License-Identifier: MIT */
/*
 * The sampler's schedule maths: tick times stay within +-period/8 of the
 * grid and spread over that window, the next index after a late wake-up,
 * the generator, and stop-time percentiles on known histograms.
 */
#include "t.h"

#include "schedule.h"

static int test_tick_bounds(void)
{
	const uint64_t start = 1000000000ull, period = 1001001; /* 999 Hz */
	uint64_t k, lo = UINT64_MAX, hi = 0, state = 42;

	/* The extremes of the jitter. */
	T_EQ_U64(schedule_tick_time(start, period, 3, 0), start + 3 * period - period / 4 / 2);
	T_ASSERT(schedule_tick_time(start, period, 3, UINT32_MAX) <
		 start + 3 * period + period / 8);
	for (k = 1; k <= 100000; k++) {
		uint64_t t = schedule_tick_time(start, period, k, schedule_rand(&state));
		int64_t off = (int64_t)(t - start - k * period);

		T_ASSERT(off >= -(int64_t)period / 8 && off < (int64_t)period / 8 + 1);
		if ((uint64_t)(off + (int64_t)period) < lo)
			lo = (uint64_t)(off + (int64_t)period);
		if ((uint64_t)(off + (int64_t)period) > hi)
			hi = (uint64_t)(off + (int64_t)period);
	}
	/* 100,000 draws cover the window to within 1%. */
	T_ASSERT(lo - (period - period / 8) < period / 400);
	T_ASSERT((period + period / 8) - hi < period / 400);
	/* No jitter at all for a period too short to have any. */
	T_EQ_U64(schedule_tick_time(5, 3, 2, 12345), 11);
	return T_OK;
}

static int test_tick_mean(void)
{
	const uint64_t period = 250000; /* 4 kHz */
	uint64_t state = 7, k, n = 200000;
	int64_t sum = 0;

	for (k = 0; k < n; k++)
		sum += (int64_t)(schedule_tick_time(0, period, 10, schedule_rand(&state)) -
				 10 * period);
	/* Unbiased: the mean offset is within 0.2% of a period of zero. */
	T_ASSERT(sum / (int64_t)n < (int64_t)period / 500 &&
		 sum / (int64_t)n > -(int64_t)period / 500);
	return T_OK;
}

static int test_next_index(void)
{
	const uint64_t start = 1000, period = 100;

	T_EQ_U64(schedule_next_index(start, period, 0), 0);    /* before the start */
	T_EQ_U64(schedule_next_index(start, period, 1000), 1); /* at the start */
	T_EQ_U64(schedule_next_index(start, period, 1099), 1);
	T_EQ_U64(schedule_next_index(start, period, 1100), 2); /* on the grid: the next one */
	T_EQ_U64(schedule_next_index(start, period, 1550), 6); /* late by 4 ticks */
	return T_OK;
}

static int test_rand(void)
{
	uint64_t a = 1, b = 1, c = 2;
	unsigned int i, same = 0, ones = 0;

	for (i = 0; i < 1000; i++) {
		uint32_t x = schedule_rand(&a), y = schedule_rand(&b), z = schedule_rand(&c);

		T_EQ_U64(x, y); /* deterministic from the seed */
		same += x == z;
		ones += (unsigned)__builtin_popcount(x);
	}
	T_ASSERT(same < 2);
	/* About half the bits set: 16 per draw, within 3%. */
	T_ASSERT(ones > 15500 && ones < 16500);
	return T_OK;
}

static int test_hist_fine(void)
{
	uint64_t hist[SCHEDULE_HIST_SIZE] = {0}, max = 0;
	unsigned int i;

	T_EQ_U64(schedule_hist_percentile(hist, max, 50), 0); /* empty */
	for (i = 1; i <= 100; i++)
		schedule_hist_add(hist, &max, i * 1000 + 200); /* 1.2 us .. 100.2 us */
	T_EQ_U64(max, 100200);
	/* The middle of the bucket that holds the p-th value. */
	T_EQ_U64(schedule_hist_percentile(hist, max, 50), 51500);
	T_EQ_U64(schedule_hist_percentile(hist, max, 99), 100500);
	T_EQ_U64(schedule_hist_percentile(hist, max, 1), 2500);
	return T_OK;
}

static int test_hist_coarse(void)
{
	uint64_t hist[SCHEDULE_HIST_SIZE] = {0}, max = 0;
	unsigned int i;

	for (i = 0; i < 98; i++)
		schedule_hist_add(hist, &max, 20000); /* 20 us */
	schedule_hist_add(hist, &max, 2345678);	      /* 2.3 ms: 100 us buckets */
	schedule_hist_add(hist, &max, 5000000000ull); /* 5 s: the last bucket */
	T_EQ_U64(schedule_hist_percentile(hist, max, 50), 20500);
	T_EQ_U64(schedule_hist_percentile(hist, max, 98.5), 2350000);
	T_EQ_U64(hist[SCHEDULE_HIST_SIZE - 1], 1);
	T_EQ_U64(max, 5000000000ull);
	/* In the last bucket: the largest value, not a bucket's middle. */
	T_EQ_U64(schedule_hist_percentile(hist, max, 99.9), 5000000000ull);
	return T_OK;
}

/* Pauses stay within SAMPLER_MOVE_PAUSE_NS + [0, span) and spread over it. */
static int test_pause(void)
{
	uint64_t rnd = 42, lo = UINT64_MAX, hi = 0, p;
	int i;

	for (i = 0; i < 10000; i++) {
		p = schedule_pause_ns(&rnd, 250000);
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
	}
	T_ASSERT(lo >= SAMPLER_MOVE_PAUSE_NS && lo < SAMPLER_MOVE_PAUSE_NS + 2500);
	T_ASSERT(hi < SAMPLER_MOVE_PAUSE_NS + 250000 && hi > SAMPLER_MOVE_PAUSE_NS + 247500);
	T_EQ_U64(schedule_pause_ns(&rnd, 0), SAMPLER_MOVE_PAUSE_NS);
	return T_OK;
}

/* Late: over three times the prompt wakes' mean and over SAMPLER_WAKE_LATE_NS. */
static int test_wake_late(void)
{
	T_ASSERT(!schedule_wake_late(SAMPLER_WAKE_LATE_NS, 1000));
	T_ASSERT(schedule_wake_late(SAMPLER_WAKE_LATE_NS + 1, 1000));
	T_ASSERT(!schedule_wake_late(45000, 15000)); /* three times the mean, not over */
	T_ASSERT(schedule_wake_late(45001, 15000));
	T_ASSERT(!schedule_wake_late(0, 0));
	return T_OK;
}

T_MAIN(T_CASE(test_tick_bounds), T_CASE(test_tick_mean), T_CASE(test_next_index), T_CASE(test_rand),
       T_CASE(test_hist_fine), T_CASE(test_hist_coarse), T_CASE(test_pause),
       T_CASE(test_wake_late))
