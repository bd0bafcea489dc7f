/* SPDX-License-Identifier: MIT */
/*
 * ab: a program whose CPU time splits between two functions, hot_a and
 * hot_b, by a share given on the command line, for checking comparisons of
 * two runs (report --diff) and time windows (report --time).  main ->
 * run_ab -> {hot_a, hot_b}; each call of hot_a or hot_b runs the same loop
 * for the same number of iterations (~20 us), all of it self time.
 *
 * Usage: ab [-s SECONDS] [-a PERCENT] [-p] [-m FIFO]
 *   -s  run until the process used SECONDS of CPU time (default 2; with -p,
 *       of elapsed time)
 *   -a  hot_a's share of the calls, in steps of 5 (default 50); hot_b has
 *       the rest.  Rounds of 20 calls in a new random order each round
 *       (a fixed order could alias with the sampling period).
 *   -p  phases instead, by elapsed time (so that they fall at known times
 *       of the run whatever the load): hot_a alone for the first PERCENT of
 *       SECONDS of wall-clock time, then hot_b alone for the rest
 *   -m  with -p: write "mark hot_a\n" to FIFO (a --control FIFO of xprof)
 *       as the hot_a phase starts and "mark hot_b\n" as the hot_b one does
 * Exits 0.  The functions are global and noinline so symbol tables name
 * them; each uses its result so no call becomes a tail call.
 */
#include "target.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT 20000 /* iterations per call: ~20 us */
/* Same body and alignment in both, so that neither runs faster (see shares.c). */
#define WORK TGT_NOINLINE __attribute__((aligned(64)))

volatile uint64_t sink;
static int mark_fd = -1;

/* Name the phase that starts now (-m), in one write. */
static void mark(const char *phase)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "mark %s\n", phase);

	if (mark_fd >= 0 && write(mark_fd, line, (size_t)len) != len)
		fprintf(stderr, "ab: cannot write the mark of %s\n", phase);
}

WORK uint64_t hot_a(uint64_t x)
{
	for (unsigned int i = 0; i < UNIT; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

WORK uint64_t hot_b(uint64_t x)
{
	for (unsigned int i = 0; i < UNIT; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

TGT_NOINLINE void run_ab(double seconds, unsigned int pct_a, int phases)
{
	clockid_t clock = phases ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
	double start = tgt_clock(clock), switch_at = start + seconds * pct_a / 100.0;
	uint64_t x = 1, seed = 0x9e3779b97f4a7c15ull;
	unsigned char order[20];
	unsigned int r, i, j, na = pct_a / 5;
	int in_b = phases && !pct_a;

	if (phases)
		mark(in_b ? "hot_b" : "hot_a");
	for (;;) {
		double now = tgt_clock(clock);

		if (now >= start + seconds)
			break;
		for (r = 0; r < 25; r++) {
			if (phases) {
				/*
				 * The clock at every call (a vDSO read, ~0.1% of
				 * a call): on a loaded machine 500 calls can take
				 * longer than a phase.
				 */
				for (i = 0; i < 20; i++) {
					if (!in_b && tgt_clock(clock) >= switch_at) {
						mark("hot_b");
						in_b = 1;
					}
					x = in_b ? hot_b(x) : hot_a(x);
				}
				continue;
			}
			for (i = 0; i < 20; i++)
				order[i] = i < na;
			/* Fisher-Yates with xorshift64: a new order every round. */
			for (i = 19; i > 0; i--) {
				unsigned char t;

				seed ^= seed << 13;
				seed ^= seed >> 7;
				seed ^= seed << 17;
				j = (unsigned int)(seed % (i + 1));
				t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
			for (i = 0; i < 20; i++)
				x = order[i] ? hot_a(x) : hot_b(x);
		}
	}
	sink = x;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = 2;
	int pct_a = 50, phases = 0, opt;

	while ((opt = getopt(argc, argv, "s:a:pm:")) != -1) {
		if (opt == 'm' && (mark_fd = open(optarg, O_WRONLY | O_CLOEXEC)) < 0)
			tgt_die("ab", "cannot open the FIFO of -m");
		else if (opt == 'm')
			continue;
		else if (opt == 's')
			seconds = atof(optarg);
		else if (opt == 'a')
			pct_a = atoi(optarg);
		else if (opt == 'p')
			phases = 1;
		else
			return 2;
	}
	if (pct_a < 0 || pct_a > 100 || (!phases && pct_a % 5) || !(seconds > 0)) {
		fprintf(stderr, "usage: ab [-s SECONDS] [-a PERCENT] [-p] [-m FIFO]\n");
		return 2;
	}
	run_ab(seconds, (unsigned int)pct_a, phases);
	return 0;
}
