/* SPDX-License-Identifier: MIT */
/*
 * sysmix: a known answer for where the CPU time goes between user code and
 * short system calls.  main -> run -> {compute, io}: compute() burns about
 * BURST microseconds of CPU time (3 by default), io() makes one pwrite and
 * one pread of 4 KiB on a file of its own in $TMPDIR (unlinked at once),
 * and run() alternates them until SECONDS of its thread's CPU time (3).
 *
 * It measures its own split with CLOCK_THREAD_CPUTIME_ID: one io() in 8 is
 * timed (reading that clock is itself a system call, so timing every call
 * would add more than it measures), and so is an empty interval beside it,
 * whose cost is taken off.  The truth printed is the share of the thread's
 * CPU time spent in io(), i.e. in the pwrite and pread calls and their libc
 * wrappers; a sampling profiler should find that share of its samples in
 * pwrite/pread (the wrappers or the kernel below them).
 *
 * Usage: sysmix [-u BURST_US] [SECONDS]
 * Prints one line at the end:
 *   sysmix: syscall_share=<percent> burst_us=<measured> calls=<n> mismatches=0
 * and exits 0, or 1 if a unit computed a different value or a read did not
 * return what was written.  Readiness: one line, role "work", once the
 * alternation starts.
 */
#include "target.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>

#define SYSMIX_BYTES 4096

static uint64_t ref;
static unsigned long mismatches;
static unsigned int iters = 100;
static int fd = -1;

TGT_NOINLINE uint64_t compute(uint64_t seed);
TGT_NOINLINE void io(uint64_t v);
TGT_NOINLINE double run(double seconds, double *io_ns, unsigned long *calls);

uint64_t compute(uint64_t seed)
{
	TGT_MIX(seed, iters);
	return seed;
}

/* Nothing but the two calls, so that the time in io() is the time in them. */
void io(uint64_t v)
{
	static unsigned char out[SYSMIX_BYTES], in[SYSMIX_BYTES];

	out[0] = (unsigned char)v;
	if (pwrite(fd, out, sizeof(out), 0) != (ssize_t)sizeof(out) ||
	    pread(fd, in, sizeof(in), 0) != (ssize_t)sizeof(in) || in[0] != out[0])
		mismatches++;
}

static double thread_ns(void)
{
	return tgt_clock(CLOCK_THREAD_CPUTIME_ID) * 1e9;
}

/* Iterations of compute() that take about @us microseconds of CPU time. */
static void calibrate(double us)
{
	double t0, t1;
	unsigned int i;

	iters = 1000;
	t0 = thread_ns();
	for (i = 0; i < 200; i++)
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
	t1 = thread_ns();
	iters = (unsigned int)(us * 1000.0 / ((t1 - t0) / 200.0 / 1000.0));
	if (!iters)
		iters = 1;
	ref = 0;
}

/*
 * Alternate until @seconds of this thread's CPU time; the CPU time spent in
 * io() in *@io_ns (estimated from one call in 8).  Returns the CPU time of
 * the whole run in ns.
 */
double run(double seconds, double *io_ns, unsigned long *calls)
{
	double start = thread_ns(), now = start, timed = 0, empty = 0, t0, t1;
	unsigned long n = 0, ntimed = 0;

	while (now - start < seconds * 1e9) {
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
		if ((n & 7) == 0) {
			t0 = thread_ns();
			io(n);
			t1 = thread_ns();
			timed += t1 - t0;
			t0 = thread_ns();
			t1 = thread_ns();
			empty += t1 - t0;
			ntimed++;
			now = t1;
		} else {
			io(n);
		}
		n++;
	}
	*calls = n;
	*io_ns = ntimed ? (timed - empty) / (double)ntimed * (double)n : 0;
	return thread_ns() - start;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	double seconds = 3, burst = 3, total, io_ns = 0, b0, b1;
	unsigned long calls = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-u") && i + 1 < argc)
			burst = (double)tgt_long_arg("sysmix", argv[++i], 1, 1000000);
		else if (i == argc - 1)
			seconds = tgt_seconds_arg("sysmix", argv[i]);
		else
			tgt_die("sysmix", "usage: sysmix [-u BURST_US] [SECONDS]");
	}
	snprintf(path, sizeof(path), "%s/sysmix.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		tgt_die("sysmix", "cannot create a file in $TMPDIR");
	unlink(path);
	calibrate(burst);
	b0 = thread_ns();
	TGT_CHECK(&ref, compute(0x5eed), mismatches);
	b1 = thread_ns();
	tgt_ready("sysmix", "work");
	total = run(seconds, &io_ns, &calls);
	printf("sysmix: syscall_share=%.1f burst_us=%.1f calls=%lu mismatches=%lu\n",
	       100.0 * io_ns / total, (b1 - b0) / 1000.0, calls, mismatches);
	return mismatches ? 1 : 0;
}
