/* SPDX-License-Identifier: MIT */
/*
 * crash: computes, then dies of a real SIGSEGV (a store to an unmapped
 * address, not raise()), leaving its RLIMIT_CORE alone: with 'ulimit -c
 * unlimited' and a core_pattern that writes files, it dumps core, so a
 * test can check that it dies and dumps core under a tracer exactly as
 * without one.  (The exits target, by contrast, disables core dumps.)
 *
 * Usage: crash [SECONDS]   CPU time to compute first (default 0)
 * Prints one line first, flushed:
 *   crash: faulting after <SECONDS> s
 * Truth: the wait status is "killed by SIGSEGV", with the core-dumped bit
 * when the core limit allows; samples in crash_spin.
 * Readiness: one line, role "spin", when the computing starts.
 */
#include "target.h"

#include <inttypes.h>

TGT_NOINLINE uint64_t crash_spin(double seconds);
TGT_NOINLINE void crash_here(void);

/* An address the compiler cannot see is NULL, so it emits the store, not a trap. */
static volatile uintptr_t bad_address;

uint64_t crash_spin(double seconds)
{
	double end = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	uint64_t x = 0;

	while (tgt_clock(CLOCK_PROCESS_CPUTIME_ID) < end)
		TGT_MIX(x, 64 * TGT_UNIT_ITERS);
	return x;
}

void crash_here(void)
{
	*(volatile int *)bad_address = 1;
}

int main(int argc, char **argv)
{
	volatile uint64_t sink;
	double seconds = 0;

	if (argc > 2)
		tgt_die("crash", "usage: crash [SECONDS]");
	if (argc == 2)
		seconds = tgt_seconds_arg("crash", argv[1]);
	printf("crash: faulting after %s s\n", argc == 2 ? argv[1] : "0");
	fflush(stdout);
	tgt_ready("crash", "spin");
	sink = crash_spin(seconds);
	(void)sink;
	crash_here();
	fprintf(stderr, "crash: still alive after the fault\n");
	return 1;
}
