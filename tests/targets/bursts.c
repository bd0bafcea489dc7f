/* SPDX-License-Identifier: MIT */
/*
 * bursts: an event loop's thread: short runs between sleeps, each run
 * making system calls as it goes.  Each turn is a burst, then nap sleeps
 * 300 us (nanosleep).  One burst in ten, drawn from a fixed seed, is
 * long_burst (450 us of CPU time), the others short_burst (50 us); so
 * each kind gets about half of the bursts' CPU time.  A burst reads its
 * thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, a system call: thread CPU
 * clocks have no vDSO path) between short stretches of arithmetic, as a
 * server makes calls while it serves a request.
 * Truth: the split the program measures itself, printed at the end:
 *   bursts: short=<s> long=<s>     CPU seconds inside each kind of burst
 * A sampler must reach the short runs as well as the long ones: one whose
 * interrupts come after most short runs have ended samples the long ones,
 * which then carry the short ones' time.
 *
 * Usage: bursts [SECONDS]   wall time (default 3)
 *
 * "bursts --period US [SECONDS]": a loop on an absolute timer instead, as
 * a game, audio or control loop runs: each turn, from its start at a
 * multiple of US microseconds, is one timed_burst (150 us of CPU time, the
 * same arithmetic and clock reads), then a sleep to the next multiple.
 * At US = 1001 the turns keep the phase of a 999 Hz sampler's ticks: one
 * whose ticks stay near a fixed grid never meets them, or always does.
 * Truth: timed_burst holds all the CPU time but the loop's few
 * microseconds; printed at the end:
 *   bursts: timed=<s>              CPU seconds inside timed_burst
 *
 * Readiness: one line, role "work", when the first turn starts.
 */
#include "target.h"

static volatile unsigned long sink;

TGT_NOINLINE double short_burst(void);
TGT_NOINLINE double long_burst(void);
TGT_NOINLINE void nap(void);
TGT_NOINLINE double timed_burst(void);

/*
 * Arithmetic and clock reads until @us of this thread's CPU time passed;
 * the CPU time taken.  Inlined, so that the time is in the caller's frame.
 */
static inline __attribute__((always_inline)) double burst(double us)
{
	double start = tgt_clock(CLOCK_THREAD_CPUTIME_ID), now;

	do {
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i * 7;
		now = tgt_clock(CLOCK_THREAD_CPUTIME_ID);
	} while (now < start + us * 1e-6);
	return now - start;
}

double short_burst(void)
{
	return burst(50);
}

double long_burst(void)
{
	return burst(450);
}

double timed_burst(void)
{
	return burst(150);
}

/* Turns of timed_burst starting every @period_us, for @secs. */
static int run_timed(long period_us, double secs)
{
	double end = tgt_clock(CLOCK_MONOTONIC) + secs, in_timed = 0;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	tgt_ready("bursts", "work");
	while (tgt_clock(CLOCK_MONOTONIC) < end) {
		in_timed += timed_burst();
		next.tv_nsec += period_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	printf("bursts: timed=%.6f\n", in_timed);
	return 0;
}

void nap(void)
{
	struct timespec ts = {0, 300000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	double secs, end, in_short = 0, in_long = 0;
	uint32_t rnd = 2463534242u;

	if (argc > 1 && !strcmp(argv[1], "--period")) {
		if (argc < 3 || argc > 4)
			tgt_die("bursts", "usage: bursts --period US [SECONDS]");
		return run_timed(tgt_long_arg("bursts", argv[2], 100, 1000000),
				 argc > 3 ? tgt_seconds_arg("bursts", argv[3]) : 3.0);
	}
	if (argc > 2)
		tgt_die("bursts", "usage: bursts [SECONDS] | bursts --period US [SECONDS]");
	secs = argc > 1 ? tgt_seconds_arg("bursts", argv[1]) : 3.0;
	end = tgt_clock(CLOCK_MONOTONIC) + secs;
	tgt_ready("bursts", "work");
	while (tgt_clock(CLOCK_MONOTONIC) < end) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 17;
		rnd ^= rnd << 5;
		if (rnd % 10 == 0)
			in_long += long_burst();
		else
			in_short += short_burst();
		nap();
	}
	printf("bursts: short=%.6f long=%.6f\n", in_short, in_long);
	return 0;
}
