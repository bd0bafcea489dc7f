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
 * On a busy machine both phases stretch (a preempted compute sees its end
 * late, a woken nap waits for a CPU), so the split is measured: with
 * XP_TARGET_VERBOSE set, the wall time of all compute and all nap calls
 * goes to stderr, for tests to compare a profile with.
 *
 * Usage: sleeper [SECONDS]   total wall time (default 4)
 * Prints one line that does not depend on the duration and exits 0 (1 if
 * a unit computed a different value):
 *   sleeper: unit=<hex> mismatches=0
 * and with XP_TARGET_VERBOSE, on stderr:
 *   sleeper: wall <s> compute <s> nap <s>
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
	double seconds = 4, start, now, in_compute = 0, in_nap = 0;
	uint64_t ref = 0;

	if (argc > 2)
		tgt_die("sleeper", "usage: sleeper [SECONDS]");
	if (argc == 2)
		seconds = tgt_seconds_arg("sleeper", argv[1]);

	tgt_ready("sleeper", "work");
	start = tgt_clock(CLOCK_MONOTONIC);
	now = start;
	do {
		double t0 = now, t1;

		TGT_CHECK(&ref, compute(t0 + PHASE_NS * 1e-9), mismatches);
		t1 = tgt_clock(CLOCK_MONOTONIC);
		nap();
		now = tgt_clock(CLOCK_MONOTONIC);
		in_compute += t1 - t0;
		in_nap += now - t1;
	} while (now - start < seconds);
	if (getenv("XP_TARGET_VERBOSE"))
		fprintf(stderr, "sleeper: wall %.6f compute %.6f nap %.6f\n", now - start,
			in_compute, in_nap);
	printf("sleeper: unit=%016" PRIx64 " mismatches=%lu\n", ref, mismatches);
	return mismatches ? 1 : 0;
}
