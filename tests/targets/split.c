/* SPDX-License-Identifier: MIT */
/*
 * split: main -> work -> {a, b, c}, and each of a, b, c calls the same
 * frameless leaf.  One unit of work is one call of leaf() with the same
 * iteration count, and work() runs rounds of ten units in the order
 * a b a c a b a c a b, so a, b and c get 50%, 30% and 20% of the CPU time
 * over any window longer than a round (~0.1 ms).  Tests assert that split
 * (with a +-4 point margin), that main is in every stack, and that the
 * caller of leaf (a, b or c) is recovered although leaf has no frame: GCC 12
 * emits no push %rbp in a leaf that needs no stack, even with
 * -fno-omit-frame-pointer, so a frame-pointer walk from inside leaf skips
 * its caller (tests/integration/t0002 checks the disassembly).
 *
 * Usage: split [SECONDS]      run until SECONDS of process CPU time (3)
 *        split -r ROUNDS      run exactly ROUNDS rounds (benchmarks)
 * Prints one line that does not depend on the duration:
 *   split: a=<hex> b=<hex> c=<hex> mismatches=0
 * and exits 0, or 1 if any unit computed a different value (corruption).
 * With XP_TARGET_VERBOSE set, also the rounds and the wall and CPU time of
 * the work itself on stderr (for bench/compare.sh).
 * Readiness: one line, role "work", when the first round starts.
 */
#include "target.h"

#include <inttypes.h>

static uint64_t ref_a, ref_b, ref_c;
static unsigned long mismatches;

/* Global so tests and objdump find it by name; uses no stack, so no frame. */
TGT_NOINLINE uint64_t leaf(uint64_t seed, unsigned int iters);
TGT_NOINLINE void a(void);
TGT_NOINLINE void b(void);
TGT_NOINLINE void c(void);
TGT_NOINLINE uint64_t work(double seconds, uint64_t rounds);

uint64_t leaf(uint64_t seed, unsigned int iters)
{
	TGT_MIX(seed, iters);
	return seed;
}

/* The check after each call keeps the call from becoming a tail call. */
void a(void)
{
	TGT_CHECK(&ref_a, leaf(0xa, TGT_UNIT_ITERS), mismatches);
}

void b(void)
{
	TGT_CHECK(&ref_b, leaf(0xb, TGT_UNIT_ITERS), mismatches);
}

void c(void)
{
	TGT_CHECK(&ref_c, leaf(0xc, TGT_UNIT_ITERS), mismatches);
}

/*
 * Rounds of 5 a, 3 b, 2 c, interleaved.  With @rounds == 0, run until
 * @seconds of process CPU time, checked every 128 rounds (~5 ms): reading a
 * CPU clock is a system call, slow in a VM (every 8 rounds it took ~8% of
 * the samples outside a, b and c).
 */
uint64_t work(double seconds, uint64_t rounds)
{
	double end = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) + seconds;
	uint64_t n = 0;

	for (;;) {
		a();
		b();
		a();
		c();
		a();
		b();
		a();
		c();
		a();
		b();
		n++;
		if (rounds ? n >= rounds
			   : (n & 127) == 0 && tgt_clock(CLOCK_PROCESS_CPUTIME_ID) >= end)
			break;
	}
	return n;
}

int main(int argc, char **argv)
{
	double seconds = 3, wall, cpu;
	uint64_t rounds = 0, done;

	if (argc == 3 && !strcmp(argv[1], "-r"))
		rounds = (uint64_t)tgt_long_arg("split", argv[2], 1, 1000000000L);
	else if (argc == 2)
		seconds = tgt_seconds_arg("split", argv[1]);
	else if (argc != 1)
		tgt_die("split", "usage: split [SECONDS] | split -r ROUNDS");

	tgt_ready("split", "work");
	wall = tgt_clock(CLOCK_MONOTONIC);
	cpu = tgt_clock(CLOCK_PROCESS_CPUTIME_ID);
	done = work(seconds, rounds);
	wall = tgt_clock(CLOCK_MONOTONIC) - wall;
	cpu = tgt_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	/* For benchmarks: the work's own time, without a profiler's start-up. */
	if (getenv("XP_TARGET_VERBOSE"))
		fprintf(stderr, "split: %" PRIu64 " rounds in %.6f s wall, %.6f s CPU\n", done,
			wall, cpu);
	printf("split: a=%016" PRIx64 " b=%016" PRIx64 " c=%016" PRIx64 " mismatches=%lu\n", ref_a,
	       ref_b, ref_c, mismatches);
	return mismatches ? 1 : 0;
}
