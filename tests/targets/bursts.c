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
 * Readiness: one line, role "work", when the first turn starts.
 */
#include "target.h"

static volatile unsigned long sink;

TGT_NOINLINE double short_burst(void);
TGT_NOINLINE double long_burst(void);
TGT_NOINLINE void nap(void);

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

void nap(void)
{
	struct timespec ts = {0, 300000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? tgt_seconds_arg("bursts", argv[1]) : 3.0;
	double end = tgt_clock(CLOCK_MONOTONIC) + secs, in_short = 0, in_long = 0;
	uint32_t rnd = 2463534242u;

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
