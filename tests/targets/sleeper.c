/* SPDX-License-Identifier: MIT */
/*
 * sleeper: half of the wall time computing, half sleeping, for the
 * difference between wall-clock and CPU-time sampling.  Periods of 10 ms:
 * compute for 5 ms of wall time (CLOCK_MONOTONIC), then nap: nanosleep for
 * 5 ms.  Truth: in wall-clock mode about 50% of the samples are in compute
 * and 50% in nap (under nanosleep/clock_nanosleep); in CPU mode nearly all
 * samples are in compute and the total is about half the wall-clock one.
 * The shares hold over any window longer than a period.
 *
 * Usage: sleeper [SECONDS]   total wall time (default 4)
 * Prints one line that does not depend on the duration and exits 0 (1 if
 * a unit computed a different value):
 *   sleeper: unit=<hex> mismatches=0
 * Readiness: one line, role "work", when the first period starts.
 */
#include "target.h"

#include <inttypes.h>

#define PHASE_NS 5000000L

static unsigned long mismatches;

TGT_NOINLINE uint64_t compute(double until);
TGT_NOINLINE void nap(void);

/* Units until CLOCK_MONOTONIC reaches @until. */
uint64_t compute(double until)
{
	uint64_t ref = 0, x;

	do {
		x = 0x51;
		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&ref, x, mismatches);
	} while (tgt_clock(CLOCK_MONOTONIC) < until);
	return ref;
}

void nap(void)
{
	struct timespec ts = {0, PHASE_NS};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	double seconds = 4, start, now;
	uint64_t ref = 0;

	if (argc > 2)
		tgt_die("sleeper", "usage: sleeper [SECONDS]");
	if (argc == 2)
		seconds = tgt_seconds_arg("sleeper", argv[1]);

	tgt_ready("sleeper", "work");
	start = tgt_clock(CLOCK_MONOTONIC);
	do {
		now = tgt_clock(CLOCK_MONOTONIC);
		TGT_CHECK(&ref, compute(now + PHASE_NS * 1e-9), mismatches);
		nap();
	} while (tgt_clock(CLOCK_MONOTONIC) - start < seconds);
	printf("sleeper: unit=%016" PRIx64 " mismatches=%lu\n", ref, mismatches);
	return mismatches ? 1 : 0;
}
