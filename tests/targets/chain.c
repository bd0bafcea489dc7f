/* SPDX-License-Identifier: MIT */
/*
 * chain: two call chains whose shape is known, for unwinding tests.
 *
 * "qsort" mode: main -> sort_driver -> qsort (libc, built without frame
 * pointers, with a few internal frames of its own) -> chain_cmp.  The
 * comparator mixes both keys before comparing, so about 90% of the CPU time
 * is spent in chain_cmp, called back from inside libc; a frame-pointer walk
 * from chain_cmp must cross libc's frames to reach sort_driver and main
 * (perf's tests/dwarf-unwind.c uses the same trick with bsearch).  Truth:
 * most samples have chain_cmp as the leaf, with "main;sort_driver" above it,
 * and libc's qsort frames in between.
 *
 * "levels" mode: main -> level1 -> level2 -> level3, each a real call (not
 * inlined, not a tail call: every level uses its result and a volatile local
 * after the call) with a stack frame of its own, so that the -nofp build
 * needs CFI at every level.  level3 spins.  Truth: nearly every sample is
 * "main;level1;level2;level3" with level3 as the leaf.
 *
 * Usage: chain qsort [SECONDS] | chain levels [SECONDS]   (process CPU time, 3)
 * Prints one line that does not depend on the duration and exits 0, or 1
 * if a unit computed a different value:
 *   chain: qsort checksum=<hex> mismatches=0
 *   chain: levels unit=<hex> mismatches=0
 * Readiness: one line, role "qsort" or "levels", when the work starts.
 */
#include "target.h"

#include <inttypes.h>

#define NKEYS	  2048
#define CMP_ITERS 24 /* mixing per key per comparison: ~90% of the time */

static unsigned long mismatches;

TGT_NOINLINE int chain_cmp(const void *pa, const void *pb);
TGT_NOINLINE uint64_t sort_driver(double seconds);
TGT_NOINLINE uint64_t level1(double seconds);
TGT_NOINLINE uint64_t level2(double seconds);
TGT_NOINLINE uint64_t level3(double seconds);

/* Orders keys by a hash of the key: expensive on purpose, and a total order. */
int chain_cmp(const void *pa, const void *pb)
{
	uint64_t x = *(const uint32_t *)pa, y = *(const uint32_t *)pb;

	TGT_MIX(x, CMP_ITERS);
	TGT_MIX(y, CMP_ITERS);
	if (x == y) {
		x = *(const uint32_t *)pa;
		y = *(const uint32_t *)pb;
	}
	return (x > y) - (x < y);
}

/* Sort the same pseudo-random keys again and again; every sort must agree. */
uint64_t sort_driver(double seconds)
{
	static uint32_t keys[NKEYS];
	double end = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	uint64_t ref = 0, sum;
	uint32_t s;
	size_t i;

	do {
		s = 12345;
		for (i = 0; i < NKEYS; i++) {
			s = s * 1103515245u + 12345u;
			keys[i] = s >> 8;
		}
		qsort(keys, NKEYS, sizeof(keys[0]), chain_cmp);
		sum = 0;
		for (i = 0; i < NKEYS; i++)
			sum = sum * 31 + keys[i];
		TGT_CHECK(&ref, sum, mismatches);
	} while (tgt_clock(CLOCK_PROCESS_CPUTIME_ID) < end);
	return ref;
}

uint64_t level3(double seconds)
{
	volatile uint64_t frame[4] = {3, 0, 0, 0};
	double end = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	uint64_t ref = 0, x;
	unsigned int n = 0;

	for (;;) {
		x = frame[0];
		TGT_MIX(x, TGT_UNIT_ITERS);
		TGT_CHECK(&ref, x, mismatches);
		if ((++n & 63) == 0 && tgt_clock(CLOCK_PROCESS_CPUTIME_ID) >= end)
			break;
	}
	frame[1] = ref;
	return frame[1];
}

uint64_t level2(double seconds)
{
	volatile uint64_t frame[4] = {2, 0, 0, 0};

	frame[1] = level3(seconds);
	return frame[1] + frame[0] - 2;
}

uint64_t level1(double seconds)
{
	volatile uint64_t frame[4] = {1, 0, 0, 0};

	frame[1] = level2(seconds);
	return frame[1] + frame[0] - 1;
}

int main(int argc, char **argv)
{
	double seconds = 3;
	uint64_t r;

	if (argc < 2 || argc > 3 || (strcmp(argv[1], "qsort") && strcmp(argv[1], "levels")))
		tgt_die("chain", "usage: chain qsort|levels [SECONDS]");
	if (argc == 3)
		seconds = tgt_seconds_arg("chain", argv[2]);

	tgt_ready("chain", argv[1]);
	if (!strcmp(argv[1], "qsort")) {
		r = sort_driver(seconds);
		printf("chain: qsort checksum=%016" PRIx64 " mismatches=%lu\n", r, mismatches);
	} else {
		r = level1(seconds);
		printf("chain: levels unit=%016" PRIx64 " mismatches=%lu\n", r, mismatches);
	}
	return mismatches ? 1 : 0;
}
