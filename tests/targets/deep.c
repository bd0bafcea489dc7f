/* SPDX-License-Identifier: MIT */
/*
 * deep: a deep stack.  main -> descend(DEPTH) -> descend(DEPTH-1) -> ... ->
 * descend(1) -> spin, where descend is a real recursion (not inlined, not
 * turned into a loop: it reads a volatile local after each call) and spin
 * computes for SECONDS of process CPU time.
 * Truth: nearly every sample has exactly DEPTH consecutive "descend" frames
 * between main and spin; a profiler with a depth limit below DEPTH+few
 * must say it truncated, not invent a shorter stack.
 *
 * Usage: deep [DEPTH [SECONDS]]   DEPTH 1..100000 (default 200), SECONDS (3)
 * Prints one line that does not depend on the duration and exits 0 (1 if
 * a unit computed a different value):
 *   deep: depth=<DEPTH> unit=<hex> mismatches=0
 * Readiness: one line, role "bottom", once the bottom of the recursion is
 * reached and the spin starts.
 */
#include "target.h"

#include <inttypes.h>

static unsigned long mismatches;

TGT_NOINLINE uint64_t spin(double seconds);
TGT_NOINLINE uint64_t descend(unsigned int n, double seconds);

uint64_t spin(double seconds)
{
	double end;
	uint64_t ref = 0, x;
	unsigned int n = 0;

	tgt_ready("deep", "bottom");
	end = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	for (;;) {
		x = 0xdee9;
		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&ref, x, mismatches);
		if ((++n & 15) == 0 && tgt_clock(CLOCK_PROCESS_CPUTIME_ID) >= end)
			break;
	}
	return ref;
}

uint64_t descend(unsigned int n, double seconds)
{
	volatile unsigned int guard = n;
	uint64_t r;

	r = n > 1 ? descend(n - 1, seconds) : spin(seconds);
	return r + guard - n;
}

int main(int argc, char **argv)
{
	unsigned int depth = 200;
	double seconds = 3;
	uint64_t r;

	if (argc > 3)
		tgt_die("deep", "usage: deep [DEPTH [SECONDS]]");
	if (argc >= 2)
		depth = (unsigned int)tgt_long_arg("deep", argv[1], 1, 100000);
	if (argc == 3)
		seconds = tgt_seconds_arg("deep", argv[2]);
	r = descend(depth, seconds);
	printf("deep: depth=%u unit=%016" PRIx64 " mismatches=%lu\n", depth, r, mismatches);
	return mismatches ? 1 : 0;
}
