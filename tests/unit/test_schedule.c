/* SPDX-License-Identifier: MIT */
/*
 * The sampler's schedule maths: tick offsets stay in their period, apart
 * by 0.75 to 1.25 periods, and spread over all of it; the slot of a time,
 * the generator, and stop-time percentiles on known histograms.
 */
#include "t.h"

#include "schedule.h"

/*
 * Offsets stay in the period, two ticks are 0.75 to 1.25 periods apart,
 * and the offsets cover the period evenly: a tenth of them in each tenth.
 */
static int test_tick_walk(void)
{
	const uint64_t period = 1001001; /* 999 Hz */
	uint64_t k, n = 200000, off = 0, prev = 0, t, state = 42, bins[10] = {0};
	unsigned int i;

	for (k = 1; k <= n; k++) {
		off = schedule_tick_offset(period, off, schedule_rand(&state));
		T_ASSERT(off < period);
		t = k * period + off;
		T_ASSERT(k == 1 ||
			 (t - prev >= period - period / 4 && t - prev <= period + period / 4));
		bins[off * 10 / period]++;
		prev = t;
	}
	for (i = 0; i < 10; i++)
		T_ASSERT(bins[i] > n / 10 - n / 100 && bins[i] < n / 10 + n / 100);
	return T_OK;
}

/* The steps' extremes, and the reflections at both ends of the period. */
static int test_tick_steps(void)
{
	const uint64_t period = 1000;

	T_EQ_U64(schedule_tick_offset(period, 500, 0), 250);
	T_ASSERT(schedule_tick_offset(period, 500, UINT32_MAX) < 750);
	T_ASSERT(schedule_tick_offset(period, 500, UINT32_MAX) >= 749);
	T_EQ_U64(schedule_tick_offset(period, 100, 0), 150);	      /* -150, reflected */
	T_EQ_U64(schedule_tick_offset(period, 900, UINT32_MAX), 850); /* 1149, reflected */
	/* A period too short for steps: the offset stays. */
	T_EQ_U64(schedule_tick_offset(1, 0, 12345), 0);
	return T_OK;
}

/*
 * A walk started anywhere crosses the period within a few dozen ticks: a
 * loop in step with the ticks meets them at every phase within 1,000.
 */
static int test_tick_mixing(void)
{
	const uint64_t period = 1001001;
	uint64_t state = 7, off = 0, k, seen = 0;

	for (k = 0; k < 1000; k++) {
		off = schedule_tick_offset(period, off, schedule_rand(&state));
		seen |= 1ull << (off * 20 / period);
	}
	T_EQ_U64(seen, (1ull << 20) - 1);
	return T_OK;
}

static int test_slot(void)
{
	const uint64_t start = 1000, period = 100;

	T_EQ_U64(schedule_slot(start, period, 0), 0);	 /* before the start */
	T_EQ_U64(schedule_slot(start, period, 1000), 0); /* at the start */
	T_EQ_U64(schedule_slot(start, period, 1099), 0);
	T_EQ_U64(schedule_slot(start, period, 1100), 1); /* the next slot begins */
	T_EQ_U64(schedule_slot(start, period, 1550), 5);
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

T_MAIN(T_CASE(test_tick_walk), T_CASE(test_tick_steps), T_CASE(test_tick_mixing), T_CASE(test_slot),
       T_CASE(test_rand), T_CASE(test_hist_fine), T_CASE(test_hist_coarse), T_CASE(test_pause),
       T_CASE(test_wake_late))
