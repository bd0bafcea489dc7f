/* SPDX-License-Identifier: MIT */
/*
 * blockcall: a thread whose CPU time goes into a system call of its own,
 * between blocks in another call.  Each turn, nap sleeps 1 ms
 * (nanosleep), then fill asks the kernel for random bytes (getrandom, 64
 * KiB a call) until 1 ms of CPU time (CLOCK_THREAD_CPUTIME_ID) has passed.
 * Truth: nearly all CPU time is in fill's getrandom, in the kernel, about
 * half of the wall time; nap uses next to none.  A sampler that finds it
 * blocked in nanosleep at one tick and stops it at getrandom's exit at a
 * later one must keep that sample: the call it stops in is not the one it
 * blocked in, and it ran code of its own between the two.
 *
 * Usage: blockcall [SECONDS]   wall time (default 2)
 * Prints "blockcall: done" and exits 0.  Readiness: one line, role "work",
 * when the first turn starts.
 */
#include "target.h"

#include <sys/random.h>

static unsigned char buf[64 * 1024];

TGT_NOINLINE void fill(void);
TGT_NOINLINE void nap(void);

/* getrandom calls until 1 ms of this thread's CPU time has passed. */
void fill(void)
{
	double until = tgt_clock(CLOCK_THREAD_CPUTIME_ID) + 0.001;

	do {
		if (getrandom(buf, sizeof(buf), 0) < 0 && errno != EINTR)
			tgt_die("blockcall", "getrandom failed");
	} while (tgt_clock(CLOCK_THREAD_CPUTIME_ID) < until);
}

void nap(void)
{
	struct timespec ts = {0, 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? tgt_seconds_arg("blockcall", argv[1]) : 2.0;
	double end = tgt_clock(CLOCK_MONOTONIC) + secs;

	tgt_ready("blockcall", "work");
	while (tgt_clock(CLOCK_MONOTONIC) < end) {
		nap();
		fill();
	}
	printf("blockcall: done\n");
	return 0;
}
