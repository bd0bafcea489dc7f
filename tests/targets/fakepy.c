/* SPDX-License-Identifier: MIT */
/*
 * A process that only looks like CPython: it defines _PyRuntime and
 * Py_Version, as a python3 binary does, and spins in fake_work.  The
 * tests copy it to a file named python3-fake (xprof looks for CPython in
 * files named python* and libpython*).  As built, Python 3.15, which xprof
 * does not read; built with FAKEPY_HOSTILE (fakepy_hostile.c), Python 3.13
 * with the debug offsets' cookie and nonsense after it: what xprof reads
 * is in the file, before main runs.  "fakepy SECONDS".  Truth: a warning,
 * and every sample has fake_work's native frames.
 */
#include "target.h"

#ifndef FAKEPY_HOSTILE
#define FAKEPY_HOSTILE 0
#endif

#include <stdint.h>

#if FAKEPY_HOSTILE
__attribute__((used)) volatile unsigned long Py_Version = 0x030d05f0;
__attribute__((used, aligned(32))) volatile uint64_t _PyRuntime[128] = {
    [0] = 0x7970677562656478ull, /* "xdebugpy" */
    [1] = 0x030d05f0,
    [3 ... 72] = 0xffffffffffull,
};
#else
__attribute__((used)) volatile unsigned long Py_Version = 0x030f00f0;
__attribute__((used, aligned(32))) volatile uint64_t _PyRuntime[128] = {
    0x7970677562656478ull, /* "xdebugpy" */
};
#endif

static TGT_NOINLINE uint64_t fake_work(double seconds)
{
	double end = tgt_clock(CLOCK_THREAD_CPUTIME_ID) + seconds;
	uint64_t x = 1;

	while (tgt_clock(CLOCK_THREAD_CPUTIME_ID) < end)
		TGT_MIX(x, TGT_UNIT_ITERS);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? tgt_seconds_arg("fakepy", argv[1]) : 1.0;

	tgt_ready("fakepy", "fake");
	return (int)(fake_work(seconds) & (uint64_t)(Py_Version + _PyRuntime[0]) & 0);
}
