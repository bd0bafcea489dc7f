/* SPDX-License-Identifier: MIT */
/*
 * sysmix: a known answer for where the CPU time goes between user code and
 * short system calls.  main -> run -> {compute, io}: compute() burns about
 * BURST microseconds of CPU time (3 by default), io() makes one pwrite and
 * one pread of 4 KiB on a file of its own in $TMPDIR (unlinked at once),
 * and run() alternates them until SECONDS of its thread's CPU time (3).
 *
 * It measures its own split with CLOCK_MONOTONIC, which the vDSO reads
 * without a system call (a thread CPU clock read is one, and a scheduling
 * point too): the start of each turn, of its io(), and of the next turn.
 * A turn much longer than the usual one was interrupted (a profiler's stop,
 * another task on the CPU) and is left out, so that the split is that of
 * the program's own work, with or without a profiler.  The truth printed
 * is the share of the kept turns' time spent in io(), i.e. in the pwrite
 * and pread calls and their libc wrappers; a sampling profiler should find
 * that share of its samples in pwrite/pread (the wrappers or the kernel
 * below them).
 *
 * Usage: sysmix [-u BURST_US] [SECONDS]
 * Prints one line at the end:
 *   sysmix: syscall_share=<percent> burst_us=<measured> calls=<n> left_out=<n> mismatches=0
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
TGT_NOINLINE double run(double seconds, unsigned long *calls, unsigned long *left_out);

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

static double mono_ns(void)
{
	return tgt_clock(CLOCK_MONOTONIC) * 1e9;
}

/*
 * Alternate until @seconds of this thread's CPU time (checked every 1024
 * turns); the number of turns in *@calls, of those left out in *@left_out.
 * A turn is kept if it took at most SYSMIX_SLACK_NS more than the usual
 * turn (the running mean of kept ones; the first 256 are all kept): a stop
 * costs a turn tens of microseconds.  Returns the share of the kept turns'
 * time spent in io(), in percent.
 */
#define SYSMIX_SLACK_NS 15000.0
double run(double seconds, unsigned long *calls, unsigned long *left_out)
{
	double cpu0 = thread_ns(), usual = 0, in_io = 0, all = 0, t0, t1, t2;
	unsigned long n = 0, out = 0, streak = 0;

	t0 = mono_ns();
	for (;;) {
		TGT_CHECK(&ref, compute(0x5eed), mismatches);
		t1 = mono_ns();
		io(n);
		t2 = mono_ns();
		if (n < 256 || t2 - t0 <= usual + SYSMIX_SLACK_NS || streak >= 64) {
			in_io += t2 - t1;
			all += t2 - t0;
			usual = n < 256 ? all / (double)(n + 1) : usual + (t2 - t0 - usual) / 64;
			streak = 0;
		} else {
			out++;
			streak++;
		}
		t0 = t2;
		if ((++n & 1023) == 0 && thread_ns() - cpu0 >= seconds * 1e9)
			break;
	}
	*calls = n;
	*left_out = out;
	return all > 0 ? 100.0 * in_io / all : 0;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	double seconds = 3, burst = 3, share, b0, b1;
	unsigned long calls = 0, left_out = 0;
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
	share = run(seconds, &calls, &left_out);
	printf("sysmix: syscall_share=%.1f burst_us=%.1f calls=%lu left_out=%lu mismatches=%lu\n",
	       share, (b1 - b0) / 1000.0, calls, left_out, mismatches);
	return mismatches ? 1 : 0;
}
