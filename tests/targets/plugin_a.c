/* SPDX-License-Identifier: MIT */
/*
 * Plugin A of tests/targets/plugins, built as a shared module
 * (build/targets/plugin_a.so).  plugin_a_entry(secs) spins for about @secs
 * seconds of CPU time in plugin_a_work.  plugin_b.c builds plugin B from
 * this same code with other names, so both have the same layout and the
 * loader tends to put B exactly where A was.
 */
#include <time.h>

#ifndef PLUGIN
#define PLUGIN(name) plugin_a_##name
#endif

#define NOINLINE __attribute__((noinline))

void PLUGIN(entry)(double secs);
unsigned long PLUGIN(work)(unsigned long n);

static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE unsigned long PLUGIN(work)(unsigned long n)
{
	unsigned long i, acc = 0;

	for (i = 0; i < n; i++)
		acc += i ^ sink;
	return acc;
}

NOINLINE void PLUGIN(entry)(double secs)
{
	double end = cpu_seconds() + secs;

	while (cpu_seconds() < end)
		sink += PLUGIN(work)(2000000);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}
