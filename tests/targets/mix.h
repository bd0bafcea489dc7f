/* SPDX-License-Identifier: MIT */
/*
 * The known-answer loop of sysmix and faultmix: main -> run -> {compute,
 * STEP}, where compute() burns about BURST microseconds of CPU time and
 * STEP (the program's own: io(), touch()) enters the kernel.  run()
 * alternates them until SECONDS of the thread's CPU time and measures its
 * own split with CLOCK_MONOTONIC, which the vDSO reads without a system
 * call (a thread CPU clock read is one, and a scheduling point too): the
 * start of each turn, of its STEP, and of the next turn.  A turn much
 * longer than the usual one was interrupted (a profiler's stop, another
 * task on the CPU) and is left out, so that the split is that of the
 * program's own work, with or without a profiler.  The truth is the share
 * of the kept turns' time spent in STEP.
 *
 * A program includes this header once, defines its STEP and calls
 * mix_main().  Usage of either: NAME [-u BURST_US] [SECONDS].
 */
#ifndef XPROF_TESTS_TARGETS_MIX_H
#define XPROF_TESTS_TARGETS_MIX_H

#include "target.h"

/*
 * The step of a turn, given the turn's number; returns the nanoseconds of
 * it to count in the step whether or not the turn is kept (faultmix's
 * madvise, which makes its turn long by itself).
 */
typedef double (*mix_step_fn)(uint64_t n);

static uint64_t mix_ref;
static unsigned long mix_mismatches;
static unsigned int mix_iters = 100;

TGT_NOINLINE uint64_t compute(uint64_t seed);
TGT_NOINLINE double run(double seconds, mix_step_fn step, unsigned long *turns,
			unsigned long *left_out);

uint64_t compute(uint64_t seed)
{
	TGT_MIX(seed, mix_iters);
	return seed;
}

static inline double mix_thread_ns(void)
{
	return tgt_clock(CLOCK_THREAD_CPUTIME_ID) * 1e9;
}

static inline double mix_mono_ns(void)
{
	return tgt_clock(CLOCK_MONOTONIC) * 1e9;
}

/* Iterations of compute() that take about @us microseconds of CPU time. */
static void mix_calibrate(double us)
{
	double t0, t1;
	unsigned int i;

	mix_iters = 1000;
	t0 = mix_thread_ns();
	for (i = 0; i < 200; i++)
		TGT_CHECK(&mix_ref, compute(0x5eed), mix_mismatches);
	t1 = mix_thread_ns();
	mix_iters = (unsigned int)(us * 1000.0 / ((t1 - t0) / 200.0 / 1000.0));
	if (!mix_iters)
		mix_iters = 1;
	mix_ref = 0;
}

/*
 * Alternate until @seconds of this thread's CPU time (checked every 1024
 * turns); the number of turns in *@turns, of those left out in
 * *@left_out.  A turn is kept if, what @step counts always aside, it took
 * at most MIX_SLACK_NS more than the usual turn (the running mean of kept
 * ones; the first 256 are all kept, and the turn after 64 left out in a row is kept,
 * so that a slower machine moves the mean): a stop costs a turn tens of
 * microseconds.  Returns the share of the kept time spent in @step, in
 * percent.
 */
#define MIX_SLACK_NS 15000.0
double run(double seconds, mix_step_fn step, unsigned long *turns, unsigned long *left_out)
{
	double cpu0 = mix_thread_ns(), usual = 0, in_step = 0, all = 0, t0, t1, t2, always;
	unsigned long n = 0, out = 0, streak = 0;

	t0 = mix_mono_ns();
	for (;;) {
		TGT_CHECK(&mix_ref, compute(0x5eed), mix_mismatches);
		t1 = mix_mono_ns();
		always = step(n);
		t2 = mix_mono_ns();
		in_step += always;
		all += always;
		if (n < 256 || t2 - t0 - always <= usual + MIX_SLACK_NS || streak >= 64) {
			in_step += t2 - t1 - always;
			all += t2 - t0 - always;
			usual = n < 256 ? all / (double)(n + 1)
					: usual + (t2 - t0 - always - usual) / 64;
			streak = 0;
		} else {
			out++;
			streak++;
		}
		t0 = t2;
		if ((++n & 1023) == 0 && mix_thread_ns() - cpu0 >= seconds * 1e9)
			break;
	}
	*turns = n;
	*left_out = out;
	return all > 0 ? 100.0 * in_step / all : 0;
}

/* The options of @name: -u BURST_US (default 3) and SECONDS (default 3). */
static void mix_args(const char *name, int argc, char **argv, double *burst, double *seconds)
{
	char usage[96];
	int i;

	*burst = 3;
	*seconds = 3;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-u") && i + 1 < argc) {
			*burst = (double)tgt_long_arg(name, argv[++i], 1, 1000000);
		} else if (i == argc - 1) {
			*seconds = tgt_seconds_arg(name, argv[i]);
		} else {
			snprintf(usage, sizeof(usage), "usage: %s [-u BURST_US] [SECONDS]", name);
			tgt_die(name, usage);
		}
	}
}

/* After mix_args and the program's set-up: calibrate, then one compute() timed, in us. */
static double mix_prepare(const char *name, double burst)
{
	double b0, b1;

	mix_calibrate(burst);
	b0 = mix_thread_ns();
	TGT_CHECK(&mix_ref, compute(0x5eed), mix_mismatches);
	b1 = mix_thread_ns();
	tgt_ready(name, "work");
	return (b1 - b0) / 1000.0;
}

#endif
