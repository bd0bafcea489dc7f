/* SPDX-License-Identifier: MIT */
/*
 * sysmix: a known answer for where the CPU time goes between user code and
 * short system calls.  main -> run -> {compute, io} (mix.h): compute()
 * burns about BURST microseconds of CPU time (3 by default), io() makes
 * one pwrite and one pread of 4 KiB on a file of its own in $TMPDIR
 * (unlinked at once), and run() alternates them until SECONDS of its
 * thread's CPU time (3).  The truth printed is the share of the kept
 * turns' time spent in io(), i.e. in the pwrite and pread calls and their
 * libc wrappers; a sampling profiler should find that share of its
 * samples in pwrite/pread (the wrappers or the kernel below them).
 *
 * Usage: sysmix [-u BURST_US] [SECONDS]
 * Prints one line at the end:
 *   sysmix: syscall_share=<percent> burst_us=<measured> calls=<n> left_out=<n> mismatches=0
 * and exits 0, or 1 if a unit computed a different value or a read did not
 * return what was written.  Readiness: one line, role "work", once the
 * alternation starts.
 */
#include "mix.h"

#include <fcntl.h>
#include <limits.h>

#define SYSMIX_BYTES 4096

static int fd = -1;

TGT_NOINLINE double io(uint64_t v);

/* Nothing but the two calls, so that the time in io() is the time in them. */
double io(uint64_t v)
{
	static unsigned char out[SYSMIX_BYTES], in[SYSMIX_BYTES];

	out[0] = (unsigned char)v;
	if (pwrite(fd, out, sizeof(out), 0) != (ssize_t)sizeof(out) ||
	    pread(fd, in, sizeof(in), 0) != (ssize_t)sizeof(in) || in[0] != out[0])
		mix_mismatches++;
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	double seconds, burst, share, burst_us;
	unsigned long calls = 0, left_out = 0;

	mix_args("sysmix", argc, argv, &burst, &seconds);
	snprintf(path, sizeof(path), "%s/sysmix.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		tgt_die("sysmix", "cannot create a file in $TMPDIR");
	unlink(path);
	burst_us = mix_prepare("sysmix", burst);
	share = run(seconds, io, &calls, &left_out);
	printf("sysmix: syscall_share=%.1f burst_us=%.1f calls=%lu left_out=%lu mismatches=%lu\n",
	       share, burst_us, calls, left_out, mix_mismatches);
	return mix_mismatches ? 1 : 0;
}
