/* SPDX-License-Identifier: MIT */
/*
 * Target for inline frames and demangling.  The hot loop is in accumulate(),
 * which calls mix(); both are always_inline, so at run time all the code is
 * in the caller, and only DWARF (DW_TAG_inlined_subroutine) knows the two
 * levels.  The callers carry mangled names through asm labels, so a C
 * compiler makes a binary with C++ and Rust v0 symbols:
 *   main -> app::engine::step() [-> accumulate -> mix]   (about 60% of the CPU time)
 *   main -> mycrate::example    [-> accumulate -> mix]   (about 40%)
 * Runs for argv[1] seconds of CPU time (default 1.0), then exits 0.
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define INLINE	 static inline __attribute__((always_inline))

volatile unsigned long sink;

void engine_step(double secs) __asm__("_ZN3app6engine4stepEv");
void rust_example(double secs) __asm__("_RNvCs15kBYyAo9fc_7mycrate7example");

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

INLINE unsigned long mix(unsigned long acc, unsigned long i)
{
	acc ^= i * 0x9e3779b97f4a7c15ul;
	return acc + (acc >> 29) + sink;
}

INLINE unsigned long accumulate(unsigned long n)
{
	unsigned long i, acc = 0;

	for (i = 0; i < n; i++)
		acc = mix(acc, i);
	return acc;
}

NOINLINE void engine_step(double secs)
{
	double end = cpu_seconds() + secs;

	while (cpu_seconds() < end)
		sink += accumulate(2000000);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

NOINLINE void rust_example(double secs)
{
	double end = cpu_seconds() + secs;

	while (cpu_seconds() < end)
		sink += accumulate(2000000);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;

	engine_step(secs * 0.6);
	rust_example(secs * 0.4);
	return 0;
}
