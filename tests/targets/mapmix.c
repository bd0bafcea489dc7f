/* SPDX-License-Identifier: MIT */
/*
 * mapmix: a known answer for CPU time spent inside system calls while
 * another thread contends for the address space's lock.  main -> run ->
 * {compute, populate}: populate() maps 8 MiB with MAP_POPULATE (the kernel
 * zeroes every page inside mmap) and unmaps it, compute() burns about 2 ms
 * of CPU time in user code, and run() alternates them until SECONDS of its
 * thread's CPU time (2).  A second thread, contend(), changes the
 * protection of pages of its own mapping in a loop (mprotect takes the
 * address space's lock for writing) with short sleeps between.
 *
 * It measures its own split with its thread's CPU clock, around each call
 * of populate() and of compute(): the truth printed is populate()'s share
 * of the two, in percent.  A sampling profiler should find that share of
 * the main thread's CPU time under populate() (mmap, munmap).
 *
 * Usage: mapmix [SECONDS]
 * Prints one line at the end:
 *   mapmix: call_share=<percent> turns=<n> mismatches=0
 * and exits 0, or 1 if a unit computed a different value or a call failed.
 * Readiness: one line, role "work", once the alternation starts.
 */
#include "target.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>

#define MAPMIX_BYTES (8u << 20)
#define MAPMIX_PAGES 64

static uint64_t ref;
static unsigned long mismatches;
static unsigned int iters = 1000;
static atomic_bool stop;

TGT_NOINLINE uint64_t compute(uint64_t seed);
TGT_NOINLINE void populate(void);
TGT_NOINLINE double run(double seconds, unsigned long *turns);

uint64_t compute(uint64_t seed)
{
	TGT_MIX(seed, iters);
	return seed;
}

void populate(void)
{
	void *p = mmap(NULL, MAPMIX_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED || munmap(p, MAPMIX_BYTES))
		mismatches++;
}

static void *contend(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)page * MAPMIX_PAGES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec pause = {0, 50000};
	int i;

	if (p == MAP_FAILED) {
		mismatches++;
		return arg;
	}
	while (!atomic_load(&stop)) {
		for (i = 0; i < MAPMIX_PAGES; i++) {
			if (mprotect(p + (size_t)i * page, (size_t)page, PROT_READ) ||
			    mprotect(p + (size_t)i * page, (size_t)page, PROT_READ | PROT_WRITE))
				mismatches++;
		}
		nanosleep(&pause, NULL);
	}
	munmap(p, (size_t)page * MAPMIX_PAGES);
	return arg;
}

static double thread_s(void)
{
	return tgt_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* Iterations of compute() that take about 2 ms of CPU time. */
static void calibrate(void)
{
	double t0 = thread_s();
	int i;

	for (i = 0; i < 100; i++)
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
	iters = (unsigned int)(iters * 2e-3 / ((thread_s() - t0) / 100));
	if (!iters)
		iters = 1;
	ref = 0;
}

/* Alternate until @seconds of this thread's CPU time; populate()'s share of it, in percent. */
double run(double seconds, unsigned long *turns)
{
	double in_call = 0, in_user = 0, t0, t1, t2;
	unsigned long n = 0;

	t0 = thread_s();
	while (in_call + in_user < seconds) {
		populate();
		t1 = thread_s();
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
		t2 = thread_s();
		in_call += t1 - t0;
		in_user += t2 - t1;
		t0 = t2;
		n++;
	}
	*turns = n;
	return 100.0 * in_call / (in_call + in_user);
}

int main(int argc, char **argv)
{
	double seconds = 2, share;
	unsigned long turns = 0;
	pthread_t t;

	if (argc > 2)
		tgt_die("mapmix", "usage: mapmix [SECONDS]");
	if (argc == 2)
		seconds = tgt_seconds_arg("mapmix", argv[1]);
	calibrate();
	if (pthread_create(&t, NULL, contend, NULL))
		tgt_die("mapmix", "cannot start a thread");
	tgt_ready("mapmix", "work");
	share = run(seconds, &turns);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("mapmix: call_share=%.1f turns=%lu mismatches=%lu\n", share, turns, mismatches);
	return mismatches ? 1 : 0;
}
