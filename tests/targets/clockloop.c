/* SPDX-License-Identifier: MIT */
/*
 * Target that spends its time in the [vdso]: main -> read_clock ->
 * clock_gettime (libc) -> the vdso's clock_gettime, in a loop, for about
 * argv[1] seconds of wall time (default 1.0), then exits 0.
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

NOINLINE double read_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	__asm__ volatile("" ::: "memory");
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end = read_clock() + secs;

	while (read_clock() < end)
		sink++;
	return 0;
}
